"""Tests of the rollout's "nothing to change" verdict (plugins/module_utils/_vllm_noop.py), on what a
sim host returned after a deploy of two deployments (docker inspect of both containers, compose's
config hash of qwen's file, the image id of its tag and the compose file vllm_compose rendered)."""
import copy
import json
import pathlib

from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_noop import (
    config_hashes,
    host_reasons,
    judge,
    project_containers,
)

FIX = pathlib.Path(__file__).parent / "fixtures" / "vllm_noop"
INSPECT = json.loads((FIX / "inspect-two-projects.json").read_text())
HASHES = (FIX / "config-hash-qwen.txt").read_text()
IMAGE_ID = (FIX / "image-id.txt").read_text().strip()
COMPOSE = (FIX / "compose-qwen.txt").read_text()
SERVICE = "vllm-ascend"
QWEN = {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler",
        "port": 8000, "served_model_name": "qwen3.5-27b", "devices": None, "card_count": 2}


def state(**changes):
    base = {"compose": COMPOSE, "compose_mode": "0644", "env_matches": None, "env_mode": None, "last_good_mode": "0755",
            "last_good_compose": COMPOSE,
            "image_id": IMAGE_ID, "containers": project_containers(INSPECT, "qwen"), "config_hashes": config_hashes(HASHES),
            "cards": [4, 5], "cards_changed": False, "cards_error": None}
    base.update(changes)
    return base


def verdict(st, rendered=COMPOSE, env=False, absent=(), refusals=()):
    return judge([QWEN], list(absent), list(refusals), {"qwen": st}, {"qwen": rendered}, env, SERVICE,
                 host="afbench-fast2-01", endpoint_host="afbench-fast2-01")


def test_config_hashes_of_compose_output():
    assert config_hashes(HASHES) == {"vllm-ascend": "5967195f25d11f8fd5ecc63f911c6c8709ebf8d5a20ef85c87b346a0e8f2f7aa"}
    assert config_hashes("") == {}


def test_project_containers_picks_the_project():
    qwen = project_containers(INSPECT, "qwen")
    assert qwen == [{"service": "vllm-ascend", "status": "running",
                     "config_hash": "5967195f25d11f8fd5ecc63f911c6c8709ebf8d5a20ef85c87b346a0e8f2f7aa",
                     "image_label": "sha256:9c216db4e9b4692f449299fa18904851495fa3c9c82f3c249411520d626402db",
                     "image_id": "sha256:9c216db4e9b4692f449299fa18904851495fa3c9c82f3c249411520d626402db"}]
    assert [c["config_hash"][:8] for c in project_containers(INSPECT, "chat")] == ["d8fbd6ea"]
    assert project_containers(INSPECT, "old") == []


def test_deployed_host_is_unchanged_with_its_summary_entry():
    out = verdict(state())
    assert out["unchanged"] is True
    assert out["deployments"] == [{"name": "qwen", "unchanged": True, "reasons": []}]
    assert out["kept"] == ["qwen"]
    assert out["results"] == [{"host": "afbench-fast2-01", "deployment": "qwen", "model": "Qwen/Qwen3.5-27B", "cards": [4, 5],
                               "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler",
                               "endpoint": "http://afbench-fast2-01:8000/v1", "served_model_name": "qwen3.5-27b",
                               "status": "unchanged", "reason": ""}]


def test_a_new_image_tag_is_a_change():
    # The tag now names another image than the container was created from (a rollout to a new build).
    out = verdict(state(image_id="sha256:" + "1" * 64))
    assert out["unchanged"] is False and out["results"] == []
    assert out["deployments"][0]["reasons"] == ["containers: created from another image than the tag names now"]
    assert verdict(state(image_id=None))["deployments"][0]["reasons"][0] == "image: not on the host"


def test_a_read_that_failed_is_named_not_taken_for_a_change():
    # The daemon did not answer `docker image inspect` (not "No such image"), compose could not hash the file.
    out = verdict(state(image_id=None, image_error="Cannot connect to the Docker daemon at unix:///var/run/docker.sock"))
    assert out["deployments"][0]["reasons"] == [
        "image: docker image inspect failed: Cannot connect to the Docker daemon at unix:///var/run/docker.sock",
        "containers: created from another image than the tag names now"]
    out = verdict(state(config_hashes={}, config_hash_error="open /opt/ascendfleet/qwen/compose.yaml: permission denied"))
    assert out["deployments"][0]["reasons"] == [
        "containers: docker compose config --hash failed: open /opt/ascendfleet/qwen/compose.yaml: permission denied"]
    assert out["kept"] == [] and out["unchanged"] is False


def test_a_stopped_container_is_a_change():
    inspect = copy.deepcopy(INSPECT)
    for item in inspect:
        item["State"]["Status"] = "exited"
    out = verdict(state(containers=project_containers(inspect, "qwen")))
    assert out["deployments"][0]["reasons"] == ["containers: exited, not running"]
    assert verdict(state(containers=[]))["deployments"][0]["reasons"] == ["containers: 0 of the project, not 1"]


def test_another_compose_file_is_a_change():
    rendered = COMPOSE.replace("--max-model-len", "--max-num-seqs", 1)
    assert rendered != COMPOSE
    assert verdict(state(), rendered=rendered)["deployments"][0]["reasons"] == ["files: compose.yaml differs from the rendered one"]
    # The file on disk edited by hand and brought up: compose's hash of it differs from the container's.
    out = verdict(state(config_hashes={"vllm-ascend": "0" * 64}))
    assert out["deployments"][0]["reasons"] == ["containers: created from another compose file (config hash)"]
    out = verdict(state(compose=None, compose_mode=None, config_hashes={}))
    assert out["deployments"][0]["reasons"] == ["files: no compose.yaml",
                                                "containers: created from another compose file (config hash)"]


def test_files_cards_env_absent_and_refusals():
    assert verdict(state(last_good_mode=None))["unchanged"] is False
    assert verdict(state(compose_mode="0600"))["deployments"][0]["reasons"] == ["files: compose.yaml mode 0600, not 0644"]
    assert verdict(state(cards_changed=True))["deployments"][0]["reasons"] == ["cards: the ledger would change"]
    assert verdict(state(cards_error="not enough free NPU chips"))["deployments"][0]["reasons"] == [
        "cards: not enough free NPU chips"]
    # An API key: vllm.env must hold its line with mode 0600.
    assert verdict(state(env_matches=True, env_mode="0600"), env=True)["unchanged"] is True
    assert verdict(state(env_matches=True, env_mode="0644"), env=True)["unchanged"] is False
    assert verdict(state(env_matches=False, env_mode="0600"), env=True)["unchanged"] is False
    assert verdict(state(), env=True)["unchanged"] is False
    # No key set: the role leaves any vllm.env as it is.
    assert verdict(state(env_matches=None, env_mode="0644"), env=False)["unchanged"] is True
    out = verdict(state(), absent=[{"name": "old"}])
    assert out["unchanged"] is False and out["reasons"] == ["absent deployments to remove: old"]
    # The removal is a change of the host, not of qwen: the rollout still leaves qwen as it is.
    assert out["kept"] == ["qwen"] and [r["status"] for r in out["results"]] == ["unchanged"]
    # A pre-flight refusal fails the host in the rollout: nothing is kept, nothing reported for it here.
    out = verdict(state(), refusals=["bad"])
    assert out["unchanged"] is False and out["kept"] == [] and out["results"] == []


def test_each_deployment_is_judged_on_its_own():
    # Two deployments read off the same sim host: chat's compose file was not read (no config hash
    # of it), so chat goes through the rollout; qwen is kept, with its summary entry.
    chat = dict(QWEN, name="chat", port=8001, served_model_name="chat")
    chat_state = state(containers=project_containers(INSPECT, "chat"), cards=[6])
    out = judge([QWEN, chat], [], [], {"qwen": state(), "chat": chat_state}, {"qwen": COMPOSE, "chat": COMPOSE}, None,
                SERVICE, host="afbench-fast2-01", endpoint_host="afbench-fast2-01")
    assert out["unchanged"] is False
    assert [(d["name"], d["unchanged"]) for d in out["deployments"]] == [("qwen", True), ("chat", False)]
    assert out["deployments"][1]["reasons"] == ["containers: created from another compose file (config hash)"]
    assert out["kept"] == ["qwen"]
    assert [(r["deployment"], r["cards"], r["endpoint"]) for r in out["results"]] == [
        ("qwen", [4, 5], "http://afbench-fast2-01:8000/v1")]


def test_a_deployment_not_read_is_a_change():
    out = judge([QWEN], [], [], {}, {}, None, SERVICE)
    assert out["unchanged"] is False and out["deployments"][0]["reasons"] == ["not read on the host"]
    assert host_reasons(state(containers=project_containers(INSPECT, "chat")), "other")[0] == (
        "containers: service vllm-ascend, not other")


def test_a_live_config_no_gate_passed_on_is_never_unchanged():
    # A run rendered and recreated (v0.18.0rc1-broken: the rendered file and the container agree),
    # then was stopped in its gate: last-good/ still holds the file of v0.17.0rc1. Everything but
    # last-known-good says "nothing to do"; the verdict sends the deployment through the rollout.
    stopped = COMPOSE.replace("v0.17.0rc1-openeuler", "v0.18.0rc1-broken-openeuler")
    assert stopped != COMPOSE
    out = verdict(state(compose=stopped), rendered=stopped)
    assert out["unchanged"] is False and out["kept"] == [] and out["results"] == []
    reasons = out["deployments"][0]["reasons"]
    assert "gate: the live compose.yaml is not last-known-good (no gate passed on it: a run stopped before its gate, or skipped it)" in reasons
    # A first deployment stopped before its first record has no last-good/compose.yaml at all.
    assert verdict(state(last_good_compose=None))["unchanged"] is False


def test_the_api_key_is_judged_by_the_env_file_compared_on_the_host():
    # No label carries the key's digest (issue 28), and no digest of vllm.env leaves the host either:
    # vllm_host_info compares the file with the line the role would write (its no_log env_content) and
    # returns only env_matches. The verdict's only view of the key is that yes or no.
    on_host = state(env_matches=True, env_mode="0600")
    assert verdict(on_host, env=True)["unchanged"] is True
    out = verdict(state(env_matches=False, env_mode="0600"), env=True)
    assert out["unchanged"] is False and out["kept"] == []
    assert out["deployments"][0]["reasons"] == ["files: vllm.env differs (content or mode 0600)"]
    # A key set where none was: no vllm.env on the host yet (env_matches false, no mode).
    assert verdict(state(env_matches=False), env=True)["deployments"][0]["reasons"] == [
        "files: vllm.env differs (content or mode 0600)"]
    # A host read without env_content (null) is never taken for a match.
    assert verdict(state(env_matches=None, env_mode="0600"), env=True)["unchanged"] is False
