"""The fan-out plan of model_prefetch for every host of the run at once (module_utils/_prefetch_plan.py)."""

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._prefetch_plan import fanout_plan

QWEN = {"model": "Qwen/Qwen3.5-27B", "revision": "master"}
SMALL = {"model": "Qwen/Qwen3-8B", "revision": "master"}


def rec(host, missing=(), domain="rack1", models=(QWEN, SMALL), fanout=True):
    return {"host": host, "domain": domain, "address": host + ".fabric", "models": list(models),
            "missing": list(missing), "fanout": fanout}


def test_the_first_complete_host_seeds_its_domain_and_the_others_copy_from_it():
    plans = fanout_plan([rec("a", [QWEN]), rec("b"), rec("c", [QWEN, SMALL])])
    assert plans["b"] == {"seed": "b", "seed_address": "b.fabric", "domain_missing": [QWEN, SMALL],
                          "peers_missing": ["a", "c"], "own_fetch": [QWEN, SMALL], "copy": []}
    assert plans["a"] == {"seed": "b", "seed_address": "b.fabric", "domain_missing": [QWEN, SMALL],
                          "peers_missing": ["a", "c"], "own_fetch": [], "copy": [QWEN]}
    assert plans["c"]["copy"] == [QWEN, SMALL] and plans["c"]["own_fetch"] == []


def test_without_a_complete_host_the_first_host_with_models_seeds_and_fetches_what_the_domain_misses():
    plans = fanout_plan([rec("a", [QWEN], models=[]), rec("b", [SMALL]), rec("c", [QWEN])])
    # a stages no models: b is the first with models; the domain misses SMALL (b) and QWEN (a, c),
    # each once, in the order the hosts name them.
    assert plans["b"]["seed"] == "b" and plans["b"]["own_fetch"] == [QWEN, SMALL]
    assert plans["c"] == {"seed": "b", "seed_address": "b.fabric", "domain_missing": [QWEN, SMALL],
                          "peers_missing": ["a", "b", "c"], "own_fetch": [], "copy": [QWEN]}


def test_domains_are_planned_apart():
    plans = fanout_plan([rec("a", [QWEN]), rec("b", domain="rack2"), rec("c"), rec("d", [SMALL], domain="rack2")])
    assert (plans["a"]["seed"], plans["c"]["seed"]) == ("c", "c")
    assert (plans["b"]["seed"], plans["d"]["seed"]) == ("b", "b")
    assert plans["c"]["own_fetch"] == [QWEN] and plans["b"]["own_fetch"] == [SMALL]
    assert plans["a"]["peers_missing"] == ["a"] and plans["d"]["peers_missing"] == ["d"]


def test_a_complete_fleet_plans_nothing():
    plans = fanout_plan([rec("a"), rec("b")])
    assert all(p["own_fetch"] == [] and p["copy"] == [] and p["peers_missing"] == [] for p in plans.values())
    assert {p["seed"] for p in plans.values()} == {"a"}


def test_without_fanout_each_host_fetches_what_it_misses_itself():
    plans = fanout_plan([rec("a", [QWEN], fanout=False), rec("b", [SMALL], fanout=False)])
    assert plans["a"] == {"seed": "a", "seed_address": "a.fabric", "domain_missing": [], "peers_missing": [],
                          "own_fetch": [QWEN], "copy": []}
    assert plans["b"]["own_fetch"] == [SMALL]


def test_a_host_without_fanout_is_still_a_peer_of_its_domain():
    # As the per-host plan had it: a host with fan-out counts every host of its domain.
    plans = fanout_plan([rec("a", fanout=False), rec("b", [QWEN])])
    assert plans["b"]["seed"] == "a" and plans["b"]["copy"] == [QWEN]
    assert plans["a"]["own_fetch"] == []


@pytest.mark.parametrize("record,match", [
    ({"host": "a"}, "each record needs the keys"),
    (dict(rec("a"), fanout="False"), "fanout of a must be true or false"),
])
def test_malformed_records_are_refused(record, match):
    with pytest.raises(ValueError, match=match):
        fanout_plan([record])
