"""The vllm_compose_plan filter with the arguments the role passes (facts as Ansible hands them over)."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ascendfleet.llm.plugins.filter.vllm_compose import (
    FilterModule,
    vllm_compose_host_question,
    vllm_compose_noop,
    vllm_compose_plan,
    vllm_compose_pull_failure,
    vllm_compose_roll_forward,
)

CHIPS = [{"device_id": d, "health": "OK", "hbm_total_mb": 65536} for d in range(8)]
MODELS = {"Qwen/Qwen3.5-27B": {"prefetched": True, "revision": "master", "weights_bytes": 0,
                               "config": {"text_config": {"max_position_embeddings": 262144}, "vision_config": {}}}}
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.17.0rc1", "os": "openeuler", "variant": None,
         "image": "", "digest": "", "mirror": ""}


def test_registered():
    assert FilterModule().filters() == {"vllm_compose_plan": vllm_compose_plan, "vllm_compose_noop": vllm_compose_noop,
                                        "vllm_compose_pull_failure": vllm_compose_pull_failure,
                                        "vllm_compose_roll_forward": vllm_compose_roll_forward,
                                        "vllm_compose_host_question": vllm_compose_host_question}


def test_the_question_asked_before_the_chips_is_the_plans_on_an_unchanged_host():
    # The deploy playbook's one read per host asks, before the chips are read, the question of the
    # deployments planned for each family without chips and cache; the plan, with both, asks the
    # same for the family the host has - so on an unchanged host the one read answers the plan.
    deps = [{"name": "qwen", "preset": "qwen3.5-27b", "model": "Qwen/Qwen3.5-27B", "revision": "master", "port": 8000}]
    asked = vllm_compose_host_question(deps, "npu-a01", defaults={}, image=IMAGE, drain_timeout=120)
    assert sorted(asked) == ["310P", "910B", "A3", "A5"]
    planned = vllm_compose_plan(deps, "npu-a01", family="910B", healthy_device_ids=list(range(8)), chips=CHIPS,
                                models=MODELS, defaults={}, image=IMAGE, drain_timeout=120)
    assert planned["errors"] == []
    assert vllm_compose_host_question(planned["deployments"]) == asked["910B"] == [
        {"name": "qwen", "port": 8000, "devices": None, "card_count": 2,
         "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "model": "Qwen/Qwen3.5-27B", "revision": "master"}]
    # The A3 image is another question (another answer from the host).
    assert asked["A3"][0]["image"] == "quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler"
    # A deployment list the planner refuses outright asks nothing (the plan reads the host itself).
    assert vllm_compose_host_question("not a list", "npu-a01", families=["910B"]) == {"910B": []}


def test_pull_failure_as_the_role_calls_it():
    # stderr of `docker pull` on the sim hosts (Docker 20.10.24) against Debian's docker-registry.
    stderr = ('Error response from daemon: manifest for reg:5000/quay.io/ascend/vllm-ascend:v0.99.0rc1-openeuler '
              'not found: manifest unknown: manifest unknown')
    text = vllm_compose_pull_failure(stderr, "reg:5000/quay.io/ascend/vllm-ascend:v0.99.0rc1-openeuler")
    assert text.startswith("reg:5000 does not serve it (no such tag, or no such digest in that repository). Fix: ")


def test_as_the_role_calls_it():
    deps = [{"name": "qwen", "preset": "qwen3.5-27b", "model": "Qwen/Qwen3.5-27B"}]
    plan = vllm_compose_plan(deps, "h1", family="910B", healthy_device_ids=["4", 5, 6, 7], chips=CHIPS,
                             models=MODELS, defaults={}, image=IMAGE)
    assert plan["errors"] == []
    assert plan["deployments"][0]["image"] == "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"
    assert plan["deployments"][0]["served_model_name"] == "Qwen3.5-27B"


def test_hbm_from_healthy_chips_only():
    chips = [{"device_id": 0, "health": "OK", "hbm_total_mb": 1024}] + CHIPS[1:]
    models = {"Qwen/Qwen3.5-27B": dict(MODELS["Qwen/Qwen3.5-27B"], weights_bytes=54 * 1024 ** 3)}
    deps = [{"name": "qwen", "preset": "qwen3.5-27b", "model": "Qwen/Qwen3.5-27B"}]
    assert vllm_compose_plan(deps, "h1", "910B", [4, 5], chips, models, image=IMAGE)["errors"] == []
    errors = vllm_compose_plan(deps, "h1", "910B", [0, 4], chips, models, image=IMAGE)["errors"]
    assert len(errors) == 1 and "GiB usable per card (1024 MiB HBM x gpu_memory_utilization 0.95)" in errors[0]


def test_bad_device_ids_raise_filter_error():
    with pytest.raises(AnsibleFilterError, match="vllm_compose_plan: "):
        vllm_compose_plan([], "h1", "910B", ["x"])
