# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Read-only state of one host's vLLM deployments: pure parsing for the vllm_status module.

PRIVATE to this collection; may change without notice.

Text in, plain data out; no I/O. Standard library only; runs on the target (Python >= 3.8).

* :func:`parse_metrics` reads vLLM's Prometheus ``/metrics`` text (exposition format 0.0.4)
  and returns the headline numbers: requests running and waiting (summed over engines) and
  KV-cache usage (the highest engine; ``vllm:kv_cache_usage_perc``, or the older name
  ``vllm:gpu_cache_usage_perc``).
* :func:`parse_containers` reads ``docker inspect`` JSON of the compose containers and
  returns, per deployment (compose project), the image, state, health, restarts, start time
  and the port and served model name from the vLLM command line.
* :func:`chip_rows` joins npu-smi chips with the npu_assign ledger: busy / idle / unhealthy
  and which deployment holds which chip.
* :func:`uptime_seconds` and :func:`parse_docker_time` for ``/proc/uptime`` and Docker's
  RFC 3339 timestamps.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence

PROJECT_LABEL = "com.docker.compose.project"
DEPLOYMENT_LABEL = "io.ascendfleet.llm.deployment"
MODEL_LABEL = "io.ascendfleet.llm.model"
# The revision directory a container mounts (vllm_compose with the revisions cache layout).
REVISION_KEY_LABEL = "io.ascendfleet.llm.revision_key"

METRIC_RUNNING = "vllm:num_requests_running"
METRIC_WAITING = "vllm:num_requests_waiting"
METRIC_KV = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")

# name{labels} value [timestamp]; label values may contain escaped quotes and braces.
_SAMPLE_RE = re.compile(
    r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)'
    r'(?:\{(?P<labels>(?:[^"}]|"(?:[^"\\]|\\.)*")*)\})?'
    r'\s+(?P<value>\S+)(?:\s+-?\d+)?\s*$')
_LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class StatusParseError(ValueError):
    """Text that is not what the probe expected, with the reason."""


def _float(text):
    # type: (str) -> Optional[float]
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isnan(value):  # no data yet
        return None
    return value


def parse_metric_samples(text):
    # type: (str) -> List[Dict[str, Any]]
    """Every sample line of Prometheus text as ``{"name", "labels", "value"}``.

    Comment and blank lines are skipped; a line that is not a sample raises
    :class:`StatusParseError` naming it.
    """
    samples = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE_RE.match(line)
        if not match:
            raise StatusParseError("line %d of /metrics is not a Prometheus sample: %r" % (number, line[:200]))
        labels = {}
        for key, value in _LABEL_RE.findall(match.group("labels") or ""):
            labels[key] = value.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        samples.append({"name": match.group("name"), "labels": labels, "value": _float(match.group("value"))})
    return samples


def parse_metrics(text):
    # type: (str) -> Dict[str, Any]
    """Headline numbers of a vLLM ``/metrics`` page.

    Returns ``{"requests_running", "requests_waiting", "kv_cache_usage_pct", "engines",
    "model_names"}``. Running and waiting are summed over engines (data-parallel ranks);
    KV-cache usage is the highest engine's, in percent. A number vLLM does not export is None.
    """
    samples = parse_metric_samples(text)
    running = [s for s in samples if s["name"] == METRIC_RUNNING]
    waiting = [s for s in samples if s["name"] == METRIC_WAITING]
    kv = []  # type: List[Dict[str, Any]]
    for name in METRIC_KV:
        kv = [s for s in samples if s["name"] == name]
        if kv:
            break

    def total(series):
        # type: (List[Dict[str, Any]]) -> Optional[float]
        values = [s["value"] for s in series if s["value"] is not None]
        return sum(values) if values else None

    kv_values = [s["value"] for s in kv if s["value"] is not None]
    engines = sorted(set(s["labels"].get("engine", "0") for s in running + waiting + kv))
    names = sorted(set(s["labels"]["model_name"] for s in running + waiting + kv if "model_name" in s["labels"]))
    return {
        "requests_running": total(running),
        "requests_waiting": total(waiting),
        "kv_cache_usage_pct": round(max(kv_values) * 100.0, 1) if kv_values else None,
        "engines": len(engines),
        "model_names": names,
    }


def parse_models(text):
    # type: (str) -> List[str]
    """Model ids of an OpenAI ``/v1/models`` answer (``{"data": [{"id": ...}]}``)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StatusParseError("/v1/models did not answer JSON (%s): %r" % (exc, text[:200]))
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise StatusParseError("/v1/models answered JSON without a data list: %r" % text[:200])
    return [str(item["id"]) for item in data["data"] if isinstance(item, dict) and "id" in item]


def parse_docker_time(text):
    # type: (Optional[str]) -> Optional[datetime.datetime]
    """Docker's RFC 3339 timestamp (nanoseconds, ``Z`` or offset) as an aware datetime.

    The zero time ``0001-01-01T00:00:00Z`` (never started/finished) is None.
    """
    if not text or text.startswith("0001-01-01"):
        return None
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", text.strip(), re.ASCII)
    if not match:
        raise StatusParseError("not a Docker timestamp: %r" % text)
    base = datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S")
    micro = int((match.group(2) or "0")[:6].ljust(6, "0"))
    zone = match.group(3)
    if zone == "Z":
        offset = datetime.timedelta(0)
    else:
        sign = 1 if zone[0] == "+" else -1
        offset = sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return base.replace(microsecond=micro, tzinfo=datetime.timezone(offset))


def _arg_after(args, flag):
    # type: (Sequence[str], str) -> Optional[str]
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def parse_containers(text, now):
    # type: (str, datetime.datetime) -> Dict[str, List[Dict[str, Any]]]
    """``docker inspect`` JSON of containers -> compose project -> containers.

    Each container: ``name``, ``service``, ``image`` (the reference it was created from),
    ``image_id``, ``state`` (running, restarting, exited...), ``health`` (healthcheck status or
    None), ``restarts``, ``exit_code``, ``oom_killed``, ``started_at``, ``uptime_seconds``
    (None unless running), ``port`` and ``served_model_name`` (from the vLLM arguments),
    ``model`` (the io.ascendfleet.llm.model label), ``deployment`` (the
    io.ascendfleet.llm.deployment label), ``full_id``. Containers without a compose project
    label are left out.
    """
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StatusParseError("docker inspect did not print JSON (%s)" % exc)
    if not isinstance(data, list):
        raise StatusParseError("docker inspect printed %s, not a list" % type(data).__name__)
    projects = {}  # type: Dict[str, List[Dict[str, Any]]]
    for item in data:
        config = item.get("Config") or {}
        labels = config.get("Labels") or {}
        project = labels.get(PROJECT_LABEL)
        if not project:
            continue
        state = item.get("State") or {}
        args = [str(a) for a in [item.get("Path") or ""] + list(item.get("Args") or [])]
        # `sh -c "..." vllm serve ...`: the vLLM arguments follow the script.
        port = _arg_after(args, "--port")
        started = parse_docker_time(state.get("StartedAt"))
        status = state.get("Status") or "unknown"
        uptime = None
        if status == "running" and started is not None:
            uptime = max(0, int((now - started).total_seconds()))
        health = (state.get("Health") or {}).get("Status") if isinstance(state.get("Health"), dict) else None
        projects.setdefault(project, []).append({
            "name": (item.get("Name") or "").lstrip("/"),
            "full_id": item.get("Id"),
            "deployment": labels.get(DEPLOYMENT_LABEL),
            "service": labels.get("com.docker.compose.service"),
            "image": config.get("Image"),
            "image_id": item.get("Image"),
            "state": status,
            "health": health,
            "restarts": int(item.get("RestartCount") or 0),
            "exit_code": state.get("ExitCode"),
            "oom_killed": bool(state.get("OOMKilled")),
            "started_at": state.get("StartedAt") if started is not None else None,
            "uptime_seconds": uptime,
            "port": int(port) if port and port.isdigit() else None,
            "served_model_name": _arg_after(args, "--served-model-name"),
            "model": labels.get(MODEL_LABEL),
        })
        if labels.get(REVISION_KEY_LABEL):
            projects[project][-1]["revision_key"] = labels[REVISION_KEY_LABEL]
    for containers in projects.values():
        containers.sort(key=lambda c: c["name"])
    return projects


def uptime_seconds(text):
    # type: (str) -> int
    """Seconds since boot from ``/proc/uptime`` (``"350735.47 234388.90"``)."""
    try:
        return int(float(text.split()[0]))
    except (IndexError, ValueError):
        raise StatusParseError("/proc/uptime holds %r, not '<seconds> <idle seconds>'" % text[:80])


def chip_rows(chips, ledger, pid_owners=None):
    # type: (Sequence[Mapping[str, Any]], Mapping[str, Sequence[int]], Optional[Mapping[int, Optional[str]]]) -> List[Dict[str, Any]]
    """One row per chip: ``device_id``, ``health``, ``state`` (unhealthy, busy, idle or
    used), ``holder`` (the deployment the ledger gives it to, or None), ``processes``
    (deployments - compose projects - whose processes run on it; ``?`` for a process no
    container could be found for), ``hbm_used_pct``.

    ``chips`` are npu_info's chip dicts. A chip is *unhealthy* when health is not OK, *busy*
    when a process runs on it, *idle* when npu_info says so, else *used* (memory in use, no
    visible process).
    """
    pid_owners = pid_owners or {}
    holder = {}  # type: Dict[int, str]
    for owner, ids in ledger.items():
        for device_id in ids:
            holder[int(device_id)] = owner
    rows = []
    for chip in chips:
        procs = chip.get("processes") or []
        owners = sorted(set((pid_owners.get(p.get("pid")) or "?") for p in procs))
        if chip.get("health") != "OK":
            state = "unhealthy"
        elif procs:
            state = "busy"
        elif chip.get("idle"):
            state = "idle"
        else:
            state = "used"
        used, total = chip.get("hbm_used_mb"), chip.get("hbm_total_mb")
        if total is None:
            used, total = chip.get("memory_used_mb"), chip.get("memory_total_mb")
        pct = round(100.0 * used / total, 1) if used is not None and total else None
        rows.append({
            "device_id": chip.get("device_id"),
            "health": chip.get("health"),
            "state": state,
            "holder": holder.get(chip.get("device_id")),
            "processes": owners,
            "hbm_used_pct": pct,
        })
    return rows
