"""_model_cache.fetch_revision against real processes: the real ``modelscope`` CLI downloading from
the stand-in hub (tests/sim/hub, a simulator on 127.0.0.1) into one directory per resolved revision.

Expected commits, sizes and hashes come from the hub's own listing (``GET /_sim/repos``), bytes
fetched from its counters (``GET /_sim/stats``), never from the code under test.
"""

import os
import pathlib
import sys

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_cache as mc
from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_revisions as mr
from ansible_collections.ascendfleet.llm.plugins.module_utils import _modelscope as ms

ROOT = pathlib.Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests" / "sim" / "hub"))
from hub_harness import Hub, modelscope_cli  # noqa: E402  (simulator harness)

MODEL = "Qwen/Qwen3.5-27B"
SHARD2 = "model-00002-of-00002.safetensors"


@pytest.fixture(scope="module")
def cli():
    try:
        return str(modelscope_cli())
    except RuntimeError as exc:
        pytest.skip("the modelscope CLI venv could not be built: %s" % exc)


@pytest.fixture(scope="module")
def hub():
    server = Hub()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def fresh(hub):
    hub.reset()
    hub.faults(clear=True)


def repo(hub):
    return hub.json("/_sim/repos")[1][MODEL]


def params(hub, cli, cache, **extra):
    out = dict(model=MODEL, revision="master", cache_dir=str(cache), source="hub", source_url=None,
               endpoint=hub.url, cli=cli, include=[], exclude=[], attempts=2, space_margin=0,
               lock_timeout=1, progress_interval=1, verify="quick", env={}, resolve="always")
    out.update(extra)
    return out


def env():
    return {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy")}


def shas(directory, files):
    return {p: facts.sha256_file(os.path.join(directory, p)) for p in files}


def test_a_moved_branch_is_fetched_beside_the_old_revision(hub, cli, tmp_path):
    info = repo(hub)
    old, new = info["tags"]["v0.9"], info["branches"]["master"]
    assert old != new
    hub.json("/_sim/branches", "POST", {MODEL: {"master": old}})
    first = mc.fetch_revision(params(hub, cli, tmp_path), "node-1", env())
    assert (first["changed"], first["key"], first["commit"], first["change"]) == (True, old, old, None)
    a_dir = mr.revision_dir(str(tmp_path), MODEL, old)
    assert first["model_dir"] == a_dir
    a_files = info["commits"][old]
    assert shas(a_dir, a_files) == {p: m["sha256"] for p, m in a_files.items()}
    # The CLI was pinned to the commit, not the branch name (file requests name the commit).
    file_requests = [e for e in hub.stats()["log"] if e["path"].endswith("/repo") and e["query"].get("FilePath")]
    assert file_requests and {e["query"]["Revision"] for e in file_requests} == {old}

    # Upstream pushes: master moves to the newer commit (the last shard differs).
    hub.reset()
    hub.json("/_sim/branches", "POST", {MODEL: {"master": new}})
    a_before = {p: os.stat(os.path.join(a_dir, p)).st_mtime_ns for p in a_files}
    second = mc.fetch_revision(params(hub, cli, tmp_path), "node-1", env())
    assert (second["changed"], second["key"], second["previous_key"]) == (True, new, old)
    assert second["change"] == "revision master: %s -> %s" % (old[:12], new[:12])
    # Only the changed shard came from the hub; the rest was hard-linked from the old revision.
    assert hub.stats()["models"][MODEL]["files"] == {SHARD2: info["commits"][new][SHARD2]["size"]}
    assert second["files_fetched"] == [SHARD2]
    assert sorted(second["files_linked"]) == sorted(p for p in a_files if p != SHARD2)
    # The old revision is untouched (same bytes, same mtimes) and still complete.
    assert shas(a_dir, a_files) == {p: m["sha256"] for p, m in a_files.items()}
    assert {p: os.stat(os.path.join(a_dir, p)).st_mtime_ns for p in a_files} == a_before
    assert mr.revision_completeness(str(tmp_path), MODEL, old, verify="full")["complete"]
    b_dir = mr.revision_dir(str(tmp_path), MODEL, new)
    assert shas(b_dir, info["commits"][new]) == {p: m["sha256"] for p, m in info["commits"][new].items()}
    assert not os.path.exists(mr.staging_dir(str(tmp_path), MODEL, new))

    # A re-run changes nothing; with resolve=missing it does not even ask the hub.
    hub.reset()
    hub.json("/_sim/branches", "POST", {MODEL: {"master": new}})
    again = mc.fetch_revision(params(hub, cli, tmp_path), "node-1", env())
    assert (again["changed"], again["key"], again["change"]) == (False, new, None)
    assert hub.stats()["bytes_total"] == 0
    hub.reset()
    quiet = mc.fetch_revision(params(hub, cli, tmp_path, resolve="missing"), "node-1", env())
    assert (quiet["changed"], quiet["key"]) == (False, new)
    assert hub.stats()["requests"] == {}


def test_a_disk_too_small_is_refused_before_any_download(hub, cli, tmp_path):
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch_revision(params(hub, cli, tmp_path, space_margin=1 << 60), "node-1", env())
    text = str(err.value)
    assert text.startswith("host node-1: not enough free space on ")
    assert "for %s@master: needs " % MODEL in text and "point model_prefetch_cache_dir at a larger disk" in text
    assert hub.stats()["bytes_total"] == 0
    assert mr.list_revisions(str(tmp_path), MODEL) == []


def test_todays_copy_is_migrated_without_a_byte_downloaded(hub, cli, tmp_path):
    legacy = mc.fetch(params(hub, cli, tmp_path, revision="v1.0"), "node-1", env())
    assert legacy["action"] == "downloaded"
    legacy_shas = shas(legacy["model_dir"], repo(hub)["commits"][repo(hub)["tags"]["v1.0"]])
    hub.reset()
    result = mc.fetch_revision(params(hub, cli, tmp_path, revision="v1.0"), "node-1", env())
    commit = repo(hub)["tags"]["v1.0"]
    assert (result["changed"], result["migrated"], result["key"], result["bytes_fetched"]) == (True, commit, commit, 0)
    assert hub.stats()["bytes_total"] == 0  # only the file list was asked for
    assert hub.stats()["requests"] == {"repo_files": 1}
    # The legacy copy stays complete for the containers that mount it.
    assert facts.model_completeness(str(tmp_path), MODEL, "v1.0", verify="full")["complete"]
    assert shas(legacy["model_dir"], legacy_shas) == legacy_shas
    assert mr.revision_completeness(str(tmp_path), MODEL, commit, verify="full")["complete"]


def test_an_interrupted_download_is_never_a_revision_and_resumes(hub, cli, tmp_path):
    hub.faults(drop_after_bytes={MODEL + "/" + SHARD2: {"bytes": 700000, "times": 1}})
    p = params(hub, cli, tmp_path, attempts=1, env={"MODELSCOPE_DOWNLOAD_MAX_RETRIES": "0"})
    with pytest.raises(ms.ModelPrefetchError, match="failed after 1 attempt"):
        mc.fetch_revision(p, "node-1", env())
    commit = repo(hub)["branches"]["master"]
    assert mr.list_revisions(str(tmp_path), MODEL) == []
    staging = mr.staging_dir(str(tmp_path), MODEL, commit)
    assert os.path.getsize(os.path.join(staging, SHARD2 + ".incomplete")) == 700000
    result = mc.fetch_revision(p, "node-1", env())
    assert result["key"] == commit and not os.path.exists(staging)
    ranges = [e.get("range") for e in hub.stats()["log"] if e["path"].endswith(SHARD2) and e.get("range")]
    assert ranges == ["bytes=700000-"]
    assert mr.revision_completeness(str(tmp_path), MODEL, commit, verify="full")["complete"]


def test_check_mode_changes_nothing(hub, cli, tmp_path):
    result = mc.fetch_revision(params(hub, cli, tmp_path, check_mode=True), "node-1", env())
    assert (result["changed"], result["action"]) == (True, "would_fetch")
    assert not (tmp_path / "revisions").exists()
    assert hub.stats()["bytes_total"] == 0
