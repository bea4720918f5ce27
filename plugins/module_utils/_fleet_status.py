# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Fleet status: judge what each host runs against what it should run, and render it.

PRIVATE to this collection; may change without notice.

Pure data in, data or text out (used by the ``fleet_status*`` filters on the control node,
and by the tests). Standard library only.

:func:`evaluate` takes one record per host::

    {"host": "sim-910b2-seed",
     "observed": {...},            # the result of ascendfleet.llm.vllm_status (or its failure)
     "plan": {...},                # vllm_compose_plan of the host's deployments (desired state)
     "error": None}                # optional: why the host could not be read

or the same as a ``[host, observed, plan]`` sequence. A host whose ``observed`` is not a
vllm_status result (unreachable, module failed) is ``failed`` with the failure message.

and returns the fleet: hosts with a verdict ``ok`` / ``attention`` / ``failed``, the reasons
behind it, the chips and every deployment with running vs desired. :func:`render_text`,
:func:`render_markdown` and :func:`render_html` turn that into a terminal table, Markdown,
and a self-contained HTML page (inline CSS, no scripts, no external assets).
"""

from __future__ import annotations

import html
from typing import Any, Dict, List, Mapping, Optional, Sequence

OK = "ok"
ATTENTION = "attention"
FAILED = "failed"
_RANK = {OK: 0, ATTENTION: 1, FAILED: 2}
KV_WARN_PCT = 95.0


def _worst(*verdicts):
    # type: (str) -> str
    return max(verdicts, key=lambda v: _RANK[v]) if verdicts else OK


def _duration(seconds):
    # type: (Optional[int]) -> str
    if seconds is None:
        return "-"
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return "%dd %dh" % (days, hours)
    if hours:
        return "%dh %dm" % (hours, minutes)
    return "%dm %ds" % (minutes, seconds % 60)


def _num(value, fmt="%g"):
    # type: (Any, str) -> str
    return "-" if value is None else fmt % value


def _deployment(desired, observed, host, headless=False):
    # type: (Optional[Mapping[str, Any]], Optional[Mapping[str, Any]], str, bool) -> Dict[str, Any]
    """One deployment's row: desired (from the plan) against observed (from vllm_status).

    ``headless``: a member of a multi-node deployment that is not its head opens no API port;
    only its container is judged (the head's row judges the endpoint and every rank)."""
    obs = observed or {}
    name = (desired or obs).get("name")
    containers = obs.get("containers") or []
    main = containers[0] if containers else {}
    probe = obs.get("probe") or {}
    metrics = probe.get("metrics") or {}
    last_good = obs.get("last_good") or {}
    cache = obs.get("cache") or {}
    reasons = []  # type: List[str]
    verdict = OK
    running_image = main.get("image")
    desired_image = (desired or {}).get("image")
    served = (desired or {}).get("served_model_name") or main.get("served_model_name")
    models = probe.get("models")
    if desired is None:
        verdict = ATTENTION
        reasons.append("runs but is not a present deployment in ascendfleet_deployments: an orphan holding port %s "
                       "and card(s) %s (remove it with {name: %s, state: absent} and playbooks/undeploy.yml, or add it)"
                       % (probe.get("port") or main.get("port") or "-",
                          ", ".join(str(c) for c in obs.get("cards") or []) or "-", name))
    if desired is not None and not containers:
        verdict = FAILED
        reasons.append("not running: no container of compose project %s (run playbooks/deploy-qwen.yml)" % name)
    elif containers:
        if main.get("state") != "running":
            verdict = FAILED
            reasons.append("container %s is %s (exit code %s%s, %d restarts); read `docker compose -p %s logs`"
                           % (main.get("name"), main.get("state"), main.get("exit_code"),
                              ", OOM-killed" if main.get("oom_killed") else "", main.get("restarts") or 0, name))
        elif headless:
            pass
        elif probe.get("health_status") != 200:
            verdict = FAILED
            reasons.append("/health on port %s: %s" % (probe.get("port"), probe.get("health_error") or probe.get("health_status")))
        elif models is not None and served and served not in models:
            verdict = FAILED
            reasons.append("/v1/models lists %s, not %s" % (", ".join(models) or "nothing", served))
        elif probe.get("models_error"):
            verdict = _worst(verdict, ATTENTION)
            reasons.append("/v1/models: %s" % probe["models_error"])
    if desired is not None and running_image and desired_image and running_image != desired_image:
        verdict = _worst(verdict, ATTENTION)
        if last_good.get("image") == running_image:
            reasons.append("runs %s (its last-known-good), desired %s: a rollout is pending or was rolled back "
                           "(see reports/vllm_compose.md; roll out with playbooks/deploy-qwen.yml)"
                           % (running_image, desired_image))
        else:
            reasons.append("runs %s, desired %s (roll out with playbooks/deploy-qwen.yml)" % (running_image, desired_image))
    # The revisions cache layout: the revision directory the container mounts (its label) against
    # the one the deployment's revision resolves to in the cache now.
    serving_key = main.get("revision_key")
    desired_key = (desired or {}).get("revision_key")
    if desired is not None and serving_key and desired_key and serving_key != desired_key:
        verdict = _worst(verdict, ATTENTION)
        reasons.append("serves revision %s%s, while %s resolves to %s in the cache: a rollout is pending or was rolled "
                       "back (see reports/vllm_compose.md; roll out with playbooks/deploy-qwen.yml)"
                       % (serving_key[:12], " (its last-known-good)" if last_good.get("revision_key") == serving_key else "",
                          (desired or {}).get("revision") or "master", desired_key[:12]))
    if desired is not None and not cache.get("prefetched", False):
        verdict = _worst(verdict, ATTENTION)
        reasons.append("model cache: %s (run playbooks/prefetch.yml)" % (cache.get("reason") or "not prefetched"))
    if desired is not None and containers and not last_good.get("exists"):
        verdict = _worst(verdict, ATTENTION)
        reasons.append("no last-known-good compose file: an automatic rollback has nothing to return to")
    kv = metrics.get("kv_cache_usage_pct")
    if kv is not None and kv >= KV_WARN_PCT:
        verdict = _worst(verdict, ATTENTION)
        reasons.append("KV cache %.0f%% full (requests will queue; add cards or replicas)" % kv)
    row = {
        "host": host,
        "name": name,
        "model": (desired or {}).get("model") or (main.get("model") or "").split("@")[0] or None,
        "revision": (desired or {}).get("revision"),
        "verdict": verdict,
        "reasons": reasons,
        "state": main.get("state") or "absent",
        "image_running": running_image,
        "image_desired": desired_image,
        "image_current": bool(running_image and desired_image and running_image == desired_image),
        "last_good_image": last_good.get("image"),
        "previous_image": (obs.get("previous") or {}).get("image"),
        "cards": obs.get("cards") or [],
        "port": probe.get("port") or (desired or {}).get("port"),
        "health": probe.get("health_status"),
        "models": models,
        "served_model_name": served,
        "cache": "prefetched" if cache.get("prefetched") else (cache.get("reason") or "-"),
        "uptime_seconds": main.get("uptime_seconds"),
        "restarts": main.get("restarts"),
        "requests_running": metrics.get("requests_running"),
        "requests_waiting": metrics.get("requests_waiting"),
        "kv_cache_usage_pct": kv,
    }
    if serving_key or desired_key:
        row["revision_key"], row["revision_key_desired"] = serving_key, desired_key
    return row


def _model_label(dep):
    # type: (Mapping[str, Any]) -> str
    """The model of a status row, with the revision (commit, 12 characters) its container serves
    in the revisions cache layout: ``Qwen/Qwen3-8B @ 3c1a4f0e9b7d``."""
    model = dep.get("model") or "-"
    return "%s @ %s" % (model, dep["revision_key"][:12]) if dep.get("revision_key") else model


def evaluate(records, generated_at="", gateways=None):
    # type: (Sequence[Mapping[str, Any]], str, Optional[Sequence[Mapping[str, Any]]]) -> Dict[str, Any]
    """The fleet status (see the module docstring) from one record per host, and with ``gateways``
    (:func:`gateway_status` records) each gateway's pools under ``gateways``."""
    hosts = []
    for record in records:
        if isinstance(record, (list, tuple)):
            record = dict(zip(("host", "observed", "plan"), record))
        name = record.get("host")
        observed = record.get("observed") or {}
        plan = record.get("plan") or {}
        error = record.get("error")
        if not error and "chips" not in observed:
            # A failed or unreachable host leaves the module's failure message (or nothing).
            error = observed.get("msg") or "no status gathered: host unreachable, or the status tasks failed earlier"
        if error:
            hosts.append({"host": name, "verdict": FAILED, "reasons": [str(error)],
                          "family": None, "uptime_seconds": None, "chips": [], "chip_counts": {},
                          "deployments": [], "problems": []})
            continue
        reasons = []  # type: List[str]
        verdict = OK
        for problem in observed.get("problems") or []:
            verdict = _worst(verdict, ATTENTION)
            reasons.append(problem)
        chips = observed.get("chips") or []
        counts = {}  # type: Dict[str, int]
        for chip in chips:
            counts[chip["state"]] = counts.get(chip["state"], 0) + 1
        if counts.get("unhealthy"):
            verdict = _worst(verdict, ATTENTION)
            reasons.append("unhealthy chip(s): %s" % ", ".join(
                "davinci%s (%s)" % (c["device_id"], c["health"]) for c in chips if c["state"] == "unhealthy"))
        for error in plan.get("errors") or []:
            verdict = _worst(verdict, ATTENTION)
            reasons.append("desired state invalid: %s" % error)
        observed_deps = dict((d["name"], d) for d in observed.get("deployments") or [])
        desired_deps = plan.get("deployments") or []
        absent = set(d.get("name") for d in plan.get("absent") or [])
        rows = []
        for desired in desired_deps:
            rows.append(_deployment(desired, observed_deps.get(desired["name"]), name))
        for desired in plan.get("multinode") or []:
            node = desired.get("multinode") or {}
            row = _deployment(desired, observed_deps.get(desired["name"]), name, headless=node.get("role") != "head")
            row["multinode"] = {"head": node.get("head"), "role": node.get("role"), "members": node.get("members") or []}
            rows.append(row)
        desired_deps = desired_deps + (plan.get("multinode") or [])
        known = set(d["name"] for d in desired_deps)
        for dep_name in sorted(observed_deps):
            if dep_name in known:
                continue
            obs = observed_deps[dep_name]
            if not obs.get("containers"):
                continue
            row = _deployment(None, obs, name)
            if dep_name in absent:
                row["reasons"] = ["has state: absent but still runs (run playbooks/undeploy.yml)"]
            rows.append(row)
        # Cards held in the ledger by a name that neither the inventory nor a container explains:
        # an orphan without containers, which keeps the cards from every new deployment.
        shown = known | set(r.get("name") for r in rows)
        for owner, cards in sorted((observed.get("ledger") or {}).items()):
            if owner in shown or not cards:
                continue
            verdict = _worst(verdict, ATTENTION)
            held = ", ".join(str(c) for c in cards)
            if owner in absent:
                reasons.append("%s has state: absent but the npu_assign ledger still gives it card(s) %s (run "
                               "playbooks/deploy-qwen.yml or playbooks/undeploy.yml to free them)" % (owner, held))
            else:
                reasons.append("the npu_assign ledger gives card(s) %s to %s, which the inventory does not name and which "
                               "runs no container: an orphan holding cards (add {name: %s, state: absent} to "
                               "ascendfleet_deployments and run playbooks/deploy-qwen.yml to free them)" % (held, owner, owner))
        for row in rows:
            verdict = _worst(verdict, row["verdict"])
        hosts.append({
            "host": name,
            "verdict": verdict,
            "reasons": reasons,
            "family": observed.get("family"),
            "chip_name": observed.get("chip_name"),
            "uptime_seconds": observed.get("uptime_seconds"),
            "chips": chips,
            "chip_counts": counts,
            "deployments": rows,
        })
    multinode = _multinode(hosts)
    summary = {OK: 0, ATTENTION: 0, FAILED: 0}
    for host in hosts:
        summary[host["verdict"]] += 1
    fleet = {"generated_at": generated_at, "summary": summary, "hosts": hosts, "multinode": multinode}
    if gateways is not None:
        fleet["gateways"] = gateway_status(gateways)
    return fleet


def gateway_status(records):
    # type: (Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]
    """Each gateway's pools and their servers from HAProxy's runtime API.

    ``records``: one per gateway, ``{"gateway": name, "servers": [...], "error": None}`` with
    ``servers`` as module fleet_gateway_server returns them (``backend``, ``server``, ``state`` up,
    draining, down or maint, ``sessions``, ``check``), or ``error`` (the module's failure) when the
    gateway could not be read; the module's own results of a loop over the gateways are taken as
    they are (``item``: the gateway; ``msg`` of a failed or unreachable one). Returns one entry per gateway, sorted by name: ``verdict`` (failed when
    unreadable; attention when a server is not up; else ok), ``reasons`` and ``pools`` (``pool``: the
    HAProxy backend, ``model``: the served name it routes, ``servers``).
    """
    out = []
    for record in records or []:
        name = str(record.get("gateway") or record.get("item") or "?")
        servers = record.get("servers")
        error = record.get("error")
        if not error and (record.get("failed") or record.get("unreachable")):
            error = record.get("msg") or ("unreachable" if record.get("unreachable") else "failed")
        if error or not isinstance(servers, list):
            out.append({"gateway": name, "verdict": FAILED, "pools": [],
                        "reasons": ["HAProxy's runtime API could not be read: %s" % (error or "no answer")]})
            continue
        pools = {}  # type: Dict[str, List[Dict[str, Any]]]
        for row in servers:
            pools.setdefault(str(row.get("backend")), []).append({
                "server": str(row.get("server")), "state": str(row.get("state")),
                "sessions": row.get("sessions"), "check": row.get("check") or ""})
        reasons = []
        for pool in sorted(pools):
            for row in pools[pool]:
                if row["state"] != "up":
                    why = " (%s)" % row["check"] if row["check"] and row["state"] == "down" else ""
                    reasons.append("%s in %s is %s%s" % (row["server"], pool, row["state"], why))
        out.append({
            "gateway": name,
            "verdict": ATTENTION if reasons else OK,
            "reasons": reasons,
            "pools": [{"pool": pool, "model": pool[len("model:"):] if pool.startswith("model:") else pool,
                       "servers": sorted(pools[pool], key=lambda r: r["server"])} for pool in sorted(pools)],
        })
    return sorted(out, key=lambda g: g["gateway"])


def _gateway_lines(fleet):
    # type: (Mapping[str, Any]) -> List[str]
    """One line per gateway pool: its servers with their state and requests in flight."""
    lines = []
    for gateway in fleet.get("gateways") or []:
        if not gateway["pools"]:
            lines.append("gateway %s: %s - %s" % (gateway["gateway"], gateway["verdict"].upper(), "; ".join(gateway["reasons"])))
        for pool in gateway["pools"]:
            lines.append("gateway %s pool %s: %s" % (gateway["gateway"], pool["model"], ", ".join(
                "%s %s (%s in flight)" % (s["server"], s["state"], _num(s["sessions"], "%s")) for s in pool["servers"]) or "no server"))
    return lines


def _multinode(hosts):
    # type: (List[Dict[str, Any]]) -> List[Dict[str, Any]]
    """One entry per multi-node deployment from its members' rows: the head judges the endpoint,
    a member that is down (or not reported) makes the whole deployment need attention at least,
    and every member host carries the deployment's verdict."""
    found = {}  # type: Dict[str, Dict[str, Any]]
    for host in hosts:
        for row in host.get("deployments") or []:
            node = row.get("multinode")
            if node:
                entry = found.setdefault(row["name"], {"head": node["head"], "members": node["members"], "rows": {}})
                entry["rows"][host["host"]] = row
    out = []
    for name in sorted(found):
        entry = found[name]
        verdict, reasons, members = OK, [], []
        for member in entry["members"]:
            row = entry["rows"].get(member)
            role = "head" if member == entry["head"] else "member"
            if row is None:
                verdict = _worst(verdict, ATTENTION if role == "member" else FAILED)
                reasons.append("%s (%s): no status (host unreachable, or not in the run)" % (member, role))
                members.append({"host": member, "role": role, "verdict": FAILED, "state": "unknown", "cards": []})
                continue
            members.append({"host": member, "role": role, "verdict": row["verdict"], "state": row["state"],
                            "cards": row["cards"]})
            if row["verdict"] != OK:
                verdict = _worst(verdict, row["verdict"] if role == "head" else ATTENTION)
                reasons += ["%s (%s): %s" % (member, role, reason) for reason in row["reasons"]]
        head = entry["rows"].get(entry["head"]) or {}
        out.append({"name": name, "head": entry["head"], "verdict": verdict, "reasons": reasons, "members": members,
                    "model": head.get("model"), "image_running": head.get("image_running"),
                    "image_desired": head.get("image_desired"), "port": head.get("port")})
        if verdict != OK:
            for host in hosts:
                if host["host"] in entry["members"]:
                    host["verdict"] = _worst(host["verdict"], verdict)
                    host["reasons"] = list(host.get("reasons") or []) + [
                        "multi-node deployment %s %s: %s" % (name, "failed" if verdict == FAILED else "needs attention",
                                                             "; ".join(reasons))]
    return out


def _chip_summary(host):
    # type: (Mapping[str, Any]) -> str
    counts = host.get("chip_counts") or {}
    if not host.get("chips"):
        return "-"
    parts = ["%d busy" % counts.get("busy", 0), "%d idle" % counts.get("idle", 0)]
    if counts.get("used"):
        parts.append("%d used" % counts["used"])
    if counts.get("unhealthy"):
        parts.append("%d UNHEALTHY" % counts["unhealthy"])
    return ", ".join(parts)


def _rows(fleet):
    # type: (Mapping[str, Any]) -> List[List[str]]
    """Flat table rows: one per deployment, a host without deployments gets one row."""
    out = []
    for host in fleet["hosts"]:
        deps = host.get("deployments") or []
        notes = list(host.get("reasons") or [])
        if not deps:
            out.append([host["host"], host["verdict"].upper(), "-", "-", "-", "-", _chip_summary(host), "-", "-",
                        "; ".join(notes) or "no deployments"])
            continue
        for dep in deps:
            image = dep.get("image_running") or "-"
            if dep.get("image_desired") and not dep.get("image_current"):
                desired = dep["image_desired"]
                repo = image.split("@", 1)[0].rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else None
                if repo and desired.startswith(repo + ":"):
                    desired = desired[len(repo):]   # same repository: only the new tag, ":v0.18.0rc1-openeuler"
                image = "%s -> %s" % (image, desired)
            health = "-" if dep.get("health") is None else str(dep["health"])
            node = dep.get("multinode")
            label = dep["name"] or "-"
            if node:
                label += " (head)" if node.get("role") == "head" else " (member of %s)" % node.get("head")
            out.append([
                host["host"], dep["verdict"].upper() if dep["verdict"] != OK else host["verdict"].upper(),
                label, image, health,
                ",".join(str(c) for c in dep.get("cards") or []) or "-",
                _chip_summary(host),
                "%s/%s" % (_num(dep.get("requests_running")), _num(dep.get("requests_waiting"))),
                _num(dep.get("kv_cache_usage_pct"), "%.0f%%"),
                "; ".join(notes + dep.get("reasons", [])) or "-",
            ])
    return out


HEADERS = ["HOST", "STATUS", "DEPLOYMENT", "IMAGE (running -> desired)", "HEALTH", "CARDS", "CHIPS",
           "REQ run/wait", "KV", "NOTES"]


def render_text(fleet):
    # type: (Mapping[str, Any]) -> List[str]
    """A fixed-width table (one line per element), for the play output."""
    rows = _rows(fleet)
    widths = [len(h) for h in HEADERS]
    for row in rows:
        for index, cell in enumerate(row[:-1]):
            widths[index] = max(widths[index], len(cell))
    lines = []
    for row in [HEADERS] + rows:
        lines.append("  ".join(cell.ljust(widths[i]) if i < len(row) - 1 else cell for i, cell in enumerate(row)).rstrip())
    lines += _multinode_lines(fleet)
    lines += _gateway_lines(fleet)
    s = fleet["summary"]
    lines.append("%d host(s): %d ok, %d need attention, %d failed" % (len(fleet["hosts"]), s[OK], s[ATTENTION], s[FAILED]))
    return lines


def _multinode_lines(fleet):
    # type: (Mapping[str, Any]) -> List[str]
    """One line per multi-node deployment: verdict, members with their cards, what needs doing."""
    return ["multi-node %s: %s - %s%s" % (
        entry["name"], entry["verdict"].upper(),
        ", ".join("%s %s (cards %s, %s)" % (m["role"], m["host"], ",".join(str(c) for c in m["cards"]) or "-", m["state"])
                  for m in entry["members"]),
        (": " + "; ".join(entry["reasons"])) if entry["reasons"] else "")
        for entry in fleet.get("multinode") or []]


def _md(text):
    # type: (Any) -> str
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(fleet):
    # type: (Mapping[str, Any]) -> str
    s = fleet["summary"]
    lines = ["# Fleet status", ""]
    if fleet.get("generated_at"):
        lines += ["Generated %s." % fleet["generated_at"], ""]
    lines += ["%d host(s): **%d ok**, **%d need attention**, **%d failed**." % (len(fleet["hosts"]), s[OK], s[ATTENTION], s[FAILED]), ""]
    lines.append("| " + " | ".join(HEADERS) + " |")
    lines.append("|" + "---|" * len(HEADERS))
    for row in _rows(fleet):
        lines.append("| " + " | ".join(_md(c) for c in row) + " |")
    lines.append("")
    if fleet.get("multinode"):
        lines += ["## Multi-node deployments", ""] + ["- %s" % _md(line) for line in _multinode_lines(fleet)] + [""]
    if fleet.get("gateways"):
        lines += ["## Gateways", ""]
        for gateway in fleet["gateways"]:
            lines.append("- gateway **%s**: %s%s" % (_md(gateway["gateway"]), gateway["verdict"],
                                                     ("; " + _md("; ".join(gateway["reasons"]))) if gateway["reasons"] else ""))
            for pool in gateway["pools"]:
                lines.append("  - pool %s: %s" % (_md(pool["model"]), ", ".join(
                    "%s %s (%s in flight)" % (_md(srv["server"]), srv["state"], _num(srv["sessions"], "%s"))
                    for srv in pool["servers"]) or "no server"))
        lines.append("")
    for host in fleet["hosts"]:
        lines.append("## %s: %s" % (host["host"], host["verdict"]))
        lines.append("")
        chip = " (%s)" % host["chip_name"] if host.get("chip_name") else ""
        lines.append("- NPU family: %s%s; host up %s" % (host.get("family") or "-", chip, _duration(host.get("uptime_seconds"))))
        for reason in host.get("reasons") or []:
            lines.append("- %s" % _md(reason))
        if host.get("chips"):
            lines.append("- chips: " + ", ".join(
                "davinci%s %s%s" % (c["device_id"], c["state"], " (%s)" % c["holder"] if c.get("holder") else "")
                for c in host["chips"]))
        for dep in host.get("deployments") or []:
            lines.append("- deployment **%s** (%s): %s; image %s (desired %s, last-known-good %s, previous %s); port %s, "
                         "/health %s, models %s; cache %s; up %s, %s restarts" % (
                             dep["name"], _model_label(dep), dep["verdict"], dep.get("image_running") or "-",
                             dep.get("image_desired") or "-", dep.get("last_good_image") or "-",
                             dep.get("previous_image") or "-", dep.get("port") or "-",
                             _num(dep.get("health"), "%s"), ", ".join(dep.get("models") or []) or "-",
                             _md(dep.get("cache")), _duration(dep.get("uptime_seconds")), _num(dep.get("restarts"), "%s")))
        lines.append("")
    return "\n".join(lines)


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px;color:#1f2328;background:#f6f8fa}
h1{font-size:22px;margin:0 0 4px}
.meta{color:#57606a;margin-bottom:16px}
.cards{display:flex;gap:12px;margin-bottom:18px}
.count{padding:10px 16px;border-radius:8px;background:#fff;border:1px solid #d0d7de;min-width:110px}
.count b{display:block;font-size:24px}
.count.failed b{color:#cf222e}.count.attention b{color:#9a6700}.count.ok b{color:#1a7f37}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d0d7de}
th,td{padding:6px 8px;border-bottom:1px solid #d8dee4;text-align:left;vertical-align:top}
th{background:#eaeef2;font-weight:600;white-space:nowrap}
tr.host-failed td{background:#ffebe9}
tr.host-attention td{background:#fff8c5}
tr.host-failed td.host{border-left:6px solid #cf222e}
tr.host-attention td.host{border-left:6px solid #d4a72c}
tr.host-ok td.host{border-left:6px solid #2da44e}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:700;font-size:12px;color:#fff}
.badge.failed{background:#cf222e}.badge.attention{background:#9a6700}.badge.ok{background:#1a7f37}
td.host{white-space:nowrap}
.chips{min-width:150px;max-width:170px}
.want{color:#9a6700;font-weight:600}
.chip{display:inline-block;width:14px;height:14px;margin:0 2px 2px 0;border-radius:3px;border:1px solid #8c959f}
.chip.held{border:2px solid #0550ae}
.chip.busy{background:#0969da}.chip.idle{background:#fff}.chip.used{background:#afb8c1}.chip.unhealthy{background:#cf222e}
.reasons{margin:0;padding-left:16px;color:#4d2d00}
tr.host-failed .reasons{color:#82071e}
code{font:12px ui-monospace,"DejaVu Sans Mono",monospace}
.legend{margin-top:10px;color:#57606a;font-size:12px}
"""


def _ref(ref):
    # type: (Optional[str]) -> str
    """An image reference as its tag, the full reference on hover."""
    if not ref:
        return "-"
    name = ref.split("@", 1)[0]
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else name
    return '<code title="%s">%s</code>' % (html.escape(ref), html.escape(tag))


def render_html(fleet, title="ascendfleet.llm fleet status"):
    # type: (Mapping[str, Any], str) -> str
    """A self-contained page: counts, then one row per host and deployment, worst first."""
    esc = html.escape
    s = fleet["summary"]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s</title><style>%s</style></head><body>" % (esc(title), _CSS),
           "<h1>%s</h1>" % esc(title)]
    if fleet.get("generated_at"):
        out.append('<div class="meta">Generated %s by playbooks/status.yml (read-only).</div>' % esc(fleet["generated_at"]))
    out.append('<div class="cards" id="summary">')
    for key, label in ((FAILED, "failed"), (ATTENTION, "need attention"), (OK, "ok")):
        out.append('<div class="count %s" data-verdict="%s"><b>%d</b>%s</div>' % (key, key, s[key], label))
    out.append("</div>")
    out.append('<table id="fleet"><thead><tr><th>Host</th><th>Status</th><th>Chips</th><th>Deployment</th>'
               "<th>Image running / desired</th><th>Endpoint</th><th>Load</th><th>Cache</th><th>Up</th>"
               "<th>What needs doing</th></tr></thead><tbody>")
    order = sorted(fleet["hosts"], key=lambda h: (-_RANK[h["verdict"]], h["host"]))
    for host in order:
        deps = host.get("deployments") or [None]
        chips = "".join('<span class="chip %s%s" title="davinci%s: %s%s"></span>' % (
            esc(c["state"]), " held" if c.get("holder") else "", c["device_id"], esc(c["state"]),
            esc(", held by " + c["holder"]) if c.get("holder") else "")
            for c in host.get("chips") or [])
        for index, dep in enumerate(deps):
            cells = []
            if index == 0:
                span = ' rowspan="%d"' % len(deps) if len(deps) > 1 else ""
                cells.append('<td class="host"%s><b>%s</b><br><small>%s%s</small></td>' % (
                    span, esc(host["host"]), esc(host.get("family") or "?"),
                    esc(" · up " + _duration(host["uptime_seconds"])) if host.get("uptime_seconds") is not None else ""))
                cells.append('<td class="verdict"%s><span class="badge %s">%s</span></td>' % (
                    span, host["verdict"], esc(host["verdict"].upper())))
                cells.append('<td class="chips"%s>%s<br><small>%s</small></td>' % (span, chips, esc(_chip_summary(host))))
            if dep is None:
                cells.append('<td colspan="6">-</td>')
                notes = host.get("reasons") or ["no deployments"]
            else:
                image = _ref(dep.get("image_running"))
                if dep.get("image_desired") and not dep.get("image_current"):
                    image += "<br><small class=\"want\">desired %s</small>" % _ref(dep["image_desired"])
                if dep.get("last_good_image"):
                    image += "<br><small>last-good %s</small>" % _ref(dep["last_good_image"])
                if dep.get("previous_image") and dep["previous_image"] != dep.get("last_good_image"):
                    image += "<br><small>previous %s</small>" % _ref(dep["previous_image"])
                endpoint = ":%s /health %s" % (dep.get("port") or "-", "-" if dep.get("health") is None else dep["health"])
                if dep.get("models"):
                    endpoint += "<br><small>models: %s</small>" % esc(", ".join(dep["models"]))
                load = "%s running, %s waiting<br><small>KV %s</small>" % (
                    _num(dep.get("requests_running")), _num(dep.get("requests_waiting")),
                    _num(dep.get("kv_cache_usage_pct"), "%.0f%%"))
                cells.append('<td><b>%s</b><br><small>%s · cards %s</small></td>' % (
                    esc(dep["name"] or "-"), esc(_model_label(dep)),
                    esc(",".join(str(c) for c in dep.get("cards") or []) or "-")))
                cells.append("<td>%s</td>" % image)
                cells.append("<td>%s</td>" % endpoint)
                cells.append("<td>%s</td>" % load)
                cells.append("<td>%s</td>" % esc(dep.get("cache") or "-"))
                cells.append("<td>%s</td>" % esc(_duration(dep.get("uptime_seconds"))))
                notes = (host.get("reasons") or []) if index == 0 else []
                notes = notes + dep.get("reasons", [])
            cells.append("<td>%s</td>" % (('<ul class="reasons">%s</ul>' % "".join("<li>%s</li>" % esc(n) for n in notes))
                                          if notes else "-"))
            out.append('<tr class="host-%s" data-host="%s" data-verdict="%s">%s</tr>' % (
                host["verdict"], esc(host["host"]), host["verdict"], "".join(cells)))
    out.append("</tbody></table>")
    if fleet.get("multinode"):
        out.append('<h2>Multi-node deployments</h2><ul id="multinode">')
        for entry, line in zip(fleet["multinode"], _multinode_lines(fleet)):
            out.append('<li data-deployment="%s" data-verdict="%s"><span class="badge %s">%s</span> %s</li>' % (
                esc(entry["name"]), entry["verdict"], entry["verdict"], esc(entry["verdict"].upper()), esc(line)))
        out.append("</ul>")
    if fleet.get("gateways"):
        out.append('<h2>Gateways</h2><table id="gateways"><thead><tr><th>Gateway</th><th>Pool (model)</th><th>Server</th>'
                   "<th>State</th><th>In flight</th><th>Check</th></tr></thead><tbody>")
        for gateway in fleet["gateways"]:
            rows = [(pool, srv) for pool in gateway["pools"] for srv in pool["servers"]] or [(None, None)]
            for pool, srv in rows:
                if srv is None:
                    cells = '<td colspan="5">%s</td>' % esc("; ".join(gateway["reasons"]) or "no pool")
                else:
                    cells = "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>" % (
                        esc(pool["model"]), esc(srv["server"]), esc(srv["state"]), esc(_num(srv["sessions"], "%s")),
                        esc(srv["check"] or "-"))
                out.append('<tr class="host-%s" data-gateway="%s" data-state="%s"><td class="host"><b>%s</b></td>%s</tr>' % (
                    gateway["verdict"], esc(gateway["gateway"]), esc(srv["state"] if srv else "unread"),
                    esc(gateway["gateway"]), cells))
        out.append("</tbody></table>")
    out.append('<div class="legend">Chips: <span class="chip busy"></span>busy <span class="chip idle"></span>idle '
               '<span class="chip used"></span>memory used, no process <span class="chip unhealthy"></span>unhealthy, '
               '<span class="chip idle held"></span>thick border: held by a deployment (npu_assign ledger). '
               "Hosts are sorted worst first.</div>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
