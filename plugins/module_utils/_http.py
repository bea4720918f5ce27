# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""One HTTP request whose every failure is an answer, never an exception.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
managed hosts, Python >= 3.8); imports no other module_utils.

Every HTTP call of the collection goes through :func:`request`: the health gate and the smoke
tests (``vllm_gate``), the status probe (``vllm_status``) and the hub's file list
(``_modelscope.HubClient``). Whatever sits on the port - nothing, a vLLM that is starting, an
sshd, a proxy that accepts and drops, a server that closes mid-body - comes back as an
:class:`Answer`: an HTTP status and body, or ``error``, a message naming the host, the port,
the request and what came back (``127.0.0.1 port 8000 answers, but not HTTP: BadStatusLine
'SSH-2.0-OpenSSH_9.6'``). :func:`json_body` does the same for a body that must be JSON.

The caller brings the transport (``opener``): the modules pass Ansible's ``open_url``, the
hub client its urllib opener; the default is urllib without proxies or redirects.
"""

from __future__ import annotations

import http.client
import json
import socket
import zlib
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import HTTPRedirectHandler, ProxyHandler, Request, build_opener

# How much of a foreign answer a message quotes.
EXCERPT = 120


class Answer(object):
    """What one request got back.

    ``status``: the HTTP status of a complete answer (2xx and error statuses alike), else None.
    ``body``: its text (UTF-8, undecodable bytes replaced); "" when there is none.
    ``error``: None for a complete HTTP answer, else what went wrong, naming host, port and request.
    ``answered``: something on the port sent bytes back (an HTTP status, or bytes that are not HTTP);
    False when nothing listens, nothing answers in time, or the connection closes with no byte.
    """

    __slots__ = ("url", "method", "status", "body", "error", "answered")

    def __init__(self, url, method, status=None, body="", error=None, answered=False):
        self.url = url
        self.method = method
        self.status = status
        self.body = body
        self.error = error
        self.answered = answered

    @property
    def ok(self):
        """A complete HTTP 200."""
        return self.error is None and self.status == 200

    def __repr__(self):
        return "Answer(%s %s: status=%r, error=%r, answered=%r)" % (
            self.method, self.url, self.status, self.error, self.answered)


def where(url):
    # type: (str) -> str
    """``127.0.0.1 port 8000`` for ``http://127.0.0.1:8000/health`` (the default port of the scheme if none)."""
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        host = parts.hostname or "?"
    except ValueError:
        return repr(url)
    return "%s port %s" % (host, port) if port else host


def _target(url, method):
    try:
        path = urlsplit(url).path or "/"
    except ValueError:
        path = url
    return "%s %s" % (method, path)


def _excerpt(raw):
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    text = str(raw).strip()
    return repr(text[:EXCERPT] + ("..." if len(text) > EXCERPT else ""))


def _is_timeout(exc):
    return isinstance(exc, (socket.timeout, TimeoutError))


class _NoRedirect(HTTPRedirectHandler):
    """A redirect is an answer (an HTTPError with the 3xx status), not a second request."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def urllib_opener(url, data, headers, timeout, method):
    """The default transport: urllib, no proxies (the endpoints are on the host), no redirects."""
    opener = build_opener(ProxyHandler({}), _NoRedirect())
    return opener.open(Request(url, data=data, headers=headers, method=method), timeout=timeout)


def _read_error_body(exc):
    """The body of an HTTP error answer, or "" when it cannot be read (a broken error answer is still its status)."""
    try:
        return (exc.read() or b"").decode("utf-8", "replace")
    except (http.client.HTTPException, OSError, ValueError, AttributeError, EOFError, zlib.error):
        return ""


def request(url, timeout, headers=None, data=None, method=None, opener=None):
    """Send one request (a POST of ``data`` bytes when given) and read the whole answer; never raises
    for what the network or the other end does.

    ``opener(url, data, headers, timeout, method)`` returns a response (``getcode()``, ``read()``,
    ``close()``) or raises what urllib raises; default :func:`urllib_opener`.
    """
    method = method or ("POST" if data is not None else "GET")
    opener = opener or urllib_opener
    at = where(url)
    what = _target(url, method)
    answer = Answer(url, method)
    status = None
    try:
        response = opener(url, data, dict(headers or {}), timeout, method)
        try:
            status = response.getcode()
            raw = response.read()
        finally:
            response.close()
        answer.status, answer.body, answer.answered = status, raw.decode("utf-8", "replace"), True
        return answer
    except HTTPError as exc:
        # An HTTP answer with an error (or 3xx) status: a complete answer as far as the caller is concerned.
        answer.status, answer.body, answer.answered = exc.code, _read_error_body(exc), True
        return answer
    except URLError as exc:
        # urllib wraps what goes wrong before the request is sent: resolving, connecting, TLS.
        reason = exc.reason
        if isinstance(reason, ConnectionRefusedError):
            answer.error = "nothing listens on %s (connection refused)" % at
        elif _is_timeout(reason):
            answer.error = "%s did not accept a connection within %s s" % (at, timeout)
        else:
            answer.error = "%s cannot be reached (%s)" % (at, reason)
        return answer
    except http.client.RemoteDisconnected:
        # Before BadStatusLine and ConnectionError: it is both. Not a byte came back.
        answer.error = ("%s accepted the connection and closed it without an answer to %s (not an HTTP "
                        "server, or one that is going down)" % (at, what))
        return answer
    except http.client.IncompleteRead as exc:
        expected = ("%d of %d" % (len(exc.partial), len(exc.partial) + exc.expected)
                    if exc.expected is not None else "%d" % len(exc.partial))
        answer.answered = True
        answer.error = ("%s answered HTTP %s to %s, but closed the connection after %s bytes of the body "
                        "(IncompleteRead)" % (at, status, what, expected))
        return answer
    except http.client.LineTooLong as exc:
        answer.answered = True
        answer.error = "%s answers, but not HTTP: LineTooLong (%s) to %s" % (at, exc, what)
        return answer
    except http.client.BadStatusLine as exc:
        answer.answered = True
        answer.error = "%s answers, but not HTTP: BadStatusLine %s to %s" % (at, _excerpt(exc.line), what)
        return answer
    except http.client.HTTPException as exc:
        answer.answered = True
        answer.error = "%s answers, but not valid HTTP: %s %s to %s" % (
            at, type(exc).__name__, _excerpt(exc), what)
        return answer
    except (EOFError, zlib.error) as exc:
        # A compressed body that does not decompress (a transport that decodes Content-Encoding).
        answer.answered = True
        answer.error = "%s answered HTTP %s to %s with a body that does not decode (%s: %s)" % (
            at, status, what, type(exc).__name__, exc)
        return answer
    except OSError as exc:
        if _is_timeout(exc):
            answer.error = "%s accepted the connection but did not answer %s within %s s" % (at, what, timeout)
        elif isinstance(exc, ConnectionError):
            answer.error = "%s closed the connection during %s (%s)" % (at, what, exc)
        else:
            answer.error = "%s cannot be reached (%s)" % (at, exc)
        return answer
    except ValueError as exc:
        # A URL http.client or urllib refuses (http.client.InvalidURL is a ValueError).
        answer.error = "cannot request %r: %s" % (url, exc)
        return answer


def json_body(answer):
    """(parsed JSON, None) of a complete answer, or (None, why not) naming host, port and request."""
    if answer.error is not None:
        return None, answer.error
    try:
        return json.loads(answer.body), None
    except ValueError:
        return None, "%s answered HTTP %s to %s, but not JSON: %s" % (
            where(answer.url), answer.status, _target(answer.url, answer.method), _excerpt(answer.body))
