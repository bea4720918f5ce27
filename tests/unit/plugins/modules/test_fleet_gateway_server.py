# -*- coding: utf-8 -*-
"""ascendfleet.llm.fleet_gateway_server through its real entry point, against a UNIX socket that
answers like HAProxy's runtime API with the answers recorded from HAProxy 2.6.12
(tests/unit/plugins/module_utils/fixtures/haproxy/, README there)."""

import os
import socket
import threading

import pytest

from ansible_collections.ascendfleet.llm.plugins.modules import fleet_gateway_server

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils", "fixtures", "haproxy")


def answers(moment):
    with open(os.path.join(FIX, "show_stat_2.6.12_%s.csv" % moment)) as stat, \
            open(os.path.join(FIX, "show_servers_state_2.6.12_%s.txt" % moment)) as state:
        return {"show stat": stat.read(), "show servers state": state.read()}


class FakeHAProxy:
    """One command per connection; `moments` are the states it moves through: a set command moves
    to the next, and so does each 'show servers state' after it (the requests in flight finishing)."""

    def __init__(self, path, moments):
        self.path = path
        self.moments = list(moments)
        self.commands = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn = self.sock.accept()[0]
            except OSError:
                return
            line = b""
            while not line.endswith(b"\n"):
                chunk = conn.recv(1024)
                if not chunk:
                    break
                line += chunk
            command = line.decode().strip()
            self.commands.append(command)
            if command.startswith("set server "):
                known = any(command.split()[2].split("/")[1] in a for a in [answers(self.moments[0])["show servers state"]])
                conn.sendall(b"\n" if known else b"No such server.\n\n")
                if known and len(self.moments) > 1:
                    self.moments.pop(0)
            else:
                conn.sendall(answers(self.moments[0])[command].encode())
                if command == "show servers state" and any(c.startswith("set ") for c in self.commands) \
                        and len(self.moments) > 1:
                    self.moments.pop(0)
            conn.close()

    def close(self):
        self.sock.close()


@pytest.fixture
def haproxy(tmp_path):
    made = []

    def start(*moments):
        fake = FakeHAProxy(str(tmp_path / "admin.sock"), moments)
        made.append(fake)
        return fake
    yield start
    for fake in made:
        fake.close()


def test_read_every_server(run_module, haproxy):
    fake = haproxy("up_down")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path})
    assert not failed and out["changed"] is False and out["commands"] == []
    assert [(s["server"], s["state"]) for s in out["servers"]] == [
        ("sim-a:qwen", "up"), ("sim-b:qwen", "up"), ("sim-a:chat", "up"), ("sim-c:chat", "down")]
    assert fake.commands == ["show stat", "show servers state"]


def test_drain_and_wait_until_the_request_in_flight_is_done(run_module, haproxy):
    fake = haproxy("up_down", "drain_session_maint", "drained")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-a:qwen", "state": "drain",
                                                         "wait": True, "timeout": 10, "interval": 0.05, "_ansible_diff": True})
    assert not failed, out
    assert out["changed"] is True
    assert out["commands"] == ["set server model:Qwen/sim-a:qwen state drain"]
    assert [(s["backend"], s["state"], s["sessions"]) for s in out["servers"]] == [("model:Qwen", "draining", 0)]
    assert out["diff"] == {"before": "model:Qwen/sim-a:qwen ready\n", "after": "model:Qwen/sim-a:qwen drain\n"}
    # Read before anything is set, then polled: one read with a session in flight, one without.
    assert fake.commands == ["show stat", "show servers state", "set server model:Qwen/sim-a:qwen state drain",
                             "show stat", "show servers state", "show stat", "show servers state"]


def test_a_server_already_draining_is_not_set_again(run_module, haproxy):
    fake = haproxy("drained")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-a:qwen", "state": "drain",
                                                         "wait": True})
    assert not failed and out["changed"] is False and out["commands"] == []
    assert not any(c.startswith("set ") for c in fake.commands)


def test_ready_puts_drained_and_maint_servers_back(run_module, haproxy):
    fake = haproxy("drain_session_maint")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-b:qwen", "state": "ready"})
    assert not failed and out["changed"] is True
    assert out["commands"] == ["set server model:Qwen/sim-b:qwen state ready"]


def test_check_mode_sets_nothing(run_module, haproxy):
    fake = haproxy("up_down")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-a:qwen", "state": "drain",
                                                         "wait": True, "_ansible_check_mode": True})
    assert not failed and out["changed"] is True
    assert out["commands"] == ["set server model:Qwen/sim-a:qwen state drain"]
    assert fake.commands == ["show stat", "show servers state"]


def test_unreachable_gateway_fails_before_anything_is_set(run_module, tmp_path):
    failed, out = run_module(fleet_gateway_server.main, {"socket": str(tmp_path / "nothing.sock"), "server": "sim-a:qwen",
                                                         "state": "drain"})
    assert failed
    assert out["msg"].startswith("cannot read server sim-a:qwen: cannot reach HAProxy's runtime API at %s"
                                 % (tmp_path / "nothing.sock"))
    assert "playbooks/gateway.yml" in out["msg"]


def test_unknown_server_is_an_error_unless_missing_ok(run_module, haproxy):
    fake = haproxy("up_down")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-z:qwen", "state": "drain"})
    assert failed and out["msg"].startswith("server sim-z:qwen is in no pool of this gateway")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-z:qwen", "state": "drain",
                                                         "missing_ok": True})
    assert not failed and out["changed"] is False and out["servers"] == []
    assert not any(c.startswith("set ") for c in fake.commands)


def test_a_server_without_sessions_is_drained_at_once(run_module, haproxy):
    fake = haproxy("drain_session_maint")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-b:qwen", "state": "drain",
                                                         "wait": True, "timeout": 0.3, "interval": 0.1})
    # sim-b is in maint (0 sessions): drain is set and it is done at once.
    assert not failed and out["commands"] == ["set server model:Qwen/sim-b:qwen state drain"]


def test_sessions_that_do_not_end_fail_after_the_timeout_naming_them(run_module, haproxy):
    fake = haproxy("drain_session_maint")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-a:qwen", "state": "maint",
                                                         "wait": True, "timeout": 0.3, "interval": 0.1})
    assert failed
    assert "server sim-a:qwen still has sessions after 0 s (model:Qwen/sim-a:qwen: 1). It stays maint" in out["msg"]
    assert out["changed"] is True


def test_ready_and_wait_until_its_checks_pass(run_module, haproxy):
    fake = haproxy("drained", "up_down")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-a:qwen", "state": "ready",
                                                         "wait": True, "timeout": 10, "interval": 0.05})
    assert not failed, out
    assert out["commands"] == ["set server model:Qwen/sim-a:qwen state ready"]
    assert [(s["state"], s["admin"]) for s in out["servers"]] == [("up", "ready")]


def test_ready_and_wait_fails_naming_the_failing_check(run_module, haproxy):
    fake = haproxy("up_down")
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "server": "sim-c:chat", "state": "ready",
                                                         "wait": True, "timeout": 0.3, "interval": 0.1})
    assert failed
    assert out["msg"].startswith("server sim-c:chat is not up after 0 s (model:chat/sim-c:chat: down "
                                 "(L4CON Layer4 connection problem))")


def test_save_state_writes_the_servers_state_answer(run_module, haproxy, tmp_path):
    fake = haproxy("drained")
    target = tmp_path / "server-state"
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "save_state": str(target)})
    assert not failed and out["saved"] is True and out["changed"] is True
    assert target.read_text() == answers("drained")["show servers state"]
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    failed, out = run_module(fleet_gateway_server.main, {"socket": fake.path, "save_state": str(target)})
    assert not failed and out["saved"] is False and out["changed"] is False
