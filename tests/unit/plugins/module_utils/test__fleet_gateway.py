"""Tests of the gateway's pure parts (plugins/module_utils/_fleet_gateway.py).

The runtime-API answers are real HAProxy 2.6.12 output (fixtures/haproxy/README.md says how and
when they were recorded).
"""
import json
import pathlib
import socket

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_gateway import (
    GatewayError,
    RuntimeApi,
    backend_name,
    check_body,
    models_list,
    parse_servers_state,
    parse_stat,
    plan_states,
    pools,
    quote,
    server_name,
    server_view,
    state_name,
    wait_sessions,
)

FIX = pathlib.Path(__file__).parent / "fixtures" / "haproxy"


def fixture(moment):
    return ((FIX / ("show_stat_2.6.12_%s.csv" % moment)).read_text(),
            (FIX / ("show_servers_state_2.6.12_%s.txt" % moment)).read_text())


def view(moment, **kw):
    stat, state = fixture(moment)
    return server_view(parse_stat(stat), parse_servers_state(state), **kw)


# --------------------------------------------------------------------------- pools


SIM = [
    {"host": "sim-a", "address": "172.30.0.11", "deployments": [
        {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "served_model_name": "Qwen", "port": 8000},
        {"name": "chat", "model": "Qwen/Qwen3-8B", "port": 8001},
        {"name": "old", "model": "Qwen/Qwen3-8B", "port": 8002, "state": "absent"},
    ]},
    {"host": "sim-b", "address": "172.30.0.12", "deployments": [
        {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "served_model_name": "Qwen"},
    ]},
]


def test_one_pool_per_served_name_with_every_server():
    result = pools(SIM)
    assert [p["model"] for p in result] == ["Qwen", "Qwen/Qwen3-8B"]
    qwen = result[0]
    assert qwen["backend"] == "model:Qwen"
    assert qwen["model_word"] == "'Qwen'"
    assert [(s["name"], s["address"], s["port"]) for s in qwen["servers"]] == [
        ("sim-a:qwen", "172.30.0.11", 8000), ("sim-b:qwen", "172.30.0.12", 8000)]  # port defaults to vLLM's 8000
    chat = result[1]
    assert chat["backend"] == "model:Qwen_Qwen3-8B-%s" % chat["backend"][-8:]
    assert [(s["host"], s["deployment"], s["port"]) for s in chat["servers"]] == [("sim-a", "chat", 8001)]


def test_absent_deployments_and_odd_items_serve_nothing():
    result = pools([{"host": "h", "deployments": [{"name": "x", "model": "M", "state": "absent"}, "junk", {"model": "M"}]}])
    assert result == []


def test_multi_node_deployment_is_served_by_its_head_only():
    dep = {"name": "big", "model": "Qwen/Qwen3.5-397B-A17B", "served_model_name": "big", "members": ["n1", "n2"], "port": 8100}
    result = pools([{"host": "n1", "address": "10.0.0.1", "deployments": [dep]},
                    {"host": "n2", "address": "10.0.0.2", "deployments": [dep]}])
    assert [(s["name"], s["address"]) for s in result[0]["servers"]] == [("n1:big", "10.0.0.1")]


def test_address_defaults_to_host_and_ipv6_is_bracketed():
    result = pools([{"host": "gpu1", "deployments": [{"name": "a", "model": "A"}]},
                    {"host": "gpu2", "address": "fd00::2", "deployments": [{"name": "a", "model": "A", "port": 9000}]}])
    assert [s["address"] for s in result[0]["servers"]] == ["gpu1", "[fd00::2]"]


@pytest.mark.parametrize("records, message", [
    ([{"host": "h", "deployments": [{"name": "a", "model": "A"}, {"name": "b", "model": "B"}]}],
     "h: deployment a and h: deployment b both serve on h port 8000"),
    ([{"host": "h", "deployments": [{"name": "a", "model": "A", "port": "http"}]}], "h: deployment a: port 'http'"),
    ([{"host": "h", "deployments": [{"name": "a", "model": "A", "port": 70000}]}], "h: deployment a: port 70000"),
    ([{"host": "h", "deployments": [{"name": "a", "model": "A", "port": True}]}], "h: deployment a: port True"),
    ([{"host": "h", "deployments": [{"name": "a"}]}], "h: deployment a: neither served_model_name nor model"),
    ([{"host": "h", "deployments": []}, {"host": "h", "deployments": []}], "host h is listed twice"),
    ([{"host": "h", "deployments": {"name": "a"}}], "h: ascendfleet_deployments is a dict, not a list"),
])
def test_bad_inventories_are_refused_naming_host_and_deployment(records, message):
    with pytest.raises(GatewayError, match="^" + pytest.importorskip("re").escape(message)):
        pools(records)


def test_names_are_haproxy_names_and_distinct():
    assert server_name("sim-a", "qwen") == "sim-a:qwen"
    assert backend_name("Qwen") == "model:Qwen"
    odd = backend_name('Qwen 8B $x #1 "ü" 千问')
    assert odd.startswith("model:Qwen_8B__x__1") and odd != backend_name('Qwen 8B $x #1 "u" 千问')
    assert server_name("gpu 1", "a") != server_name("gpu_1", "a")


def test_models_list_is_the_union_in_vllm_shape():
    answer = models_list(pools(SIM))
    assert answer["object"] == "list"
    assert [(m["id"], m["object"], m["owned_by"], m["created"]) for m in answer["data"]] == [
        ("Qwen", "model", "vllm", 0), ("Qwen/Qwen3-8B", "model", "vllm", 0)]


# --------------------------------------------------------------------------- quoting


@pytest.mark.parametrize("value, word", [
    ("Qwen", "'Qwen'"),
    ('Qwen 8B $x #1 "ü" 千问', "'Qwen 8B $x #1 \"ü\" 千问'"),
    ("it's", '"it\\\'s"'),
    ("it's $HOME \\ \"q\" #", '"it\\\'s \\$HOME \\\\ \\"q\\" \\#"'),
])
def test_quote_keeps_the_value_as_one_word(value, word):
    assert quote(value) == word


def test_quote_refuses_control_characters():
    with pytest.raises(GatewayError, match="control character"):
        quote("a\nb")


def test_check_body_is_a_one_token_completion_and_single_quotable():
    body = check_body("it's 千问")
    assert "'" not in body
    assert json.loads(body) == {"model": "it's 千问", "prompt": "ping", "max_tokens": 1}
    assert pools([{"host": "h", "deployments": [{"name": "a", "model": "it's"}]}])[0]["check_body"] == "'%s'" % check_body("it's")


# --------------------------------------------------------------------------- runtime API answers


def test_show_stat_has_every_proxy_row_with_its_header_fields():
    rows = parse_stat(fixture("up_down")[0])
    assert [(r["pxname"], r["svname"], r["status"]) for r in rows] == [
        ("api", "FRONTEND", "OPEN"),
        ("model:Qwen", "sim-a:qwen", "UP"), ("model:Qwen", "sim-b:qwen", "UP"), ("model:Qwen", "BACKEND", "UP"),
        ("model:chat", "sim-a:chat", "UP"), ("model:chat", "sim-c:chat", "DOWN"), ("model:chat", "BACKEND", "UP")]
    down = rows[5]
    assert (down["check_status"], down["check_desc"], down["addr"]) == ("L4CON", "Layer4 connection problem", "127.0.0.1:9009")


def test_show_servers_state_rows():
    rows = parse_servers_state(fixture("drain_session_maint")[1])
    assert [(r["be_name"], r["srv_name"], r["srv_op_state"], r["srv_admin_state"], r["srv_port"]) for r in rows] == [
        ("model:Qwen", "sim-a:qwen", 2, 8, "9001"), ("model:Qwen", "sim-b:qwen", 0, 1, "9002"),
        ("model:chat", "sim-a:chat", 2, 0, "9003"), ("model:chat", "sim-c:chat", 0, 0, "9009")]


def test_view_at_start_up_and_down():
    assert [(s["backend"], s["server"], s["state"], s["admin"], s["sessions"], s["check"]) for s in view("up_down")] == [
        ("model:Qwen", "sim-a:qwen", "up", "ready", 0, "L7OK Layer7 check passed"),
        ("model:Qwen", "sim-b:qwen", "up", "ready", 0, "L7OK Layer7 check passed"),
        ("model:chat", "sim-a:chat", "up", "ready", 0, "L7OK Layer7 check passed"),
        ("model:chat", "sim-c:chat", "down", "ready", 0, "L4CON Layer4 connection problem")]


def test_view_draining_with_a_session_and_maint():
    servers = view("drain_session_maint", backends=["model:Qwen"])
    assert [(s["server"], s["state"], s["admin"], s["status"], s["sessions"]) for s in servers] == [
        ("sim-a:qwen", "draining", "drain", "DRAIN", 1), ("sim-b:qwen", "maint", "maint", "MAINT", 0)]


def test_view_drained_selects_one_server():
    assert [(s["backend"], s["state"], s["sessions"]) for s in view("drained", server="sim-a:qwen")] == [
        ("model:Qwen", "draining", 0)]


@pytest.mark.parametrize("op, admin, name", [
    (2, 0, "up"), (1, 0, "up"), (3, 0, "up"), (0, 0, "down"), (2, 0x08, "draining"), (2, 0x10, "draining"),
    (0, 0x08, "down"), (2, 0x01, "maint"), (0, 0x01 | 0x08, "maint"), (2, 0x20, "maint"), (2, 0x04, "maint"),
])
def test_state_names(op, admin, name):
    assert state_name(op, admin) == name


def test_plan_states_only_changes_what_differs():
    current = view("drain_session_maint")
    assert plan_states([s for s in current if s["server"] == "sim-a:qwen"], "drain") == []
    assert plan_states(current, "ready") == ["set server model:Qwen/sim-a:qwen state ready",
                                             "set server model:Qwen/sim-b:qwen state ready"]
    with pytest.raises(GatewayError, match="state 'up'"):
        plan_states(current, "up")


@pytest.mark.parametrize("text, message", [
    ("", "not a 'show stat' answer"),
    ("Unknown command. Please enter one of the following commands only :\n", "not a 'show stat' answer"),
    ("# pxname,svname,status,\nx,y\n", "'show stat' line with 2 fields"),
])
def test_parse_stat_refuses_other_answers(text, message):
    with pytest.raises(GatewayError, match=message):
        parse_stat(text)


@pytest.mark.parametrize("text, message", [
    ("", "format 1"),
    ("1\n3 model:Qwen 1 sim-a:qwen\n", "without its"),
    ("1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state\n3 b 1 s 1.2.3.4 x 0\n", "srv_op_state of b/s"),
])
def test_parse_servers_state_refuses_other_answers(text, message):
    with pytest.raises(GatewayError, match=message):
        parse_servers_state(text)


# --------------------------------------------------------------------------- the socket


class FakeSocket:
    """Answers each command from a script of (command, answer) pairs, like the stats socket."""

    def __init__(self, script):
        self.script = script
        self.sent = b""
        self.out = None

    def sendall(self, data):
        self.sent += data
        expected, answer = self.script.pop(0)
        assert data.decode() == expected + "\n"
        self.out = [answer.encode(), b""]

    def recv(self, _size):
        return self.out.pop(0)

    def close(self):
        pass


def api(script):
    return RuntimeApi("/run/x.sock", connect=lambda path, timeout: FakeSocket(script))


def test_runtime_api_unreachable_names_the_socket_and_the_fix(tmp_path):
    with pytest.raises(GatewayError, match=r"cannot reach HAProxy's runtime API at .*missing.sock .*playbooks/gateway.yml"):
        RuntimeApi(str(tmp_path / "missing.sock"), timeout=1).command("show stat")


def test_runtime_api_over_a_real_unix_socket(tmp_path):
    path = str(tmp_path / "admin.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    import threading

    def answer():
        conn = server.accept()[0]
        assert conn.recv(100) == b"show servers state\n"
        conn.sendall(fixture("drained")[1].encode())
        conn.close()
    t = threading.Thread(target=answer)
    t.start()
    text = RuntimeApi(path, timeout=5).command("show servers state")
    t.join(5)
    server.close()
    assert text == fixture("drained")[1]


def test_set_state_refusal_is_an_error():
    with pytest.raises(GatewayError, match="No such server"):
        api([("set server a/b state drain", "No such server.\n\n")]).set_state("set server a/b state drain")
    api([("set server model:Qwen/sim-a:qwen state drain", "\n")]).set_state("set server model:Qwen/sim-a:qwen state drain")


def test_wait_sessions_until_drained():
    busy, idle = fixture("drain_session_maint"), fixture("drained")
    script = [("show stat", busy[0]), ("show servers state", busy[1]),
              ("show stat", idle[0]), ("show servers state", idle[1])]
    ticks = iter([0.0, 0.0, 1.0])
    final, waited, done = wait_sessions(api(script), "sim-a:qwen", timeout=10, clock=lambda: next(ticks), sleep=lambda s: None)
    assert done and waited == 1.0 and [s["sessions"] for s in final] == [0]


def test_wait_sessions_gives_up_after_the_timeout():
    busy = fixture("drain_session_maint")
    script = [("show stat", busy[0]), ("show servers state", busy[1])] * 2
    ticks = iter([0.0, 0.0, 5.0])
    final, waited, done = wait_sessions(api(script), "sim-a:qwen", timeout=5, clock=lambda: next(ticks), sleep=lambda s: None)
    assert not done and final[0]["sessions"] == 1
