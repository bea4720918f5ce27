# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filters comparing Ascend driver/firmware/CANN versions and looking up the driver matrix.

Documentation: ascend_version.yml and vllm_ascend_requirement.yml beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import (
    VersionError,
    compare_ascend_versions,
    driver_requirement,
)

_OPERATORS = {
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    "==": lambda c: c == 0,
    "!=": lambda c: c != 0,
    ">=": lambda c: c >= 0,
    ">": lambda c: c > 0,
}


def ascend_version(left, operator, right):
    """True when ``left <operator> right`` holds for Ascend version strings."""
    if operator not in _OPERATORS:
        raise AnsibleFilterError(
            "ascend_version: operator must be one of %s, not %r" % (", ".join(_OPERATORS), operator)
        )
    try:
        return _OPERATORS[operator](compare_ascend_versions(str(left), str(right)))
    except VersionError as exc:
        raise AnsibleFilterError("ascend_version: %s" % exc)


def vllm_ascend_requirement(version, matrix):
    """The compatibility-matrix row (cann, driver_min, ...) covering a vllm-ascend version."""
    try:
        return driver_requirement(str(version), list(matrix))
    except VersionError as exc:
        raise AnsibleFilterError("vllm_ascend_requirement: %s" % exc)


class FilterModule(object):
    """Ascend version filters."""

    def filters(self):
        return {
            "ascend_version": ascend_version,
            "vllm_ascend_requirement": vllm_ascend_requirement,
        }
