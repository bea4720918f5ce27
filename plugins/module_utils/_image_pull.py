# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The progress of an image pull, read from the Docker Engine's own JSON messages.

PRIVATE to this collection; may change without notice. Standard library only (runs on hosts in the
module ascendfleet.llm.vllm_image_pull and on the controller in its waiting action, Python >= 3.8).

``POST /images/create`` (what ``docker pull`` calls) answers with one JSON object per line (Docker
Engine API, "Create an image"; tests/unit/plugins/module_utils/fixtures/image_pull/ holds lines
recorded from Docker 20.10, API 1.41)::

    {"status":"Pulling fs layer","progressDetail":{},"id":"92c9f86975d6"}
    {"status":"Downloading","progressDetail":{"current":261691,"total":24007513},"progress":"[>  ] ...","id":"92c9f86975d6"}
    {"status":"Download complete","progressDetail":{},"id":"92c9f86975d6"}
    {"status":"Extracting","progressDetail":{"current":262144,"total":24007513},...,"id":"92c9f86975d6"}
    {"status":"Pull complete","progressDetail":{},"id":"92c9f86975d6"}
    {"status":"Already exists","progressDetail":{},"id":"92c9f86975d6"}
    {"errorDetail":{"message":"unknown blob"},"error":"unknown blob"}

:class:`PullProgress` folds them into what an operator asks while 15 GB arrive: how many layers are
done of how many, how many bytes of how many, how fast, and how long still. A layer's size is only
known once its download starts (the daemon downloads three at a time), so the total is "at least"
until every layer has said its size.
"""

from __future__ import annotations

import base64
import json

# Layer states, in the order a layer goes through them.
WAITING, DOWNLOADING, DOWNLOADED, EXTRACTING, DONE, PRESENT = (
    "waiting", "downloading", "downloaded", "extracting", "done", "present")
_STATUS = {
    "pulling fs layer": WAITING,
    "waiting": WAITING,
    "downloading": DOWNLOADING,
    "verifying checksum": DOWNLOADED,
    "download complete": DOWNLOADED,
    "extracting": EXTRACTING,
    "pull complete": DONE,
    "already exists": PRESENT,
}
# How many seconds of samples the rate is averaged over.
RATE_WINDOW = 10.0


def split_reference(ref):
    """``(fromImage, tag)`` for the Engine API from an image reference, as the docker CLI splits it:
    ``repo:tag`` -> (``repo``, ``tag``); ``repo[:tag]@sha256:...`` -> (``repo``, ``sha256:...``) (a
    digest wins over a tag); ``repo`` -> (``repo``, ``latest``). A registry port (``host:5000/repo``)
    is not a tag."""
    name, _at, digest = ref.partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = None
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
    if digest:
        return name, digest
    return name, tag or "latest"


def registry_auth(username, password, registry):
    """The ``X-Registry-Auth`` header value (base64url of the JSON credentials) the Engine API takes."""
    data = json.dumps({"username": username, "password": password, "serveraddress": registry})
    return base64.urlsafe_b64encode(data.encode("utf-8")).decode("ascii")


def config_keys(registry):
    """The keys ``~/.docker/config.json`` may file a registry's login under (``docker login`` writes
    ``https://index.docker.io/v1/`` for Docker Hub, the bare host name for others)."""
    if registry in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        return ("https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io")
    return (registry, "https://" + registry, "http://" + registry)


def login_of(config, registry):
    """What the docker CLI's config says about ``registry``: ``("auth", username, password)`` from an
    ``auths`` entry, ``("helper", name)`` when a credential helper keeps it (``credHelpers`` or
    ``credsStore``), or None (pull anonymously). ``config`` is the parsed config.json."""
    if not isinstance(config, dict):
        return None
    keys = config_keys(registry)
    helpers = config.get("credHelpers") if isinstance(config.get("credHelpers"), dict) else {}
    for key in keys:
        if helpers.get(key):
            return ("helper", helpers[key])
    auths = config.get("auths") if isinstance(config.get("auths"), dict) else {}
    for key in keys:
        entry = auths.get(key)
        if isinstance(entry, dict) and entry.get("auth"):
            try:
                user, _sep, password = base64.b64decode(entry["auth"]).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                continue
            return ("auth", user, password)
        if isinstance(entry, dict) and config.get("credsStore"):
            return ("helper", config["credsStore"])
    return None


def _human(size):
    """Bytes as Docker prints them (decimal units): 24007513 -> '24.0 MB'."""
    size = float(size or 0)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return ("%d %s" % (size, unit)) if unit == "B" else ("%.1f %s" % (size, unit))
        size /= 1000.0
    return "%.1f TB" % size  # not reached


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds >= 3600:
        return "%dh%02dm" % (seconds // 3600, seconds % 3600 // 60)
    if seconds >= 60:
        return "%dm%02ds" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


class PullProgress(object):
    """The state of one pull, fed the Engine API's messages in order (``feed``), read with ``snapshot``."""

    def __init__(self):
        self.layers = {}   # id -> {"state", "current", "total"}
        self.order = []
        self.status = None  # the last line without a layer id ("Digest: ...", "Status: ...")
        self.error = None
        self.up_to_date = False
        self.samples = []  # (time, bytes downloaded)

    def feed(self, message):
        """Take one message (a dict, or a JSON line). Returns the daemon's error text when the
        message is an error, else None."""
        if isinstance(message, (bytes, str)):
            text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
            if not text.strip():
                return None
            try:
                message = json.loads(text)
            except ValueError:
                self.status = text.strip()
                return None
        if not isinstance(message, dict):
            return None
        if message.get("error") or message.get("errorDetail"):
            detail = message.get("errorDetail") or {}
            self.error = str(detail.get("message") or message.get("error"))
            return self.error
        status = str(message.get("status") or "")
        layer = message.get("id")
        state = _STATUS.get(status.lower())
        if layer and state is not None:
            entry = self.layers.get(layer)
            if entry is None:
                entry = self.layers[layer] = {"state": WAITING, "current": 0, "total": None}
                self.order.append(layer)
            detail = message.get("progressDetail") or {}
            total = detail.get("total")
            if state == DOWNLOADING:
                if isinstance(total, int) and total > 0:
                    entry["total"] = total
                if isinstance(detail.get("current"), int):
                    entry["current"] = detail["current"]
            elif state == EXTRACTING and isinstance(total, int) and total > 0 and entry["total"] is None:
                entry["total"] = total  # downloaded in one go, never reported a size before
            if state in (DOWNLOADED, EXTRACTING, DONE) and entry["total"]:
                entry["current"] = entry["total"]
            entry["state"] = state
        elif status:
            self.status = status
            if status.startswith("Status: Image is up to date"):
                self.up_to_date = True
        return None

    def downloaded(self):
        """Bytes downloaded so far, over the layers that had to be downloaded."""
        return sum(e["current"] for e in self.layers.values() if e["state"] != PRESENT)

    def sample(self, now):
        """Note the bytes downloaded at time ``now`` (seconds); keeps RATE_WINDOW seconds of samples."""
        self.samples.append((now, self.downloaded()))
        while len(self.samples) > 2 and now - self.samples[1][0] >= RATE_WINDOW:
            self.samples.pop(0)

    def rate(self):
        """Bytes per second over the samples kept, or None before two samples."""
        if len(self.samples) < 2:
            return None
        (t0, b0), (t1, b1) = self.samples[0], self.samples[-1]
        if t1 <= t0:
            return None
        return max(0.0, (b1 - b0) / (t1 - t0))

    def snapshot(self):
        """What the progress file holds: counts, bytes, rate and the last status (JSON-able)."""
        fetch = [e for e in self.layers.values() if e["state"] != PRESENT]
        return {
            "layers": len(self.layers),
            "layers_done": sum(1 for e in self.layers.values() if e["state"] in (DONE, PRESENT)),
            "layers_present": sum(1 for e in self.layers.values() if e["state"] == PRESENT),
            "layers_downloading": sum(1 for e in fetch if e["state"] == DOWNLOADING),
            "layers_extracting": sum(1 for e in fetch if e["state"] == EXTRACTING),
            "layers_sized": sum(1 for e in fetch if e["total"]),
            "layers_to_fetch": len(fetch),
            "bytes_done": self.downloaded(),
            "bytes_total": sum(e["total"] or 0 for e in fetch),
            "rate": self.rate(),
            "status": self.status,
            "error": self.error,
            "up_to_date": self.up_to_date,
        }


def describe(snap, elapsed=None):
    """One line for the operator from a snapshot: '7/12 layers, 4.1 GB of 14.8 GB (28%), 52.3 MB/s,
    about 3m30s left'. Before the daemon has listed the layers: 'resolving the manifest'."""
    if not snap:
        return "starting"
    if snap.get("error"):
        return "failed: %s" % snap["error"]
    if not snap.get("layers"):
        return "up to date" if snap.get("up_to_date") else "resolving the manifest"
    parts = ["%d/%d layers" % (snap["layers_done"], snap["layers"])]
    if snap.get("layers_present"):
        parts[0] += " (%d already on the host)" % snap["layers_present"]
    done, total = snap.get("bytes_done") or 0, snap.get("bytes_total") or 0
    all_sized = snap.get("layers_sized", 0) >= snap.get("layers_to_fetch", 0)
    if snap.get("layers_to_fetch"):
        if total and all_sized:
            parts.append("%s of %s (%d%%)" % (_human(done), _human(total), int(100 * done / total)))
        elif total:
            parts.append("%s of at least %s (%d of %d layers sized)" % (
                _human(done), _human(total), snap["layers_sized"], snap["layers_to_fetch"]))
        else:
            parts.append("%s" % _human(done))
    rate = snap.get("rate")
    if rate is not None and done < total:
        parts.append("%s/s" % _human(rate))
        if rate > 0 and all_sized:
            parts.append("about %s left" % _duration((total - done) / rate))
    if snap.get("layers_extracting"):
        parts.append("extracting %d" % snap["layers_extracting"])
    if elapsed is not None:
        parts.append("%s elapsed" % _duration(elapsed))
    return ", ".join(parts)
