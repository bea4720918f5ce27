# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The NPU assignment ledger: a JSON file of owner -> device ids.

PRIVATE to this collection; may change without notice.

Format (version 1)::

    {"version": 1, "assignments": {"qwen-chat": [4, 5], "qwen-coder": [6]}}

Writers hold an exclusive ``fcntl.flock`` on ``<ledger>.lock`` (a separate file, because
the ledger itself is replaced, not rewritten) for the whole read-decide-write cycle, and
replace the ledger atomically (temporary file in the same directory, fsync, rename). A
ledger that cannot be read is reported with its path and the problem, never reset.
Standard library only; runs on the target (Python >= 3.8).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from typing import Dict, List, Optional

from ansible_collections.ascendfleet.llm.plugins.module_utils._files import atomic_write

LEDGER_VERSION = 1
# Where npu_assign keeps the ledger unless told otherwise (doc fragment ascendfleet.llm.ledger).
DEFAULT_PATH = "/var/lib/ascendfleet/npu-assignments.json"


class LedgerError(ValueError):
    """The ledger file exists but is not a valid ledger."""


def empty():
    # type: () -> Dict[str, List[int]]
    return {}


def validate(data, path):
    # type: (object, str) -> Dict[str, List[int]]
    """Decoded JSON -> assignments, or LedgerError naming what is wrong."""
    fix = ("fix the file, or move it away if no deployment on this host still uses its "
           "NPUs (it records which deployment owns which NPU, so it is never reset "
           "automatically)")
    if not isinstance(data, dict):
        raise LedgerError("NPU ledger %s: top level must be a JSON object; %s" % (path, fix))
    if data.get("version") != LEDGER_VERSION:
        raise LedgerError("NPU ledger %s: unsupported version %r (expected %d); %s"
                          % (path, data.get("version"), LEDGER_VERSION, fix))
    raw = data.get("assignments")
    if not isinstance(raw, dict):
        raise LedgerError("NPU ledger %s: 'assignments' must be an object of owner -> "
                          "device ids; %s" % (path, fix))
    result = {}  # type: Dict[str, List[int]]
    holder = {}  # type: Dict[int, str]
    for owner, ids in raw.items():
        if not isinstance(ids, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids):
            raise LedgerError("NPU ledger %s: owner %r must map to a list of device ids "
                              "(non-negative integers), found %r; %s" % (path, owner, ids, fix))
        for device_id in ids:
            if device_id in holder:
                raise LedgerError("NPU ledger %s: device %d is held by both %r and %r; %s"
                                  % (path, device_id, holder[device_id], owner, fix))
            holder[device_id] = owner
        result[owner] = sorted(ids)
    return result


def loads(text, path):
    # type: (str, str) -> Dict[str, List[int]]
    """Parse ledger text. An empty (zero-length or blank) file is an empty ledger."""
    if not text.strip():
        return empty()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LedgerError("NPU ledger %s is not valid JSON (%s); fix the file, or move it "
                          "away if no deployment on this host still uses its NPUs (it is "
                          "never reset automatically)" % (path, exc))
    return validate(data, path)


def dumps(assignments):
    # type: (Dict[str, List[int]]) -> str
    data = {"version": LEDGER_VERSION,
            "assignments": dict((k, sorted(v)) for k, v in sorted(assignments.items()) if v)}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def read(path):
    # type: (str) -> Dict[str, List[int]]
    """The ledger at ``path``; empty when the file does not exist."""
    try:
        with open(path, "r") as handle:
            text = handle.read()
    except (IOError, OSError) as exc:
        if exc.errno == errno.ENOENT:
            return empty()
        raise LedgerError("NPU ledger %s cannot be read: %s" % (path, exc))
    return loads(text, path)


class Lock(object):
    """Exclusive advisory lock on ``<path>.lock`` (created, with its directory, if missing)."""

    def __init__(self, path, mode=0o644):
        # type: (str, int) -> None
        self.path = path + ".lock"
        self.mode = mode
        self.fd = None  # type: Optional[int]

    def __enter__(self):
        # type: () -> Lock
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, self.mode)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        # type: (object) -> None
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def write(path, assignments, mode=0o644):
    # type: (str, Dict[str, List[int]], int) -> None
    """Atomically replace the ledger (``_files.atomic_write``)."""
    atomic_write(path, dumps(assignments).encode("utf-8"), mode)
