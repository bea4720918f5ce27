#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see
# https://www.gnu.org/licenses/gpl-3.0.txt), the licence Ansible modules customarily carry.

from __future__ import annotations

DOCUMENTATION = r"""
module: npu_fabric_info
short_description: Measure the RoCE fabric of an Ascend host for a multi-node deployment
version_added: 0.2.0
description:
  - Runs the fabric checks of vllm-ascend's multi-node installation guide on one member of a
    multi-node deployment, before anything changes - for each given NPU
    C(hccn_tool -i N -link -g), C(-ip -g) and C(-net_health -g); each given ping
    C(hccn_tool -i N -ping -g address <peer NPU address>); and a TCP connect to each given
    address and port (the head's data-parallel RPC port).
  - Read-only. What it measures is returned as data (a failing tool, a lost echo, a filtered
    port), never as a module failure, so that the caller judges the whole deployment
    (the filter C(ascendfleet.llm.fabric_findings) names host, NPU, peer and fix).
    Only invalid options fail the module.
  - A TCP connect that is refused counts as reachable - nothing listens on the head's RPC port
    before the deployment starts, but the host answered; a time-out or an unreachable network
    does not.
author:
  - ascendfleet.llm contributors (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Runs the same read-only probes in check mode.
  diff_mode:
    support: none
    description: Read-only module, nothing to diff.
  idempotent:
    support: full
    description: Never changes anything on the host.
options:
  device_ids:
    description: The N of C(/dev/davinciN) of each NPU to check (link, address, net health).
    type: list
    elements: int
    default: []
  pings:
    description: The pings to run, usually the plan of the filter C(ascendfleet.llm.fabric_ping_plan).
    type: list
    elements: dict
    default: []
    suboptions:
      device_id:
        description: The NPU that sends (C(hccn_tool -i <device_id>)).
        type: int
        required: true
      address:
        description: The peer NPU's RoCE address.
        type: str
        required: true
      peer:
        description: The inventory name of the peer (returned as given, for messages).
        type: str
        default: ""
      peer_device_id:
        description: The peer's NPU (returned as given, for messages).
        type: int
  tcp:
    description: Addresses and ports to connect to (the head's data-parallel RPC port).
    type: list
    elements: dict
    default: []
    suboptions:
      address:
        description: Address to connect to.
        type: str
        required: true
      port:
        description: TCP port.
        type: int
        required: true
      peer:
        description: The inventory name behind O(tcp[].address) (returned as given, for messages).
        type: str
        default: ""
  routes:
    description:
      - Peers to find the route to (C(ip -o route get <address>) after resolving a name) - which
        NIC this host reaches them over and its own address on that NIC - the C(HCCL_IF_IP) and
        C(*_SOCKET_IFNAME) of a multi-node member.
    type: list
    elements: dict
    default: []
    suboptions:
      address:
        description: The peer's address or resolvable name (the head's, for a member).
        type: str
        required: true
      peer:
        description: The inventory name behind O(routes[].address) (returned as given, for messages).
        type: str
        default: ""
  hccn_tool:
    description: Path of C(hccn_tool).
    type: path
    default: /usr/local/Ascend/driver/tools/hccn_tool
  timeout:
    description:
      - Seconds each C(hccn_tool) call and each TCP connect may take; a call that takes longer
        is reported as an error.
    type: float
    default: 20
"""

EXAMPLES = r"""
- name: Measure this member's fabric
  ascendfleet.llm.npu_fabric_info:
    device_ids: [0, 1, 2, 3, 4, 5, 6, 7]
    pings:
      - {device_id: 0, address: 10.77.0.21, peer: npu-02, peer_device_id: 0}
    tcp:
      - {address: 192.0.2.11, port: 13389, peer: npu-01}
  register: fabric
"""

RETURN = r"""
hccn:
  description: One entry per O(device_ids) - C(link) (C(UP), C(DOWN)), C(ipaddr), C(netmask),
    C(net_health) (for example C(Init), C(Success), C(Socket failed)) and C(error) with what
    C(hccn_tool) printed when it failed.
  returned: always
  type: list
  elements: dict
  sample: [{device_id: 0, link: UP, ipaddr: 10.77.0.11, netmask: 255.255.255.0, net_health: Init, error: null}]
pings:
  description: One entry per O(pings), with C(transmitted), C(received), C(loss) (percent) and
    C(error) (the tool failed without a summary, or timed out).
  returned: always
  type: list
  elements: dict
  sample: [{device_id: 0, address: 10.77.0.21, peer: npu-02, peer_device_id: 0, transmitted: 3,
            received: 3, loss: 0.0, error: null}]
tcp:
  description: One entry per O(tcp), with C(state) (C(open), C(refused), C(timeout), C(unreachable))
    and C(error).
  returned: always
  type: list
  elements: dict
  sample: [{address: 192.0.2.11, port: 13389, peer: npu-01, state: refused, error: "[Errno 111] Connection refused"}]
routes:
  description: One entry per O(routes), with C(resolved) (the peer's IPv4 address), C(nic) (the
    interface of the route), C(source) (this host's address on it) and C(error).
  returned: always
  type: list
  elements: dict
  sample: [{address: npu-01, peer: npu-01, resolved: 192.0.2.11, nic: enp61s0f0, source: 192.0.2.12, error: null}]
"""

import os
import socket
import subprocess

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import HCCN_TOOL
from ansible_collections.ascendfleet.llm.plugins.module_utils._host_tools import C_LOCALE
from ansible_collections.ascendfleet.llm.plugins.module_utils._fabric import (
    FabricError,
    parse_net_health,
    parse_ping,
    parse_route,
    tcp_state,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_host import (
    HostFactsError,
    parse_hccn_ip,
    parse_hccn_link,
)

# The collection's one rule for host tools' locale (output parsed as English text).
TOOL_ENV = dict(os.environ, **C_LOCALE)


def first_lines(text):
    """The tool's output on one line (for an error entry)."""
    return " / ".join(line.strip() for line in (text or "").splitlines() if line.strip())[:300]


def hccn(tool, timeout, *args):
    """(rc, stdout) of one hccn_tool call, bounded in time."""
    try:
        proc = subprocess.run([tool] + [str(a) for a in args], capture_output=True, text=True,
                              timeout=timeout, env=TOOL_ENV, check=False)
    except subprocess.TimeoutExpired:
        raise FabricError("%s %s took more than %g s" % (tool, " ".join(map(str, args)), timeout))
    except OSError as exc:
        raise FabricError("%s: %s" % (tool, exc))
    return proc.returncode, proc.stdout + proc.stderr


def hccn_get(tool, timeout, device, what):
    """stdout of ``hccn_tool -i <device> -<what> -g``; FabricError naming the tool's own words when it fails."""
    rc, out = hccn(tool, timeout, "-i", device, "-" + what, "-g")
    if rc != 0:
        raise FabricError(first_lines(out) or "exit %d" % rc)
    return out


def npu_facts(tool, timeout, device):
    entry = {"device_id": device, "link": None, "ipaddr": None, "netmask": None,
             "net_health": None, "error": None}
    try:
        entry["link"] = parse_hccn_link(hccn_get(tool, timeout, device, "link"))
        entry.update(parse_hccn_ip(hccn_get(tool, timeout, device, "ip")))
        entry["net_health"] = parse_net_health(hccn_get(tool, timeout, device, "net_health"))
    except (FabricError, HostFactsError) as exc:
        entry["error"] = "hccn_tool -i %d: %s" % (device, exc)
    return entry


def ping(tool, timeout, spec):
    entry = dict(spec, transmitted=None, received=None, loss=None, error=None)
    try:
        # the tool exits non-zero whenever an echo is lost: the summary line says how many
        dummy, out = hccn(tool, timeout, "-i", spec["device_id"], "-ping", "-g", "address", spec["address"])
        result = parse_ping(out)
        entry.update(transmitted=result["transmitted"], received=result["received"], loss=result["loss"])
    except FabricError as exc:
        entry["error"] = str(exc)
    return entry


def connect(timeout, spec):
    entry = dict(spec, state=None, error=None)
    error = None
    try:
        with socket.create_connection((spec["address"], spec["port"]), timeout=timeout):
            pass
    except OSError as exc:
        error = exc
    entry["state"] = tcp_state(error)
    entry["error"] = None if error is None else str(error)
    return entry


def route(module, timeout, spec):
    """The NIC and own address this host reaches ``spec["address"]`` over (``ip -o route get``)."""
    entry = dict(spec, nic=None, source=None, resolved=None, error=None)
    try:
        entry["resolved"] = socket.gethostbyname(spec["address"])
        ip_tool = module.get_bin_path("ip")
        if not ip_tool:
            raise FabricError("the ip command (iproute2) is not installed")
        proc = subprocess.run([ip_tool, "-o", "route", "get", entry["resolved"]], capture_output=True, text=True,
                              timeout=timeout, env=TOOL_ENV, check=False)
        if proc.returncode != 0:
            raise FabricError(first_lines(proc.stdout + proc.stderr) or "exit %d" % proc.returncode)
        found = parse_route(proc.stdout)
        entry["nic"], entry["source"] = found["nic"], found["address"]
    except (OSError, FabricError, subprocess.TimeoutExpired) as exc:
        entry["error"] = str(exc)
    return entry


def main():
    module = AnsibleModule(
        argument_spec=dict(
            device_ids=dict(type="list", elements="int", default=[]),
            pings=dict(type="list", elements="dict", default=[], options=dict(
                device_id=dict(type="int", required=True),
                address=dict(type="str", required=True),
                peer=dict(type="str", default=""),
                peer_device_id=dict(type="int"),
            )),
            tcp=dict(type="list", elements="dict", default=[], options=dict(
                address=dict(type="str", required=True),
                port=dict(type="int", required=True),
                peer=dict(type="str", default=""),
            )),
            routes=dict(type="list", elements="dict", default=[], options=dict(
                address=dict(type="str", required=True),
                peer=dict(type="str", default=""),
            )),
            hccn_tool=dict(type="path", default=HCCN_TOOL),
            timeout=dict(type="float", default=20.0),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for device in p["device_ids"] + [s["device_id"] for s in p["pings"]]:
        if device < 0:
            module.fail_json(msg="device ids are the N of /dev/davinciN (0 or more), not %d" % device)
    for spec in p["tcp"]:
        if not 0 < spec["port"] < 65536:
            module.fail_json(msg="tcp[].port must be 1-65535, not %d" % spec["port"])
    if p["timeout"] <= 0:
        module.fail_json(msg="timeout must be more than 0 seconds, not %g" % p["timeout"])
    tool = p["hccn_tool"]
    present = os.path.isfile(tool) and os.access(tool, os.X_OK)
    missing = "%s is not an executable file (is the Ascend driver installed?)" % tool
    hccn_entries, ping_entries = [], []
    for device in p["device_ids"]:
        if present:
            hccn_entries.append(npu_facts(tool, p["timeout"], device))
        else:
            hccn_entries.append({"device_id": device, "link": None, "ipaddr": None, "netmask": None,
                                 "net_health": None, "error": missing})
    for spec in p["pings"]:
        if present:
            ping_entries.append(ping(tool, p["timeout"], spec))
        else:
            ping_entries.append(dict(spec, transmitted=None, received=None, loss=None, error=missing))
    module.exit_json(changed=False, hccn=hccn_entries, pings=ping_entries,
                     tcp=[connect(p["timeout"], spec) for spec in p["tcp"]],
                     routes=[route(module, p["timeout"], spec) for spec in p["routes"]])


if __name__ == "__main__":
    main()
