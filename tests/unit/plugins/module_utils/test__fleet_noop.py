"""_fleet_noop.decide and the filter fleet_noop_hosts: which hosts of a deploy run have nothing to do
(issue 30). A host is a no-op only when every role's verdict says so; each way a host can differ
sends it through the full path, with its reason."""
from ansible_collections.ascendfleet.llm.plugins.filter.fleet_noop import fleet_noop_hosts
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_noop import decide

UNCHANGED = {"unchanged": True, "reasons": [], "deployments": [{"name": "qwen", "unchanged": True, "reasons": []}],
             "kept": ["qwen"], "results": []}


def record(host, **over):
    rec = {"host": host, "verdict": "pass", "prefetch": {"shared": True, "missing": [], "domain": "all", "fanout": True},
           "noop": UNCHANGED, "multinode": False, "gateway": False}
    rec.update(over)
    return rec


def test_every_role_finding_nothing_to_do_makes_a_no_op_host():
    assert decide([record("a"), record("b", verdict="warn")]) == {"noop": ["a", "b"], "reasons": {}}


def test_each_difference_sends_the_host_through_the_full_path():
    changed = {"unchanged": False, "reasons": [],
               "deployments": [{"name": "qwen", "unchanged": False,
                                "reasons": ["gate: the live compose.yaml is not last-known-good (no gate passed on it: "
                                            "a run stopped before its gate, or skipped it)"]}]}
    cases = {
        "chip-fails": record("chip-fails", verdict="fail"),
        "not-judged": record("not-judged", verdict=None),
        "shard-missing": record("shard-missing", prefetch={"shared": True, "missing": ["Qwen/Qwen3.5-27B"], "domain": "d2",
                                                           "fanout": True}),
        "cache-not-shared": record("cache-not-shared", prefetch={"shared": False, "missing": None, "domain": "d3", "fanout": True}),
        "not-planned": record("not-planned", noop=None),
        "plan-changes": record("plan-changes", noop=changed),
        "plan-refused": record("plan-refused", noop={"unchanged": False, "reasons": ["pre-flight refusals"], "deployments": []}),
        "member": record("member", multinode=True),
        "orphan-to-warn-about": record("orphan-to-warn-about", warnings=[{"name": "old", "host": "orphan-to-warn-about"}]),
        "gateway": record("gateway", gateway=True),
    }
    out = decide(list(cases.values()) + [record("ok")])
    assert out["noop"] == ["ok"]
    assert sorted(out["reasons"]) == sorted(cases)
    assert out["reasons"]["chip-fails"] == ["npu_verify: verdict fail"]
    assert out["reasons"]["shard-missing"] == ["model_prefetch: missing Qwen/Qwen3.5-27B"]
    assert out["reasons"]["plan-changes"] == [
        "vllm_compose: qwen: gate: the live compose.yaml is not last-known-good (no gate passed on it: "
        "a run stopped before its gate, or skipped it)"]
    assert out["reasons"]["plan-refused"] == ["vllm_compose: pre-flight refusals"]
    assert out["reasons"]["member"] == ["member of a multi-node deployment"]
    assert out["reasons"]["orphan-to-warn-about"] == ["vllm_compose: warnings to show (1)"]


def test_a_host_missing_a_model_keeps_its_whole_fan_out_domain_in_the_full_path():
    missing = {"shared": True, "missing": ["Qwen/Qwen3.5-27B"], "domain": "rack1", "fanout": True}
    out = decide([record("seed", prefetch={"shared": True, "missing": [], "domain": "rack1", "fanout": True}),
                  record("peer", prefetch=missing),
                  record("other-rack", prefetch={"shared": True, "missing": [], "domain": "rack2", "fanout": True}),
                  record("no-fanout", prefetch={"shared": True, "missing": [], "domain": "rack1", "fanout": False})])
    assert out["noop"] == ["other-rack", "no-fanout"]
    assert out["reasons"]["seed"] == ["model_prefetch: a host of fan-out domain rack1 misses a model"]


class FakeHostVars(dict):
    """hostvars as a filter sees it: host -> that host's variables (a mapping with get)."""


def test_the_filter_reads_each_hosts_verdicts_from_hostvars():
    prefetch = {"shared": True, "missing": [], "domain": "all", "fanout": True}
    hostvars = FakeHostVars({
        "a": {"ascendfleet_npu": {"verdict": "pass"}, "__model_prefetch_noop": prefetch, "__vllm_compose_planned": True,
              "__vllm_compose_noop": UNCHANGED},
        # Planned by an earlier run's plan that did not finish (planned false): not a no-op.
        "b": {"ascendfleet_npu": {"verdict": "pass"}, "__model_prefetch_noop": prefetch, "__vllm_compose_planned": False,
              "__vllm_compose_noop": UNCHANGED},
        "c": {"ascendfleet_npu": {"verdict": "pass"}, "__model_prefetch_noop": prefetch, "__vllm_compose_planned": True,
              "__vllm_compose_noop": UNCHANGED},
        "d": {},
    })
    assert fleet_noop_hosts(["a", "b", "c", "d"], hostvars, multinode=["c"]) == ["a"]
    whole = fleet_noop_hosts(["a", "b", "c", "d"], hostvars, multinode=["c"], reasons=True)
    assert whole["reasons"]["b"] == ["vllm_compose: not planned"]
    assert whole["reasons"]["c"] == ["member of a multi-node deployment"]
    assert "npu_verify: verdict None" in whole["reasons"]["d"]
