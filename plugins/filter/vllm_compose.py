# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter resolving and validating a host's vLLM deployments (role vllm_compose).

Documentation: vllm_compose_plan.yml, vllm_compose_noop.yml, vllm_compose_pull_failure.yml,
vllm_compose_roll_forward.yml and vllm_compose_host_question.yml beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import fleet_fact
from ansible_collections.ascendfleet.llm.plugins.module_utils._host_read import question
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_noop import judge
from ansible_collections.ascendfleet.llm.plugins.module_utils._roll_forward import report, rolls
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import (
    DeployError,
    hbm_per_card,
    plan,
    pull_failure,
)


def vllm_compose_plan(deployments, host="host", family=None, healthy_device_ids=None, chips=None, models=None,
                      defaults=None, image=None, network=None, drain_timeout=None):
    """Resolved deployments (command, environment, image, card count) plus errors and warnings."""
    try:
        healthy = None if healthy_device_ids is None else [int(d) for d in healthy_device_ids]
        return plan(
            list(deployments) if isinstance(deployments, (list, tuple)) else deployments,
            host=str(host),
            family=family or None,
            healthy_device_ids=healthy,
            hbm_per_card_mb=hbm_per_card(chips, healthy),
            models=dict(models or {}),
            defaults=dict(defaults or {}),
            image=dict(image or {}),
            cli=_vllm_cli,
            network=dict(network or {}),
            drain_timeout=None if drain_timeout in (None, "") else int(drain_timeout),
        )
    except (DeployError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("vllm_compose_plan: %s" % exc)


def vllm_compose_host_question(deployments, host=None, families=None, **plan_args):
    """What vllm_host_info reads of the planned deployments (_host_read.question). With ``host``:
    ``deployments`` are the inventory's, planned here for each chip family (``families``, default
    every family the collection knows) as vllm_compose_plan plans them (``plan_args``: its defaults,
    image, drain_timeout), without the chips and the cache - the read asked before the plan; the
    plan compares it with the question of its own plan and reads again when they differ."""
    if host is None:
        return question(list(deployments or []))
    out = {}
    for family in families if families is not None else fleet_fact("families"):
        try:
            out[family] = question(vllm_compose_plan(deployments, host, family=family, **plan_args)["deployments"])
        except AnsibleFilterError:
            continue  # No question for that family: the plan reads the host itself (and names the error).
    return out


def vllm_compose_noop(planned, host_states, rendered=None, api_key_set=False, service="vllm-ascend", host="host",
                      endpoint_host="127.0.0.1"):
    """Whether the rollout would change nothing on the host (see _vllm_noop.judge)."""
    if not isinstance(planned, dict):
        raise AnsibleFilterError("vllm_compose_noop: input must be the plan (vllm_compose_plan's result), got %s"
                                 % type(planned).__name__)
    return judge(list(planned.get("deployments") or []), list(planned.get("absent") or []),
                 list(planned.get("errors") or []), dict(host_states or {}), dict(rendered or {}),
                 bool(api_key_set), str(service), host=str(host), endpoint_host=str(endpoint_host))


def vllm_compose_roll_forward(hosts, hostvars):
    """The operator's lines naming what the rollout changes on the way, once per distinct release pair
    (see _roll_forward.report), from each host's plan and the compose files it read."""
    entries = []
    for host in hosts or []:
        try:
            hv = hostvars[host]
            plan_ = hv.get("__vllm_compose_plan")
            states = (hv.get("__vllm_compose_host") or {}).get("deployments")
        except (KeyError, TypeError):
            continue
        if isinstance(plan_, dict):
            entries.extend(rolls(str(host), plan_, states))
    return report(entries)


def vllm_compose_pull_failure(message, ref):
    """Why pulling ``ref`` failed (from the Docker daemon's ``message``) and the fix, in one sentence."""
    return pull_failure(str(ref), message)


class FilterModule(object):
    """vLLM deployment filters."""

    def filters(self):
        return {"vllm_compose_plan": vllm_compose_plan, "vllm_compose_noop": vllm_compose_noop,
                "vllm_compose_pull_failure": vllm_compose_pull_failure,
                "vllm_compose_roll_forward": vllm_compose_roll_forward,
                "vllm_compose_host_question": vllm_compose_host_question}
