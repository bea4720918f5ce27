# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filters driving the rollout state machine of one deployment (role vllm_compose, _vllm_rollout).

Documentation: vllm_rollout.yml, vllm_rollout_result.yml, vllm_rollout_gate.yml,
vllm_rollout_record.yml and vllm_rollout_unit.yml beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_rollout as rollout_sm


def _bool(value):
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return bool(value)


def vllm_rollout(current, to, check_mode=False, host=None, **facts):
    """``current`` (a rollout, or a deployment name to start one) moved to state ``to``."""
    try:
        if isinstance(current, str):
            states = list(to) if isinstance(to, (list, tuple)) else [to]
            if not states or states[0] != rollout_sm.PLANNED:
                raise rollout_sm.RolloutError("a rollout starts in state planned, not %r" % (to,))
            started = rollout_sm.new(current, host=host)
            return rollout_sm.step(started, states[1:], check_mode=_bool(check_mode), **facts) if states[1:] else started
        if not isinstance(current, dict):
            raise rollout_sm.RolloutError("input must be a rollout (or a deployment name), got %s" % type(current).__name__)
        return rollout_sm.step(current, to, check_mode=_bool(check_mode), **facts)
    except (rollout_sm.RolloutError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("vllm_rollout: %s" % exc)


def vllm_rollout_result(current, dep, endpoint_host, host=None, members=None):
    """The fleet summary's entry of the rollout ``current`` of deployment ``dep``."""
    if not isinstance(current, dict) or "state" not in current:
        raise AnsibleFilterError("vllm_rollout_result: input must be a rollout (ascendfleet.llm.vllm_rollout), got %s"
                                 % type(current).__name__)
    if dep is not None and not isinstance(dep, dict):
        raise AnsibleFilterError("vllm_rollout_result: dep must be a planned deployment, got %s" % type(dep).__name__)
    return rollout_sm.result(current, dep or {}, str(endpoint_host), host=host,
                             members=list(members) if members is not None else None)


def vllm_rollout_gate(dep, fresh, smoke=False, restored=None):
    """The health gate's inputs for ``dep`` (or for the ``restored`` version's state.json)."""
    if not isinstance(dep, dict) or "name" not in dep:
        raise AnsibleFilterError("vllm_rollout_gate: input must be a planned deployment, got %s" % type(dep).__name__)
    if restored is not None and not isinstance(restored, dict):
        raise AnsibleFilterError("vllm_rollout_gate: restored must be a state.json mapping, got %s"
                                 % type(restored).__name__)
    return rollout_sm.gate_check(dep, _bool(fresh), _bool(smoke), restored=restored)


def vllm_rollout_record(dep, cards):
    """What last-good/state.json records of ``dep`` on ``cards``."""
    if not isinstance(dep, dict) or "name" not in dep:
        raise AnsibleFilterError("vllm_rollout_record: input must be a planned deployment, got %s" % type(dep).__name__)
    try:
        return rollout_sm.record_state(dep, cards)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("vllm_rollout_record: %s" % exc)


def vllm_rollout_unit(dep, host):
    """The members that roll ``dep`` out together and ``host``'s part (a unit of one without members)."""
    if not isinstance(dep, dict) or "name" not in dep:
        raise AnsibleFilterError("vllm_rollout_unit: input must be a planned deployment, got %s" % type(dep).__name__)
    if not isinstance(host, str) or not host:
        raise AnsibleFilterError("vllm_rollout_unit: host must be an inventory name, got %r" % (host,))
    try:
        return rollout_sm.unit(dep, host)
    except rollout_sm.RolloutError as exc:
        raise AnsibleFilterError("vllm_rollout_unit: %s" % exc)


class FilterModule(object):
    """Rollout state machine filters."""

    def filters(self):
        return {"vllm_rollout": vllm_rollout, "vllm_rollout_result": vllm_rollout_result,
                "vllm_rollout_gate": vllm_rollout_gate, "vllm_rollout_record": vllm_rollout_record,
                "vllm_rollout_unit": vllm_rollout_unit}
