# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Parsers for Huawei Ascend ``npu-smi`` output and the driver's version files.

PRIVATE to this collection; may change without notice. Do not import it from outside
ascendfleet.llm.

Pure functions: text in, typed data out. Standard library only, and it must run on the
oldest target Python (3.8, see tests/config.yml). Output it cannot read raises
:class:`NpuSmiParseError` naming the offending lines; oddities it can read past are
reported through the optional ``warn`` callback.

The ``npu-smi info`` table is read by its structure (``+---+`` borders, ``|`` cells and
the header words), never by fixed column offsets: widths differ between npu-smi
releases (80 to 116 columns) and hand-edited outputs break the alignment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

HEALTH_VALUES = ("OK", "Warning", "Alarm", "Critical")
"""Health words ``npu-smi info`` prints, in order of severity."""

DEFAULT_IDLE_THRESHOLD_PCT = 15.0
"""Device memory use (percent of total) at or below which a chip without processes is idle.

Idle 910B cards show 2.6-4.2 GB of 64 GB used (driver and runtime reservations)."""

WarnFn = Optional[Callable[[str], None]]


class NpuSmiParseError(ValueError):
    """Output of an Ascend tool that this parser cannot read."""

    def __init__(self, message, lines=None):
        # type: (str, Optional[List[str]]) -> None
        self.reason = message
        self.lines = list(lines or [])
        if self.lines:
            shown = self.lines[:6]
            message = "%s\nOffending line(s):\n%s" % (
                message, "\n".join("  %r" % line for line in shown))
            if len(self.lines) > len(shown):
                message += "\n  ... (%d more)" % (len(self.lines) - len(shown))
        super(NpuSmiParseError, self).__init__(message)


@dataclass(frozen=True)
class Process:
    """One row of the process table."""

    pid: int
    name: str
    memory_mb: Optional[int]
    pid_in_container: Optional[int] = None


@dataclass(frozen=True)
class Chip:
    """One chip row pair of ``npu-smi info``.

    ``device_id`` is N of ``/dev/davinciN``: the Phy-ID column on A3, the Device column on
    310/310P, otherwise the NPU id.
    """

    npu_id: int
    chip_id: int
    device_id: int
    name: str
    health: str
    bus_id: Optional[str]
    power_w: Optional[float]
    temp_c: Optional[float]
    aicore_pct: Optional[float]
    memory_used_mb: Optional[int]
    memory_total_mb: Optional[int]
    hbm_used_mb: Optional[int]
    hbm_total_mb: Optional[int]
    processes: Tuple[Process, ...] = ()

    @property
    def device_path(self):
        # type: () -> str
        return "/dev/davinci%d" % self.device_id

    def device_memory(self):
        # type: () -> Tuple[str, Optional[int], Optional[int]]
        """(label, used, total) of the memory that holds model weights.

        HBM where the table has an HBM column with a non-zero total, else Memory-Usage
        (310/310P have no HBM column; 910A's DDR shows in Memory-Usage next to its HBM).
        """
        if self.hbm_total_mb:
            return "HBM", self.hbm_used_mb, self.hbm_total_mb
        return "memory", self.memory_used_mb, self.memory_total_mb

    def memory_used_pct(self):
        # type: () -> Optional[float]
        dummy, used, total = self.device_memory()
        if used is None or not total:
            return None
        return 100.0 * used / total

    def is_idle(self, threshold_pct=DEFAULT_IDLE_THRESHOLD_PCT):
        # type: (float) -> bool
        """Health OK, no process names the chip, device memory use <= threshold."""
        if self.health != "OK" or self.processes:
            return False
        pct = self.memory_used_pct()
        return pct is not None and pct <= threshold_pct

    def to_dict(self, threshold_pct=DEFAULT_IDLE_THRESHOLD_PCT):
        # type: (float) -> Dict[str, object]
        return {
            "npu_id": self.npu_id,
            "chip_id": self.chip_id,
            "device_id": self.device_id,
            "device_path": self.device_path,
            "name": self.name,
            "health": self.health,
            "bus_id": self.bus_id,
            "power_w": self.power_w,
            "temp_c": self.temp_c,
            "aicore_pct": self.aicore_pct,
            "memory_used_mb": self.memory_used_mb,
            "memory_total_mb": self.memory_total_mb,
            "hbm_used_mb": self.hbm_used_mb,
            "hbm_total_mb": self.hbm_total_mb,
            "processes": [
                {"pid": p.pid, "name": p.name, "memory_mb": p.memory_mb,
                 "pid_in_container": p.pid_in_container}
                for p in self.processes
            ],
            "idle": self.is_idle(threshold_pct),
        }


# Second header row, first cell: how the chip's device number is printed.
LAYOUT_NPU = "npu"          # "Chip": 910B / 910A, one chip per NPU, device = NPU id
LAYOUT_PHY_ID = "phy-id"    # "Chip Phy-ID": A3 (Ascend910_93), device = Phy-ID
LAYOUT_DEVICE = "device"    # "Chip Device": 310 / 310P / 310B, device = Device column
# Ascend 950 (A5): npu-smi built with NPU_SMI_V2 prints four cells, "NPU ID | Name | Health | ...",
# one chip per NPU ID, an empty first two cells in the second row and "NPU Util(%)" where the others
# print AICore(%); the process table's first column is "NPU ID" alone. Read from npu-smi's own source
# (Huawei's CANN driver repository, npucli/src/npu_info_print.c), not from a captured output: see
# tests/unit/plugins/module_utils/fixtures/npu_smi/SOURCES.md. Device = NPU ID (assumed).
LAYOUT_NPU_ID = "npu-id"


@dataclass(frozen=True)
class NpuSmiInfo:
    """Everything read from one ``npu-smi info``."""

    version: Optional[str]
    driver_version: Optional[str]
    layout: str
    chips: Tuple[Chip, ...]
    has_process_table: bool

    def by_device(self):
        # type: () -> Dict[int, Chip]
        return dict((c.device_id, c) for c in self.chips)


_BORDER_RE = re.compile(r"^\+[-=+]*\+?$")
_PAIR_RE = re.compile(r"(\S+?)\s*/\s*(\S+)")
_VERSION_RE = re.compile(r"npu-smi\s+(\S+)(?:\s+Version:\s*(\S+))?", re.IGNORECASE)
_NO_PROC_RE = re.compile(r"^No running processes? found in NPU\s+(\d+)\s*$", re.IGNORECASE)
_ELISION_RE = re.compile(r"^\.{3,}\s*$")


def _cells(line):
    # type: (str) -> List[str]
    """``| a | b |`` -> ["a", "b"]; a missing closing bar (cut-off output) is tolerated."""
    body = line.strip()[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def _int(text, what, line):
    # type: (str, str, str) -> int
    try:
        return int(text)
    except ValueError:
        raise NpuSmiParseError("%s %r is not a whole number" % (what, text), [line])


def _num(text, what, line):
    # type: (str, str, str) -> Optional[float]
    """Numbers; ``-`` and ``NA`` (not reported, e.g. power of A3 chip 1 or 310P) -> None."""
    if text in ("-", "NA", "N/A", "--"):
        return None
    try:
        return float(text)
    except ValueError:
        raise NpuSmiParseError("%s %r is not a number" % (what, text), [line])


def _pair(text, what, line):
    # type: (str, str, str) -> Tuple[Optional[int], Optional[int]]
    if "/" not in text:
        if text in ("NA", "-", "N/A"):
            return None, None
        raise NpuSmiParseError("%s %r is not a 'used / total' pair" % (what, text), [line])
    used, total = text.split("/", 1)
    if used in ("NA", "-") or total in ("NA", "-"):
        return None, None
    return _int(used, what + " used", line), _int(total, what + " total", line)


def _tokens(cell):
    # type: (str) -> List[str]
    """Whitespace tokens with ``a / b`` pairs (``64231/ 65536``, ``0    / 0``) kept as one."""
    return _PAIR_RE.sub(lambda m: "%s/%s" % (m.group(1), m.group(2)), cell).split()


def _groups(text, warn):
    # type: (str, WarnFn) -> List[List[str]]
    """Row groups between border lines. Rejects stray text inside the table."""
    groups = []  # type: List[List[str]]
    current = []  # type: List[str]
    seen_table = False
    stray = []  # type: List[str]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if _BORDER_RE.match(line):
            seen_table = True
            if stray:
                raise NpuSmiParseError("unexpected text inside the npu-smi table", stray)
            if current:
                groups.append(current)
                current = []
            continue
        if line.startswith("|"):
            if not seen_table:
                raise NpuSmiParseError(
                    "table row before the first border line; is this npu-smi info output?", [raw])
            if stray:
                raise NpuSmiParseError("unexpected text inside the npu-smi table", stray)
            current.append(line)
            continue
        if _ELISION_RE.match(line):
            if warn:
                warn("skipped an elided line (%r) in the npu-smi output" % line)
            continue
        if seen_table:
            stray.append(raw)
        elif warn:
            warn("ignored text before the npu-smi table: %r" % line)
    if stray:
        # Trailing text after the last row, e.g. a shell prompt or a tool message.
        if warn:
            warn("ignored text after the npu-smi table: %r" % stray)
    if current:
        # The last border line is missing (output cut short); keep what we have.
        groups.append(current)
    return groups


def _is_chip_header(cells):
    # type: (List[str]) -> bool
    return (len(cells) >= 3 and cells[0].split()[:1] == ["NPU"]
            and "Name" in cells[0] and cells[1].startswith("Health")) or _is_v2_header(cells)


def _is_v2_header(cells):
    # type: (List[str]) -> bool
    """The Ascend 950 header: ``NPU ID | Name | Health | Power(W) ...``."""
    return (len(cells) >= 4 and cells[0].split() == ["NPU", "ID"] and cells[1] == "Name"
            and cells[2].startswith("Health"))


def _header_words(text):
    # type: (str) -> List[str]
    """Header words of the value cells; the 950's ``NPU Util(%)`` (one column in two words) is read as
    the AICore(%) column the other layouts have in that place."""
    return text.replace("NPU Util(%)", "AICore(%)").split()


def _is_process_header(cells):
    # type: (List[str]) -> bool
    return any(c.lower().startswith("process id") for c in cells) and \
        any(c.lower().startswith("process name") for c in cells)


def _layout(row2_first_cell, line):
    # type: (str, str) -> str
    words = row2_first_cell.split()
    if words == ["Chip"]:
        return LAYOUT_NPU
    if words == ["Chip", "Phy-ID"]:
        return LAYOUT_PHY_ID
    if words == ["Chip", "Device"]:
        return LAYOUT_DEVICE
    raise NpuSmiParseError(
        "unknown chip table layout: second header row starts with %r "
        "(expected 'Chip', 'Chip Phy-ID' or 'Chip Device')" % row2_first_cell, [line])


def _values(header, cell, line):
    # type: (List[str], str, str) -> Dict[str, str]
    values = _tokens(cell)
    if len(values) != len(header):
        raise NpuSmiParseError(
            "expected %d values (%s) but found %d" % (
                len(header), ", ".join(header), len(values)), [line])
    return dict(zip(header, values))


def _health(text, line):
    # type: (str, str) -> str
    for word in HEALTH_VALUES:
        if text.lower() == word.lower():
            return word
    raise NpuSmiParseError(
        "unknown health value %r (known: %s)" % (text, ", ".join(HEALTH_VALUES)), [line])


def _chip(group, layout, head1, head2):
    # type: (List[str], str, List[str], List[str]) -> Dict[str, object]
    if len(group) != 2:
        raise NpuSmiParseError(
            "a chip entry must have exactly two rows between border lines, found %d "
            "(output cut short?)" % len(group), group)
    row1, row2 = group
    c1, c2 = _cells(row1), _cells(row2)
    if layout == LAYOUT_NPU_ID:
        # | 0      | 950PR_9599       | OK            | 94.8 ... |
        # |        |                  | 0000:C1:00.0  | 0 ...    |
        if len(c1) < 4 or len(c2) < 4 or c2[0] or c2[1]:
            raise NpuSmiParseError("an Ascend 950 chip entry must have four cells per row, the second row "
                                   "starting with two empty ones", group)
        npu_id = _int(c1[0], "NPU id", row1)
        name = c1[1]
        health = _health(c1[2], row1)
        chip_id, device_id = 0, npu_id
        bus_cell, values1, values2 = c2[2], c1[3:], c2[3:]
    else:
        if len(c1) < 3 or len(c2) < 3:
            raise NpuSmiParseError("a chip row must have three cells", group)
        first = c1[0].split()
        if not first:
            raise NpuSmiParseError("chip row without an NPU id", [row1])
        npu_id = _int(first[0], "NPU id", row1)
        name = " ".join(first[1:])
        health = _health(c1[1], row1)
        ids = c2[0].split()
        want = 1 if layout == LAYOUT_NPU else 2
        if len(ids) != want:
            raise NpuSmiParseError(
                "expected %d id(s) in the first cell of the second chip row, found %r"
                % (want, c2[0]), [row2])
        chip_id = _int(ids[0], "Chip id", row2)
        device_id = npu_id if layout == LAYOUT_NPU else _int(ids[1], "device id", row2)
        bus_cell, values1, values2 = c2[1], c1[2:], c2[2:]
    bus_id = bus_cell or None
    if bus_id in ("NA", "-"):
        bus_id = None
    v1 = _values(head1, " ".join(values1), row1)
    v2 = _values(head2, " ".join(values2), row2)
    mem = v2.get("Memory-Usage(MB)")
    hbm = v2.get("HBM-Usage(MB)")
    mem_used, mem_total = _pair(mem, "Memory-Usage", row2) if mem else (None, None)
    hbm_used, hbm_total = _pair(hbm, "HBM-Usage", row2) if hbm else (None, None)
    return dict(
        npu_id=npu_id, chip_id=chip_id, device_id=device_id, name=name, health=health,
        bus_id=bus_id,
        power_w=_num(v1.get("Power(W)", "-"), "Power", row1),
        temp_c=_num(v1.get("Temp(C)", "-"), "Temp", row1),
        aicore_pct=_num(v2.get("AICore(%)", "-"), "AICore", row2),
        memory_used_mb=mem_used, memory_total_mb=mem_total,
        hbm_used_mb=hbm_used, hbm_total_mb=hbm_total,
    )


def _process_columns(cells, line):
    # type: (List[str], str) -> Dict[str, int]
    cols = {}  # type: Dict[str, int]
    for i, cell in enumerate(cells):
        low = " ".join(cell.lower().split())
        if low == "process id in container":
            cols["pid_in_container"] = i
        elif low == "process id":
            cols["pid"] = i
        elif low.startswith("process name"):
            cols["name"] = i
        elif low.startswith("process memory"):
            cols["memory"] = i
        elif low.split() == ["npu", "chip"]:
            cols["ids"] = i
        elif low.split() == ["npu", "id"]:
            cols["ids"] = i
            cols["npu_only"] = i
    missing = [k for k in ("ids", "pid", "name") if k not in cols]
    if missing:
        raise NpuSmiParseError(
            "process table header lacks column(s) %s" % ", ".join(missing), [line])
    return cols


def _process_row(line, cols):
    # type: (str, Dict[str, int]) -> Tuple[int, int, Process]
    cells = _cells(line)
    if len(cells) <= max(cols.values()):
        raise NpuSmiParseError(
            "process row has %d cells, the header has %d" % (len(cells), max(cols.values()) + 1),
            [line])
    ids = cells[cols["ids"]].split()
    if "npu_only" in cols:
        # Ascend 950: "NPU ID" alone, one chip (0) per NPU ID.
        if len(ids) != 1:
            raise NpuSmiParseError("process row must start with the NPU ID", [line])
        ids = ids + ["0"]
    if len(ids) != 2:
        raise NpuSmiParseError("process row must start with 'NPU Chip' ids", [line])
    npu_id = _int(ids[0], "NPU id", line)
    chip_id = _int(ids[1], "Chip id", line)
    pid = _int(cells[cols["pid"]], "Process id", line)
    memory = None
    if "memory" in cols:
        memory_text = cells[cols["memory"]]
        memory = None if memory_text in ("", "-", "NA") else _int(
            memory_text, "Process memory", line)
    in_container = None
    if "pid_in_container" in cols:
        text = cells[cols["pid_in_container"]]
        in_container = None if text in ("", "-", "NA") else _int(
            text, "Process id in container", line)
    return npu_id, chip_id, Process(pid, cells[cols["name"]], memory, in_container)


def parse_info(text, warn=None):
    # type: (str, WarnFn) -> NpuSmiInfo
    """Parse the output of ``npu-smi info``.

    Raises NpuSmiParseError when the text is not an ``npu-smi info`` table or has rows it
    cannot read. ``warn`` receives messages about text it skipped.
    """
    if not text or not text.strip():
        raise NpuSmiParseError("npu-smi info printed nothing")
    groups = _groups(text, warn)
    version = driver_version = None
    layout = None
    head1 = head2 = None  # type: Optional[List[str]]
    raw_chips = []  # type: List[Dict[str, object]]
    proc_cols = None  # type: Optional[Dict[str, int]]
    procs = []  # type: List[Tuple[int, int, Process, str]]
    no_proc_npus = []  # type: List[Tuple[int, str]]
    for group in groups:
        first_cells = _cells(group[0])
        if layout is None:
            if _is_chip_header(first_cells):
                if len(group) != 2:
                    raise NpuSmiParseError(
                        "the chip table header must have two rows", group)
                second = _cells(group[1])
                if len(second) < 3:
                    raise NpuSmiParseError("the chip table header must have three cells", group)
                if _is_v2_header(first_cells):
                    if len(second) < 4 or second[0] or second[1]:
                        raise NpuSmiParseError("the Ascend 950 chip table header must have four cells, the "
                                               "second row starting with two empty ones", group)
                    layout = LAYOUT_NPU_ID
                    head1 = _header_words(" ".join(first_cells[3:]))
                    head2 = _header_words(" ".join(second[3:]))
                else:
                    layout = _layout(second[0], group[1])
                    head1 = _header_words(" ".join(first_cells[2:]))
                    head2 = _header_words(" ".join(second[2:]))
                if "Memory-Usage(MB)" not in head2 and "HBM-Usage(MB)" not in head2:
                    raise NpuSmiParseError(
                        "chip table header has no Memory-Usage or HBM-Usage column", group)
                continue
            match = _VERSION_RE.search(group[0])
            if match and version is None:
                version, driver_version = match.group(1), match.group(2)
                continue
            raise NpuSmiParseError(
                "expected the npu-smi version line or the chip table header", group)
        if proc_cols is None and _is_process_header(first_cells):
            proc_cols = _process_columns(first_cells, group[0])
            continue
        if proc_cols is None:
            raw_chips.append(_chip(group, layout, head1 or [], head2 or []))
            continue
        for line in group:
            cells = _cells(line)
            match = _NO_PROC_RE.match(" ".join(cells).strip())
            if match:
                no_proc_npus.append((int(match.group(1)), line))
                continue
            npu_id, chip_id, proc = _process_row(line, proc_cols)
            procs.append((npu_id, chip_id, proc, line))
    if layout is None:
        raise NpuSmiParseError(
            "no chip table found (no header row with 'NPU Name | Health'); "
            "is this the output of 'npu-smi info'?", text.splitlines()[:3])
    if not raw_chips:
        raise NpuSmiParseError("the chip table lists no chips (output cut short?)")

    known = set((c["npu_id"], c["chip_id"]) for c in raw_chips)
    npu_ids = set(c["npu_id"] for c in raw_chips)
    for npu_id, line in no_proc_npus:
        if npu_id not in npu_ids and warn:
            warn("process table mentions NPU %d, which the chip table does not list" % npu_id)
    # On A3 the process table's Chip column is the chip index (0/1); should an npu-smi
    # release print the Phy-ID there instead, match it against the NPU's device ids.
    by_phy = dict(((c["npu_id"], c["device_id"]), (c["npu_id"], c["chip_id"]))
                  for c in raw_chips)
    by_chip = {}  # type: Dict[Tuple[int, int], List[Process]]
    for npu_id, chip_id, proc, line in procs:
        key = (npu_id, chip_id)
        if key not in known and layout == LAYOUT_PHY_ID:
            key = by_phy.get(key, key)
        if key not in known:
            raise NpuSmiParseError(
                "process row names NPU %d chip %d, which the chip table does not list"
                % (npu_id, chip_id), [line])
        by_chip.setdefault(key, []).append(proc)

    chips = []
    seen_devices = {}  # type: Dict[int, Tuple[int, int]]
    for raw in raw_chips:
        key = (raw["npu_id"], raw["chip_id"])
        raw["processes"] = tuple(by_chip.get(key, ()))  # type: ignore[arg-type]
        chip = Chip(**raw)  # type: ignore[arg-type]
        if chip.device_id in seen_devices and warn:
            warn("NPU %d chip %d and NPU %d chip %d both report device %d"
                 % (seen_devices[chip.device_id] + key + (chip.device_id,)))
        seen_devices.setdefault(chip.device_id, key)
        chips.append(chip)
    return NpuSmiInfo(version=version, driver_version=driver_version, layout=layout, chips=tuple(chips),
                      has_process_table=proc_cols is not None)


# ---------------------------------------------------------------------------------------
# Chip family

FAMILY_910B = "910B"
FAMILY_910A = "910A"
FAMILY_A3 = "A3"
FAMILY_310P = "310P"
FAMILY_310B = "310B"
FAMILY_310 = "310"
FAMILY_A5 = "A5"

# The Name column of an Ascend 950: the driver's chip name (950PR_95xx / 950DT_95xx, what the driver's
# dcmi_init_basic.c compares), also accepted with an "Ascend" prefix (vllm-ascend's cpu-binding tests
# show "Ascend950DT" in the mapping of `npu-smi info -m`).
_A5_NAME_RE = re.compile(r"(ASCEND)?\s*950", re.IGNORECASE)


def detect_family(info):
    # type: (NpuSmiInfo) -> Optional[str]
    """Chip family of a host from its ``npu-smi info`` table, or None when unknown.

    Rule, strongest evidence first:

    0. ``NPU ID | Name`` layout (npu-smi of an Ascend 950, one chip per NPU ID) whose Name reads
       ``950...`` (``950PR_9599``, ``950DT_...``; also ``Ascend950...``): A5. Another name in that
       layout is an unknown family (None).
    1. ``Chip Phy-ID`` layout (two chips per NPU, each with its own davinci device):
       A3 (Atlas 800 A3 / Ascend910_93).
    2. ``Chip Device`` layout: the Name column, ``310P*`` -> 310P, ``310B*`` -> 310B,
       ``310*`` -> 310.
    3. ``Chip`` layout (one chip per NPU) with an HBM column: on-card DDR decides, not the
       name. 910A shows its DDR in Memory-Usage (about 13-16 GB total) next to 32 GB of
       HBM; 910B has no DDR (``0 / 0``). Some 910A servers print ``910B`` in the Name
       column (sample 910A-named-910B-24.1.0), so the name is only a tie-breaker: used when
       Memory-Usage is absent, ``910A*`` -> 910A, ``910B*`` -> 910B.
    """
    if not info.chips:
        return None
    names = [c.name.upper() for c in info.chips]
    if info.layout == LAYOUT_NPU_ID:
        return FAMILY_A5 if all(_A5_NAME_RE.match(n) for n in names) else None
    if info.layout == LAYOUT_PHY_ID:
        return FAMILY_A3
    if info.layout == LAYOUT_DEVICE:
        for prefix, family in (("310P", FAMILY_310P), ("310B", FAMILY_310B),
                               ("310", FAMILY_310)):
            if all(n.startswith(prefix) for n in names):
                return family
        return None
    with_hbm = [c for c in info.chips if c.hbm_total_mb]
    if with_hbm and len(with_hbm) == len(info.chips):
        ddr = [c.memory_total_mb for c in info.chips if c.memory_total_mb is not None]
        if len(ddr) == len(info.chips):
            return FAMILY_910A if all(ddr) else (FAMILY_910B if not any(ddr) else None)
    if all(n.startswith("910A") for n in names):
        return FAMILY_910A
    if all(n.startswith("910B") for n in names):
        return FAMILY_910B
    return None


# ---------------------------------------------------------------------------------------
# version.info, /etc/ascend_install.info

def parse_key_values(text, source="file"):
    # type: (str, str) -> Dict[str, str]
    """``key=value`` lines: driver/firmware ``version.info`` and ``/etc/ascend_install.info``.

    Blank lines and ``#`` comments are skipped; anything else without ``=`` is an error.
    """
    values = {}  # type: Dict[str, str]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise NpuSmiParseError("%s: expected key=value" % source, [raw])
        values[key.strip()] = value.strip()
    if not values:
        raise NpuSmiParseError("%s is empty" % source)
    return values


def parse_version_info(text, source="version.info"):
    # type: (str, str) -> Dict[str, object]
    """Driver or firmware ``version.info``: ``version`` plus every raw key.

    ``version`` is ``Version=`` (``package_version=`` is absent on some drivers).
    """
    values = parse_key_values(text, source)
    version = values.get("Version") or values.get("package_version")
    if not version:
        raise NpuSmiParseError("%s has no Version= line" % source, text.splitlines()[:3])
    return {"version": version, "package_version": values.get("package_version"),
            "values": values}


def parse_install_info(text, source="/etc/ascend_install.info"):
    # type: (str, str) -> Dict[str, str]
    """``/etc/ascend_install.info``: install user, group and driver/firmware paths."""
    return parse_key_values(text, source)
