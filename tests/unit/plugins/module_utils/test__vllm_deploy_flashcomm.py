"""FlashComm v1 off for vision-language models, per release (issue 32): up to v0.22 the environment
variable VLLM_ASCEND_ENABLE_FLASHCOMM1=0; from v0.23.0 --additional-config '{"enable_flashcomm1": false}'
(vllm-ascend v0.23.0 release notes, #9064: 'Migrate FlashComm1 deployments from
VLLM_ASCEND_ENABLE_FLASHCOMM1 to additional_config.enable_flashcomm1'), the fact being the row in
_release_changes.CHANGES."""
import json

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _release_changes as rc
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_deploy as vd

from .test__vllm_deploy import IMAGE, SEED_DEP, run

FC1 = "VLLM_ASCEND_ENABLE_FLASHCOMM1"


def planned(version, dep=None, **kw):
    result = run([dep or SEED_DEP], image=dict(IMAGE, version=version), **kw)
    return result


@pytest.mark.parametrize("release, key", [
    ("v0.17.0rc1", None), ("v0.22.1rc1", None), ("v0.23.0rc1", None),
    ("v0.23.0", "enable_flashcomm1"), ("v0.26.0rc1", "enable_flashcomm1"), ("v0.99.0", "enable_flashcomm1"),
    (None, None), ("nightly-main", None),
])
def test_the_release_change_says_where_the_setting_lives(release, key):
    assert rc.additional_config_key(FC1, release) == key
    assert rc.additional_config_key("ASCEND_BUFFER_POOL", release) is None  # removed, no key to move to


def test_before_v0_23_0_the_env_var_turns_it_off():
    result = planned("v0.22.1rc1")
    assert result["errors"] == []
    dep = result["deployments"][0]
    assert dep["environment"][FC1] == "0"
    assert "--additional-config" not in dep["command"]


def test_from_v0_23_0_the_additional_config_turns_it_off():
    result = planned("v0.23.0")
    assert result["errors"] == [], result["errors"]
    dep = result["deployments"][0]
    assert FC1 not in dep["environment"]
    assert dep["command"][-2:] == ["--additional-config", '{"enable_flashcomm1":false}']


def test_a_text_model_gets_neither():
    dep = planned("v0.23.0", {"name": "chat", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B"})["deployments"][0]
    assert FC1 not in dep["environment"] and "--additional-config" not in dep["command"]


def test_the_users_additional_config_keeps_its_keys():
    # vLLM keeps only the last --additional-config: the role merges into the user's one.
    dep = dict(SEED_DEP, extra_args=["--additional-config", '{"enable_cpu_binding":true}', "--seed", "1024"])
    cmd = planned("v0.23.0", dep)["deployments"][0]["command"]
    assert cmd.count("--additional-config") == 1
    assert json.loads(cmd[cmd.index("--additional-config") + 1]) == {"enable_cpu_binding": True, "enable_flashcomm1": False}
    assert cmd[-2:] == ["--seed", "1024"]
    dep = dict(SEED_DEP, extra_args=['--additional-config={"enable_cpu_binding":true}'])
    cmd = planned("v0.23.0", dep)["deployments"][0]["command"]
    assert cmd[-1] == '--additional-config={"enable_cpu_binding":true,"enable_flashcomm1":false}'
    # Before v0.23.0 the user's --additional-config is left as written.
    cmd = planned("v0.22.1rc1", dep)["deployments"][0]["command"]
    assert cmd[-1] == '--additional-config={"enable_cpu_binding":true}'


def test_flashcomm1_forced_on_in_additional_config_for_a_vl_model_is_refused():
    dep = dict(SEED_DEP, extra_args=["--additional-config", '{"enable_flashcomm1": true}'])
    errors = planned("v0.23.0", dep)["errors"]
    assert errors == [
        "h1: deployment qwen: extra_args: --additional-config sets enable_flashcomm1 for Qwen/Qwen3.5-27B, a "
        "vision-language model; vllm-ascend refuses to start with 'Flash Comm V1 is not supported for VL models'. "
        "Fix: drop enable_flashcomm1 from --additional-config (the role sets it to false for VL models)"]
    # A text model may turn it on.
    text = {"name": "chat", "model": "Qwen/Qwen3-8B", "extra_args": ["--additional-config", '{"enable_flashcomm1":true}']}
    result = planned("v0.23.0", text)
    assert result["errors"] == []
    assert result["deployments"][0]["command"][-1] == '{"enable_flashcomm1":true}'


def test_additional_config_that_is_not_a_json_object_is_refused():
    dep = dict(SEED_DEP, extra_args=["--additional-config", "enable_flashcomm1=false"])
    assert planned("v0.17.0rc1", dep)["errors"] == [
        "h1: deployment qwen: extra_args: --additional-config enable_flashcomm1=false is not a JSON object. "
        "Fix: write it as one argument holding a JSON object, e.g. '{\"enable_cpu_binding\":true}'"]


def test_with_additional_config_directly():
    assert vd.with_additional_config(["x"], "k", False) == ["x", "--additional-config", '{"k":false}']
    assert vd.with_additional_config(["--additional-config", '{"k":true}'], "k", False) == [
        "--additional-config", '{"k":true}']
    # The last one counts (vLLM's argparse), so the role merges into the last one.
    got = vd.with_additional_config(["--additional-config", "{}", "--additional-config", '{"a":1}'], "k", False)
    assert got == ["--additional-config", "{}", "--additional-config", '{"a":1,"k":false}']
