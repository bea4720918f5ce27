# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Read what an Ascend host offers besides its chips: CANN toolkit, Docker, Compose,
hccn_tool, device nodes and the model cache disk.

PRIVATE to this collection; may change without notice. Do not import it from outside
ascendfleet.llm.

Parsers are pure (text in, data out) and raise :class:`HostFactsError` on text they cannot
read. The filesystem probes (``path_facts``, ``disk_facts``) take paths and only read.
Key=value files are read with the parser of ``_npu_smi`` (one parser for every Ascend
``key=value`` file). Standard library only; runs on the oldest target Python (3.8).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from typing import Dict, List, Optional

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import TOOLKIT_DIRS
from ansible_collections.ascendfleet.llm.plugins.module_utils._files import existing_ancestor, mount_point
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    NpuSmiParseError,
    parse_key_values,
)


class HostFactsError(ValueError):
    """Output of a host tool or a version file that cannot be read."""


# ---------------------------------------------------------------------------------------
# CANN toolkit version files

TOOLKIT_INFO_NAME = "ascend_toolkit_install.info"
VERSION_CFG_NAME = "version.cfg"

_RUNNING_RE = re.compile(r"^\[(?:[^:\]]*:)?([^:\]]*)\]$")


def parse_toolkit_install_info(text, source=TOOLKIT_INFO_NAME):
    # type: (str, str) -> Dict[str, Optional[str]]
    """``<toolkit>/<arch>-linux/ascend_toolkit_install.info``: CANN version, arch, path.

    Lines are ``key=value`` (``package_name=Ascend-cann-toolkit``, ``version=8.3.RC2``,
    ``innerversion=``, ``compatible_version=``, ``arch=``, ``os=``, ``path=``).
    """
    try:
        values = parse_key_values(text, source)
    except NpuSmiParseError as exc:
        raise HostFactsError(str(exc))
    version = values.get("version")
    if not version:
        raise HostFactsError("%s has no version= line" % source)
    return {
        "version": version,
        "package_name": values.get("package_name"),
        "arch": values.get("arch"),
        "path": values.get("path"),
        "source": source,
    }


def parse_version_cfg(text, source=VERSION_CFG_NAME):
    # type: (str, str) -> Dict[str, Optional[str]]
    """``<toolkit>/version.cfg``: the CANN version of ``toolkit_running_version``.

    Values read ``[<component version>:<CANN version>]`` (``[7.6.0.1.220:8.0.0]``); the
    part after the colon is the CANN release. ``runtime_running_version`` is used when the
    toolkit line is absent.
    """
    try:
        values = parse_key_values(text, source)
    except NpuSmiParseError as exc:
        raise HostFactsError(str(exc))
    for key in ("toolkit_running_version", "runtime_running_version"):
        raw = values.get(key)
        if raw is None:
            continue
        match = _RUNNING_RE.match(raw.strip())
        if not match or not match.group(1).strip():
            raise HostFactsError("%s: cannot read %s=%s (expected [component:CANN version])"
                                 % (source, key, raw))
        return {"version": match.group(1).strip(), "package_name": None, "arch": None,
                "path": None, "source": source}
    raise HostFactsError("%s has no toolkit_running_version= line" % source)


def toolkit_version_from_files(files):
    # type: (Dict[str, str]) -> Optional[Dict[str, Optional[str]]]
    """CANN version from ``{path: text}`` of toolkit files; install.info wins over version.cfg.

    Returns None when ``files`` holds neither kind of file.
    """
    ordered = sorted(files, key=lambda p: (os.path.basename(p) != TOOLKIT_INFO_NAME, p))
    for path in ordered:
        name = os.path.basename(path)
        if name == TOOLKIT_INFO_NAME:
            return parse_toolkit_install_info(files[path], path)
        if name == VERSION_CFG_NAME:
            return parse_version_cfg(files[path], path)
    return None


# The version files under a CANN toolkit root (roots: _facts.TOOLKIT_DIRS).
TOOLKIT_GLOBS = (
    "{root}/*-linux/" + TOOLKIT_INFO_NAME,
    "{root}/" + VERSION_CFG_NAME,
)

# Printed by the shell script that reads an image's toolkit files, one block per file.
FILE_MARK = "==> ascendfleet-file: "


def image_probe_script(roots=TOOLKIT_DIRS):
    # type: (tuple) -> str
    """POSIX sh that prints every toolkit version file under ``roots`` after a marker line."""
    patterns = " ".join(g.format(root=r) for r in roots for g in TOOLKIT_GLOBS)
    return ('for f in %s; do [ -f "$f" ] || continue; echo "%s$f"; cat "$f"; echo; done'
            % (patterns, FILE_MARK))


def split_marked_files(text):
    # type: (str) -> Dict[str, str]
    """``{path: text}`` from the output of :func:`image_probe_script`."""
    files = {}  # type: Dict[str, str]
    current = None  # type: Optional[str]
    for line in text.splitlines():
        if line.startswith(FILE_MARK):
            current = line[len(FILE_MARK):].strip()
            files[current] = ""
        elif current is not None:
            files[current] += line + "\n"
    return files


# ---------------------------------------------------------------------------------------
# Docker and Compose

_COMPOSE_RE = re.compile(r"\bversion\s+v?(\d+\.\d+(?:\.\d+)?[^\s,]*)", re.IGNORECASE)


def parse_docker_version(text):
    # type: (str) -> Dict[str, Optional[str]]
    """``docker version --format '{{json .}}'``: client and server (Engine) versions.

    ``server_version`` is None when the CLI could not reach the Engine (``"Server":null``).
    """
    text = (text or "").strip()
    start = text.find("{")
    if start < 0:
        raise HostFactsError("docker version printed no JSON: %r" % text[:200])
    try:
        data = json.loads(text[start:].splitlines()[0])
    except ValueError as exc:
        raise HostFactsError("docker version printed JSON that cannot be read (%s): %r"
                             % (exc, text[:200]))
    client = data.get("Client") or {}
    server = data.get("Server") or {}
    version = server.get("Version")
    if not version:
        for comp in server.get("Components") or []:
            if comp.get("Name") == "Engine":
                version = comp.get("Version")
    return {
        "client_version": client.get("Version"),
        "server_version": version or None,
        "api_version": server.get("ApiVersion") or None,
    }


def parse_compose_version(text):
    # type: (str) -> str
    """``docker compose version``: ``Docker Compose version v2.40.3`` -> ``2.40.3``."""
    match = _COMPOSE_RE.search(text or "")
    if not match:
        raise HostFactsError("docker compose version printed no version: %r"
                             % (text or "").strip()[:200])
    return match.group(1)


# ---------------------------------------------------------------------------------------
# hccn_tool (multi-node RoCE network of each chip)

_LINK_RE = re.compile(r"^\s*link status\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
_IP_RE = re.compile(r"^\s*ipaddr\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
_MASK_RE = re.compile(r"^\s*netmask\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)


def parse_hccn_link(text):
    # type: (str) -> str
    """``hccn_tool -i N -link -g``: ``link status: UP`` -> ``UP``."""
    match = _LINK_RE.search(text or "")
    if not match:
        raise HostFactsError("hccn_tool -link -g printed no 'link status:' line: %r"
                             % (text or "").strip()[:200])
    return match.group(1).upper()


def parse_hccn_ip(text):
    # type: (str) -> Dict[str, Optional[str]]
    """``hccn_tool -i N -ip -g``: address and netmask; both None when nothing is printed
    (a port without an address prints nothing)."""
    ip = _IP_RE.search(text or "")
    mask = _MASK_RE.search(text or "")
    if not ip and (text or "").strip():
        raise HostFactsError("hccn_tool -ip -g printed no 'ipaddr:' line: %r"
                             % text.strip()[:200])
    return {"ipaddr": ip.group(1) if ip else None, "netmask": mask.group(1) if mask else None}


# ---------------------------------------------------------------------------------------
# Filesystem probes (read-only)

def path_facts(path):
    # type: (str) -> Dict[str, object]
    """Whether ``path`` exists and what it is: ``file``, ``directory``, ``char`` (device),
    ``block``, ``link`` (dangling), ``other``."""
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            if os.path.islink(path):
                return {"path": path, "exists": False, "type": "link"}
            return {"path": path, "exists": False, "type": None}
        return {"path": path, "exists": False, "type": None, "error": str(exc)}
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        kind = "directory"
    elif stat.S_ISREG(mode):
        kind = "file"
    elif stat.S_ISCHR(mode):
        kind = "char"
    elif stat.S_ISBLK(mode):
        kind = "block"
    else:
        kind = "other"
    return {"path": path, "exists": True, "type": kind}


def disk_facts(path):
    # type: (str) -> Dict[str, object]
    """Cache disk facts of ``path``: existence, type, the mount point and free space of
    ``path`` or (when it does not exist yet) of its nearest existing ancestor, writability."""
    facts = path_facts(path)
    probe = path if facts["exists"] else existing_ancestor(path)
    vfs = os.statvfs(probe)
    facts.update({
        "probed_path": probe,
        "mount_point": mount_point(probe),
        "free_bytes": vfs.f_bavail * vfs.f_frsize,
        "total_bytes": vfs.f_blocks * vfs.f_frsize,
        "writable": os.access(probe, os.W_OK | os.X_OK),
    })
    return facts


def first_lines(text, count=3):
    # type: (str, int) -> str
    """The first non-empty lines of a tool's output, joined, for messages."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " / ".join(lines[:count])


def list_devices(names):
    # type: (List[str]) -> List[Dict[str, object]]
    """:func:`path_facts` of ``/dev/<name>`` for each name."""
    return [dict(path_facts("/dev/" + name), name=name) for name in names]
