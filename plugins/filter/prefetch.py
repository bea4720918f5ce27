# -*- coding: utf-8 -*-
# Copyright: ascendfleet.llm contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter turning planned deployments into the models model_prefetch fetches.

Documentation: prefetch_models.yml beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils._modelscope import (
    ModelPrefetchError,
    models_from_deployments,
)


def prefetch_models(items):
    """Unique (model, revision, include, exclude) entries of the present deployments."""
    if items is None:
        return []
    if not isinstance(items, (list, tuple)):
        raise AnsibleFilterError("prefetch_models: expected a list of deployments, got %s"
                                 % type(items).__name__)
    try:
        return models_from_deployments(list(items))
    except ModelPrefetchError as exc:
        raise AnsibleFilterError("prefetch_models: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"prefetch_models": prefetch_models}
