"""Stand-in ModelScope hub: a simulator for the ascendfleet.llm test fleet.

Speaks the subset of the ModelScope hub HTTP API that ``modelscope download`` (modelscope-hub
0.5.x behind modelscope 1.40.x) uses, so the real CLI downloads synthetic repos through it
with its own sha256 checks. See README.md in this directory for the protocol and sources.

    python3 server.py --port 8080 [--bind 0.0.0.0] [--config hub.json] [--state-dir DIR]

Control endpoints (JSON) live under /_sim/: stats, reset, faults, branches, repos, health.
Standard library only (runs on the sim hosts' Debian bookworm python3 3.11).
"""

import argparse
import hashlib
import hmac
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from repos import BLOCK, DigestCache, build_repos  # noqa: E402  (simulator-local module)

LOG_LIMIT = 1000
REPO_PATH = re.compile(r"^/api/v1/models/([^/]+)/([^/]+)(/.*)?$")
CDN_PATH = re.compile(r"^/cdn/([^/]+)/([^/]+)/([0-9a-f]{40})/(.+)$")
RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


class HubState:
    """Repos, digests, counters and armed faults; shared by all request threads."""

    def __init__(self, config, state_dir=None):
        self.config = config
        self.repos = build_repos(config)
        self.digests = DigestCache(state_dir)
        self.secret = uuid.uuid4().hex.encode()
        self.lock = threading.Lock()
        # API requests being answered: /_sim/stats waits (up to 1 s) for them to finish, so a
        # client that has read its last byte never sees a log that lags behind.
        self.in_flight = 0
        self.idle = threading.Condition(self.lock)
        self.lfs_redirect = bool(config.get("lfs_redirect", True))
        self.reset()

    # -- counters -------------------------------------------------------------------------
    def reset(self):
        with self.lock:
            self.bytes_total = 0
            self.models = {}
            self.requests = {}
            self.statuses = {}
            self.log = []
            self.faults = {
                "drop_after_bytes": {}, "bad_checksum": {}, "private": [], "token": None,
                "delay_ms": 0, "throttle_bytes_per_sec": 0, "unknown_revision": "empty",
            }
            self.drop_served = {}
            # Branches moved by POST /_sim/branches go back to where --config put them.
            for repo in self.repos.values():
                repo.branches = dict(getattr(repo, "configured_branches", None) or repo.branches)
                repo.configured_branches = dict(repo.branches)
            for key in ("private", "token", "unknown_revision"):
                if key in self.config:
                    self.faults[key] = self.config[key]

    def count_request(self, kind, model=None):
        with self.lock:
            self.requests[kind] = self.requests.get(kind, 0) + 1
            if model:
                entry = self._model_entry(model)
                entry["requests"][kind] = entry["requests"].get(kind, 0) + 1

    def _model_entry(self, model):
        return self.models.setdefault(model, {"bytes": 0, "files": {}, "requests": {}})

    def count_bytes(self, model, path, n):
        with self.lock:
            self.bytes_total += n
            entry = self._model_entry(model)
            entry["bytes"] += n
            entry["files"][path] = entry["files"].get(path, 0) + n

    def record(self, item):
        with self.lock:
            status = str(item.get("status"))
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.log.append(item)
            del self.log[:-LOG_LIMIT]

    def begin(self):
        with self.lock:
            self.in_flight += 1

    def end(self):
        with self.lock:
            self.in_flight -= 1
            if not self.in_flight:
                self.idle.notify_all()

    def stats(self, settle=1.0):
        with self.lock:
            self.idle.wait_for(lambda: self.in_flight == 0, timeout=settle)
            return json.loads(json.dumps({
                "bytes_total": self.bytes_total, "models": self.models, "requests": self.requests,
                "status": self.statuses, "log": self.log, "faults": self.public_faults(),
            }))

    # -- faults ---------------------------------------------------------------------------
    def public_faults(self):
        faults = dict(self.faults)
        faults["token"] = "<set>" if faults.get("token") else None
        return faults

    def set_faults(self, body):
        """Merge a fault request; raises ValueError naming the bad field and the fix."""
        if not isinstance(body, dict):
            raise ValueError("faults: expected a JSON object, e.g. {\"delay_ms\": 100}")
        known = {"drop_after_bytes", "bad_checksum_once", "bad_checksum", "private", "token",
                 "delay_ms", "throttle_bytes_per_sec", "unknown_revision", "clear"}
        unknown = sorted(set(body) - known)
        if unknown:
            raise ValueError("faults: unknown field(s) %s; known fields: %s"
                             % (", ".join(unknown), ", ".join(sorted(known))))
        with self.lock:
            if body.get("clear"):
                self.faults.update({"drop_after_bytes": {}, "bad_checksum": {}, "private": [],
                                    "token": None, "delay_ms": 0, "throttle_bytes_per_sec": 0,
                                    "unknown_revision": "empty"})
                self.drop_served = {}
            drops = body.get("drop_after_bytes") or {}
            if not isinstance(drops, dict):
                raise ValueError("drop_after_bytes: expected {\"Owner/Name[/file]\": bytes or "
                                 "{\"bytes\": N, \"times\": K}}")
            for key, spec in drops.items():
                spec = spec if isinstance(spec, dict) else {"bytes": spec}
                if not isinstance(spec.get("bytes"), int) or spec["bytes"] < 0:
                    raise ValueError("drop_after_bytes[%s]: bytes must be an integer >= 0" % key)
                self.faults["drop_after_bytes"][key] = {"bytes": spec["bytes"],
                                                        "times": int(spec.get("times", 1))}
                self.drop_served[key] = 0
            once = body.get("bad_checksum_once")
            if once is not None:
                for key in [once] if isinstance(once, str) else once:
                    self.faults["bad_checksum"][key] = self.faults["bad_checksum"].get(key, 0) + 1
            for key, times in (body.get("bad_checksum") or {}).items():
                self.faults["bad_checksum"][key] = int(times)
            if "private" in body:
                if not isinstance(body["private"], list):
                    raise ValueError("private: expected a list of \"Owner/Name\" model ids")
                self.faults["private"] = list(body["private"])
            if "token" in body:
                self.faults["token"] = body["token"] or None
            for key in ("delay_ms", "throttle_bytes_per_sec"):
                if key in body:
                    self.faults[key] = int(body[key])
            if "unknown_revision" in body:
                if body["unknown_revision"] not in ("empty", "404"):
                    raise ValueError("unknown_revision: expected \"empty\" (what the real hub's "
                                     "repo/files answers) or \"404\"")
                self.faults["unknown_revision"] = body["unknown_revision"]

    def take_bad_checksum(self, model, path):
        with self.lock:
            for key in (model + "/" + path, path):
                if self.faults["bad_checksum"].get(key, 0) > 0:
                    self.faults["bad_checksum"][key] -= 1
                    if not self.faults["bad_checksum"][key]:
                        del self.faults["bad_checksum"][key]
                    return True
        return False

    def drop_take(self, model, path, n):
        """How many of the next ``n`` bytes may go out, and whether to cut the connection then.

        Counted atomically per armed key ("Owner/Name/path" first, then "Owner/Name"), so the
        cut lands exactly N bytes after arming even when several files stream at once.
        """
        with self.lock:
            for key in (model + "/" + path, model):
                spec = self.faults["drop_after_bytes"].get(key)
                if not spec:
                    continue
                left = spec["bytes"] - self.drop_served.get(key, 0)
                if n < left:
                    self.drop_served[key] = self.drop_served.get(key, 0) + n
                    return n, False
                spec["times"] -= 1
                self.drop_served[key] = 0
                if spec["times"] <= 0:
                    del self.faults["drop_after_bytes"][key]
                return max(0, left), True
        return n, False

    def authorised(self, model, headers):
        if model not in self.faults["private"]:
            return True
        token = self.faults.get("token")
        if not token:
            return False
        offered = []
        auth = headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            offered.append(auth[7:].strip())
        for part in (headers.get("Cookie") or "").split(";"):
            name, _sep, value = part.strip().partition("=")
            if name == "m_session_id":
                offered.append(value)
        return any(hmac.compare_digest(o.encode(), token.encode()) for o in offered)

    def sign(self, path):
        return hmac.new(self.secret, path.encode(), hashlib.sha256).hexdigest()[:32]


class HubHandler(BaseHTTPRequestHandler):
    server_version = "ascendfleet-sim-hub/1"
    protocol_version = "HTTP/1.1"

    @property
    def state(self):
        return self.server.state

    def log_message(self, fmt, *args):  # quieter than the default: one line per request
        if self.server.verbose:
            sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    # -- helpers --------------------------------------------------------------------------
    def _send_json(self, status, obj, extra_headers=None):
        body = (json.dumps(obj, ensure_ascii=False) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra_headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return status, 0

    def _ok(self, data):
        return self._send_json(200, {"Code": 200, "Data": data, "Message": "success",
                                     "RequestId": self.request_id, "Success": True})

    def _error(self, status, code, message):
        # The hub's legacy error envelope (Code/Message/RequestId/Success), as the SDKs parse it.
        return self._send_json(status, {"Code": code, "Message": message,
                                        "RequestId": self.request_id, "Success": False})

    def _read_json(self):
        return json.loads(self.body or b"{}")

    # -- dispatch -------------------------------------------------------------------------
    def do_GET(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def _dispatch(self):
        self.request_id = str(uuid.uuid4())
        # Always consume a request body, or it would be parsed as the next keep-alive request.
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length > 0 else b""
        url = urlsplit(self.path)
        path = unquote(url.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        started = time.monotonic()
        entry = {"method": self.command, "path": url.path, "query": query,
                 "range": self.headers.get("Range"),
                 "auth": [kind for kind, present in (
                     ("bearer", (self.headers.get("Authorization") or "").startswith("Bearer ")),
                     ("cookie", "m_session_id=" in (self.headers.get("Cookie") or ""))) if present]}
        status, sent = 500, 0
        if path.startswith("/_sim/"):
            try:
                self._control(path)
            except ValueError as exc:
                self._send_json(400, {"error": str(exc)})
            return
        self.state.begin()
        try:
            delay = self.state.faults.get("delay_ms") or 0
            if delay:
                time.sleep(delay / 1000.0)
            status, sent = self._api(path, query, entry)
        except (BrokenPipeError, ConnectionResetError):
            status, sent = entry.get("status", "client-closed"), entry.get("sent", 0)
            self.close_connection = True
        finally:
            entry.update(status=entry.get("status", status), bytes=sent,
                         ms=int((time.monotonic() - started) * 1000))
            entry.pop("sent", None)
            self.state.record(entry)
            self.state.end()

    def _control(self, path):
        state = self.state
        if path == "/_sim/health":
            return self._send_json(200, {"ok": True})
        if path == "/_sim/stats" and self.command == "GET":
            return self._send_json(200, state.stats())
        if path == "/_sim/reset" and self.command == "POST":
            state.reset()
            return self._send_json(200, {"ok": True})
        if path == "/_sim/faults":
            if self.command == "POST":
                state.set_faults(self._read_json())
            return self._send_json(200, state.public_faults())
        if path == "/_sim/branches" and self.command == "POST":
            moves = self._read_json()
            with state.lock:
                for model_id, branches in (moves or {}).items():
                    repo = state.repos.get(model_id)
                    if repo is None or not isinstance(branches, dict):
                        raise ValueError("no model %r to move branches of (known: %s)"
                                         % (model_id, ", ".join(sorted(state.repos))))
                    for branch, target in branches.items():
                        commit = repo.resolve(target)
                        if commit is None:
                            raise ValueError("%s has no commit, tag or branch %r" % (model_id, target))
                        repo.branches[branch] = commit
            return self._send_json(200, {m: r.branches for m, r in state.repos.items()})
        if path == "/_sim/repos" and self.command == "GET":
            out = {}
            for model_id, repo in state.repos.items():
                out[model_id] = {
                    "private": model_id in state.faults["private"],
                    "branches": repo.branches, "tags": repo.tags,
                    "commits": {c: {p: {"size": f.size, "sha256": state.digests.sha256(f)}
                                    for p, f in files.items()}
                                for c, files in repo.commits.items()},
                }
            return self._send_json(200, out)
        return self._send_json(404, {"error": "unknown simulator control endpoint %s; known: "
                                     "/_sim/health, /_sim/stats, /_sim/reset (POST), "
                                     "/_sim/faults (GET/POST), /_sim/branches (POST), /_sim/repos" % path})

    def _api(self, path, query, entry):
        state = self.state
        if path == "/api/v1/repos/internalAccelerationInfo":
            state.count_request("internal_acceleration_info")
            # Off Alibaba Cloud there is no intranet route; the client treats any error as "none".
            return self._error(404, 404, "not found")
        cdn = CDN_PATH.match(path)
        if cdn:
            return self._cdn(cdn, query, entry)
        match = REPO_PATH.match(path)
        if not match:
            state.count_request("other")
            return self._error(404, 404, "Not Found: %s" % path)
        model = "%s/%s" % (match.group(1), match.group(2))
        rest = match.group(3) or ""
        entry["model"] = model
        repo = state.repos.get(model)
        kind = {"": "repo_info", "/repo/files": "repo_files", "/repo": "file",
                "/revisions": "revisions"}.get(rest, "other")
        state.count_request(kind, model if repo else None)
        if repo is None:
            return self._error(404, 10010205001, "模型不存在")
        if not state.authorised(model, self.headers):
            return self._error(401, 10010103001,
                               "Unauthorized: %s is private; log in with an access token that "
                               "can read it" % model)
        if kind == "repo_info":
            return self._ok(self._repo_info(repo))
        if kind == "revisions":
            return self._ok(self._revisions(repo))
        if kind == "repo_files":
            commit = repo.resolve(query.get("Revision"))
            if commit is None:
                if state.faults["unknown_revision"] == "404":
                    return self._error(404, 10010205001, "获取模型版本失败，信息：record not found")
                return self._ok({"Files": None})
            return self._ok({"Files": self._file_list(repo, commit, query)})
        if kind == "file":
            return self._file(repo, query, entry)
        return self._error(404, 404, "Not Found: %s" % path)

    # -- JSON bodies ----------------------------------------------------------------------
    def _repo_info(self, repo):
        owner, name = repo.model_id.split("/", 1)
        private = repo.model_id in self.state.faults["private"]
        return {"Id": int(hashlib.sha1(repo.model_id.encode()).hexdigest()[:6], 16), "Name": name, "Path": owner,
                "ChineseName": "", "Visibility": 1 if private else 5,
                "IsPublished": 1, "Tasks": [], "ModelType": [], "Revision": "master",
                "CreatedTime": min(repo.commit_times.values()),
                "LastUpdatedTime": max(repo.commit_times.values())}

    def _revisions(self, repo):
        def entry(name, commit):
            return {"Revision": name, "CommitId": commit, "CreatedAt": repo.commit_times[commit],
                    "CreatedBy": "ascendfleet-sim", "Description": ""}
        return {"RevisionMap": {
            "Branches": [entry(n, c) for n, c in sorted(repo.branches.items())],
            "Tags": [entry(n, c) for n, c in sorted(repo.tags.items(), reverse=True)],
        }}

    def _file_list(self, repo, commit, query):
        root = (query.get("Root") or "").strip("/")
        recursive = (query.get("Recursive") or "false").lower() == "true"
        files = []
        for path, sfile in sorted(repo.commits[commit].items()):
            if root and not path.startswith(root + "/"):
                continue
            rel = path[len(root) + 1:] if root else path
            if not recursive and "/" in rel:
                continue
            files.append({
                "CommitId": commit, "CommitMessage": "Upload %s" % path,
                "CommittedDate": repo.commit_times[commit], "CommitterName": "ascendfleet-sim",
                "Id": hashlib.sha1(("%s:%s" % (commit, path)).encode()).hexdigest(),
                "InCheck": False, "IsLFS": sfile.lfs, "Mode": "33188",
                "Name": path.rsplit("/", 1)[-1], "Path": path, "Revision": commit,
                "Sha256": self.state.digests.sha256(sfile), "Size": sfile.size, "Type": "blob",
            })
        return files

    # -- file bodies ----------------------------------------------------------------------
    def _file(self, repo, query, entry):
        commit = repo.resolve(query.get("Revision"))
        path = (query.get("FilePath") or "").lstrip("/")
        sfile = repo.commits[commit].get(path) if commit else None
        if sfile is None:
            return self._error(404, 10990101007, "获取模型文件失败，文件内容为空")
        owner, name = repo.model_id.split("/", 1)
        if sfile.lfs and self.state.lfs_redirect:
            # Large files are served by object storage: the hub answers with a signed redirect.
            target = "/cdn/%s/%s/%s/%s" % (owner, name, commit, quote(path))
            location = "%s?Expires=%d&Signature=%s" % (
                target, int(time.time()) + 3600, self.state.sign(target))
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return 302, 0
        # Files the hub serves itself (no redirect) ignore Range: always the whole file.
        return self._stream(repo.model_id, path, sfile, None, entry)

    def _cdn(self, match, query, entry):
        owner, name, commit, path = match.groups()
        model = "%s/%s" % (owner, name)
        entry["model"] = model
        self.state.count_request("cdn", model)
        target = "/cdn/%s/%s/%s/%s" % (owner, name, commit, quote(path))
        signature = query.get("Signature") or ""
        if not hmac.compare_digest(signature, self.state.sign(target)):
            return self._send_json(403, {"Code": "AccessDenied",
                                         "Message": "signature does not match"})
        repo = self.state.repos.get(model)
        sfile = repo.commits.get(commit, {}).get(path) if repo else None
        if sfile is None:
            return self._send_json(404, {"Code": "NoSuchKey", "Message": "object not found"})
        return self._stream(model, path, sfile, self.headers.get("Range"), entry)

    def _stream(self, model, path, sfile, range_header, entry):
        start, end, status = 0, sfile.size, 200
        if range_header:
            match = RANGE.match(range_header.strip())
            if match:
                start = int(match.group(1))
                if match.group(2):
                    end = min(sfile.size, int(match.group(2)) + 1)
                if start >= sfile.size or start >= end:
                    self.send_response(416)
                    self.send_header("Content-Range", "bytes */%d" % sfile.size)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return 416, 0
                status = 206
        corrupt = self.state.take_bad_checksum(model, path)
        entry.update(status=status, start=start, end=end, corrupt=corrupt)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, sfile.size))
        self.end_headers()
        if self.command == "HEAD":
            return status, 0
        throttle = self.state.faults.get("throttle_bytes_per_sec") or 0
        sent = 0
        for piece in sfile.iter_bytes(start, end, chunk=BLOCK if not throttle else 65536):
            if throttle:  # pace before sending, so the client cannot finish ahead of the rate
                time.sleep(len(piece) / float(throttle))
            if corrupt:
                piece = bytes([piece[0] ^ 0x5A]) + piece[1:]
            allowed, cut = self.state.drop_take(model, path, len(piece))
            if allowed:
                self._send_piece(model, path, piece[:allowed], entry)
                sent += allowed
            if cut:
                entry["dropped_after"] = sent
                self._abort()
                return status, sent
        return status, sent

    def _send_piece(self, model, path, piece, entry):
        """Write and count one piece. Counted first (and taken back if the write fails), so
        the counters never lag behind what a client has already received."""
        self.state.count_bytes(model, path, len(piece))
        try:
            self.wfile.write(piece)
        except OSError:
            self.state.count_bytes(model, path, -len(piece))
            raise
        entry["sent"] = entry.get("sent", 0) + len(piece)

    def _abort(self):
        """Cut the connection mid-body, as a network drop would."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class HubServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, state, verbose=False):
        super().__init__(address, HubHandler)
        self.state = state
        self.verbose = verbose


def load_config(path):
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as exc:
        raise SystemExit("hub config %s: %s; fix the file (JSON: {\"models\": {\"Owner/Name\": "
                         "{\"weights_bytes\": N, \"shards\": K}}})" % (path, exc))
    if not isinstance(config, dict):
        raise SystemExit("hub config %s: expected a JSON object at the top level" % path)
    return config


def main(argv=None):
    parser = argparse.ArgumentParser(description="Stand-in ModelScope hub (simulator).")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--config", help="JSON: models (weights_bytes, shards), private, token")
    parser.add_argument("--state-dir", help="directory for the persistent sha256 cache")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)

    config = load_config(args.config)
    try:
        state = HubState(config, state_dir=args.state_dir)
    except ValueError as exc:
        raise SystemExit(str(exc))
    began = time.monotonic()
    for repo in state.repos.values():  # hash everything before serving: listings must be fast
        for files in repo.commits.values():
            for sfile in files.values():
                state.digests.sha256(sfile)
    server = HubServer((args.bind, args.port), state, verbose=args.verbose)
    port = server.server_address[1]
    sys.stderr.write("ascendfleet-sim-hub: %d repos ready in %.1fs, listening on %s:%d\n"
                     % (len(state.repos), time.monotonic() - began, args.bind, port))
    sys.stderr.flush()
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
