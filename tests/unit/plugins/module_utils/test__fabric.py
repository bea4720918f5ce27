"""The multi-node fabric logic over real hccn_tool output (fixtures/fabric/SOURCES.md).

Expected values are read off the fixture files by hand.
"""
import pathlib
import socket

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._fabric import (
    FabricError,
    fabric_findings,
    member_mismatches,
    parse_net_health,
    parse_ping,
    parse_route,
    ping_ok,
    ping_plan,
    tcp_state,
)

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "fabric"


def fixture(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_net_health_of_the_real_samples():
    assert parse_net_health(fixture("hccn_tool-net_health-g-init-doc.txt")) == "Init"
    assert parse_net_health(fixture("hccn_tool-910A-net_health-g-socket-failed.txt")) == "Socket failed"
    with pytest.raises(FabricError, match="no 'net health status:' line"):
        parse_net_health("dcmi module initialize failed. ret is -8005\n")


def test_ping_that_answered_every_echo():
    result = parse_ping(fixture("hccn_tool-ping-g-ok-atb-doc.txt"))
    assert result == {"device": 0, "address": "10.10.100.10", "transmitted": 3, "received": 3, "loss": 0.0,
                      "answered": [0, 1, 2], "lost": []}
    assert ping_ok(result)


def test_ping_with_a_lost_echo_fails_even_with_two_answers():
    result = parse_ping(fixture("hccn_tool-ping-g-loss-atb-doc.txt"))
    assert result["device"] is None and result["address"] is None  # the capture has no head line
    assert (result["transmitted"], result["received"], result["loss"]) == (3, 2, 33.33)
    assert result["answered"] == [1, 2] and result["lost"] == ["O"]  # the author's typo for 0
    assert not ping_ok(result)


def test_ping_without_a_summary_is_an_error():
    with pytest.raises(FabricError, match="no 'packets transmitted' line"):
        parse_ping("device 0 PING 10.10.100.10\n")


def npus(first, count=2, missing=()):
    return [{"device_id": d, "ipaddr": None if d in missing else "10.0.0.%d" % (first + d)} for d in range(count)]


def test_ping_plan_pairs_the_same_npu_position_on_every_other_member():
    members = [{"host": "a", "npus": npus(10)}, {"host": "b", "npus": npus(20)},
               {"host": "c", "npus": [{"device_id": 4, "ipaddr": "10.0.0.34"}, {"device_id": 5, "ipaddr": None}]}]
    plan = ping_plan(members)
    assert plan["a"] == [
        {"device_id": 0, "address": "10.0.0.20", "peer": "b", "peer_device_id": 0},
        {"device_id": 0, "address": "10.0.0.34", "peer": "c", "peer_device_id": 4},
        {"device_id": 1, "address": "10.0.0.21", "peer": "b", "peer_device_id": 1},
    ]
    assert plan["c"] == [{"device_id": 4, "address": "10.0.0.10", "peer": "a", "peer_device_id": 0},
                         {"device_id": 4, "address": "10.0.0.20", "peer": "b", "peer_device_id": 0}]


def test_ping_plan_skips_npus_without_an_address_on_either_side():
    plan = ping_plan([{"host": "a", "npus": npus(10, missing=(1,))}, {"host": "b", "npus": npus(20, missing=(0,))}])
    assert plan == {"a": [], "b": []}


GOOD = {"device_id": 0, "link": "UP", "ipaddr": "10.0.0.10", "netmask": "255.255.255.0", "net_health": "Init",
        "error": None}


def test_a_healthy_fabric_has_no_findings():
    members = [{"host": "a", "hccn": [GOOD], "rpc": None,
                "pings": [{"device_id": 0, "address": "10.0.0.20", "peer": "b", "peer_device_id": 0,
                           "transmitted": 3, "received": 3, "error": None}]},
               {"host": "b", "hccn": [dict(GOOD, ipaddr="10.0.0.20", net_health="Success")], "pings": [],
                "rpc": {"address": "192.0.2.10", "port": 13389, "state": "refused", "peer": "a"}}]
    assert fabric_findings("big", members) == []


def test_each_fault_names_host_npu_peer_and_fix():
    members = [{"host": "b", "hccn": [
        dict(GOOD, device_id=3, link="DOWN", net_health="Socket failed"),
        dict(GOOD, device_id=5, ipaddr=None, netmask=None),
        dict(GOOD, device_id=6, error="dcmi module initialize failed. ret is -8005"),
    ], "pings": [
        {"device_id": 0, "address": "10.0.0.10", "peer": "a", "peer_device_id": 0, "transmitted": 3,
         "received": 2, "error": None},
    ], "rpc": {"address": "192.0.2.10", "port": 13389, "state": "timeout", "error": "timed out", "peer": "a"}}]
    found = fabric_findings("qwen397", members)
    assert [(f["check"], f["npu"], f["peer"]) for f in found] == [
        ("link", 3, None), ("net_health", 3, None), ("ip", 5, None), ("hccn", 6, None), ("ping", 0, "a"),
        ("rpc", None, "a")]
    messages = [f["message"] for f in found]
    assert messages[0].startswith("b: deployment qwen397: NPU 3 (/dev/davinci3): RoCE link is DOWN; fix: check the cable")
    assert "`hccn_tool -i 3 -link -g` must print `link status: UP`" in messages[0]
    assert "net health is 'Socket failed'" in messages[1]
    assert "no RoCE address; fix: set one (`hccn_tool -i 5 -ip -s address <ip> netmask <mask>`" in messages[2]
    assert "hccn_tool failed: dcmi module initialize failed" in messages[3]
    assert ("b: deployment qwen397: NPU 0 (/dev/davinci0) cannot reach NPU 0 of a at 10.0.0.10 "
            "(2 of 3 echoes answered); fix:") in messages[4]
    assert "192.0.2.10:13389 is not reachable from this member (timed out); fix: open TCP port 13389" in messages[5]


def test_member_mismatches_name_both_values_and_the_head():
    members = [{"host": "a", "settings": {"image": "x:v1", "tensor_parallel_size": 8}},
               {"host": "b", "settings": {"image": "x:v1-a3", "tensor_parallel_size": 8}},
               {"host": "c", "settings": {"image": "x:v1", "tensor_parallel_size": 8}}]
    found = member_mismatches("big", members, ["image", "tensor_parallel_size"])
    assert len(found) == 1
    assert found[0]["host"] == "b" and found[0]["peer"] == "a"
    assert found[0]["message"].startswith("b: deployment big: image is 'x:v1-a3' here but 'x:v1' on the head a;")


def test_tcp_state_tells_a_closed_port_from_a_filtered_path():
    assert tcp_state(None) == "open"
    assert tcp_state(ConnectionRefusedError(111, "Connection refused")) == "refused"
    assert tcp_state(socket.timeout("timed out")) == "timeout"
    assert tcp_state(OSError(113, "No route to host")) == "unreachable"


def test_route_names_the_nic_and_this_hosts_address_on_it():
    # Read off the captures by hand (fixtures/fabric/SOURCES.md).
    assert parse_route(fixture("ip-o-route-get-peer-sim.txt")) == {"nic": "eth0", "address": "172.23.0.3"}
    assert parse_route(fixture("ip-o-route-get-via-gateway.txt")) == {"nic": "eth0", "address": "192.0.2.2"}
    # A host's own address routes over lo: the caller asks for a peer's route instead.
    assert parse_route(fixture("ip-o-route-get-local.txt")) == {"nic": "lo", "address": "127.0.0.1"}


def test_route_without_a_device_is_an_error():
    with pytest.raises(FabricError, match="no 'dev'"):
        parse_route("RTNETLINK answers: Network is unreachable\n")
