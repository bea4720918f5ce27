# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The vllm_compose health gate and host survey: pure logic for the vllm_gate and
vllm_host_info modules.

PRIVATE to this collection; may change without notice. Standard library only; runs on the
target and on the controller (Python >= 3.8).

* :func:`digest_log` reads a vLLM container log: vLLM's own errors first (the last line of each
  traceback, ``ERROR`` lines, argparse's ``error:`` lines), then the tail without uvicorn's
  access-log lines, which are counted ("38 access-log lines omitted").
* :func:`container_problem` judges one container of a deployment during the gate: exited,
  dead, restarting, restarted or replaced since the change.
* :func:`parse_listeners` and :func:`socket_pids` find which processes hold a TCP port
  (``/proc/net/tcp``, ``/proc/net/tcp6``, ``/proc/<pid>/fd``), :func:`holder_problem` says
  whether the process answering on the port is the deployment's own container.
* :func:`survey` finds what runs on the host that the inventory does not name (orphans) and
  who holds the ports and cards the inventory plans, and returns the refusals.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

# uvicorn's access log: `INFO:     127.0.0.1:40522 - "GET /health HTTP/1.1" 200 OK`, possibly after
# vLLM's process prefix `(APIServer pid=1) `.
ACCESS_RE = re.compile(r'^(?:\([^)]*pid=\d+\)\s*)?INFO:\s+\S+ - "[A-Z]+ \S* HTTP/[0-9.]+" \d{3}\b')
_PROCESS_PREFIX_RE = re.compile(r"^\([^)]*pid=\d+\)\s?")
# vLLM's logger: `ERROR 12-01 08:00:00 [core.py:708] message` (also with .mmm seconds).
_LEVEL_RE = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+"
                       r"\[[^\]]*\]\s?(?P<msg>.*)$")
_EXCEPTION_RE = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Fault)(?::|$)")
_ARGPARSE_RE = re.compile(r"^[\w][\w .-]*: error: \S")
TRACEBACK = "Traceback (most recent call last):"
MAX_ERRORS = 12

# Module options of vllm_gate and vllm_host_info (doc fragment ascendfleet.llm.vllm_host).
HOST_ARGS = dict(
    docker_executable=dict(type="str", default="docker"),
    proc_root=dict(type="path", default="/proc"),
)

BAD_STATES = ("exited", "dead", "removing", "paused", "created")


def _message(line):
    # type: (str) -> Tuple[Optional[str], str]
    """(log level or None, message) of a log line without vLLM's process prefix and logger header."""
    text = _PROCESS_PREFIX_RE.sub("", line.rstrip("\r\n"))
    match = _LEVEL_RE.match(text)
    if match:
        return match.group("level"), match.group("msg")
    return None, text


def digest_log(text, tail=40):
    # type: (str, int) -> Dict[str, Any]
    """vLLM's errors and the log tail without access-log lines.

    Returns ``{"errors", "tail", "access_lines_omitted", "lines"}``: ``errors`` - the last line
    of every traceback (in order of appearance: vLLM prints the root cause before the
    wrapping "Engine core initialization failed"), then every other ``ERROR``/``CRITICAL``
    message and argparse ``error:`` line, each once, at most 12; ``tail`` - the last ``tail``
    lines that are not uvicorn access-log lines; ``access_lines_omitted`` - the access-log lines
    among the lines the tail covers; ``lines`` - lines read.
    """
    lines = text.splitlines()
    exceptions = []  # type: List[str]
    others = []  # type: List[str]
    in_traceback = False
    for line in lines:
        if ACCESS_RE.match(line):
            continue
        level, msg = _message(line)
        stripped = msg.strip()
        if stripped == TRACEBACK:
            in_traceback = True
            continue
        if in_traceback:
            if msg[:1].isspace() or not stripped:
                continue  # a frame, its source line, or a blank
            if _EXCEPTION_RE.match(stripped):
                if stripped not in exceptions:
                    exceptions.append(stripped)
                in_traceback = False
                continue
            if stripped.startswith(("During handling of", "The above exception")):
                continue
            in_traceback = False
        if level in ("ERROR", "CRITICAL") or _ARGPARSE_RE.match(stripped):
            if stripped and stripped not in others:
                others.append(stripped)
    errors = exceptions + [line for line in others if line not in exceptions]
    kept = []  # type: List[int]
    for index in range(len(lines) - 1, -1, -1):
        if len(kept) >= max(tail, 0):
            break
        if not ACCESS_RE.match(lines[index]):
            kept.append(index)
    kept.reverse()
    first = kept[0] if kept else len(lines)
    if tail <= 0:
        first = len(lines)
    omitted = sum(1 for line in lines[first:] if ACCESS_RE.match(line))
    return {
        "errors": errors[:MAX_ERRORS],
        "tail": [lines[i] for i in kept],
        "access_lines_omitted": omitted,
        "lines": len(lines),
    }


def log_report(digest, tail):
    # type: (Mapping[str, Any], int) -> str
    """The log part of a failure message: vLLM's errors, then the filtered tail."""
    parts = []
    if digest.get("errors"):
        parts.append("vLLM's errors:")
        parts.extend("  " + line for line in digest["errors"])
    omitted = digest.get("access_lines_omitted") or 0
    parts.append("Last %d lines of the container log%s:" % (
        tail, " (%d access-log line%s omitted)" % (omitted, "" if omitted == 1 else "s") if omitted else ""))
    parts.extend(digest.get("tail") or ["(no log)"])
    return "\n".join(parts)


# --------------------------------------------------------------------------- the container


def container_problem(container, baseline=None, fresh=True):
    # type: (Optional[Mapping[str, Any]], Optional[Mapping[str, Any]], bool) -> Optional[str]
    """Why ``container`` (a :func:`_vllm_status.parse_containers` entry) cannot pass the gate, or None.

    ``baseline`` is the same container as the gate first saw it. ``fresh``: the change created,
    recreated or started the container, which resets Docker's restart count, so any restart
    is a crash since the change; otherwise restarts count from the baseline (without one, this
    look is the first: its restarts are from before the change).
    """
    if container is None:
        return "no container of the deployment exists (compose did not create it, or it was removed)"
    state = container.get("state") or "unknown"
    code = container.get("exit_code")
    restarts = int(container.get("restarts") or 0)
    oom = ", killed for lack of memory" if container.get("oom_killed") else ""
    if state == "restarting":
        return "the container is crash-looping: restarting after exit code %s%s, %d restart(s) since the change" % (
            code, oom, restarts)
    if state in BAD_STATES:
        if state in ("exited", "dead"):
            return "the container %s (exit code %s%s)" % ("exited" if state == "exited" else "is dead", code, oom)
        return "the container is %s, not running" % state
    if state != "running":
        return "the container is in state %s, not running" % state
    if baseline is not None and baseline.get("full_id") and container.get("full_id") != baseline.get("full_id"):
        return "the container was replaced by another one (%s) since the gate began" % (container.get("full_id") or "?")[:12]
    if fresh:
        since = 0
    elif baseline is not None:
        since = int(baseline.get("restarts") or 0)
    else:
        # The gate's first look at a container the change left running is its own baseline: its
        # restarts are from before the change (a crash-loop the run has since repaired).
        since = restarts
    if restarts > since:
        return "the container crashed and was restarted %d time(s) since the change" % (restarts - since)
    if baseline is not None and baseline.get("started_at") and container.get("started_at") != baseline.get("started_at"):
        return "the container was restarted since the gate began (started %s, first seen started %s)" % (
            container.get("started_at"), baseline.get("started_at"))
    return None


# --------------------------------------------------------------------------- who holds a port


def parse_listeners(*texts):
    # type: (str) -> Dict[int, List[str]]
    """Listening TCP sockets of ``/proc/net/tcp`` and ``/proc/net/tcp6`` texts: port -> socket inodes."""
    ports = {}  # type: Dict[int, List[str]]
    for text in texts:
        for line in (text or "").splitlines()[1:]:
            fields = line.split()
            if len(fields) < 10 or fields[3] != "0A":  # 0A = TCP_LISTEN
                continue
            try:
                port = int(fields[1].rsplit(":", 1)[1], 16)
            except (IndexError, ValueError):
                continue
            inode = fields[9]
            if inode != "0" and inode not in ports.setdefault(port, []):
                ports[port].append(inode)
    return ports


def socket_pids(inodes, proc_root="/proc"):
    # type: (Iterable[str], str) -> Dict[str, List[int]]
    """Socket inode -> PIDs holding it (``/proc/<pid>/fd/* -> socket:[inode]``); unreadable PIDs are skipped."""
    wanted = dict(("socket:[%s]" % inode, inode) for inode in inodes)
    found = dict((inode, []) for inode in wanted.values())  # type: Dict[str, List[int]]
    if not wanted:
        return found
    try:
        entries = os.listdir(proc_root)
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        fd_dir = os.path.join(proc_root, entry, "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target in wanted and int(entry) not in found[wanted[target]]:
                found[wanted[target]].append(int(entry))
    for pids in found.values():
        pids.sort()
    return found


def process_command(pid, proc_root="/proc"):
    # type: (int, str) -> str
    """The command line of ``pid`` (``/proc/<pid>/cmdline``, NULs as spaces), or ``?``."""
    try:
        with open(os.path.join(proc_root, str(pid), "cmdline"), "rb") as handle:
            raw = handle.read()
    except (IOError, OSError):
        return "?"
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip() or "?"


def describe_holder(holder):
    # type: (Mapping[str, Any]) -> str
    """``pid 123 (python3 -m http.server 8002)`` or ``container old-vllm-ascend-1 of compose project old (pid 123)``."""
    command = (holder.get("command") or "?")[:120]
    if holder.get("container_name") or holder.get("project"):
        where = "container %s" % (holder.get("container_name") or (holder.get("container_id") or "?")[:12])
        if holder.get("project"):
            where += " of compose project %s" % holder["project"]
        return "%s (pid %s: %s)" % (where, holder.get("pid"), command)
    if holder.get("container_id"):
        return "container %s (pid %s: %s)" % (holder["container_id"][:12], holder.get("pid"), command)
    return "pid %s (%s)" % (holder.get("pid"), command)


def holder_problem(port, holders, container_id, project):
    # type: (int, Sequence[Mapping[str, Any]], Optional[str], str) -> Optional[str]
    """Why the answer on ``port`` is not proven to come from ``container_id`` (of ``project``), or None.

    ``holders``: the processes listening on the port, each ``{pid, container_id, project,
    container_name, command}``. The port must be held, and only by the deployment's container.
    """
    if not holders:
        return ("port %d answers but no process on this host is seen listening on it (another network namespace, "
                "or /proc is not readable): the answer cannot be proven to come from deployment %s's container"
                % (port, project))
    foreign = [h for h in holders if not container_id or h.get("container_id") != container_id]
    if foreign:
        return "port %d is answered by %s, not by deployment %s's container%s" % (
            port, "; ".join(describe_holder(h) for h in foreign), project,
            " (%s)" % container_id[:12] if container_id else "")
    return None


def models_problem(port, models, served_model_name, model_root=None):
    # type: (int, Any, str, Optional[str]) -> Optional[str]
    """Why a ``/v1/models`` answer (parsed JSON) is not this deployment's, or None."""
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return "/v1/models on port %d did not answer a model list" % port
    ids = [str(item.get("id")) for item in data if isinstance(item, dict)]
    mine = [item for item in data if isinstance(item, dict) and item.get("id") == served_model_name]
    if not mine:
        return "/v1/models on port %d lists %s, not %r" % (port, ", ".join(repr(i) for i in ids) or "nothing", served_model_name)
    root = mine[0].get("root")
    if model_root and root and root != model_root:
        return "/v1/models on port %d serves %r from %s, not from %s" % (port, served_model_name, root, model_root)
    return None


# The seed's manual checks after a change, as requests to /v1/chat/completions: a chat
# completion, and a tool call that must come back as tool_calls when a tool parser is set.
SMOKE_CHAT = {"messages": [{"role": "user", "content": "Reply with one short sentence: are you up?"}], "max_tokens": 32}
SMOKE_TOOL = {
    "messages": [{"role": "user", "content": "What is the weather like in Beijing today?"}],
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Beijing"}},
                       "required": ["city"]}}}],
    "tool_choice": "auto", "max_tokens": 128,
}
SMOKE_TOOL_NAME = "get_weather"


def smoke_request(kind, served_model_name):
    """The body of the ``kind`` (``chat`` or ``tool``) smoke test for the served model."""
    body = dict(SMOKE_CHAT if kind == "chat" else SMOKE_TOOL)
    body["model"] = served_model_name
    return body


def smoke_problem(kind, status, body, error=None):
    # type: (str, Optional[int], str, Optional[str]) -> Optional[str]
    """Why the ``kind`` smoke test's answer (HTTP status, body text) fails, or None.

    ``error``: why no complete HTTP answer came back (``_http.Answer.error``), if so.
    """
    what = "the chat completion" if kind == "chat" else "the %s tool call" % SMOKE_TOOL_NAME
    if error:
        return "smoke test: %s got no HTTP answer: %s" % (what, error)
    excerpt = (body or "").strip().replace("\n", " ")[:300]
    if status != 200:
        return "smoke test: %s answered %s%s" % (what, status if status is not None else "nothing",
                                                 (": " + excerpt) if excerpt else "")
    try:
        answer = json.loads(body)
    except ValueError:
        return "smoke test: %s answered 200 with no JSON: %s" % (what, excerpt)
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not choices:
        return "smoke test: %s answered no choices: %s" % (what, excerpt)
    if kind == "chat":
        return None
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    calls = (message.get("tool_calls") if isinstance(message, dict) else None) or []
    names = [((c or {}).get("function") or {}).get("name") for c in calls if isinstance(c, dict)]
    if SMOKE_TOOL_NAME not in names:
        return ("smoke test: %s came back without a %s call in tool_calls (is the tool parser right for the "
                "model?): %s" % (what, SMOKE_TOOL_NAME, excerpt))
    return None


# --------------------------------------------------------------------------- what runs on the host


def device_ids(devices):
    # type: (Any) -> List[int]
    """Card numbers N of ``/dev/davinciN`` in a container's ``HostConfig.Devices``."""
    ids = set()
    for device in devices or []:
        path = (device or {}).get("PathOnHost") or ""
        match = re.fullmatch(r"/dev/davinci([0-9]+)", path)
        if match:
            ids.add(int(match.group(1)))
    return sorted(ids)


def _fix_absent(name):
    return ("add {name: %s, state: absent} to ascendfleet_deployments and run again: that removes the old "
            "deployment's containers, project directory and cards" % name)


def survey(host, projects, planned, inventory_names, ledger=None, listeners=None, project_dirs=None):
    # type: (str, Mapping[str, Any], Sequence[Mapping[str, Any]], Iterable[str], Any, Any, Any) -> Dict[str, Any]
    """What runs on the host against what the inventory plans.

    ``projects``: compose project -> containers (``parse_containers`` entries plus
    ``device_ids``); only projects whose containers carry the deployment label are this
    collection's. ``planned``: the present deployments, each ``{name, port, devices}``
    (``devices`` None when npu_assign chooses). ``inventory_names``: every deployment the
    inventory names (present or absent). ``ledger``: npu_assign's owner -> cards.
    ``listeners``: planned port -> holders (``{pid, container_id, project, container_name,
    command}``). ``project_dirs``: deployment directories under the project root.

    Returns ``{"orphans", "errors", "port_holders"}``: each orphan ``{name, containers,
    states, image, ports, cards, project_dir, summary}``; errors name the host, the deployment,
    the variable, the orphan or process, what it holds and the fix.
    """
    ledger = ledger or {}
    listeners = listeners or {}
    names = set(inventory_names)
    orphans = {}  # type: Dict[str, Dict[str, Any]]

    def orphan(name):
        return orphans.setdefault(name, {"name": name, "containers": [], "states": [], "image": None,
                                         "ports": [], "cards": [], "project_dir": False})

    for project, containers in sorted(projects.items()):
        ours = [c for c in containers if c.get("deployment")]
        if not ours or project in names:
            continue
        entry = orphan(project)
        for c in ours:
            entry["containers"].append(c.get("name"))
            entry["states"].append(c.get("state"))
            entry["image"] = entry["image"] or c.get("image")
            if c.get("port") and c["port"] not in entry["ports"]:
                entry["ports"].append(c["port"])
            for card in c.get("device_ids") or []:
                if card not in entry["cards"]:
                    entry["cards"].append(card)
    for owner, cards in sorted(ledger.items()):
        if owner in names:
            continue
        if owner in orphans or cards:
            entry = orphan(owner)
            for card in cards:
                if int(card) not in entry["cards"]:
                    entry["cards"].append(int(card))
    for name in sorted(project_dirs or []):
        if name not in names:
            orphan(name)["project_dir"] = True
    for entry in orphans.values():
        entry["cards"].sort()
        entry["ports"].sort()
        held = []
        if entry["containers"]:
            plural = "s" if len(entry["containers"]) > 1 else ""
            held.append("container%s %s (%s)" % (plural, ", ".join(entry["containers"]), ", ".join(sorted(set(entry["states"])))))
        if entry["ports"]:
            held.append("port %s" % ", ".join(str(p) for p in entry["ports"]))
        if entry["cards"]:
            held.append("card%s %s" % ("s" if len(entry["cards"]) > 1 else "", ", ".join(str(c) for c in entry["cards"])))
        if entry["project_dir"] and not entry["containers"]:
            held.append("a project directory")
        entry["summary"] = "%s is not in ascendfleet_deployments but holds %s. Fix: %s" % (
            entry["name"], ", ".join(held) or "nothing", _fix_absent(entry["name"]))

    errors = []  # type: List[str]
    port_holders = {}  # type: Dict[str, List[Dict[str, Any]]]
    present = set(d.get("name") for d in planned)
    for dep in planned:
        name = dep.get("name")
        port = dep.get("port")
        cards = set(dep.get("devices") or []) | set(int(c) for c in ledger.get(name, []))
        for entry in sorted(orphans.values(), key=lambda e: e["name"]):
            if port in entry["ports"]:
                errors.append("%s: deployment %s: port: %s is held by orphan deployment %s (%s, %s), which "
                              "ascendfleet_deployments no longer names. Fix: %s, or give %s another port"
                              % (host, name, port, entry["name"], ", ".join(entry["containers"]) or "no container",
                                 entry["image"] or "?", _fix_absent(entry["name"]), name))
            shared = sorted(cards & set(entry["cards"]))
            if shared:
                errors.append("%s: deployment %s: devices: card%s %s %s held by orphan deployment %s (%s), which "
                              "ascendfleet_deployments no longer names. Fix: %s"
                              % (host, name, "s" if len(shared) > 1 else "", ", ".join(str(c) for c in shared),
                                 "are" if len(shared) > 1 else "is", entry["name"],
                                 ", ".join(entry["containers"]) or "in the npu_assign ledger", _fix_absent(entry["name"])))
        holders = list(listeners.get(port) or [])
        port_holders[str(port)] = holders
        for holder in holders:
            owner = holder.get("project")
            if owner == name or owner in orphans:
                continue  # its own container, or an orphan (refused above)
            if owner in names and owner not in present:
                continue  # a deployment with state absent: removed before any deployment changes
            if owner in present:
                errors.append("%s: deployment %s: port: %s is held by deployment %s today (%s). Fix: move one of "
                              "them to a free port first, then swap in a second run"
                              % (host, name, port, owner, describe_holder(holder)))
                continue
            errors.append("%s: deployment %s: port: %s is already held by %s, which is not a deployment of this "
                          "collection; vLLM could not bind it and the health gate must not be answered by it. "
                          "Fix: stop that process or give %s another port" % (host, name, port, describe_holder(holder), name))
    return {
        "orphans": [orphans[k] for k in sorted(orphans)],
        "errors": errors,
        "port_holders": port_holders,
    }


def last_good_problems(host, planned, last_good, completeness):
    # type: (str, Sequence[Mapping[str, Any]], Mapping[str, Any], Any) -> List[str]
    """Refusals for deployments whose last-known-good could not run again: its model is damaged.

    A change is only safe while its rollback target can start. ``planned``: the present
    deployments (``name``, ``model``, ``revision``, and ``revision_key`` with the revisions cache
    layout); ``last_good``: name -> the recorded last-good/state.json (``model``, ``revision``,
    ``revision_key`` when it mounts a revision directory; older records without a model are
    skipped); ``completeness(model, revision, key)``: ``_facts.model_completeness``'s answer for
    today's layout (``key`` None), ``_model_revisions.revision_completeness``'s for the revision
    directory ``key``. Only a last-known-good on another model, revision or revision directory than
    the plan is asked here: the plan's own model is judged by the planner. A revision directory is
    written once and never rewritten by another revision's fetch, so a last-known-good revision that
    still exists complete is never refused (issue 29: no deadlock between old and new revision).
    """
    errors = []
    for dep in planned:
        state = last_good.get(dep.get("name")) or {}
        model, revision = state.get("model"), state.get("revision") or "master"
        key = state.get("revision_key") or None
        if not isinstance(model, str) or not model:
            continue
        if key is None and (model, revision) == (dep.get("model"), dep.get("revision") or "master"):
            continue
        if key is not None and (model, key) == (dep.get("model"), dep.get("revision_key")):
            continue
        answer = completeness(model, revision, key)
        if answer.get("complete"):
            continue
        what = "revision %s, directory %s" % (revision, key) if key else "revision %s" % revision
        errors.append("%s: deployment %s: model: its last-known-good serves %s (%s), which is not complete "
                      "in the cache (%s), so a failed change could not roll back. Fix: fetch it again before the "
                      "change: ansible-playbook playbooks/prefetch.yml --limit %s -e '{\"model_prefetch_models\": "
                      "[{\"model\": \"%s\", \"revision\": \"%s\"}]}'; nothing was changed"
                      % (host, dep.get("name"), model, what, "; ".join(answer.get("reasons") or ["unreadable"]),
                         host, model, key or revision))
    return errors


# --------------------------------------------------------------------------- reading the host (I/O injected)


def read_text(path):
    # type: (str) -> str
    try:
        with open(path, "r") as handle:
            return handle.read()
    except (IOError, OSError):
        return ""


def port_holders(ports, run, proc_root="/proc", docker="docker", inspected=None):
    # type: (Iterable[int], Any, str, str, Optional[List[Dict[str, Any]]]) -> Dict[int, List[Dict[str, Any]]]
    """Port -> the processes listening on it: ``{pid, command, container_id, container_name, project}``.

    ``container_id`` is None for a process outside this host's Docker containers.

    Reads the listening sockets of the host's network namespace (``<proc_root>/net/tcp{,6}``),
    their PIDs (``<proc_root>/<pid>/fd``), each PID's container (its cgroup) and the containers'
    names and compose projects (one ``docker inspect`` through ``run(argv) -> (rc, out, err)``).
    ``inspected``: the ``docker inspect`` objects of containers the caller read in the same
    execution; their names and projects are taken from there, and only the others are inspected.
    """
    from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_containers import container_id, inspected_labels

    wanted = sorted(set(int(p) for p in ports))
    listening = parse_listeners(read_text(os.path.join(proc_root, "net", "tcp")),
                                read_text(os.path.join(proc_root, "net", "tcp6")))
    inodes = [inode for port in wanted for inode in listening.get(port, [])]
    pids = socket_pids(inodes, proc_root)
    out = {}  # type: Dict[int, List[Dict[str, Any]]]
    ids = set()
    for port in wanted:
        seen = set()
        for inode in listening.get(port, []):
            for pid in pids.get(inode, []):
                if pid in seen:
                    continue
                seen.add(pid)
                cid = container_id(pid, proc_root)
                if cid:
                    ids.add(cid)
                out.setdefault(port, []).append({"pid": pid, "command": process_command(pid, proc_root),
                                                 "container_id": cid, "container_name": None, "project": None})
        out.setdefault(port, [])
    labels = inspected_labels(inspected)
    names = dict((item["Id"], ((item.get("Name") or "").lstrip("/"), labels[item["Id"]].get("com.docker.compose.project") or None))
                 for item in inspected or [] if isinstance(item, dict) and item.get("Id") in ids)
    others = sorted(ids - set(names))
    asked = bool(others) and run is not None
    rc, text, err = 0, "", ""
    if asked:
        rc, text, err = run([docker, "inspect", "--type", "container", "--format",
                             '{{.Id}} {{.Name}} {{index .Config.Labels "com.docker.compose.project"}}'] + others)
        for line in text.splitlines():
            fields = line.split()
            if len(fields) >= 2:
                names[fields[0]] = (fields[1].lstrip("/"), fields[2] if len(fields) > 2 and fields[2] != "<no" else None)
    if asked or names:
        for holders in out.values():
            for holder in holders:
                if holder["container_id"] in names:
                    holder["container_name"], holder["project"] = names[holder["container_id"]]
                elif asked and (rc == 0 or names or "no such" in (err or "").lower()):
                    # A cgroup this host's Docker does not know (e.g. the host itself runs in a
                    # container, as the simulated hosts do): a plain process of the host.
                    holder["container_id"] = None
    return out
