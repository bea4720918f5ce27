"""Bounded OpenAI chat load for the gateway section: a few worker threads send chat requests (every
``stream_every``-th one streaming) to one base URL, each worker at most one request per ``pace``
seconds, until stop() or ``budget`` requests in all or ``max_seconds``, whichever comes first; every
request has a ``timeout``. latency() times requests one at a time, through the gateway and straight
to the hosts, interleaved.
Answers are judged by chat.py; sample times are time.time(), as in poller.py.
"""

import http.client
import threading
import time
import urllib.parse

from benchlib import chat


def send(url, body, timeout):
    """POST ``body`` to ``url`` (http only) on a new connection; ``(status, body bytes, error)``:
    status None when no status line came; error the exception's class and text, or None."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    status, got = None, []
    try:
        conn.request("POST", parts.path, body=body, headers={"Content-Type": "application/json", "Connection": "close"})
        resp = conn.getresponse()
        status = resp.status
        while True:
            block = resp.read1(65536)
            if not block:
                break
            got.append(block)
        return status, b"".join(got), None
    except (OSError, http.client.HTTPException) as exc:
        return status, b"".join(got), type(exc).__name__
    finally:
        conn.close()


def one(url, model, index, stream, timeout):
    """Send chat request ``index`` to ``<url>/chat/completions``; its answer record."""
    t0 = time.time()
    m0 = time.monotonic()
    status, body, error = send(url + "/chat/completions", chat.request_body(model, index, stream), timeout)
    verdict, reason = chat.judge(stream, status, body, error)
    return {"t": t0, "seconds": time.monotonic() - m0, "stream": stream, "status": status,
            "verdict": verdict, "reason": reason}


class ChatLoad:
    def __init__(self, url, model, workers=4, budget=3000, pace=0.2, stream_every=3, timeout=30.0, max_seconds=600.0):
        """``url``: a base URL ending in /v1 (the gateway's)."""
        if workers < 1 or budget < 1 or pace <= 0 or stream_every < 1 or max_seconds <= 0:
            raise ValueError("chat load: workers, budget and stream_every must be >= 1, pace and max_seconds > 0")
        self.url = url
        self.model = model
        self.workers = workers
        self.budget = budget
        self.pace = pace
        self.stream_every = stream_every
        self.timeout = timeout
        self.max_seconds = max_seconds
        self.answers = []
        self._next = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = []
        self._deadline = None

    def _take(self):
        with self._lock:
            if self._next >= self.budget or time.monotonic() >= self._deadline:
                return None
            self._next += 1
            return self._next - 1

    def _loop(self):
        while not self._stop.is_set():
            t0 = time.monotonic()
            index = self._take()
            if index is None:
                return
            answer = one(self.url, self.model, index, index % self.stream_every == 0, self.timeout)
            with self._lock:
                self.answers.append(answer)
            self._stop.wait(max(0.0, self.pace - (time.monotonic() - t0)))

    def start(self):
        self._deadline = time.monotonic() + self.max_seconds
        for _ in range(self.workers):
            thread = threading.Thread(target=self._loop, daemon=True)
            thread.start()
            self._threads.append(thread)

    def running(self):
        """Whether a worker is still sending (False once the budget or the time is used up)."""
        return any(t.is_alive() for t in self._threads)

    def stop(self):
        """Stop sending, wait for the requests in flight (each bounded by ``timeout``); the answers
        in the order they were sent."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.timeout + 1)
        with self._lock:
            return sorted(self.answers, key=lambda a: a["t"])


def latency(gateway_url, direct_urls, model, rounds, timeout=30.0):
    """Non-streaming chat requests one at a time, ``rounds`` rounds of two: one through the gateway,
    one straight to a host (``direct_urls`` in turn), the order swapped every round so that neither
    always goes first. ``{"gateway": [answer, ...], "direct": [answer, ...]}``."""
    out = {"gateway": [], "direct": []}
    for r in range(rounds):
        pair = [("gateway", gateway_url), ("direct", direct_urls[r % len(direct_urls)])]
        for name, url in pair if r % 2 == 0 else pair[::-1]:
            out[name].append(one(url, model, r, False, timeout))
    return out
