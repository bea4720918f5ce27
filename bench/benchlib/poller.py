"""A client that polls every endpoint of the fleet during a rollout: one thread per endpoint,
GET <url>/models every ``interval`` seconds with a ``timeout``; a sample is good when the answer
is HTTP 200. Sample times are time.time(), to line up with the containers' own timestamps. The
analysis (outages, capacity) is in metrics.py.
"""

import threading
import time
import urllib.error
import urllib.request


class Poller:
    def __init__(self, endpoints, interval=0.25, timeout=2.0):
        """``endpoints``: {name: base url ending in /v1}."""
        self.endpoints = dict(endpoints)
        self.interval = interval
        self.timeout = timeout
        self.samples = {name: [] for name in self.endpoints}
        self._stop = threading.Event()
        self._threads = []

    def _probe(self, url):
        try:
            with urllib.request.urlopen(url + "/models", timeout=self.timeout) as resp:
                resp.read()
                return resp.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def _loop(self, name, url):
        while not self._stop.is_set():
            t0 = time.monotonic()
            ok = self._probe(url)
            self.samples[name].append((time.time(), ok))
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - t0)))

    def start(self):
        for name, url in self.endpoints.items():
            thread = threading.Thread(target=self._loop, args=(name, url), daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.timeout + 1)
        return self.samples
