# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Reading and atomically replacing small files, and where a path lives (its mount point): the one
way the collection writes its state files
(model manifest, completion marker, progress, the npu_assign ledger) and its reports.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
controller and on hosts, Python >= 3.8).
"""

from __future__ import annotations

import os
import tempfile


def read_bytes(path):
    """The bytes of ``path``, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def file_size(path):
    """The size of ``path`` in bytes, or None when it does not exist."""
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def file_mode(path):
    """The permission bits of ``path`` (e.g. 0o644), or None when it does not exist."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


def atomic_write(path, data, mode=0o644):
    """Replace ``path`` with ``data`` (bytes) atomically: a temporary file in the same directory,
    fsync, rename, fsync of the directory; a reader sees the old or the new file, never a part.
    The directory is created when missing."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_if_changed(path, data, mode=0o644):
    """:func:`atomic_write` unless ``path`` already holds exactly ``data``; True when written."""
    if read_bytes(path) == data:
        return False
    atomic_write(path, data, mode)
    return True


def _nearest(path, found):
    """``path`` or its nearest ancestor for which ``found`` holds (``/`` at the latest)."""
    current = path
    while not found(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def mount_point(path):
    """The mount point holding ``path`` (``path`` itself may be a mount point)."""
    return _nearest(os.path.realpath(path), os.path.ismount)


def existing_ancestor(path):
    """``path`` or its nearest ancestor that exists."""
    return _nearest(os.path.abspath(path), os.path.exists)
