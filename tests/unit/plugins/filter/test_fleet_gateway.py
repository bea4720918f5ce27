# -*- coding: utf-8 -*-
"""The gateway's filters (plugins/filter/fleet_gateway.py): what YAML gets from _fleet_gateway."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ascendfleet.llm.plugins.filter.fleet_gateway import FilterModule

F = FilterModule().filters()

RECORDS = [{"host": "sim-gw-a", "deployments": [{"name": "qwen", "model": "Qwen/Qwen3.5-27B", "served_model_name": "Qwen"}]},
           {"host": "sim-gw-b", "deployments": [{"name": "qwen", "model": "Qwen/Qwen3.5-27B", "served_model_name": "Qwen"},
                                                {"name": "chat", "model": "Qwen/Qwen3-8B", "served_model_name": "chat",
                                                 "port": 8001}]}]


def test_pools_models_and_server_names_agree():
    pools = F["fleet_gateway_pools"](RECORDS, "hello")
    assert [(p["backend"], [s["name"] for s in p["servers"]]) for p in pools] == [
        ("model:Qwen", ["sim-gw-a:qwen", "sim-gw-b:qwen"]), ("model:chat", ["sim-gw-b:chat"])]
    assert pools[0]["check_body"] == '\'{"model":"Qwen","prompt":"hello","max_tokens":1}\''
    assert [m["id"] for m in F["fleet_gateway_models"](pools)["data"]] == ["Qwen", "chat"]
    assert F["fleet_gateway_server"]("qwen", "sim-gw-b") == pools[0]["servers"][1]["name"]


@pytest.mark.parametrize("name, args, message", [
    ("fleet_gateway_pools", ({"host": "h"},), "expects a list of host records, got dict"),
    ("fleet_gateway_pools", ([{"host": "h", "deployments": [{"name": "a", "model": "A", "port": 0}]}],),
     "fleet_gateway_pools: h: deployment a: port 0 is not a port number"),
    ("fleet_gateway_models", ("x",), "expects the output of ascendfleet.llm.fleet_gateway_pools"),
    ("fleet_gateway_models", ([{}],), "a pool is malformed"),
])
def test_errors_are_filter_errors_naming_the_filter(name, args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        F[name](*args)
