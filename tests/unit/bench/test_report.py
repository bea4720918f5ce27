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
               "noop": _run(60.0, 1.5, 400 * mib, changed_tasks=["model_prefetch : Write reports/model_prefetch.json"],
                            files=[["reports/model_prefetch.json", "changed"]]),
               "ratio": 3.0, "cpu_ratio": 3.0, "memory_ratio": 2.0},
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
    assert gs[("control-node CPU per host", "CPU per host, 1 deployment(s), N=16")]["met"] is False
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
