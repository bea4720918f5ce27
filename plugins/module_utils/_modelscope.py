# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""ModelScope model cache: ids, hub file lists, manifest, completion marker, space math, lock.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
managed hosts, Python >= 3.8).

The layout of a cached model, its manifest and completion marker, and the completeness rule
are facts of the collection: they live in ``_facts`` (marker layout, ``model_completeness``).
"""

from __future__ import annotations

import errno
import fcntl
import fnmatch
import json
import os
import re
import socket
import time

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import (
    MANIFEST_FORMAT,
    MODEL_ID_FORM,
    ModelCacheError,
    model_dir as _layout_model_dir,
    model_id_parts,
    safe_relpath,
)

# Branches, tags and 40-hex commit ids; no whitespace, no '..', no leading '-' (whole string).
REVISION_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./+-]{0,199}")


class ModelPrefetchError(ModelCacheError):
    """A problem with a clear message naming what is wrong and the fix."""


class HubError(ModelPrefetchError):
    """The hub refused or could not answer; ``kind`` is one of unreachable, auth, not_found,
    revision, protocol."""

    def __init__(self, message, kind):
        super(HubError, self).__init__(message)
        self.kind = kind


class LockBusy(ModelPrefetchError):
    """Another process holds the model directory's lock."""


# -- ids ---------------------------------------------------------------------------------
def validate_model_id(model):
    """(owner, name) of ``Owner/Name`` (the rule: ``_facts.model_id_parts``); raises
    ModelPrefetchError naming the fix."""
    parts = model_id_parts(model)
    if parts is None:
        raise ModelPrefetchError("malformed model id %r: expected %s" % (model, MODEL_ID_FORM))
    return parts


def validate_revision(revision):
    if not isinstance(revision, str) or not REVISION_RE.fullmatch(revision) or ".." in revision:
        raise ModelPrefetchError(
            "malformed revision %r: expected a branch, tag or commit id such as 'master', "
            "'v1.0' or a 40-hex commit" % (revision,))
    return revision


def model_dir(cache_dir, model):
    """``<cache>/models/<Owner>/<Name>`` of a validated model id."""
    validate_model_id(model)
    return _layout_model_dir(cache_dir, model)


# -- hub file list -----------------------------------------------------------------------
def parse_file_list(body, model, revision, endpoint="the hub"):
    """Files of a ``/api/v1/models/<id>/repo/files?Recursive=True`` answer.

    Returns (commit, [{"path", "size", "sha256"}]) sorted by path; directories are skipped.
    An empty or null ``Files`` is how the hub answers an unknown revision.
    """
    if not isinstance(body, dict) or not isinstance(body.get("Data"), dict):
        raise HubError("%s@%s: unexpected hub answer to the file list (no Data object): %.200s"
                       % (model, revision, json.dumps(body)), "protocol")
    files = body["Data"].get("Files")
    if not files:
        raise HubError("%s: revision %r not found on the hub %s (it lists no files for it); pin "
                       "an existing branch, tag or commit id" % (model, revision, endpoint), "revision")
    out = []
    commits = set()
    for entry in files:
        if not isinstance(entry, dict) or entry.get("Type", "blob") != "blob":
            continue
        try:
            path = safe_relpath(entry["Path"])
            size = int(entry["Size"])
            sha = str(entry.get("Sha256") or "").lower()
        except (KeyError, TypeError, ValueError):
            raise HubError("%s@%s: file entry without Path/Size: %.200s"
                           % (model, revision, json.dumps(entry)), "protocol")
        if not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise HubError("%s@%s: the hub lists no sha256 for %s; cannot verify it"
                           % (model, revision, path), "protocol")
        if size < 0:
            raise HubError("%s@%s: negative size for %s" % (model, revision, path), "protocol")
        commits.add(entry.get("CommitId") or entry.get("Revision") or "")
        out.append({"path": path, "size": size, "sha256": sha})
    out.sort(key=lambda f: f["path"])
    commits.discard("")
    commit = sorted(commits)[0] if len(commits) == 1 else None
    return commit, out


def filter_files(files, include=None, exclude=None):
    """Files matching any ``include`` glob (all when empty) and no ``exclude`` glob."""
    include = list(include or [])
    exclude = list(exclude or [])
    out = []
    for item in files:
        path = item["path"]
        if include and not any(fnmatch.fnmatchcase(path, pat) for pat in include):
            continue
        if any(fnmatch.fnmatchcase(path, pat) for pat in exclude):
            continue
        out.append(item)
    return out


def total_size(files):
    return sum(int(f["size"]) for f in files)


# -- space -------------------------------------------------------------------------------
def format_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
    return "%d B" % n  # pragma: no cover


def bytes_to_download(files, present_sizes):
    """Bytes still to fetch: full size of each file not present at its size, minus partials.

    ``present_sizes`` maps path -> size on disk of the final file, and path + '.incomplete'
    -> size of a partial the CLI can resume.
    """
    need = 0
    for item in files:
        size = int(item["size"])
        if present_sizes.get(item["path"]) == size:
            continue
        partial = present_sizes.get(item["path"] + ".incomplete") or 0
        need += max(0, size - min(partial, size))
    return need


def space_shortfall(needed, free, margin):
    """Bytes missing on disk (0 when ``free`` >= ``needed`` + ``margin``)."""
    return max(0, int(needed) + int(margin) - int(free))


def space_error(host, mount, device, model, revision, needed, free, margin):
    return ("host %s: not enough free space on %s (device %s) for %s@%s: needs %s (%s to download "
            "+ %s margin), %s free; free %s or point model_prefetch_cache_dir at a larger disk"
            % (host, mount, device, model, revision, format_bytes(needed + margin),
               format_bytes(needed), format_bytes(margin), format_bytes(free),
               format_bytes(space_shortfall(needed, free, margin))))


def mount_device(mount, mounts_text):
    """Device of ``mount`` from /proc/mounts text (last entry wins, as the kernel shows)."""
    device = "unknown"
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].replace("\\040", " ") == mount:
            device = parts[0]
    return device


# -- manifest and marker -----------------------------------------------------------------
def build_manifest(model, revision, commit, files, source, include=None, exclude=None):
    return {
        "format": MANIFEST_FORMAT,
        "model": model,
        "revision": revision,
        "commit": commit,
        "source": source,
        "include": list(include or []),
        "exclude": list(exclude or []),
        "files": [{"path": f["path"], "size": int(f["size"]), "sha256": f["sha256"]}
                  for f in sorted(files, key=lambda f: f["path"])],
        "total_bytes": total_size(files),
    }


def diff_files(old_files, new_files):
    """Compare two file lists by path and sha256.

    Returns {"unchanged": [...], "changed": [...], "added": [...], "removed": [...]} of paths.
    """
    old = {f["path"]: (f["sha256"], int(f["size"])) for f in old_files or []}
    new = {f["path"]: (f["sha256"], int(f["size"])) for f in new_files or []}
    return {
        "unchanged": sorted(p for p in new if p in old and old[p] == new[p]),
        "changed": sorted(p for p in new if p in old and old[p] != new[p]),
        "added": sorted(p for p in new if p not in old),
        "removed": sorted(p for p in old if p not in new),
    }


def format_progress(model, done, total, elapsed, files_done=None, files_total=None):
    rate = done / elapsed if elapsed > 0 else 0.0
    pct = (100.0 * done / total) if total else 100.0
    eta = ""
    if rate > 0 and total > done:
        eta = ", ~%ds left" % int((total - done) / rate)
    count = ""
    if files_total is not None:
        count = ", %d/%d files" % (files_done or 0, files_total)
    return "%s: %s / %s (%.1f%%) at %s/s%s%s" % (
        model, format_bytes(done), format_bytes(total), pct, format_bytes(rate), count, eta)


# -- lock --------------------------------------------------------------------------------
class ModelLock:
    """Exclusive fcntl lock on ``<model dir>/.ascendfleet/lock``; the holder is written into it.

    fcntl (POSIX) locks are honoured over NFSv4 and released by the kernel when the holder
    dies, so a crashed run never leaves a stale lock.
    """

    def __init__(self, path, owner=None):
        self.path = path
        self.owner = owner or {}
        self.fd = None

    def holder(self):
        try:
            with open(self.path, "rb") as handle:
                data = json.loads(handle.read().decode("utf-8") or "{}")
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def acquire(self, timeout=0, poll=0.5, sleep=time.sleep, clock=time.monotonic):
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = clock() + max(0, timeout)
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EACCES, errno.EAGAIN):
                    os.close(fd)
                    raise
                if clock() >= deadline:
                    holder = self.holder()
                    os.close(fd)
                    raise LockBusy(
                        "%s is locked by another run (host %s, pid %s, since %s, %s); two plays or "
                        "hosts sharing this cache must not write one model at once: wait for it to "
                        "finish, or raise model_prefetch_lock_timeout" % (
                            self.path, holder.get("host", "?"), holder.get("pid", "?"),
                            holder.get("since", "?"), holder.get("what", "?")))
                sleep(poll)
        info = dict(self.owner)
        info.setdefault("host", socket.gethostname())
        info.setdefault("pid", os.getpid())
        info.setdefault("since", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(info, sort_keys=True).encode("utf-8"))
        os.fsync(fd)
        self.fd = fd
        return self

    def release(self):
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)
                fcntl.lockf(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False


# -- hub (plain HTTP, the documented ModelScope API) --------------------------------------
def hub_error_for(model, revision, endpoint, status, body_text, has_token):
    """HubError for an HTTP error answer of the file list."""
    if status in (401, 403):
        if has_token:
            return HubError("%s: the hub %s refused the token (HTTP %d); the token in "
                            "model_prefetch_token cannot read this model: use one that can"
                            % (model, endpoint, status), "auth")
        return HubError("%s is private on the hub %s (HTTP %d) and no token was given: set "
                        "model_prefetch_token (from a vault) to an access token that can read it"
                        % (model, endpoint, status), "auth")
    if status == 404:
        if "record not found" in body_text or "版本" in body_text:
            return HubError("%s: revision %r not found on the hub %s (HTTP 404); pin an existing "
                            "branch, tag or commit id" % (model, revision, endpoint), "revision")
        return HubError("%s: model not found on the hub %s (HTTP 404); check the Owner/Name "
                        "spelling" % (model, endpoint), "not_found")
    return HubError("%s@%s: the hub %s answered HTTP %d: %.200s"
                    % (model, revision, endpoint, status, body_text), "protocol")


class HubClient:
    """Reads file lists from a ModelScope hub (or a mirror speaking its API); no downloads."""

    def __init__(self, endpoint, token=None, timeout=30, opener=None):
        self.endpoint = endpoint.rstrip("/")
        self.token = token or None
        self.timeout = timeout
        if opener is None:
            from urllib.request import build_opener
            opener = build_opener()
        self.opener = opener

    def _open(self, url, data, headers, timeout, method):
        from urllib.request import Request
        return self.opener.open(Request(url, data=data, headers=headers, method=method), timeout=timeout)

    def _get(self, path):
        """(status, body text) of an HTTP answer; HubError when none came back (``_http.request``)."""
        # Imported here: urllib and http.client (and ssl) load only where the hub is asked, not in
        # every module that reads the cache (npu_host_facts, model_cache_info, vllm_model_info).
        from ansible_collections.ascendfleet.llm.plugins.module_utils._http import request

        headers = {"Accept": "application/json", "User-Agent": "ascendfleet.llm model_fetch"}
        if self.token:
            # The hub's legacy API authenticates with the access token as session cookie.
            headers["Cookie"] = "m_session_id=%s" % self.token
        answer = request(self.endpoint + path, self.timeout, headers=headers, opener=self._open)
        if answer.error is None:
            return answer.status, answer.body
        if answer.answered:
            # Something answers at the endpoint, but not as an HTTP server would: not the hub.
            raise HubError("hub %s: %s; model_prefetch_endpoint must be the ModelScope hub's URL (or a "
                           "mirror speaking its API), not another service" % (self.endpoint, answer.error),
                           "protocol")
        raise HubError("hub %s is unreachable (%s); check model_prefetch_endpoint and the "
                       "host's route/proxy to it" % (self.endpoint, answer.error), "unreachable")

    def list_files(self, model, revision):
        """(commit, files) of ``model`` at ``revision``; raises HubError naming the problem."""
        from urllib.parse import quote
        path = "/api/v1/models/%s/repo/files?Revision=%s&Recursive=True" % (
            quote(model, safe="/"), quote(revision, safe=""))
        status, text = self._get(path)
        if status != 200:
            raise hub_error_for(model, revision, self.endpoint, status, text, bool(self.token))
        try:
            body = json.loads(text)
        except ValueError:
            raise HubError("%s@%s: the hub %s answered non-JSON: %.200s"
                           % (model, revision, self.endpoint, text), "protocol")
        return parse_file_list(body, model, revision, self.endpoint)
