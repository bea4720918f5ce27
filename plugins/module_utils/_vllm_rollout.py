# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The rollout of one deployment on one host, as an explicit state machine (pure logic, unit-tested).

PRIVATE to this collection; may change without notice. Standard library only.

Every path that changes or reports a deployment - the single-host rollout, each member of a
multi-node rollout, the removal, the rollback playbook, the plan's no-op verdict, the pre-flight's
refusal - carries one *rollout* (a dict) from state to state through :func:`step`, which refuses
a transition the machine does not have, and reports it through :func:`result`, the one shape of
a fleet summary entry. The role's task files only say which deployment and when; what a state
allows next, whether the gate is due, and what the outcome is called are decided here::

    planned ─► cards held ─► image present ─► rendered ─► started ─► gated ─► recorded   deployed
                                                 │           └─► kept                    unchanged (gate not due)
                                                 ├─► kept (multi-node: runs as written)  unchanged
                                                 └─► checked (check mode)                would change | unchanged
    planned .. gated ─► failed ─► restoring ─► restored                                  rolled back
                     (no last-known-good:  │        └─► recorded (rollback.yml, previous/)
                      it stays failed)     └─► failed (the restore failed too)
    planned ─► restoring (rollback.yml);  planned ─► removed | absent (state absent)

The invariant it enforces: "unchanged" (``kept``) is only reachable from a live config equal to
last-known-good that nothing started anew (``gate_due`` false); ``recorded`` only after a gate
passed in this run (``gated``, or ``restored``, which is a passed gate on the restored version).
"""

from __future__ import annotations

from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import revision_change

PLANNED = "planned"
CARDS = "cards held"
IMAGE = "image present"
RENDERED = "rendered"
CHECKED = "checked"
STARTED = "started"
GATED = "gated"
KEPT = "kept"
RECORDED = "recorded"
RESTORING = "restoring"
RESTORED = "restored"
FAILED = "failed"
REMOVED = "removed"
ABSENT = "absent"

STATES = (PLANNED, CARDS, IMAGE, RENDERED, CHECKED, STARTED, GATED, KEPT, RECORDED, RESTORING, RESTORED, FAILED,
          REMOVED, ABSENT)

# state -> the states it may go to. Check mode skips the image (nothing is pulled), so cards
# held -> rendered is allowed there only (see step()).
TRANSITIONS = {
    PLANNED: (CARDS, RESTORING, CHECKED, REMOVED, ABSENT, FAILED),
    CARDS: (IMAGE, RENDERED, FAILED),
    IMAGE: (RENDERED, FAILED),
    RENDERED: (STARTED, CHECKED, KEPT, FAILED),
    STARTED: (GATED, KEPT, RESTORING, FAILED),
    GATED: (RECORDED, RESTORING, FAILED),
    RESTORING: (RESTORED, FAILED),
    RESTORED: (RECORDED,),
    CHECKED: (),
    KEPT: (),
    RECORDED: (),
    # A failed change is restored to last-known-good (which may fail too: failed again, the
    # reasons joined).
    FAILED: (RESTORING, FAILED),
    REMOVED: (),
    ABSENT: (),
}

# What the fleet summary calls the end of a rollout (RECORDED depends on the way it got there).
STATUS = {CHECKED: None, KEPT: "unchanged", FAILED: "failed", REMOVED: "removed", ABSENT: "absent",
          RESTORED: "rolled back"}

REASON_LIMIT = 600


class RolloutError(ValueError):
    """A transition the state machine does not have (a defect of the caller, never of the input)."""


def new(name, host=None):
    """A rollout of deployment ``name`` in state planned."""
    return {"name": str(name), "host": host, "state": PLANNED, "history": [PLANNED], "cards": None,
            "new_config": False, "gate_due": False, "fresh": False, "restore_from": None, "restored": None, "changed": False,
            "reason": ""}


def _truncate(text, limit):
    text = str(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def failure_reason(task=None, result=None, errors=None):
    """Why a step failed, in one line: vLLM's own error first (``errors``: the gate's or the log
    digest's), then the failed task and its reason (the gate's ``reason``, else its ``msg`` or
    ``stderr``)."""
    result = result if isinstance(result, dict) else {}
    errors = [e for e in (errors if errors is not None else result.get("vllm_errors") or []) if e]
    why = result.get("reason") or result.get("msg") or result.get("stderr") or "failed"
    return "%s%s: %s" % ((str(errors[0]) + " - ") if errors else "", task or "a task", _truncate(why, REASON_LIMIT))


def must_gate(render_changed, live_checksum, last_good_checksum):
    """Whether the live compose file still needs a gate: it changed now, or it is not
    last-known-good's (no last-known-good yet, or a stopped/skipped run wrote it)."""
    return bool(render_changed) or not last_good_checksum or live_checksum != last_good_checksum


def step(rollout, to, check_mode=False, **facts):
    """``rollout`` moved to state ``to`` (a name, or a list of names taken in turn), with the facts of
    that state:

    - cards held: ``cards`` (the device ids the deployment holds);
    - rendered: ``render_changed``, ``live_checksum``, ``last_good_checksum`` -> ``new_config`` (the
      live config is not last-known-good: recording it keeps the one it replaces as previous/) and
      ``gate_due``; or ``new_config`` as judged by the caller (the plan's no-op verdict);
    - checked (check mode): ``due`` (something else would change: a multi-node member) -> would change;
    - started: ``fresh`` (compose created or recreated the container), ``as_written`` (proof that
      it runs as written and answers) -> ``gate_due`` unless the config is last-known-good's, nothing
      was started anew and ``as_written``;
    - kept: only when the gate is not due, and from rendered only with ``as_written`` (its containers
      run as the live compose file says: nothing to start);
    - restoring: ``restore_from`` (last-good or previous), ``reason`` (why, kept for the report);
    - restored: ``state`` (the restored version's state.json: image, cards, port, ...), ``changed``;
    - failed: ``reason`` (appended to a reason already noted: "; then ..."), or ``task``/``result``
      /``errors`` (see failure_reason; from restoring, or with ``restore``, it says the rollback to
      ``restore_from`` failed - "too" after a failed change);
    - recorded: ``replaced`` (the last-good state.json this record replaced, as vllm_last_good
      returns it): its ``revision_key`` is what the deployment served before (``served_before``);
    - removed / absent: ``cards`` (the cards given back).

    Returns a new dict; raises RolloutError for a transition the machine does not have."""
    if isinstance(to, (list, tuple)):
        for one in to:
            rollout = step(rollout, one, check_mode=check_mode, **facts)
        return rollout
    if not isinstance(rollout, dict) or rollout.get("state") not in TRANSITIONS:
        raise RolloutError("not a rollout: %r" % (rollout,))
    current = rollout["state"]
    if to not in STATES:
        raise RolloutError("no state %r (states: %s)" % (to, ", ".join(STATES)))
    allowed = TRANSITIONS[current]
    if to not in allowed or (current == CARDS and to == RENDERED and not check_mode):
        raise RolloutError("deployment %s: no transition %s -> %s (from %s: %s)"
                           % (rollout.get("name"), current, to, current, ", ".join(allowed) or "none, it ended"))
    if to == KEPT and rollout.get("gate_due"):
        raise RolloutError("deployment %s: the live config has not passed a gate; it cannot be kept as it is"
                           % rollout.get("name"))
    if to == KEPT and current == RENDERED and facts.get("as_written") is not True:
        raise RolloutError("deployment %s: kept without a start only when its containers run as written "
                           "(as_written=true)" % rollout.get("name"))
    out = dict(rollout, state=to, history=list(rollout.get("history") or []) + [to])
    if to in (CARDS, REMOVED, ABSENT) and "cards" in facts:
        out["cards"] = [int(c) for c in facts["cards"] or []]
    if to == RENDERED:
        # The caller may pass the judgement itself (the plan's no-op verdict compared the files).
        out["new_config"] = bool(facts["new_config"]) if "new_config" in facts else must_gate(
            facts.get("render_changed"), facts.get("live_checksum"), facts.get("last_good_checksum"))
        out["gate_due"] = out["new_config"]
        out["changed"] = bool(facts.get("render_changed"))
    if to == CHECKED:
        out["gate_due"] = out["gate_due"] or bool(facts.get("due"))
    if to == STARTED:
        # Compose reporting nothing to do proves nothing about health (a container restarting under
        # the same config): the gate is due unless the caller has proof the container runs as
        # written and answers (as_written: the plan's verdict), so "unchanged" is said after a gate.
        out["fresh"] = bool(facts.get("fresh"))
        out["gate_due"] = out["gate_due"] or out["fresh"] or facts.get("as_written") is not True
        out["changed"] = out["changed"] or out["fresh"]
    if to == RESTORING:
        out["restore_from"] = facts.get("restore_from") or "last-good"
        if facts.get("reason"):
            out["reason"] = str(facts["reason"]).strip()
    if to == RECORDED and isinstance(facts.get("replaced"), dict):
        out["served_before"] = facts["replaced"].get("revision_key")
    if to == RESTORED:
        out["restored"] = dict(facts.get("state") or {})
        out["changed"] = out["changed"] or bool(facts.get("changed"))
    if to == FAILED:
        why = facts.get("reason")
        if why is None and ("task" in facts or "result" in facts):
            why = failure_reason(facts.get("task"), facts.get("result"), facts.get("errors"))
            if current == RESTORING or facts.get("restore"):
                # The restore itself failed (or a step of it before its state was read): after a
                # failed change, "failed too".
                why = "rollback to %s failed%s: %s" % (
                    "last-known-good" if (rollout.get("restore_from") or "last-good") == "last-good"
                    else rollout.get("restore_from") + "/", " too" if FAILED in (rollout.get("history") or []) else "", why)
        why = str(why or "").strip()
        if why:
            out["reason"] = ("%s; %s" % (out["reason"], why)) if out.get("reason") else why
    return out


def status(rollout):
    """What the fleet summary calls the rollout now: deployed, unchanged, would change, rolled back,
    failed, removed or absent (a rollout stopped midway - the gate skipped by tag - is "not gated")."""
    state = rollout.get("state")
    if state == CHECKED:
        return "would change" if rollout.get("gate_due") else "unchanged"
    history = rollout.get("history") or []
    if RESTORED in history and state in (RESTORED, RECORDED):
        # A restore after a failed change is a rollback; one on demand (rollback.yml) that found the
        # version live already changed nothing.
        return "rolled back" if FAILED in history or rollout.get("changed") else "unchanged"
    if state == RECORDED:
        # Gated and recorded: deployed when this run changed the config or started it anew; a
        # gate on last-known-good as it ran is "unchanged".
        return "deployed" if rollout.get("changed") or rollout.get("new_config") else "unchanged"
    if state in STATUS:
        return STATUS[state]
    if state == STARTED:
        return "not gated"
    return state


def result(rollout, dep, endpoint_host, host=None, members=None):
    """The fleet summary's entry of ``rollout`` (the one shape every path reports): host,
    deployment, model, cards, image, endpoint, served_model_name, status, reason (+ members of a
    multi-node deployment). A rolled-back one names the version that runs again (its state.json)."""
    dep = dep or {}
    state = rollout.get("state")
    restored = rollout.get("restored") or {}
    back = RESTORED in (rollout.get("history") or []) and bool(restored)
    gone = state in (REMOVED, ABSENT)
    cards = rollout.get("cards")
    if back:
        cards = restored.get("device_ids")
    elif cards is None:
        cards = dep.get("devices") or []
    port = restored.get("port") if back and restored.get("port") else dep.get("port")
    entry = {
        "host": host if host is not None else rollout.get("host"),
        "deployment": rollout.get("name"),
        "model": dep.get("model") or (restored.get("model") if back else "") or "",
        "cards": [int(c) for c in cards or []],
        "image": "" if gone else ((restored.get("image") if back else None) or dep.get("image") or ""),
        "endpoint": "" if gone or not port else "http://%s:%s/v1" % (endpoint_host, port),
        "served_model_name": "" if gone else (dep.get("served_model_name")
                                              or (restored.get("served_model_name") if back else "") or ""),
        "status": status(rollout),
        "reason": "" if status(rollout) in ("deployed", "unchanged", "would change", "removed", "absent")
        and state != FAILED else (rollout.get("reason") or ""),
    }
    # The revisions cache layout: the revision (commit) the deployment serves now, and the summary
    # line of a deployment that moved to another one ("revision master: <old> -> <new>").
    key = restored.get("revision_key") if back else (None if gone else dep.get("revision_key"))
    if key:
        entry["revision_key"] = key
        change = revision_change(dep.get("revision") or "master", rollout.get("served_before"), key) \
            if entry["status"] == "deployed" else None
        if change:
            entry["revision_change"] = change
    if members is not None:
        entry["members"] = [dict(m) for m in members]
    return entry


def unit(dep, host):
    """The members that roll ``dep`` out together, and ``host``'s part in it: a deployment with
    ``multinode`` (planned by ``_vllm_deploy``, or named by ``members``) on all of them, its first
    member the head; any other deployment is a unit of one, ``host`` its head. One rollout path
    (tasks/unit.yml) serves both: the head starts after the members stopped and is gated; every
    member records, or is restored, with it.

    Returns ``{"members": [...], "head": str, "role": "head" | "member", "multinode": bool}``."""
    node = (dep or {}).get("multinode") or {}
    members = [str(m) for m in node.get("members") or []] or [str(host)]
    head = str(node.get("head") or members[0])
    if head not in members:
        raise RolloutError("deployment %s: its head %s is not one of its members %s"
                           % ((dep or {}).get("name"), head, ", ".join(members)))
    if str(host) not in members:
        raise RolloutError("deployment %s: %s is not one of its members %s"
                           % ((dep or {}).get("name"), host, ", ".join(members)))
    return {"members": members, "head": head, "role": "head" if str(host) == head else "member",
            "multinode": len(members) > 1}


def gate_check(dep, fresh, smoke, restored=None):
    """The inputs of the health gate (tasks/health.yml) for ``dep``, or for the ``restored``
    version's state.json (a restore is gated on what it serves, without the smoke test)."""
    if restored is not None:
        return {"project": dep.get("name"), "port": restored.get("port"),
                "served_model_name": restored.get("served_model_name"), "model_root": restored.get("model_root") or "",
                "fresh": bool(fresh), "tool_call_parser": "", "smoke": False}
    return {"project": dep.get("name"), "port": dep.get("port"), "served_model_name": dep.get("served_model_name"),
            "model_root": dep.get("container_model_path") or "", "fresh": bool(fresh),
            "tool_call_parser": dep.get("tool_call_parser") or "", "smoke": bool(smoke)}


def record_state(dep, cards):
    """What last-good/state.json records of ``dep`` running on ``cards`` (the one writer: tasks/record.yml);
    with the revisions cache layout also the ``revision_key`` it serves."""
    out = {"name": dep.get("name"), "model": dep.get("model"), "revision": dep.get("revision"),
           "image": dep.get("image"), "device_ids": [int(c) for c in cards or []], "port": dep.get("port"),
           "served_model_name": dep.get("served_model_name"), "model_root": dep.get("container_model_path")}
    if dep.get("revision_key"):
        # The revisions cache layout: the revision directory its compose file mounts.
        out["revision_key"] = dep["revision_key"]
    return out
