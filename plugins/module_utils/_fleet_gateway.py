# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The fleet's gateway (HAProxy in front of every deployment): pools, names, runtime API.

PRIVATE to this collection; may change without notice.

Standard library only; runs on the control node (the ``fleet_gateway_*`` filters) and on the
gateway hosts (module ``fleet_gateway_server``), so it keeps to Python 3.8.

* :func:`pools` turns one record per Ascend server (host, the address the gateway reaches it
  at, its ``ascendfleet_deployments``) into HAProxy pools: one per served model name, one server
  per deployment that serves the API (a multi-node deployment only on its head, the first of
  its ``members``). Names are HAProxy-safe and stable; every string that reaches the
  configuration is quoted here (:func:`quote`), so the template only places values.
* :func:`models_list` is the ``/v1/models`` answer the gateway returns itself: the union of the
  served names, in vLLM's shape.
* :func:`server_name` is the one rule that names a deployment's server in every pool, used by the
  configuration and by the drain (``tasks_from: drain``) alike.
* :func:`parse_stat` and :func:`parse_servers_state` read the runtime API's ``show stat`` (CSV)
  and ``show servers state`` answers; :func:`server_view` joins them into each server's state
  (``up``, ``draining``, ``down``, ``maint``) and current sessions. :class:`RuntimeApi` speaks
  to HAProxy's stats socket (one command per connection, its non-interactive mode).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re
import socket
import time

# vLLM's default port (``vllm serve --port``), the one vllm_compose uses when none is set.
VLLM_DEFAULT_PORT = 8000

# HAProxy accepts letters, digits, '-', '_', '.' and ':' in proxy and server names.
_NAME_OK = re.compile(r"[A-Za-z0-9_.:-]+")
_NAME_BAD_CHAR = re.compile(r"[^A-Za-z0-9_.:-]")

# The runtime API's state names (``set server <b>/<s> state <x>``) and the role's names for them.
ADMIN_STATES = ("ready", "drain", "maint")
# show servers state: srv_admin_state bits (include/haproxy/server-t.h, enum srv_admin).
ADMIN_FMAINT = 0x01
ADMIN_IMAINT = 0x02
ADMIN_CMAINT = 0x04
ADMIN_FDRAIN = 0x08
ADMIN_IDRAIN = 0x10
ADMIN_RMAINT = 0x20
ADMIN_HMAINT = 0x40
ADMIN_MAINT = ADMIN_FMAINT | ADMIN_IMAINT | ADMIN_CMAINT | ADMIN_RMAINT | ADMIN_HMAINT
ADMIN_DRAIN = ADMIN_FDRAIN | ADMIN_IDRAIN
# show servers state: srv_op_state (enum srv_state): 0 stopped, 1 starting, 2 running, 3 stopping.
OP_STATES = {0: "stopped", 1: "starting", 2: "running", 3: "stopping"}


class GatewayError(ValueError):
    """Input or an answer the gateway cannot use, with the fix."""


# --------------------------------------------------------------------------- quoting and names


def quote(value):
    # type: (object) -> str
    """One HAProxy configuration word holding ``value`` exactly.

    Single quotes when the value has none (nothing inside is interpreted: no escapes, no
    environment variables); otherwise double quotes with ``\\``, ``"``, ``$`` and ``'`` escaped.
    Control characters cannot be written in a configuration word and are refused.
    """
    text = str(value)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise GatewayError("%r holds a control character, which HAProxy's configuration cannot carry" % text)
    if "'" not in text:
        return "'%s'" % text
    return '"%s"' % re.sub(r'([\\"$\'#])', r"\\\1", text)


def _safe_name(text, what):
    # type: (str, str) -> str
    """``text`` as an HAProxy name: kept when it is one, else its bad characters become '_'
    and a short hash of the original keeps two different texts apart."""
    if not text:
        raise GatewayError("%s is empty" % what)
    if _NAME_OK.fullmatch(text):
        return text
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return "%s-%s" % (_NAME_BAD_CHAR.sub("_", text)[:48], digest)


def server_name(host, deployment):
    # type: (str, str) -> str
    """The name of a deployment's server in every pool and on every gateway: ``<host>:<deployment>``."""
    return _safe_name("%s:%s" % (host, deployment), "server name")


def backend_name(served_model_name):
    # type: (str) -> str
    """The pool (HAProxy backend) of a served model name: ``model:<name>``."""
    return _safe_name("model:%s" % served_model_name, "backend name")


# --------------------------------------------------------------------------- pools


def _port(value, where):
    # type: (object, str) -> int
    if isinstance(value, bool):
        raise GatewayError("%s: port %r is not a port number. Fix: set an integer 1-65535" % (where, value))
    try:
        port = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise GatewayError("%s: port %r is not a port number. Fix: set an integer 1-65535" % (where, value)) from None
    if not 1 <= port <= 65535:
        raise GatewayError("%s: port %r is not a port number. Fix: set an integer 1-65535" % (where, value))
    return port


def _address(address):
    # type: (str) -> str
    address = str(address)
    if ":" in address and not address.startswith("["):
        return "[%s]" % address  # IPv6 literal
    return address


def check_body(served_model_name, prompt="ping"):
    # type: (str, str) -> str
    """The health check's request body: a completion of at most one token for this model.

    JSON with every non-ASCII character and the single quote escaped, so it is one
    single-quoted HAProxy word whatever the served name holds.
    """
    body = json.dumps({"model": served_model_name, "prompt": prompt, "max_tokens": 1}, ensure_ascii=True,
                      separators=(",", ":"))
    return body.replace("'", "\\u0027")


def pools(records, check_prompt="ping"):
    # type: (list, str) -> list
    """The gateway's pools from one record per Ascend server.

    Each record: ``host`` (inventory name), ``address`` (what the gateway connects to) and
    ``deployments`` (the host's ``ascendfleet_deployments``). Deployments with ``state: absent``
    and members of a multi-node deployment other than its head (``members[0]``) serve no API and
    are left out; items that are not mappings with a ``name`` are left out too (the deployment
    input checks report them).

    Returns the pools sorted by served name: ``model`` (the served name), ``backend`` (its
    HAProxy name), ``model_word`` (the name quoted for the configuration), ``check_body`` (the
    health check's body with ``check_prompt``, quoted) and ``servers`` (``name``, ``host``, ``deployment``,
    ``address``, ``port``), sorted by server name. Two deployments on one address and port, or two
    records of one host, raise GatewayError.
    """
    by_model = {}  # type: dict
    seen_hosts = set()
    endpoints = {}  # type: dict
    names = {}  # type: dict
    for record in records or []:
        if not isinstance(record, dict) or not record.get("host"):
            raise GatewayError("a host record has no host name: %r" % (record,))
        host = str(record["host"])
        if host in seen_hosts:
            raise GatewayError("host %s is listed twice. Fix: list each host once" % host)
        seen_hosts.add(host)
        address = str(record.get("address") or host)
        deployments = record.get("deployments") or []
        if not isinstance(deployments, list):
            raise GatewayError("%s: ascendfleet_deployments is a %s, not a list. Fix: give a list of deployments"
                               % (host, type(deployments).__name__))
        for dep in deployments:
            if not isinstance(dep, dict) or not dep.get("name") or dep.get("state", "present") == "absent":
                continue
            members = dep.get("members")
            if isinstance(members, list) and members and members[0] != host:
                continue  # a member without the API (--headless); its head serves the deployment
            name = str(dep["name"])
            where = "%s: deployment %s" % (host, name)
            served = dep.get("served_model_name") or dep.get("model")
            if not served:
                raise GatewayError("%s: neither served_model_name nor model is set. Fix: set model" % where)
            port = _port(VLLM_DEFAULT_PORT if dep.get("port") is None else dep["port"], where)
            endpoint = (address, port)
            if endpoint in endpoints:
                raise GatewayError("%s and %s both serve on %s port %d. Fix: give each deployment of a host its own "
                                   "port" % (endpoints[endpoint], where, address, port))
            endpoints[endpoint] = where
            srv = server_name(host, name)
            if srv in names:
                raise GatewayError("%s and %s get the same server name %s. Fix: rename one deployment"
                                   % (names[srv], where, srv))
            names[srv] = where
            by_model.setdefault(str(served), []).append({
                "name": srv, "host": host, "deployment": name, "address": _address(address), "port": port})
    result = []
    backends = {}  # type: dict
    for model in sorted(by_model):
        backend = backend_name(model)
        if backend in backends:
            raise GatewayError("served names %r and %r get the same pool name %s. Fix: rename one"
                               % (backends[backend], model, backend))
        backends[backend] = model
        result.append({
            "model": model,
            "backend": backend,
            "model_word": quote(model),
            "check_body": quote(check_body(model, check_prompt)),
            "servers": sorted(by_model[model], key=lambda s: s["name"]),
        })
    return result


def models_list(pool_list, created=0):
    # type: (list, int) -> dict
    """The gateway's own ``GET /v1/models`` answer: every served name of the fleet, in vLLM's shape.

    ``created`` is fixed (not the time of the run), so re-rendering changes nothing.
    """
    return {"object": "list", "data": [
        {"id": p["model"], "object": "model", "created": int(created), "owned_by": "vllm", "root": p["model"],
         "parent": None} for p in pool_list]}


# --------------------------------------------------------------------------- runtime API answers


def parse_stat(text):
    # type: (str) -> list
    """``show stat`` (CSV, header ``# pxname,svname,...``) -> one dict per line, keyed by the header."""
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines or not lines[0].startswith("# pxname,svname,"):
        raise GatewayError("not a 'show stat' answer (no '# pxname,svname,' header): %r" % (text or "")[:200])
    header = lines[0][2:].rstrip(",").split(",")
    rows = []
    for line in lines[1:]:
        values = line.split(",")
        if len(values) < len(header):
            raise GatewayError("'show stat' line with %d fields, the header has %d: %r" % (len(values), len(header), line))
        rows.append(dict(zip(header, values)))
    return rows


def parse_servers_state(text):
    # type: (str) -> list
    """``show servers state`` (format version 1) -> one dict per server, keyed by the header.

    ``srv_op_state`` and ``srv_admin_state`` are returned as integers.
    """
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines or lines[0].strip() != "1":
        raise GatewayError("not a 'show servers state' answer of format 1: %r" % (text or "")[:200])
    if len(lines) < 2 or not lines[1].startswith("# be_id be_name srv_id srv_name"):
        raise GatewayError("'show servers state' without its '# be_id be_name srv_id srv_name' header: %r"
                           % (text or "")[:200])
    header = lines[1][2:].split()
    rows = []
    for line in lines[2:]:
        if line.startswith("#"):
            continue
        values = line.split()
        if len(values) < len(header):
            raise GatewayError("'show servers state' line with %d fields, the header has %d: %r"
                               % (len(values), len(header), line))
        row = dict(zip(header, values))
        for key in ("srv_op_state", "srv_admin_state"):
            try:
                row[key] = int(row[key])
            except (KeyError, ValueError):
                raise GatewayError("'show servers state': %s of %s/%s is %r, not a number"
                                   % (key, row.get("be_name"), row.get("srv_name"), row.get(key))) from None
        rows.append(row)
    return rows


def state_name(op_state, admin_state):
    # type: (int, int) -> str
    """A server's state in the role's words: ``maint``, ``down``, ``draining`` or ``up``.

    Maintenance first (no traffic at all), then the health checks' verdict (stopped = down;
    starting, running and stopping still take traffic), then drain (only the sessions it has).
    """
    if admin_state & ADMIN_MAINT:
        return "maint"
    if op_state == 0:
        return "down"
    if admin_state & ADMIN_DRAIN:
        return "draining"
    return "up"


def admin_name(admin_state):
    # type: (int) -> str
    """What ``set server ... state`` last made of the server: ``maint``, ``drain`` or ``ready``."""
    if admin_state & ADMIN_MAINT:
        return "maint"
    if admin_state & ADMIN_DRAIN:
        return "drain"
    return "ready"


def server_view(stat_rows, state_rows, server=None, backends=None):
    # type: (list, list, object, object) -> list
    """Each server (of ``server``, in ``backends``, or all) with its state and current sessions.

    ``stat_rows`` from :func:`parse_stat`, ``state_rows`` from :func:`parse_servers_state`.
    Returns dicts ``backend``, ``server``, ``state`` (:func:`state_name`), ``admin``
    (:func:`admin_name`), ``status`` (show stat's own words, e.g. ``UP``, ``DRAIN``,
    ``DOWN 1/2``), ``check`` (the last check's status and detail) and ``sessions`` (current),
    sorted by backend and server.
    """
    stats = {}
    for row in stat_rows:
        if row.get("svname") in ("FRONTEND", "BACKEND"):
            continue
        stats[(row.get("pxname"), row.get("svname"))] = row
    wanted_backends = set(backends) if backends else None
    result = []
    for row in state_rows:
        key = (row.get("be_name"), row.get("srv_name"))
        if server is not None and key[1] != server:
            continue
        if wanted_backends is not None and key[0] not in wanted_backends:
            continue
        stat = stats.get(key, {})
        try:
            sessions = int(stat.get("scur") or 0)
        except ValueError:
            raise GatewayError("'show stat': scur of %s/%s is %r, not a number" % (key[0], key[1], stat.get("scur"))) from None
        check = " ".join(x for x in (stat.get("check_status", ""), stat.get("check_desc", "")) if x)
        lastchg = str(stat.get("lastchg") or "")
        result.append({
            "backend": key[0],
            "server": key[1],
            "state": state_name(row["srv_op_state"], row["srv_admin_state"]),
            "admin": admin_name(row["srv_admin_state"]),
            "status": stat.get("status", ""),
            "check": check,
            "sessions": sessions,
            "last_change": int(lastchg) if lastchg.isdigit() else 0,
        })
    result.sort(key=lambda r: (r["backend"], r["server"]))
    return result


def plan_states(view, wanted):
    # type: (list, str) -> list
    """The ``set server <backend>/<server> state <wanted>`` commands that change anything."""
    if wanted not in ADMIN_STATES:
        raise GatewayError("state %r: Fix: use one of %s" % (wanted, ", ".join(ADMIN_STATES)))
    return ["set server %s/%s state %s" % (s["backend"], s["server"], wanted) for s in view if s["admin"] != wanted]


# --------------------------------------------------------------------------- the socket


class RuntimeApi(object):
    """HAProxy's runtime API on its UNIX stats socket: one command per connection."""

    def __init__(self, path, timeout=10.0, connect=None):
        # connect(path, timeout) -> a connected socket; replaceable in tests.
        self.path = path
        self.timeout = timeout
        self._connect = connect or self._unix

    @staticmethod
    def _unix(path, timeout):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except Exception:
            sock.close()
            raise
        return sock

    def command(self, line):
        # type: (str) -> str
        """Send one command, return the whole answer; an unreachable socket raises GatewayError."""
        try:
            sock = self._connect(self.path, self.timeout)
        except (OSError, socket.timeout) as exc:
            raise GatewayError("cannot reach HAProxy's runtime API at %s (%s). Fix: run playbooks/gateway.yml on "
                               "this gateway, and check that its container runs (docker compose ps)"
                               % (self.path, getattr(exc, "strerror", None) or exc)) from None
        chunks = []
        try:
            sock.sendall(line.encode("utf-8") + b"\n")
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except (OSError, socket.timeout) as exc:
            raise GatewayError("HAProxy's runtime API at %s broke off the answer to %r (%s)" % (self.path, line, exc)) from None
        finally:
            sock.close()
        return b"".join(chunks).decode("utf-8", "replace")

    def view(self, server=None, backends=None):
        # type: (object, object) -> list
        return server_view(parse_stat(self.command("show stat")), parse_servers_state(self.command("show servers state")),
                           server=server, backends=backends)

    def set_state(self, command):
        # type: (str) -> None
        answer = self.command(command).strip()
        if answer:  # the runtime API answers a successful 'set server' with an empty line
            raise GatewayError("HAProxy refused %r: %s" % (command, answer))


def wait_until(api, server, done, backends=None, timeout=300.0, interval=1.0, clock=time.monotonic, sleep=time.sleep):
    # type: (RuntimeApi, str, object, object, float, float, object, object) -> tuple
    """Poll the view of ``server`` until ``done(view)`` holds, or ``timeout`` passes.

    Returns ``(view, waited_seconds, done)``.
    """
    start = clock()
    while True:
        view = api.view(server=server, backends=backends)
        waited = clock() - start
        if done(view):
            return view, waited, True
        if waited >= timeout:
            return view, waited, False
        sleep(min(interval, max(timeout - waited, 0.05)))


def no_sessions(view):
    # type: (list) -> bool
    """Drained: no server row has a current session."""
    return all(s["sessions"] == 0 for s in view)


def all_up(view):
    # type: (list) -> bool
    """Back: every server row takes new requests (its health checks pass)."""
    return all(s["state"] == "up" for s in view)


def wait_sessions(api, server, backends=None, timeout=300.0, interval=1.0, clock=time.monotonic, sleep=time.sleep):
    # type: (RuntimeApi, str, object, float, float, object, object) -> tuple
    """:func:`wait_until` every server row of ``server`` has no current session."""
    return wait_until(api, server, no_sessions, backends, timeout, interval, clock, sleep)
