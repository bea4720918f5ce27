"""Removed, renamed and deprecated flags and env vars: refused or warned in the pre-flight, named on a roll-forward.

Expectations written from vllm-ascend's v0.23.0 release notes (FlashComm1 env var -> additional_config,
VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL removed), its kv_pool guide (ASCEND_BUFFER_POOL removed) and the
vLLM wheels the releases pin (vLLM 0.24.0 drops the "minimax" tool-call parser)."""
import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _release_changes as rc
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli as cli
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_deploy as vd

QWEN = "Qwen/Qwen3.5-27B"
MODELS = {QWEN: {"prefetched": True, "revision": "master", "reason": None, "weights_bytes": 54 * 1024 ** 3,
                 "config": {"model_type": "qwen3_5", "text_config": {"max_position_embeddings": 262144},
                            "vision_config": {}}}}
SEED_DEP = {"name": "qwen", "preset": "qwen3.5-27b", "model": QWEN, "served_model_name": "Qwen", "port": 8000}

FC1 = "VLLM_ASCEND_ENABLE_FLASHCOMM1"
FC1_SENTENCE = "VLLM_ASCEND_ENABLE_FLASHCOMM1 is --additional-config '{\"enable_flashcomm1\": true}' from v0.23.0"


def msg(variable, problem, fix):
    return "%s: %s. Fix: %s" % (variable, problem, fix)


def test_the_flashcomm1_sentence():
    row = [r for r in rc.CHANGES if r["name"] == FC1][0]
    assert rc.describe(row) == FC1_SENTENCE
    assert "#9064" in row["source"]


@pytest.mark.parametrize("release, refused", [
    ("v0.22.1rc1", False), ("v0.23.0rc1", False), ("v0.23.0", True), ("v0.26.0rc1", True), ("v0.27.1rc1-a3", True),
])
def test_the_env_var_is_refused_from_the_release_that_renamed_it(release, refused):
    errors, warnings = cli.changes({"extra_env": {FC1: "1"}}, release, msg)
    assert warnings == []
    assert errors == ([("extra_env.%s: %s. Fix: change it before rolling to %s" % (FC1, FC1_SENTENCE, release))]
                      if refused else [])


def test_a_removed_env_var_names_its_replacement():
    errors = cli.changes({"extra_env": {"ASCEND_BUFFER_POOL": "4:8"}}, "v0.24.0rc1", msg)[0]
    assert errors == ["extra_env.ASCEND_BUFFER_POOL: ASCEND_BUFFER_POOL is removed from v0.23.0; use "
                      "ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3 HCCS) or HCCL_INTRA_ROCE_ENABLE=1 (A2/A3 RoCE). "
                      "Fix: change it before rolling to v0.24.0rc1"]


def test_a_deprecated_flag_warns_and_is_not_refused():
    dep = {"extra_args": ["--max-num-seqs", "8", "--model", "/m"]}
    errors, warnings = cli.changes(dep, "v0.21.0rc1", msg)
    assert errors == []
    assert warnings == ["extra_args[2]: --model is deprecated from v0.20.2rc1; use the model as the positional argument "
                        "of vllm serve (the role writes it so). Fix: change it before the release that removes it"]
    assert cli.changes(dep, "v0.19.1rc1", msg) == ([], [])


def test_unknown_release_changes_nothing():
    assert cli.changes({"extra_env": {FC1: "1"}}, "latest", msg) == ([], [])


def test_rolling_forward_names_every_change_on_the_way():
    lines = cli.roll_forward("v0.17.0rc1", "v0.26.0rc1")
    assert lines[:4] == [
        "--model is deprecated from v0.20.2rc1; use the model as the positional argument of vllm serve (the role writes it so)",
        FC1_SENTENCE,
        "VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL is removed from v0.23.0; use --additional-config '{\"enable_dsa_cp\": true}' "
        "(with enable_flashcomm1 where FlashComm1 implied DSA-CP before)",
        "ASCEND_BUFFER_POOL is removed from v0.23.0; use ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3 HCCS) or "
        "HCCL_INTRA_ROCE_ENABLE=1 (A2/A3 RoCE)",
    ]
    assert "v0.24.0rc1 (vLLM 0.24.0) removes the tool-call parser minimax" in lines
    assert cli.roll_forward("v0.24.0rc1", "v0.26.0rc1") == [
        line for line in cli.roll_forward("v0.24.0rc1", "v0.26.0rc1") if "v0.23.0" not in line]
    assert rc.between("v0.23.0", "v0.26.0rc1") == []


def test_a_flag_the_release_dropped_says_which_release_removed_it():
    # vLLM 0.18.0 (the base of v0.18.0rc1) no longer has --swap-space; 0.17.0 had it
    errors = cli.check({"extra_args": ["--swap-space", "4"]}, "v0.23.0", msg)
    assert errors == ["extra_args[0]: --swap-space is not a flag of image v0.23.0 (vLLM 0.23.0); v0.18.0rc1 removed it "
                      "(v0.17.0rc1 still has it). Fix: drop the flag or use its replacement (vllm serve --help of "
                      "v0.23.0); no close match"]
    assert cli.check({"extra_args": ["--swap-space", "4"]}, "v0.17.0rc1", msg) == []
    assert "v0.18.0rc1 (vLLM 0.18.0) removes the flags --no-use-gpu-for-pooling-score, --swap-space, " \
           "--use-gpu-for-pooling-score" in cli.roll_forward("v0.17.0rc1", "v0.26.0rc1")


def test_the_pre_flight_refuses_the_renamed_env_var_and_warns_on_the_deprecated_flag():
    dep = dict(SEED_DEP, extra_env={FC1: "1"}, extra_args=["--model", "/x"])
    image = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.26.0rc1", "os": "openeuler"}
    result = vd.plan([dep], host="h1", family="910B", healthy_device_ids=list(range(8)), hbm_per_card_mb=65536,
                     models=MODELS, image=image, cli=cli)
    assert ("h1: deployment qwen: extra_env.%s: %s. Fix: change it before rolling to v0.26.0rc1" % (FC1, FC1_SENTENCE)
            in result["errors"])
    assert any("--model is deprecated from v0.20.2rc1" in w for w in result["warnings"])
    assert not any("not a vllm-ascend release this collection knows" in w for w in result["warnings"])


def plan_at(release, **keys):
    image = {"repository": "quay.io/ascend/vllm-ascend", "version": release, "os": "openeuler"}
    return vd.plan([dict(SEED_DEP, **keys)], host="h1", family="910B", healthy_device_ids=list(range(8)),
                   hbm_per_card_mb=65536, models=MODELS, image=image, cli=cli)


@pytest.mark.parametrize("release", cli.releases())
def test_every_release_in_the_data_plans_with_its_checks_active(release):
    """ascendfleet_image_version set to any release of the data: no 'unknown release', and its own flag list
    decides: --no-hf-token, which no recorded `vllm serve` parser builds (--hf-token takes a value), is refused."""
    result = plan_at(release)
    assert result["errors"] == []
    assert not any("not a vllm-ascend release this collection knows" in w for w in result["warnings"])
    assert result["deployments"][0]["image"] == "quay.io/ascend/vllm-ascend:%s-openeuler" % release
    [refused] = plan_at(release, extra_args=["--no-hf-token"])["errors"]
    assert refused.startswith("h1: deployment qwen: extra_args[0]: --no-hf-token is not a flag of image %s (vLLM %s). "
                              "Fix: did you mean --hf-token" % (release, cli.facts(release)["vllm_version"]))
    assert plan_at(release, extra_args=["--hf-token", "x"])["errors"] == []


def test_a_roll_from_the_oldest_to_the_newest_refuses_every_removed_name_it_still_uses():
    """v0.17.0rc1 -> v0.26.0rc1 with an env var v0.23.0 removed and a flag vLLM 0.18.0 dropped: both refused in the
    plan (before any host changes), each naming the release that removed it and what to use instead."""
    errors = plan_at("v0.26.0rc1", extra_env={"ASCEND_BUFFER_POOL": "4:8"}, extra_args=["--swap-space", "4"])["errors"]
    assert errors == [
        "h1: deployment qwen: extra_args[0]: --swap-space is not a flag of image v0.26.0rc1 (vLLM 0.26.0); v0.18.0rc1 "
        "removed it (v0.17.0rc1 still has it). Fix: drop the flag or use its replacement (vllm serve --help of "
        "v0.26.0rc1); no close match",
        "h1: deployment qwen: extra_env.ASCEND_BUFFER_POOL: ASCEND_BUFFER_POOL is removed from v0.23.0; use "
        "ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3 HCCS) or HCCL_INTRA_ROCE_ENABLE=1 (A2/A3 RoCE). Fix: change it before "
        "rolling to v0.26.0rc1"]
    assert plan_at("v0.17.0rc1", extra_env={"ASCEND_BUFFER_POOL": "4:8"}, extra_args=["--swap-space", "4"])["errors"] == []
