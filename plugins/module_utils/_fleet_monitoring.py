# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Monitoring of the fleet: Prometheus discovery, rules, configuration and a Grafana dashboard.

PRIVATE to this collection; may change without notice.

Pure data in, data out (used by the ``fleet_monitoring_*`` filters on the control node and by
the tests). Standard library only.

* :func:`file_sd` turns one record per host (the same records ``fleet_status`` judges, plus
  the address Prometheus reaches the host at, the inventory's deployments and the host's NPU
  exporter) into Prometheus ``file_sd`` target groups: one per vLLM deployment, labelled with
  host, deployment, model, served name, image, cards and (revisions cache layout) the revision
  it serves, and one per NPU exporter.
* :func:`gateway_sd` turns the fleet's gateways into targets of HAProxy's own Prometheus endpoint.
* :func:`rule_groups` returns the alert and recording rules (thresholds are parameters).
* :func:`prometheus_config` returns a ``prometheus.yml`` that scrapes the discovery files.
* :func:`dashboard` returns a Grafana dashboard (fleet, per host, per deployment);
  :func:`dashboard_queries` lists every query in it, with Grafana's variables replaced, so a
  test can run each against a real Prometheus.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence

# VLLM_DEFAULT_PORT: vLLM's default port (``vllm serve --port``), the one vllm_compose uses when none
# is set; one constant for the monitoring and the gateway.
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_gateway import VLLM_DEFAULT_PORT
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_status import evaluate

VLLM_JOB = "ascendfleet-vllm"
NPU_EXPORTER_JOB = "ascendfleet-npu-exporter"
GATEWAY_JOB = "ascendfleet-gateway"
VLLM_FILE = "ascendfleet-vllm.json"
NPU_EXPORTER_FILE = "ascendfleet-npu-exporter.json"
GATEWAY_FILE = "ascendfleet-gateway.json"
RULES_FILE = "ascendfleet-rules.yml"
DASHBOARD_FILE = "ascendfleet-dashboard.json"
DASHBOARD_UID = "ascendfleet-llm"

# MindCluster NPU Exporter's default port.
NPU_EXPORTER_DEFAULT_PORT = 8082
# The fleet gateway's HAProxy Prometheus endpoint (fleet_gateway_metrics_port).
GATEWAY_METRICS_DEFAULT_PORT = 8405

# Prometheus duration: 1d2h30m, 90s, 500ms ... Both rules match the whole value (re.fullmatch:
# "5m\n" or "fleet\n" would otherwise pass and reach the rule file and PromQL).
_DURATION_RE = re.compile(r"(?:\d+y)?(?:\d+w)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?(?:\d+ms)?", re.ASCII)
_LABEL_VALUE_RE = re.compile(r"[A-Za-z0-9_.:-]+")

# Alert thresholds: name -> (kind, default). Kinds: duration, ratio (0 < x <= 1),
# positive (x > 0), count (x >= 0), quantile (0 < x < 1).
THRESHOLDS = {
    "deployment_down_for": ("duration", "2m"),
    "kv_cache_usage_threshold": ("ratio", 0.9),
    "kv_cache_usage_for": ("duration", "10m"),
    "requests_waiting_threshold": ("count", 10),
    "requests_waiting_for": ("duration", "5m"),
    "engine_hung_for": ("duration", "2m"),
    "ttft_quantile": ("quantile", 0.95),
    "ttft_threshold_seconds": ("positive", 5.0),
    "ttft_for": ("duration", "10m"),
    "npu_unhealthy_for": ("duration", "1m"),
    "hbm_usage_threshold": ("ratio", 0.99),
    "hbm_usage_for": ("duration", "15m"),
    "image_mismatch_for": ("duration", "30m"),
    "npu_exporter_down_for": ("duration", "5m"),
    "rate_window": ("duration", "5m"),
}


class MonitoringError(ValueError):
    """Input that cannot be turned into monitoring configuration, with the fix."""


# --------------------------------------------------------------------------- discovery


def _tag(image):
    # type: (Optional[str]) -> str
    """The tag (or digest) of an image reference: quay.io/ascend/vllm-ascend:v0.17.0rc1 -> v0.17.0rc1."""
    if not image:
        return ""
    ref = str(image)
    if "@" in ref:
        name, digest = ref.split("@", 1)
        tag = _tag(name)
        return tag or digest
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else "latest"


def _target(address, port):
    # type: (str, Any) -> str
    address = str(address)
    if ":" in address and not address.startswith("["):
        address = "[%s]" % address  # IPv6 literal
    return "%s:%s" % (address, port)


def _port(value, what):
    # type: (Any, str) -> int
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise MonitoringError("%s: %r is not a port number. Fix: set an integer 1-65535" % (what, value)) from None
    if isinstance(value, bool) or not 1 <= port <= 65535:
        raise MonitoringError("%s: %r is not a port number. Fix: set an integer 1-65535" % (what, value))
    return port


def _inventory_rows(host, deployments):
    # type: (str, Any) -> List[Dict[str, Any]]
    """Deployments as the inventory writes them, for a host whose state could not be read."""
    rows = []
    for dep in deployments or []:
        if not isinstance(dep, Mapping) or not dep.get("name") or dep.get("state", "present") == "absent":
            continue
        rows.append({
            "host": host,
            "name": dep["name"],
            "model": dep.get("model"),
            "served_model_name": dep.get("served_model_name") or dep.get("model"),
            "port": dep.get("port") or VLLM_DEFAULT_PORT,
            "image_desired": None,
            "image_running": None,
            "cards": dep.get("devices") or [],
        })
    return rows


def _revision_labels(row):
    # type: (Mapping[str, Any]) -> Dict[str, str]
    """With the revisions cache layout (a status row with ``revision_key``): ``revision``, the
    revision (commit id, or ``content-...``) the container serves, ``revision_desired``, the one
    the deployment's revision resolves to in the cache now, and ``revision_current`` (``true``,
    ``false``, or ``unknown`` while either is not known). Nothing with the flat layout."""
    if "revision_key" not in row and "revision_key_desired" not in row:
        return {}
    serving = row.get("revision_key") or ""
    desired = row.get("revision_key_desired") or ""
    return {"revision": serving, "revision_desired": desired,
            "revision_current": ("true" if serving == desired else "false") if serving and desired else "unknown"}


def file_sd(records):
    # type: (Sequence[Mapping[str, Any]]) -> Dict[str, List[Dict[str, Any]]]
    """Prometheus file_sd target groups for the fleet.

    Each record: ``host``, ``address`` (what Prometheus connects to), ``observed`` (the
    vllm_status result, or nothing when the host could not be read), ``plan`` (the
    vllm_compose_plan of the host), ``deployments`` (the inventory's list, used when the host
    could not be read, so its targets stay and Prometheus reports them down) and
    ``npu_exporter`` (``{"port": 8082, "scheme": "http"}``, or nothing when the host runs none).

    Returns ``{"vllm": [...], "npu_exporter": [...]}``, sorted by host and deployment.
    """
    vllm = []  # type: List[Dict[str, Any]]
    exporters = []  # type: List[Dict[str, Any]]
    seen = set()
    for record in records:
        host = record.get("host")
        if not host:
            raise MonitoringError("a host record has no host name: %r" % (dict(record),))
        if host in seen:
            raise MonitoringError("host %s is listed twice. Fix: list each host once" % host)
        seen.add(host)
        address = record.get("address") or host
        fleet = evaluate([{"host": host, "observed": record.get("observed"), "plan": record.get("plan"),
                           "error": record.get("error")}])
        judged = fleet["hosts"][0]
        observed = record.get("observed")
        readable = isinstance(observed, Mapping) and "chips" in observed and not record.get("error")
        rows = judged["deployments"] if readable else _inventory_rows(host, record.get("deployments"))
        for row in rows:
            port = _port(row.get("port") or VLLM_DEFAULT_PORT, "%s: deployment %s: port" % (host, row["name"]))
            running = row.get("image_running") or ""
            desired = row.get("image_desired") or ""
            labels = {
                "host": host,
                "deployment": row["name"],
                "model": row.get("model") or "",
                "served_model_name": row.get("served_model_name") or "",
                "image_version": _tag(running or desired),
                "image_running": running,
                "image_desired": desired,
                # Known only when both are: a host that could not be read says "unknown".
                "image_current": ("true" if running == desired else "false") if running and desired else "unknown",
                "cards": ",".join(str(c) for c in sorted(row.get("cards") or [])),
            }
            labels.update(_revision_labels(row))
            vllm.append({"targets": [_target(address, port)], "labels": labels})
        exporter = record.get("npu_exporter")
        if exporter:
            port = _port(exporter.get("port") or NPU_EXPORTER_DEFAULT_PORT, "%s: NPU exporter port" % host)
            scheme = exporter.get("scheme") or "http"
            if scheme not in ("http", "https"):
                raise MonitoringError("%s: NPU exporter scheme %r: Fix: use http or https" % (host, scheme))
            labels = {"host": host, "__scheme__": scheme}
            if judged.get("family"):
                labels["npu_family"] = judged["family"]
            exporters.append({"targets": [_target(address, port)], "labels": labels})
    vllm.sort(key=lambda g: (g["labels"]["host"], g["labels"]["deployment"]))
    exporters.sort(key=lambda g: g["labels"]["host"])
    return {"vllm": vllm, "npu_exporter": exporters}


def gateway_sd(gateways):
    # type: (Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]
    """file_sd target groups of the fleet's gateways (HAProxy's own Prometheus endpoint).

    Each gateway: ``host``, ``address`` (what Prometheus connects to; the host name when missing)
    and ``port`` (fleet_gateway_metrics_port). Sorted by host; none when the fleet has no gateway.
    """
    groups = []
    seen = set()
    for gateway in gateways or []:
        host = gateway.get("host")
        if not host:
            raise MonitoringError("a gateway record has no host name: %r" % (dict(gateway),))
        if host in seen:
            raise MonitoringError("gateway %s is listed twice. Fix: list each gateway once" % host)
        seen.add(host)
        port = _port(gateway.get("port") or GATEWAY_METRICS_DEFAULT_PORT, "%s: fleet_gateway_metrics_port" % host)
        groups.append({"targets": [_target(gateway.get("address") or host, port)], "labels": {"host": host}})
    groups.sort(key=lambda g: g["labels"]["host"])
    return groups


# --------------------------------------------------------------------------- rules


def thresholds(values=None):
    # type: (Optional[Mapping[str, Any]]) -> Dict[str, Any]
    """The thresholds with defaults filled in, each checked; a bad one raises MonitoringError."""
    values = dict(values or {})
    unknown = sorted(set(values) - set(THRESHOLDS))
    if unknown:
        raise MonitoringError("unknown threshold(s) %s. Fix: use %s" % (", ".join(unknown), ", ".join(sorted(THRESHOLDS))))
    result = {}
    for name, (kind, default) in THRESHOLDS.items():
        value = values.get(name, default)
        if value is None:
            value = default
        fix = "fleet_monitoring_%s: %r " % (name, value)
        if kind == "duration":
            value = str(value)
            if not value or value == "0" or not _DURATION_RE.fullmatch(value):
                raise MonitoringError(fix + "is not a Prometheus duration. Fix: write it like 90s, 5m or 1h")
        else:
            try:
                if isinstance(value, bool):
                    raise ValueError
                value = float(value)
            except (TypeError, ValueError):
                raise MonitoringError(fix + "is not a number. Fix: set a number") from None
            if kind == "ratio" and not 0 < value <= 1:
                raise MonitoringError(fix + "is not a ratio. Fix: set a number above 0 and at most 1 (0.9 = 90%)")
            if kind == "quantile" and not 0 < value < 1:
                raise MonitoringError(fix + "is not a quantile. Fix: set a number between 0 and 1 (0.95 = p95)")
            if kind == "positive" and value <= 0:
                raise MonitoringError(fix + "must be above 0")
            if kind == "count" and value < 0:
                raise MonitoringError(fix + "must be 0 or more")
            if value == int(value):
                value = int(value)
        result[name] = value
    return result


def _pct(ratio):
    # type: (float) -> str
    return "%g%%" % (ratio * 100)


def rule_groups(values=None, vllm_job=VLLM_JOB, npu_exporter_job=NPU_EXPORTER_JOB):
    # type: (Optional[Mapping[str, Any]], str, str) -> Dict[str, Any]
    """Prometheus rule file content (``{"groups": [...]}``): recording rules, then alerts."""
    t = thresholds(values)
    for what, job in (("fleet_monitoring_vllm_job", vllm_job), ("fleet_monitoring_npu_exporter_job", npu_exporter_job)):
        if not job or not _LABEL_VALUE_RE.fullmatch(str(job)):
            raise MonitoringError("%s: %r is not a usable job name. Fix: letters, digits, _ . : -" % (what, job))
    v = 'job="%s"' % vllm_job
    n = 'job="%s"' % npu_exporter_job
    w = t["rate_window"]
    by = "host, deployment"
    q = t["ttft_quantile"]
    recording = [
        {"record": "ascendfleet:vllm_requests_running:sum",
         "expr": "sum by (%s) (vllm:num_requests_running{%s})" % (by, v)},
        {"record": "ascendfleet:vllm_requests_waiting:sum",
         "expr": "sum by (%s) (vllm:num_requests_waiting{%s})" % (by, v)},
        {"record": "ascendfleet:vllm_kv_cache_usage:max",
         "expr": "max by (%s) (vllm:kv_cache_usage_perc{%s})" % (by, v)},
        {"record": "ascendfleet:vllm_requests:rate%s" % w,
         "expr": "sum by (%s) (rate(vllm:time_to_first_token_seconds_count{%s}[%s]))" % (by, v, w)},
        {"record": "ascendfleet:vllm_ttft_seconds:p%g" % (q * 100),
         "expr": "histogram_quantile(%g, sum by (%s, le) (rate(vllm:time_to_first_token_seconds_bucket{%s}[%s])))"
                 % (q, by, v, w)},
        {"record": "ascendfleet:vllm_generation_tokens:rate%s" % w,
         "expr": "sum by (%s) (rate(vllm:generation_tokens_total{%s}[%s]))" % (by, v, w)},
        {"record": "ascendfleet:vllm_prompt_tokens:rate%s" % w,
         "expr": "sum by (%s) (rate(vllm:prompt_tokens_total{%s}[%s]))" % (by, v, w)},
        # Chips that report no HBM total (0) drop out instead of dividing by zero.
        {"record": "ascendfleet:npu_hbm_used:ratio",
         "expr": "npu_chip_info_hbm_used_memory{%s} / (npu_chip_info_hbm_total_memory{%s} > 0)" % (n, n)},
    ]
    ttft_record = "ascendfleet:vllm_ttft_seconds:p%g" % (q * 100)
    common = {"ascendfleet": "llm"}
    alerts = [
        {"alert": "AscendfleetDeploymentDown",
         "expr": "up{%s} == 0" % v,
         "for": t["deployment_down_for"],
         "labels": dict(common, severity="critical"),
         "annotations": {
             "summary": "vLLM deployment {{ $labels.deployment }} on {{ $labels.host }} is down",
             "description": "Prometheus cannot scrape {{ $labels.instance }}/metrics (deployment "
                            "{{ $labels.deployment }}, model {{ $labels.model }}, cards {{ $labels.cards }}) "
                            "for %s. Check `docker compose -p {{ $labels.deployment }} ps` on {{ $labels.host }} "
                            "and run playbooks/status.yml." % t["deployment_down_for"]}},
        {"alert": "AscendfleetKVCacheHigh",
         "expr": "ascendfleet:vllm_kv_cache_usage:max > %g" % t["kv_cache_usage_threshold"],
         "for": t["kv_cache_usage_for"],
         "labels": dict(common, severity="warning"),
         "annotations": {
             "summary": "KV cache of {{ $labels.deployment }} on {{ $labels.host }} above %s"
                        % _pct(t["kv_cache_usage_threshold"]),
             "description": "vllm:kv_cache_usage_perc is {{ $value | humanizePercentage }} for %s: requests "
                            "queue or are preempted. Add cards (tensor_parallel_size), a replica, or lower "
                            "max_model_len." % t["kv_cache_usage_for"]}},
        {"alert": "AscendfleetRequestsQueueing",
         "expr": "ascendfleet:vllm_requests_waiting:sum > %g" % t["requests_waiting_threshold"],
         "for": t["requests_waiting_for"],
         "labels": dict(common, severity="warning"),
         "annotations": {
             "summary": "Requests queue at {{ $labels.deployment }} on {{ $labels.host }}",
             "description": "{{ $value }} requests waiting (vllm:num_requests_waiting) for %s, more than %g. "
                            "The deployment is saturated: add a replica or cards."
                            % (t["requests_waiting_for"], t["requests_waiting_threshold"])}},
        # A hung engine (an HCCL collective that never returns) keeps /health at 200: requests queue
        # while no token comes out.
        {"alert": "AscendfleetEngineHung",
         "expr": "ascendfleet:vllm_requests_waiting:sum > 0 and ascendfleet:vllm_generation_tokens:rate%s == 0" % w,
         "for": t["engine_hung_for"],
         "labels": dict(common, severity="critical"),
         "annotations": {
             "summary": "Engine of {{ $labels.deployment }} on {{ $labels.host }} generates nothing",
             "description": "{{ $value }} requests wait (vllm:num_requests_waiting) and no token was generated "
                            "(vllm:generation_tokens_total) over %s, for %s, although /health may still answer "
                            "200: the engine hangs (an HCCL collective that never returns). The gateway's "
                            "one-token health check takes it out of its pool; restart the deployment "
                            "(docker compose -p {{ $labels.deployment }} restart on {{ $labels.host }}) and read "
                            "its log." % (w, t["engine_hung_for"])}},
        {"alert": "AscendfleetTimeToFirstTokenHigh",
         "expr": "%s > %g and ascendfleet:vllm_requests:rate%s > 0" % (ttft_record, t["ttft_threshold_seconds"], w),
         "for": t["ttft_for"],
         "labels": dict(common, severity="warning"),
         "annotations": {
             "summary": "Time to first token degraded at {{ $labels.deployment }} on {{ $labels.host }}",
             "description": "p%g of vllm:time_to_first_token_seconds over %s is {{ $value | humanizeDuration }}, "
                            "above %gs, for %s." % (q * 100, w, t["ttft_threshold_seconds"], t["ttft_for"])}},
        {"alert": "AscendfleetNPUChipUnhealthy",
         "expr": "npu_chip_info_health_status{%s} != 1" % n,
         "for": t["npu_unhealthy_for"],
         "labels": dict(common, severity="critical"),
         "annotations": {
             "summary": "NPU chip {{ $labels.id }} on {{ $labels.host }} is unhealthy",
             "description": "npu_chip_info_health_status is {{ $value }} (1 = healthy) for %s. Read "
                            "`npu-smi info -t health -i <npu>` on {{ $labels.host }}; playbooks/verify.yml "
                            "keeps new deployments off the chip." % t["npu_unhealthy_for"]}},
        {"alert": "AscendfleetNPUMemoryNearlyFull",
         "expr": "ascendfleet:npu_hbm_used:ratio > %g" % t["hbm_usage_threshold"],
         "for": t["hbm_usage_for"],
         "labels": dict(common, severity="warning"),
         "annotations": {
             "summary": "HBM of NPU chip {{ $labels.id }} on {{ $labels.host }} above %s" % _pct(t["hbm_usage_threshold"]),
             "description": "npu_chip_info_hbm_used_memory / _total_memory is {{ $value | humanizePercentage }} "
                            "for %s. Lower gpu_memory_utilization or look for a foreign process on the chip."
                            % t["hbm_usage_for"]}},
        {"alert": "AscendfleetImageNotDesired",
         "expr": 'up{%s, image_current="false"} == 1' % v,
         "for": t["image_mismatch_for"],
         "labels": dict(common, severity="warning"),
         "annotations": {
             "summary": "{{ $labels.deployment }} on {{ $labels.host }} runs another image than desired",
             "description": "It runs {{ $labels.image_running }}, the inventory wants {{ $labels.image_desired }} "
                            "(as of the last playbooks/monitoring.yml run), for %s: a rollout failed and was "
                            "rolled back, or is pending. Read reports/vllm_compose.md and roll out with "
                            "playbooks/deploy-qwen.yml." % t["image_mismatch_for"]}},
        {"alert": "AscendfleetRevisionNotDesired",
         "expr": 'up{%s, revision_current="false"} == 1' % v,
         "for": t["image_mismatch_for"],
         "labels": dict(common, severity="warning"),
         "annotations": {
             "summary": "{{ $labels.deployment }} on {{ $labels.host }} serves another model revision than desired",
             "description": "It serves revision {{ $labels.revision }}, its revision resolves to "
                            "{{ $labels.revision_desired }} in the host's cache (as of the last playbooks/monitoring.yml "
                            "run), for %s: a rollout of the new revision failed and was rolled back, or is pending. Read "
                            "reports/vllm_compose.md and roll out with playbooks/deploy-qwen.yml." % t["image_mismatch_for"]}},
        {"alert": "AscendfleetNPUExporterDown",
         "expr": "up{%s} == 0" % n,
         "for": t["npu_exporter_down_for"],
         "labels": dict(common, severity="warning"),
         "annotations": {
             "summary": "NPU exporter on {{ $labels.host }} is down",
             "description": "Prometheus cannot scrape {{ $labels.instance }}/metrics for %s: no NPU health or "
                            "HBM alerts for the host meanwhile." % t["npu_exporter_down_for"]}},
    ]
    return {"groups": [
        {"name": "ascendfleet-recording", "rules": recording},
        {"name": "ascendfleet-alerts", "rules": alerts},
    ]}


# --------------------------------------------------------------------------- prometheus.yml


def prometheus_config(sd_dir, rules_path, scrape_interval="15s", evaluation_interval="15s",
                      alertmanagers=None, vllm_job=VLLM_JOB, npu_exporter_job=NPU_EXPORTER_JOB,
                      external_labels=None):
    # type: (str, str, str, str, Optional[Sequence[str]], str, str, Optional[Mapping[str, str]]) -> Dict[str, Any]
    """A complete prometheus.yml scraping the discovery files of :func:`file_sd`."""
    for what, value in (("scrape interval", scrape_interval), ("evaluation interval", evaluation_interval)):
        if not _DURATION_RE.fullmatch(str(value)) or str(value) in ("", "0"):
            raise MonitoringError("%s %r is not a Prometheus duration. Fix: write it like 15s or 1m" % (what, value))
    sd_dir = str(sd_dir).rstrip("/")
    config = {
        "global": {"scrape_interval": str(scrape_interval), "evaluation_interval": str(evaluation_interval)},
        "rule_files": [str(rules_path)],
        "scrape_configs": [
            {"job_name": vllm_job, "metrics_path": "/metrics",
             "file_sd_configs": [{"files": ["%s/%s" % (sd_dir, VLLM_FILE)], "refresh_interval": "30s"}]},
            {"job_name": npu_exporter_job, "metrics_path": "/metrics",
             "file_sd_configs": [{"files": ["%s/%s" % (sd_dir, NPU_EXPORTER_FILE)], "refresh_interval": "30s"}]},
            {"job_name": GATEWAY_JOB, "metrics_path": "/metrics",
             "file_sd_configs": [{"files": ["%s/%s" % (sd_dir, GATEWAY_FILE)], "refresh_interval": "30s"}]},
        ],
    }
    if external_labels:
        config["global"]["external_labels"] = dict((str(k), str(val)) for k, val in external_labels.items())
    if alertmanagers:
        config["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [str(a) for a in alertmanagers]}]}]}
    return config


# --------------------------------------------------------------------------- dashboard

_PANEL_W = {"stat": 6, "timeseries": 12, "table": 24}
_PANEL_H = {"stat": 4, "timeseries": 8, "table": 8}


def _panels(vllm_job, npu_exporter_job):
    # type: (str, str) -> List[Dict[str, Any]]
    v = 'job="%s", host=~"$host", deployment=~"$deployment"' % vllm_job
    vh = 'job="%s", host=~"$host"' % vllm_job
    n = 'job="%s", host=~"$host"' % npu_exporter_job
    r = "$__rate_interval"
    by = "host, deployment"

    def p(kind, title, exprs, unit="short", legend="{{host}} {{deployment}}", desc=""):
        return {"kind": kind, "title": title, "unit": unit, "description": desc,
                "targets": [{"expr": e, "legendFormat": lf} for e, lf in
                            ((e if isinstance(e, tuple) else (e, legend)) for e in exprs)]}

    return [
        {"row": "Fleet"},
        p("stat", "Deployments up", ['sum(up{job="%s"})' % vllm_job], legend="up"),
        p("stat", "Deployments down", ['count(up{job="%s"} == 0) or vector(0)' % vllm_job], legend="down"),
        p("stat", "Unhealthy NPU chips", ['count(npu_chip_info_health_status{job="%s"} != 1) or vector(0)'
                                          % npu_exporter_job], legend="unhealthy"),
        p("stat", "Generation tokens/s", ['sum(rate(vllm:generation_tokens_total{job="%s"}[%s]))' % (vllm_job, r)],
          legend="tokens/s"),
        p("table", "Deployments", ['max by (host, deployment, model, served_model_name, image_version, '
                                   'image_current, revision, cards, instance) (up{job="%s"})' % vllm_job],
          desc="1 = up. Labels from the discovery files written by playbooks/monitoring.yml."),
        {"row": "Per host"},
        p("timeseries", "NPU chip health (1 = healthy)", ['npu_chip_info_health_status{%s}' % n],
          legend="{{host}} chip {{id}}"),
        p("timeseries", "NPU HBM used", ['npu_chip_info_hbm_used_memory{%s} / '
                                         '(npu_chip_info_hbm_total_memory{%s} > 0)' % (n, n)],
          unit="percentunit", legend="{{host}} chip {{id}}"),
        p("timeseries", "NPU chips per host", ['machine_npu_nums{%s}' % n], legend="{{host}}"),
        p("timeseries", "NPU power", ['npu_chip_info_power{%s}' % n], unit="watt", legend="{{host}} chip {{id}}"),
        p("timeseries", "Requests running per host", ['sum by (host) (vllm:num_requests_running{%s})' % vh],
          legend="{{host}}"),
        {"row": "Per deployment"},
        p("timeseries", "KV-cache usage", ['max by (%s) (vllm:kv_cache_usage_perc{%s})' % (by, v)], unit="percentunit"),
        p("timeseries", "Requests running and waiting",
          [('sum by (%s) (vllm:num_requests_running{%s})' % (by, v), "running {{host}} {{deployment}}"),
           ('sum by (%s) (vllm:num_requests_waiting{%s})' % (by, v), "waiting {{host}} {{deployment}}")]),
        p("timeseries", "Time to first token",
          [('histogram_quantile(0.5, sum by (%s, le) (rate(vllm:time_to_first_token_seconds_bucket{%s}[%s])))'
            % (by, v, r), "p50 {{host}} {{deployment}}"),
           ('histogram_quantile(0.95, sum by (%s, le) (rate(vllm:time_to_first_token_seconds_bucket{%s}[%s])))'
            % (by, v, r), "p95 {{host}} {{deployment}}")], unit="s"),
        p("timeseries", "Inter-token latency p95",
          ['histogram_quantile(0.95, sum by (%s, le) (rate(vllm:inter_token_latency_seconds_bucket{%s}[%s])))'
           % (by, v, r)], unit="s"),
        p("timeseries", "End-to-end request latency p95",
          ['histogram_quantile(0.95, sum by (%s, le) (rate(vllm:e2e_request_latency_seconds_bucket{%s}[%s])))'
           % (by, v, r)], unit="s"),
        p("timeseries", "Tokens/s",
          [('sum by (%s) (rate(vllm:prompt_tokens_total{%s}[%s]))' % (by, v, r), "prompt {{host}} {{deployment}}"),
           ('sum by (%s) (rate(vllm:generation_tokens_total{%s}[%s]))' % (by, v, r),
            "generation {{host}} {{deployment}}")]),
        p("timeseries", "Prefix-cache hit rate",
          ['sum by (%s) (rate(vllm:prefix_cache_hits_total{%s}[%s])) / '
           '(sum by (%s) (rate(vllm:prefix_cache_queries_total{%s}[%s])) > 0)' % (by, v, r, by, v, r)],
          unit="percentunit"),
        p("timeseries", "Requests finished/s", ['sum by (%s, finished_reason) (rate(vllm:request_success_total{%s}[%s]))'
                                                % (by, v, r)], legend="{{host}} {{deployment}} {{finished_reason}}"),
    ]


def dashboard(vllm_job=VLLM_JOB, npu_exporter_job=NPU_EXPORTER_JOB, title="ascendfleet.llm fleet", uid=DASHBOARD_UID):
    # type: (str, str, str, str) -> Dict[str, Any]
    """A Grafana dashboard (JSON model, schemaVersion 39) over the Prometheus data source."""
    ds = {"type": "prometheus", "uid": "${datasource}"}
    panels = []  # type: List[Dict[str, Any]]
    x = y = 0
    row_h = 0
    pid = 0
    for spec in _panels(vllm_job, npu_exporter_job):
        pid += 1
        if "row" in spec:
            if x:
                y += row_h
            x, row_h = 0, 0
            panels.append({"id": pid, "type": "row", "title": spec["row"], "collapsed": False,
                           "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
            y += 1
            continue
        w, h = _PANEL_W[spec["kind"]], _PANEL_H[spec["kind"]]
        if x + w > 24:
            x, y = 0, y + row_h
            row_h = 0
        panel = {
            "id": pid, "type": spec["kind"], "title": spec["title"], "datasource": ds,
            "gridPos": {"h": h, "w": w, "x": x, "y": y},
            "fieldConfig": {"defaults": {"unit": spec["unit"]}, "overrides": []},
            "options": {},
            "targets": [{"refId": chr(ord("A") + i), "datasource": ds, "expr": t["expr"],
                         "legendFormat": t["legendFormat"], "range": spec["kind"] != "table",
                         "instant": spec["kind"] == "table"} for i, t in enumerate(spec["targets"])],
        }
        if spec["description"]:
            panel["description"] = spec["description"]
        if spec["kind"] == "table":
            panel["transformations"] = [{"id": "labelsToFields", "options": {}}]
        panels.append(panel)
        x += w
        row_h = max(row_h, h)

    def var(name, query, label):
        return {"name": name, "label": label, "type": "query", "datasource": ds,
                "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
                "definition": query, "refresh": 2, "includeAll": True, "multi": True, "allValue": ".*",
                "current": {"selected": True, "text": ["All"], "value": ["$__all"]}, "sort": 1}
    return {
        "uid": uid,
        "title": title,
        "tags": ["ascendfleet", "vllm", "ascend"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "annotations": {"list": []},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0},
            var("host", 'label_values(up{job=~"%s|%s"}, host)' % (vllm_job, npu_exporter_job), "Host"),
            var("deployment", 'label_values(up{job="%s", host=~"$host"}, deployment)' % vllm_job, "Deployment"),
        ]},
        "panels": panels,
    }


_VAR_RE = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?::\w+)?\}|([A-Za-z_]\w*))")


def dashboard_queries(board, rate_interval="1m"):
    # type: (Mapping[str, Any], str) -> List[Dict[str, str]]
    """Every panel query of a dashboard with its variables replaced, ready for Prometheus.

    ``$host``/``$deployment`` (multi-value, "All") become ``.*``; ``$__rate_interval`` becomes
    ``rate_interval``. A variable the dashboard does not define raises MonitoringError.
    """
    defined = set(v["name"] for v in board.get("templating", {}).get("list", []))
    builtin = {"__rate_interval": rate_interval, "__interval": rate_interval, "__range": rate_interval}
    out = []
    for panel in board.get("panels", []):
        for target in panel.get("targets", []):
            expr = target["expr"]

            def sub(match, panel=panel):
                name = match.group(1) or match.group(2)
                if name in builtin:
                    return builtin[name]
                if name not in defined:
                    raise MonitoringError("panel %r uses $%s, which the dashboard does not define"
                                          % (panel.get("title"), name))
                return ".*"
            out.append({"panel": panel["title"], "refId": target["refId"], "expr": _VAR_RE.sub(sub, expr)})
    return out
