"""What a rollout changes on the way (plugins/module_utils/_roll_forward.py and the filter
vllm_compose_roll_forward): the running release is read from the compose file the role wrote (the
vllm_noop fixture compose-qwen.txt, a real rendering), the planned one from the plan; one block per
distinct release pair. Expected sentences: vllm-ascend v0.23.0 release notes (FlashComm1 env var ->
additional_config, #9064) as _release_changes.CHANGES words them, and the flags the vLLM 0.18.0 wheel
no longer has (_vllm_cli_data, test__release_changes.py)."""
import os

from ansible_collections.ascendfleet.llm.plugins.filter.vllm_compose import vllm_compose_roll_forward
from ansible_collections.ascendfleet.llm.plugins.module_utils import _roll_forward as rf

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "vllm_noop")
with open(os.path.join(FIXTURES, "compose-qwen.txt")) as _handle:
    COMPOSE_017 = _handle.read()
V018_DROPS = "v0.18.0rc1 (vLLM 0.18.0) removes the flags --no-use-gpu-for-pooling-score, --swap-space, --use-gpu-for-pooling-score"
FC1 = "VLLM_ASCEND_ENABLE_FLASHCOMM1 is --additional-config '{\"enable_flashcomm1\": true}' from v0.23.0"


def plan(image, name="qwen"):
    return {"deployments": [{"name": name, "image": image}]}


def states(compose=COMPOSE_017, name="qwen"):
    return {name: {"compose": compose}}


def test_the_running_image_is_read_from_the_compose_file():
    assert rf.compose_image(COMPOSE_017) == "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"
    assert rf.compose_image("services:\n  vllm:\n    image: mirror:5000/x/y:v0.18.0\n") == "mirror:5000/x/y:v0.18.0"
    assert rf.compose_image(None) is None and rf.compose_image("name: x\n") is None


def test_rolls_pair_the_plan_with_the_host():
    assert rf.rolls("npu-01", plan("quay.io/ascend/vllm-ascend:v0.26.0rc1-openeuler"), states()) == [
        {"host": "npu-01", "deployment": "qwen", "from": "v0.17.0rc1", "to": "v0.26.0rc1"}]
    # Same release, a new deployment (no compose file), an explicit image without a release: no roll.
    assert rf.rolls("npu-01", plan("quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"), states()) == []
    assert rf.rolls("npu-01", plan("quay.io/ascend/vllm-ascend:v0.26.0rc1"), {}) == []
    assert rf.rolls("npu-01", plan("registry.local/vllm:custom"), states()) == []
    assert rf.rolls("npu-01", None, states()) == []


def test_one_block_per_release_pair_listing_every_change_on_the_way():
    entries = (rf.rolls("npu-02", plan("quay.io/ascend/vllm-ascend:v0.26.0rc1-openeuler"), states())
               + rf.rolls("npu-01", plan("quay.io/ascend/vllm-ascend:v0.26.0rc1-openeuler"), states())
               + rf.rolls("npu-03", plan("quay.io/ascend/vllm-ascend:v0.18.0-openeuler"), states()))
    lines = rf.report(entries)
    assert lines[:2] == ["v0.17.0rc1 -> v0.18.0 (roll forward on npu-03/qwen): 1 change on the way:", "  - " + V018_DROPS]
    assert lines[2] == "v0.17.0rc1 -> v0.26.0rc1 (roll forward on npu-01/qwen, npu-02/qwen): 7 changes on the way:"
    assert "  - " + FC1 in lines[3:] and "  - " + V018_DROPS in lines[3:]
    assert "  - v0.24.0rc1 (vLLM 0.24.0) removes the tool-call parser minimax" in lines[3:]
    assert len(lines) == 2 + 1 + 7


def test_a_pair_without_changes_says_so_and_a_roll_back_names_what_it_undoes():
    compose_018 = COMPOSE_017.replace("v0.17.0rc1", "v0.18.0rc1")
    assert rf.report(rf.rolls("h", plan("quay.io/ascend/vllm-ascend:v0.18.0"), states(compose_018))) == [
        "v0.18.0rc1 -> v0.18.0 (roll forward on h/qwen): no flag, parser or env var is removed, renamed or "
        "deprecated on the way"]
    compose_023 = COMPOSE_017.replace("v0.17.0rc1", "v0.23.0")
    back = rf.report(rf.rolls("h", plan("quay.io/ascend/vllm-ascend:v0.22.1rc1-openeuler"), states(compose_023)))
    assert back == ["v0.23.0 -> v0.22.1rc1 (roll back on h/qwen): 3 changes on the way (undone by the roll back):",
                    "  - " + FC1,
                    "  - VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL is removed from v0.23.0; use --additional-config "
                    "'{\"enable_dsa_cp\": true}' (with enable_flashcomm1 where FlashComm1 implied DSA-CP before)",
                    "  - ASCEND_BUFFER_POOL is removed from v0.23.0; use ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3 HCCS) or "
                    "HCCL_INTRA_ROCE_ENABLE=1 (A2/A3 RoCE)"]


def test_the_filter_reads_each_hosts_plan_and_skips_hosts_without_one():
    hostvars = {
        "npu-01": {"__vllm_compose_plan": plan("quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"),
                   "__vllm_compose_host": {"deployments": states()}},
        "npu-02": {},  # its plan failed (the rollout's pre-flight reports it)
    }
    assert vllm_compose_roll_forward(["npu-01", "npu-02", "gone"], hostvars) == [
        "v0.17.0rc1 -> v0.18.0rc1 (roll forward on npu-01/qwen): 1 change on the way:", "  - " + V018_DROPS]
    assert vllm_compose_roll_forward([], hostvars) == []
