"""Tests of the monitoring configuration (plugins/module_utils/_fleet_monitoring.py).

The promtool checks of the same rules and configuration are in tests/unit/roles/fleet_monitoring/.
"""
import copy
import json
import pathlib

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_monitoring import (
    THRESHOLDS,
    MonitoringError,
    dashboard,
    dashboard_queries,
    file_sd,
    gateway_sd,
    prometheus_config,
    rule_groups,
    thresholds,
)

from .test__fleet_status import COMMIT_A, COMMIT_B
from .test__fleet_status import _revision_records as status_revision_records

RECORDS = json.loads((pathlib.Path(__file__).parents[2] / "fixtures" / "status" / "sim-fleet-records.json").read_text())


def _records(**extra):
    records = copy.deepcopy(RECORDS)
    for record in records:
        record.update(extra)
    return records


def test_one_group_per_deployment_with_its_labels():
    records = _records()
    records[0]["address"] = "10.0.0.11"
    groups = file_sd(records)["vllm"]
    assert [g["labels"]["host"] for g in groups] == ["sim-310p-duo", "sim-910b2-seed", "sim-910b3-idle", "sim-a3-16chips"]
    seed = groups[1]
    assert seed == {"targets": ["10.0.0.11:8000"], "labels": {
        "host": "sim-910b2-seed", "deployment": "qwen", "model": "Qwen/Qwen3.5-27B", "served_model_name": "Qwen",
        "image_version": "v0.17.0rc1-openeuler",
        "image_running": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler",
        "image_desired": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler",
        "image_current": "true", "cards": "4,5"}}
    # No address given: Prometheus reaches the host by its inventory name.
    assert groups[0]["targets"] == ["sim-310p-duo:8000"]


def test_pending_rollout_is_labelled_not_current_with_both_images():
    labels = file_sd(_records())["vllm"][2]["labels"]
    assert labels["host"] == "sim-910b3-idle"
    assert (labels["image_current"], labels["image_version"]) == ("false", "v0.17.0rc1-openeuler")
    assert labels["image_desired"] == "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"
    assert labels["cards"] == "0,1"


def test_a_stopped_deployment_keeps_its_target_so_prometheus_sees_it_down():
    records = _records()
    records[1]["observed"]["deployments"] = []
    (idle,) = [g for g in file_sd(records)["vllm"] if g["labels"]["host"] == "sim-910b3-idle"]
    assert idle["targets"] == ["sim-910b3-idle:8000"]
    assert idle["labels"]["image_running"] == "" and idle["labels"]["image_current"] == "unknown"
    assert idle["labels"]["image_version"] == "v0.18.0rc1-openeuler"


def test_an_unreadable_host_keeps_its_inventory_deployments():
    record = {"host": "sim-gone", "address": "10.0.0.99",
              "observed": {"unreachable": True, "msg": "Failed to connect"}, "plan": {},
              "deployments": [{"name": "chat", "model": "Qwen/Qwen3-8B", "port": 8001},
                              {"name": "old", "model": "Qwen/Qwen3-8B", "state": "absent"}],
              "npu_exporter": {"port": 9100}}
    sd = file_sd([record])
    assert sd["vllm"] == [{"targets": ["10.0.0.99:8001"], "labels": {
        "host": "sim-gone", "deployment": "chat", "model": "Qwen/Qwen3-8B", "served_model_name": "Qwen/Qwen3-8B",
        "image_version": "", "image_running": "", "image_desired": "", "image_current": "unknown", "cards": ""}}]
    assert sd["npu_exporter"] == [{"targets": ["10.0.0.99:9100"], "labels": {"host": "sim-gone", "__scheme__": "http"}}]


# The revisions cache layout (issue 29): the container's label names the revision directory it mounts
# (vllm_status), the plan the revision its name resolves to in the host's cache now; the records are
# the fleet status tests' (serving, desired, last-known-good).
def _revision_records(serving, desired):
    return status_revision_records(serving, desired, serving)


def _seed_labels(records):
    (seed,) = [g for g in file_sd(records)["vllm"] if g["labels"]["host"] == "sim-910b2-seed"]
    return seed["labels"]


def test_a_deployment_on_the_revisions_layout_is_labelled_with_the_revision_it_serves():
    labels = _seed_labels(_revision_records(COMMIT_B, COMMIT_B))
    assert (labels["revision"], labels["revision_desired"], labels["revision_current"]) == (COMMIT_B, COMMIT_B, "true")
    # The other hosts' records are of the flat layout: no revision labels at all.
    assert [sorted(k for k in g["labels"] if k.startswith("revision")) for g in file_sd(_revision_records(COMMIT_B, COMMIT_B))["vllm"]
            if g["labels"]["host"] != "sim-910b2-seed"] == [[], [], []]


def test_a_rolled_back_revision_is_labelled_not_current_with_both():
    labels = _seed_labels(_revision_records(COMMIT_A, COMMIT_B))
    assert (labels["revision"], labels["revision_desired"], labels["revision_current"]) == (COMMIT_A, COMMIT_B, "false")
    # The image is the desired one: only the revision differs.
    assert labels["image_current"] == "true"


def test_a_stopped_deployment_on_the_revisions_layout_has_an_unknown_revision():
    records = _revision_records(COMMIT_B, COMMIT_B)
    records[0]["observed"]["deployments"][0]["containers"] = []
    labels = _seed_labels(records)
    assert (labels["revision"], labels["revision_desired"], labels["revision_current"]) == ("", COMMIT_B, "unknown")


def test_npu_exporter_only_where_the_site_runs_one():
    records = _records()
    records[0]["npu_exporter"] = {"port": 8082}
    records[2]["npu_exporter"] = {"port": 18082, "scheme": "https"}
    sd = file_sd(records)
    assert sd["npu_exporter"] == [
        {"targets": ["sim-910b2-seed:8082"], "labels": {"host": "sim-910b2-seed", "__scheme__": "http", "npu_family": "910B"}},
        {"targets": ["sim-a3-16chips:18082"], "labels": {"host": "sim-a3-16chips", "__scheme__": "https", "npu_family": "A3"}},
    ]


def test_ipv6_address_is_bracketed():
    records = _records()[:1]
    records[0]["address"] = "fd00::11"
    assert file_sd(records)["vllm"][0]["targets"] == ["[fd00::11]:8000"]


@pytest.mark.parametrize("change, message", [
    ({"npu_exporter": {"port": 70000}}, "sim-910b2-seed: NPU exporter port: 70000 is not a port number"),
    ({"npu_exporter": {"port": "x"}}, "sim-910b2-seed: NPU exporter port: 'x' is not a port number"),
    ({"npu_exporter": {"scheme": "ftp"}}, "NPU exporter scheme 'ftp'"),
    ({"host": ""}, "a host record has no host name"),
])
def test_bad_records_are_errors_that_name_the_host(change, message):
    records = _records()[:1]
    records[0].update(change)
    with pytest.raises(MonitoringError, match=message.replace("(", r"\(")):
        file_sd(records)


def test_a_host_listed_twice_is_an_error():
    records = _records()[:1] * 2
    with pytest.raises(MonitoringError, match="host sim-910b2-seed is listed twice"):
        file_sd(records)


def test_thresholds_defaults_and_validation():
    assert thresholds()["kv_cache_usage_threshold"] == 0.9
    assert thresholds({"requests_waiting_threshold": "3"})["requests_waiting_threshold"] == 3
    for values, message in [
        ({"kv_cache_usage_threshold": 90}, "fleet_monitoring_kv_cache_usage_threshold: 90 is not a ratio"),
        ({"ttft_quantile": 1}, "is not a quantile"),
        ({"deployment_down_for": "2 minutes"}, "fleet_monitoring_deployment_down_for: '2 minutes' is not a Prometheus duration"),
        ({"deployment_down_for": "0"}, "is not a Prometheus duration"),
        ({"ttft_threshold_seconds": True}, "is not a number"),
        ({"requests_waiting_threshold": -1}, "must be 0 or more"),
        ({"kv_cache_threshold": 0.5}, "unknown threshold"),
    ]:
        with pytest.raises(MonitoringError, match=message):
            thresholds(values)


def test_rules_use_the_thresholds_and_the_job_names():
    rules = rule_groups({"kv_cache_usage_threshold": 0.8, "kv_cache_usage_for": "3m"}, vllm_job="llm", npu_exporter_job="npu")
    alerts = dict((r["alert"], r) for r in rules["groups"][1]["rules"])
    assert sorted(alerts) == sorted([
        "AscendfleetDeploymentDown", "AscendfleetKVCacheHigh", "AscendfleetRequestsQueueing",
        "AscendfleetTimeToFirstTokenHigh", "AscendfleetNPUChipUnhealthy", "AscendfleetNPUMemoryNearlyFull",
        "AscendfleetImageNotDesired", "AscendfleetRevisionNotDesired", "AscendfleetNPUExporterDown",
        "AscendfleetEngineHung"])
    assert alerts["AscendfleetKVCacheHigh"]["expr"] == "ascendfleet:vllm_kv_cache_usage:max > 0.8"
    assert alerts["AscendfleetKVCacheHigh"]["for"] == "3m"
    assert alerts["AscendfleetDeploymentDown"]["expr"] == 'up{job="llm"} == 0'
    assert alerts["AscendfleetNPUChipUnhealthy"]["expr"] == 'npu_chip_info_health_status{job="npu"} != 1'
    records = dict((r["record"], r["expr"]) for r in rules["groups"][0]["rules"])
    assert records["ascendfleet:vllm_kv_cache_usage:max"] == 'max by (host, deployment) (vllm:kv_cache_usage_perc{job="llm"})'
    # The deprecated (and in current vLLM removed) KV-cache gauge is not used.
    assert "gpu_cache_usage_perc" not in json.dumps(rules)
    with pytest.raises(MonitoringError, match="fleet_monitoring_vllm_job: 'a b' is not a usable job name"):
        rule_groups(vllm_job="a b")


def test_prometheus_config_scrapes_every_discovery_file():
    config = prometheus_config("/etc/prometheus/file_sd/", "/etc/prometheus/rules/ascendfleet-rules.yml", "5s", "5s",
                               alertmanagers=["am:9093"])
    assert [(j["job_name"], j["file_sd_configs"][0]["files"]) for j in config["scrape_configs"]] == [
        ("ascendfleet-vllm", ["/etc/prometheus/file_sd/ascendfleet-vllm.json"]),
        ("ascendfleet-npu-exporter", ["/etc/prometheus/file_sd/ascendfleet-npu-exporter.json"]),
        ("ascendfleet-gateway", ["/etc/prometheus/file_sd/ascendfleet-gateway.json"])]
    assert config["alerting"] == {"alertmanagers": [{"static_configs": [{"targets": ["am:9093"]}]}]}
    with pytest.raises(MonitoringError, match="scrape interval '5 s'"):
        prometheus_config("/d", "/r", "5 s")


def test_dashboard_structure_is_a_grafana_model():
    board = dashboard()
    assert board["uid"] == "ascendfleet-llm" and board["schemaVersion"] == 39
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    assert [p["title"] for p in board["panels"] if p["type"] == "row"] == ["Fleet", "Per host", "Per deployment"]
    seen = set()
    for panel in board["panels"]:
        g = panel["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0
        cells = set((x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"]))
        assert not cells & seen, "panel %r overlaps another" % panel["title"]
        seen |= cells
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        assert [t["refId"] for t in panel["targets"]] == ["A", "B"][:len(panel["targets"])]
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource", "host", "deployment"]
    json.dumps(board)  # JSON-serialisable


def test_dashboard_queries_replace_the_variables():
    queries = dashboard_queries(dashboard())
    assert len(queries) == sum(len(p.get("targets", [])) for p in dashboard()["panels"])
    for q in queries:
        assert "$" not in q["expr"], q
    kv = [q for q in queries if q["panel"] == "KV-cache usage"][0]
    assert kv["expr"] == 'max by (host, deployment) (vllm:kv_cache_usage_perc{job="ascendfleet-vllm", host=~".*", deployment=~".*"})'
    board = dashboard()
    board["panels"][1]["targets"][0]["expr"] = "up{host=~\"$cluster\"}"
    with pytest.raises(MonitoringError, match=r"uses \$cluster, which the dashboard does not define"):
        dashboard_queries(board)


def test_every_threshold_is_a_role_variable():
    defaults = (pathlib.Path(__file__).parents[4] / "roles" / "fleet_monitoring" / "defaults" / "main.yml").read_text()
    for name, (_kind, default) in THRESHOLDS.items():
        assert "\nfleet_monitoring_%s: %s\n" % (name, default) in defaults, name


def test_gateway_targets_from_the_gateways():
    assert gateway_sd([{"host": "gw-b", "address": "10.0.0.3", "port": 9405}, {"host": "gw-a"}]) == [
        {"targets": ["gw-a:8405"], "labels": {"host": "gw-a"}},
        {"targets": ["10.0.0.3:9405"], "labels": {"host": "gw-b"}}]
    assert gateway_sd([]) == []
    with pytest.raises(MonitoringError, match="gw: fleet_gateway_metrics_port: 'x' is not a port number"):
        gateway_sd([{"host": "gw", "port": "x"}])
    with pytest.raises(MonitoringError, match="gateway gw is listed twice"):
        gateway_sd([{"host": "gw"}, {"host": "gw"}])
