"""Test harness for the stand-in ModelScope hub (a simulator): start it, talk to it, run the CLI.

Used by tests/sim/test_hub_*.py and usable by other simulator tests (e.g. model_prefetch's).
Standard library only; real processes and real HTTP on 127.0.0.1.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HUB_DIR = pathlib.Path(__file__).resolve().parent
SERVER = HUB_DIR / "server.py"
BUILD_WHEELHOUSE = HUB_DIR / "build-wheelhouse.sh"
# Never route loopback traffic through a proxy a developer may have configured.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_RAW_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


class Hub:
    """A running ``server.py`` subprocess on a free loopback port."""

    def __init__(self, config=None, workdir=None):
        self._tmp = tempfile.TemporaryDirectory(prefix="ascendfleet-sim-hub-")
        work = pathlib.Path(workdir or self._tmp.name)
        port_file = work / "port"
        cmd = [sys.executable, str(SERVER), "--bind", "127.0.0.1", "--port", "0",
               "--port-file", str(port_file)]
        if config is not None:
            config_file = work / "hub.json"
            config_file.write_text(json.dumps(config))
            cmd += ["--config", str(config_file)]
        self.log_path = work / "hub.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("stand-in hub did not start: %s" % self.log_path.read_text())
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        self._tmp.cleanup()

    # -- HTTP -----------------------------------------------------------------------------
    def request(self, path, method="GET", body=None, headers=None, follow=True):
        """(status, headers, body bytes) for a request; HTTP errors are returned, not raised."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers=dict(headers or {}))
        if data is not None:
            req.add_header("Content-Type", "application/json")
        opener = _OPENER if follow else _RAW_OPENER
        try:
            with opener.open(req, timeout=30) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    def json(self, path, method="GET", body=None, headers=None):
        status, _headers, raw = self.request(path, method, body, headers)
        return status, json.loads(raw)

    def stats(self):
        return self.json("/_sim/stats")[1]

    def reset(self):
        self.json("/_sim/reset", "POST", {})

    def faults(self, **faults):
        status, body = self.json("/_sim/faults", "POST", faults)
        if status != 200:
            raise AssertionError("hub refused faults %r: %r" % (faults, body))
        return body

    def files(self, model, revision="master"):
        """The hub's file list for a revision, as {path: entry}."""
        status, body = self.json("/api/v1/models/%s/repo/files?Revision=%s&Recursive=True"
                                 % (model, revision))
        assert status == 200, body
        return {f["Path"]: f for f in body["Data"]["Files"] or []}


def modelscope_cli():
    """Path of the real ``modelscope`` CLI, from the venv build-wheelhouse.sh installs offline.

    Runs the script (a no-op when its stamp matches, ~0.3 s), so a fresh checkout builds the
    wheelhouse once (needs the Python package index; ~25 s) and every later run reuses it.
    """
    # The interpreter running pytest has pip (the project venv); a bare python3 may not.
    env = dict(os.environ, PYTHON=os.environ.get("PYTHON", sys.executable))
    proc = subprocess.run([str(BUILD_WHEELHOUSE)], capture_output=True, text=True, check=False,
                          env=env)
    if proc.returncode != 0:
        raise RuntimeError("tests/sim/hub/build-wheelhouse.sh failed (exit %d):\n%s%s"
                           % (proc.returncode, proc.stdout, proc.stderr))
    venv = [line.split("=", 1)[1] for line in proc.stdout.splitlines() if line.startswith("venv=")]
    cli = pathlib.Path(venv[-1]) / "bin" / "modelscope"
    if not cli.exists():
        raise RuntimeError("build-wheelhouse.sh reported venv %s but %s is missing" % (venv, cli))
    return cli


def cli_env(hub, home, **extra):
    """Environment for the real CLI against ``hub``: endpoint set, private dirs, no token."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MODELSCOPE_") and k.lower() not in ("http_proxy", "https_proxy")}
    env.update({
        "HOME": str(home),
        "MODELSCOPE_ENDPOINT": hub.url,
        "MODELSCOPE_CACHE": str(pathlib.Path(home) / "cache"),
        "MODELSCOPE_HOME": str(pathlib.Path(home) / "config"),
        "MODELSCOPE_DOWNLOAD_INTRA_CLOUD": "false",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    })
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_download(cli, hub, home, model, local_dir, revision=None, timeout=120, **env):
    """Run ``modelscope download --model MODEL [--revision R] --local-dir DIR``."""
    cmd = [str(cli), "download", "--model", model, "--local-dir", str(local_dir)]
    if revision:
        cmd[4:4] = ["--revision", revision]
    return subprocess.run(cmd, env=cli_env(hub, home, **env), capture_output=True, text=True,
                          timeout=timeout, check=False)
