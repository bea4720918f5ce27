# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Which NPU chips a deployment (an *owner*) gets: pure data in, data out.

PRIVATE to this collection; may change without notice.

Standard library only; runs on the target (Python >= 3.8). No I/O here: the ledger file,
``/proc`` and ``docker`` are read by ``_npu_ledger`` and ``_npu_containers`` and their
results passed in, so every rule below is tested with plain data.

Rules (the module's DOCUMENTATION repeats them for users):

* A chip is *unavailable* to an owner, with the first matching reason, when it is
  held in the ledger by another owner (``held by X``), listed in ``exclude``
  (``excluded``), not healthy (``health Warning``), busy with a process that is not the
  owner's (``busy, pid N``), or, with no visible process, uses more device memory than
  the idle threshold (``45% of HBM used, no visible process``).
* A process is the owner's when its container's compose project (label
  ``com.docker.compose.project`` by default) equals the owner. On a chip the owner holds
  in the ledger, processes nobody could attribute are presumed the owner's (the ledger
  says so); only a process positively attributed to another compose project makes it
  busy. On any other chip, every process not attributed to the owner makes it busy.
* Sticky: an owner keeps the chips it holds while they stay present, healthy, not
  excluded and not busy with someone else's process, even when its own processes (or
  memory left behind by vanished ones) occupy them. They stay its own until released
  with ``state=absent``.
* Counts are powers of two (tensor-parallel group sizes). Topology: on A3 and 310P Duo
  (two chips per NPU) an even count takes whole NPUs, both chips of each card; on 910A a
  count up to 4 stays inside one HCCS ring (davinci0-3 or davinci4-7); 910B chips are
  fully meshed, and so are A5 (Ascend 950, one chip per NPU ID) chips taken to be (no rule is
  known). Among valid choices: chips the owner already holds first, then chips busy with the
  owner's own containers, then the tightest fit, then the lowest ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    DEFAULT_IDLE_THRESHOLD_PCT,
    FAMILY_310P,
    FAMILY_910A,
    FAMILY_A3,
    Chip,
)

MAX_COUNT = 16


class NpuAssignError(ValueError):
    """A request that cannot be met, with a message that says what to change."""


class NotEnoughNpus(NpuAssignError):
    """Fewer usable chips than requested. ``unavailable`` lists (device_id, reason)."""

    def __init__(self, message, unavailable):
        # type: (str, List[Tuple[int, str]]) -> None
        super(NotEnoughNpus, self).__init__(message)
        self.unavailable = unavailable


@dataclass(frozen=True)
class ChipState:
    """A chip as seen by one owner."""

    device_id: int
    npu_id: int
    held: bool          # in the ledger for this owner
    own_busy: bool      # has processes and all of them are the owner's
    reason: Optional[str]  # None when usable by this owner

    @property
    def usable(self):
        # type: () -> bool
        return self.reason is None


def device_path(device_id):
    # type: (int) -> str
    return "/dev/davinci%d" % device_id


def check_count(count):
    # type: (int) -> None
    if count < 1 or count > MAX_COUNT or count & (count - 1):
        raise NpuAssignError(
            "count %d is not a valid tensor-parallel size: use a power of two from 1 to %d "
            "(1, 2, 4, 8 or 16 chips)" % (count, MAX_COUNT))


def _pid_list(pids):
    # type: (List[int]) -> str
    return ("pid %d" % pids[0]) if len(pids) == 1 else \
        "pids " + ", ".join(str(p) for p in pids)


def classify(chips, owner, ledger, exclude=(), threshold_pct=DEFAULT_IDLE_THRESHOLD_PCT,
             pid_owners=None):
    # type: (Sequence[Chip], str, Mapping[str, Sequence[int]], Iterable[int], float, Optional[Mapping[int, Optional[str]]]) -> List[ChipState]
    """State of every chip for ``owner``.

    ``ledger`` maps owner -> device ids. ``pid_owners`` maps a PID to the compose project
    of its container, or None when it is not in a container or could not be attributed.
    """
    pid_owners = pid_owners or {}
    excluded = set(exclude)
    holder = {}  # type: Dict[int, str]
    for name, ids in ledger.items():
        for device_id in ids:
            holder[device_id] = name
    states = []
    for chip in chips:
        held = holder.get(chip.device_id) == owner
        pids = []  # type: List[int]
        for proc in chip.processes:
            if proc.pid not in pids:
                pids.append(proc.pid)
        mine = [p for p in pids if pid_owners.get(p) == owner]
        if held:
            foreign = [p for p in pids
                       if pid_owners.get(p) is not None and pid_owners.get(p) != owner]
        else:
            foreign = [p for p in pids if pid_owners.get(p) != owner]
        own_busy = bool(pids) and not foreign and bool(mine or held)
        reason = None
        other = holder.get(chip.device_id)
        if other is not None and other != owner:
            reason = "held by %s" % other
        elif chip.device_id in excluded:
            reason = "excluded"
        elif chip.health != "OK":
            reason = "health %s" % chip.health
        elif foreign:
            projects = sorted(set(pid_owners[p] for p in foreign if pid_owners.get(p)))
            reason = "busy, %s" % _pid_list(foreign)
            if projects:
                reason += " (compose project %s)" % ", ".join(projects)
        elif not pids and not held:
            pct = chip.memory_used_pct()
            if pct is None:
                reason = "memory use unknown, no visible process"
            elif pct > threshold_pct:
                label = chip.device_memory()[0]
                reason = "%d%% of %s used, no visible process" % (int(round(pct)), label)
        states.append(ChipState(chip.device_id, chip.npu_id, held, own_busy, reason))
    return states


def _units(states, family, count):
    # type: (List[ChipState], Optional[str], int) -> Tuple[List[List[List[ChipState]]], int, str]
    """(domains, units needed, rule) where a domain is a list of units (lists of chips).

    A selection takes ``units needed`` usable units from one domain.
    """
    by_npu = {}  # type: Dict[int, List[ChipState]]
    for state in states:
        by_npu.setdefault(state.npu_id, []).append(state)
    multi = family in (FAMILY_A3, FAMILY_310P) and any(len(v) > 1 for v in by_npu.values())
    if multi and count % 2 == 0:
        units = [sorted(v, key=lambda s: s.device_id) for k, v in sorted(by_npu.items())]
        per = max(len(u) for u in units)
        units = [u for u in units if len(u) == per]
        if count % per:
            raise NpuAssignError(
                "count %d cannot be made of whole NPUs with %d chips each" % (count, per))
        return [units], count // per, "whole NPUs (both chips of a card) for even counts on %s" % family
    singles = [[s] for s in sorted(states, key=lambda s: s.device_id)]
    if family == FAMILY_910A and count <= 4:
        rings = {}  # type: Dict[int, List[List[ChipState]]]
        for unit in singles:
            rings.setdefault(unit[0].device_id // 4, []).append(unit)
        return [rings[k] for k in sorted(rings)], count, \
            "one HCCS ring (davinci0-3 or davinci4-7) for counts up to 4 on 910A"
    return [singles], count, ""


def select(states, family, count):
    # type: (List[ChipState], Optional[str], int) -> List[int]
    """Device ids for the owner, sorted; raises NotEnoughNpus with every unavailable chip."""
    check_count(count)
    held = [s for s in states if s.held]
    if len(held) == count and all(s.usable for s in held):
        return sorted(s.device_id for s in held)

    domains, needed, rule = _units(states, family, count)
    usable_npus = {}  # type: Dict[int, int]
    for s in states:
        if s.usable:
            usable_npus[s.npu_id] = usable_npus.get(s.npu_id, 0) + 1

    def unit_key(unit):
        # type: (List[ChipState]) -> Tuple[int, int, int, int]
        # Held first, then the owner's own busy chips; for single chips of multi-chip
        # NPUs prefer NPUs already partly used, keeping whole NPUs free for others.
        spare = 0
        if len(unit) == 1:
            spare = usable_npus.get(unit[0].npu_id, 0) - 1
        return (-sum(s.held for s in unit), -sum(s.own_busy for s in unit), spare,
                unit[0].device_id)

    best = None  # type: Optional[Tuple[Tuple[int, int, int, List[int]], List[int]]]
    for domain in domains:
        ok = [u for u in domain if all(s.usable for s in u)]
        if len(ok) < needed:
            continue
        pick = sorted(ok, key=unit_key)[:needed]
        ids = sorted(s.device_id for u in pick for s in u)
        score = (-sum(s.held for u in pick for s in u), -sum(s.own_busy for u in pick for s in u),
                 len(ok), ids)
        if best is None or score < best[0]:
            best = (score, ids)
    if best is not None:
        return best[1]

    unavailable = [(s.device_id, s.reason) for s in sorted(states, key=lambda s: s.device_id)
                   if s.reason is not None]
    usable = [s.device_id for s in states if s.usable]
    listing = "; ".join("%s: %s" % (device_path(d), r) for d, r in unavailable)
    if len(usable) >= count:
        message = ("%d chip(s) are usable (%s) but they do not satisfy the topology rule: %s. "
                   "Free matching chips, or change count"
                   % (len(usable), ", ".join(device_path(d) for d in sorted(usable)), rule))
    else:
        message = "not enough free NPU chips: %d requested, %d usable" % (count, len(usable))
    if listing:
        message += ". Unavailable: " + listing
    raise NotEnoughNpus(message, unavailable)


def assign(chips, family, owner, count, ledger, exclude=(),
           threshold_pct=DEFAULT_IDLE_THRESHOLD_PCT, pid_owners=None):
    # type: (Sequence[Chip], Optional[str], str, int, Mapping[str, Sequence[int]], Iterable[int], float, Optional[Mapping[int, Optional[str]]]) -> List[int]
    """Classify then select: the device ids ``owner`` should hold."""
    check_count(count)
    states = classify(chips, owner, ledger, exclude, threshold_pct, pid_owners)
    return select(states, family, count)


def give_back(owner, device_ids, ledger):
    # type: (str, Iterable[int], Mapping[str, Sequence[int]]) -> List[int]
    """The chips ``owner`` gets back on a rollback: exactly ``device_ids`` (the ones the restored
    version ran on), sorted. Refused, naming the holder, when another owner holds one of them in
    the ledger (two deployments must never share a chip)."""
    ids = sorted(set(int(d) for d in device_ids))
    if not ids:
        raise NpuAssignError("no chips to give back to %s: the restored version names none" % owner)
    held = ["%s (held by %s)" % (device_path(d), other)
            for other, theirs in sorted(ledger.items()) if other != owner
            for d in ids if d in theirs]
    if held:
        raise NpuAssignError("cannot give %s back to %s: %s. To fix: release the other deployment's chips "
                             "(state=absent) or roll back to a version on free chips"
                             % (", ".join(device_path(d) for d in ids), owner, ", ".join(held)))
    return ids
