"""Fidelity: every metric the shipped rules and dashboard read is one the stand-ins serve.

The two halves take the names from the real sources each on its own (the collection from vLLM's
and MindCluster's documentation, the stand-ins in tests/sim/ likewise, without importing the
collection); this test compares them, so a misspelt name on either side fails here and not in a
Grafana panel that stays empty on a real fleet.
"""
import importlib.util
import pathlib
import re
import sys

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_monitoring import (
    dashboard,
    dashboard_queries,
    rule_groups,
)

SIM = pathlib.Path(__file__).parents[4] / "tests" / "sim"
NAME_RE = re.compile(r"(?<![\w:])((?:vllm:|npu_|machine_npu)[A-Za-z0-9_:]*)")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def _served():
    vllm = _load("vllm_sim_fidelity", SIM / "vllm" / "vllm_sim.py")
    text = vllm.Metrics("0.17.0rc1").render("Qwen", "0.0")
    exporter = _load("npu_exporter_sim_fidelity", SIM / "npu" / "npu_exporter_sim.py")
    ascend = sys.modules.get("ascend_sim") or _load("ascend_sim", SIM / "npu" / "ascend_sim.py")
    profile = ascend.load_profile(str(SIM / "profiles" / "seed-910b2.json"))
    text += exporter.render(profile, {"dcmi": False, "health": {}}, {}, 0)
    return set(line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#"))


def test_every_metric_read_is_served_by_the_stand_ins():
    served = _served()
    exprs = [r["expr"] for g in rule_groups()["groups"] for r in g["rules"]]
    exprs += [q["expr"] for q in dashboard_queries(dashboard())]
    used = set(m for e in exprs for m in NAME_RE.findall(e))
    assert "vllm:time_to_first_token_seconds_bucket" in used and "npu_chip_info_health_status" in used
    missing = sorted(used - served)
    assert not missing, "read by the rules or dashboard but not served by the stand-ins: %s" % missing
