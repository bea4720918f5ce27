"""The planner on the revisions cache layout (issue 29): ``model_state(layout="revisions")`` reads
the revision directory a name resolved to when it was fetched, and the planned deployment mounts
that one directory (``mount_source``) and names it (``revision_key``); a moved branch is a new key.
Real revision directories, written as the prefetch writes them (staging, finish, refs)."""
import hashlib
import json

from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_revisions as mr
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_deploy as vd

QWEN = "Qwen/Qwen3-8B"
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.17.0rc1", "os": "openeuler"}
DEP = {"name": "qwen", "preset": "qwen3-8b", "model": QWEN, "port": 8000}
COMMIT_A = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
COMMIT_B = "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"
CONFIG = json.dumps({"model_type": "qwen3", "max_position_embeddings": 40960}).encode()
A_BYTES = {"config.json": CONFIG, "model-00001-of-00002.safetensors": b"\x01" * 4096,
           "model-00002-of-00002.safetensors": b"\x02" * 2048}
B_BYTES = dict(A_BYTES, **{"model-00002-of-00002.safetensors": b"\x03" * 3000})


def fetched(cache, key, contents, name="master"):
    files = [{"path": p, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()} for p, b in sorted(contents.items())]
    staging = cache / "revisions" / QWEN / (".staging-" + key)
    for path, data in contents.items():
        (staging / path).parent.mkdir(parents=True, exist_ok=True)
        (staging / path).write_bytes(data)
    mr.finish(str(staging), mr.revision_dir(str(cache), QWEN, key), QWEN, key, key, [name], files, "http://hub")
    mr.record_ref(str(cache), QWEN, name, key, key, "2026-12-05T02:00:00Z")


def plan(cache, revision="master"):
    state = vd.model_state(str(cache), QWEN, revision, layout="revisions")
    return state, vd.plan([dict(DEP, revision=revision)], host="h1", family="910B", healthy_device_ids=[0, 1],
                          models={QWEN: state}, image=IMAGE)


def test_the_state_names_the_revision_directory_the_name_resolved_to(tmp_path):
    fetched(tmp_path, COMMIT_A, A_BYTES)
    state = vd.model_state(str(tmp_path), QWEN, "master", layout="revisions")
    rdir = str(tmp_path / "revisions" / QWEN / COMMIT_A)
    assert state == {"path": rdir, "prefetched": True, "revision": "master", "reason": None,
                     "config": {"model_type": "qwen3", "max_position_embeddings": 40960}, "weights_bytes": 4096 + 2048,
                     "key": COMMIT_A, "commit": COMMIT_A, "mount_source": rdir}


def test_the_planned_deployment_mounts_that_revision(tmp_path):
    fetched(tmp_path, COMMIT_A, A_BYTES)
    _state, result = plan(tmp_path)
    assert result["errors"] == []
    dep = result["deployments"][0]
    assert (dep["revision_key"], dep["mount_source"]) == (COMMIT_A, str(tmp_path / "revisions" / QWEN / COMMIT_A))
    assert dep["container_model_path"] == "/root/.cache/modelscope/hub/models/Qwen/Qwen3-8B"


def test_a_moved_branch_plans_the_new_revision_and_the_old_stays_complete(tmp_path):
    fetched(tmp_path, COMMIT_A, A_BYTES)
    fetched(tmp_path, COMMIT_B, B_BYTES)
    _state, result = plan(tmp_path)
    assert result["deployments"][0]["revision_key"] == COMMIT_B
    assert mr.revision_completeness(str(tmp_path), QWEN, COMMIT_A, verify="full")["complete"]
    # A pinned commit plans its own directory, whatever the branch says.
    assert plan(tmp_path, COMMIT_A)[1]["deployments"][0]["revision_key"] == COMMIT_A


def test_a_name_never_fetched_into_the_revisions_is_refused_with_the_fix(tmp_path):
    state, result = plan(tmp_path)
    assert (state["prefetched"], state["key"], state["mount_source"]) == (False, None, None)
    assert result["errors"] == [
        "h1: deployment qwen: model: Qwen/Qwen3-8B (revision master) is not prefetched: revision 'master' was never "
        "fetched into the revision cache. Fix: fetch the missing files again: run playbooks/prefetch.yml (or "
        "deploy-qwen.yml --tags prefetch) for this host; nothing was changed, a running container is left as it is"]


def test_the_flat_layout_plans_no_revision_fields(tmp_path):
    result = vd.plan([DEP], host="h1", family="910B", healthy_device_ids=[0, 1], image=IMAGE,
                     models={QWEN: {"prefetched": True, "revision": "master", "reason": None, "config": {},
                                    "weights_bytes": 1}})
    dep = result["deployments"][0]
    assert "revision_key" not in dep and "mount_source" not in dep
