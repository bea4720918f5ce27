# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations


class ModuleDocFragment(object):
    # The npu_assign ledger, shared by ascendfleet.llm.npu_assign (writes it) and
    # ascendfleet.llm.vllm_status (reads it).
    DOCUMENTATION = r"""
options:
  ledger_path:
    description:
      - The JSON ledger of owner (deployment) to device ids that M(ascendfleet.llm.npu_assign) keeps;
        created, with its directory, when missing.
      - Writers lock C(<ledger_path>.lock) and replace the ledger atomically, so concurrent runs
        cannot corrupt it. A ledger that is not valid is reported, never reset.
    type: path
    default: /var/lib/ascendfleet/npu-assignments.json
"""
