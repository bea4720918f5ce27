# -*- coding: utf-8 -*-
# Copyright: ascendfleet.llm contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters over the RoCE fabric of a multi-node deployment (module_utils/_fabric.py).

Documentation: fabric_ping_plan.yml, fabric_findings.yml, fabric_member_mismatches.yml and
multinode_members.yml beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils._fabric import fabric_findings as _findings
from ansible_collections.ascendfleet.llm.plugins.module_utils._fabric import member_mismatches, ping_plan
from ansible_collections.ascendfleet.llm.plugins.module_utils._fabric import multinode_deployments as _deployments
from ansible_collections.ascendfleet.llm.plugins.module_utils._fabric import multinode_members as _multinode_members
from ansible_collections.ascendfleet.llm.plugins.module_utils._fabric import multinode_refusals as _refusals
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import MEMBER_KEYS


def _members(value, name):
    if not isinstance(value, list) or not all(isinstance(m, dict) and "host" in m for m in value):
        raise AnsibleFilterError("%s: expected a list of members, each a dict with 'host', got %r" % (name, value))
    return value


def fabric_ping_plan(members):
    """Which pings each member runs (NPU k of a member to NPU k of every other member)."""
    return ping_plan(_members(members, "fabric_ping_plan"))


def fabric_findings(members, deployment):
    """Every reason the measured fabric cannot carry the deployment (host, NPU, peer, fix)."""
    return _findings(str(deployment), _members(members, "fabric_findings"))


def fabric_member_mismatches(members, deployment):
    """Every setting a member resolved differently from the head (image, revision, parallel sizes...)."""
    return member_mismatches(str(deployment), _members(members, "fabric_member_mismatches"), list(MEMBER_KEYS))


def multinode_deployments(deployments, host):
    """The present multi-node deployments of the list ``deployments`` that name ``host`` as a member."""
    if not isinstance(host, str):
        raise AnsibleFilterError("multinode_deployments: host must be an inventory name, got %r" % (host,))
    return _deployments(host, list(deployments) if isinstance(deployments, (list, tuple)) else deployments)


def _run_hosts(hosts, variables, name):
    """``hosts`` checked to be a list of inventory names, and ``variables`` as a list of names."""
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise AnsibleFilterError("%s: expected a list of inventory names, got %r" % (name, hosts))
    return hosts, [variables] if isinstance(variables, str) else list(variables)


def multinode_members(hosts, hostvars, variables=("ascendfleet_deployments",)):
    """The hosts of ``hosts`` that a present multi-node deployment of any of them lists as a member.

    A host's deployments are those of every one of ``variables`` its host vars define.
    """
    hosts, names = _run_hosts(hosts, variables, "multinode_members")
    lists = []
    for host in hosts:
        mine = hostvars[host]
        lists.extend(mine[name] for name in names if name in mine)
    return _multinode_members(hosts, lists)


def multinode_refusals(hosts, hostvars, servers, variables=("vllm_compose_deployments", "ascendfleet_deployments")):
    """Every refusal of a multi-node deployment some member of which the run (``hosts``) leaves out.

    A host's deployments are those of the first of ``variables`` its host vars define.
    """
    if not isinstance(servers, list):
        raise AnsibleFilterError("multinode_refusals: servers must be the list groups['ascend_servers'], got %r" % (servers,))
    hosts, names = _run_hosts(hosts, variables, "multinode_refusals")
    first = {host: next((hostvars[host][n] for n in names if n in hostvars[host]), []) for host in hosts}
    return _refusals(hosts, first, servers)


class FilterModule(object):
    """Multi-node fabric filters."""

    def filters(self):
        return {"fabric_ping_plan": fabric_ping_plan, "fabric_findings": fabric_findings,
                "fabric_member_mismatches": fabric_member_mismatches,
                "multinode_members": multinode_members, "multinode_deployments": multinode_deployments,
                "multinode_refusals": multinode_refusals}
