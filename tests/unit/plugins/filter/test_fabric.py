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


def test_multinode_members_are_the_listed_hosts_in_run_order():
    big = {"name": "big", "model": "Qwen/Qwen3-8B", "members": ["b", "a"]}
    hostvars = {
        "a": {"ascendfleet_deployments": [{"name": "one", "model": "Qwen/Qwen3-8B"}, big]},
        # c names the deployment too; d is a member only in c's list; e has no deployments at all.
        "b": {"ascendfleet_deployments": [big]},
        "c": {"ascendfleet_deployments": [{"name": "gone", "members": ["x", "c"], "state": "absent"},
                                          {"name": "pair", "members": ["c", "d"]}]},
        "d": {"ascendfleet_deployments": []},
        "e": {},
        "f": {"ascendfleet_deployments": [{"name": "one", "model": "Qwen/Qwen3-8B"}]},
    }
    assert FILTERS["multinode_members"](list(hostvars), hostvars) == ["a", "b", "c", "d"]
    # Only the hosts of the run (the member x of an absent deployment, and hosts left out, never).
    assert FILTERS["multinode_members"](["f", "b", "e"], hostvars) == ["b"]


def test_multinode_members_count_every_variable_a_host_defines():
    hostvars = {"a": {"vllm_compose_deployments": [{"name": "p", "members": ["a", "d"]}],
                      "ascendfleet_deployments": [{"name": "q", "members": ["b", "c"]}]},
                "b": {}, "c": {}, "d": {}}
    names = ["ascendfleet_deployments", "vllm_compose_deployments"]
    assert FILTERS["multinode_members"](["a", "b", "c", "d"], hostvars, names) == ["a", "b", "c", "d"]
    assert FILTERS["multinode_members"](["a", "b", "c", "d"], hostvars) == ["b", "c"]
    assert FILTERS["multinode_members"](["a", "b", "c", "d"], hostvars, "vllm_compose_deployments") == ["a", "d"]


def test_multinode_members_leave_malformed_inputs_to_the_input_checks():
    hostvars = {"a": {"ascendfleet_deployments": "not a list"},
                "b": {"ascendfleet_deployments": ["x", {"name": "q", "members": "b"}, {"name": "r", "members": [1, "b"]}]}}
    assert FILTERS["multinode_members"](["a", "b"], hostvars) == ["b"]
    with pytest.raises(AnsibleFilterError, match="expected a list of inventory names"):
        FILTERS["multinode_members"]("a", hostvars)


def test_multinode_deployments_of_a_host():
    pair = {"name": "pair", "members": ["c", "d"], "devices": [0, 1]}
    deps = [{"name": "one", "model": "Qwen/Qwen3-8B"}, {"name": "gone", "members": ["c", "x"], "state": "absent"},
            pair, "x", {"name": "q", "members": "c"}, {"name": "big", "members": ["a", "b"]}]
    assert FILTERS["multinode_deployments"](deps, "c") == [pair]
    assert FILTERS["multinode_deployments"](deps, "d") == [pair]
    assert FILTERS["multinode_deployments"](deps, "x") == []
    # The same rule as multinode_members: a host is a member of some deployment iff it has some.
    hostvars = {h: {"ascendfleet_deployments": deps} for h in ["a", "b", "c", "d", "e", "x"]}
    assert [h for h in hostvars if FILTERS["multinode_deployments"](deps, h)] == \
        FILTERS["multinode_members"](list(hostvars), hostvars)
    assert FILTERS["multinode_deployments"]("not a list", "c") == []
    with pytest.raises(AnsibleFilterError, match="multinode_deployments: host must be an inventory name"):
        FILTERS["multinode_deployments"](deps, None)


def test_multinode_refusals_name_host_deployment_members_and_fix():
    big = {"name": "big", "members": ["a", "b", "x"]}
    hostvars = {"a": {"ascendfleet_deployments": [{"name": "one"}, big]},
                "b": {"ascendfleet_deployments": [big]},
                "c": {"ascendfleet_deployments": [{"name": "pair", "members": ["c", "d"]}]},
                "d": {"vllm_compose_deployments": [], "ascendfleet_deployments": [{"name": "pair", "members": ["c", "d"]}]}}
    servers = ["a", "b", "c", "d"]
    # Run a only: b is left out by --limit, x is in no inventory group.
    assert FILTERS["multinode_refusals"](["a"], hostvars, servers) == [
        "a: deployment big: members: b left out of this run by --limit; x not in the inventory group ascend_servers; "
        "a multi-node deployment changes on all its members at once, so nothing was changed. Fix: run with --limit a,b "
        "(every member of big in the run), or without --limit; add x to ascend_servers, or correct the members of big "
        "in ascendfleet_deployments"]
    # The whole fleet: x still refused, on each member of big that runs; c and d complete pair (d's
    # vllm_compose_deployments, the first variable it defines, holds none).
    assert [m.split(";")[0] for m in FILTERS["multinode_refusals"](servers, hostvars, servers)] == [
        "a: deployment big: members: x not in the inventory group ascend_servers",
        "b: deployment big: members: x not in the inventory group ascend_servers"]
    assert FILTERS["multinode_refusals"](["c"], hostvars, servers) == [
        "c: deployment pair: members: d left out of this run by --limit; a multi-node deployment changes on all its "
        "members at once, so nothing was changed. Fix: run with --limit c,d (every member of pair in the run), or "
        "without --limit"]
    assert FILTERS["multinode_refusals"](["d"], hostvars, servers) == []
    assert FILTERS["multinode_refusals"](["d"], hostvars, servers, ["ascendfleet_deployments"])[0].startswith(
        "d: deployment pair: members: c left out")
    with pytest.raises(AnsibleFilterError, match="expected a list of inventory names"):
        FILTERS["multinode_refusals"]("a", hostvars, servers)
