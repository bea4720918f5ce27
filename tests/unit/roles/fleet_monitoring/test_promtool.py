"""The shipped rules and Prometheus configuration, checked by the real promtool.

promtool comes from Debian's prometheus package (scripts/ensure-promtool.sh puts it in the
virtualenv; `make unit` runs that and sets ASCENDFLEET_REQUIRE_PROMTOOL=1, so a missing promtool
fails there instead of skipping). The rules are rendered exactly as the fleet_monitoring role
renders them: the filter with the role's default thresholds.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_monitoring import (
    NPU_EXPORTER_FILE,
    RULES_FILE,
    VLLM_FILE,
    file_sd,
    prometheus_config,
    rule_groups,
)

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parents[3]
DEFAULTS = yaml.safe_load((ROOT / "roles" / "fleet_monitoring" / "defaults" / "main.yml").read_text())
RECORDS = json.loads((ROOT / "tests" / "unit" / "fixtures" / "status" / "sim-fleet-records.json").read_text())


def _promtool():
    found = shutil.which("promtool") or shutil.which("promtool", path=os.path.dirname(sys.executable))
    if not found:
        if os.environ.get("ASCENDFLEET_REQUIRE_PROMTOOL") == "1":
            pytest.fail("promtool is missing: run scripts/ensure-promtool.sh .venv")
        pytest.skip("promtool is not installed (scripts/ensure-promtool.sh .venv)")
    return found


def _role_thresholds():
    from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_monitoring import THRESHOLDS
    return dict((name, DEFAULTS["fleet_monitoring_" + name]) for name in THRESHOLDS)


def _write_rules(directory):
    path = directory / RULES_FILE
    path.write_text(yaml.safe_dump(rule_groups(_role_thresholds(), DEFAULTS["fleet_monitoring_vllm_job"],
                                               DEFAULTS["fleet_monitoring_npu_exporter_job"]), sort_keys=False))
    return path


def _run(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, check=False)


def test_rules_pass_promtool_check_rules(tmp_path):
    result = _run(_promtool(), "check", "rules", str(_write_rules(tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 18 rules found" in result.stdout


def test_every_alert_has_a_firing_and_a_quiet_promtool_test(tmp_path):
    _write_rules(tmp_path)
    shutil.copy(HERE / "rules_test.yml", tmp_path / "rules_test.yml")
    tests = yaml.safe_load((HERE / "rules_test.yml").read_text())["tests"]
    alerts = [r["alert"] for r in rule_groups()["groups"][1]["rules"]]
    for alert in alerts:
        cases = [c for t in tests for c in t.get("alert_rule_test", []) if c["alertname"] == alert]
        assert any(c["exp_alerts"] for c in cases), "%s has no firing test" % alert
        assert any(not c["exp_alerts"] for c in cases), "%s has no not-firing test" % alert
    result = _run(_promtool(), "test", "rules", str(tmp_path / "rules_test.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_a_wrong_expectation_fails_promtool_test(tmp_path):
    """The promtool tests can fail: the same file with the KV threshold raised to 0.99."""
    path = tmp_path / RULES_FILE
    values = dict(_role_thresholds(), kv_cache_usage_threshold=0.99)
    path.write_text(yaml.safe_dump(rule_groups(values), sort_keys=False))
    shutil.copy(HERE / "rules_test.yml", tmp_path / "rules_test.yml")
    result = _run(_promtool(), "test", "rules", str(tmp_path / "rules_test.yml"))
    assert result.returncode != 0
    assert "AscendfleetKVCacheHigh" in result.stdout + result.stderr


def test_generated_prometheus_config_and_discovery_pass_promtool_check_config(tmp_path):
    sd = tmp_path / "file_sd"
    sd.mkdir()
    records = json.loads(json.dumps(RECORDS))
    records[0]["npu_exporter"] = {"port": 8082}
    # One deployment on the revisions cache layout: its revision labels pass check config too.
    records[0]["observed"]["deployments"][0]["containers"][0]["revision_key"] = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
    records[0]["plan"]["deployments"][0]["revision_key"] = "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"
    targets = file_sd(records)
    assert sum("revision" in g["labels"] for g in targets["vllm"]) == 1
    (sd / VLLM_FILE).write_text(json.dumps(targets["vllm"]))
    (sd / NPU_EXPORTER_FILE).write_text(json.dumps(targets["npu_exporter"]))
    rules = _write_rules(tmp_path)
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump(prometheus_config(str(sd), str(rules), "5s", "5s", alertmanagers=["am:9093"])))
    result = _run(_promtool(), "check", "config", str(config))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 1 rule files found" in result.stdout
    # check config reads the rule files it names: a broken one fails it.
    rules.write_text("groups: [{name: x, rules: [{alert: A, expr: 'up ==='}]}]\n")
    result = _run(_promtool(), "check", "config", str(config))
    assert result.returncode != 0
