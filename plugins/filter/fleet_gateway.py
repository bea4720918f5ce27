# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filters of the fleet's gateway (roles/fleet_gateway).

Documentation: fleet_gateway_pools.yml, fleet_gateway_models.yml and fleet_gateway_server.yml
beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.filter.facts import _plain
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_gateway import (
    GatewayError,
    models_list,
    pools,
    server_name,
)


def fleet_gateway_pools(records, check_prompt="ping"):
    """HAProxy pools (one per served model name) from one record per Ascend server."""
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("fleet_gateway_pools: expects a list of host records, got %s" % type(records).__name__)
    try:
        return pools(_plain(list(records)), str(check_prompt))
    except GatewayError as exc:
        raise AnsibleFilterError("fleet_gateway_pools: %s" % exc)


def fleet_gateway_models(pool_list):
    """The gateway's own GET /v1/models answer: the union of the served names."""
    if not isinstance(pool_list, (list, tuple)):
        raise AnsibleFilterError("fleet_gateway_models: expects the output of ascendfleet.llm.fleet_gateway_pools, got %s"
                                 % type(pool_list).__name__)
    try:
        return models_list(_plain(list(pool_list)))
    except (KeyError, TypeError) as exc:
        raise AnsibleFilterError("fleet_gateway_models: a pool is malformed (%s: %s)" % (type(exc).__name__, exc))


def fleet_gateway_server(deployment, host):
    """The name of a deployment's server in the gateway's pools."""
    try:
        return server_name(str(host), str(deployment))
    except GatewayError as exc:
        raise AnsibleFilterError("fleet_gateway_server: %s" % exc)


class FilterModule(object):
    """Fleet gateway filters."""

    def filters(self):
        return {
            "fleet_gateway_pools": fleet_gateway_pools,
            "fleet_gateway_models": fleet_gateway_models,
            "fleet_gateway_server": fleet_gateway_server,
        }
