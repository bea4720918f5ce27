"""Goals of bench/report.py on hand-written results (figures as bench.py records them)."""
import report


def _run(wall, cpu, pss, ok=True, changed_tasks=(), files=()):
    return {"wall_s": wall, "cpu_s_per_host": cpu, "peak_pss_bytes": pss, "peak_rss_bytes": 2 * pss, "ok": ok,
            "noop_ok": ok and not changed_tasks and not files, "changed_tasks": list(changed_tasks),
            "control_files_changed": list(files), "control_files_judged": bool(files), "changed_recap_all": len(changed_tasks), "modules_per_host": 9.0,
            "tasks_ok_per_host": 40.0, "tasks_skipped_per_host": 30.0, "slowest_tasks": [["Render", 3.0]], "log": "x.log"}


def _results():
    mib = 1 << 20
    by_hosts = {
        "1": {"floor": _run(4.0, 1.0, 100 * mib), "noop": _run(6.0, 1.5, 110 * mib), "ratio": 1.5, "cpu_ratio": 1.5, "memory_ratio": 1.1},
        "16": {"floor": _run(20.0, 0.5, 200 * mib),
               "noop": _run(60.0, 1.6, 400 * mib, changed_tasks=["model_prefetch : Write reports/model_prefetch.json"],
                            files=[["reports/model_prefetch.json", "changed"]]),
               "ratio": 3.0, "cpu_ratio": 3.2, "memory_ratio": 2.0},
    }
    scaling = {"from": 1, "to": 16, "ratio": 10.0, "floor_ratio": 5.0}
    by_hosts["16"]["noop"]["by_role_per_host"] = {"npu_verify": {"ok": 5.0, "skipped": 1.0, "modules": 1.0}}
    projected = {"from_hosts": 16, "cpu_min": 25.0, "floor_cpu_min": 8.3}
    return {"figures": {"noop": {"by_deployments": {"1": {"deployments": 1, "by_hosts": by_hosts, "scaling": scaling,
                                                          "projected_1000": projected}}}}}


def test_rows_per_role_and_the_1000_host_projection():
    """Issue 30: tasks and module executions per host per role, and the CPU-minutes of a 1000-host
    no-op projected from the largest N, next to the floor's."""
    rows = {r[0]: r for r in report.rows(_results())}
    assert rows["  npu_verify: tasks per host (ok + skipped), module executions"][1] == "5.0 + 1.0, 1.0"
    assert rows["projected control-node CPU of a 1000-host no-op, 1 dep. (from N=16)"][1:4] == ("25 CPU-min", "8 CPU-min floor", "3.01x")


def test_goals_name_what_is_met_and_why_not():
    gs = {(g["goal"].split(" <=")[0].split(":")[0], g["figure"]): g for g in report.goals(_results())}
    assert gs[("no-op re-run", "no-op deploy-qwen.yml, 1 deployment(s), N=1")]["met"] is True
    bad = gs[("no-op re-run", "no-op deploy-qwen.yml, 1 deployment(s), N=16")]
    assert bad["met"] is False and bad["floor"] == 20.0 and "9.0 modules" in bad["why"] and "Render 3.0 s" in bad["why"]
    # Issue 30: 1.5x the floor is met (N=1 at 1.5x); the CPU goal (3x) is judged at the largest N only.
    cpu = gs[("control-node CPU per host", "CPU per host, 1 deployment(s), N=16")]
    assert cpu["met"] is False and cpu["limit"] == 3.0 and cpu["ratio"] == 3.2
    assert ("control-node CPU per host", "CPU per host, 1 deployment(s), N=1") not in gs
    mem = [g for g in gs.values() if g["goal"].startswith("control-node peak memory")]
    assert len(mem) == 1 and mem[0]["figure"].endswith("N=16") and mem[0]["met"] is False
    scaling = [g for g in gs.values() if g["goal"].startswith("scaling")][0]
    assert scaling["ratio"] == 2.0 and scaling["met"] is False
    nothing = [g for g in gs.values() if g["goal"].startswith("the no-op changes nothing")][0]
    assert nothing["met"] is False and "N=16" in nothing["why"] and "reports/model_prefetch.json (changed)" in nothing["why"]
    assert "N=1:" not in nothing["why"]
    assert nothing["figure"].endswith("(control-node files judged at N=16)")


def test_goals_first_deploy_against_the_previous_run():
    res = {"figures": {"noop": {"first_deploy": {"hosts": 16, "wall_s_per_host": 12.0, "deployments": 1, "load_avg": [1, 2, 3]}}}}
    prev = {"figures": {"noop": {"first_deploy": {"wall_s": 160.0, "hosts": 16, "load_avg": [3, 2, 1]}}}}
    g = [g for g in report.goals(res, prev) if g["goal"].startswith("the first deploy")][0]
    assert g["ratio"] == 1.2 and g["met"] is True
    g = [g for g in report.goals(res, None) if g["goal"].startswith("the first deploy")][0]
    assert g["met"] is None
    # A previous run on another fleet size does not compare.
    prev["figures"]["noop"]["first_deploy"]["hosts"] = 8
    assert [g for g in report.goals(res, prev) if g["goal"].startswith("the first deploy")][0]["met"] is None
    # Every goal row renders (markdown cells), met or not.
    assert all(len(r) == 6 for r in report.goal_rows(report.goals(_results())))


def _gateway(drain_bad, covered=True, ok=True):
    def run(drain, bad):
        load = {"sent": 900, "ok": 900 - bad, "failed": bad, "truncated": 0, "streams": 300, "bad": bad,
                "reasons": [["failed: HTTP 502", bad]] if bad else []}
        rollout = {"target": "v0.18.0rc1-openeuler", "hosts": 4, "serial": "1", "batch": 1, "run": {"ok": ok, "wall_s": 80.0, "log": "r.log"},
                   "unavailability": {"max": 7.0}, "startup": {"median": 5.0}, "overhead": {"max": 2.0}, "capacity_min": 3,
                   "capacity_floor": 3, "capacity_ok": True, "hosts_on_target": 4, "per_host": {"a": {}, "b": {}, "c": {}, "d": {}}}
        return {"drain": drain, "rollout": rollout, "load": load, "covered": covered if drain else True}
    lat = {"n": {"through": 200, "direct": 200}, "added": {"p50": 0.0012, "p99": 0.004},
           "through": {"p50": 0.0052, "p99": 0.012}, "direct": {"p50": 0.004, "p99": 0.008}}
    return {"figures": {"gateway": {"workers": 4, "budget": 3000, "latency": lat, "runs": [run(True, drain_bad), run(False, 37)]}}}


def test_gateway_goal_zero_bad_requests_with_drain_against_the_run_without():
    g = [g for g in report.goals(_gateway(0)) if g["goal"].startswith("0 failed or truncated")]
    assert len(g) == 1 and g[0]["met"] is True and g[0]["value"] == 0 and g[0]["floor"] == 37
    assert "37 failed, 0 truncated of 900 sent (300 streams)" in g[0]["figure"]
    bad = [g for g in report.goals(_gateway(2)) if g["goal"].startswith("0 failed")][0]
    assert bad["met"] is False and bad["why"] == "failed: HTTP 502 x2 (- of them while a host's own endpoint was out)"
    # No failure, but the load stopped before the rollout ended: not met, and why.
    short = [g for g in report.goals(_gateway(0, covered=False)) if g["goal"].startswith("0 failed")][0]
    assert short["met"] is False and "did not cover" in short["why"]
    failed = [g for g in report.goals(_gateway(0, ok=False)) if g["goal"].startswith("0 failed")][0]
    assert failed["met"] is False and "the rollout failed (r.log)" in failed["why"]


def test_gateway_rows_latency_added_and_each_rollout():
    rows = {r[0]: r for r in report.rows(_gateway(0))}
    p50 = rows["gateway latency added per chat request, p50 (200 + 200 requests one at a time)"]
    assert p50[1:4] == ("+1.2 ms (5.2 ms through it)", "4.0 ms straight to a host", "1.30x")
    drain = rows["gateway, rollout serial 1 -> v0.18.0rc1-openeuler, N=4, drain on: chat requests through the gateway"]
    assert drain[1] == "0 failed, 0 truncated of 900 sent (300 streams)" and drain[4] == "0 bad: met"
    assert rows["gateway, rollout serial 1 -> v0.18.0rc1-openeuler, N=4, drain off: chat requests through the gateway"][4] == "comparison"


def test_gateway_latency_added_can_be_negative():
    # p99 through the gateway below p99 straight to a host (noise on a shared machine): shown as such.
    res = _gateway(0)
    res["figures"]["gateway"]["latency"]["added"]["p99"] = -0.0026
    rows = {r[0]: r for r in report.rows(res)}
    assert rows["gateway latency added per chat request, p99 (200 + 200 requests one at a time)"][1] == "-2.6 ms (12.0 ms through it)"


def test_knob_rows_each_setting_against_its_floor_and_the_stock_run():
    """The opt-in knobs section: per setting the no-op against its own floor, and against stock."""
    def run(wall, cpu, ok=True):
        return {"wall_s": wall, "cpu_s_per_host": cpu, "noop_ok": ok, "ok": ok, "changed_tasks": [], "log": "k.log"}
    kn = {"hosts": 16, "settings": {
        "stock": {"floor": run(10.0, 0.2), "noop": run(20.0, 1.0), "ratio": 2.0, "vs_stock": {"floor": 1.0, "noop": 1.0}, "cpu_vs_stock": 1.0},
        "forks 4": {"floor": run(25.0, 0.2), "noop": run(60.0, 1.1), "ratio": 2.4, "vs_stock": {"floor": 2.5, "noop": 3.0}, "cpu_vs_stock": 1.1},
        "strategy free": {"floor": run(9.0, 0.2), "noop": run(30.0, 1.0, ok=False), "ratio": None,
                          "vs_stock": {"floor": 0.9, "noop": 1.5}, "cpu_vs_stock": 1.0}}}
    rows = report.rows({"figures": {"knobs": kn}})
    names = [r[0] for r in rows]
    assert names[0] == "setting stock, N=16: no-op re-run"
    by = {r[0]: r for r in rows}
    assert by["setting forks 4, N=16: no-op re-run"][1:4] == ("60.0 s", "25.0 s floor (same setting)", "2.40x")
    vs = [r for r in rows if r[0].startswith("  vs stock")]
    assert len(vs) == 2 and vs[0][1] == "3.00x, 2.50x, 1.10x"
    assert by["setting strategy free, N=16: no-op re-run"][1].startswith("30.0 s (not a no-op: ")
