"""npu_fabric_info against a fake hccn_tool that prints the real samples (fixtures/fabric)."""

import pathlib
import socket

from ansible_collections.ascendfleet.llm.plugins.modules import npu_fabric_info

SAMPLES = pathlib.Path(__file__).resolve().parents[1] / "module_utils" / "fixtures"
HOST, FABRIC = SAMPLES / "npu_host", SAMPLES / "fabric"


def fake_tool(tmp_path, answers):
    """A hccn_tool that prints a sample file per argument line (and exits with its rc)."""
    lines = ["#!/bin/sh", 'case "$*" in']
    for args, (rc, sample) in answers.items():
        lines.append('  "%s") cat "%s"; exit %d;;' % (args, sample, rc))
    lines += ['  *) echo "unexpected: $*"; exit 9;;', "esac"]
    tool = tmp_path / "hccn_tool"
    tool.write_text("\n".join(lines) + "\n")
    tool.chmod(0o755)
    return str(tool)


def test_link_address_health_and_pings_per_npu(run_module, tmp_path):
    dcmi = tmp_path / "dcmi.txt"
    dcmi.write_text("dcmi module initialize failed. ret is -8005\n")
    tool = fake_tool(tmp_path, {
        "-i 0 -link -g": (0, HOST / "hccn_tool-link-g-up-doc.txt"),
        "-i 0 -ip -g": (0, HOST / "hccn_tool-910B1-ip-g.txt"),
        "-i 0 -net_health -g": (0, FABRIC / "hccn_tool-net_health-g-init-doc.txt"),
        "-i 3 -link -g": (0, HOST / "hccn_tool-link-g-down-gpustack-test.txt"),
        "-i 3 -ip -g": (0, HOST / "hccn_tool-910A-ip-g.txt"),
        "-i 3 -net_health -g": (0, FABRIC / "hccn_tool-910A-net_health-g-socket-failed.txt"),
        "-i 4 -link -g": (1, dcmi),
        "-i 0 -ping -g address 10.10.100.10": (0, FABRIC / "hccn_tool-ping-g-ok-atb-doc.txt"),
        "-i 3 -ping -g address 10.10.100.13": (1, FABRIC / "hccn_tool-ping-g-loss-atb-doc.txt"),
        "-i 4 -ping -g address 10.10.100.14": (1, dcmi),
    })
    failed, result = run_module(npu_fabric_info.main, {
        "hccn_tool": tool, "device_ids": [0, 3, 4],
        "pings": [{"device_id": 0, "address": "10.10.100.10", "peer": "b", "peer_device_id": 0},
                  {"device_id": 3, "address": "10.10.100.13", "peer": "b", "peer_device_id": 3},
                  {"device_id": 4, "address": "10.10.100.14", "peer": "b", "peer_device_id": 4}]})
    assert not failed and result["changed"] is False
    assert result["hccn"] == [
        {"device_id": 0, "link": "UP", "ipaddr": "29.1.112.213", "netmask": "255.255.0.0", "net_health": "Init",
         "error": None},
        {"device_id": 3, "link": "DOWN", "ipaddr": "192.161.200.10", "netmask": "255.255.255.0",
         "net_health": "Socket failed", "error": None},
        {"device_id": 4, "link": None, "ipaddr": None, "netmask": None, "net_health": None,
         "error": "hccn_tool -i 4: dcmi module initialize failed. ret is -8005"},
    ]
    assert [(p["transmitted"], p["received"], p["loss"], p["error"]) for p in result["pings"]] == [
        (3, 3, 0.0, None), (3, 2, 33.33, None),
        (None, None, None, "hccn_tool -ping printed no 'packets transmitted' line: "
                           "'dcmi module initialize failed. ret is -8005'")]
    assert result["pings"][1]["peer"] == "b" and result["pings"][1]["peer_device_id"] == 3
    assert result["tcp"] == []


def test_no_tool_is_data_not_a_failure(run_module, tmp_path):
    failed, result = run_module(npu_fabric_info.main, {
        "hccn_tool": str(tmp_path / "absent"), "device_ids": [1],
        "pings": [{"device_id": 1, "address": "10.0.0.1"}]})
    assert not failed
    message = "%s is not an executable file (is the Ascend driver installed?)" % (tmp_path / "absent")
    assert result["hccn"][0]["error"] == message and result["pings"][0]["error"] == message


def test_rpc_port_open_and_refused_on_loopback(run_module, tmp_path):
    with socket.socket() as listening, socket.socket() as closed:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connects are refused
        failed, result = run_module(npu_fabric_info.main, {"hccn_tool": str(tmp_path / "absent"), "tcp": [
            {"address": "127.0.0.1", "port": listening.getsockname()[1], "peer": "head"},
            {"address": "127.0.0.1", "port": closed.getsockname()[1]}], "timeout": 2})
    assert not failed
    assert [(t["state"], t["peer"]) for t in result["tcp"]] == [("open", "head"), ("refused", "")]
    assert result["tcp"][0]["error"] is None and "refused" in result["tcp"][1]["error"]


def test_bad_options_fail_with_the_fix(run_module):
    failed, result = run_module(npu_fabric_info.main, {"device_ids": [-1]})
    assert failed and "N of /dev/davinciN" in result["msg"]
    failed, result = run_module(npu_fabric_info.main, {"tcp": [{"address": "127.0.0.1", "port": 0}]})
    assert failed and "tcp[].port must be 1-65535" in result["msg"]
