"""Each gateway's pools and their servers in the fleet status (playbooks/status.yml), from HAProxy's
runtime API: real HAProxy 2.6.12 answers (fixtures/haproxy/README.md) read by _fleet_gateway as the
module fleet_gateway_server reads them, then judged and rendered by _fleet_status.

Expected states written by hand from the recording's moments: at `drain_session_maint`
model:Qwen/sim-a:qwen is draining with one 20 s request in flight and sim-b:qwen is in maint;
model:chat/sim-a:chat is up and sim-c:chat is down (nothing listens on its port: L4CON).
"""
import pathlib

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_gateway import (
    parse_servers_state,
    parse_stat,
    server_view,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_status import (
    evaluate,
    gateway_status,
    render_html,
    render_markdown,
    render_text,
)

FIX = pathlib.Path(__file__).parent / "fixtures" / "haproxy"


def servers(moment):
    return server_view(parse_stat((FIX / ("show_stat_2.6.12_%s.csv" % moment)).read_text()),
                       parse_servers_state((FIX / ("show_servers_state_2.6.12_%s.txt" % moment)).read_text()))


def states(entry):
    return {(p["model"], s["server"]): (s["state"], s["sessions"]) for p in entry["pools"] for s in p["servers"]}


def test_draining_maint_up_and_down_from_the_recorded_answers():
    [entry] = gateway_status([{"gateway": "sim-gw", "servers": servers("drain_session_maint"), "error": None}])
    assert states(entry) == {
        ("Qwen", "sim-a:qwen"): ("draining", 1),
        ("Qwen", "sim-b:qwen"): ("maint", 0),
        ("chat", "sim-a:chat"): ("up", 0),
        ("chat", "sim-c:chat"): ("down", 0),
    }
    assert [p["pool"] for p in entry["pools"]] == ["model:Qwen", "model:chat"]
    assert entry["verdict"] == "attention"
    assert entry["reasons"] == [
        "sim-a:qwen in model:Qwen is draining",
        "sim-b:qwen in model:Qwen is maint",
        "sim-c:chat in model:chat is down (L4CON Layer4 connection problem)",
    ]


def test_drained_to_no_request_in_flight():
    [entry] = gateway_status([{"gateway": "sim-gw", "servers": servers("drained")}])
    assert states(entry)[("Qwen", "sim-a:qwen")] == ("draining", 0)


def test_every_server_up_is_ok():
    view = [row for row in servers("up_down") if row["server"] != "sim-c:chat"]
    [entry] = gateway_status([{"gateway": "sim-gw", "servers": view}])
    assert entry["verdict"] == "ok" and entry["reasons"] == []
    assert set(state for state, _sessions in states(entry).values()) == {"up"}


def test_an_unreadable_gateway_from_the_modules_loop_result():
    # What a loop of fleet_gateway_server with failed_when: false registers for a gateway whose
    # HAProxy is not running (the module's own message), and for an unreachable one.
    failed = {"item": "gw-b", "failed": True,
              "msg": "cannot reach HAProxy's runtime API at /run/ascendfleet-gateway/admin.sock (No such file or directory). "
                     "Fix: run playbooks/gateway.yml on this gateway, and check that its container runs (docker compose ps)"}
    unreachable = {"item": "gw-c", "unreachable": True, "msg": "Failed to connect to the host via ssh"}
    ok = {"item": "gw-a", "changed": False, "servers": servers("drained")}
    result = gateway_status([failed, unreachable, ok])
    assert [g["gateway"] for g in result] == ["gw-a", "gw-b", "gw-c"]
    assert [g["verdict"] for g in result] == ["attention", "failed", "failed"]
    assert result[1]["reasons"] == ["HAProxy's runtime API could not be read: " + failed["msg"]]
    assert result[2]["reasons"] == ["HAProxy's runtime API could not be read: Failed to connect to the host via ssh"]


def test_the_reports_show_each_pool_and_its_servers():
    fleet = evaluate([], "2026-12-04 20:00:00 UTC",
                     gateways=[{"gateway": "sim-gw", "servers": servers("drain_session_maint")}])
    text = render_text(fleet)
    assert "gateway sim-gw pool Qwen: sim-a:qwen draining (1 in flight), sim-b:qwen maint (0 in flight)" in text
    assert "gateway sim-gw pool chat: sim-a:chat up (0 in flight), sim-c:chat down (0 in flight)" in text
    markdown = render_markdown(fleet)
    assert "## Gateways" in markdown
    assert "  - pool Qwen: sim-a:qwen draining (1 in flight), sim-b:qwen maint (0 in flight)" in markdown
    page = render_html(fleet)
    assert page.count('data-gateway="sim-gw"') == 4
    assert '<td>Qwen</td><td>sim-a:qwen</td><td>draining</td><td>1</td>' in page


def test_without_gateways_nothing_changes():
    fleet = evaluate([], "")
    assert "gateways" not in fleet
    assert not any(line.startswith("gateway ") for line in render_text(fleet))
    assert "Gateways" not in render_markdown(fleet) and 'id="gateways"' not in render_html(fleet)
