# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter looking up the minimum Ascend driver of a CANN release in the driver matrix.

Documentation: cann_driver_requirement.yml beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import (
    VersionError,
    cann_driver_requirement,
)


def cann_driver_requirement_filter(version, matrix):
    """The compatibility-matrix row (driver_min, ...) whose ``cann`` list names the CANN line."""
    try:
        return cann_driver_requirement(str(version), list(matrix))
    except VersionError as exc:
        raise AnsibleFilterError("cann_driver_requirement: %s" % exc)


class FilterModule(object):
    """CANN filters."""

    def filters(self):
        return {"cann_driver_requirement": cann_driver_requirement_filter}
