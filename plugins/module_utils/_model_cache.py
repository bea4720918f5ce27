# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""One model in the host's cache: inspect it, fetch it (hub CLI or rsync), verify, mark it.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
managed hosts, Python >= 3.8). The pure rules live in ``_modelscope``; this file does the I/O.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import (
    ModelCacheError, build_marker, dumps_manifest, model_completeness, parse_manifest,
    sha256_file, state_paths, verify_entries)
from ansible_collections.ascendfleet.llm.plugins.module_utils._files import atomic_write, file_size, read_bytes
from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_revisions as revs
from ansible_collections.ascendfleet.llm.plugins.module_utils._modelscope import (
    HubClient, ModelLock, ModelPrefetchError, build_manifest,
    bytes_to_download, diff_files, filter_files, format_progress, model_dir,
    total_size, validate_model_id, validate_revision)


def file_signature(path):
    """(device, inode, size, mtime_ns, ctime_ns) of ``path``, or None when it does not exist: any
    write, truncation, rename onto it or replacement changes it (ctime moves with every change)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# Files HashAhead.observed reads at once when a transfer leaves several unhashed (at most the cores).
HASH_THREADS = 4


class HashAhead:
    """The sha256 of a transfer's files, each read once, as they land: while the CLI or rsync runs
    (``start``/``stop``: a background thread) a file that is at its final path with the manifest
    size and has not changed for ``settle`` seconds is hashed; :meth:`observed` then hashes only
    what was not hashed yet or changed since, so verification costs no second read of the model.

    A hash is kept only with the file's :func:`file_signature` taken before the read, unchanged
    after it, and still the file's signature when :meth:`observed` asks - a file rewritten,
    replaced or truncated after it was hashed is read again. ``settle`` keeps a file that was
    written within the last moment (a coarse-grained ctime could hide a write in the same tick)
    for later. The transfer tools write each file under a temporary name and rename it into place.
    """

    def __init__(self, directory, files, settle=1.0, clock=time.time, poll=0.2):
        self.dir = directory
        self.sizes = {item["path"]: int(item["size"]) for item in files}
        self.settle = settle
        self.clock = clock
        self.poll = poll
        self.hashes = {}  # path -> (signature the bytes were read under, sha256)
        self.bytes_read = 0
        self._counting = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        """Hash in the background until :meth:`stop`."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="hash-ahead", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """End the background hashing (a read under way is abandoned) and wait for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self):
        while not self._stop.is_set():
            if not self.hash_next():
                self._stop.wait(self.poll)

    def hash_next(self):
        """Hash one file that has landed and settled and is not hashed yet; whether one was."""
        for path, size in self.sizes.items():
            full = os.path.join(self.dir, path)
            sig = file_signature(full)
            if sig is None or sig[2] != size or self.hashes.get(path, (None,))[0] == sig:
                continue
            if self.clock() - sig[4] / 1e9 < self.settle:
                continue
            digest = self._sha256(full, self._stop)
            if digest is not None and file_signature(full) == sig:
                self.hashes[path] = (sig, digest)
            return digest is not None
        return False

    def _sha256(self, path, stop=None):
        """sha256 of ``path`` (None when ``stop`` was set meanwhile or it cannot be read)."""
        try:
            return sha256_file(path, stop=stop, counted=self._count)
        except (IOError, OSError):
            return None

    def _count(self, length):
        with self._counting:
            self.bytes_read += length

    def observed(self):
        """{path: (size or None, sha256 or None)} of every file now, as ``verify_entries`` reads
        them: a kept hash whose file is unchanged, else the file read now (when its size is the
        manifest's; a file of another size is not read). Call it with the background stopped.
        The files read now are read by up to :data:`HASH_THREADS` threads at once, at most one per
        core (hashlib lets go of the GIL while it hashes): shards that landed together at the end
        of a transfer (the CLI's workers finish together) are not hashed one after the other."""
        out, todo = {}, []
        for path, size in self.sizes.items():
            full = os.path.join(self.dir, path)
            sig = file_signature(full)
            kept = self.hashes.get(path)
            if sig is None:
                out[path] = (None, None)
            elif kept is not None and kept[0] == sig:
                out[path] = (sig[2], kept[1])
            elif sig[2] == size:
                todo.append((path, full, sig))
            else:
                out[path] = (sig[2], None)
        threads = max(1, min(HASH_THREADS, os.cpu_count() or 1, len(todo)))
        if threads == 1:
            digests = [self._sha256(full) for _path, full, _sig in todo]
        else:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                digests = list(pool.map(lambda item: self._sha256(item[1]), todo))
        for (path, full, sig), digest in zip(todo, digests):
            if digest is not None and file_signature(full) == sig:
                self.hashes[path] = (sig, digest)
            out[path] = (sig[2], digest)
        return out


class ModelCache:
    """The cache entry of one (model, revision) under ``cache_dir``."""

    def __init__(self, cache_dir, model, revision, include=None, exclude=None, host="localhost", directory=None):
        validate_model_id(model)
        validate_revision(revision)
        self.cache_dir = cache_dir
        self.model = model
        self.revision = revision
        self.include = list(include or [])
        self.exclude = list(exclude or [])
        self.host = host
        # ``directory``: another place for the files (a revision's staging directory).
        self.dir = directory or model_dir(cache_dir, model)
        self.paths = state_paths(self.dir)

    # -- inspection (never reads model bytes unless verify == full) ----------------------
    def manifest(self):
        raw = read_bytes(self.paths["manifest"])
        if raw is None:
            return None
        try:
            return parse_manifest(raw, self.paths["manifest"])
        except ModelCacheError:
            return None

    def inspect(self, verify="quick"):
        """{"complete": bool, "reasons": [...], ...} from the one completeness reader; the copy
        must have been fetched with this entry's include/exclude globs."""
        return model_completeness(self.cache_dir, self.model, self.revision, verify,
                                  self.include, self.exclude)

    def present_sizes(self, files):
        out = {}
        for item in files:
            path = os.path.join(self.dir, item["path"])
            out[item["path"]] = file_size(path)
            partial = file_size(path + ".incomplete")
            if partial is not None:
                out[item["path"] + ".incomplete"] = partial
        return out

    def check_space(self, files, margin):
        needed = bytes_to_download(files, self.present_sizes(files))
        return revs.check_free_space(self.host, self.dir, needed, margin, self.model, self.revision)

    # -- preparing the directory ---------------------------------------------------------
    def prepare_dirs(self):
        cache = self.cache_dir
        if os.path.lexists(cache) and not os.path.isdir(cache):
            raise ModelPrefetchError("host %s: model_prefetch_cache_dir %s exists but is not a "
                                     "directory; point it at a directory on the cache disk"
                                     % (self.host, cache))
        try:
            os.makedirs(self.paths["dir"], exist_ok=True)
        except OSError as exc:
            raise ModelPrefetchError(
                "host %s: cannot create %s (%s); make model_prefetch_cache_dir %s a writable "
                "directory" % (self.host, self.paths["dir"], exc.strerror or exc, cache))
        if not os.access(self.paths["dir"], os.W_OK) or not os.access(self.dir, os.W_OK):
            raise ModelPrefetchError("host %s: %s is not writable; make model_prefetch_cache_dir %s "
                                     "writable (or mounted read-write)" % (self.host, self.dir, cache))
        probe = os.path.join(self.paths["dir"], ".write-test")
        try:
            with open(probe, "wb") as handle:
                handle.write(b"ok")
            os.unlink(probe)
        except (IOError, OSError) as exc:
            raise ModelPrefetchError("host %s: cannot write in %s (%s); make model_prefetch_cache_dir "
                                     "%s writable" % (self.host, self.dir, exc.strerror or exc, cache))

    def lock(self, timeout, what):
        return ModelLock(self.paths["lock"], {"what": what}).acquire(timeout=timeout)

    def drop_marker(self):
        for path in (self.paths["marker"],):
            if os.path.lexists(path):
                os.unlink(path)

    def remove_stale(self, old_files, new_files):
        """Delete files of the previous manifest that the new file list no longer has."""
        removed = []
        for path in diff_files(old_files, new_files)["removed"]:
            full = os.path.join(self.dir, path)
            if os.path.isfile(full):
                os.unlink(full)
                removed.append(path)
        return removed

    # -- transfer with progress ----------------------------------------------------------
    def _progress_bytes(self, todo, started):
        done = 0
        finished = 0
        for item in todo:
            path = os.path.join(self.dir, item["path"])
            try:
                st = os.stat(path)
                if st.st_ctime >= started - 1 and st.st_size == int(item["size"]):
                    done += st.st_size
                    finished += 1
                    continue
            except OSError:
                pass
            partial = file_size(path + ".incomplete")  # modelscope CLI partial
            if partial is None:
                head, tail = os.path.split(path)
                temps = glob.glob(os.path.join(head, "." + glob.escape(tail) + ".*"))  # rsync temp
                temps += glob.glob(os.path.join(head, ".rsync-partial", glob.escape(tail)))
                partial = sum(file_size(t) or 0 for t in temps)
            done += min(partial or 0, int(item["size"]))
        return done, finished

    def run_transfer(self, argv, env, todo, log_name, interval=2.0, timeout=None):
        """Run ``argv`` writing progress JSON every ``interval`` s; (rc, tail of output)."""
        log_path = os.path.join(self.paths["dir"], log_name)
        total = total_size(todo)
        started = time.time()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, env=env, cwd=self.paths["dir"])
            last = 0.0
            while True:
                try:
                    rc = proc.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    rc = None
                now = time.time()
                if rc is not None or now - last >= interval:
                    done, finished = self._progress_bytes(todo, started)
                    elapsed = max(now - started, 1e-6)
                    atomic_write(self.paths["progress"], json.dumps({
                        "model": self.model, "revision": self.revision, "done": done,
                        "total": total, "elapsed": round(elapsed, 1),
                        "rate": int(done / elapsed), "files_done": finished,
                        "files_total": len(todo), "running": rc is None,
                        "line": format_progress(self.model, done, total, elapsed, finished, len(todo)),
                    }).encode("utf-8"))
                    last = now
                if rc is not None:
                    break
                if timeout and now - started > timeout:
                    proc.kill()
                    proc.wait()
                    rc = -9
                    break
        raw = (read_bytes(log_path) or b"").decode("utf-8", "replace")
        return rc, error_lines(raw), time.time() - started

    # -- verification --------------------------------------------------------------------
    def verify(self, files, hashes=None):
        """[(path, reason)] of ``files`` that differ from the manifest entries (size, sha256);
        ``hashes``: the :class:`HashAhead` of the transfer, whose hashes of unchanged files count."""
        return verify_entries(files, (hashes or HashAhead(self.dir, files)).observed())

    def write_complete(self, files, commit, source):
        manifest = build_manifest(self.model, self.revision, commit, files, source,
                                  self.include, self.exclude)
        raw = dumps_manifest(manifest)
        atomic_write(self.paths["manifest"], raw)
        # The marker goes last: it exists only for a verified, fully written model.
        atomic_write(self.paths["marker"],
                     (json.dumps(build_marker(self.model, self.revision, raw), sort_keys=True)
                      + "\n").encode("utf-8"))
        return manifest


_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ \| \w+ +\| [\w.]+ \| |^\d\d:\d\d:\d\d,\d+ \| \w+ +\| [\w.]+ \| ")
_ERROR_LINE = re.compile(r"error|\[E\d{4}\]|Suggestion:|Hash mismatch|failed|refused|denied|No space", re.IGNORECASE)


def error_lines(output, limit=6):
    """The lines of a CLI/rsync log that say what went wrong (progress bars and banners dropped)."""
    plain = []
    for line in output.replace("\r", "\n").splitlines():
        line = _LOG_PREFIX.sub("", line.strip())
        if line and "%|" not in line and "\x1b" not in line:
            plain.append(line)
    lines = [line for line in plain if _ERROR_LINE.search(line)]
    return (lines or plain)[-limit:]


def cli_env(base_env, cache_dir, endpoint, token=None, extra=None):
    """Environment of the ``modelscope`` CLI: endpoint, private writable dirs, token, no intranet.

    Inherited ``MODELSCOPE_*`` variables are dropped (a stray one must not redirect the CLI);
    ``extra`` (the caller's explicit settings) goes in before ours.
    """
    env = {k: v for k, v in base_env.items() if not k.startswith("MODELSCOPE_")}
    env.update({str(k): str(v) for k, v in (extra or {}).items()})
    home = os.path.join(cache_dir, ".modelscope")
    env.update({
        "MODELSCOPE_ENDPOINT": endpoint,
        "MODELSCOPE_CACHE": os.path.join(home, "cache"),
        "MODELSCOPE_HOME": os.path.join(home, "home"),
        "MODELSCOPE_DOWNLOAD_INTRA_CLOUD": "false",
        "NO_COLOR": "1",
    })
    if token:
        env["MODELSCOPE_API_TOKEN"] = token
    return env


def fetch(params, host, environ=None):
    """Ensure one model is complete in the cache; returns a result dict (``changed`` etc.).

    ``params``: model, revision, include, exclude, cache_dir, source (hub|rsync|prestaged),
    source_url, endpoint, token, cli, rsync, attempts, space_margin, lock_timeout, verify,
    check_mode, progress_interval.
    """
    environ = dict(os.environ if environ is None else environ)
    # The token comes as the no_log option (as the role passes it: never on a command line) or, for
    # callers that set it there, from the module's environment; the CLI gets it in its environment.
    params = dict(params, token=params.get("token") or environ.get("MODELSCOPE_API_TOKEN") or None)
    cache = ModelCache(params["cache_dir"], params["model"], params["revision"],
                       params.get("include"), params.get("exclude"), host)
    result = {"changed": False, "model": cache.model, "revision": cache.revision,
              "model_dir": cache.dir, "source": params["source"], "action": "none",
              "bytes_fetched": 0, "files_fetched": [], "attempts": 0}
    state = cache.inspect(params.get("verify", "quick"))
    if state["complete"]:
        result.update(bytes_total=state["bytes"], reasons=[])
        return result
    result["reasons"] = state["reasons"]
    if params.get("check_mode"):
        result.update(changed=True, action="would_fetch")
        return result

    cache.prepare_dirs()
    with cache.lock(params.get("lock_timeout", 30), "model_fetch %s@%s from %s"
                    % (cache.model, cache.revision, params["source"])):
        # Another writer may have finished while we waited for the lock.
        state = cache.inspect(params.get("verify", "quick"))
        if state["complete"]:
            result.update(bytes_total=state["bytes"], reasons=[])
            return result
        old = cache.manifest()
        commit, files = _expected_files(cache, params)
        result.update(commit=commit, bytes_total=total_size(files), files_total=len(files))
        cache.drop_marker()
        if os.path.exists(cache.paths["progress"]):
            os.unlink(cache.paths["progress"])
        if old:
            # A changed revision: keep what is unchanged, drop what changed or went away.
            result["diff"] = diff_files(old["files"], files)
            result["removed"] = cache.remove_stale(old["files"], files)
            if params["source"] != "prestaged":
                for path in result["diff"]["changed"]:
                    full = os.path.join(cache.dir, path)
                    if os.path.isfile(full):
                        os.unlink(full)
        if params["source"] == "prestaged":
            bad = cache.verify(files)
            if bad:
                raise ModelPrefetchError(
                    "host %s: pre-staged %s@%s in %s does not match the hub's file list: %s; stage "
                    "the missing/corrupt files or use model_prefetch_source: hub"
                    % (host, cache.model, cache.revision, cache.dir,
                       "; ".join("%s (%s)" % b for b in bad[:10])))
            cache.write_complete(files, commit, "prestaged")
            result.update(changed=True, action="verified")
            return result
        # A changed revision or a failed full verification: drop what differs, keep the rest.
        for path, _reason in cache.verify(files) if params.get("verify") == "full" else []:
            full = os.path.join(cache.dir, path)
            if os.path.isfile(full):
                os.unlink(full)
        _transfer_verified(cache, params, environ, files, result,
                           lambda: cache.check_space(files, int(params.get("space_margin", 0))))
        cache.write_complete(files, commit, params["endpoint"] if params["source"] == "hub"
                             else params["source_url"])
        return result


def _transfer_verified(cache, params, environ, files, result, space_check):
    """Fetch ``files`` into ``cache.dir`` until every one verifies (``params["attempts"]`` runs of
    the CLI or rsync), updating ``result``; raises ModelPrefetchError naming the last error.
    ``space_check`` runs once before the first transfer and returns (needed, free) or raises."""
    attempts = max(1, int(params.get("attempts", 3)))
    last_error = None
    fetched = []
    # Every file is verified against the manifest's sha256; the files are hashed while the
    # transfer runs, each as soon as it has landed, so verifying reads no byte a second time.
    hashes = HashAhead(cache.dir, files)
    for attempt in range(1, attempts + 1):
        result["attempts"] = attempt
        present = cache.present_sizes(files)
        todo = [f for f in files if present.get(f["path"]) != int(f["size"])]
        if attempt == 1:
            needed, free = space_check()
            result.update(bytes_needed=needed, bytes_free=free)
        if todo or attempt > 1:
            hashes.start()
            try:
                rc, tail, elapsed = _transfer(cache, params, environ, todo or files)
            finally:
                hashes.stop()
            fetched.extend(f["path"] for f in todo)
            result["bytes_fetched"] += total_size(todo)
            result["seconds"] = round(result.get("seconds", 0) + elapsed, 1)
            if rc != 0:
                last_error = "%s exited %s: %s" % (
                    "modelscope download" if params["source"] == "hub" else "rsync", rc,
                    " | ".join(tail) or "no output")
                continue
        started = time.time()
        bad = cache.verify(files, hashes)
        result["verify_seconds"] = round(result.get("verify_seconds", 0) + time.time() - started, 1)
        if not bad:
            result.update(changed=True, files_fetched=sorted(set(fetched)),
                          action="downloaded" if params["source"] == "hub" else "copied")
            if result.get("seconds"):
                result["rate_bytes_per_s"] = int(result["bytes_fetched"] / max(result["seconds"], 0.1))
            return True
        last_error = "verification failed: %s" % "; ".join("%s (%s)" % b for b in bad[:10])
        for path, _reason in bad:  # re-fetch exactly the files that did not verify
            full = os.path.join(cache.dir, path)
            if os.path.isfile(full):
                os.unlink(full)
    raise ModelPrefetchError(
        "host %s: %s@%s from %s failed after %d attempt(s): %s. Completed files and partial "
        "downloads are kept in %s and the next run resumes them; no completion marker was "
        "written" % (cache.host, cache.model, cache.revision,
                     params.get("source_url") or params.get("endpoint"), attempts,
                     last_error, cache.dir))


def fetch_revision(params, host, environ=None):
    """Ensure the revision ``params["revision"]`` (a branch, tag or commit) resolves to a complete
    revision directory of its own (``_model_revisions``); returns a result dict like :func:`fetch`
    plus ``key``, ``commit``, ``previous_key`` (what the name resolved to before) and ``change``
    (``revision master: <old> -> <new>`` when it moved).

    ``params`` as for :func:`fetch` (source ``hub`` only) plus ``resolve``: ``missing`` (default)
    asks the hub only when the name resolves to no complete revision yet (a re-run contacts no
    hub), ``always`` asks it every run, so a moved branch is fetched as a new revision beside the
    old one. Nothing is ever written into a complete revision: the new one is fetched into its
    staging directory (files it shares with a complete revision hard-linked, not fetched again),
    verified, marked and only then renamed into place. Today's copy of the model is first
    migrated (hard links, no download). The free space is checked against the bytes still to
    fetch before the CLI runs.
    """
    environ = dict(os.environ if environ is None else environ)
    params = dict(params, token=params.get("token") or environ.get("MODELSCOPE_API_TOKEN") or None)
    if params["source"] == "rsync":
        return copy_revision(params, host, environ)
    if params["source"] != "hub":
        raise ModelPrefetchError("host %s: the revision cache fetches from the hub (or copies a seed's "
                                 "revision), not from source %r; use model_prefetch_source: hub or "
                                 "ascendfleet_cache_layout: flat" % (host, params["source"]))
    model, name, cache_dir, include, exclude, verify, result = _revision_request(params)

    def done(state, old_key=None):
        return _revision_done(result, name, state, old_key)

    if params.get("resolve", "missing") == "missing":
        state = revs.resolved(cache_dir, model, name, verify, include, exclude)
        if state["complete"]:
            return done(state)
    if params.get("check_mode"):
        result.update(changed=True, action="would_fetch")
        return result
    with revs.lock(cache_dir, model, params.get("lock_timeout", 30), "model_fetch %s@%s from hub" % (model, name)):
        migrated = revs.migrate(cache_dir, model)
        if migrated:
            result.update(changed=True, migrated=migrated["key"])
        if params.get("resolve", "missing") == "missing":
            # Another writer may have finished meanwhile, or the migration brought the revision.
            state = revs.resolved(cache_dir, model, name, verify, include, exclude)
            if state["complete"]:
                return done(state)
        commit, files = hub_files(params["endpoint"], params.get("token"), params.get("http_timeout", 30),
                                  model, name, include, exclude)
        key = revs.revision_key(commit, files)
        result.update(key=key, commit=commit, bytes_total=total_size(files), files_total=len(files))
        state = revs.revision_completeness(cache_dir, model, key, verify)
        if not state["complete"]:
            staging = revs.staging_dir(cache_dir, model, key)
            # The CLI is pinned to the commit the list came from, so a branch moving meanwhile
            # cannot mix two commits in one revision (the CLI itself asks per file by name).
            cache = _staging_cache(cache_dir, model, commit or name, include, exclude, host, staging)
            linked = revs.link_sources(files, revs.complete_sources(cache_dir, model))

            def space():
                needed = revs.bytes_needed(files, linked, cache.present_sizes(files))
                return revs.check_free_space(host, staging, needed, int(params.get("space_margin", 0)), model, name)
            needed, free = space()
            result.update(files_linked=sorted(revs.link_into(staging, linked)))
            _transfer_verified(cache, params, environ, files, result, lambda: (needed, free))
            revs.finish(staging, revs.revision_dir(cache_dir, model, key), model, key, commit, [name], files,
                        params["endpoint"], include, exclude)
            state = revs.revision_completeness(cache_dir, model, key, verify)
        old_key = revs.record_ref(cache_dir, model, name, key, commit)
        if old_key != key:
            result["changed"] = True
        return done(state, old_key)


def _staging_cache(cache_dir, model, revision, include, exclude, host, staging):
    """The ModelCache of a revision's staging directory, created and writable; its progress goes
    to the model's one progress file (``_model_revisions.progress_path``), fresh for this run."""
    cache = ModelCache(cache_dir, model, revision, include, exclude, host, directory=staging)
    cache.paths = dict(cache.paths, progress=revs.progress_path(cache_dir, model))
    cache.prepare_dirs()
    if os.path.exists(cache.paths["progress"]):
        os.unlink(cache.paths["progress"])
    return cache


def copy_revision(params, host, environ=None):
    """Copy one revision directory of a seed host (or any verified revision copy) as a unit:
    ``params["source_url"]`` is the source's ``<...>/revisions/<Owner>/<Name>/<key>`` as rsync
    reads it. Returns a result like :func:`fetch_revision`.

    Today's copy of the model is migrated first (hard links: a host that held the model in the
    flat layout copies nothing). When the key is not complete here, files a complete revision
    already holds are hard-linked, the free space is checked against the rest, the rest is
    copied into the staging directory, every file verified against the source's revision
    manifest, and the directory is finished and renamed like a fetched revision. ``revision``
    (the branch, tag or commit the deployments name) is then recorded as resolving to the key.
    """
    environ = dict(os.environ if environ is None else environ)
    model, name, cache_dir, include, exclude, verify, result = _revision_request(params)
    url = (params.get("source_url") or "").rstrip("/")
    key = url.rsplit("/", 1)[-1]
    if params.get("check_mode"):
        # The seed resolves nothing in check mode, so the key may be unknown: compare when known.
        here = revs.resolved(cache_dir, model, name, verify, include, exclude)
        if not here["complete"] or (revs.is_key(key) and here["key"] != key):
            result.update(changed=True, action="would_fetch")
        return result
    if not revs.is_key(key):
        raise ModelPrefetchError("host %s: source_url %r does not name a revision directory; give the "
                                 "source's <cache>/revisions/%s/<key> (key: the commit id)" % (host, url, model))
    result["key"] = key
    with revs.lock(cache_dir, model, params.get("lock_timeout", 30), "model_fetch %s@%s from %s" % (model, name, url)):
        migrated = revs.migrate(cache_dir, model)
        if migrated:
            result.update(changed=True, migrated=migrated["key"])
        state = revs.revision_completeness(cache_dir, model, key, verify)
        staging = revs.staging_dir(cache_dir, model, key)
        if not state["complete"]:
            cache = _staging_cache(cache_dir, model, name, include, exclude, host, staging)
            manifest = _source_manifest(cache, dict(params, source_url=url))
            if manifest.get("model") != model or manifest.get("key") != key:
                raise ModelPrefetchError("host %s: source %s holds %s at %s, not %s at %s"
                                         % (host, url, manifest.get("model"), manifest.get("key"), model, key))
            if list(manifest.get("include") or []) != include or list(manifest.get("exclude") or []) != exclude:
                raise ModelPrefetchError(
                    "host %s: source %s holds %s with include/exclude %r/%r, not %r/%r; give both hosts "
                    "the same globs" % (host, url, model, manifest.get("include"), manifest.get("exclude"),
                                        include, exclude))
            files = manifest["files"]
            result.update(commit=manifest.get("commit"), bytes_total=total_size(files), files_total=len(files))
            linked = revs.link_sources(files, revs.complete_sources(cache_dir, model))
            needed = revs.bytes_needed(files, linked, cache.present_sizes(files))
            free = revs.check_free_space(host, staging, needed, int(params.get("space_margin", 0)), model, name)[1]
            result.update(files_linked=sorted(revs.link_into(staging, linked)))
            _transfer_verified(cache, dict(params, source_url=url), environ, files, result, lambda: (needed, free))
            revs.finish(staging, revs.revision_dir(cache_dir, model, key), model, key, manifest.get("commit"),
                        list(manifest.get("names") or []) + [name], files, url, include, exclude)
            state = revs.revision_completeness(cache_dir, model, key, verify)
        old_key = revs.record_ref(cache_dir, model, name, key, state["commit"])
        if old_key != key:
            result["changed"] = True
        return _revision_done(result, name, state, old_key)


def hub_files(endpoint, token, timeout, model, name, include, exclude):
    """(commit, files) of ``model`` at ``name`` as the hub lists them, filtered by the globs;
    ModelPrefetchError when the globs leave no file."""
    commit, files = HubClient(endpoint, token, timeout=timeout).list_files(model, name)
    files = filter_files(files, include, exclude)
    if not files:
        raise ModelPrefetchError("%s@%s: include/exclude globs %r/%r leave no file to fetch"
                                 % (model, name, include, exclude))
    return commit, files


def hub_resolution(cache_dir, model, name, include, exclude, endpoint, token=None, verify="quick", timeout=30):
    """What ``name`` resolves to on the hub NOW and whether that revision is here: one file list
    request, nothing written. :func:`_model_revisions.revision_completeness` of the hub's key plus
    ``revision`` (the name) and ``current`` - whether the name is recorded as resolving to that
    key here (a complete revision that ``refs.json`` does not name for it yet is not current, so
    the fetch records it). What ``resolve: always`` reads, so that only a moved branch or a
    missing revision is fetched (and fanned out), and a re-run changes nothing."""
    commit, files = hub_files(endpoint, token, timeout, model, name, include, exclude)
    key = revs.revision_key(commit, files)
    state = revs.revision_completeness(cache_dir, model, key, verify)
    here = revs.resolved(cache_dir, model, name, verify, include, exclude)
    state.update(revision=name, current=bool(state["complete"] and here["complete"] and here["key"] == key))
    return state


def _revision_request(params):
    """(model, name, cache_dir, include, exclude, verify, result) of a revisions-layout request,
    the model id and revision validated; ``result`` is the unchanged result to fill in."""
    model, name = params["model"], params["revision"]
    validate_model_id(model)
    validate_revision(name)
    result = {"changed": False, "model": model, "revision": name, "source": params["source"], "action": "none",
              "bytes_fetched": 0, "files_fetched": [], "attempts": 0}
    return (model, name, params["cache_dir"], list(params.get("include") or []), list(params.get("exclude") or []),
            params.get("verify", "quick"), result)


def _revision_done(result, name, state, old_key=None):
    """``result`` completed with the revision ``state`` (revision_completeness) ``name`` resolves to."""
    result.update(key=state["key"], commit=state["commit"], model_dir=state["model_dir"],
                  bytes_total=state["bytes"], previous_key=old_key, reasons=[],
                  change=revs.revision_change(name, old_key, state["key"]))
    return result


def _expected_files(cache, params):
    """(commit, files) the model must end with, from the hub's list or the source's manifest."""
    if params["source"] in ("hub", "prestaged"):
        return hub_files(params["endpoint"], params.get("token"), params.get("http_timeout", 30),
                         cache.model, cache.revision, cache.include, cache.exclude)
    manifest = _source_manifest(cache, params)
    if manifest.get("model") != cache.model or manifest.get("revision") != cache.revision:
        raise ModelPrefetchError("host %s: source %s holds %s@%s, not %s@%s"
                                 % (cache.host, params["source_url"], manifest.get("model"),
                                    manifest.get("revision"), cache.model, cache.revision))
    return manifest.get("commit"), manifest["files"]


def _source_manifest(cache, params):
    """The manifest of the verified copy at ``params["source_url"]`` (a seed host's or a mirror's
    directory of the marker layout), read with rsync into ``cache``'s state directory."""
    tmp = os.path.join(cache.paths["dir"], "source-manifest.json")
    src = params["source_url"].rstrip("/") + "/.ascendfleet/manifest.json"
    argv = [params.get("rsync") or "rsync", "--timeout=60", src, tmp]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, check=False,
                          stderr=subprocess.STDOUT, env=_rsync_env(params, os.environ))
    if proc.returncode != 0:
        raise ModelPrefetchError("host %s: cannot read the source manifest %s (rsync exit %d: %s); "
                                 "the source must hold a completed copy of %s@%s"
                                 % (cache.host, src, proc.returncode,
                                    proc.stdout.decode("utf-8", "replace").strip()[-300:],
                                    cache.model, cache.revision))
    manifest = parse_manifest(read_bytes(tmp), src)
    os.unlink(tmp)
    return manifest


def _rsync_env(params, environ):
    env = dict(environ)
    if params.get("rsync_password"):
        env["RSYNC_PASSWORD"] = params["rsync_password"]
    return env


def _transfer(cache, params, environ, todo):
    interval = float(params.get("progress_interval", 2))
    if params["source"] == "hub":
        if not os.access(params["cli"], os.X_OK):
            raise ModelPrefetchError("host %s: the modelscope CLI %s is missing or not executable; "
                                     "install it (the role's model_prefetch_venv step) or set "
                                     "model_prefetch_venv to where it lives" % (cache.host, params["cli"]))
        argv = [params["cli"], "download", "--model", cache.model, "--revision", cache.revision,
                "--local-dir", cache.dir]
        for pattern in cache.include:
            argv += ["--include", pattern]
        for pattern in cache.exclude:
            argv += ["--exclude", pattern]
        env = cli_env(environ, cache.cache_dir, params["endpoint"], params.get("token"),
                      params.get("env"))
        os.makedirs(env["MODELSCOPE_HOME"], mode=0o700, exist_ok=True)
        return cache.run_transfer(argv, env, todo, "download.log", interval, params.get("timeout"))
    argv = [params.get("rsync") or "rsync", "-rlt", "--partial", "--partial-dir=.rsync-partial",
            "--timeout=120", "--exclude=/.ascendfleet/", "--exclude=/.modelscope/"]
    argv += ["--include=/%s" % f["path"] for f in todo]
    # Parent directories of nested files must be included for rsync to descend into them.
    parents = sorted({"/" + "/".join(f["path"].split("/")[:i]) + "/"
                      for f in todo for i in range(1, f["path"].count("/") + 1)})
    argv += ["--include=%s" % p for p in parents] + ["--exclude=*"]
    argv += [params["source_url"].rstrip("/") + "/", cache.dir + "/"]
    return cache.run_transfer(argv, _rsync_env(params, environ), todo, "rsync.log", interval,
                              params.get("timeout"))
