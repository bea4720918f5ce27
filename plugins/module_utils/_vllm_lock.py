# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The rollout lock of a vllm_compose deployment: one run at a time changes a deployment.

PRIVATE to this collection; may change without notice. Standard library only (runs on hosts,
Python >= 3.8, and on the control node).

A run holds ``<project_root>/.locks/<name>.lock`` on a host from before the cards to after
last-known-good is recorded (or restored): the file holds the holder as JSON - the control node,
the pid of its ``ansible-playbook``, a token of that process (boot id and start time, so a reused
pid is not taken for the holder), the user, since when, and what it does. An empty file is a free
lock: a release truncates the file instead of removing it, so two runs never hold two files of one
name. Reads and writes of the file are serialized by an ``fcntl.flock`` held for the few
microseconds of the read-modify-write (the ledger's way), not for the rollout: the rollout spans
many module runs, so the lock is the file's content, released by the run or taken over from a run
that is gone.

Host side: :func:`acquire`, :func:`release`. Control-node side: :func:`holder_of_this_run`,
:func:`holder_gone` (a holder on this control node whose process has ended), :func:`busy_message`.
"""

from __future__ import annotations

import fcntl
import json
import os
import time

LOCK_DIR = ".locks"
FILE_MODE = 0o644
DIR_MODE = 0o755
# What makes two holders the same run.
IDENTITY = ("controller", "pid", "token")


def lock_path(project_root, name):
    """The lock file of deployment ``name`` under ``project_root``."""
    return os.path.join(project_root, LOCK_DIR, "%s.lock" % name)


def same_holder(a, b):
    """Whether holders ``a`` and ``b`` are the same run (control node, pid and process token)."""
    if not a or not b:
        return False
    return all(str(a.get(k)) == str(b.get(k)) for k in IDENTITY)


def decide(current, holder, take_over=None):
    """What a run that wants the lock does, given the ``current`` holder (``{}``: free).

    Returns ``"acquire"`` (free, or ``take_over`` names the current holder: a run that is gone),
    ``"held"`` (this run holds it already) or ``"busy"`` (another run holds it)."""
    if not current:
        return "acquire"
    if same_holder(current, holder):
        return "held"
    if take_over and same_holder(current, take_over):
        return "acquire"
    return "busy"


def _parse(data):
    try:
        value = json.loads(data.decode("utf-8")) if data.strip() else {}
    except ValueError:
        # Not ours to read (a truncated write cannot happen under the flock): treat as held by
        # an unknown run, never as free.
        return {"controller": "?", "pid": "?", "token": "?", "what": "unreadable lock file"}
    return value if isinstance(value, dict) else {"controller": "?", "pid": "?", "token": "?"}


class _Locked(object):
    """The lock file opened (created with its directory when ``create``) under an exclusive flock."""

    def __init__(self, path, create):
        self.path = path
        self.create = create
        self.fd = None

    def __enter__(self):
        if self.create:
            directory = os.path.dirname(self.path)
            if not os.path.isdir(directory):
                os.makedirs(directory, DIR_MODE)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        else:
            try:
                self.fd = os.open(self.path, os.O_RDWR)
            except FileNotFoundError:
                return self
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def read(self):
        if self.fd is None:
            return {}
        os.lseek(self.fd, 0, os.SEEK_SET)
        chunks = []
        while True:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        return _parse(b"".join(chunks))

    def write(self, holder):
        data = (json.dumps(holder, sort_keys=True) + "\n").encode("utf-8") if holder else b""
        os.ftruncate(self.fd, 0)
        os.lseek(self.fd, 0, os.SEEK_SET)
        if data:
            os.write(self.fd, data)
        os.fsync(self.fd)

    def __exit__(self, *exc):
        if self.fd is not None:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
        return False


def acquire(path, holder, take_over=None, check_mode=False):
    """Try once to take the lock at ``path`` for ``holder``; never waits (the control node does).

    Returns ``{"acquired", "holder", "took_over"}``: ``holder`` is who holds the lock afterwards
    (the current holder when busy), ``took_over`` the holder replaced (a run that is gone) or None.
    In check mode nothing is written (and ``acquired`` is False)."""
    if check_mode and not os.path.exists(path):
        return {"acquired": False, "holder": {}, "took_over": None}
    with _Locked(path, create=not check_mode) as lock:
        current = lock.read()
        verdict = decide(current, holder, take_over)
        if verdict == "busy" or check_mode:
            return {"acquired": False, "holder": current, "took_over": None}
        if verdict == "held":
            return {"acquired": True, "holder": current, "took_over": None}
        lock.write(holder)
        return {"acquired": True, "holder": holder, "took_over": current or None}


def release(path, holder, check_mode=False):
    """Give the lock at ``path`` up if ``holder`` holds it; another run's lock is left alone.

    Returns ``{"released", "holder"}``: whether this run's lock was given up, and the holder
    found (``{}``: free)."""
    with _Locked(path, create=False) as lock:
        current = lock.read()
        if not same_holder(current, holder):
            return {"released": False, "holder": current}
        if not check_mode:
            lock.write({})
        return {"released": True, "holder": current}


# -- control node ---------------------------------------------------------------------------
def process_token(pid, proc="/proc"):
    """A token that tells process ``pid`` from a later one given the same pid (boot id and start
    time, from ``/proc``), or None where ``/proc`` does not say (the process is gone, or no /proc)."""
    try:
        with open(os.path.join(proc, str(pid), "stat"), "rb") as handle:
            stat = handle.read().decode("utf-8", "replace")
        with open(os.path.join(proc, "sys", "kernel", "random", "boot_id"), "rb") as handle:
            boot = handle.read().decode("utf-8", "replace").strip()
    except (OSError, IOError):
        return None
    # Field 22 (starttime) counts after the command in parentheses, which may hold spaces.
    fields = stat[stat.rfind(")") + 2:].split()
    if len(fields) < 20:
        return None
    return "%s:%s" % (boot, fields[19])


def holder_of_this_run(controller, pid, user, what, proc="/proc", now=None):
    """The holder a run on ``controller`` (its ``ansible-playbook`` process ``pid``) writes."""
    return {
        "controller": controller,
        "pid": int(pid),
        "token": process_token(pid, proc) or "",
        "user": user,
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "what": what,
    }


def holder_gone(holder, controller, proc="/proc", kill=os.kill):
    """Whether ``holder`` is a run of this ``controller`` whose process has ended (its lock may be
    taken over). A holder on another control node is never judged gone from here."""
    if not holder or str(holder.get("controller")) != str(controller):
        return False
    try:
        pid = int(holder.get("pid"))
    except (TypeError, ValueError):
        return False
    if pid <= 0:
        return False
    token = process_token(pid, proc)
    if token is not None and holder.get("token"):
        return token != holder.get("token")
    try:
        kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    # Alive, and no /proc to tell it from a reused pid.
    return False


def describe(holder):
    """``control node X, pid N, user U, since T (what)`` of a holder."""
    return "control node %s, pid %s, user %s, since %s (%s)" % (
        holder.get("controller", "?"), holder.get("pid", "?"), holder.get("user", "?"),
        holder.get("since", "?"), holder.get("what") or "?")


def busy_message(host, name, path, holder, waited):
    """The error of a run that waited ``waited`` seconds for the lock ``holder`` keeps."""
    return ("%s: deployment %s is being changed by another run: %s. Waited %d s for it "
            "(vllm_compose_lock_timeout); nothing of the deployment was changed by this run. Fix: let "
            "that run finish, then re-run (or raise vllm_compose_lock_timeout to wait for it); if that run "
            "is gone for good (its control node lost), empty the lock file %s on %s and re-run"
            % (host, name, describe(holder), int(waited), path, host))
