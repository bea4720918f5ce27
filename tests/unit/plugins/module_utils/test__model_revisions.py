"""The model cache addressed by resolved revision (_model_revisions), on hand-written cases and on
real files in a temporary cache: keys, refs, references from compose files, what may be removed,
space, the staging -> rename rule and the migration of today's layout.

The defect of issue 29 is the first file-level case: today's cache writes revision v2 over master
in place, so master reads as incomplete; here master stays complete, byte for byte.
"""

import hashlib
import json
import os
import pathlib

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_cache as mc
from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_revisions as mr
from ansible_collections.ascendfleet.llm.plugins.module_utils._modelscope import ModelPrefetchError

MODEL = "Qwen/Qwen3.5-27B"
CACHE = "/var/lib/ascendfleet/modelscope"
COMMIT_A = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
COMMIT_B = "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"
# A recorded compose file of today's layout (vllm_compose's template, rendered on the sim fleet).
LEGACY_COMPOSE = (pathlib.Path(__file__).resolve().parents[1] / "modules" / "fixtures" / "vllm_last_good"
                  / "compose-qwen.txt").read_text()
LEGACY_MOUNT = '"/var/lib/ascendfleet/modelscope/models:/root/.cache/modelscope/hub/models:ro"'


def sha(data):
    return hashlib.sha256(data).hexdigest()


# Revision A and B of a model: B changes only the last shard (as the sim hub's v0.9 -> v1.0).
A_BYTES = {"config.json": b'{"model_type": "qwen3_5"}\n', "model-00001-of-00002.safetensors": b"\x01" * 4096,
           "model-00002-of-00002.safetensors": b"\x02" * 2048}
B_BYTES = dict(A_BYTES, **{"model-00002-of-00002.safetensors": b"\x03" * 3000})


def listing(contents):
    return [{"path": p, "size": len(b), "sha256": sha(b)} for p, b in sorted(contents.items())]


def revision_mount(key, cache=CACHE):
    return '"%s/revisions/%s/%s:/root/.cache/modelscope/hub/models/%s:ro"' % (cache, MODEL, key, MODEL)


# --------------------------------------------------------------------------- keys and layout

def test_key_is_the_commit_when_the_hub_names_one():
    assert mr.revision_key(COMMIT_A, listing(A_BYTES)) == COMMIT_A
    assert mr.revision_key(COMMIT_A.upper(), listing(A_BYTES)) == COMMIT_A


def test_key_falls_back_to_the_content_of_the_file_list():
    # No commit, or a name instead of one: the key is the content digest, the same for the same
    # files in any order, different when one byte of one file differs.
    key = mr.revision_key(None, listing(A_BYTES))
    assert key.startswith("content-") and len(key) == len("content-") + 40
    assert mr.revision_key("master", list(reversed(listing(A_BYTES)))) == key
    assert mr.revision_key(None, listing(B_BYTES)) != key
    assert mr.is_key(key) and mr.is_key(COMMIT_A)


@pytest.mark.parametrize("bad", ["master", "v1.0", "../" + COMMIT_A, COMMIT_A + "/x", COMMIT_A[:39], "content-x", ""])
def test_a_directory_is_only_made_of_a_key(bad):
    assert not mr.is_key(bad)
    with pytest.raises(mr.RevisionError, match="not a revision key"):
        mr.revision_dir(CACHE, MODEL, bad)


def test_the_container_path_does_not_change_only_the_host_side():
    assert mr.mount_source(CACHE, MODEL, COMMIT_A) == "%s/revisions/Qwen/Qwen3.5-27B/%s" % (CACHE, COMMIT_A)
    assert mr.staging_dir(CACHE, MODEL, COMMIT_A) == "%s/revisions/Qwen/Qwen3.5-27B/.staging-%s" % (CACHE, COMMIT_A)
    assert facts.container_model_path(MODEL) == "/root/.cache/modelscope/hub/models/Qwen/Qwen3.5-27B"


# --------------------------------------------------------------------------- refs

def test_a_moved_branch_is_a_new_key_and_remembers_the_old_one():
    refs, old = mr.resolve_ref({}, "master", COMMIT_A, COMMIT_A, "2026-12-04T10:00:00Z")
    assert old is None
    assert refs == {"master": {"key": COMMIT_A, "commit": COMMIT_A, "resolved_at": "2026-12-04T10:00:00Z"}}
    moved, old = mr.resolve_ref(refs, "master", COMMIT_B, COMMIT_B, "2026-12-04T11:00:00Z")
    assert old == COMMIT_A
    assert moved["master"] == {"key": COMMIT_B, "commit": COMMIT_B, "resolved_at": "2026-12-04T11:00:00Z",
                               "previous_key": COMMIT_A}
    # Resolving to the same key again changes nothing (idempotent: the record is not rewritten).
    again, old = mr.resolve_ref(moved, "master", COMMIT_B, COMMIT_B, "2026-12-04T12:00:00Z")
    assert again == moved and old == COMMIT_B


def test_refs_survive_damage_as_an_empty_record():
    assert mr.parse_refs(None) == {}
    assert mr.parse_refs(b"{not json") == {}
    assert mr.parse_refs(b'{"master": {"key": "master"}, "v1.0": {"key": "%s"}}' % COMMIT_A.encode()) == {
        "v1.0": {"key": COMMIT_A}}
    assert mr.parse_refs(mr.dumps_refs({"master": {"key": COMMIT_A}})) == {"master": {"key": COMMIT_A}}


def test_summary_line_of_a_moved_revision():
    assert mr.revision_change("master", COMMIT_A, COMMIT_B) == "revision master: 3c1a4f0e9b7d -> 9e2f6b3d8a15"
    assert mr.revision_change("master", COMMIT_A, COMMIT_A) is None
    assert mr.revision_change("master", None, COMMIT_A) is None
    content = mr.content_key(listing(B_BYTES))
    assert mr.revision_change("v2", COMMIT_A, content) == "revision v2: 3c1a4f0e9b7d -> %s" % content[:20]


# --------------------------------------------------------------------------- references

def test_todays_compose_file_references_the_legacy_directory():
    assert LEGACY_MOUNT in LEGACY_COMPOSE
    refs, legacy = mr.referenced_keys(CACHE, [LEGACY_COMPOSE])
    assert refs == {} and legacy is True


def test_revision_mounts_are_read_from_live_last_good_and_previous():
    live = LEGACY_COMPOSE.replace(LEGACY_MOUNT, revision_mount(COMMIT_B))
    previous = LEGACY_COMPOSE.replace(LEGACY_MOUNT, revision_mount(COMMIT_A))
    other_cache = LEGACY_COMPOSE.replace(LEGACY_MOUNT, revision_mount(COMMIT_A[::-1], "/srv/other"))
    refs, legacy = mr.referenced_keys(CACHE, [live, live, previous, None, other_cache])
    assert refs == {MODEL: {COMMIT_A, COMMIT_B}}
    # The container path /root/.cache/modelscope/hub/models/... is not the host's <cache>/models.
    assert legacy is False


def test_a_longer_cache_path_is_not_the_legacy_mount():
    refs, legacy = mr.referenced_keys("/srv/cache", ['- "/srv/cache2/models:/x:ro"', '- "/srv/cache/models2:/x"'])
    assert (refs, legacy) == ({}, False)
    assert mr.referenced_keys("/srv/cache/", ['- "/srv/cache/models:/x:ro"'])[1] is True


# --------------------------------------------------------------------------- removal

REVS = [{"key": "a" * 40, "completed_at": 100}, {"key": "b" * 40, "completed_at": 200},
        {"key": "c" * 40, "completed_at": 300}, {"key": "d" * 40, "completed_at": 400}]


def test_keep_counts_the_protected_revisions_newest_first():
    kept, removed = mr.removal_plan(REVS, protected={"a" * 40}, keep=2)
    assert kept == ["a" * 40, "d" * 40]
    assert removed == ["c" * 40, "b" * 40]


def test_protected_revisions_stay_whatever_keep_says():
    kept, removed = mr.removal_plan(REVS, protected={"a" * 40, "b" * 40, "c" * 40}, keep=1)
    assert sorted(kept) == ["a" * 40, "b" * 40, "c" * 40] and removed == ["d" * 40]
    assert mr.removal_plan(REVS, protected=set(), keep=0) == ([], ["d" * 40, "c" * 40, "b" * 40, "a" * 40])
    assert mr.removal_plan(REVS, protected=set(), keep=10) == (["d" * 40, "c" * 40, "b" * 40, "a" * 40], [])


@pytest.mark.parametrize("keep", [-1, True, "2", 1.5])
def test_keep_must_be_a_whole_number(keep):
    with pytest.raises(mr.RevisionError, match="ascendfleet_cache_keep_revisions must be a whole number >= 0"):
        mr.removal_plan(REVS, set(), keep)


# --------------------------------------------------------------------------- space

def test_only_the_changed_shard_needs_space():
    a_dir = "/c/revisions/%s/%s" % (MODEL, COMMIT_A)
    linked = mr.link_sources(listing(B_BYTES), [(a_dir, listing(A_BYTES))])
    assert linked == {"config.json": a_dir + "/config.json",
                      "model-00001-of-00002.safetensors": a_dir + "/model-00001-of-00002.safetensors"}
    assert mr.bytes_needed(listing(B_BYTES), linked, {}) == 3000
    # A partial download of the shard in the staging directory counts for what it holds.
    assert mr.bytes_needed(listing(B_BYTES), linked, {"model-00002-of-00002.safetensors.incomplete": 1000}) == 2000
    assert mr.bytes_needed(listing(B_BYTES), linked, {"model-00002-of-00002.safetensors": 3000}) == 0
    assert mr.bytes_needed(listing(B_BYTES), {}, {}) == 4096 + 3000 + len(A_BYTES["config.json"])


def test_a_disk_too_small_is_refused_with_the_figures(tmp_path):
    with pytest.raises(ModelPrefetchError) as err:
        mr.check_free_space("npu-3", str(tmp_path / "revisions" / "x"), 1 << 60, 0, MODEL, COMMIT_B)
    text = str(err.value)
    assert text.startswith("host npu-3: not enough free space on ")
    assert "for %s@%s: needs 1024.0 PiB (1024.0 PiB to download + 0 B margin)" % (MODEL, COMMIT_B) in text
    assert " free; free " in text and "point model_prefetch_cache_dir at a larger disk" in text
    needed, free = mr.check_free_space("npu-3", str(tmp_path), 1, 0, MODEL, COMMIT_B)
    assert needed == 1 and free > 1


# --------------------------------------------------------------------------- files: fetch into staging

def write_files(directory, contents):
    for path, data in contents.items():
        full = directory / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data)


def stage_revision(cache, key, commit, name, contents):
    """What the fetch does: link what a complete revision has, write the rest, finish."""
    files = listing(contents)
    staging = pathlib.Path(mr.staging_dir(str(cache), MODEL, key))
    staging.mkdir(parents=True, exist_ok=True)
    linked = mr.link_sources(files, mr.complete_sources(str(cache), MODEL))
    mr.link_into(str(staging), linked)
    write_files(staging, {p: b for p, b in contents.items() if p not in linked})
    assert not mr.revision_completeness(str(cache), MODEL, key)["complete"]  # never complete half-way
    mr.finish(str(staging), mr.revision_dir(str(cache), MODEL, key), MODEL, key, commit, [name], files,
              "http://hub")
    mr.record_ref(str(cache), MODEL, name, key, commit, "2026-12-04T10:00:00Z")
    return linked


def test_write_master_then_v2_master_stays_complete(tmp_path):
    """Issue 29's defect: a second revision must not touch the first one's files."""
    stage_revision(tmp_path, COMMIT_A, COMMIT_A, "master", A_BYTES)
    a_dir = pathlib.Path(mr.revision_dir(str(tmp_path), MODEL, COMMIT_A))
    before = {p: sha((a_dir / p).read_bytes()) for p in A_BYTES}
    linked = stage_revision(tmp_path, COMMIT_B, COMMIT_B, "v2", B_BYTES)
    assert sorted(linked) == ["config.json", "model-00001-of-00002.safetensors"]

    master = mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A, verify="full")
    v2 = mr.revision_completeness(str(tmp_path), MODEL, COMMIT_B, verify="full")
    assert master["complete"] and master["reasons"] == [] and master["names"] == ["master"]
    assert v2["complete"] and v2["commit"] == COMMIT_B and v2["names"] == ["v2"]
    assert {p: sha((a_dir / p).read_bytes()) for p in A_BYTES} == before
    b_dir = pathlib.Path(mr.revision_dir(str(tmp_path), MODEL, COMMIT_B))
    # The unchanged shard is one inode in both (no second copy), the changed one two files.
    assert os.stat(a_dir / "model-00001-of-00002.safetensors").st_ino == os.stat(b_dir / "model-00001-of-00002.safetensors").st_ino
    assert (b_dir / "model-00002-of-00002.safetensors").read_bytes() == B_BYTES["model-00002-of-00002.safetensors"]
    assert not os.path.exists(mr.staging_dir(str(tmp_path), MODEL, COMMIT_B))
    refs = mr.parse_refs((tmp_path / "revisions" / MODEL / "refs.json").read_bytes())
    assert refs["master"]["key"] == COMMIT_A and refs["v2"]["key"] == COMMIT_B
    assert [r["key"] for r in mr.list_revisions(str(tmp_path), MODEL)] == [COMMIT_A, COMMIT_B]


def test_same_scenario_on_todays_layout_breaks_master(tmp_path):
    """The defect reproduced on today's code path (one directory per model): the marker is for
    one revision at a time, so once v2 is written master reads incomplete."""
    legacy = pathlib.Path(facts.model_dir(str(tmp_path), MODEL))
    write_files(legacy, A_BYTES)
    mc.ModelCache(str(tmp_path), MODEL, "master").write_complete(listing(A_BYTES), COMMIT_A, "http://hub")
    assert facts.model_completeness(str(tmp_path), MODEL, "master")["complete"]
    write_files(legacy, B_BYTES)
    mc.ModelCache(str(tmp_path), MODEL, "v2").write_complete(listing(B_BYTES), COMMIT_B, "http://hub")
    assert facts.model_completeness(str(tmp_path), MODEL, "master")["reasons"] == [
        "marker is for revision 'v2', 'master' requested"]


def test_a_name_resolves_locally_to_the_revision_it_was_fetched_as(tmp_path):
    assert mr.resolved(str(tmp_path), MODEL, "master")["reasons"] == [
        "revision 'master' was never fetched into the revision cache"]
    stage_revision(tmp_path, COMMIT_A, COMMIT_A, "master", A_BYTES)
    state = mr.resolved(str(tmp_path), MODEL, "master")
    assert (state["complete"], state["key"], state["revision"]) == (True, COMMIT_A, "master")
    assert state["model_dir"] == mr.revision_dir(str(tmp_path), MODEL, COMMIT_A)
    assert mr.resolved(str(tmp_path), MODEL, COMMIT_A.upper())["key"] == COMMIT_A  # a commit is its own key
    assert mr.resolved(str(tmp_path), MODEL, "master", include=["*.json"])["reasons"] == [
        "include/exclude globs differ from the manifest's"]
    assert mr.resolved(str(tmp_path), MODEL, "master", include=[], exclude=[])["complete"]
    # The branch moved and was fetched again: the name now resolves to the new revision.
    stage_revision(tmp_path, COMMIT_B, COMMIT_B, "master", B_BYTES)
    assert mr.resolved(str(tmp_path), MODEL, "master")["key"] == COMMIT_B


def test_a_damaged_revision_reads_incomplete(tmp_path):
    stage_revision(tmp_path, COMMIT_A, COMMIT_A, "master", A_BYTES)
    shard = pathlib.Path(mr.revision_dir(str(tmp_path), MODEL, COMMIT_A)) / "model-00002-of-00002.safetensors"
    shard.write_bytes(b"\x09" * 2048)  # same size, other bytes: only a full check sees it
    assert mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A)["complete"]
    full = mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A, verify="full")
    assert not full["complete"] and full["reasons"][0].startswith("model-00002-of-00002.safetensors: sha256 ")
    shard.unlink()
    assert mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A)["reasons"] == [
        "model-00002-of-00002.safetensors is missing"]
    assert mr.revision_completeness(str(tmp_path), MODEL, COMMIT_B)["reasons"] == ["no completion marker"]


def test_a_second_writer_finishing_first_wins(tmp_path):
    stage_revision(tmp_path, COMMIT_A, COMMIT_A, "master", A_BYTES)
    staging = pathlib.Path(mr.staging_dir(str(tmp_path), MODEL, COMMIT_A))
    write_files(staging, A_BYTES)
    final = mr.revision_dir(str(tmp_path), MODEL, COMMIT_A)
    manifest = mr.finish(str(staging), final, MODEL, COMMIT_A, COMMIT_A, ["master"], listing(A_BYTES), "http://hub")
    assert manifest["key"] == COMMIT_A and not staging.exists()
    assert mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A, verify="full")["complete"]


def test_unprotected_revisions_are_removed_and_a_stopped_removal_is_finished(tmp_path):
    stage_revision(tmp_path, COMMIT_A, COMMIT_A, "master", A_BYTES)
    stage_revision(tmp_path, COMMIT_B, COMMIT_B, "master", B_BYTES)
    root = tmp_path / "revisions" / MODEL
    (root / ".removing-old").mkdir()
    (root / ".removing-old" / "x").write_bytes(b"x")
    live = LEGACY_COMPOSE.replace(LEGACY_MOUNT, revision_mount(COMMIT_B, str(tmp_path)))
    refs, _legacy = mr.referenced_keys(str(tmp_path), [live])
    kept, removed = mr.removal_plan(mr.list_revisions(str(tmp_path), MODEL), refs.get(MODEL, set()), keep=1)
    assert (kept, removed) == ([COMMIT_B], [COMMIT_A])
    assert mr.remove_revisions(str(tmp_path), MODEL, removed) == [COMMIT_A]
    assert sorted(os.listdir(root)) == [COMMIT_B, "refs.json"]
    # B's shared shard survives A's removal (a hard link: the inode lives while one name does).
    assert mr.revision_completeness(str(tmp_path), MODEL, COMMIT_B, verify="full")["complete"]


def test_the_lock_of_a_models_revisions_names_its_holder(tmp_path):
    # ModelLock itself (exclusive across processes, released by the kernel) is tested in test__modelscope.
    path = tmp_path / "revisions" / MODEL / ".lock"
    with mr.lock(str(tmp_path), MODEL, 0, "model_fetch %s@master" % MODEL):
        holder = json.loads(path.read_text())
        assert holder["what"] == "model_fetch %s@master" % MODEL and holder["pid"] == os.getpid()
    assert path.read_text() == ""


# --------------------------------------------------------------------------- migration

def legacy_copy(cache, revision="master", commit=COMMIT_A, contents=None):
    contents = contents or A_BYTES
    legacy = pathlib.Path(facts.model_dir(str(cache), MODEL))
    write_files(legacy, contents)
    mc.ModelCache(str(cache), MODEL, revision).write_complete(listing(contents), commit, "http://hub")
    return legacy


def test_migration_links_todays_copy_into_its_revision(tmp_path):
    legacy = legacy_copy(tmp_path)
    inodes = {p: os.stat(legacy / p).st_ino for p in A_BYTES}
    plan = mr.migrate(str(tmp_path), MODEL, when="2026-12-04T09:00:00Z")
    assert plan["key"] == COMMIT_A and plan["names"] == ["master"]
    rdir = pathlib.Path(mr.revision_dir(str(tmp_path), MODEL, COMMIT_A))
    state = mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A, verify="full")
    assert state["complete"] and state["commit"] == COMMIT_A and state["names"] == ["master"]
    # No byte copied: the same inodes; the legacy copy is untouched for the running containers.
    assert {p: os.stat(rdir / p).st_ino for p in A_BYTES} == inodes
    assert facts.model_completeness(str(tmp_path), MODEL, "master", verify="full")["complete"]
    record = json.loads((tmp_path / "revisions" / MODEL / "migrated.json").read_text())
    assert record == {"from": str(legacy), "to": str(rdir), "key": COMMIT_A, "files_linked": 3,
                      "bytes_linked": sum(len(b) for b in A_BYTES.values()), "at": "2026-12-04T09:00:00Z"}
    assert mr.parse_refs((tmp_path / "revisions" / MODEL / "refs.json").read_bytes())["master"]["key"] == COMMIT_A
    # A second run has nothing to do.
    assert mr.migrate(str(tmp_path), MODEL) is None


def test_migration_without_a_commit_uses_the_content_key(tmp_path):
    legacy_copy(tmp_path, commit=None)
    plan = mr.migrate(str(tmp_path), MODEL)
    assert plan["key"] == mr.content_key(listing(A_BYTES))
    assert mr.revision_completeness(str(tmp_path), MODEL, plan["key"])["complete"]


def test_an_incomplete_copy_is_not_migrated(tmp_path):
    legacy = legacy_copy(tmp_path)
    (legacy / "model-00002-of-00002.safetensors").unlink()
    assert mr.migrate(str(tmp_path), MODEL) is None
    assert not (tmp_path / "revisions" / MODEL).exists() or mr.list_revisions(str(tmp_path), MODEL) == []
    assert mr.migration_plan(str(tmp_path), MODEL, None, True) is None


def test_a_stopped_migration_is_finished_by_the_next_run(tmp_path):
    legacy = legacy_copy(tmp_path)
    staging = pathlib.Path(mr.staging_dir(str(tmp_path), MODEL, COMMIT_A))
    staging.mkdir(parents=True)
    os.link(legacy / "config.json", staging / "config.json")  # stopped after one link
    assert mr.migrate(str(tmp_path), MODEL)["key"] == COMMIT_A
    assert mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A, verify="full")["complete"]
    assert not staging.exists()


def test_the_legacy_copy_goes_only_when_nothing_mounts_it(tmp_path):
    legacy = legacy_copy(tmp_path)
    assert mr.remove_legacy(str(tmp_path), MODEL, legacy_referenced=False) is False  # not migrated yet
    mr.migrate(str(tmp_path), MODEL)
    assert mr.remove_legacy(str(tmp_path), MODEL, legacy_referenced=True) is False
    assert legacy.is_dir()
    assert mr.remove_legacy(str(tmp_path), MODEL, legacy_referenced=False) is True
    assert not legacy.exists()
    assert mr.revision_completeness(str(tmp_path), MODEL, COMMIT_A, verify="full")["complete"]


# --------------------------------------------------------------------------- the prefetch report

def test_report_rows_name_the_commit_each_wanted_model_resolved_to():
    wanted = [{"model": MODEL, "revision": "master"}, {"model": "Qwen/Qwen3-0.6B", "revision": "v1.0"},
              {"model": "Qwen/Qwen3-8B"}]
    # model_cache_info's models (before the run), then the fetch results (loop item + module result).
    cache = [{"model": MODEL, "revision": "master", "key": COMMIT_A, "commit": COMMIT_A, "complete": True},
             {"model": "Qwen/Qwen3-0.6B", "revision": "v1.0", "key": None, "commit": None, "complete": False},
             {"model": "Qwen/Qwen3-8B", "revision": "master", "key": None, "complete": False}]
    fetched = [{"item": {"model": MODEL, "revision": "master", "include": [], "exclude": []},
                "model": MODEL, "revision": "master", "key": COMMIT_B, "commit": COMMIT_B,
                "change": mr.revision_change("master", COMMIT_A, COMMIT_B)},
               {"item": {"model": "Qwen/Qwen3-0.6B", "revision": "v1.0"}, "key": "content-" + "a" * 40, "commit": None},
               {"item": {"model": "Other/Model", "revision": "v1"}, "key": COMMIT_A, "commit": COMMIT_A},
               {"item": {"model": "Qwen/Qwen3-8B", "revision": "master"}, "skipped": True}]
    assert mr.report_rows(wanted, cache + fetched) == [
        {"model": MODEL, "revision": "master", "key": COMMIT_B, "commit": COMMIT_B,
         "change": "revision master: 3c1a4f0e9b7d -> 9e2f6b3d8a15"},
        {"model": "Qwen/Qwen3-0.6B", "revision": "v1.0", "key": "content-" + "a" * 40, "commit": None, "change": None}]
    # The flat layout carries no key: no row.
    assert mr.report_rows(wanted, [{"model": MODEL, "revision": "master", "complete": True}]) == []


# --------------------------------------------------------------------------- removal after a rollout

COMMIT_C = "0d4a7c9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b"


def test_prune_plan_protects_what_is_mounted_and_wanted():
    revs = {MODEL: [{"key": COMMIT_A, "completed_at": 100}, {"key": COMMIT_B, "completed_at": 200},
                    {"key": COMMIT_C, "completed_at": 300}]}
    # C is the newest, nothing mounts it: keep 2 keeps the mounted A and the wanted B; C goes.
    assert mr.prune_plan(revs, {MODEL: {COMMIT_A}}, {MODEL: [COMMIT_B]}, keep=2) == {
        MODEL: {"kept": [COMMIT_B, COMMIT_A], "removed": [COMMIT_C]}}
    # keep 3: the newest unprotected stays too.
    assert mr.prune_plan(revs, {MODEL: {COMMIT_A}}, {MODEL: [COMMIT_B]}, keep=3)[MODEL]["removed"] == []
    # keep 0: only the protected.
    assert mr.prune_plan(revs, {}, {MODEL: [COMMIT_C]}, keep=0) == {MODEL: {"kept": [COMMIT_C], "removed": [COMMIT_B, COMMIT_A]}}


def deployment_dir(root, name, live=None, last_good=None, previous=None):
    for rel, key in (("compose.yaml", live), ("last-good/compose.yaml", last_good), ("previous/compose.yaml", previous)):
        if key:
            path = root / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(LEGACY_COMPOSE.replace(LEGACY_MOUNT, revision_mount(key, str(root.parent / "cache"))))


def test_after_a_good_b_a_stays_while_previous_mounts_it_and_goes_after(tmp_path):
    cache, projects = tmp_path / "cache", tmp_path / "opt"
    stage_revision(cache, COMMIT_A, COMMIT_A, "master", A_BYTES)
    stage_revision(cache, COMMIT_B, COMMIT_B, "master", B_BYTES)
    # B rolled out and passed its gate: live and last-good mount B, previous/ (the rollback target) A.
    deployment_dir(projects, "qwen", live=COMMIT_B, last_good=COMMIT_B, previous=COMMIT_A)
    wanted = {MODEL: [COMMIT_B]}
    out = mr.prune(str(cache), str(projects), wanted, keep=0, timeout=5)
    assert out == {MODEL: {"kept": [COMMIT_B, COMMIT_A], "removed": [], "legacy_removed": False, "busy": None}}
    # The next rollout replaced previous/: nothing mounts A any more, so it goes (check mode first).
    deployment_dir(projects, "qwen", previous=COMMIT_B)
    would = mr.prune(str(cache), str(projects), wanted, keep=0, timeout=5, check_mode=True)
    assert would[MODEL]["removed"] == [COMMIT_A]
    assert os.path.isdir(mr.revision_dir(str(cache), MODEL, COMMIT_A))  # check mode removed nothing
    assert mr.prune(str(cache), str(projects), wanted, keep=0, timeout=5)[MODEL]["removed"] == [COMMIT_A]
    assert not os.path.exists(mr.revision_dir(str(cache), MODEL, COMMIT_A))
    assert mr.revision_completeness(str(cache), MODEL, COMMIT_B, verify="full")["complete"]
    # A second run has nothing to remove.
    assert mr.prune(str(cache), str(projects), wanted, keep=0, timeout=5)[MODEL]["removed"] == []


def test_keep_holds_an_unmounted_revision(tmp_path):
    cache, projects = tmp_path / "cache", tmp_path / "opt"
    stage_revision(cache, COMMIT_A, COMMIT_A, "master", A_BYTES)
    stage_revision(cache, COMMIT_B, COMMIT_B, "master", B_BYTES)
    deployment_dir(projects, "qwen", live=COMMIT_B, last_good=COMMIT_B, previous=COMMIT_B)
    out = mr.prune(str(cache), str(projects), {MODEL: [COMMIT_B]}, keep=2, timeout=5)
    assert out[MODEL]["removed"] == [] and sorted(out[MODEL]["kept"]) == sorted([COMMIT_A, COMMIT_B])


def test_a_busy_model_is_left_for_the_next_run(tmp_path):
    cache, projects = tmp_path / "cache", tmp_path / "opt"
    stage_revision(cache, COMMIT_A, COMMIT_A, "master", A_BYTES)
    stage_revision(cache, COMMIT_B, COMMIT_B, "master", B_BYTES)
    deployment_dir(projects, "qwen", live=COMMIT_B)
    import subprocess
    import sys
    # Another process (a prefetch) holds the model's lock: fcntl locks are per process.
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.lockf(fd, fcntl.LOCK_EX)\n"
        "print('locked', flush=True)\n"
        "time.sleep(30)\n"), str(cache / "revisions" / MODEL / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        out = mr.prune(str(cache), str(projects), {MODEL: [COMMIT_B]}, keep=0, timeout=0)
    finally:
        holder.kill()
        holder.wait()
    assert out[MODEL]["removed"] == [] and "is locked by another run" in out[MODEL]["busy"]
    assert os.path.isdir(mr.revision_dir(str(cache), MODEL, COMMIT_A))


def test_the_migrated_flat_copy_goes_once_no_compose_file_mounts_it(tmp_path):
    cache, projects = tmp_path / "cache", tmp_path / "opt"
    legacy = legacy_copy(cache)
    mr.migrate(str(cache), MODEL)
    (projects / "qwen" / "last-good").mkdir(parents=True)
    (projects / "qwen" / "last-good" / "compose.yaml").write_text(
        LEGACY_COMPOSE.replace("/var/lib/ascendfleet/modelscope", str(cache)))
    deployment_dir(projects, "qwen", live=COMMIT_A)
    assert mr.prune(str(cache), str(projects), {MODEL: [COMMIT_A]}, keep=1, timeout=5)[MODEL]["legacy_removed"] is False
    assert legacy.is_dir()
    deployment_dir(projects, "qwen", last_good=COMMIT_A)
    assert mr.prune(str(cache), str(projects), {MODEL: [COMMIT_A]}, keep=1, timeout=5, check_mode=True)[MODEL][
        "legacy_removed"] is True
    assert legacy.is_dir()
    assert mr.prune(str(cache), str(projects), {MODEL: [COMMIT_A]}, keep=1, timeout=5)[MODEL]["legacy_removed"] is True
    assert not legacy.exists()


def test_compose_texts_reads_live_last_good_and_previous(tmp_path):
    deployment_dir(tmp_path, "a", live=COMMIT_A, previous=COMMIT_B)
    deployment_dir(tmp_path, "b", last_good=COMMIT_B)
    texts = mr.compose_texts(str(tmp_path))
    assert len(texts) == 3
    assert mr.compose_texts(str(tmp_path / "missing")) == []


# --------------------------------------------------------------------------- cache_state (model_cache_info, npu_verify's disk count)

def test_cache_state_of_the_flat_layout_is_todays_reader(tmp_path):
    state = mr.cache_state(str(tmp_path), MODEL, "master")
    assert state == facts.model_completeness(str(tmp_path), MODEL, "master")
    assert (state["complete"], state["reasons"], state["marker"]) == (
        False, ["no completion marker"], facts.state_paths(facts.model_dir(str(tmp_path), MODEL))["marker"])
    # npu_verify's disk count asks the same in the flat layout (migrates is a revisions-layout answer).
    assert mr.cache_state(str(tmp_path), MODEL, "master", "flat", migrates=True) == state
    legacy_copy(tmp_path)
    state = mr.cache_state(str(tmp_path), MODEL, "master", "flat")
    assert (state["complete"], state["reasons"]) == (True, [])
    # The globs: None accepts the copy's, lists must equal the manifest's (model_cache_info passes its own).
    assert mr.cache_state(str(tmp_path), MODEL, "master", "flat", [], [])["complete"] is True
    assert mr.cache_state(str(tmp_path), MODEL, "master", "flat", ["*.json"], [])["reasons"] == [
        "include/exclude globs differ from the manifest's"]
    # A revision directory alone does not make the flat layout complete.
    stage_revision(tmp_path, COMMIT_B, COMMIT_B, "v2", B_BYTES)
    assert mr.cache_state(str(tmp_path), MODEL, "v2", "flat")["complete"] is False


def test_cache_state_of_the_revisions_layout_reads_the_revision_directory(tmp_path):
    # Without migrates (model_cache_info): resolved()'s answer, as it is.
    assert mr.cache_state(str(tmp_path), MODEL, "master", "revisions") == mr.resolved(str(tmp_path), MODEL, "master")
    state = mr.cache_state(str(tmp_path), MODEL, "master", "revisions", migrates=True)
    assert (state["complete"], state["key"], state["migrates"], state.get("marker")) == (False, None, False, None)
    assert state["reasons"] == ["revision 'master' was never fetched into the revision cache"]
    stage_revision(tmp_path, COMMIT_A, COMMIT_A, "master", A_BYTES)
    state = mr.cache_state(str(tmp_path), MODEL, "master", "revisions", migrates=True)
    assert (state["complete"], state["key"], state["migrates"], state["reasons"]) == (True, COMMIT_A, False, [])
    assert state["marker"] == facts.state_paths(mr.revision_dir(str(tmp_path), MODEL, COMMIT_A))["marker"]
    assert dict(state, migrates=None) == dict(mr.resolved(str(tmp_path), MODEL, "master"), migrates=None)
    # Today's reader does not see it: the disk count of the flat layout would ask for the model's full size again.
    assert facts.model_completeness(str(tmp_path), MODEL, "master")["complete"] is False
    # A damaged revision is incomplete, with the reason and the key it resolved to.
    rdir = pathlib.Path(mr.revision_dir(str(tmp_path), MODEL, COMMIT_A))
    (rdir / "model-00002-of-00002.safetensors").unlink()
    state = mr.cache_state(str(tmp_path), MODEL, "master", "revisions", migrates=True)
    assert (state["complete"], state["key"]) == (False, COMMIT_A)
    assert state["reasons"] == ["model-00002-of-00002.safetensors is missing"]


def test_cache_state_counts_a_flat_copy_the_first_revisions_run_migrates(tmp_path):
    legacy_copy(tmp_path)  # master, complete in today's layout only
    state = mr.cache_state(str(tmp_path), MODEL, "master", "revisions", migrates=True)
    assert (state["complete"], state["migrates"], state["key"], state["reasons"]) == (True, True, None, [])
    assert state["marker"] == facts.state_paths(facts.model_dir(str(tmp_path), MODEL))["marker"]
    # model_cache_info (no migrates) does not count it: the prefetch migrates it.
    assert mr.cache_state(str(tmp_path), MODEL, "master", "revisions")["complete"] is False
    # Another revision than the flat copy's is still to fetch.
    assert mr.cache_state(str(tmp_path), MODEL, "v2", "revisions", migrates=True)["complete"] is False
    # After the migration the revision directory answers.
    assert mr.migrate(str(tmp_path), MODEL, "2026-12-05T00:00:00Z")
    state = mr.cache_state(str(tmp_path), MODEL, "master", "revisions", migrates=True)
    assert (state["complete"], state["migrates"], state["key"]) == (True, False, COMMIT_A)


def test_shared_reads_give_the_same_answers_reading_each_file_once(tmp_path, monkeypatch):
    # One execution asks several questions about one copy (npu_host_facts: the disk count, model_cache,
    # the deployments' model states): with one CacheReads each file is opened and stat'ed once, and
    # every answer is the one the disk gives.
    stage_revision(tmp_path, COMMIT_A, COMMIT_A, "master", A_BYTES)
    legacy_copy(tmp_path)
    questions = [("revisions", None, None, "quick", True), ("revisions", [], [], "quick", False),
                 ("revisions", [], [], "full", False), ("flat", None, None, "quick", True), ("flat", [], [], "full", False)]
    alone = [mr.cache_state(str(tmp_path), MODEL, "master", *q[:4], migrates=q[4]) for q in questions]
    opened, hashed = [], []
    real_read, real_hash = facts.read_bytes, facts.sha256_file
    monkeypatch.setattr(facts, "read_bytes", lambda path: opened.append(path) or real_read(path))
    monkeypatch.setattr(facts, "sha256_file", lambda path: hashed.append(path) or real_hash(path))
    reads = facts.CacheReads()
    shared = [mr.cache_state(str(tmp_path), MODEL, "master", *q[:4], migrates=q[4], reads=reads) for q in questions]
    assert shared == alone
    assert len(opened) == len(set(opened)) and len(hashed) == len(set(hashed))
    # refs.json and the marker and manifest of the revision and of today's copy; each shard of both hashed once.
    assert len(opened) == 5 and len(hashed) == 2 * len(A_BYTES)


def test_cache_state_refuses_an_unknown_layout(tmp_path):
    with pytest.raises(mr.RevisionError, match="cache layout 'nested' is not flat or revisions; set ascendfleet_cache_layout"):
        mr.cache_state(str(tmp_path), MODEL, "master", "nested")
