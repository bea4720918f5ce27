# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Which deployment a process on an NPU belongs to: PID -> container -> compose project.

PRIVATE to this collection; may change without notice.

``npu-smi`` on the host prints host PIDs. ``/proc/<pid>/cgroup`` of a process in a Docker
container names the container's 64-hex id (``0::/system.slice/docker-<id>.scope`` with
the systemd cgroup driver, ``.../docker/<id>`` with cgroupfs, cgroup v1 or v2). One
``docker inspect`` then gives each container's labels; the compose project label
(``com.docker.compose.project``) names the deployment, because vllm_compose names each
compose project after its deployment (owner == compose project).

Both the ``/proc`` root and the command runner are parameters, so tests use a directory
tree and a fake ``docker``. Standard library only; runs on the target (Python >= 3.8).
"""

from __future__ import annotations

import json
import os
import re
from typing import Callable, Dict, Iterable, List, Optional, Tuple

DEFAULT_LABEL = "com.docker.compose.project"

_CONTAINER_ID_RE = re.compile(r"(?<![0-9a-f])([0-9a-f]{64})(?![0-9a-f])")

# run(argv) -> (rc, stdout, stderr)
RunFn = Callable[[List[str]], Tuple[int, str, str]]


def container_id(pid, proc_root="/proc"):
    # type: (int, str) -> Optional[str]
    """The Docker container id of ``pid`` from its cgroup file, or None."""
    path = os.path.join(proc_root, str(pid), "cgroup")
    try:
        with open(path, "r") as handle:
            text = handle.read()
    except (IOError, OSError):
        return None
    found = None
    for line in text.splitlines():
        # Last path component that is a container id wins (nested cgroups).
        for match in _CONTAINER_ID_RE.finditer(line.rsplit(":", 1)[-1]):
            found = match.group(1)
    return found


def container_labels(ids, run, docker="docker"):
    # type: (Iterable[str], RunFn, str) -> Tuple[Dict[str, Dict[str, str]], Optional[str]]
    """Labels of each container id (one ``docker inspect``), plus a problem text or None.

    Containers docker does not know (exited and removed) are left out.
    """
    ids = sorted(set(ids))
    if not ids:
        return {}, None
    argv = [docker, "inspect", "--type", "container",
            "--format", "{{.Id}} {{json .Config.Labels}}"] + ids
    rc, out, err = run(argv)
    labels = {}  # type: Dict[str, Dict[str, str]]
    for line in out.splitlines():
        cid, sep, rest = line.strip().partition(" ")
        if not sep:
            continue
        try:
            value = json.loads(rest)
        except ValueError:
            continue
        labels[cid] = value if isinstance(value, dict) else {}
    problem = None
    if rc != 0 and not labels:
        problem = "%s failed (rc %d): %s" % (" ".join(argv[:4]), rc, (err or out).strip())
    return labels, problem


def pid_containers(pids, proc_root="/proc"):
    # type: (Iterable[int], str) -> Dict[int, Optional[str]]
    """The container id of each PID (None for a process outside any container)."""
    return dict((pid, container_id(pid, proc_root)) for pid in sorted(set(pids)))


def inspected_labels(inspected):
    # type: (Optional[Iterable[Dict]]) -> Dict[str, Dict[str, str]]
    """Container id -> labels of the ``docker inspect`` objects ``inspected`` (a list the caller
    already read in the same execution; None or [] for none)."""
    out = {}  # type: Dict[str, Dict[str, str]]
    for item in inspected or []:
        if isinstance(item, dict) and isinstance(item.get("Id"), str):
            labels = (item.get("Config") or {}).get("Labels")
            out[item["Id"]] = labels if isinstance(labels, dict) else {}
    return out


def pid_owners(pids, run, label=DEFAULT_LABEL, proc_root="/proc", docker="docker", inspected=None):
    # type: (Iterable[int], Optional[RunFn], str, str, str, Optional[List[Dict]]) -> Tuple[Dict[int, Optional[str]], List[str]]
    """Map each PID to the ``label`` value of its container (None when unknown).

    Returns (owners, warnings). ``run`` None means docker is unavailable. ``inspected``: the
    ``docker inspect`` objects of containers the caller read in the same execution; their
    labels are taken from there, and only the other containers are inspected.
    """
    warnings = []  # type: List[str]
    cids = pid_containers(pids, proc_root)
    owners = dict((pid, None) for pid in cids)  # type: Dict[int, Optional[str]]
    by_pid = dict((pid, cid) for pid, cid in cids.items() if cid)  # type: Dict[int, str]
    if not by_pid:
        return owners, warnings
    if run is None:
        warnings.append("docker not found: processes in containers (pids %s) cannot be "
                        "attributed to a deployment" % ", ".join(str(p) for p in sorted(by_pid)))
        return owners, warnings
    labels = inspected_labels(inspected)
    problem = None
    others = [cid for cid in by_pid.values() if cid not in labels]
    if others:
        more, problem = container_labels(others, run, docker)
        problem = problem if not labels else None
        labels.update(more)
    if problem:
        warnings.append(problem)
    for pid, cid in by_pid.items():
        owners[pid] = labels.get(cid, {}).get(label) or None
    return owners, warnings
