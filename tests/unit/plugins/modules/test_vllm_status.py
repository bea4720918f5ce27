# -*- coding: utf-8 -*-
"""ascendfleet.llm.vllm_status through its real entry point: fake npu-smi and docker (real
captured output), a ledger, a last-known-good record, a model cache and a /proc tree in a
temporary directory, and a real HTTP server on 127.0.0.1 answering like vLLM."""

import hashlib
import http.server
import json
import os
import threading

import pytest

from ansible_collections.ascendfleet.llm.plugins.modules import vllm_status

from ..module_utils.raw_tcp import close_at_once, garbage, routes, short_body
from .conftest import FAKE_NPU_SMI, HERE

FAKE_DOCKER = os.path.join(HERE, "fixtures", "fake-docker-status")
INSPECT = os.path.join(HERE, os.pardir, "module_utils", "fixtures", "vllm_status")
PROJECT = "operator-fixture-qwen"
CONTAINER = "b3bb40e09f217d27c60ef754cc17e0dbfbbb67c4b8630934b1aae59ec8114cb8"
METRICS = (
    "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    'vllm:num_requests_running{engine="0",model_name="Qwen"} 2.0\n'
    'vllm:num_requests_waiting{engine="0",model_name="Qwen"} 1.0\n'
    'vllm:kv_cache_usage_perc{engine="0",model_name="Qwen"} 0.25\n'
)


class Vllm(http.server.BaseHTTPRequestHandler):
    key = ""
    seen = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Vllm.seen.append((self.path, self.headers.get("Authorization")))
        if Vllm.key and self.headers.get("Authorization") != "Bearer " + Vllm.key:
            return self._reply(401, "application/json", '{"error": "Unauthorized"}')
        if self.path == "/health":
            return self._reply(200, "text/plain", "")
        if self.path == "/v1/models":
            return self._reply(200, "application/json", json.dumps({"object": "list", "data": [{"id": "Qwen"}]}))
        if self.path == "/metrics":
            return self._reply(200, "text/plain; version=0.0.4", METRICS)
        return self._reply(404, "text/plain", "not found")

    def _reply(self, code, ctype, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def vllm():
    Vllm.key, Vllm.seen = "", []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Vllm)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w") as handle:
        handle.write(text)


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A host tree: ledger, last-good, model cache with marker, /proc with uptime and a cgroup."""
    monkeypatch.setenv("FAKE_DOCKER_INSPECT", os.path.join(INSPECT, "docker-inspect-20.10.24-compose-running.json"))
    _write(tmp_path / "ledger.json", json.dumps({"version": 1, "assignments": {PROJECT: [4, 5]}}))
    _write(tmp_path / "opt" / PROJECT / "compose.yaml", "name: x\n")
    _write(tmp_path / "opt" / PROJECT / "last-good" / "compose.yaml", "name: x\n")
    _write(tmp_path / "opt" / PROJECT / "last-good" / "state.json",
           json.dumps({"image": "ascendfleet-sim/base:latest", "port": 8000, "device_ids": [4, 5]}))
    model = tmp_path / "cache" / "models" / "Qwen" / "Qwen3.5-27B"
    manifest = json.dumps({"revision": "master", "files": []})
    _write(model / ".ascendfleet" / "manifest.json", manifest)
    _write(model / ".ascendfleet" / "complete", json.dumps(
        {"model": "Qwen/Qwen3.5-27B", "revision": "master", "manifest_sha256": hashlib.sha256(manifest.encode()).hexdigest()}))
    _write(model / "config.json", json.dumps({"model_type": "qwen3_5", "vision_config": {"depth": 27}}))
    _write(model / "model.safetensors", "x" * 10)
    _write(tmp_path / "proc" / "uptime", "350735.47 234388.90\n")
    # The seed sample's pid on chip 0 lives in the fixture's container (cgroup v2, systemd driver).
    _write(tmp_path / "proc" / "1316011" / "cgroup", "0::/system.slice/docker-%s.scope\n" % CONTAINER)
    return tmp_path


def _args(host, **extra):
    args = {"deployments": [{"name": PROJECT, "model": "Qwen/Qwen3.5-27B"}],
            "project_root": str(host / "opt"), "cache_dir": str(host / "cache"),
            "ledger_path": str(host / "ledger.json"), "proc_root": str(host / "proc"),
            "executable": FAKE_NPU_SMI, "docker_executable": FAKE_DOCKER}
    args.update(extra)
    return args


def test_everything_in_one_execution(run_module, monkeypatch, host, vllm):
    monkeypatch.setenv("FAKE_DOCKER_PORT", str(vllm))
    failed, result = run_module(vllm_status.main, _args(host, _ansible_check_mode=True))
    assert not failed and result["changed"] is False
    assert result["problems"] == []
    assert result["family"] == "910B" and result["chip_name"] == "910B2"
    assert result["uptime_seconds"] == 350735
    assert result["ledger"] == {PROJECT: [4, 5]}
    assert [(c["device_id"], c["state"], c["holder"], c["processes"]) for c in result["chips"][:6]] == [
        (0, "busy", None, [PROJECT]), (1, "busy", None, ["?"]), (2, "busy", None, ["?"]), (3, "busy", None, ["?"]),
        (4, "idle", PROJECT, []), (5, "idle", PROJECT, [])]
    (dep,) = result["deployments"]
    assert dep["name"] == PROJECT and dep["in_inventory"] is True and dep["compose_file"] is True
    assert dep["cards"] == [4, 5]
    assert dep["last_good"] == {"exists": True, "image": "ascendfleet-sim/base:latest", "port": 8000,
                                "device_ids": [4, 5], "error": None}
    assert dep["previous"] == {"exists": False, "image": None, "port": None, "device_ids": None, "error": None}
    assert dep["cache"] == {"prefetched": True, "revision": "master", "reason": None}
    (container,) = dep["containers"]
    assert container["state"] == "running" and container["port"] == vllm
    assert "full_id" not in container
    assert dep["probe"]["health_status"] == 200
    assert dep["probe"]["models"] == ["Qwen"]
    assert dep["probe"]["metrics"] == {"requests_running": 2.0, "requests_waiting": 1.0, "kv_cache_usage_pct": 25.0,
                                       "engines": 1, "model_names": ["Qwen"]}
    assert result["models"]["Qwen/Qwen3.5-27B"]["prefetched"] is True
    assert [p for p, dummy in Vllm.seen] == ["/health", "/v1/models", "/metrics"]


def test_api_key_is_sent(run_module, monkeypatch, host, vllm):
    monkeypatch.setenv("FAKE_DOCKER_PORT", str(vllm))
    Vllm.key = "s3cret"
    failed, result = run_module(vllm_status.main, _args(host, api_key="s3cret"))
    assert result["deployments"][0]["probe"]["models"] == ["Qwen"]
    assert set(auth for dummy, auth in Vllm.seen) == {"Bearer s3cret"}
    assert "s3cret" not in json.dumps(result)


def test_endpoint_down_and_problems_are_reported_not_fatal(run_module, monkeypatch, host, vllm):
    # A port nothing listens on (the server's port after it is closed is not reliable; use 9).
    monkeypatch.setenv("FAKE_DOCKER_PORT", "9")
    os.remove(str(host / "proc" / "uptime"))
    _write(host / "ledger.json", "{not json")
    failed, result = run_module(vllm_status.main, _args(host))
    assert not failed
    probe = result["deployments"][0]["probe"]
    assert probe["health_status"] is None and probe["health_error"] == (
        "nothing listens on 127.0.0.1 port 9 (connection refused)")
    assert probe["models"] is None
    assert any(p.startswith("NPU ledger") and "is not valid JSON" in p for p in result["problems"])
    assert any(p.startswith("uptime:") for p in result["problems"])
    assert result["deployments"][0]["cards"] == []


def test_docker_down_and_no_npu_smi(run_module, monkeypatch, host):
    monkeypatch.setenv("FAKE_DOCKER_DOWN", "1")
    failed, result = run_module(vllm_status.main, _args(host, executable=str(host / "no-npu-smi")))
    assert not failed
    assert result["family"] is None and result["chips"] == []
    assert result["problems"][0].startswith("npu-smi: npu-smi not found: %s is not an executable file" % (host / "no-npu-smi"))
    assert result["problems"][1].startswith("docker: Cannot connect to the Docker daemon")
    (dep,) = result["deployments"]
    assert dep["containers"] == [] and dep["probe"] == {}


def test_running_project_missing_from_the_inventory_is_listed(run_module, monkeypatch, host, vllm):
    monkeypatch.setenv("FAKE_DOCKER_PORT", str(vllm))
    failed, result = run_module(vllm_status.main, _args(host, deployments=[]))
    (dep,) = result["deployments"]
    assert dep["name"] == PROJECT and dep["in_inventory"] is False
    assert dep["model"] == "Qwen/Qwen3.5-27B" and dep["revision"] == "master"   # from the container's label
    assert result["models"] == {}


# -- a port that does not speak HTTP (issue 28): an outcome in the probe, never a traceback -------------------

NOT_HTTP = [
    # (a) bytes that are not HTTP (an sshd on the planned port)
    (garbage(), "127.0.0.1 port {port} answers, but not HTTP: BadStatusLine "
                "'SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5' to GET /health"),
    # (b) a valid status line, a Content-Length larger than the body, then close
    (short_body(body="ok", length=64), "127.0.0.1 port {port} answered HTTP 200 to GET /health, but closed the "
                                       "connection after 2 of 64 bytes of the body (IncompleteRead)"),
    # (c) accept, read the request, close
    (close_at_once, "127.0.0.1 port {port} accepted the connection and closed it without an answer to GET /health "
                    "(not an HTTP server, or one that is going down)"),
]


@pytest.mark.parametrize("reply, expected", NOT_HTTP, ids=["garbage", "incomplete-read", "closed"])
def test_a_port_that_does_not_speak_http_is_a_probe_error(run_module, monkeypatch, host, raw_server, reply, expected):
    server = raw_server(reply)
    monkeypatch.setenv("FAKE_DOCKER_PORT", str(server.port))
    failed, result = run_module(vllm_status.main, _args(host))
    assert not failed, result.get("msg")
    probe = result["deployments"][0]["probe"]
    assert probe["port"] == server.port
    assert probe["health_status"] is None
    assert probe["health_error"] == expected.format(port=server.port)
    assert probe["models"] is None and probe["metrics"] == {}
    assert [path for dummy, path, dummy in server.requests] == ["/health"]  # nothing more is asked of it


def test_healthy_but_models_not_json_and_metrics_cut_short(run_module, monkeypatch, host, raw_server):
    # (d) /health answers 200, /v1/models a 200 that is not JSON; /metrics breaks off mid-body.
    server = raw_server(routes({"/health": ("200 OK", ""),
                                "/v1/models": ("200 OK", "<html>Welcome to nginx!</html>", "text/html"),
                                "/metrics": short_body(body="# HELP vllm:num_requests_running", length=9000)}))
    monkeypatch.setenv("FAKE_DOCKER_PORT", str(server.port))
    failed, result = run_module(vllm_status.main, _args(host))
    assert not failed, result.get("msg")
    probe = result["deployments"][0]["probe"]
    assert probe["health_status"] == 200 and probe["health_error"] is None
    assert probe["models"] is None
    assert probe["models_error"] == ("/v1/models did not answer JSON (Expecting value: line 1 column 1 (char 0)): "
                                     "'<html>Welcome to nginx!</html>'")
    assert probe["metrics"] == {}
    assert probe["metrics_error"] == ("127.0.0.1 port %d answered HTTP 200 to GET /metrics, but closed the connection "
                                      "after 32 of 9000 bytes of the body (IncompleteRead)" % server.port)
