# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The model cache addressed by resolved revision: one immutable directory per revision.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
managed hosts, Python >= 3.8). Design: docs/model-revisions.md.

Today's cache keeps ONE copy per model (``<cache>/models/<Owner>/<Name>``) and a new revision is
written over it in place, under the containers serving the old one (issue 29). Here every
revision the hub resolved a branch, tag or commit to gets its own directory, written once::

  <cache>/revisions/<Owner>/<Name>/<key>/                  the files of that revision, never rewritten
  <cache>/revisions/<Owner>/<Name>/<key>/.ascendfleet/     manifest.json + complete (the marker layout
                                                           of ``_facts``; the marker names the key)
  <cache>/revisions/<Owner>/<Name>/.staging-<key>/         a revision being fetched (resumable); renamed
                                                           to <key>/ only when verified and marked
  <cache>/revisions/<Owner>/<Name>/refs.json               branch/tag/commit name -> key, as resolved
  <cache>/revisions/<Owner>/<Name>/migrated.json           the record of the move from today's layout
  <cache>/revisions/<Owner>/<Name>/.lock                   fcntl lock of the model's revisions
  <cache>/revisions/<Owner>/<Name>/progress.json           the running transfer's progress (the action
                                                           plugin reads it; the key is not known before
                                                           the hub's file list is)

The key is the hub's commit id (40 hex) when its file list names one, else ``content-`` and the
first 40 hex of the sha256 of the file list (path, size, sha256 of every file): the same files
always give the same key, different files never share one. A container mounts ONE revision
directory read-only (:func:`mount_source`), so what it reads never changes while it runs.

The pure rules (keys, refs, references, what may be removed, space, migration plan) take plain
data; the few functions at the end do the I/O, each safe to stop at any point.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import time

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import (
    DEFAULTS, DISK, ModelCacheError, build_marker, dir_completeness, dumps_manifest, model_completeness,
    model_dir as legacy_model_dir, parse_manifest, state_paths)
from ansible_collections.ascendfleet.llm.plugins.module_utils._files import atomic_write, mount_point, read_bytes
from ansible_collections.ascendfleet.llm.plugins.module_utils._modelscope import (
    LockBusy, ModelLock, ModelPrefetchError, mount_device, space_error, space_shortfall)
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_last_good import COMPOSE, LAST_GOOD, PREVIOUS

REVISIONS = "revisions"
REFS = "refs.json"
MIGRATED = "migrated.json"
LOCK = ".lock"
PROGRESS = "progress.json"
STAGING = ".staging-"
# Revisions of one model kept in the cache after a successful rollout (those that a compose
# file, last-known-good or previous mounts are always kept and count towards it).
KEEP_DEFAULT = DEFAULTS["cache_keep_revisions"]
COMMIT_RE = re.compile(r"[0-9a-f]{40}")
CONTENT_RE = re.compile(r"content-[0-9a-f]{40}")


class RevisionError(ModelCacheError):
    """A revision-cache problem; the message names host or path, what is wrong and the fix."""


# --------------------------------------------------------------------------- keys and layout

def content_key(files):
    """``content-<40 hex>``: the sha256 of the file list (sorted path, size, sha256 lines)."""
    digest = hashlib.sha256()
    for item in sorted(files, key=lambda f: f["path"]):
        digest.update(("%s\0%d\0%s\n" % (item["path"], int(item["size"]), item["sha256"])).encode("utf-8"))
    return "content-" + digest.hexdigest()[:40]


def revision_key(commit, files):
    """THE key of a resolved revision: the hub's commit id (lower-cased 40 hex) when it named one,
    else :func:`content_key` of its files."""
    if isinstance(commit, str) and COMMIT_RE.fullmatch(commit.lower()):
        return commit.lower()
    return content_key(files)


def is_key(key):
    """Whether ``key`` is a revision key (a commit id or a content key, the whole string)."""
    return isinstance(key, str) and bool(COMMIT_RE.fullmatch(key) or CONTENT_RE.fullmatch(key))


def _checked_key(key):
    if not is_key(key):
        raise RevisionError("%r is not a revision key (a 40-hex commit id or content-<40 hex>)" % (key,))
    return key


def revisions_root(cache_dir, model):
    """``<cache>/revisions/<Owner>/<Name>``: the revisions of ``model`` (a validated model id)."""
    return os.path.join(cache_dir, REVISIONS, model)


def revision_dir(cache_dir, model, key):
    """The directory of one resolved revision (what a container mounts)."""
    return os.path.join(revisions_root(cache_dir, model), _checked_key(key))


def staging_dir(cache_dir, model, key):
    """Where ``key`` is fetched before it is complete (kept across runs: the next one resumes)."""
    return os.path.join(revisions_root(cache_dir, model), STAGING + _checked_key(key))


def progress_path(cache_dir, model):
    """Where a transfer into one of ``model``'s staging directories writes its progress (one
    fixed path per model: the reader does not know the key the name resolves to)."""
    return os.path.join(revisions_root(cache_dir, model), PROGRESS)


def mount_source(cache_dir, model, key):
    """The host side of the container's read-only model mount of ``model`` at ``key``; the
    container side stays ``_facts.container_model_path(model)``, so the served path does not change."""
    return revision_dir(cache_dir, model, key)


# --------------------------------------------------------------------------- refs (name -> key)

def parse_refs(raw):
    """refs.json bytes -> {name: {"key", "commit", "resolved_at"}}; {} for missing or damaged
    bytes (the refs are a record: the revision directories and their manifests are the truth)."""
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {name: entry for name, entry in data.items()
            if isinstance(entry, dict) and is_key(entry.get("key"))}


def dumps_refs(refs):
    return (json.dumps(refs, indent=1, sort_keys=True) + "\n").encode("utf-8")


def resolve_ref(refs, name, key, commit, when):
    """(new refs, the key ``name`` resolved to before or None): ``name`` now resolves to ``key``.
    A moved branch keeps its earlier key in ``previous_key`` (what the summary names)."""
    out = dict(refs)
    old = refs.get(name, {}).get("key")
    entry = {"key": key, "commit": commit, "resolved_at": when}
    if old == key:
        entry = dict(refs[name])
    elif old:
        entry["previous_key"] = old
    out[name] = entry
    return out, old


def revision_change(name, old_key, new_key):
    """The summary line of a moved revision, ``revision master: <old> -> <new>`` (keys shortened
    to 12 characters, as git does), or None when it did not move or was not deployed before."""
    if not old_key or not new_key or old_key == new_key:
        return None

    def short(key):
        return key[:20] if key.startswith("content-") else key[:12]
    return "revision %s: %s -> %s" % (name, short(old_key), short(new_key))


def report_rows(models, entries):
    """What the prefetch report says a host serves from the revision cache: one row per wanted
    ``models`` entry (model, revision) with the ``key``, ``commit`` and ``change`` (the summary
    line of a moved branch) the LAST of ``entries`` that names it carries. ``entries`` are the
    cache read before the run (model_cache_info's ``models``) followed by the fetch and copy
    results of this run (each names model and revision, or carries the loop ``item``); entries
    without a key (the flat layout, a revision never fetched) say nothing. A wanted model no entry
    resolved has no row."""
    found = {}
    for entry in entries or []:
        if not isinstance(entry, dict) or not is_key(entry.get("key")):
            continue
        item = entry.get("item") if isinstance(entry.get("item"), dict) else entry
        found[(item.get("model"), item.get("revision"))] = entry
    rows = []
    for item in models or []:
        entry = found.get((item.get("model"), item.get("revision") or "master"))
        if entry is not None:
            rows.append({"model": item["model"], "revision": item.get("revision") or "master",
                         "key": entry["key"], "commit": entry.get("commit"),
                         "change": entry.get("change")})
    return rows


# --------------------------------------------------------------------------- completeness

def revision_completeness(cache_dir, model, key, verify="quick", reads=None):
    """Whether revision ``key`` of ``model`` is complete: the one rule of ``_facts``
    (marker naming the key, manifest unchanged, every file at its size; sha256 with
    ``verify="full"``) on the revision's own directory. Adds ``key`` and ``commit``/``names``
    (the manifest's). Never raises for a missing or damaged revision. ``reads``: a
    ``_facts.CacheReads`` shared by the questions of one read-only execution."""
    rdir = revision_dir(cache_dir, model, key)
    out = dir_completeness(rdir, model, key, verify, reads=reads)
    out["key"] = key
    manifest = read_manifest(rdir, reads)
    out["commit"] = manifest.get("commit") if manifest else None
    out["names"] = list(manifest.get("names") or []) if manifest else []
    return out


def resolved(cache_dir, model, name, verify="quick", include=None, exclude=None, reads=None):
    """THE local answer to "which revision directory serves ``model`` at ``name``" (a branch, tag
    or commit), asking no hub: the key ``name`` resolved to when it was last fetched (refs.json;
    a commit id or key is its own key) and :func:`revision_completeness` of it. ``include`` and
    ``exclude`` None accept any globs; lists must equal the manifest's (the prefetch's own check).
    ``key`` is None and ``reasons`` says why when the name was never resolved here."""
    reads = reads or DISK
    refs = parse_refs(reads.read_bytes(os.path.join(revisions_root(cache_dir, model), REFS)))
    key = name.lower() if isinstance(name, str) and is_key(name.lower()) else refs.get(name, {}).get("key")
    if not key:
        return {"model": model, "revision": name, "key": None, "commit": None, "names": [], "complete": False,
                "model_dir": None, "bytes": None,
                "reasons": ["revision %r was never fetched into the revision cache" % (name,)]}
    state = revision_completeness(cache_dir, model, key, verify, reads)
    state["revision"] = name
    manifest = read_manifest(state["model_dir"], reads) or {}
    if state["complete"] and ((include is not None and manifest.get("include") != list(include))
                              or (exclude is not None and manifest.get("exclude") != list(exclude))):
        state.update(complete=False, reasons=["include/exclude globs differ from the manifest's"])
    return state


def cache_state(cache_dir, model, revision, layout="flat", include=None, exclude=None, verify="quick",
                migrates=False, reads=None):
    """THE local answer to "is ``model`` at ``revision`` in the cache of ``layout`` with nothing left
    to fetch", asking no hub: model_cache_info (model_prefetch's read) and npu_host_facts (npu_verify's
    disk count, and model_prefetch's read in the deploy playbook's one read) both ask it.

    ``flat``: ``_facts.model_completeness``'s answer. ``revisions``: :func:`resolved`'s (the
    directory the name last resolved to; ``key`` None when never resolved here). ``include`` and
    ``exclude`` None accept any globs; lists must equal the manifest's.

    ``migrates`` (npu_verify's disk count): with ``revisions``, the answer also says whether the
    copy is complete only in today's layout (``<cache>/models``, marker naming ``revision``):
    such a copy counts as complete, with ``migrates`` true, ``key`` None and today's marker,
    since the first run of the revisions layout moves it in by hard links (:func:`migrate`: no
    byte fetched or written again); otherwise ``migrates`` is false. ``reads``: a
    ``_facts.CacheReads`` shared by the questions of one read-only execution (each file read once)."""
    if layout not in ("flat", "revisions"):
        raise RevisionError("cache layout %r is not flat or revisions; set ascendfleet_cache_layout to one of them" % (layout,))
    if layout == "flat":
        return model_completeness(cache_dir, model, revision, verify, include, exclude, reads)
    state = resolved(cache_dir, model, revision, verify, include, exclude, reads)
    if not migrates:
        return state
    state["migrates"] = False
    if not state["complete"]:
        legacy = model_completeness(cache_dir, model, revision, verify, include, exclude, reads)
        if legacy["complete"]:
            return dict(legacy, key=None, commit=None, names=[], migrates=True)
    return state


def read_manifest(mdir, reads=None):
    """The manifest of the copy in ``mdir``, or None when missing or not one of ours."""
    raw = (reads or DISK).read_bytes(state_paths(mdir)["manifest"])
    if raw is None:
        return None
    try:
        return parse_manifest(raw, state_paths(mdir)["manifest"])
    except ModelCacheError:
        return None


def revision_manifest(model, key, commit, names, files, source, include=None, exclude=None):
    """The manifest of one revision directory: ``_modelscope.build_manifest``'s fields with
    ``revision`` = the key (what the marker names), plus ``key``, ``commit`` and ``names`` (the
    branch/tag names that resolved to it)."""
    return {
        "format": 1, "model": model, "revision": key, "key": key, "commit": commit,
        "names": sorted(set(names)), "source": source,
        "include": list(include or []), "exclude": list(exclude or []),
        "files": [{"path": f["path"], "size": int(f["size"]), "sha256": f["sha256"]}
                  for f in sorted(files, key=lambda f: f["path"])],
        "total_bytes": sum(int(f["size"]) for f in files),
    }


# --------------------------------------------------------------------------- references

def referenced_keys(cache_dir, texts):
    """What the compose files ``texts`` (the live compose.yaml, last-good/ and previous/ of every
    deployment on the host) mount from the cache: ``({model: {key, ...}}, legacy)``, where
    ``legacy`` is whether one mounts today's ``<cache>/models`` (then no legacy copy may go).

    The compose files are the truth of what a container reads or a rollback would read; a key
    is found as ``<cache>/revisions/<Owner>/<Name>/<key>`` in their text."""
    base = os.path.join(cache_dir, REVISIONS).rstrip("/")
    pattern = re.compile(re.escape(base) + r"/([A-Za-z0-9][A-Za-z0-9_.-]*)/([A-Za-z0-9][A-Za-z0-9_.-]*)"
                         r"/(content-[0-9a-f]{40}|[0-9a-f]{40})(?![0-9a-f])")
    legacy_re = re.compile(re.escape(os.path.join(cache_dir, "models").rstrip("/")) + r"(?=[:/\"'\s]|$)",
                           re.MULTILINE)
    refs = {}
    legacy = False
    for text in texts:
        text = text or ""
        for owner, name, key in pattern.findall(text):
            refs.setdefault("%s/%s" % (owner, name), set()).add(key)
        legacy = legacy or bool(legacy_re.search(text))
    return refs, legacy


def removal_plan(revisions, protected, keep=KEEP_DEFAULT):
    """Which revisions of ONE model may go: ``(kept, removed)``, lists of keys.

    ``revisions``: [{"key", "completed_at" (epoch seconds or None)}] of the model's revision
    directories; ``protected``: the keys a compose file, last-known-good or previous mounts and
    those the planned deployments want (never removed, whatever ``keep`` says); ``keep``: how many
    revisions stay in all (protected ones count), the newest first. Raises RevisionError for a
    negative ``keep``."""
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
        raise RevisionError("ascendfleet_cache_keep_revisions must be a whole number >= 0, got %r; "
                            "set it to how many revisions of a model each host keeps (default %d)"
                            % (keep, KEEP_DEFAULT))
    order = sorted(revisions, key=lambda r: (-(r.get("completed_at") or 0), r["key"]))
    kept = [r["key"] for r in order if r["key"] in protected]
    removed = []
    for rev in order:
        if rev["key"] in protected:
            continue
        if len(kept) < keep:
            kept.append(rev["key"])
        else:
            removed.append(rev["key"])
    return kept, removed


def prune_plan(revisions, referenced, wanted, keep=KEEP_DEFAULT):
    """What a host removes after a successful rollout: ``{model: {"kept": [...], "removed": [...]}}``
    for every model of ``revisions`` (``{model: [{"key", "completed_at"}]}``, its revision
    directories). Protected (never removed): the keys ``referenced`` mounts (:func:`referenced_keys`
    of every live, last-good and previous compose file on the host) and those ``wanted``
    (``{model: [key, ...]}``: what the planned deployments serve). :func:`removal_plan` decides
    the rest with ``keep``."""
    out = {}
    for model in sorted(revisions):
        protected = set(referenced.get(model) or ()) | set(wanted.get(model) or ())
        kept, removed = removal_plan(revisions[model], protected, keep)
        out[model] = {"kept": kept, "removed": removed}
    return out


# --------------------------------------------------------------------------- space

def link_sources(new_files, complete):
    """Files of the new revision that a complete revision already holds with the same size and
    sha256: {path: absolute path to hard-link}. ``complete`` is [(revision dir, manifest files)].
    A hard link shares the bytes; nothing writes into them (the CLI and rsync replace a file by
    renaming a new one over it), so the old revision stays as it was."""
    have = {}
    for rdir, files in complete:
        for item in files:
            have.setdefault((item["sha256"], int(item["size"])), os.path.join(rdir, item["path"]))
    out = {}
    for item in new_files:
        src = have.get((item["sha256"], int(item["size"])))
        if src:
            out[item["path"]] = src
    return out


def bytes_needed(new_files, linked, present_sizes):
    """Bytes a new revision still needs on disk: every file neither linked from a complete
    revision nor already in the staging directory at its size (a partial counts for what it has)."""
    need = 0
    for item in new_files:
        size = int(item["size"])
        if item["path"] in linked or present_sizes.get(item["path"]) == size:
            continue
        partial = present_sizes.get(item["path"] + ".incomplete") or 0
        need += max(0, size - min(partial, size))
    return need


# --------------------------------------------------------------------------- migration (plan)

def migration_plan(cache_dir, model, manifest, complete):
    """How today's ``<cache>/models/<Owner>/<Name>`` becomes a revision without a byte fetched
    again: None when there is nothing to move (no copy, or an incomplete one: the next fetch
    starts the revision afresh), else {"model", "from", "to", "staging", "key", "commit", "names",
    "files"}. The files are hard-linked (same inodes, no copy) so containers that mount
    ``<cache>/models`` keep reading them until their rollout moves them to the revision."""
    if not complete or not manifest:
        return None
    key = revision_key(manifest.get("commit"), manifest["files"])
    return {"model": model, "from": legacy_model_dir(cache_dir, model),
            "to": revision_dir(cache_dir, model, key), "staging": staging_dir(cache_dir, model, key),
            "key": key, "commit": manifest.get("commit"),
            "names": [manifest["revision"]] if manifest.get("revision") else [],
            "files": manifest["files"], "source": manifest.get("source"),
            "include": manifest.get("include"), "exclude": manifest.get("exclude")}


# --------------------------------------------------------------------------- I/O

def list_revisions(cache_dir, model):
    """[{"key", "completed_at", "complete"}] of the revision directories of ``model`` (quick
    check); staging directories are not revisions."""
    root = revisions_root(cache_dir, model)
    out = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return out
    for name in names:
        if not is_key(name) or not os.path.isdir(os.path.join(root, name)):
            continue
        marker = state_paths(os.path.join(root, name))["marker"]
        try:
            completed = os.stat(marker).st_mtime
        except OSError:
            completed = None
        out.append({"key": name, "completed_at": completed,
                    "complete": revision_completeness(cache_dir, model, name)["complete"]})
    return out


def complete_sources(cache_dir, model):
    """[(revision dir, manifest files)] of the complete revisions of ``model``."""
    out = []
    for rev in list_revisions(cache_dir, model):
        if rev["complete"]:
            rdir = revision_dir(cache_dir, model, rev["key"])
            out.append((rdir, read_manifest(rdir)["files"]))
    return out


def link_into(staging, linked):
    """Hard-link ``linked`` ({path: source}) into ``staging`` where the path is not there yet;
    the paths linked. Raises RevisionError naming the fix when the filesystem has no hard links."""
    done = []
    for path, src in sorted(linked.items()):
        dest = os.path.join(staging, path)
        if os.path.lexists(dest):
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        try:
            os.link(src, dest)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise RevisionError("cannot hard-link %s to %s (%s): the model cache must be one "
                                    "filesystem that supports hard links (ext4, xfs, NFSv4); point "
                                    "ascendfleet_cache_dir at one" % (src, dest, exc.strerror or exc))
            raise
        done.append(path)
    return done


def finish(staging, final, model, key, commit, names, files, source, include=None, exclude=None):
    """Write the manifest and then the marker into ``staging`` and rename it to ``final``: a
    revision directory exists only complete. When ``final`` already exists (another writer
    finished first) the staging directory is dropped. Returns the manifest."""
    manifest = revision_manifest(model, key, commit, names, files, source, include, exclude)
    raw = dumps_manifest(manifest)
    paths = state_paths(staging)
    atomic_write(paths["manifest"], raw)
    atomic_write(paths["marker"], (json.dumps(build_marker(model, key, raw), sort_keys=True) + "\n").encode("utf-8"))
    if os.path.isdir(final):
        shutil.rmtree(staging)
        return read_manifest(final) or manifest
    os.rename(staging, final)
    dir_fd = os.open(os.path.dirname(final), os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return manifest


def record_ref(cache_dir, model, name, key, commit, when=None):
    """Record that ``name`` resolved to ``key``; returns the key it resolved to before (or None)."""
    path = os.path.join(revisions_root(cache_dir, model), REFS)
    refs = parse_refs(read_bytes(path))
    when = when or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    new, old = resolve_ref(refs, name, key, commit, when)
    if new != refs:
        atomic_write(path, dumps_refs(new))
    return old


def migrate(cache_dir, model, when=None):
    """Move today's copy of ``model`` into its revision directory (hard links, no download) and
    record it; the legacy directory stays until no compose file mounts ``<cache>/models``
    (:func:`remove_legacy`). Returns the plan carried out, or None when there was nothing to move.
    Safe to stop anywhere: the staging directory is finished by the next call."""
    legacy = legacy_model_dir(cache_dir, model)
    state = dir_completeness(legacy, model, (read_manifest(legacy) or {}).get("revision") or "", "quick")
    plan = migration_plan(cache_dir, model, read_manifest(legacy), state["complete"])
    if plan is None:
        return None
    if revision_completeness(cache_dir, model, plan["key"])["complete"]:
        return None
    os.makedirs(plan["staging"], exist_ok=True)
    linked = link_into(plan["staging"], {f["path"]: os.path.join(legacy, f["path"]) for f in plan["files"]})
    finish(plan["staging"], plan["to"], model, plan["key"], plan["commit"], plan["names"], plan["files"],
           plan["source"] or "migrated", plan["include"], plan["exclude"])
    for name in plan["names"]:
        record_ref(cache_dir, model, name, plan["key"], plan["commit"], when)
    record = {"from": plan["from"], "to": plan["to"], "key": plan["key"], "files_linked": len(linked),
              "bytes_linked": sum(int(f["size"]) for f in plan["files"]),
              "at": when or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    atomic_write(os.path.join(revisions_root(cache_dir, model), MIGRATED),
                 (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return plan


def lock(cache_dir, model, timeout, what):
    """The exclusive lock of ``model``'s revisions (held while fetching, migrating or removing)."""
    root = revisions_root(cache_dir, model)
    os.makedirs(root, exist_ok=True)
    return ModelLock(os.path.join(root, LOCK), {"what": what}).acquire(timeout=timeout)


def check_free_space(host, path, needed, margin, model, revision):
    """(needed, free) when the disk holding ``path`` (or its nearest existing parent) has
    ``needed`` + ``margin`` bytes free; else ModelPrefetchError naming host, disk and device,
    needed and free bytes and the fix - raised before anything is downloaded."""
    probe = path
    while not os.path.isdir(probe):
        probe = os.path.dirname(probe)
    st = os.statvfs(probe)
    free = st.f_bavail * st.f_frsize
    if space_shortfall(needed, free, margin):
        mount = mount_point(probe)
        device = mount_device(mount, (read_bytes("/proc/mounts") or b"").decode("utf-8", "replace"))
        raise ModelPrefetchError(space_error(host, mount, device, model, revision, needed, free, margin))
    return needed, free


def legacy_removable(cache_dir, model, legacy_referenced):
    """Whether today's ``<cache>/models/<Owner>/<Name>`` may go: it is migrated (its revision
    complete, recorded in migrated.json) and no compose file mounts ``<cache>/models`` any more."""
    if legacy_referenced:
        return False
    raw = read_bytes(os.path.join(revisions_root(cache_dir, model), MIGRATED))
    try:
        record = json.loads(raw.decode("utf-8")) if raw is not None else {}
    except (ValueError, UnicodeDecodeError):
        record = {}
    return (isinstance(record, dict) and is_key(record.get("key")) and os.path.isdir(legacy_model_dir(cache_dir, model))
            and revision_completeness(cache_dir, model, record["key"])["complete"])


def remove_legacy(cache_dir, model, legacy_referenced):
    """Remove today's ``<cache>/models/<Owner>/<Name>`` once :func:`legacy_removable`; True when
    removed. Renamed out of the way first, like a revision."""
    if not legacy_removable(cache_dir, model, legacy_referenced):
        return False
    legacy = legacy_model_dir(cache_dir, model)
    trash = os.path.join(os.path.dirname(legacy), ".removing-" + os.path.basename(legacy))
    os.rename(legacy, trash)
    shutil.rmtree(trash)
    return True


def remove_revisions(cache_dir, model, keys):
    """Remove the revision directories ``keys`` (from :func:`removal_plan`): each is first renamed
    out of the way (so no reader ever sees a half-removed revision as a revision), then deleted;
    what an earlier, stopped removal left is deleted too."""
    root = revisions_root(cache_dir, model)
    for name in os.listdir(root) if os.path.isdir(root) else []:
        if name.startswith(".removing-"):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    removed = []
    for key in keys:
        rdir = revision_dir(cache_dir, model, key)
        if not os.path.isdir(rdir):
            continue
        trash = os.path.join(revisions_root(cache_dir, model), ".removing-" + key)
        os.rename(rdir, trash)
        shutil.rmtree(trash)
        removed.append(key)
    return removed


# A deployment directory's live, last-good and previous compose files (the layout _vllm_last_good writes).
COMPOSE_FILES = (COMPOSE, os.path.join(LAST_GOOD, COMPOSE), os.path.join(PREVIOUS, COMPOSE))


def compose_texts(project_root):
    """The text of every deployment's live, last-good and previous compose file under
    ``project_root`` (one directory per deployment): what a container reads now or a rollback
    would read, the input of :func:`referenced_keys`."""
    texts = []
    try:
        names = sorted(os.listdir(project_root))
    except OSError:
        return texts
    for name in names:
        for rel in COMPOSE_FILES:
            raw = read_bytes(os.path.join(project_root, name, rel))
            if raw is not None:
                texts.append(raw.decode("utf-8", "replace"))
    return texts


def prune(cache_dir, project_root, wanted, keep, timeout, check_mode=False):
    """Remove, model by model under its revisions lock, the revisions :func:`prune_plan` lets go
    (the compose files are read again under each lock, so a rollout that wrote one meanwhile is
    seen), and today's copy of a migrated model no compose file mounts any more. ``wanted``:
    ``{model: [key, ...]}`` of the planned deployments (the models looked at). Check mode removes
    nothing and reports what would go. Returns ``{model: {"kept", "removed", "legacy_removed",
    "busy"}}``; ``busy`` names the holder when the lock stayed taken for ``timeout`` seconds (a
    prefetch of that model: nothing of it is removed this time, the next run does it)."""
    out = {}
    for model in sorted(wanted):
        if not os.path.isdir(revisions_root(cache_dir, model)):
            continue
        try:
            held = None if check_mode else lock(cache_dir, model, timeout, "remove old revisions")
        except LockBusy as exc:
            out[model] = {"kept": [], "removed": [], "legacy_removed": False, "busy": str(exc)}
            continue
        try:
            referenced, legacy = referenced_keys(cache_dir, compose_texts(project_root))
            revs = list_revisions(cache_dir, model)
            plan = dict(prune_plan({model: revs}, referenced, wanted, keep)[model], busy=None)
            if check_mode:
                plan["legacy_removed"] = legacy_removable(cache_dir, model, legacy)
            else:
                plan["removed"] = remove_revisions(cache_dir, model, plan["removed"])
                plan["legacy_removed"] = remove_legacy(cache_dir, model, legacy)
        finally:
            if held is not None:
                held.release()
        out[model] = plan
    return out
