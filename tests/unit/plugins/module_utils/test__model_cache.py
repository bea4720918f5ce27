"""model_fetch's engine against real processes: the real ``modelscope`` CLI downloading from
the stand-in hub (tests/sim/hub, a simulator on 127.0.0.1), and real ``rsync`` for copies.

Expected sizes and hashes come from the hub's own listing (``GET /_sim/repos``), never from
the code under test. The CLI comes from tests/sim/hub/build-wheelhouse.sh's venv (built once,
then cached); the tests skip, saying why, when it cannot be built.
"""

import json
import os
import pathlib
import shutil
import sys
import threading
import time

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_cache as mc
from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
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


def expected(hub, revision):
    repos = hub.json("/_sim/repos")[1][MODEL]
    commit = repos["tags"].get(revision) or repos["branches"][revision]
    return repos["commits"][commit]


def params(hub, cli, cache, **extra):
    out = dict(model=MODEL, revision="v1.0", cache_dir=str(cache), source="hub", source_url=None,
               endpoint=hub.url, cli=cli, include=[], exclude=[], attempts=2, space_margin=0,
               lock_timeout=1, progress_interval=1, verify="quick", env={})
    out.update(extra)
    return out


def env():
    return {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy")}


def assert_matches_hub(mdir, files):
    on_disk = sorted(p.name for p in pathlib.Path(mdir).iterdir() if p.name != ".ascendfleet")
    assert on_disk == sorted(files)
    for path, meta in files.items():
        assert facts.sha256_file(os.path.join(mdir, path)) == meta["sha256"], path


def test_download_then_noop_then_revision_change(hub, cli, tmp_path):
    result = mc.fetch(params(hub, cli, tmp_path), "node-1", env())
    files = expected(hub, "v1.0")
    size = sum(f["size"] for f in files.values())
    assert (result["changed"], result["action"], result["bytes_fetched"]) == (True, "downloaded", size)
    assert_matches_hub(result["model_dir"], files)
    assert hub.stats()["bytes_total"] == size
    marker = json.loads(pathlib.Path(result["model_dir"], ".ascendfleet", "complete").read_text())
    manifest = pathlib.Path(result["model_dir"], ".ascendfleet", "manifest.json").read_bytes()
    assert marker == {"model": MODEL, "revision": "v1.0", "manifest_sha256": facts.sha256_bytes(manifest)}

    hub.reset()
    again = mc.fetch(params(hub, cli, tmp_path), "node-1", env())
    assert (again["changed"], again["action"]) == (False, "none")
    assert hub.stats()["bytes_total"] == 0  # the fast path contacts no hub

    # v0.9 differs from v1.0 in the last shard only: only that shard is fetched.
    hub.reset()
    older = mc.fetch(params(hub, cli, tmp_path, revision="v0.9"), "node-1", env())
    assert older["files_fetched"] == [SHARD2]
    assert older["diff"]["changed"] == [SHARD2]
    assert hub.stats()["models"][MODEL]["files"] == {SHARD2: expected(hub, "v0.9")[SHARD2]["size"]}
    assert_matches_hub(older["model_dir"], expected(hub, "v0.9"))


def test_interrupted_download_keeps_partial_and_resumes(hub, cli, tmp_path):
    hub.faults(drop_after_bytes={MODEL + "/" + SHARD2: {"bytes": 700000, "times": 1}})
    p = params(hub, cli, tmp_path, attempts=1, env={"MODELSCOPE_DOWNLOAD_MAX_RETRIES": "0"})
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch(p, "node-1", env())
    mdir = ms.model_dir(str(tmp_path), MODEL)
    assert str(err.value).startswith("host node-1: Qwen/Qwen3.5-27B@v1.0 from %s failed after 1 "
                                     "attempt(s): modelscope download exited 1: " % hub.url)
    assert "partial downloads are kept in %s and the next run resumes them; no completion " \
           "marker was written" % mdir in str(err.value)
    assert not os.path.exists(os.path.join(mdir, ".ascendfleet", "complete"))
    assert os.path.getsize(os.path.join(mdir, SHARD2 + ".incomplete")) == 700000

    result = mc.fetch(p, "node-1", env())
    assert result["changed"]
    ranges = [e.get("range") for e in hub.stats()["log"] if e["path"].endswith(SHARD2) and e.get("range")]
    assert ranges == ["bytes=700000-"]
    assert_matches_hub(result["model_dir"], expected(hub, "v1.0"))


def test_checksum_wrong_beyond_cli_retries_is_refetched_by_the_next_attempt(hub, cli, tmp_path):
    # The CLI itself tries a file 3 times on a hash mismatch; the 4th serve is right.
    hub.faults(bad_checksum={MODEL + "/config.json": 3})
    result = mc.fetch(params(hub, cli, tmp_path), "node-1", env())
    assert (result["changed"], result["attempts"]) == (True, 2)
    assert_matches_hub(result["model_dir"], expected(hub, "v1.0"))


def test_checksum_always_wrong_fails_clearly(hub, cli, tmp_path):
    hub.faults(bad_checksum={MODEL + "/config.json": 100})
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch(params(hub, cli, tmp_path, attempts=1), "node-1", env())
    assert "failed after 1 attempt(s): modelscope download exited 1:" in str(err.value)
    assert "Hash mismatch for config.json" in str(err.value)
    assert not os.path.exists(os.path.join(ms.model_dir(str(tmp_path), MODEL), ".ascendfleet", "complete"))


@pytest.mark.parametrize("revision,fault,text", [
    ("v9.9", "empty", "Qwen/Qwen3.5-27B: revision 'v9.9' not found on the hub {url} (it lists no files for it)"),
    ("v9.9", "404", "Qwen/Qwen3.5-27B: revision 'v9.9' not found on the hub {url} (HTTP 404)"),
])
def test_unknown_revision(hub, cli, tmp_path, revision, fault, text):
    hub.faults(unknown_revision=fault)
    with pytest.raises(ms.HubError) as err:
        mc.fetch(params(hub, cli, tmp_path, revision=revision), "node-1", env())
    assert str(err.value).startswith(text.format(url=hub.url))


def test_private_model_needs_token(hub, cli, tmp_path):
    hub.faults(private=[MODEL], token="s3cret-token")
    with pytest.raises(ms.HubError, match="is private on the hub .* and no token was given"):
        mc.fetch(params(hub, cli, tmp_path), "node-1", env())
    # As the role passes it: the module's no_log option (issue 28: not the task's environment, which
    # Ansible writes into the remote command line). The hub is slowed so the CLI runs for a while;
    # meanwhile every process's command line is read: none holds the token, and the CLI has it in its
    # environment (readable by its owner only).
    hub.faults(throttle_bytes_per_sec=2000000)
    seen = {"cmdlines": set(), "cli_environ": False}
    done = threading.Event()

    def watch():
        while not done.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    cmdline = pathlib.Path("/proc", pid, "cmdline").read_bytes()
                    if b"download\0--model\0" + MODEL.encode() in cmdline:
                        seen["cli_environ"] |= b"MODELSCOPE_API_TOKEN=s3cret-token\0" in pathlib.Path("/proc", pid, "environ").read_bytes()
                except OSError:
                    continue
                seen["cmdlines"].add(cmdline)
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = mc.fetch(params(hub, cli, tmp_path, token="s3cret-token"), "node-1", env())
    finally:
        done.set()
        watcher.join()
    assert result["changed"]
    clis = [c for c in seen["cmdlines"] if b"download\0--model\0" + MODEL.encode() in c]
    assert clis, "the CLI's download was never seen running"
    assert seen["cli_environ"], "the CLI ran without the token in its environment"
    assert [c for c in seen["cmdlines"] if b"s3cret-token" in c] == []
    # Nothing under the cache holds it.
    for root, _dirs, names in os.walk(str(tmp_path)):
        for name in names:
            assert b"s3cret-token" not in pathlib.Path(root, name).read_bytes(), os.path.join(root, name)


def test_a_token_in_the_module_environment_still_works(hub, cli, tmp_path):
    # Callers that set MODELSCOPE_API_TOKEN in the module's environment (not the role) keep working.
    hub.faults(private=[MODEL], token="s3cret-token")
    result = mc.fetch(params(hub, cli, tmp_path), "node-1", dict(env(), MODELSCOPE_API_TOKEN="s3cret-token"))
    assert result["changed"]


def test_hub_unreachable(cli, tmp_path):
    p = dict(model=MODEL, revision="v1.0", cache_dir=str(tmp_path), source="hub",
             endpoint="http://127.0.0.1:9", cli=cli)
    with pytest.raises(ms.HubError, match=r"^hub http://127.0.0.1:9 is unreachable \("):
        mc.fetch(p, "node-1", env())


def test_cache_path_not_a_directory(hub, cli, tmp_path):
    cache = tmp_path / "file"
    cache.write_text("x")
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch(params(hub, cli, cache), "node-1", env())
    assert str(err.value) == ("host node-1: model_prefetch_cache_dir %s exists but is not a directory; "
                              "point it at a directory on the cache disk" % cache)


def test_disk_too_small(hub, cli, tmp_path):
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch(params(hub, cli, tmp_path, space_margin=1 << 60), "node-1", env())
    assert str(err.value).startswith("host node-1: not enough free space on ")
    assert "for Qwen/Qwen3.5-27B@v1.0: needs 1024.0 PiB (4.1 MiB to download + 1024.0 PiB margin)" in str(err.value)
    assert hub.stats()["models"].get(MODEL, {}).get("bytes", 0) == 0


def test_quick_inspection_reads_no_model_bytes(hub, cli, tmp_path, monkeypatch):
    mc.fetch(params(hub, cli, tmp_path), "node-1", env())

    def no_reads(path, *args):
        raise AssertionError("read %s on the fast path" % path)

    monkeypatch.setattr(facts, "sha256_file", no_reads)
    state = mc.ModelCache(str(tmp_path), MODEL, "v1.0").inspect("quick")
    assert state["complete"] and state["reasons"] == []
    with pytest.raises(AssertionError, match="on the fast path"):
        mc.ModelCache(str(tmp_path), MODEL, "v1.0").inspect("full")


def test_full_verification_repairs_a_corrupt_file(hub, cli, tmp_path):
    first = mc.fetch(params(hub, cli, tmp_path), "node-1", env())
    shard = pathlib.Path(first["model_dir"], SHARD2)
    data = bytearray(shard.read_bytes())
    data[5000] ^= 0xFF
    shard.write_bytes(bytes(data))
    assert mc.fetch(params(hub, cli, tmp_path), "node-1", env())["changed"] is False  # quick: sizes match
    hub.reset()
    result = mc.fetch(params(hub, cli, tmp_path, verify="full"), "node-1", env())
    assert result["changed"] and result["files_fetched"] == [SHARD2]
    assert_matches_hub(result["model_dir"], expected(hub, "v1.0"))


@pytest.mark.skipif(shutil.which("rsync") is None, reason="rsync is not installed on this machine")
def test_rsync_copy_verifies_against_the_source_manifest(hub, cli, tmp_path, monkeypatch):
    seed = mc.fetch(params(hub, cli, tmp_path / "seed"), "seed", env())
    copy_params = dict(model=MODEL, revision="v1.0", cache_dir=str(tmp_path / "peer"), source="rsync",
                       source_url=seed["model_dir"], endpoint=hub.url, attempts=1, space_margin=0,
                       progress_interval=1)
    verifiers = []

    class Recorded(mc.HashAhead):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            verifiers.append(self)

    monkeypatch.setattr(mc, "HashAhead", Recorded)
    copied = mc.fetch(copy_params, "peer", env())
    assert (copied["changed"], copied["action"]) == (True, "copied")
    assert_matches_hub(copied["model_dir"], expected(hub, "v1.0"))
    # Every byte copied was hashed against the manifest, none twice.
    assert [v.bytes_read for v in verifiers] == [sum(f["size"] for f in expected(hub, "v1.0").values())]
    assert mc.fetch(copy_params, "peer", env())["changed"] is False

    # A corrupt source file never becomes a complete copy. What rsync itself said of the copy: its
    # whole-file transfer checksum only proves the peer got the bytes the seed's disk gave it, so
    # rsync accepts the corrupt shard (exit 0) - the peer's own sha256 against the seed's manifest
    # is what refuses it (docs/architecture.md).
    rsync_exits = []
    real_transfer = mc._transfer

    def recorded_transfer(*args, **kwargs):
        out = real_transfer(*args, **kwargs)
        rsync_exits.append(out[0])
        return out

    monkeypatch.setattr(mc, "_transfer", recorded_transfer)
    shard = pathlib.Path(seed["model_dir"], SHARD2)
    data = bytearray(shard.read_bytes())
    data[100] ^= 0xFF
    shard.write_bytes(bytes(data))
    other = dict(copy_params, cache_dir=str(tmp_path / "peer2"))
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch(other, "peer2", env())
    assert "failed after 1 attempt(s): verification failed: %s (sha256 " % SHARD2 in str(err.value)
    peer2 = ms.model_dir(str(tmp_path / "peer2"), MODEL)
    assert not os.path.exists(os.path.join(peer2, ".ascendfleet", "complete"))
    assert rsync_exits == [0], rsync_exits
    # The shard that did not verify is not kept (the next run copies it again); the others are.
    assert not os.path.exists(os.path.join(peer2, SHARD2))
    assert os.path.exists(os.path.join(peer2, "config.json"))

    wrong_rev = dict(copy_params, revision="v0.9", cache_dir=str(tmp_path / "peer3"))
    with pytest.raises(ms.ModelPrefetchError, match="holds Qwen/Qwen3.5-27B@v1.0, not Qwen/Qwen3.5-27B@v0.9"):
        mc.fetch(wrong_rev, "peer3", env())


# --------------------------------------------------------------------------- fetch_revision
# One directory per resolved revision (_model_revisions): expected commits from the hub's own
# listing, bytes fetched from its counters.

def repo(hub):
    return hub.json("/_sim/repos")[1][MODEL]


def rparams(hub, cli, cache, **extra):
    """fetch_revision's params: master, the hub asked every run (a moved branch is noticed)."""
    return params(hub, cli, cache, **dict(dict(revision="master", resolve="always"), **extra))


def shas(directory, files):
    return {p: facts.sha256_file(os.path.join(directory, p)) for p in files}


def test_a_moved_branch_is_fetched_beside_the_old_revision(hub, cli, tmp_path):
    info = repo(hub)
    old, new = info["tags"]["v0.9"], info["branches"]["master"]
    assert old != new
    hub.json("/_sim/branches", "POST", {MODEL: {"master": old}})
    first = mc.fetch_revision(rparams(hub, cli, tmp_path), "node-1", env())
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
    second = mc.fetch_revision(rparams(hub, cli, tmp_path), "node-1", env())
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
    again = mc.fetch_revision(rparams(hub, cli, tmp_path), "node-1", env())
    assert (again["changed"], again["key"], again["change"]) == (False, new, None)
    assert hub.stats()["bytes_total"] == 0
    hub.reset()
    quiet = mc.fetch_revision(rparams(hub, cli, tmp_path, resolve="missing"), "node-1", env())
    assert (quiet["changed"], quiet["key"]) == (False, new)
    assert hub.stats()["requests"] == {}


def test_a_disk_too_small_is_refused_before_any_download(hub, cli, tmp_path):
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch_revision(rparams(hub, cli, tmp_path, space_margin=1 << 60), "node-1", env())
    text = str(err.value)
    assert text.startswith("host node-1: not enough free space on ")
    assert "for %s@master: needs " % MODEL in text and "point model_prefetch_cache_dir at a larger disk" in text
    assert hub.stats()["bytes_total"] == 0
    assert mr.list_revisions(str(tmp_path), MODEL) == []


def test_todays_copy_is_migrated_without_a_byte_downloaded(hub, cli, tmp_path):
    legacy = mc.fetch(params(hub, cli, tmp_path), "node-1", env())
    assert legacy["action"] == "downloaded"
    legacy_shas = shas(legacy["model_dir"], repo(hub)["commits"][repo(hub)["tags"]["v1.0"]])
    hub.reset()
    result = mc.fetch_revision(rparams(hub, cli, tmp_path, revision="v1.0"), "node-1", env())
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
    p = rparams(hub, cli, tmp_path, attempts=1, env={"MODELSCOPE_DOWNLOAD_MAX_RETRIES": "0"})
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
    result = mc.fetch_revision(rparams(hub, cli, tmp_path, check_mode=True), "node-1", env())
    assert (result["changed"], result["action"]) == (True, "would_fetch")
    assert not (tmp_path / "revisions").exists()
    assert hub.stats()["bytes_total"] == 0


# --------------------------------------------------------------------------- copy_revision
# The fan-out in the revisions layout: a peer copies the seed's revision directory as a unit.

def cparams(cache, source_url, **extra):
    out = dict(model=MODEL, revision="v1.0", cache_dir=str(cache), source="rsync", source_url=source_url,
               attempts=1, space_margin=0, lock_timeout=1, progress_interval=1, verify="quick",
               include=[], exclude=[], layout="revisions")
    out.update(extra)
    return out


@pytest.mark.skipif(shutil.which("rsync") is None, reason="rsync is not installed on this machine")
def test_a_seed_revision_is_copied_as_a_unit(hub, cli, tmp_path):
    seed = mc.fetch_revision(rparams(hub, cli, tmp_path / "seed", revision="v1.0", resolve="missing"), "seed", env())
    commit = repo(hub)["tags"]["v1.0"]
    assert (seed["key"], seed["model_dir"]) == (commit, mr.revision_dir(str(tmp_path / "seed"), MODEL, commit))
    served = hub.stats()["bytes_total"]
    files = repo(hub)["commits"][commit]
    assert served == sum(m["size"] for m in files.values())

    peer = str(tmp_path / "peer")
    copied = mc.fetch_revision(cparams(peer, seed["model_dir"]), "peer", env())
    assert (copied["changed"], copied["action"], copied["key"], copied["commit"]) == (True, "copied", commit, commit)
    assert copied["model_dir"] == mr.revision_dir(peer, MODEL, commit)
    assert copied["bytes_fetched"] == served and sorted(copied["files_fetched"]) == sorted(files)
    assert shas(copied["model_dir"], files) == {p: m["sha256"] for p, m in files.items()}
    assert mr.revision_completeness(peer, MODEL, commit, verify="full")["complete"]
    assert mr.resolved(peer, MODEL, "v1.0")["key"] == commit
    assert not os.path.exists(mr.staging_dir(peer, MODEL, commit))
    # The manifest names the revision the seed's name resolved to, and the source it came from.
    manifest = mr.read_manifest(copied["model_dir"])
    assert (manifest["names"], manifest["source"], manifest["commit"]) == (["v1.0"], seed["model_dir"], commit)
    # The progress line of the copy is where the action plugin reads it.
    with open(mr.progress_path(peer, MODEL)) as handle:
        progress = json.load(handle)
    assert (progress["done"], progress["total"], progress["running"]) == (served, served, False)
    assert hub.stats()["bytes_total"] == served  # the copy asked the hub nothing

    again = mc.fetch_revision(cparams(peer, seed["model_dir"]), "peer", env())
    assert (again["changed"], again["action"], again["key"], again["change"]) == (False, "none", commit, None)

    # A corrupt source file never becomes a revision; the staging directory is kept to resume.
    shard = pathlib.Path(seed["model_dir"], SHARD2)
    data = bytearray(shard.read_bytes())
    data[100] ^= 0xFF
    shard.write_bytes(bytes(data))
    other = str(tmp_path / "peer2")
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch_revision(cparams(other, seed["model_dir"]), "peer2", env())
    assert "failed after 1 attempt(s): verification failed: %s (sha256 " % SHARD2 in str(err.value)
    assert mr.list_revisions(other, MODEL) == [] and os.path.isdir(mr.staging_dir(other, MODEL, commit))


@pytest.mark.skipif(shutil.which("rsync") is None, reason="rsync is not installed on this machine")
def test_a_copy_is_refused_before_any_byte_when_the_disk_is_too_small(hub, cli, tmp_path):
    seed = mc.fetch_revision(rparams(hub, cli, tmp_path / "seed", revision="v1.0", resolve="missing"), "seed", env())
    peer = str(tmp_path / "peer")
    with pytest.raises(ms.ModelPrefetchError) as err:
        mc.fetch_revision(cparams(peer, seed["model_dir"], space_margin=1 << 60), "peer", env())
    text = str(err.value)
    assert text.startswith("host peer: not enough free space on ")
    assert "for %s@v1.0: needs " % MODEL in text and "point model_prefetch_cache_dir at a larger disk" in text
    staging = mr.staging_dir(peer, MODEL, seed["key"])
    assert sorted(os.listdir(staging)) == [".ascendfleet"]  # the source manifest was read, no model file
    assert mr.list_revisions(peer, MODEL) == []


def test_a_peer_holding_todays_copy_copies_nothing(hub, cli, tmp_path):
    """Migration in the fan-out: a peer that holds the model in today's (flat) layout moves it in
    by hard links; the seed's directory is not even read (here it does not exist)."""
    peer = str(tmp_path / "peer")
    legacy = mc.fetch(params(hub, cli, peer), "peer", env())
    commit = repo(hub)["tags"]["v1.0"]
    hub.reset()
    nowhere = str(tmp_path / "no-seed" / "revisions" / MODEL / commit)
    result = mc.fetch_revision(cparams(peer, nowhere), "peer", env())
    assert (result["changed"], result["migrated"], result["key"], result["bytes_fetched"]) == (True, commit, commit, 0)
    assert result["action"] == "none" and hub.stats()["requests"] == {}
    rdir = mr.revision_dir(peer, MODEL, commit)
    for path in repo(hub)["commits"][commit]:
        assert os.stat(os.path.join(rdir, path)).st_ino == os.stat(os.path.join(legacy["model_dir"], path)).st_ino
    assert mr.resolved(peer, MODEL, "v1.0", verify="full")["complete"]
    assert facts.model_completeness(peer, MODEL, "v1.0", verify="full")["complete"]


def test_hub_resolution_names_a_moved_branch_and_downloads_nothing(hub, cli, tmp_path):
    """resolve=always's read (model_cache_info): the hub's key now, whether it is complete and
    recorded here; one file list request, no byte, nothing written."""
    info = repo(hub)
    old, new = info["tags"]["v0.9"], info["branches"]["master"]
    hub.json("/_sim/branches", "POST", {MODEL: {"master": old}})
    cache = str(tmp_path)
    before = mc.hub_resolution(cache, MODEL, "master", [], [], hub.url)
    assert (before["key"], before["complete"], before["current"]) == (old, False, False)
    mc.fetch_revision(rparams(hub, cli, tmp_path), "node-1", env())
    hub.reset()
    hub.json("/_sim/branches", "POST", {MODEL: {"master": old}})
    same = mc.hub_resolution(cache, MODEL, "master", [], [], hub.url)
    assert (same["key"], same["complete"], same["current"], same["revision"]) == (old, True, True, "master")
    assert hub.stats()["requests"] == {"repo_files": 1} and hub.stats()["bytes_total"] == 0
    hub.json("/_sim/branches", "POST", {MODEL: {"master": new}})
    moved = mc.hub_resolution(cache, MODEL, "master", [], [], hub.url)
    assert (moved["key"], moved["complete"], moved["current"]) == (new, False, False)
    assert [r["key"] for r in mr.list_revisions(cache, MODEL)] == [old]
    # The new revision fetched: complete and recorded, so the next read finds nothing to do.
    mc.fetch_revision(rparams(hub, cli, tmp_path), "node-1", env())
    assert mc.hub_resolution(cache, MODEL, "master", [], [], hub.url)["current"] is True
