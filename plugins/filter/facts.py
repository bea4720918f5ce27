# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filters exposing what the collection knows (module_utils/_facts.py) to roles and playbooks.

Documentation: fleet_fact.yml, vllm_ascend_image.yml, planned_models.yml, report_path.yml,
model_revisions.yml and model_prefetch_fanout_plan.yml beside this file.
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import report_rows
from ansible_collections.ascendfleet.llm.plugins.module_utils._prefetch_plan import fanout_plan
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import (
    FactError,
    cached_models,
    fleet_fact,
    image_ref,
    planned_models,
    report_dir_path,
)


def _plain(value):
    """Ansible's lazy containers and tagged strings -> plain Python data."""
    if isinstance(value, dict):
        return dict((str(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return value
    return str(value)


def fleet_fact_filter(name):
    """The collection's default of a shared input or fact (``'image_version' | fleet_fact``)."""
    try:
        return fleet_fact(str(name))
    except FactError as exc:
        raise AnsibleFilterError("fleet_fact: %s" % exc)


def vllm_ascend_image(settings, family=None, deployment=None):
    """The image reference of a deployment (or of the role-wide settings) for a chip family."""
    if not isinstance(settings, dict):
        raise AnsibleFilterError("vllm_ascend_image: expects the image settings as a mapping, got %s"
                                 % type(settings).__name__)
    try:
        return image_ref(_plain(settings), family or None, _plain(deployment or {}))
    except FactError as exc:
        raise AnsibleFilterError("vllm_ascend_image: %s" % exc)


def planned_models_filter(deployments, defaults=None, globs=True):
    """Unique (model, revision, include, exclude) of the present deployments."""
    if deployments is None:
        return []
    if not isinstance(deployments, (list, tuple)):
        raise AnsibleFilterError("planned_models: expected a list of deployments, got %s"
                                 % type(deployments).__name__)
    try:
        return planned_models(_plain(list(deployments)), _plain(defaults or {}), bool(globs))
    except FactError as exc:
        raise AnsibleFilterError("planned_models: %s" % exc)


def cached_models_filter(fact, wanted, cache_dir, layout="flat"):
    """Model states from the host fact ascendfleet_models, or None when the cache must be read."""
    return cached_models(_plain(fact) if fact else None, _plain(list(wanted or [])), str(cache_dir), str(layout))


def report_path(report_dir, playbook_dir=""):
    """``report_dir`` made absolute: relative to where ansible-playbook was started (its PWD),
    else to ``playbook_dir`` (Ansible itself runs lookups and local modules from there)."""
    return report_dir_path(report_dir, os.environ.get("PWD"), str(playbook_dir or ""))


def model_revisions(entries, models):
    """The revision (key, commit, change) each of ``models`` resolved to, from the cache read and
    the fetch/copy results ``entries`` (later ones win); [] in the flat layout."""
    if not isinstance(entries, (list, tuple)) or not isinstance(models, (list, tuple)):
        raise AnsibleFilterError("model_revisions: expects two lists (entries | model_revisions(models)), got %s and %s"
                                 % (type(entries).__name__, type(models).__name__))
    return report_rows(_plain(list(models)), _plain(list(entries)))


def model_prefetch_fanout_plan(records):
    """The fan-out plan of every host of the run from their records (``__model_prefetch_self``)."""
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("model_prefetch_fanout_plan: expects the list of the hosts' records, got %s"
                                 % type(records).__name__)
    try:
        return fanout_plan(_plain(list(records)))
    except ValueError as exc:
        raise AnsibleFilterError("model_prefetch_fanout_plan: %s" % exc) from exc


class FilterModule(object):
    """Shared facts filters."""

    def filters(self):
        return {
            "fleet_fact": fleet_fact_filter,
            "vllm_ascend_image": vllm_ascend_image,
            "planned_models": planned_models_filter,
            "cached_models": cached_models_filter,
            "report_path": report_path,
            "model_revisions": model_revisions,
            "model_prefetch_fanout_plan": model_prefetch_fanout_plan,
        }
