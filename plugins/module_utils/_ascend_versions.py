# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Ascend driver / firmware / CANN and vllm-ascend version strings: parse, compare, match.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
controller in filters and on hosts in modules, Python >= 3.8).

Huawei numbers releases ``MAJOR.MINOR.rcN`` before the final ``MAJOR.MINOR.PATCH`` of the same
line, and appends patch levels (``25.0.rc1.1``, ``24.1.rc2.2``, ``24.1.0.1``) and sometimes a
build tag (``21.0.4.B030``); case varies (``24.1.RC2``). So ``24.1.rc2 < 24.1.rc2.2 < 24.1.rc3 <
24.1.0 < 24.1.0.1 < 24.2.rc1``. vllm-ascend tags read like PEP 440 (``v0.17.0rc1 < v0.17.0``).
"""

from __future__ import annotations

import re

# Matched with re.fullmatch (a token "rc2\n" is not rc2).
_RC = re.compile(r"rc(\d+)", re.IGNORECASE | re.ASCII)
_BUILD = re.compile(r"b(\d+)", re.IGNORECASE | re.ASCII)
_SPC = re.compile(r"spc(\d+)", re.IGNORECASE | re.ASCII)
_ALPHA = re.compile(r"(alpha|beta|t)(\d*)", re.IGNORECASE | re.ASCII)
_VLLM = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:(rc|a|b|dev)(\d+))?(?:\.post(\d+))?", re.IGNORECASE | re.ASCII)

# Stage of a release line, lowest first.
_STAGE_PRE = 0    # alpha / beta / Tn test builds
_STAGE_RC = 1
_STAGE_FINAL = 2


class VersionError(ValueError):
    """A version string that is not an Ascend or vllm-ascend version."""


def ascend_version_key(version):
    """Return a tuple that orders Ascend driver/firmware/CANN versions correctly.

    >>> ascend_version_key("24.1.rc2.2") < ascend_version_key("24.1.0")
    True
    """
    if not isinstance(version, str) or not version.strip():
        raise VersionError("not a version: %r" % (version,))
    text = version.strip()
    parts = text.split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        raise VersionError(
            "%r is not an Ascend version (expected MAJOR.MINOR.rcN[.P] or MAJOR.MINOR.PATCH[.P], "
            "e.g. 25.0.rc1.1 or 23.0.7)" % text
        )
    key = [int(parts[0]), int(parts[1])]
    rest = parts[2:]
    stage = _STAGE_FINAL
    numbers = []
    build = 0
    for index, token in enumerate(rest):
        if token.isdigit():
            numbers.append(int(token))
            continue
        rc = _RC.fullmatch(token)
        alpha = _ALPHA.fullmatch(token)
        if index == 0 and rc:
            stage = _STAGE_RC
            numbers.append(int(rc.group(1)))
            continue
        if index == 0 and alpha:
            stage = _STAGE_PRE
            numbers.append(int(alpha.group(2) or 0))
            continue
        b = _BUILD.fullmatch(token) or _SPC.fullmatch(token)
        if b and index == len(rest) - 1:
            build = int(b.group(1))
            continue
        raise VersionError("%r is not an Ascend version: cannot read %r" % (text, token))
    if stage == _STAGE_FINAL and not numbers:
        # "24.1" alone sorts before "24.1.rc1"? No: a bare line means the line's first release.
        stage = _STAGE_PRE
    return tuple(key + [stage] + numbers + [build])


def _pad(key, length):
    return tuple(list(key) + [0] * (length - len(key)))


def compare_ascend_versions(left, right):
    """Return -1, 0 or 1 as Ascend version ``left`` is older than, equal to or newer than ``right``."""
    a = ascend_version_key(left)
    b = ascend_version_key(right)
    # Compare the stage first, then the numbers padded to the same length (so 24.1.0 == 24.1.0.0).
    head_a, head_b = a[:3], b[:3]
    if head_a != head_b:
        return -1 if head_a < head_b else 1
    tail_a, tail_b = a[3:-1], b[3:-1]
    width = max(len(tail_a), len(tail_b))
    tail_a, tail_b = _pad(tail_a, width) + (a[-1],), _pad(tail_b, width) + (b[-1],)
    if tail_a == tail_b:
        return 0
    return -1 if tail_a < tail_b else 1


def vllm_ascend_version_key(version):
    """Order vllm-ascend release tags (``v0.17.0rc1``, ``0.11.0``, ``v0.9.1``), PEP 440 style.

    Image tags carry a variant and OS suffix (``v0.17.0rc1-a3-openeuler``): only the part before
    the first ``-`` is the version.
    """
    if not isinstance(version, str):
        raise VersionError("not a vllm-ascend version: %r" % (version,))
    text = version.strip().split("-", 1)[0]
    m = _VLLM.fullmatch(text)
    if not m:
        raise VersionError(
            "%r is not a vllm-ascend version (expected e.g. v0.17.0rc1 or v0.11.0)" % version
        )
    major, minor, micro, pre, pre_n, post = m.groups()
    order = {"dev": 0, "a": 1, "b": 2, "rc": 3}
    if pre:
        pre_key = (order[pre.lower()], int(pre_n))
    else:
        pre_key = (4, 0)
    return (int(major), int(minor), int(micro or 0), pre_key, int(post or 0))


def _in_range(key, low, high):
    if low and key < vllm_ascend_version_key(low):
        return False
    if high and key >= vllm_ascend_version_key(high):
        return False
    return True


def driver_requirement(vllm_ascend_version, matrix):
    """Find the matrix row for a vllm-ascend release.

    ``matrix`` is a list of dicts with ``vllm_ascend_min`` (inclusive, optional),
    ``vllm_ascend_below`` (exclusive, optional), ``cann`` and ``driver_min``. Returns the first
    matching row, or raises VersionError naming the version when no row covers it.
    """
    key = vllm_ascend_version_key(vllm_ascend_version)
    for row in matrix:
        if _in_range(key, row.get("vllm_ascend_min"), row.get("vllm_ascend_below")):
            return dict(row)
    raise VersionError(
        "vllm-ascend %s is not in the driver compatibility matrix; add a row for it" % vllm_ascend_version
    )


def cann_driver_requirement(cann_version, matrix):
    """The minimum driver for a CANN version: the matrix row whose ``cann`` list names its line."""
    key = ascend_version_key(cann_version)
    line = "%d.%d" % (key[0], key[1])
    for row in matrix:
        if line in [str(c) for c in row.get("cann", [])]:
            return dict(row)
    raise VersionError("CANN %s is not in the driver compatibility matrix" % cann_version)
