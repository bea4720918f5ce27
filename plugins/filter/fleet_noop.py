# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter naming the hosts of a deploy run that have nothing to do (issue 30).

Documentation: fleet_noop_hosts.yml beside this file.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_noop import decide


def _get(hostvars, host, name):
    """One host var, None when the host does not define it."""
    try:
        value = hostvars[host].get(name)
    except KeyError:
        return None
    return value if value is not None and not type(value).__name__.startswith("AnsibleUndefined") else None


def fleet_noop_hosts(hosts, hostvars, multinode=None, gateways=None, reasons=False):
    """Of ``hosts`` (in their order), those every role found nothing to do on (_fleet_noop.decide),
    from the facts the deploy playbook's decision play set: ascendfleet_npu (npu_verify),
    __model_prefetch_noop (model_prefetch's decide.yml) and __vllm_compose_noop, __vllm_compose_plan's
    warnings and __vllm_compose_orphans with __vllm_compose_planned (vllm_compose's decide.yml). With ``reasons``: decide's whole answer."""
    multinode, gateways = set(multinode or []), set(gateways or [])
    records = []
    for host in hosts or []:
        npu = _get(hostvars, host, "ascendfleet_npu")
        prefetch = _get(hostvars, host, "__model_prefetch_noop")
        planned = _get(hostvars, host, "__vllm_compose_planned")
        plan = _get(hostvars, host, "__vllm_compose_plan") if planned is True else None
        records.append({
            "host": host,
            "verdict": npu.get("verdict") if isinstance(npu, Mapping) else None,
            "prefetch": dict(prefetch) if isinstance(prefetch, Mapping) else {},
            "noop": _get(hostvars, host, "__vllm_compose_noop") if planned is True else None,
            "warnings": list((plan or {}).get("warnings") or []) + list(_get(hostvars, host, "__vllm_compose_orphans") or [])
            if planned is True else [],
            "multinode": host in multinode,
            "gateway": host in gateways,
        })
    out = decide(records)
    return out if reasons else out["noop"]


class FilterModule(object):
    """ascendfleet.llm fleet no-op filter."""

    def filters(self):
        return {"fleet_noop_hosts": fleet_noop_hosts}
