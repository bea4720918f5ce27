# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The RoCE fabric of a multi-node deployment: hccn_tool's health and ping output, which NPU
pings which peer, and THE judgement of the fabric before anything changes.

PRIVATE to this collection; may change without notice. Standard library only (runs on hosts
in modules and on the controller in filters, Python >= 3.8).

Parsers are pure (text in, data out) and raise :class:`FabricError` on text they cannot read.
:func:`ping_plan` says which NPU of a member pings which address of which peer (the same NPU
index on every other member: on Atlas A2 servers NPU i of every node sits on the same RoCE
plane); :func:`fabric_findings` turns what every member measured into failures that each name
the host, the NPU, the peer and the fix.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import HCCN_TOOL

# net_health values that do not stop a deployment: "Success" (the detect address answers) and
# "Init" (no detect address configured, what a fresh port shows: mind-cluster's log-collection
# guide). Anything else ("Socket failed", "Receive timeout", "Unreachable", ...) fails.
NET_HEALTH_OK = ("Success", "Init")


class FabricError(ValueError):
    """hccn_tool output that cannot be read."""


_HEALTH_RE = re.compile(r"^\s*net health status\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_PING_HEAD_RE = re.compile(r"^\s*device\s+(\d+)\s+PING6?\s+(\S+)\s*$", re.MULTILINE)
_PING_OK_RE = re.compile(r"^\s*recv seq=(\d+)\s*,\s*time[=-]", re.MULTILINE)
_PING_LOST_RE = re.compile(r"^\s*recv time out seq[=:]\s*(\w+)", re.MULTILINE)
_PING_SUM_RE = re.compile(
    r"^\s*(\d+) packets transmitted,\s*(\d+) received,\s*([\d.]+)% packet loss", re.MULTILINE)


def parse_net_health(text):
    # type: (str) -> str
    """``hccn_tool -i N -net_health -g``: ``net health status: Init`` -> ``Init``."""
    match = _HEALTH_RE.search(text or "")
    if not match:
        raise FabricError("hccn_tool -net_health -g printed no 'net health status:' line: %r"
                          % (text or "").strip()[:200])
    return match.group(1)


def parse_ping(text):
    # type: (str) -> Dict[str, object]
    """``hccn_tool -i N -ping -g address IP``: what was sent and what came back.

    ``device``/``address`` come from the ``device N PING IP`` line (absent from some captures);
    ``lost`` lists the ``recv time out seq=`` lines. The summary line is required.
    """
    summary = _PING_SUM_RE.search(text or "")
    if not summary:
        raise FabricError("hccn_tool -ping printed no 'packets transmitted' line: %r"
                          % (text or "").strip()[:200])
    head = _PING_HEAD_RE.search(text)
    return {
        "device": int(head.group(1)) if head else None,
        "address": head.group(2) if head else None,
        "transmitted": int(summary.group(1)),
        "received": int(summary.group(2)),
        "loss": float(summary.group(3)),
        "answered": [int(s) for s in _PING_OK_RE.findall(text)],
        "lost": _PING_LOST_RE.findall(text),
    }


def ping_ok(result):
    # type: (Dict[str, object]) -> bool
    """A ping passes when everything sent came back (the tool itself fails on any time-out)."""
    return bool(result.get("transmitted")) and result.get("received") == result.get("transmitted")


def ping_plan(members):
    # type: (List[Dict[str, object]]) -> Dict[str, List[Dict[str, object]]]
    """Which pings each member runs: NPU i of a member pings NPU i of every other member.

    ``members``: ``[{"host": name, "npus": [{"device_id": i, "ipaddr": ip or None}, ...]}, ...]``
    in deployment order. Members pair their NPUs by position (the k-th card of one member with
    the k-th of the other), so members with different device ids still pair. An NPU without an
    address is skipped here: :func:`fabric_findings` reports it.
    Returns ``{host: [{"device_id", "address", "peer", "peer_device_id"}, ...]}``.
    """
    plan = {}  # type: Dict[str, List[Dict[str, object]]]
    for member in members:
        pings = plan.setdefault(str(member["host"]), [])
        for index, npu in enumerate(member.get("npus") or []):
            if not npu.get("ipaddr"):
                continue
            for peer in members:
                if peer["host"] == member["host"]:
                    continue
                peer_npus = peer.get("npus") or []
                if index >= len(peer_npus) or not peer_npus[index].get("ipaddr"):
                    continue
                pings.append({"device_id": npu["device_id"], "address": peer_npus[index]["ipaddr"],
                              "peer": str(peer["host"]), "peer_device_id": peer_npus[index]["device_id"]})
    return plan


def _finding(host, check, message, npu=None, peer=None):
    return {"host": host, "check": check, "npu": npu, "peer": peer, "message": message}


def fabric_findings(deployment, members):
    # type: (str, List[Dict[str, object]]) -> List[Dict[str, object]]
    """Every reason the fabric of ``deployment`` cannot carry it; empty when it can.

    ``members``: what each member measured, in deployment order:
    ``{"host", "hccn": [{"device_id", "link", "ipaddr", "netmask", "net_health", "error"}],
    "pings": [{"device_id", "address", "peer", "peer_device_id", "transmitted", "received",
    "error"}], "rpc": {"address", "port", "state", "error"} or None}``.
    Each finding names the host, the NPU (``/dev/davinciN``), the peer and the fix.
    """
    found = []  # type: List[Dict[str, object]]
    for member in members:
        host = str(member["host"])
        for npu in member.get("hccn") or []:
            dev = npu.get("device_id")
            where = "%s: deployment %s: NPU %s (/dev/davinci%s)" % (host, deployment, dev, dev)
            if npu.get("error"):
                found.append(_finding(host, "hccn", "%s: hccn_tool failed: %s; fix: check the driver "
                                      "(`%s -i %s -link -g` by hand)" % (where, npu["error"], HCCN_TOOL, dev), dev))
                continue
            if npu.get("link") != "UP":
                found.append(_finding(host, "link", "%s: RoCE link is %s; fix: check the cable and the switch "
                                      "port of this NPU (`hccn_tool -i %s -link -g` must print `link status: UP`)"
                                      % (where, npu.get("link"), dev), dev))
            if not npu.get("ipaddr"):
                found.append(_finding(host, "ip", "%s: no RoCE address; fix: set one "
                                      "(`hccn_tool -i %s -ip -s address <ip> netmask <mask>`, kept in "
                                      "/etc/hccn.conf)" % (where, dev), dev))
            health = npu.get("net_health")
            if health is not None and health not in NET_HEALTH_OK:
                found.append(_finding(host, "net_health", "%s: net health is %r; fix: check the detect "
                                      "address and the gateway of this NPU (`hccn_tool -i %s -net_health -g`, "
                                      "`-netdetect -g`, `-gateway -g`)" % (where, health, dev), dev))
        for ping in member.get("pings") or []:
            if ping.get("error") is None and ping_ok(ping):
                continue
            dev = ping.get("device_id")
            what = ping.get("error") or "%s of %s echoes answered" % (ping.get("received"), ping.get("transmitted"))
            found.append(_finding(
                host, "ping",
                "%s: deployment %s: NPU %s (/dev/davinci%s) cannot reach NPU %s of %s at %s (%s); fix: put both "
                "ports on one RoCE plane/VLAN and check routes, masks and the switch (`hccn_tool -i %s -ping -g "
                "address %s` must answer every echo), or leave the NPU out of the deployment"
                % (host, deployment, dev, dev, ping.get("peer_device_id"), ping.get("peer"), ping.get("address"),
                   what, dev, ping.get("address")), dev, ping.get("peer")))
        rpc = member.get("rpc")
        if rpc and rpc.get("state") not in ("open", "refused"):
            found.append(_finding(
                host, "rpc",
                "%s: deployment %s: the head's data-parallel RPC port %s:%s is not reachable from this member (%s); "
                "fix: open TCP port %s from this host to the head (firewall, security group), or route the head's "
                "address over the NIC the members use" % (host, deployment, rpc.get("address"), rpc.get("port"),
                                                          rpc.get("error") or rpc.get("state"), rpc.get("port")),
                peer=rpc.get("peer")))
    return found


def member_mismatches(deployment, members, keys):
    # type: (str, List[Dict[str, object]], List[str]) -> List[Dict[str, object]]
    """Members whose resolved settings differ from the head's (the first member).

    ``members``: ``[{"host", "settings": {key: value}}]``; ``keys``: which settings must agree
    (image, model revision, parallel sizes). One finding per member and key, naming both values.
    """
    if not members:
        return []
    head = members[0]
    found = []
    for member in members[1:]:
        for key in keys:
            mine, theirs = member["settings"].get(key), head["settings"].get(key)
            if mine != theirs:
                found.append(_finding(
                    str(member["host"]), "consistency",
                    "%s: deployment %s: %s is %r here but %r on the head %s; fix: every member of a multi-node "
                    "deployment runs the same %s (remove the per-host override)"
                    % (member["host"], deployment, key, mine, theirs, head["host"], key), peer=str(head["host"])))
    return found


_ROUTE_DEV_RE = re.compile(r"\bdev\s+(\S+)")
_ROUTE_SRC_RE = re.compile(r"\bsrc\s+(\S+)")


def parse_route(text):
    # type: (str) -> Dict[str, Optional[str]]
    """``ip -o route get ADDRESS``: the NIC (``dev``) and this host's address on it (``src``).

    ``10.77.0.3 dev eth0 src 10.77.0.2 uid 0 \\    cache`` -> ``{"nic": "eth0", "address": "10.77.0.2"}``.
    A route to one of the host's own addresses goes over ``lo``; the caller asks for a peer's.
    """
    line = (text or "").strip()
    dev, src = _ROUTE_DEV_RE.search(line), _ROUTE_SRC_RE.search(line)
    if not dev:
        raise FabricError("ip route get printed no 'dev' (no route?): %r" % line[:200])
    return {"nic": dev.group(1), "address": src.group(1) if src else None}


def tcp_state(error):
    # type: (Optional[BaseException]) -> str
    """What a TCP connect attempt says about a path: ``open`` (connected), ``refused`` (the host
    answered, nothing listens yet: the path is fine), ``timeout`` (filtered), ``unreachable``."""
    if error is None:
        return "open"
    if isinstance(error, ConnectionRefusedError):
        return "refused"
    if isinstance(error, TimeoutError) or "timed out" in str(error):
        return "timeout"
    return "unreachable"


def multinode_deployments(host: str, deployments: object) -> List[dict]:
    """The present multi-node deployments of ``deployments`` (a host's list) that name ``host`` as a
    member, in their order: mappings with a list of ``members`` and a ``state`` other than
    ``absent`` (the same rule as :func:`multinode_members`). Items of any other shape are left to
    the input checks."""
    if not isinstance(deployments, list):
        return []
    return [dep for dep in deployments
            if isinstance(dep, dict) and dep.get("state", "present") != "absent"
            and isinstance(dep.get("members"), list) and host in dep["members"]]


def multinode_members(hosts: List[str], deployment_lists: List[object]) -> List[str]:
    """The hosts of ``hosts`` (in that order) that some present multi-node deployment lists as a member.

    ``deployment_lists`` holds the deployments of each host of the run (what each host's inventory
    says; a host's list may name deployments of other hosts too): every item that is a mapping with a
    list of ``members`` and a ``state`` other than ``absent`` counts, whichever host lists it. The
    hosts the fabric pre-flight and the multi-node play run on: a fleet without multi-node
    deployments gets none. Items of any other shape are left to the input checks.
    """
    listed = set()
    for deployments in deployment_lists:
        if not isinstance(deployments, list):
            continue
        for dep in deployments:
            if not isinstance(dep, dict) or dep.get("state", "present") == "absent":
                continue
            members = dep.get("members")
            if isinstance(members, list):
                listed.update(m for m in members if isinstance(m, str))
    return [host for host in hosts if host in listed]


def multinode_refusals(run_hosts: List[str], deployments_of: dict, servers: List[str]) -> List[str]:
    """Every refusal of a multi-node deployment some member of which is not in the run.

    ``run_hosts`` are the hosts of the run (after ``--limit``), ``deployments_of`` maps each of them
    to its deployment list, ``servers`` is the inventory group ``ascend_servers``. For each host of
    the run and each present multi-node deployment of its list naming it as a member: a member left
    out of the run by ``--limit`` or not in ``ascend_servers`` at all is refused, naming host,
    deployment, the members and the fix (one message per host and deployment, in run order).
    """
    in_run = set(run_hosts)
    out = []
    for host in run_hosts:
        for dep in multinode_deployments(host, deployments_of.get(host)):
            missing = [m for m in dep["members"] if isinstance(m, str) and m not in in_run]
            if not missing:
                continue
            name = dep.get("name")
            limited = [m for m in missing if m in servers]
            unknown = [m for m in missing if m not in servers]
            found = "; ".join(([", ".join(limited) + " left out of this run by --limit"] if limited else [])
                              + ([", ".join(unknown) + " not in the inventory group ascend_servers"] if unknown else []))
            keep = set(run_hosts) | set(limited)
            fixes = (["run with --limit %s (every member of %s in the run), or without --limit"
                      % (",".join(s for s in servers if s in keep), name)] if limited else []) \
                + (["add %s to ascend_servers, or correct the members of %s in ascendfleet_deployments"
                    % (", ".join(unknown), name)] if unknown else [])
            out.append("%s: deployment %s: members: %s; a multi-node deployment changes on all its members at once, "
                       "so nothing was changed. Fix: %s" % (host, name, found, "; ".join(fixes)))
    return out
