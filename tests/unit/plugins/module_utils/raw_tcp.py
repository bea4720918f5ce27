# -*- coding: utf-8 -*-
"""Loopback TCP servers that answer like what can sit on a planned port: an HTTP server, or
something that is not one (an sshd, a server that breaks off mid-body, one that closes at once).

Every server is bounded: it binds 127.0.0.1 port 0, serves at most ``count`` connections within
``lifetime`` seconds, reads and writes with a ``timeout``, and stops at ``close()`` (the
``raw_server`` fixture of ``tests/unit/plugins/conftest.py`` closes it after the test).
"""

import socket
import threading
import time


def read_request(conn, limit=1 << 16):
    """(method, path, body) of the HTTP request on ``conn`` (headers up to ``limit`` bytes)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < limit:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    head, dummy, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    length = 0
    for line in lines[1:]:
        name, dummy, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = min(int(value.strip() or 0), limit)
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            break
        body += chunk
    return (parts[0] if parts else "", parts[1] if len(parts) > 1 else "", body)


def http_answer(status, body, content_type="application/json", length=None, extra=""):
    """Bytes of an HTTP/1.1 answer; ``length`` overrides the Content-Length (a lie makes an IncompleteRead)."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    return (("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n"
             % (status, content_type, len(data) if length is None else length, extra)).encode("ascii") + data)


class RawServer(object):
    """``reply(conn, request, stop)`` answers each connection; ``request`` is (method, path, body) or
    None when ``read_first`` is False (the reply runs as soon as the connection is accepted)."""

    def __init__(self, reply, read_first=True, count=20, timeout=3.0, lifetime=30.0):
        self.reply, self.read_first, self.count, self.timeout = reply, read_first, count, timeout
        self.requests = []
        self.stop = threading.Event()
        self.deadline = time.monotonic() + lifetime
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        served = 0
        while served < self.count and not self.stop.is_set() and time.monotonic() < self.deadline:
            try:
                conn, dummy = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            served += 1
            with conn:
                conn.settimeout(self.timeout)
                try:
                    request = read_request(conn) if self.read_first else None
                    if request is not None:
                        self.requests.append(request)
                    self.reply(conn, request, self.stop)
                except OSError:
                    pass  # the client gave up first (its timeout, or it stopped reading)

    def close(self):
        self.stop.set()
        self.thread.join(self.timeout + 1)
        self.sock.close()


# -- replies: what can sit on the port ----------------------------------------------------

SSH_BANNER = b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5\r\n"


def garbage(data=SSH_BANNER):
    """Answer bytes that are not HTTP (by default an sshd's banner), then close."""
    def reply(conn, request, stop):
        conn.sendall(data)
    return reply


def short_body(status="200 OK", body='{"object": "list", "da', length=4096):
    """A valid status line and a Content-Length larger than the body, then close (IncompleteRead)."""
    def reply(conn, request, stop):
        conn.sendall(http_answer(status, body, length=length))
    return reply


def close_at_once(conn, request, stop):
    """Accept (and read the request when read_first), answer nothing, close (RemoteDisconnected)."""


def silent(conn, request, stop):
    """Accept and read the request, then answer nothing until the client gives up or the server stops."""
    stop.wait(5)


def routes(table, default=("404 Not Found", "")):
    """Answer by request path: {path: reply} where a reply is a callable or (status, body[, content type])."""
    def reply(conn, request, stop):
        answer = table.get(request[1], default)
        if callable(answer):
            return answer(conn, request, stop)
        conn.sendall(http_answer(*answer))
    return reply
