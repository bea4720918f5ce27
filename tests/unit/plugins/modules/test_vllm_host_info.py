# -*- coding: utf-8 -*-
"""ascendfleet.llm.vllm_host_info with read_state through its real entry point: fake npu-smi (the
seed's 910B2 sample) and docker (docker inspect, image id and compose config hash captured on a sim
host after a deploy of qwen and chat), a ledger and project directories in a temporary directory."""

import hashlib
import json
import os
import pathlib

from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_noop import judge
from ansible_collections.ascendfleet.llm.plugins.modules import vllm_host_info

from .conftest import FAKE_NPU_SMI, HERE

FAKE_DOCKER = os.path.join(HERE, "fixtures", "fake-docker-host-info")
FIX = pathlib.Path(HERE).parent / "module_utils" / "fixtures" / "vllm_noop"
IMAGE = "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"
COMPOSE = (FIX / "compose-qwen.txt").read_text()
PLANNED = [{"name": "qwen", "port": 8000, "image": IMAGE, "card_count": 2, "devices": None, "model": "Qwen/Qwen3.5-27B"},
           {"name": "chat", "port": 8001, "image": IMAGE, "card_count": 1, "devices": None, "model": "Qwen/Qwen3-8B"}]


def _host(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DOCKER_IMAGE", IMAGE)
    (tmp_path / "ledger.json").write_text(json.dumps({"version": 1, "assignments": {"qwen": [4, 5], "chat": [6]}}))
    (tmp_path / "opt" / "qwen" / "last-good").mkdir(parents=True)
    os.chmod(tmp_path / "opt" / "qwen" / "last-good", 0o755)
    (tmp_path / "opt" / "qwen" / "compose.yaml").write_text(COMPOSE)
    os.chmod(tmp_path / "opt" / "qwen" / "compose.yaml", 0o644)
    (tmp_path / "opt" / "qwen" / "last-good" / "compose.yaml").write_text(COMPOSE)
    (tmp_path / "proc").mkdir()
    return {"host": "afbench-fast2-01", "planned": PLANNED, "names": ["qwen", "chat"], "project_root": str(tmp_path / "opt"),
            "ledger_path": str(tmp_path / "ledger.json"), "proc_root": str(tmp_path / "proc"), "read_state": True,
            "npu_smi_executable": FAKE_NPU_SMI, "docker_executable": FAKE_DOCKER}


def test_read_state_of_a_deployed_host(run_module, tmp_path, monkeypatch):
    failed, result = run_module(vllm_host_info.main, _host(tmp_path, monkeypatch))
    assert not failed and result["changed"] is False
    qwen, chat = result["deployments"]["qwen"], result["deployments"]["chat"]
    assert qwen["compose"] == COMPOSE and qwen["compose_mode"] == "0644" and qwen["last_good_mode"] == "0755"
    assert qwen["image_id"] == "sha256:9c216db4e9b4692f449299fa18904851495fa3c9c82f3c249411520d626402db"
    assert qwen["config_hashes"] == {"vllm-ascend": "5967195f25d11f8fd5ecc63f911c6c8709ebf8d5a20ef85c87b346a0e8f2f7aa"}
    assert qwen["image_error"] is None and qwen["config_hash_error"] is None
    assert [c["status"] for c in qwen["containers"]] == ["running"]
    # npu_assign would keep what the ledger holds (chips 4-7 of the seed sample are free).
    assert (qwen["cards"], qwen["cards_changed"], qwen["cards_error"]) == ([4, 5], False, None)
    assert (chat["cards"], chat["cards_changed"]) == ([6], False)
    # chat's project directory is gone: its compose file is missing, compose is not asked.
    assert chat["compose"] is None and chat["config_hashes"] == {} and chat["last_good_mode"] is None
    assert qwen["last_good_compose"] == COMPOSE and chat["last_good_compose"] is None
    verdict = judge(PLANNED, [], [], result["deployments"], {"qwen": COMPOSE, "chat": ""}, None, "vllm-ascend")
    assert [(d["name"], d["unchanged"]) for d in verdict["deployments"]] == [("qwen", True), ("chat", False)]
    assert verdict["unchanged"] is False


def test_a_compose_file_with_env_file_is_hashed_as_up_labels_it(run_module, tmp_path, monkeypatch):
    # qwen deployed with an API key (vllm.env in env_file): compose's `config --hash` of the file
    # differs from the label `up` gave the container; the hash of the file's JSON form is that label.
    monkeypatch.setenv("FAKE_DOCKER_ENV_FILE", "1")
    args = _host(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_DOCKER_IMAGE", IMAGE)
    compose = (FIX / "compose-qwen-env-file.txt").read_text()
    (tmp_path / "opt" / "qwen" / "compose.yaml").write_text(compose)
    (tmp_path / "opt" / "qwen" / "last-good" / "compose.yaml").write_text(compose)
    (tmp_path / "opt" / "qwen" / "vllm.env").write_text("VLLM_API_KEY=sim-key-3b9f\n")
    os.chmod(tmp_path / "opt" / "qwen" / "vllm.env", 0o600)
    args["planned"] = PLANNED[:1]
    args["names"] = ["qwen"]
    args["env_content"] = "VLLM_API_KEY=sim-key-3b9f\n"
    failed, result = run_module(vllm_host_info.main, args)
    assert not failed, result.get("msg")
    qwen = result["deployments"]["qwen"]
    plain = (FIX / "config-hash-qwen-env-file.txt").read_text().split()[1]
    assert qwen["config_hashes"] == {"vllm-ascend": "2384482dce89a8adf04e87070571f71bff59f539f01a71c03322cf5f3ea4833b"}
    assert qwen["containers"][0]["config_hash"] == qwen["config_hashes"]["vllm-ascend"] != plain
    assert (qwen["env_matches"], qwen["env_mode"]) == (True, "0600")
    verdict = judge(PLANNED[:1], [], [], result["deployments"], {"qwen": compose}, True, "vllm-ascend")
    assert verdict["unchanged"] is True, verdict


def test_no_digest_of_the_api_key_leaves_the_host(run_module, tmp_path, monkeypatch):
    """vllm_host_info's result is shown at -v in the plan play: it used to carry the unsalted sha256
    of vllm.env (the key line), which anyone reading the output could test guessed keys against.
    Now the host compares the file with the no_log env_content and returns only whether it matches;
    the plan still notices a changed key. Digests written by hand:
    printf 'VLLM_API_KEY=sim-key-3b9f\n' | sha256sum; printf 'sim-key-3b9f' | sha256sum."""
    args = _host(tmp_path, monkeypatch)
    (tmp_path / "opt" / "qwen" / "vllm.env").write_text("VLLM_API_KEY=sim-key-3b9f\n")
    os.chmod(tmp_path / "opt" / "qwen" / "vllm.env", 0o600)
    args["planned"], args["names"] = PLANNED[:1], ["qwen"]
    args["env_content"] = "VLLM_API_KEY=sim-key-3b9f\n"
    failed, result = run_module(vllm_host_info.main, args)
    assert not failed, result.get("msg")
    text = json.dumps(result)
    secrets = [b"VLLM_API_KEY=sim-key-3b9f\n", b"sim-key-3b9f"]
    digests = ["3cd0e13cb8958429428242b2bc00e01234c744b8c0c99e7b8ef7c55b8a2e656b",
               "6a47fcb4bd887b55a64824c3b450af63c0aa1fbfb6639428845bfe2f5d67fb5c"]
    digests += [getattr(hashlib, name)(secret).hexdigest() for name in ("md5", "sha1", "sha512") for secret in secrets]
    for found in digests + ["sim-key-3b9f"]:
        assert found not in text, found
    assert result["deployments"]["qwen"]["env_matches"] is True
    # Another key: the file no longer matches, and the plan sends the deployment through the rollout.
    args["env_content"] = "VLLM_API_KEY=another-key-71c2\n"
    failed, result = run_module(vllm_host_info.main, args)
    assert not failed and result["deployments"]["qwen"]["env_matches"] is False
    assert "3cd0e13cb8958429428242b2bc00e01234c744b8c0c99e7b8ef7c55b8a2e656b" not in json.dumps(result)
    verdict = judge(PLANNED[:1], [], [], result["deployments"], {"qwen": COMPOSE}, True, "vllm-ascend")
    assert verdict["deployments"][0]["reasons"][-1] == "files: vllm.env differs (content or mode 0600)"
    # Without env_content (no key set): nothing about the file but its mode.
    del args["env_content"]
    failed, result = run_module(vllm_host_info.main, args)
    assert result["deployments"]["qwen"]["env_matches"] is None


def test_an_image_read_that_failed_is_not_an_absent_image(run_module, tmp_path, monkeypatch):
    args = _host(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_DOCKER_IMAGE_ERROR", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
                                                  "Is the docker daemon running?")
    failed, result = run_module(vllm_host_info.main, args)
    assert not failed
    qwen = result["deployments"]["qwen"]
    assert qwen["image_id"] is None
    assert qwen["image_error"].startswith("Cannot connect to the Docker daemon")
    # An absent image is not an error.
    monkeypatch.delenv("FAKE_DOCKER_IMAGE_ERROR")
    monkeypatch.setenv("FAKE_DOCKER_IMAGE", "quay.io/ascend/vllm-ascend:other")
    failed, result = run_module(vllm_host_info.main, args)
    assert (result["deployments"]["qwen"]["image_id"], result["deployments"]["qwen"]["image_error"]) == (None, None)


def test_without_read_state_nothing_more_is_read(run_module, tmp_path, monkeypatch):
    args = _host(tmp_path, monkeypatch)
    args["read_state"] = False
    failed, result = run_module(vllm_host_info.main, args)
    assert not failed and "deployments" not in result


def test_a_new_tag_and_a_missing_npu_smi(run_module, tmp_path, monkeypatch):
    args = _host(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_DOCKER_IMAGE", "another")
    args["npu_smi_executable"] = str(tmp_path / "no-npu-smi")
    failed, result = run_module(vllm_host_info.main, args)
    qwen = result["deployments"]["qwen"]
    assert not failed and qwen["image_id"] is None
    assert qwen["cards_changed"] is True and qwen["cards_error"]
