# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations


class ModuleDocFragment(object):
    # The attributes every read-only module of the collection shares:
    # extends_documentation_fragment: [ascendfleet.llm.attributes.read_only]
    DOCUMENTATION = r"""
options: {}
"""

    READ_ONLY = r"""
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode.
  diff_mode:
    support: none
    description: Read-only module, nothing to diff.
  idempotent:
    support: full
    description: Never changes anything.
"""
