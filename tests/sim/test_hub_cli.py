"""The real ``modelscope download`` CLI against the stand-in hub (simulator tests).

The CLI comes from the venv that tests/sim/hub/build-wheelhouse.sh installs offline from
the pinned wheelhouse (built once, then cached by its stamp). The asserted messages are the
ones modelscope-hub 0.5.1 prints; tests/sim/hub/README.md quotes them with their sources.
"""

import hashlib
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "hub"))
from hub_harness import Hub, modelscope_cli, run_download  # noqa: E402

Q35 = "Qwen/Qwen3.5-27B"
Q06 = "Qwen/Qwen3-0.6B"
SHARD1 = "model-00001-of-00002.safetensors"
SHARD2 = "model-00002-of-00002.safetensors"


@pytest.fixture(scope="module")
def cli():
    return modelscope_cli()


@pytest.fixture(scope="module")
def hub():
    server = Hub()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def fresh(hub):
    hub.reset()


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def assert_matches_listing(local_dir, listing):
    local = {str(p.relative_to(local_dir)): p for p in local_dir.rglob("*") if p.is_file()}
    assert sorted(local) == sorted(listing), "local files differ from the hub's file list"
    for path, entry in listing.items():
        assert local[path].stat().st_size == entry["Size"], path
        assert sha256(local[path]) == entry["Sha256"], path


def model_bytes(listing):
    return sum(entry["Size"] for entry in listing.values())


def test_downloads_the_vl_model_with_checksums_and_a_rerun_fetches_nothing(cli, hub, tmp_path):
    dest = tmp_path / "models" / Q35
    proc = run_download(cli, hub, tmp_path, Q35, dest, revision="master")
    assert proc.returncode == 0, proc.stderr
    assert "Snapshot ready at %s" % dest in proc.stdout
    stats = hub.stats()
    listing = hub.files(Q35)
    assert_matches_listing(dest, listing)
    assert stats["models"][Q35]["bytes"] == model_bytes(listing)  # each byte pulled once
    assert stats["requests"]["repo_files"] == 1
    assert not [e for e in stats["log"] if e.get("range")]  # nothing to resume
    assert stats["requests"].get("internal_acceleration_info", 0) == 0  # INTRA_CLOUD=false

    hub.reset()
    again = run_download(cli, hub, tmp_path, Q35, dest, revision="master")
    assert again.returncode == 0, again.stderr
    assert hub.stats()["bytes_total"] == 0  # the client re-hashed locally, fetched nothing


def test_text_model_downloads(cli, hub, tmp_path):
    dest = tmp_path / "models" / Q06
    proc = run_download(cli, hub, tmp_path, Q06, dest)
    assert proc.returncode == 0, proc.stderr
    assert_matches_listing(dest, hub.files(Q06))


def test_a_changed_revision_redownloads_only_the_changed_shard(cli, hub, tmp_path):
    dest = tmp_path / "models" / Q35
    assert run_download(cli, hub, tmp_path, Q35, dest).returncode == 0
    old_commit = {t["Revision"]: t["CommitId"] for t in
                  hub.json("/api/v1/models/%s/revisions" % Q35)[1]["Data"]["RevisionMap"]["Tags"]
                  }["v0.9"]
    hub.reset()
    proc = run_download(cli, hub, tmp_path, Q35, dest, revision=old_commit)
    assert proc.returncode == 0, proc.stderr
    old_listing = hub.files(Q35, old_commit)
    assert_matches_listing(dest, old_listing)
    assert hub.stats()["models"][Q35]["files"] == {SHARD2: old_listing[SHARD2]["Size"]}


def test_a_drop_fails_a_run_without_retries_and_the_next_run_resumes(cli, hub, tmp_path):
    dest = tmp_path / "models" / Q35
    hub.faults(drop_after_bytes={"%s/%s" % (Q35, SHARD1): 1000000})
    first = run_download(cli, hub, tmp_path, Q35, dest, MODELSCOPE_DOWNLOAD_MAX_RETRIES=0)
    assert first.returncode == 1
    assert "error: [E1003] 1 of 15 file(s) failed to download from %s@master" % Q35 in first.stderr
    assert "- %s: [E1020] " % SHARD1 in first.stderr and "ConnectionError" in first.stderr
    assert "Re-run the same command to retry only the failed files." in first.stdout  # Suggestion
    partial = dest / (SHARD1 + ".incomplete")
    assert partial.stat().st_size == 1000000 and not (dest / SHARD1).exists()

    second = run_download(cli, hub, tmp_path, Q35, dest, MODELSCOPE_DOWNLOAD_MAX_RETRIES=0)
    assert second.returncode == 0, second.stderr
    listing = hub.files(Q35)
    assert_matches_listing(dest, listing)
    shard_gets = [(e["range"], e["status"], e["bytes"]) for e in hub.stats()["log"]
                  if e["path"].endswith("/" + SHARD1)]
    size = listing[SHARD1]["Size"]
    assert shard_gets == [(None, 200, 1000000), ("bytes=1000000-", 206, size - 1000000)]
    assert hub.stats()["models"][Q35]["bytes"] == model_bytes(listing)  # appended, not re-fetched


def test_a_single_drop_is_resumed_within_the_same_run_by_default(cli, hub, tmp_path):
    dest = tmp_path / "models" / Q35
    hub.faults(drop_after_bytes={"%s/%s" % (Q35, SHARD2): 500000})
    proc = run_download(cli, hub, tmp_path, Q35, dest)
    assert proc.returncode == 0, proc.stderr
    assert "Download failed for %s (ConnectionError), retrying in 0s" % SHARD2 in proc.stderr
    listing = hub.files(Q35)
    assert_matches_listing(dest, listing)
    ranges = [e["range"] for e in hub.stats()["log"] if e["path"].endswith("/" + SHARD2)]
    assert ranges == [None, "bytes=500000-"]
    assert hub.stats()["models"][Q35]["bytes"] == model_bytes(listing)


def test_a_wrong_checksum_once_is_refetched_and_verified(cli, hub, tmp_path):
    dest = tmp_path / "models" / Q06
    hub.faults(bad_checksum_once="%s/config.json" % Q06)
    proc = run_download(cli, hub, tmp_path, Q06, dest)
    assert proc.returncode == 0, proc.stderr
    assert "Hash validation failed for config.json, retrying in 1s (1/3): Hash mismatch for " \
           "config.json: expected" in proc.stderr
    listing = hub.files(Q06)
    assert_matches_listing(dest, listing)
    assert hub.stats()["models"][Q06]["files"]["config.json"] == 2 * listing["config.json"]["Size"]


def test_a_checksum_that_stays_wrong_fails_after_three_attempts(cli, hub, tmp_path):
    dest = tmp_path / "models" / Q06
    hub.faults(bad_checksum={"%s/config.json" % Q06: 3})
    proc = run_download(cli, hub, tmp_path, Q06, dest)
    assert proc.returncode == 1
    assert "- config.json: [E2020] Hash mismatch for config.json: expected" in proc.stderr
    assert not (dest / "config.json").exists()  # a corrupt file is never left in place
    assert not (dest / "config.json.incomplete").exists()


def test_unknown_revision_404_is_printed_with_the_hub_message(cli, hub, tmp_path):
    hub.faults(unknown_revision="404")
    proc = run_download(cli, hub, tmp_path, Q06, tmp_path / "m", revision="v9.9")
    assert proc.returncode == 1
    assert "\nerror: [E3020] [404] 获取模型版本失败，信息：record not found (request_id=" in proc.stderr
    assert "  Response: {'Code': 10010205001, 'Message': '获取模型版本失败，信息：record not found'" \
        in proc.stderr
    assert "Suggestion: The requested resource does not exist, or it is private and requires " \
           "authentication." in proc.stdout


def test_unknown_revision_as_the_real_hub_lists_it_is_an_empty_success(cli, hub, tmp_path):
    # The trap model_prefetch must guard against: exit 0 and an empty directory.
    proc = run_download(cli, hub, tmp_path, Q06, tmp_path / "m", revision="v9.9")
    assert proc.returncode == 0
    assert "No files to download for %s@v9.9" % Q06 in proc.stderr
    assert not any((tmp_path / "m").iterdir())


def test_private_repo_is_refused_without_the_token_and_served_with_it(cli, hub, tmp_path):
    hub.faults(private=[Q06], token="ms-sim-secret")
    proc = run_download(cli, hub, tmp_path, Q06, tmp_path / "a")
    assert proc.returncode == 1
    assert "error: [E3001] [401] Unauthorized: %s is private" % Q06 in proc.stderr
    assert "Suggestion: Authentication failed. Please verify your token is valid." in proc.stdout

    dest = tmp_path / "b"
    hub.reset()
    hub.faults(private=[Q06], token="ms-sim-secret")
    proc = run_download(cli, hub, tmp_path, Q06, dest, MODELSCOPE_API_TOKEN="ms-sim-secret")
    assert proc.returncode == 0, proc.stderr
    # The client sends the token both ways (Bearer header and m_session_id cookie) to the hub.
    hub_requests = [e for e in hub.stats()["log"] if e["path"].startswith("/api/")]
    assert len(hub_requests) == 12  # the listing and 11 files
    assert all(e["auth"] == ["bearer", "cookie"] for e in hub_requests)
    assert_matches_listing(dest, _private_listing(hub))
    assert "ms-sim-secret" not in proc.stdout + proc.stderr


def _private_listing(hub):
    status, body = hub.json("/api/v1/models/%s/repo/files?Revision=master&Recursive=True" % Q06,
                            headers={"Authorization": "Bearer ms-sim-secret"})
    assert status == 200
    return {f["Path"]: f for f in body["Data"]["Files"]}


def test_parallel_ranged_parts_are_answered_exactly(cli, hub, tmp_path):
    # The client's parallel mode (large files, several workers) demands a 206 whose
    # Content-Range is exactly the part it asked for, else it falls back to one stream.
    dest = tmp_path / "models" / Q35
    proc = run_download(cli, hub, tmp_path, Q35, dest, MODELSCOPE_DOWNLOAD_PARALLEL_THRESHOLD_MB=1,
                        MODELSCOPE_DOWNLOAD_PARALLEL_WORKERS=2, MODELSCOPE_DOWNLOAD_PART_SIZE_MB=1)
    assert proc.returncode == 0, proc.stderr
    assert "Ranged requests are not honoured" not in proc.stderr
    listing = hub.files(Q35)
    assert_matches_listing(dest, listing)
    size = listing[SHARD1]["Size"]
    ranges = sorted(e["range"] for e in hub.stats()["log"] if e["path"].endswith("/" + SHARD1))
    assert ranges == ["bytes=0-1048575", "bytes=1048576-2097151", "bytes=2097152-%d" % (size - 1)]
    assert hub.stats()["models"][Q35]["bytes"] == model_bytes(listing)
