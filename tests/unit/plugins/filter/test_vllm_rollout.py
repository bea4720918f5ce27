"""The rollout filters as the role calls them (plugins/filter/vllm_rollout.py), on a deployment planned
by vllm_compose_plan for a 910B host."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ascendfleet.llm.plugins.filter.vllm_compose import vllm_compose_plan
from ansible_collections.ascendfleet.llm.plugins.filter.vllm_rollout import (
    FilterModule,
    vllm_rollout,
    vllm_rollout_gate,
    vllm_rollout_record,
    vllm_rollout_result,
    vllm_rollout_unit,
)

CHIPS = [{"device_id": d, "health": "OK", "hbm_total_mb": 65536} for d in range(8)]
MODELS = {"Qwen/Qwen3.5-27B": {"prefetched": True, "revision": "master", "weights_bytes": 0,
                               "config": {"text_config": {"max_position_embeddings": 262144}, "vision_config": {}}}}
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.17.0rc1", "os": "openeuler", "variant": None,
         "image": "", "digest": "", "mirror": ""}


def planned():
    deps = [{"name": "qwen", "preset": "qwen3.5-27b", "model": "Qwen/Qwen3.5-27B", "port": 8000}]
    return vllm_compose_plan(deps, "h1", family="910B", healthy_device_ids=["4", 5, 6, 7], chips=CHIPS,
                             models=MODELS, defaults={}, image=IMAGE)["deployments"][0]


def test_registered():
    assert FilterModule().filters() == {"vllm_rollout": vllm_rollout, "vllm_rollout_result": vllm_rollout_result,
                                        "vllm_rollout_gate": vllm_rollout_gate,
                                        "vllm_rollout_record": vllm_rollout_record,
                                        "vllm_rollout_unit": vllm_rollout_unit}


def test_the_unit_of_a_planned_deployment():
    assert vllm_rollout_unit(planned(), "h1") == {"members": ["h1"], "head": "h1", "role": "head", "multinode": False}
    with pytest.raises(AnsibleFilterError, match="vllm_rollout_unit: host must be an inventory name"):
        vllm_rollout_unit(planned(), None)
    with pytest.raises(AnsibleFilterError, match="vllm_rollout_unit: h2 is not one of its members|"
                                                 "vllm_rollout_unit: deployment qwen: h2 is not one of its members"):
        vllm_rollout_unit(dict(planned(), multinode={"members": ["h1", "h3"], "head": "h1"}), "h2")


def test_a_deployment_taken_through_the_filters():
    dep = planned()
    r = vllm_rollout("qwen", "planned", host="h1")
    r = vllm_rollout(r, "cards held", cards=[4, 5])
    # Ansible passes check_mode as a bool or, from some templates, a string.
    r = vllm_rollout(r, ["image present", "rendered"], check_mode="False", render_changed=True, live_checksum="a",
                     last_good_checksum="b")
    r = vllm_rollout(vllm_rollout(r, "started", fresh=True), ["gated", "recorded"])
    assert vllm_rollout_result(r, dep, "10.0.0.5") == {
        "host": "h1", "deployment": "qwen", "model": "Qwen/Qwen3.5-27B", "cards": [4, 5],
        "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "endpoint": "http://10.0.0.5:8000/v1",
        "served_model_name": "Qwen3.5-27B", "status": "deployed", "reason": ""}
    assert vllm_rollout_record(dep, [4, 5])["device_ids"] == [4, 5]
    assert vllm_rollout_gate(dep, "true", smoke=True)["fresh"] is True


def test_a_new_rollout_in_one_call():
    r = vllm_rollout("qwen", ["planned", "removed"], host="h1", cards=[2])
    assert vllm_rollout_result(r, planned(), "h")["status"] == "removed"


def test_errors_are_filter_errors():
    with pytest.raises(AnsibleFilterError, match="vllm_rollout: a rollout starts in state planned"):
        vllm_rollout("qwen", "gated")
    with pytest.raises(AnsibleFilterError, match="vllm_rollout: deployment qwen: no transition planned -> gated"):
        vllm_rollout(vllm_rollout("qwen", "planned"), "gated")
    with pytest.raises(AnsibleFilterError, match="vllm_rollout: input must be a rollout"):
        vllm_rollout(["qwen"], "gated")
    with pytest.raises(AnsibleFilterError, match="vllm_rollout_result: input must be a rollout"):
        vllm_rollout_result({"name": "qwen"}, {}, "h")
    with pytest.raises(AnsibleFilterError, match="vllm_rollout_gate: input must be a planned deployment"):
        vllm_rollout_gate(["qwen"], True)
    with pytest.raises(AnsibleFilterError, match="vllm_rollout_record: input must be a planned deployment"):
        vllm_rollout_record("qwen", [])
