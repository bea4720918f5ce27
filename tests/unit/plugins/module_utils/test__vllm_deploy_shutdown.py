"""vLLM's --shutdown-timeout in the command line the planner builds, per release, and the compose
service's stop_grace_period longer than it (issue 31: a stop drains the requests in flight).

Which releases have the flag is written by hand from ../shared/field-facts.md ("v0.18 adds
--shutdown-timeout"; vLLM PRs #34730, #36666) and each release's vLLM version in the release data:
vllm-ascend v0.17.0rc1 is built on vLLM 0.17.0, every later release on vLLM 0.18 or newer.
"""

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_cli_data import RELEASES
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import plan

MODELS = {"Qwen/Qwen3-8B": {"prefetched": True, "revision": "master", "config": {"max_position_embeddings": 40960}}}
DEP = {"name": "chat", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B", "port": 8001}

# release -> whether its vLLM has --shutdown-timeout (by hand, see the module docstring).
HAS_FLAG = {
    "v0.17.0rc1": False,
    "v0.18.0rc1": True, "v0.18.0": True, "v0.19.1rc1": True, "v0.20.2rc1": True, "v0.21.0rc1": True,
    "v0.22.1rc1": True, "v0.23.0rc1": True, "v0.23.0": True, "v0.24.0rc1": True, "v0.25.1rc1": True,
    "v0.26.0rc1": True,
}


def resolved(version=None, image=None, drain=120, dep=None, cli=_vllm_cli):
    settings = {"repository": "quay.io/ascend/vllm-ascend", "version": version or "v0.18.0rc1", "os": "openeuler"}
    if image:
        settings["image"] = image
    result = plan([dict(DEP, **(dep or {}))], host="npu-01", family="910B", healthy_device_ids=list(range(8)),
                  models=MODELS, image=settings, cli=cli, drain_timeout=drain)
    assert result["errors"] == [], result["errors"]
    return result["deployments"][0]


def tail(command):
    """What follows --shutdown-timeout each time it appears."""
    return [command[i + 1] for i, arg in enumerate(command) if arg == "--shutdown-timeout"]


def test_every_release_in_the_data_is_decided_here():
    assert sorted(HAS_FLAG) == sorted(RELEASES)


@pytest.mark.parametrize("release", sorted(HAS_FLAG))
def test_the_flag_where_the_release_has_it(release):
    dep = resolved(release)
    if HAS_FLAG[release]:
        assert tail(dep["command"]) == ["120"]
        assert (dep["shutdown_timeout"], dep["stop_grace_period"]) == (120, 150)
    else:
        assert tail(dep["command"]) == []
        assert (dep["shutdown_timeout"], dep["stop_grace_period"]) == (None, None)


@pytest.mark.parametrize("version, expected", [
    ("v0.18.0rc2", ["45"]),      # not in the data, after the first release with the flag
    ("v0.30.0", ["45"]),         # newer than the data
    ("v0.16.0", []),             # older than the data
], ids=["between", "newer", "older"])
def test_a_release_outside_the_data_by_the_first_release_with_it(version, expected):
    assert tail(resolved(version, drain=45)["command"]) == expected


def test_an_image_without_a_release_in_its_tag_gets_no_flag():
    dep = resolved(image="site.example/vllm-ascend:latest")
    assert tail(dep["command"]) == [] and dep["stop_grace_period"] is None


@pytest.mark.parametrize("drain", [0, None])
def test_no_drain_keeps_vllms_default(drain):
    dep = resolved("v0.23.0", drain=drain)
    assert tail(dep["command"]) == [] and dep["stop_grace_period"] is None


def test_without_the_release_data_no_flag():
    # On a host (no _vllm_cli data): nothing is claimed about the release.
    assert tail(resolved("v0.23.0", cli=None)["command"]) == []


@pytest.mark.parametrize("extra, grace", [
    (["--shutdown-timeout", "300"], 330),
    (["--shutdown_timeout=20"], 50),
    (["--shutdown-timeout", "0"], None),
])
def test_the_deployments_own_flag_is_kept_once(extra, grace):
    dep = resolved("v0.23.0", dep={"extra_args": extra})
    assert dep["command"][-len(extra):] == extra
    assert sum(1 for a in dep["command"] if a.replace("_", "-").startswith("--shutdown-timeout")) == 1
    assert dep["shutdown_timeout"] is None and dep["stop_grace_period"] == grace


def test_the_flag_comes_before_extra_args():
    cmd = resolved("v0.23.0", dep={"extra_args": ["--seed", "1"]})["command"]
    assert cmd[-4:] == ["--shutdown-timeout", "120", "--seed", "1"]


def test_both_nodes_of_a_multinode_deployment_drain():
    dep = {"name": "big", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B", "members": ["npu-01", "npu-02"],
           "data_parallel_size": 2}
    for host, address in (("npu-01", "192.0.2.11"), ("npu-02", "192.0.2.12")):
        result = plan([dep], host=host, family="910B", healthy_device_ids=list(range(8)), models=MODELS,
                      image={"version": "v0.23.0"}, cli=_vllm_cli, drain_timeout=60,
                      network={"big": {"head_address": "192.0.2.11", "address": address, "nic": "eth0"}})
        assert result["errors"] == [], result["errors"]
        node = result["multinode"][0]
        assert tail(node["command"]) == ["60"] and node["stop_grace_period"] == 90
