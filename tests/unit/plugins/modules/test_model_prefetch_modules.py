# -*- coding: utf-8 -*-
"""ascendfleet.llm.model_cache_info and model_fetch through their real entry points.

A cache entry is built by hand (files, manifest, marker) the way the role documents it; the
fetch engine itself is tested against the real CLI in module_utils/test__model_cache.py.
"""

import hashlib
import json
import os
import socket

from ansible_collections.ascendfleet.llm.plugins.modules import model_cache_info, model_fetch

MODEL = "Qwen/Qwen3-0.6B"


def stage(cache, revision="v1.0", files=None):
    """A completed cache entry for MODEL: files, manifest.json, then the marker."""
    files = files or {"config.json": b'{"model_type": "qwen3"}\n', "model.safetensors": b"\0" * 64}
    mdir = os.path.join(str(cache), "models", "Qwen", "Qwen3-0.6B")
    os.makedirs(os.path.join(mdir, ".ascendfleet"))
    for name, data in files.items():
        with open(os.path.join(mdir, name), "wb") as handle:
            handle.write(data)
    manifest = {"format": 1, "model": MODEL, "revision": revision, "commit": "c" * 40,
                "source": "http://hub", "include": [], "exclude": [],
                "files": [{"path": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
                          for n, d in sorted(files.items())],
                "total_bytes": sum(len(d) for d in files.values())}
    raw = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    with open(os.path.join(mdir, ".ascendfleet", "manifest.json"), "wb") as handle:
        handle.write(raw)
    with open(os.path.join(mdir, ".ascendfleet", "complete"), "w") as handle:
        json.dump({"model": MODEL, "revision": revision,
                   "manifest_sha256": hashlib.sha256(raw).hexdigest()}, handle)
    return mdir


def test_cache_info_complete_and_missing(run_module, tmp_path):
    stage(tmp_path)
    failed, result = run_module(model_cache_info.main, {
        "cache_dir": str(tmp_path),
        "models": [{"model": MODEL, "revision": "v1.0"}, {"model": MODEL, "revision": "v0.9"},
                   {"model": "Qwen/Qwen3.5-27B"}]})
    assert not failed and result["changed"] is False
    assert [m["complete"] for m in result["models"]] == [True, False, False]
    assert result["models"][1]["reasons"] == ["marker is for revision 'v1.0', 'v0.9' requested"]
    assert result["models"][2]["reasons"] == ["no completion marker"]
    assert result["missing"] == [
        {"model": MODEL, "revision": "v0.9", "include": [], "exclude": []},
        {"model": "Qwen/Qwen3.5-27B", "revision": "master", "include": [], "exclude": []}]
    assert result["cli_version"] is None


def test_cache_info_full_verify_finds_a_corrupt_file(run_module, tmp_path):
    mdir = stage(tmp_path)
    with open(os.path.join(mdir, "model.safetensors"), "r+b") as handle:
        handle.write(b"\1")
    args = {"cache_dir": str(tmp_path), "models": [{"model": MODEL, "revision": "v1.0"}]}
    assert run_module(model_cache_info.main, args)[1]["models"][0]["complete"] is True
    result = run_module(model_cache_info.main, dict(args, verify="full"))[1]
    assert result["models"][0]["complete"] is False
    assert result["models"][0]["reasons"][0].startswith("model.safetensors: sha256 ")


def test_cache_info_reports_the_installed_cli(run_module, tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "modelscope").write_text("#!/bin/sh\n")
    (venv / "bin" / "modelscope").chmod(0o755)
    (venv / "lib" / "python3.11" / "site-packages" / "modelscope-1.40.2.dist-info").mkdir(parents=True)
    (venv / "lib" / "python3.11" / "site-packages" / "modelscope_hub-0.5.1.dist-info").mkdir(parents=True)
    result = run_module(model_cache_info.main, {"cache_dir": str(tmp_path), "models": [],
                                                "venv": str(venv)})[1]
    assert result["cli_version"] == "1.40.2"


def test_cache_info_malformed_id(run_module, tmp_path):
    failed, result = run_module(model_cache_info.main, {"cache_dir": str(tmp_path),
                                                        "models": [{"model": "Qwen3-0.6B"}]})
    assert failed
    assert result["msg"].startswith("malformed model id 'Qwen3-0.6B': expected 'Owner/Name'")


def test_fetch_noop_on_a_complete_entry_touches_no_hub(run_module, tmp_path):
    stage(tmp_path)
    failed, result = run_module(model_fetch.main, {
        "model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path),
        "endpoint": "http://127.0.0.1:9"})  # nothing listens: any hub contact would fail
    assert not failed
    assert (result["changed"], result["action"], result["bytes_fetched"]) == (False, "none", 0)


def test_fetch_check_mode_reports_and_writes_nothing(run_module, tmp_path):
    failed, result = run_module(model_fetch.main, {
        "model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path / "cache"),
        "endpoint": "http://127.0.0.1:9", "_ansible_check_mode": True})
    assert not failed
    assert (result["changed"], result["action"]) == (True, "would_fetch")
    assert not (tmp_path / "cache").exists()


def test_fetch_rsync_needs_source_url(run_module, tmp_path):
    failed, result = run_module(model_fetch.main, {"model": MODEL, "cache_dir": str(tmp_path),
                                                   "source": "rsync"})
    assert failed and "source_url" in result["msg"]


def test_fetch_token_is_never_echoed(run_module, tmp_path):
    failed, result = run_module(model_fetch.main, {
        "model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path),
        "endpoint": "http://127.0.0.1:9", "token": "tok-123-secret"})
    assert failed and result["msg"].startswith("hub http://127.0.0.1:9 is unreachable")
    assert "tok-123-secret" not in json.dumps(result)


def test_fetch_revisions_layout_migrates_todays_copy_without_the_hub(run_module, tmp_path):
    mdir = stage(tmp_path)
    args = {"model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path), "layout": "revisions",
            "endpoint": "http://127.0.0.1:9"}  # nothing listens: any hub contact would fail
    failed, result = run_module(model_fetch.main, args)
    assert not failed, result
    rdir = os.path.join(str(tmp_path), "revisions", "Qwen", "Qwen3-0.6B", "c" * 40)
    assert (result["changed"], result["migrated"], result["key"], result["model_dir"]) == (True, "c" * 40, "c" * 40, rdir)
    assert result["bytes_fetched"] == 0 and result["change"] is None
    for name in ("config.json", "model.safetensors"):  # the same inodes: linked, not copied
        assert os.stat(os.path.join(rdir, name)).st_ino == os.stat(os.path.join(mdir, name)).st_ino
    failed, again = run_module(model_fetch.main, args)
    assert not failed and (again["changed"], again["key"]) == (False, "c" * 40)


def test_fetch_revisions_layout_check_mode_writes_nothing(run_module, tmp_path):
    failed, result = run_module(model_fetch.main, {
        "model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path / "cache"), "layout": "revisions",
        "endpoint": "http://127.0.0.1:9", "_ansible_check_mode": True})
    assert not failed and (result["changed"], result["action"]) == (True, "would_fetch")
    assert not (tmp_path / "cache").exists()


def test_fetch_revisions_layout_is_hub_only(run_module, tmp_path):
    failed, result = run_module(model_fetch.main, {
        "model": MODEL, "cache_dir": str(tmp_path), "layout": "revisions", "source": "prestaged"})
    assert failed and result["msg"] == (
        "host %s: the revision cache fetches from the hub (or copies a seed's revision), not from source "
        "'prestaged'; use model_prefetch_source: hub or ascendfleet_cache_layout: flat" % socket.gethostname())


def test_fetch_revisions_layout_copy_names_a_revision_directory(run_module, tmp_path):
    failed, result = run_module(model_fetch.main, {
        "model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path), "layout": "revisions",
        "source": "rsync", "source_url": "rsync://u@seed:8730/ascendfleet-models/Qwen/Qwen3-0.6B"})
    assert failed and result["msg"] == (
        "host %s: source_url 'rsync://u@seed:8730/ascendfleet-models/Qwen/Qwen3-0.6B' does not name a revision "
        "directory; give the source's <cache>/revisions/Qwen/Qwen3-0.6B/<key> (key: the commit id)" % socket.gethostname())
    assert not (tmp_path / "revisions").exists()


def test_fetch_revisions_layout_copy_in_check_mode(run_module, tmp_path):
    """In check mode the seed resolves nothing, so the copy may not know the key: it says what it
    would do from the local cache and writes nothing (today's copy is not migrated either)."""
    mdir = stage(tmp_path)
    args = {"model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path), "layout": "revisions",
            "source": "rsync", "source_url": "rsync://u@seed:8730/ascendfleet-models/Qwen/Qwen3-0.6B/",
            "_ansible_check_mode": True}
    failed, result = run_module(model_fetch.main, args)
    assert not failed and (result["changed"], result["action"]) == (True, "would_fetch")
    assert not (tmp_path / "revisions").exists() and os.path.isdir(mdir)
    # Once the revision is here, check mode names no change for its key, and one for another key.
    assert not run_module(model_fetch.main, {"model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path),
                                             "layout": "revisions", "endpoint": "http://127.0.0.1:9"})[0]
    same = run_module(model_fetch.main, dict(args, source_url=args["source_url"] + "c" * 40))[1]
    assert (same["changed"], same["action"]) == (False, "none")
    other = run_module(model_fetch.main, dict(args, source_url=args["source_url"] + "d" * 40))[1]
    assert (other["changed"], other["action"]) == (True, "would_fetch")


def test_cache_info_revisions_layout_reads_the_resolved_revision(run_module, tmp_path):
    """Today's copy is missing in the revisions layout until the fetch moves it in (no hub); then
    the resolved revision is complete and named by key and commit."""
    stage(tmp_path)
    wanted = [{"model": MODEL, "revision": "v1.0"}]
    args = {"cache_dir": str(tmp_path), "models": wanted, "layout": "revisions"}
    failed, before = run_module(model_cache_info.main, args)
    assert not failed and before["changed"] is False
    assert (before["models"][0]["complete"], before["models"][0]["key"]) == (False, None)
    assert before["models"][0]["reasons"] == ["revision 'v1.0' was never fetched into the revision cache"]
    assert before["missing"] == [{"model": MODEL, "revision": "v1.0", "include": [], "exclude": []}]
    # The flat reader still sees today's copy as complete (what vllm_compose mounts today).
    assert run_module(model_cache_info.main, dict(args, layout="flat"))[1]["missing"] == []

    assert not run_module(model_fetch.main, {"model": MODEL, "revision": "v1.0", "cache_dir": str(tmp_path),
                                             "layout": "revisions", "endpoint": "http://127.0.0.1:9"})[0]
    failed, after = run_module(model_cache_info.main, args)
    state = after["models"][0]
    assert (state["complete"], state["key"], state["commit"], after["missing"]) == (True, "c" * 40, "c" * 40, [])
    assert state["model_dir"] == os.path.join(str(tmp_path), "revisions", "Qwen", "Qwen3-0.6B", "c" * 40)
    # Another include/exclude set is another copy: missing.
    other = run_module(model_cache_info.main, dict(args, models=[dict(wanted[0], include=["*.json"])]))[1]
    assert other["models"][0]["reasons"] == ["include/exclude globs differ from the manifest's"]
    # resolve=always asks the hub (test__model_cache.py: against the sim hub); none here.
    failed, always = run_module(model_cache_info.main, dict(args, resolve="always", endpoint="http://127.0.0.1:9",
                                                            token="tok-123-secret"))
    assert failed and always["msg"].startswith("hub http://127.0.0.1:9 is unreachable")
    assert "tok-123-secret" not in json.dumps(always)
