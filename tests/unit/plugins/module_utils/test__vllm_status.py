"""Tests of the pure status parsing (plugins/module_utils/_vllm_status.py)."""
import datetime
import pathlib

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import parse_info
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_status import (
    StatusParseError,
    chip_rows,
    parse_containers,
    parse_docker_time,
    parse_metrics,
    parse_models,
    uptime_seconds,
)

HERE = pathlib.Path(__file__).parent
FIX = HERE / "fixtures" / "vllm_status"
NPU = HERE / "fixtures" / "npu_smi"
UTC = datetime.timezone.utc

# Two data-parallel engines of one served model, as vLLM V1 exports them (see SOURCES.md).
METRICS_DP2 = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen"} 3.0
vllm:num_requests_running{engine="1",model_name="Qwen"} 2.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="Qwen"} 1.0
vllm:num_requests_waiting{engine="1",model_name="Qwen"} 0.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen"} 0.4508
vllm:kv_cache_usage_perc{engine="1",model_name="Qwen"} 0.125
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="Qwen"} 63184.0
# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="Qwen"} 63184.0
python_gc_objects_collected_total{generation="0"} 12.0
"""

# Older vLLM (V0) names the KV-cache gauge gpu_cache_usage_perc and has no engine label.
METRICS_V0 = """\
vllm:num_requests_running{model_name="qwen-27b"} 2.0
vllm:num_requests_waiting{model_name="qwen-27b"} 1.0
vllm:gpu_cache_usage_perc{model_name="qwen-27b"} 0.25
"""


def test_metrics_sum_requests_over_engines_and_take_the_fullest_kv_cache():
    assert parse_metrics(METRICS_DP2) == {
        "requests_running": 5.0,
        "requests_waiting": 1.0,
        "kv_cache_usage_pct": 45.1,
        "engines": 2,
        "model_names": ["Qwen"],
    }


def test_metrics_fall_back_to_the_older_gpu_cache_name():
    got = parse_metrics(METRICS_V0)
    assert (got["requests_running"], got["requests_waiting"], got["kv_cache_usage_pct"]) == (2.0, 1.0, 25.0)
    assert got["engines"] == 1 and got["model_names"] == ["qwen-27b"]


def test_metrics_missing_or_nan_are_none():
    got = parse_metrics('vllm:num_requests_running{engine="0"} NaN\n# nothing else\n')
    assert got["requests_running"] is None
    assert got["requests_waiting"] is None and got["kv_cache_usage_pct"] is None


def test_metrics_label_values_may_hold_quotes_braces_and_timestamps():
    text = 'vllm:num_requests_waiting{model_name="a \\"b\\" {c}",engine="0"} 7 1700000000000\n'
    got = parse_metrics(text)
    assert got["requests_waiting"] == 7.0
    assert got["model_names"] == ['a "b" {c}']


def test_metrics_garbage_names_the_line():
    with pytest.raises(StatusParseError, match=r"line 2 of /metrics .*<html>"):
        parse_metrics("# HELP x\n<html>not metrics</html>\n")


def test_models_lists_ids():
    body = '{"object":"list","data":[{"id":"Qwen","object":"model","owned_by":"vllm","max_model_len":133000}]}'
    assert parse_models(body) == ["Qwen"]


@pytest.mark.parametrize("body", ["Internal Server Error", '{"error": "no"}', "[]"])
def test_models_rejects_what_is_not_a_model_list(body):
    with pytest.raises(StatusParseError, match="/v1/models"):
        parse_models(body)


def test_docker_time_with_nanoseconds_and_zero_time():
    assert parse_docker_time("2026-11-30T16:04:49.076660628Z") == datetime.datetime(
        2026, 11, 30, 16, 4, 49, 76660, tzinfo=UTC)
    assert parse_docker_time("2026-11-30T17:04:49+01:00") == datetime.datetime(2026, 11, 30, 16, 4, 49, tzinfo=UTC)
    assert parse_docker_time("0001-01-01T00:00:00Z") is None
    with pytest.raises(StatusParseError):
        parse_docker_time("yesterday")


def test_running_compose_container_from_real_docker_inspect():
    text = (FIX / "docker-inspect-20.10.24-compose-running.json").read_text()
    now = datetime.datetime(2026, 11, 30, 17, 4, 49, 76660, tzinfo=UTC)
    projects = parse_containers(text, now)
    assert list(projects) == ["operator-fixture-qwen"]
    (container,) = projects["operator-fixture-qwen"]
    assert container["name"] == "operator-fixture-qwen-vllm-ascend-1"
    assert container["service"] == "vllm-ascend"
    assert container["image"] == "ascendfleet-sim/base:latest"
    assert container["image_id"] == "sha256:02291765810b1e6fdd0d2f7a3ebf42762dbb5f7830fbe207f522be39644b5b2b"
    assert container["state"] == "running"
    assert container["restarts"] == 0
    assert container["uptime_seconds"] == 3600
    assert container["port"] == 8000
    assert container["served_model_name"] == "Qwen"
    assert container["model"] == "Qwen/Qwen3.5-27B@master"
    assert container["deployment"] == "operator-fixture-qwen"
    assert container["health"] is None


def test_restarting_container_has_no_uptime_and_counts_restarts():
    text = (FIX / "docker-inspect-20.10.24-compose-restarting.json").read_text()
    (container,) = parse_containers(text, datetime.datetime(2026, 11, 30, 17, 0, tzinfo=UTC))["operator-fixture-qwen"]
    assert container["state"] == "restarting"
    assert container["restarts"] == 6
    assert container["exit_code"] == 1
    assert container["uptime_seconds"] is None
    assert container["port"] == 8000


def test_containers_without_compose_label_are_left_out_and_bad_json_is_named():
    assert parse_containers('[{"Config": {"Labels": {}}, "State": {}}]', datetime.datetime.now(UTC)) == {}
    assert parse_containers("", datetime.datetime.now(UTC)) == {}
    with pytest.raises(StatusParseError, match="docker inspect"):
        parse_containers("Error: No such object", datetime.datetime.now(UTC))


def test_uptime():
    assert uptime_seconds("350735.47 234388.90\n") == 350735
    with pytest.raises(StatusParseError, match="/proc/uptime"):
        uptime_seconds("")


def test_chip_rows_on_the_seed_host():
    # The seed's 910B2 host: chips 0-3 run a foreign vLLM TP job (60891 MB each), 4-7 idle.
    info = parse_info((NPU / "910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt").read_text())
    chips = [c.to_dict() for c in info.chips]
    rows = chip_rows(chips, {"qwen": [4, 5]}, {1316011: None, 1316012: "other-job"})
    assert [r["state"] for r in rows] == ["busy"] * 4 + ["idle"] * 4
    assert [r["holder"] for r in rows] == [None] * 4 + ["qwen", "qwen", None, None]
    assert rows[0]["processes"] == ["?"]
    assert rows[1]["processes"] == ["other-job"]
    assert rows[2]["processes"] == ["?"]
    assert rows[4]["processes"] == []
    assert rows[0]["hbm_used_pct"] == 98.0   # 64231 / 65536
    assert rows[4]["hbm_used_pct"] == 5.2    # 3390 / 65536


def test_chip_rows_unhealthy_and_used_without_process():
    chips = [
        {"device_id": 0, "health": "Warning", "processes": [], "idle": False, "hbm_used_mb": 3390, "hbm_total_mb": 65536},
        {"device_id": 1, "health": "OK", "processes": [], "idle": False, "hbm_used_mb": 60000, "hbm_total_mb": 65536},
        {"device_id": 2, "health": "OK", "processes": [], "idle": True, "hbm_used_mb": None, "hbm_total_mb": None,
         "memory_used_mb": 1000, "memory_total_mb": 44280},
    ]
    rows = chip_rows(chips, {})
    assert [r["state"] for r in rows] == ["unhealthy", "used", "idle"]
    assert rows[2]["hbm_used_pct"] == 2.3


def test_the_revision_label_names_the_directory_a_container_mounts():
    # The recorded inspect output with the label vllm_compose adds in the revisions cache layout.
    import json
    data = json.loads((FIX / "docker-inspect-20.10.24-compose-running.json").read_text())
    now = datetime.datetime(2026, 11, 30, 17, 4, 49, 76660, tzinfo=UTC)
    assert "revision_key" not in parse_containers(json.dumps(data), now)["operator-fixture-qwen"][0]
    data[0]["Config"]["Labels"]["io.ascendfleet.llm.revision_key"] = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
    (container,) = parse_containers(json.dumps(data), now)["operator-fixture-qwen"]
    assert container["revision_key"] == "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
