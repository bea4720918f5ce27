"""The fabric filters as YAML calls them (module_utils/_fabric.py holds the logic)."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ascendfleet.llm.plugins.filter.fabric import FilterModule

FILTERS = FilterModule().filters()


def test_plan_and_findings_round_trip():
    members = [{"host": "a", "npus": [{"device_id": 0, "ipaddr": "10.77.0.11"}]},
               {"host": "b", "npus": [{"device_id": 0, "ipaddr": "10.77.0.21"}]}]
    plan = FILTERS["fabric_ping_plan"](members)
    assert plan == {"a": [{"device_id": 0, "address": "10.77.0.21", "peer": "b", "peer_device_id": 0}],
                    "b": [{"device_id": 0, "address": "10.77.0.11", "peer": "a", "peer_device_id": 0}]}
    measured = [{"host": "a", "hccn": [], "pings": [dict(plan["a"][0], transmitted=3, received=0, error=None)],
                 "rpc": None}]
    found = FILTERS["fabric_findings"](measured, "big")
    assert [(f["host"], f["check"], f["peer"]) for f in found] == [("a", "ping", "b")]


@pytest.mark.parametrize("name", ("fabric_ping_plan", "fabric_findings"))
def test_members_must_be_a_list_of_hosts(name):
    args = ([{"npus": []}],) if name == "fabric_ping_plan" else ([{"npus": []}], "big")
    with pytest.raises(AnsibleFilterError, match="expected a list of members, each a dict with 'host'"):
        FILTERS[name](*args)


def test_member_mismatches_compare_every_member_with_the_head():
    head = {"model": "Qwen/Qwen3-8B", "revision": "master", "image": "quay.io/ascend/vllm-ascend:v0.18.0rc1",
            "tensor_parallel_size": 2, "data_parallel_size": 2}
    members = [{"host": "a", "settings": head},
               {"host": "b", "settings": dict(head, image="quay.io/ascend/vllm-ascend:v0.17.0rc1")},
               {"host": "c", "settings": dict(head)}]
    found = FILTERS["fabric_member_mismatches"](members, "big")
    assert [(f["host"], f["check"], f["peer"]) for f in found] == [("b", "consistency", "a")]
    assert found[0]["message"] == (
        "b: deployment big: image is 'quay.io/ascend/vllm-ascend:v0.17.0rc1' here but "
        "'quay.io/ascend/vllm-ascend:v0.18.0rc1' on the head a; fix: every member of a multi-node deployment runs "
        "the same image (remove the per-host override)")
    assert FILTERS["fabric_member_mismatches"](members[:1] + members[2:], "big") == []
