# -*- coding: utf-8 -*-
"""ascendfleet.llm.vllm_gate and vllm_host_info through their real entry points: a fake docker
answering with real `docker inspect` captures (a compose container of the sim, the crash-looping
stand-in) and real stand-in logs, a /proc tree built like the kernel's, and a real HTTP server on
127.0.0.1 answering like vLLM."""

import copy
import http.server
import json
import os
import shutil
import threading

import pytest

from ansible_collections.ascendfleet.llm.plugins.modules import vllm_gate, vllm_host_info

from ..module_utils.raw_tcp import close_at_once, garbage, routes, short_body
from .conftest import HERE

FAKE_DOCKER = os.path.join(HERE, "fixtures", "fake-docker-gate")
FIXTURES = os.path.join(HERE, os.pardir, "module_utils", "fixtures", "vllm_gate")
ROOT = "/root/.cache/modelscope/hub/models/Qwen/Qwen3-8B"
SERVED = 'Qwen 8B $x #1 "ü" 千问'
# What `docker inspect --format '{{.Id}} {{.Name}} <project label>'` prints for the deployment's container.
OWN = "%s /qwen-vllm-ascend-1 qwen\n"


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def running():
    """The sim's real compose container of deployment qwen (vllm_compose_health_gate scenario)."""
    return json.loads(fixture("inspect-compose-running.json"))


def crash_looping(base):
    """The same container, crash-looping: the state of the real crash-looping capture."""
    raw = copy.deepcopy(base)
    raw[0]["State"] = json.loads(fixture("inspect-crash-looping.json"))[0]["State"]
    raw[0]["RestartCount"] = 2
    return raw


# Answers of vLLM's OpenAI-compatible server to the smoke tests (the shapes of vLLM's docs: a chat
# completion; a tool call parsed by --tool-call-parser into tool_calls, content null).
CHAT = {"id": "chatcmpl-9f2c", "object": "chat.completion", "created": 1764600000, "model": SERVED,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Yes, I am up.", "tool_calls": []},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 18, "completion_tokens": 6, "total_tokens": 24}}
TOOL = {"id": "chatcmpl-a71d", "object": "chat.completion", "created": 1764600001, "model": SERVED,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "chatcmpl-tool-5e1b", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Beijing\"}"}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 160, "completion_tokens": 20, "total_tokens": 180}}


class Vllm(http.server.BaseHTTPRequestHandler):
    models = {"object": "list", "data": [{"id": SERVED, "root": ROOT}]}
    chat = (200, CHAT)
    tool = (200, TOOL)
    posted = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Vllm.posted.append((self.path, body, self.headers.get("Authorization")))
        code, answer = Vllm.tool if "tools" in body else Vllm.chat
        return self._reply(code, answer if isinstance(answer, str) else json.dumps(answer))

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path == "/health":
            return self._reply(200, "")
        if self.path == "/v1/models":
            return self._reply(200, json.dumps(Vllm.models))
        return self._reply(404, "")

    def _reply(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def vllm():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Vllm)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def docker(tmp_path, monkeypatch):
    d = tmp_path / "docker"
    d.mkdir()
    monkeypatch.setenv("FAKE_DOCKER_GATE_DIR", str(d))

    def states(*inspects, log="log-engine-core-crash.txt", holders=""):
        for index, raw in enumerate(inspects):
            (d / ("inspect-%d.json" % index)).write_text(json.dumps(raw))
        shutil.copy(os.path.join(FIXTURES, log), str(d / "log.txt"))
        (d / "holders.txt").write_text(holders)
        return d
    return states


def looks(d):
    """How often the gate read the container (docker inspect of the project's container)."""
    return sum(1 for line in (d / "calls.txt").read_text().splitlines()
               if line.startswith("inspect --type container") and "--format" not in line)


def proc_tree(tmp_path, port, pid, container_id):
    """/proc with one listener on 127.0.0.1:<port> held by <pid>, which runs in <container_id>."""
    root = tmp_path / "proc"
    (root / "net").mkdir(parents=True)
    (root / "net" / "tcp").write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:%04X 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77001 1 0 100 0 0 10 0\n"
        % port)
    (root / "net" / "tcp6").write_text("  sl  local_address remote_address st\n")
    (root / str(pid) / "fd").mkdir(parents=True)
    os.symlink("socket:[77001]", str(root / str(pid) / "fd" / "9"))
    (root / str(pid) / "cgroup").write_text("0::/docker/%s\n" % container_id)
    (root / str(pid) / "cmdline").write_bytes(b"vllm\0serve\0" + ROOT.encode() + b"\0")
    return root


def gate_args(port, proc, **extra):
    args = {"project": "qwen", "port": port, "served_model_name": SERVED, "model_root": ROOT, "timeout": 5,
            "interval": 1, "docker_executable": FAKE_DOCKER, "proc_root": str(proc)}
    args.update(extra)
    return args


def test_passes_when_its_own_container_answers(run_module, docker, tmp_path, vllm):
    base = running()
    d = docker(base, holders=OWN % base[0]["Id"])
    proc = proc_tree(tmp_path, vllm, 4242, base[0]["Id"])
    failed, result = run_module(vllm_gate.main, gate_args(vllm, proc))
    assert not failed, result["msg"]
    assert result["reason"] == ""
    assert result["container"]["name"] == "qwen-vllm-ascend-1"
    assert [(h["pid"], h["container_id"]) for h in result["holders"]] == [(4242, base[0]["Id"])]
    # One look before /health, one after /v1/models (still the same container): passed at once.
    assert looks(d) == 2


def test_crash_loop_fails_at_the_next_look_with_vllms_error_first(run_module, docker, tmp_path):
    base = running()
    d = docker(base, crash_looping(base))
    proc = proc_tree(tmp_path, 1, 4242, base[0]["Id"])
    # Nothing listens on the port; without the container watch this would wait for the 60 s timeout.
    failed, result = run_module(vllm_gate.main, gate_args(59999, proc, timeout=60))
    assert failed
    lines = result["msg"].splitlines()
    assert lines[0] == ("vLLM's error: RuntimeError: NPU function error: aclrtMalloc, error code is 207001 [ERROR] "
                        "2026-12-01-00:00:00 (PID:264, Device:0, RankID:-1) ERR00100 PTA call acl api failed")
    assert lines[1].startswith("the container is crash-looping: restarting after exit code 1, 2 restart(s) since the "
                               "change (health gate of deployment qwen on port 59999, ")
    assert "Last 40 lines of the container log:" in result["msg"]
    assert result["reason"] == "the container is crash-looping: restarting after exit code 1, 2 restart(s) since the change"
    assert result["vllm_errors"][1] == ("RuntimeError: Engine core initialization failed. See root cause above. "
                                        "Failed core proc(s): {}")
    assert looks(d) == 2  # seen at the second look, not after the 60 s timeout
    assert "logs --tail 1000 %s" % base[0]["Id"] in (d / "calls.txt").read_text()


def test_access_lines_are_counted_not_shown(run_module, docker, tmp_path):
    base = running()
    docker(base, crash_looping(base), log="log-never-healthy.txt")
    failed, result = run_module(vllm_gate.main, gate_args(59999, proc_tree(tmp_path, 1, 1, "0" * 64), timeout=60))
    assert failed
    assert result["access_lines_omitted"] == 45
    assert "Last 40 lines of the container log (45 access-log lines omitted):" in result["msg"]
    assert 'HTTP/1.1" 503' not in result["msg"]


def test_another_container_answering_fails_naming_it(run_module, docker, tmp_path, vllm):
    base = running()
    other = "c" * 64
    d = docker(base, holders="%s /old-qwen-vllm-ascend-1 old-qwen\n" % other)
    proc = proc_tree(tmp_path, vllm, 5151, other)
    failed, result = run_module(vllm_gate.main, gate_args(vllm, proc, timeout=30))
    assert failed
    assert result["reason"] == (
        "port %d is answered by container old-qwen-vllm-ascend-1 of compose project old-qwen (pid 5151: vllm serve %s), "
        "not by deployment qwen's container (%s)" % (vllm, ROOT, base[0]["Id"][:12]))
    assert looks(d) == 1  # failed at the first answer


def test_unprovable_answer_fails(run_module, docker, tmp_path, vllm):
    docker(running())
    proc = proc_tree(tmp_path, 1, 4242, "0" * 64)  # nobody seen on the server's port
    failed, result = run_module(vllm_gate.main, gate_args(vllm, proc, timeout=30))
    assert failed
    assert result["reason"].startswith("port %d answers but no process on this host is seen listening on it" % vllm)


def test_timeout_names_the_last_answer(run_module, docker, tmp_path):
    docker(running())
    failed, result = run_module(vllm_gate.main, gate_args(59999, proc_tree(tmp_path, 1, 1, "0" * 64), timeout=2))
    assert failed
    assert result["reason"] == ("not healthy within 2 s: /health: nothing listens on 127.0.0.1 port 59999 "
                                "(connection refused)")


def test_wrong_model_root_keeps_waiting_then_names_it(run_module, docker, tmp_path, vllm, monkeypatch):
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    monkeypatch.setattr(Vllm, "models", {"data": [{"id": SERVED, "root": "/elsewhere"}]})
    failed, result = run_module(vllm_gate.main, gate_args(vllm, proc_tree(tmp_path, vllm, 4242, base[0]["Id"]), timeout=2))
    assert failed
    assert result["reason"] == ("not healthy within 2 s: /v1/models on port %d serves %r from /elsewhere, not from %s"
                                % (vllm, SERVED, ROOT))


# --------------------------------------------------------------------------- vllm_host_info


def test_host_info_refuses_the_renamed_deployment(run_module, docker, tmp_path):
    base = running()
    docker(base, holders="%s /qwen-vllm-ascend-1 qwen\n" % base[0]["Id"])
    port = 8000
    proc = proc_tree(tmp_path, port, 4242, base[0]["Id"])
    (tmp_path / "opt" / "qwen").mkdir(parents=True)
    (tmp_path / "opt" / "qwen" / "compose.yaml").write_text("name: qwen\n")
    (tmp_path / "ledger.json").write_text(json.dumps({"version": 1, "assignments": {"qwen": [4]}}))
    failed, result = run_module(vllm_host_info.main, {
        "host": "sim-1", "planned": [{"name": "qwen-new", "port": port, "devices": None, "model": "Qwen/Qwen3-8B"}],
        "names": ["qwen-new"], "project_root": str(tmp_path / "opt"), "ledger_path": str(tmp_path / "ledger.json"),
        "docker_executable": FAKE_DOCKER, "proc_root": str(proc)})
    assert not failed and result["problems"] == []
    (orphan,) = result["orphans"]
    assert (orphan["name"], orphan["containers"], orphan["ports"], orphan["cards"], orphan["project_dir"]) == (
        "qwen", ["qwen-vllm-ascend-1"], [8000], [4], True)
    assert result["errors"] == [
        "sim-1: deployment qwen-new: port: 8000 is held by orphan deployment qwen (qwen-vllm-ascend-1, %s), which "
        "ascendfleet_deployments no longer names. Fix: add {name: qwen, state: absent} to ascendfleet_deployments and "
        "run again: that removes the old deployment's containers, project directory and cards, or give qwen-new another "
        "port" % base[0]["Config"]["Image"]]
    assert result["port_holders"]["8000"][0]["project"] == "qwen"


def test_smoke_tests_run_once_healthy(run_module, docker, tmp_path, vllm, monkeypatch):
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    monkeypatch.setattr(Vllm, "posted", [])
    args = gate_args(vllm, proc_tree(tmp_path, vllm, 4242, base[0]["Id"]), smoke_test=True, smoke_tool_call=True,
                     api_key="sim-key")
    failed, result = run_module(vllm_gate.main, args)
    assert not failed, result["msg"]
    assert result["smoke"] == ["chat", "tool"]
    assert [(path, body["model"], "tools" in body, auth) for path, body, auth in Vllm.posted] == [
        ("/v1/chat/completions", SERVED, False, "Bearer sim-key"), ("/v1/chat/completions", SERVED, True, "Bearer sim-key")]
    assert Vllm.posted[1][1]["tools"][0]["function"]["name"] == "get_weather"
    # Without a tool call parser only the chat; without smoke_test none.
    monkeypatch.setattr(Vllm, "posted", [])
    failed, result = run_module(vllm_gate.main, dict(args, smoke_tool_call=False))
    assert result["smoke"] == ["chat"] and len(Vllm.posted) == 1
    failed, result = run_module(vllm_gate.main, dict(args, smoke_test=False))
    assert result["smoke"] == [] and len(Vllm.posted) == 1


def test_a_tool_call_answered_as_text_fails_the_gate(run_module, docker, tmp_path, vllm, monkeypatch):
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    # A wrong or missing --tool-call-parser: vLLM returns the model's raw tool-call text as content.
    text = dict(CHAT, choices=[{"index": 0, "message": {"role": "assistant", "tool_calls": [], "content":
                                                        '<tool_call>{"name": "get_weather"}</tool_call>'}}])
    monkeypatch.setattr(Vllm, "tool", (200, text))
    failed, result = run_module(vllm_gate.main, gate_args(vllm, proc_tree(tmp_path, vllm, 4242, base[0]["Id"]),
                                                          smoke_test=True, smoke_tool_call=True))
    assert failed and result["smoke"] == ["chat"]
    assert result["reason"].startswith("smoke test: the get_weather tool call came back without a get_weather call "
                                       "in tool_calls (is the tool parser right for the model?): {")
    # The message: vLLM's own error from the container log first, then this reason, then the log.
    lines = result["msg"].splitlines()
    assert lines[0].startswith("vLLM's error: ") and lines[1].startswith(result["reason"])


def test_a_failed_chat_fails_the_gate_with_vllms_answer(run_module, docker, tmp_path, vllm, monkeypatch):
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    monkeypatch.setattr(Vllm, "chat", (500, '{"object": "error", "message": "EngineCore died", "code": 500}'))
    failed, result = run_module(vllm_gate.main, gate_args(vllm, proc_tree(tmp_path, vllm, 4242, base[0]["Id"]),
                                                          smoke_test=True))
    assert failed and result["smoke"] == []
    assert result["reason"] == ('smoke test: the chat completion answered 500: '
                                '{"object": "error", "message": "EngineCore died", "code": 500}')


# -- a port that does not speak HTTP (issue 28): the gate's outcome, never a traceback ------------------------

BANNER = "'SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5'"


def test_an_sshd_on_the_port_fails_naming_it_and_what_it_answered(run_module, docker, tmp_path, raw_server):
    # (a) a host sshd holds the planned port: found at the first answer, not after the timeout.
    server = raw_server(garbage())
    d = docker(running())
    proc = proc_tree(tmp_path, server.port, 911, "0" * 64)
    (proc / "911" / "cgroup").write_text("0::/system.slice/ssh.service\n")
    (proc / "911" / "cmdline").write_bytes(b"sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups\0")
    failed, result = run_module(vllm_gate.main, gate_args(server.port, proc, timeout=60))
    assert failed
    assert result["reason"] == (
        "port %d is answered by pid 911 (sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups), not by deployment "
        "qwen's container (%s); /health: 127.0.0.1 port %d answers, but not HTTP: BadStatusLine %s to GET /health"
        % (server.port, running()[0]["Id"][:12], server.port, BANNER))
    assert looks(d) == 1


def test_its_own_container_answering_garbage_is_not_healthy(run_module, docker, tmp_path, raw_server):
    server = raw_server(garbage())
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    proc = proc_tree(tmp_path, server.port, 4242, base[0]["Id"])
    failed, result = run_module(vllm_gate.main, gate_args(server.port, proc, timeout=2))
    assert failed
    assert result["reason"] == ("not healthy within 2 s: /health: 127.0.0.1 port %d answers, but not HTTP: "
                                "BadStatusLine %s to GET /health" % (server.port, BANNER))


def test_a_health_answer_cut_short_is_not_healthy(run_module, docker, tmp_path, raw_server):
    # (b) a valid status line, a Content-Length larger than the body, then close.
    server = raw_server(short_body(body="ok", length=64))
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    proc = proc_tree(tmp_path, server.port, 4242, base[0]["Id"])
    failed, result = run_module(vllm_gate.main, gate_args(server.port, proc, timeout=2))
    assert failed
    assert result["reason"] == ("not healthy within 2 s: /health: 127.0.0.1 port %d answered HTTP 200 to GET /health, "
                                "but closed the connection after 2 of 64 bytes of the body (IncompleteRead)"
                                % server.port)


def test_a_port_that_closes_without_an_answer_keeps_the_gate_waiting(run_module, docker, tmp_path, raw_server):
    # (c) accept and close: no byte came back, so nothing is asked of the port's holders (nobody is seen here).
    server = raw_server(close_at_once)
    docker(running())
    # A timeout of several intervals, so a loaded machine still looks more than once.
    failed, result = run_module(vllm_gate.main, gate_args(server.port, proc_tree(tmp_path, 1, 1, "0" * 64), timeout=5))
    assert failed
    assert result["reason"] == ("not healthy within 5 s: /health: 127.0.0.1 port %d accepted the connection and "
                                "closed it without an answer to GET /health (not an HTTP server, or one that is "
                                "going down)" % server.port)
    assert len(server.requests) >= 2  # asked again at each look until the timeout


def test_models_answer_that_is_not_json_is_not_healthy(run_module, docker, tmp_path, raw_server):
    # (d) /health answers 200, /v1/models a 200 that is not JSON.
    server = raw_server(routes({"/health": ("200 OK", ""),
                                "/v1/models": ("200 OK", "<html>Welcome to nginx!</html>", "text/html")}))
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    proc = proc_tree(tmp_path, server.port, 4242, base[0]["Id"])
    failed, result = run_module(vllm_gate.main, gate_args(server.port, proc, timeout=2))
    assert failed
    assert result["reason"] == ("not healthy within 2 s: 127.0.0.1 port %d answered HTTP 200 to GET /v1/models, but "
                                "not JSON: '<html>Welcome to nginx!</html>'" % server.port)


def test_a_smoke_test_answer_cut_short_fails_the_gate(run_module, docker, tmp_path, raw_server):
    models = json.dumps({"object": "list", "data": [{"id": SERVED, "root": ROOT}]})
    server = raw_server(routes({"/health": ("200 OK", ""), "/v1/models": ("200 OK", models),
                                "/v1/chat/completions": short_body(body='{"id": "chatcmpl-9f2c", "cho', length=900)}))
    base = running()
    docker(base, holders=OWN % base[0]["Id"])
    proc = proc_tree(tmp_path, server.port, 4242, base[0]["Id"])
    failed, result = run_module(vllm_gate.main, gate_args(server.port, proc, smoke_test=True))
    assert failed and result["smoke"] == []
    assert result["reason"] == ("smoke test: the chat completion got no HTTP answer: 127.0.0.1 port %d answered HTTP "
                                "200 to POST /v1/chat/completions, but closed the connection after 28 of 900 bytes of "
                                "the body (IncompleteRead)" % server.port)
