# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Last-known-good of a vllm_compose deployment: what is kept on the host after a passed gate.

PRIVATE to this collection; may change without notice. Standard library only (runs on hosts,
Python >= 3.8).

One directory per deployment (``<project_root>/<name>/``) holds the live ``compose.yaml``;
``last-good/`` holds the compose file and ``state.json`` (image, cards, port, model) of the last
deployment that passed its gate; ``previous/`` the last-good before that one (the rollback
target ``previous``). Readers: vllm_status, vllm_host_info, vllm_gate and the role's restore.
"""

from __future__ import annotations

import json
import os

from ansible_collections.ascendfleet.llm.plugins.module_utils._files import atomic_write, file_mode, read_bytes

LAST_GOOD = "last-good"
PREVIOUS = "previous"
STATE = "state.json"
COMPOSE = "compose.yaml"
FILE_MODE = 0o644
DIR_MODE = 0o755


def state_json(state):
    """The bytes of ``state.json``: sorted keys, indent 4, one trailing newline (as Ansible's
    to_nice_json writes it, so records written by earlier releases compare equal)."""
    return (json.dumps(state, indent=4, sort_keys=True, separators=(",", ": ")) + "\n").encode("utf-8")


def state_path(project_dir):
    """Where ``state.json`` of the last-known-good of ``project_dir`` lives."""
    return os.path.join(project_dir, LAST_GOOD, STATE)


def plan(project_dir, state, keep_previous):
    """The writes that make ``project_dir`` record ``state`` as its last-known-good, as a list of
    (path, bytes, mode) for files and (path, None, mode) for directories, only those whose
    content or mode differ. With ``keep_previous`` the current last-good/ files are first
    copied to previous/ (a change rolled out over it); raises OSError when compose.yaml cannot be read."""
    writes = []
    last_good = os.path.join(project_dir, LAST_GOOD)
    previous = os.path.join(project_dir, PREVIOUS)

    def want_dir(path):
        if file_mode(path) != DIR_MODE or not os.path.isdir(path):
            writes.append((path, None, DIR_MODE))

    def want_file(path, data):
        if read_bytes(path) != data or file_mode(path) != FILE_MODE:
            writes.append((path, data, FILE_MODE))

    if keep_previous:
        want_dir(previous)
        if os.path.isdir(last_good):
            for name in sorted(os.listdir(last_good)):
                src = os.path.join(last_good, name)
                if os.path.isfile(src) and not name.startswith("."):
                    want_file(os.path.join(previous, name), read_bytes(src))
    compose_path = os.path.join(project_dir, COMPOSE)
    compose = read_bytes(compose_path)
    if compose is None:
        raise OSError("cannot read %s" % compose_path)
    want_dir(last_good)
    want_file(os.path.join(last_good, COMPOSE), compose)
    want_file(state_path(project_dir), state_json(state))
    return writes


def apply(writes):
    """Carry out :func:`plan`'s writes, in order (each file replaced atomically)."""
    for path, data, mode in writes:
        if data is None:
            if not os.path.isdir(path):
                os.makedirs(path, mode)
            os.chmod(path, mode)
        else:
            atomic_write(path, data, mode)
