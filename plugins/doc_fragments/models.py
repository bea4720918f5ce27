# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations


class ModuleDocFragment(object):
    # The models option of every module that reads the model cache (one shape, the one the
    # planned_models filter returns; argument spec _facts.models_option()).
    DOCUMENTATION = r"""
options:
  models:
    description:
      - The models to look at, in the shape the filter C(ascendfleet.llm.planned_models) returns.
      - Whether each is complete is the collection's one rule (C(_facts.model_completeness)) -
        the completion marker names the revision, the manifest is the one the marker was
        written with, and every manifest file has its size.
    type: list
    elements: dict
    default: []
    suboptions:
      model:
        description: ModelScope id C(Owner/Name).
        type: str
        required: true
      revision:
        description: The revision the completion marker must name.
        type: str
        default: master
      include:
        description: Include globs the copy must have been fetched with; unset accepts any.
        type: list
        elements: str
      exclude:
        description: Exclude globs the copy must have been fetched with; unset accepts any.
        type: list
        elements: str
"""
