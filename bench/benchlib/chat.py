"""The OpenAI chat requests of the gateway section, how each answer is judged, and the gateway's
server states from HAProxy's Prometheus endpoint (pure: standard library only; tested in
tests/unit/bench/). The client that sends them is load.py.

An answer is one of:
- ``ok``: HTTP 200 and a complete completion: a JSON body whose first choice has a
  ``finish_reason``; for a stream, server-sent events of JSON chunks, one with a ``finish_reason``,
  ending with ``data: [DONE]``;
- ``failed``: no answer (connection refused or reset before a status line, a timeout) or a status
  other than 200 (a 502/503 of the gateway, a 503 of a vLLM shutting down);
- ``truncated``: HTTP 200, but the body stops before the end (no ``data: [DONE]``, no
  ``finish_reason``, a JSON body cut short, the connection broken while reading it).
"""

import json
import re

# haproxy_server_status{proxy="<pool>",server="<server>",state="<STATE>"} 1|0: one line per state,
# 1 on the server's current one (HAProxy 2.4 on).
SERVER_STATUS = re.compile(r'^haproxy_server_status\{proxy="([^"]*)",server="([^"]*)",state="([A-Z]+)"\}\s+1(?:\.0+)?\s*$', re.M)

OK, FAILED, TRUNCATED = "ok", "failed", "truncated"


def request_body(model, index, stream, max_tokens=8):
    """The JSON body (bytes) of chat request number ``index``."""
    return json.dumps({
        "model": model,
        "messages": [{"role": "user", "content": "bench request %d: say hello" % index}],
        "max_tokens": max_tokens,
        "stream": bool(stream),
    }).encode()


def _finish(obj):
    """The first non-null finish_reason of a completion or chunk object, else None."""
    for choice in (obj.get("choices") or []) if isinstance(obj, dict) else []:
        if isinstance(choice, dict) and choice.get("finish_reason"):
            return choice["finish_reason"]
    return None


def sse_events(text):
    """The ``data:`` payloads of a server-sent-events body, in order (one per event; the lines of
    a multi-line event joined with a newline, as the SSE spec says). An event not yet ended by
    its blank line is left out: it may be cut."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n")[:-1]:
        data = [line[5:].lstrip(" ") if line.startswith("data:") else None for line in block.split("\n")]
        data = [d for d in data if d is not None]
        if data:
            events.append("\n".join(data))
    return events


def judge(stream, status, body, error=None):
    """``(verdict, reason)`` of one answer: ``status`` the HTTP status (None: no status line came),
    ``body`` the bytes read, ``error`` what broke the exchange (text, e.g. the exception's class) or
    None. The reasons carry no counts, so equal causes tally together."""
    if status is None:
        return FAILED, "no answer: %s" % (error or "no status line")
    if status != 200:
        return FAILED, "HTTP %d" % status
    text = body.decode("utf-8", errors="replace")
    if error:
        return TRUNCATED, "broken while reading the body: %s" % error
    if not stream:
        try:
            obj = json.loads(text)
        except ValueError:
            return TRUNCATED, "body is not complete JSON"
        if not _finish(obj):
            return TRUNCATED, "no finish_reason"
        return OK, ""
    events = sse_events(text)
    if not events or events[-1] != "[DONE]":
        return TRUNCATED, "stream without its final data: [DONE]"
    finished = False
    for data in events[:-1]:
        try:
            chunk = json.loads(data)
        except ValueError:
            return TRUNCATED, "a stream event is not JSON"
        finished = finished or _finish(chunk) is not None
    if not finished:
        return TRUNCATED, "stream without a finish_reason"
    return OK, ""


def tally(answers):
    """Counts of ``[{"stream", "verdict", "reason"}, ...]``: sent, ok, failed, truncated, streams
    sent, and the reasons of the bad ones, most frequent first."""
    out = {"sent": len(answers), OK: 0, FAILED: 0, TRUNCATED: 0, "streams": 0}
    reasons = {}
    for a in answers:
        out[a["verdict"]] += 1
        out["streams"] += 1 if a["stream"] else 0
        if a["verdict"] != OK:
            key = "%s: %s" % (a["verdict"], a["reason"])
            reasons[key] = reasons.get(key, 0) + 1
    out["bad"] = out[FAILED] + out[TRUNCATED]
    out["reasons"] = sorted(([k, v] for k, v in reasons.items()), key=lambda kv: (-kv[1], kv[0]))
    return out


def server_states(text):
    """``{(pool, server): state}`` (UP, DOWN, MAINT, DRAIN, NOLB) from the text of HAProxy's
    Prometheus endpoint."""
    return {(m.group(1), m.group(2)): m.group(3) for m in SERVER_STATUS.finditer(text)}
