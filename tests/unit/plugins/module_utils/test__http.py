# -*- coding: utf-8 -*-
"""_http.request against real loopback TCP servers that answer like what can hold a planned port:
vLLM, an sshd, a server breaking off mid-body, one that closes at once, one that never answers.
Every one is an Answer naming the host, the port and what came back; none raises."""

import socket

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._http import json_body, request, where

from .raw_tcp import close_at_once, garbage, http_answer, routes, short_body, silent


def url(server, path="/health"):
    return "http://127.0.0.1:%d%s" % (server.port, path)


def free_port():
    """A port nothing listens on: bound, then closed (connects are refused on loopback)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_vllm_answer(raw_server):
    server = raw_server(routes({"/v1/models": ("200 OK", '{"object": "list", "data": []}')}))
    answer = request(url(server, "/v1/models"), 3, headers={"Authorization": "Bearer k"})
    assert (answer.status, answer.error, answer.answered, answer.ok) == (200, None, True, True)
    assert json_body(answer) == ({"object": "list", "data": []}, None)
    assert server.requests[0][:2] == ("GET", "/v1/models")


def test_an_http_error_status_is_an_answer(raw_server):
    server = raw_server(routes({}, default=("503 Service Unavailable", "starting")))
    answer = request(url(server), 3)
    assert (answer.status, answer.body, answer.error, answer.answered, answer.ok) == (503, "starting", None, True, False)


def test_a_post_sends_its_data(raw_server):
    server = raw_server(routes({"/v1/chat/completions": ("200 OK", "{}")}))
    answer = request(url(server, "/v1/chat/completions"), 3, data=b'{"x": 1}',
                     headers={"Content-Type": "application/json"})
    assert answer.ok
    assert server.requests == [("POST", "/v1/chat/completions", b'{"x": 1}')]


# (a) bytes that are not HTTP
def test_an_sshd_on_the_port_answers_but_not_http(raw_server):
    server = raw_server(garbage())
    answer = request(url(server), 3)
    assert answer.status is None and answer.answered and not answer.ok
    assert answer.error == ("127.0.0.1 port %d answers, but not HTTP: BadStatusLine "
                            "'SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5' to GET /health" % server.port)


def test_binary_garbage_is_quoted_not_raised(raw_server):
    server = raw_server(garbage(b"\x00\x15\x03\x03\x00\x02\x02\x50"))  # a TLS alert: a TLS-only port
    answer = request(url(server), 3)
    assert answer.answered and answer.status is None
    assert answer.error.startswith("127.0.0.1 port %d answers, but not HTTP: BadStatusLine '" % server.port)


def test_a_status_line_that_never_ends_is_too_long(raw_server):
    server = raw_server(garbage(b"A" * 70000))
    answer = request(url(server), 3)
    assert answer.answered and answer.status is None
    assert answer.error == ("127.0.0.1 port %d answers, but not HTTP: LineTooLong (got more than 65536 bytes "
                            "when reading status line) to GET /health" % server.port)


def test_more_headers_than_http_client_takes(raw_server):
    headers = "".join("X-H%d: v\r\n" % i for i in range(120))
    server = raw_server(garbage(http_answer("200 OK", "{}", extra=headers)))
    answer = request(url(server), 3)
    assert answer.answered and answer.status is None
    assert answer.error == ("127.0.0.1 port %d answers, but not valid HTTP: HTTPException 'got more than 100 "
                            "headers' to GET /health" % server.port)


# (b) a valid status line, a Content-Length larger than the body, then close
def test_a_body_cut_short_is_an_incomplete_read(raw_server):
    server = raw_server(short_body(length=4096))
    answer = request(url(server, "/v1/models"), 3)
    assert answer.answered and answer.status is None and not answer.ok
    assert answer.error == ("127.0.0.1 port %d answered HTTP 200 to GET /v1/models, but closed the connection "
                            "after 22 of 4096 bytes of the body (IncompleteRead)" % server.port)
    assert json_body(answer) == (None, answer.error)


def test_an_error_status_with_a_body_cut_short_keeps_its_status(raw_server):
    server = raw_server(short_body("500 Internal Server Error", "Traceback (most", length=4096))
    answer = request(url(server), 3)
    assert (answer.status, answer.body, answer.error, answer.answered) == (500, "", None, True)


# (c) accept and close
def test_accept_and_close_after_the_request_is_no_answer(raw_server):
    server = raw_server(close_at_once)
    answer = request(url(server), 3)
    assert answer.status is None and not answer.answered
    assert answer.error == ("127.0.0.1 port %d accepted the connection and closed it without an answer to "
                            "GET /health (not an HTTP server, or one that is going down)" % server.port)


def test_accept_and_close_at_once_is_no_answer(raw_server):
    # Closed before the request is read: the client sees the close or a reset, by timing.
    server = raw_server(close_at_once, read_first=False)
    answer = request(url(server), 3)
    assert answer.status is None and not answer.answered
    assert answer.error.startswith(("127.0.0.1 port %d accepted the connection and closed it without an answer"
                                    % server.port, "127.0.0.1 port %d closed the connection during GET /health ("
                                    % server.port)), answer.error


# (d) HTTP 200, but not the JSON it should be
def test_a_200_that_is_not_json(raw_server):
    page = "<html><body>Welcome to nginx!</body></html>"
    server = raw_server(routes({"/v1/models": ("200 OK", page, "text/html")}))
    answer = request(url(server, "/v1/models"), 3)
    assert answer.ok and answer.body == page
    assert json_body(answer) == (None, "127.0.0.1 port %d answered HTTP 200 to GET /v1/models, but not JSON: %r"
                                 % (server.port, page))


def test_a_listener_that_never_answers_times_out(raw_server):
    server = raw_server(silent)
    answer = request(url(server), 0.5)
    assert answer.status is None and not answer.answered
    assert answer.error == ("127.0.0.1 port %d accepted the connection but did not answer GET /health within 0.5 s"
                            % server.port)


def test_nothing_listening_is_refused():
    port = free_port()
    answer = request("http://127.0.0.1:%d/health" % port, 3)
    assert (answer.status, answer.answered) == (None, False)
    assert answer.error == "nothing listens on 127.0.0.1 port %d (connection refused)" % port


@pytest.mark.parametrize("bad", ["http://127.0.0.1:99999/health", "http://[::1/x", "ftp-ish://"])
def test_a_url_that_cannot_be_requested(bad):
    answer = request(bad, 1)
    assert answer.status is None and not answer.answered and answer.error


def test_the_transport_is_the_callers():
    def opener(url_, data, headers, timeout, method):
        raise ConnectionResetError(104, "Connection reset by peer")
    answer = request("http://10.0.0.7:8000/metrics", 2, opener=opener)
    assert answer.error == ("10.0.0.7 port 8000 closed the connection during GET /metrics "
                            "([Errno 104] Connection reset by peer)")


@pytest.mark.parametrize("text, expected", [
    ("http://127.0.0.1:8000/health", "127.0.0.1 port 8000"),
    ("https://www.modelscope.cn/api/v1", "www.modelscope.cn port 443"),
    ("http://hub.local/api", "hub.local port 80"),
])
def test_where(text, expected):
    assert where(text) == expected
