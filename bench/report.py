"""Text and Markdown of the benchmark results (bench/bench.py writes docs/benchmarks.md)."""

# Issue 30 tightened the no-op goal of issue 14 (2.0x) to 1.5x and put the CPU goal at the largest N
# (what decides a 1000-host run), 3x the floor's.
GOALS = {
    "noop_ratio": 1.5, "cpu_ratio": 3.0, "memory_ratio": 1.5, "modules_per_host": 15, "fanout_ratio": 1.3,
    "hub_models": 1.0, "sha256_speedup": 20.0, "rollout_overhead_s": 10.0, "first_deploy_vs_previous": 1.25,
}


def _f(x, digits=1, unit=""):
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return ("%.*f" % (digits, x)) + unit
    return str(x) + unit


def _gib(n):
    return "-" if n is None else "%.2f GiB" % (n / 1073741824.0)


def _mib(n):
    return "-" if n is None else "%.0f MiB" % (n / 1048576.0)


def _goal(value, goal, higher_is_better=False):
    if value is None:
        return "-"
    met = value >= goal if higher_is_better else value <= goal
    return ("met" if met else "NOT met") + " (%s %s)" % (">=" if higher_is_better else "<=", _f(float(goal), 1))


def _sections(results):
    """[(deployments per host, section), ...] of the no-op figures, fewest deployments first."""
    by = ((results.get("figures") or {}).get("noop") or {}).get("by_deployments") or {}
    return sorted(((int(d), sec) for d, sec in by.items()), key=lambda kv: kv[0])


def _cost(rec, floor):
    """Where a no-op's cost goes, as measured, against its floor (the reason of a goal not met)."""
    return ("per host %s modules (floor %s), %s tasks ok + %s skipped (floor %s + %s); slowest tasks: %s" % (
        _f(rec.get("modules_per_host")), _f(floor.get("modules_per_host")),
        _f(rec.get("tasks_ok_per_host")), _f(rec.get("tasks_skipped_per_host")),
        _f(floor.get("tasks_ok_per_host")), _f(floor.get("tasks_skipped_per_host")),
        "; ".join("%s %.1f s" % (k, v) for k, v in (rec.get("slowest_tasks") or [])[:3]) or "-"))


def _what_changed(rec):
    parts = []
    if rec.get("changed_tasks"):
        parts.append("tasks reporting changed: " + "; ".join(rec["changed_tasks"]))
    if rec.get("control_files_changed"):
        parts.append("control-node files written: " + ", ".join(f if isinstance(f, str) else "%s (%s)" % tuple(f) for f in rec["control_files_changed"][:8]))
    if not parts and rec.get("changed_recap_all"):
        parts.append("recap changed=%d" % rec["changed_recap_all"])
    if not parts and not rec.get("ok", True):
        parts.append("the run failed (%s)" % rec.get("log"))
    return "; ".join(parts)


def _verdict(value, limit, higher_is_better=False):
    if value is None or limit is None:
        return None
    return value >= limit if higher_is_better else value <= limit


def goals(results, previous=None):
    """Every goal of issues 14, 30 and 31 with its figure, the floor from the same run, the limit and whether
    it is met (None: not measured); ``why`` names the measured reason of a goal not met.
    ``previous``: the results of the run before (bench/results/latest.json), for the figures
    whose goal is "no slower than before" and that have no floor of their own."""
    out = []

    def add(goal, figure, value, floor, ratio, limit, met, why="", unit=""):
        out.append({"goal": goal, "figure": figure, "value": value, "floor": floor, "ratio": ratio, "limit": limit,
                    "met": met, "why": why if met is False else "", "unit": unit})

    for d, sec in _sections(results):
        by = sec.get("by_hosts") or {}
        ns = sorted(by, key=int)
        for n in ns:
            e = by[n]
            nr, fl = e.get("noop") or {}, e.get("floor") or {}
            add("no-op re-run <= %.1fx the floor" % GOALS["noop_ratio"], "no-op deploy-qwen.yml, %d deployment(s), N=%s" % (d, n),
                nr.get("wall_s"), fl.get("wall_s"), e.get("ratio"), GOALS["noop_ratio"], _verdict(e.get("ratio"), GOALS["noop_ratio"]),
                _cost(nr, fl), " s")
            if n == ns[-1]:
                add("control-node CPU per host <= %.1fx the floor's at the largest N" % GOALS["cpu_ratio"],
                    "CPU per host, %d deployment(s), N=%s" % (d, n), nr.get("cpu_s_per_host"), fl.get("cpu_s_per_host"), e.get("cpu_ratio"),
                    GOALS["cpu_ratio"], _verdict(e.get("cpu_ratio"), GOALS["cpu_ratio"]), _cost(nr, fl), " s")
        if ns:
            top = by[ns[-1]]
            nr, fl = top.get("noop") or {}, top.get("floor") or {}
            add("control-node peak memory <= %.1fx the floor's at the largest N" % GOALS["memory_ratio"],
                "peak PSS, %d deployment(s), N=%s" % (d, ns[-1]), nr.get("peak_pss_bytes"), fl.get("peak_pss_bytes"), top.get("memory_ratio"),
                GOALS["memory_ratio"], _verdict(top.get("memory_ratio"), GOALS["memory_ratio"]),
                "peak PSS %s vs the floor's %s (RSS %s vs %s)" % (_mib(nr.get("peak_pss_bytes")), _mib(fl.get("peak_pss_bytes")),
                                                              _mib(nr.get("peak_rss_bytes")), _mib(fl.get("peak_rss_bytes"))), " B")
        sc = sec.get("scaling")
        if sc:
            add("scaling: no-op N=%d/N=%d no worse than the floor's own" % (sc["to"], sc["from"]),
                "no-op N=%d / N=%d, %d deployment(s)" % (sc["to"], sc["from"], d), sc.get("ratio"), sc.get("floor_ratio"),
                _ratio(sc.get("ratio"), sc.get("floor_ratio")), 1.0, _verdict(_ratio(sc.get("ratio"), sc.get("floor_ratio")), 1.0),
                "the no-op grows %sx from N=%d to N=%d, the floor %sx: per-host work the floor does not do (%s)" % (
                    _f(sc.get("ratio"), 2), sc["from"], sc["to"], _f(sc.get("floor_ratio"), 2),
                    _cost((by.get(str(sc["to"])) or {}).get("noop") or {}, (by.get(str(sc["to"])) or {}).get("floor") or {})), "x")
        runs = [(n, (by[n].get("noop") or {})) for n in ns]
        bad = [(n, r) for n, r in runs if not r.get("noop_ok")]
        if runs:
            judged = [n for n, r in runs if r.get("control_files_judged")]
            add("the no-op changes nothing anywhere, control node included",
                "no-op, %d deployment(s), N=%s (control-node files judged at N=%s)" % (d, ",".join(ns), ",".join(judged) or "none"),
                len(bad), 0, None, 0, not bad, "; ".join("N=%s: %s" % (n, _what_changed(r)) for n, r in bad))
    pf = (results.get("figures") or {}).get("prefetch") or {}
    if "fanout" in pf:
        add("prefetch fan-out <= %.1fx one hub download + a parallel rsync" % GOALS["fanout_ratio"],
            "prefetch fan-out %s to %d hosts" % (_gib(pf["model_bytes"]), pf["hosts"]), pf["fanout"]["wall_s"], pf.get("floor_s"),
            pf.get("fanout_ratio"), GOALS["fanout_ratio"], _verdict(pf.get("fanout_ratio"), GOALS["fanout_ratio"]),
            "fan-out %s s vs hub GET %s s + parallel rsync %s s; slowest tasks: %s" % (
                _f(pf["fanout"]["wall_s"]), _f(pf.get("floor_hub_get_s")), _f(pf.get("floor_rsync_s")),
                "; ".join("%s %.1f s" % (k, v) for k, v in (pf["fanout"].get("slowest_tasks") or [])[:3])), " s")
        complete = pf["fanout"].get("hosts_complete") == pf["hosts"]
        once = pf.get("hub_models_served") is not None and abs(pf["hub_models_served"] - 1.0) < 1e-6
        add("the hub serves each byte once per fleet", "hub bytes for the fan-out", pf.get("hub_bytes"), pf.get("model_bytes"),
            pf.get("hub_models_served"), 1.0, once and complete,
            "hub served %s for a %s model; %s of %d hosts complete" % (_gib(pf.get("hub_bytes")), _gib(pf.get("model_bytes")),
                                                                      pf["fanout"].get("hosts_complete"), pf["hosts"]), " B")
    nf = (results.get("figures") or {}).get("noop") or {}
    fd = nf.get("first_deploy")
    if fd:
        prev = ((previous or {}).get("figures") or {}).get("noop", {}).get("first_deploy")
        unlike = ""
        # Only a first deploy of the same fleet compares (the hosts deploy in parallel).
        if prev and (prev.get("hosts"), prev.get("deployments", 1)) != (fd["hosts"], fd.get("deployments", 1)):
            unlike = " (not compared: the previous run deployed N=%s with %s deployment(s))" % (prev.get("hosts"), prev.get("deployments", 1))
            prev = None
        prev_v = prev["wall_s"] / prev["hosts"] if prev else None
        value = fd.get("wall_s_per_host")
        ratio = _ratio(value, prev_v)
        add("the first deploy stays as it is (within %.2fx the previous run's, wall per host)" % GOALS["first_deploy_vs_previous"],
            "first deploy, N=%d, %s deployment(s)%s" % (fd["hosts"], fd.get("deployments", 1), unlike), value, prev_v, ratio,
            GOALS["first_deploy_vs_previous"], _verdict(ratio, GOALS["first_deploy_vs_previous"]),
            "%s s per host against %s s in the previous run (load %s then, %s now)" % (
                _f(value), _f(prev_v), " ".join("%.1f" % x for x in (prev or {}).get("load_avg", [])),
                " ".join("%.1f" % x for x in fd.get("load_avg", []))), " s")
    for r in ((results.get("figures") or {}).get("rollout") or {}).get("runs", []):
        what = "rollout serial %s (batch %d), N=%d" % (r["serial"], r["batch"], r["hosts"])
        add("rollout overhead per host <= %.0f s beyond the server's own start" % GOALS["rollout_overhead_s"], what,
            r["overhead"]["max"], r["startup"]["median"], None, GOALS["rollout_overhead_s"],
            _verdict(r["overhead"]["max"], GOALS["rollout_overhead_s"]),
            "longest outage %s s, the stand-in's start-up %s s (median)" % (_f(r["unavailability"]["max"]), _f(r["startup"]["median"])), " s")
        add("capacity during a rollout never below N - batch", what, r["capacity_min"], r["capacity_floor"], None, r["capacity_floor"],
            r["capacity_ok"] if r["capacity_min"] is not None else None,
            "%s endpoints answered at the lowest, N - batch = %d" % (r["capacity_min"], r["capacity_floor"]))
    gw = (results.get("figures") or {}).get("gateway") or {}
    without = next((x for x in gw.get("runs", []) if not x["drain"]), None)
    for run in gw.get("runs", []):
        if not run["drain"]:
            continue
        r, ld = run["rollout"], run["load"]
        why = []
        if ld["bad"]:
            why.append("; ".join("%s x%d" % (k, v) for k, v in ld["reasons"][:4])
                       + " (%s of them while a host's own endpoint was out)" % run.get("bad_in_outage", "-"))
        if not run["covered"]:
            why.append("the load did not cover the whole rollout (budget %s requests used up or stopped early)" % gw.get("budget"))
        if not r["run"]["ok"]:
            why.append("the rollout failed (%s)" % r["run"]["log"])
        add("0 failed or truncated requests through the gateway during a serial-1 rollout",
            "rollout serial 1 -> %s, N=%d, drain on: %d requests (%d streaming), %d workers; floor: the same rollout without drain%s" % (
                r["target"], r["hosts"], ld["sent"], ld["streams"], gw.get("workers", 0),
                "" if without is None else " (%s)" % _load_text(without["load"])),
            ld["bad"], None if without is None else without["load"]["bad"], None, 0,
            ld["bad"] == 0 and run["covered"] and r["run"]["ok"], "; ".join(why))
    return out


def _goal_value(g, key):
    v = g[key]
    if g["unit"] == " B":
        return _mib(v) if key != "ratio" else _f(v, 2, "x")
    if key == "ratio":
        return _f(v, 2, "x")
    return _f(v, 2 if isinstance(v, float) and abs(v) < 10 else 1, g["unit"] if isinstance(v, (int, float)) and not isinstance(v, bool) else "")


def goal_rows(gs):
    """(goal, figure, value, floor, ratio, verdict) rows of goals()."""
    return [(g["goal"], g["figure"], _goal_value(g, "value"), _goal_value(g, "floor"), _goal_value(g, "ratio"),
             "-" if g["met"] is None else ("met" if g["met"] else "NOT met: " + g["why"])) for g in gs]


def rows(results):
    """(figure, value, floor, ratio, goal) rows for every measured figure."""
    out = []
    figs = results.get("figures", {})
    noop = figs.get("noop") or {}
    fd = noop.get("first_deploy")
    if fd:
        out.append(("first deploy (deploy-qwen.yml, serial 100%%, %d deployment(s)), N=%d" % (fd.get("deployments", 1), fd["hosts"]),
                    _f(fd["wall_s"], 1, " s") + ("" if fd["ok"] else " (FAILED)"), "-", "-", "-"))
    for d, sec in _sections(results):
        for n, e in sorted((sec.get("by_hosts") or {}).items(), key=lambda kv: int(kv[0])):
            fl, nr = e.get("floor") or {}, e.get("noop") or {}
            if not nr.get("noop_ok", True):
                note = " (not a no-op: %s)" % _what_changed(nr)
            else:
                note = ""
            out.append(("no-op re-run deploy-qwen.yml, %d dep., N=%s" % (d, n), _f(nr.get("wall_s"), 1, " s") + note,
                        _f(fl.get("wall_s"), 1, " s") + " floor playbook", _f(e.get("ratio"), 2, "x"),
                        _goal(e.get("ratio"), GOALS["noop_ratio"])))
            out.append(("  module executions per host", "%s (%s on the host, %s on the control node)" % (
                _f(nr.get("modules_per_host"), 1), _f(nr.get("modules_on_hosts_per_host"), 1), _f(nr.get("modules_on_control_node"))),
                        _f(fl.get("modules_per_host"), 1) + " floor", _f(_ratio(nr.get("modules_per_host"), fl.get("modules_per_host")), 1, "x"),
                        _goal(nr.get("modules_per_host"), GOALS["modules_per_host"])))
            out.append(("  tasks per host (ok + skipped)", "%s + %s" % (_f(nr.get("tasks_ok_per_host")), _f(nr.get("tasks_skipped_per_host"))),
                        "%s + %s floor" % (_f(fl.get("tasks_ok_per_host")), _f(fl.get("tasks_skipped_per_host"))), "-", "-"))
            for role, per in sorted((nr.get("by_role_per_host") or {}).items()):
                out.append(("  %s: tasks per host (ok + skipped), module executions" % role,
                            "%s + %s, %s" % (_f(per.get("ok"), 1), _f(per.get("skipped"), 1), _f(per.get("modules"), 1)), "-", "-", "-"))
            top_n = n == max((sec.get("by_hosts") or {}), key=int)
            out.append(("  control node CPU per host", _f(nr.get("cpu_s_per_host"), 2, " s"),
                        _f(fl.get("cpu_s_per_host"), 2, " s") + " floor", _f(e.get("cpu_ratio"), 2, "x"),
                        _goal(e.get("cpu_ratio"), GOALS["cpu_ratio"]) if top_n else "-"))
            out.append(("  control node peak memory", _mib(nr.get("peak_pss_bytes")) + " PSS",
                        _mib(fl.get("peak_pss_bytes")) + " floor", _f(e.get("memory_ratio"), 2, "x"), "-"))
        pj = sec.get("projected_1000")
        if pj:
            out.append(("projected control-node CPU of a 1000-host no-op, %d dep. (from N=%d)" % (d, pj["from_hosts"]),
                        _f(pj["cpu_min"], 0, " CPU-min"), _f(pj["floor_cpu_min"], 0, " CPU-min") + " floor",
                        _f(_ratio(pj["cpu_min"], pj["floor_cpu_min"]), 2, "x"), "-"))
        sc = sec.get("scaling")
        if sc:
            out.append(("no-op N=%d vs N=%d, %d dep." % (sc["to"], sc["from"], d), _f(sc["ratio"], 2, "x"),
                        _f(sc["floor_ratio"], 2, "x") + " floor's own", "-",
                        _goal(_ratio(sc["ratio"], sc["floor_ratio"]), 1.0) + " vs the floor's"))
    pf = figs.get("prefetch") or {}
    if "fanout" in pf:
        out.append(("prefetch fan-out %s to %d hosts" % (_gib(pf["model_bytes"]), pf["hosts"]), _f(pf["fanout"]["wall_s"], 1, " s"),
                    "%s s hub GET + %s s parallel rsync" % (_f(pf["floor_hub_get_s"], 1), _f(pf["floor_rsync_s"], 1)),
                    _f(pf.get("fanout_ratio"), 2, "x"), _goal(pf.get("fanout_ratio"), GOALS["fanout_ratio"])))
        if pf.get("fanout_ratio_rsync_only") is not None:
            out.append(("  same, vs the parallel rsync alone", _f(pf["fanout"]["wall_s"], 1, " s"), _f(pf["floor_rsync_s"], 1, " s"),
                        _f(pf["fanout_ratio_rsync_only"], 2, "x"), "-"))
        out.append(("hub bytes for the fan-out", _gib(pf["hub_bytes"]), _gib(pf["model_bytes"]) + " (one model)",
                    _f(pf.get("hub_models_served"), 2, "x"), _goal(pf.get("hub_models_served"), GOALS["hub_models"])))
    elif "floor_s" in pf:
        out.append(("prefetch floors (role not measured)", "-",
                    "%s s hub GET + %s s rsync" % (_f(pf["floor_hub_get_s"], 1), _f(pf["floor_rsync_s"], 1)), "-", "-"))
    if "noop" in pf:
        out.append(("prefetch no-op, cached %s, %d hosts" % (_gib(pf["model_bytes"]), pf["hosts"]), _f(pf["noop"]["wall_s"], 1, " s"),
                    _f(pf["sha256sum_s"], 1, " s") + " parallel sha256sum", _f(pf.get("sha256sum_speedup"), 1, "x faster"),
                    _goal(pf.get("sha256sum_speedup"), GOALS["sha256_speedup"], higher_is_better=True)))
        out.append(("  same, vs the floor playbook", _f(pf["noop"]["wall_s"], 1, " s"), _f(pf["noop_floor"]["wall_s"], 1, " s"),
                    _f(pf.get("noop_vs_floor"), 2, "x"), "-"))
        out.append(("  CPU used on the hosts (all N)", _f(pf.get("noop_host_cpu_s"), 1, " s"),
                    _f(pf.get("sha256sum_host_cpu_s"), 1, " s") + " sha256sum",
                    _f(_ratio(pf.get("sha256sum_host_cpu_s"), pf.get("noop_host_cpu_s")), 1, "x less"), "-"))
        out.append(("  model size where the no-op is 20x faster (extrapolated)", _gib(pf.get("bytes_for_20x")), "sha256sum rate of this run", "-", "-"))
    for r in (figs.get("rollout") or {}).get("runs", []):
        out += _rollout_rows(r, "rollout serial %s (batch %d) -> %s, N=%d" % (r["serial"], r["batch"], r["target"], r["hosts"]))
    out += _gateway_rows(figs.get("gateway") or {})
    mi = figs.get("mitogen") or {}
    for key in ("floor", "noop"):
        if key in mi:
            e = mi[key]
            note = "" if e["mitogen"]["ok"] else " (FAILED: %s)" % e["mitogen"]["log"]
            if e["mitogen"]["ok"] and e.get("ratio") is None:
                note = " (not comparable: changed %d vs %d stock)" % (e["mitogen"]["changed"], e["stock"]["changed"])
            out.append(("mitogen_linear vs stock, %s, N=%d" % ("floor playbook" if key == "floor" else "deploy-qwen.yml no-op", mi["hosts"]),
                        _f(e["mitogen"]["wall_s"], 1, " s") + note, _f(e["stock"]["wall_s"], 1, " s") + " stock", _f(e.get("ratio"), 2, "x"), "-"))
    if mi.get("source"):
        out.append(("  (mitogen rows: %s)" % mi["source"], "-", "-", "-", "-"))
    out += _knob_rows(figs.get("knobs") or {})
    ctl = results.get("control")
    if ctl:
        out.append(("control node peak memory (any run)", _mib(ctl["peak_pss_bytes"]) + " PSS / " + _mib(ctl["peak_rss_bytes"]) + " RSS",
                    "%s, N=%d" % (ctl["peak_run"], ctl["peak_run_hosts"]), "-", "-"))
    return out


def _knob_rows(kn):
    """Rows of the opt-in knobs section (bench.py section_knobs): per setting, the no-op re-run
    against its own floor and both against the stock ansible.cfg's."""
    out = []
    for name, e in sorted((kn.get("settings") or {}).items(), key=lambda kv: (kv[0] != "stock", kv[0])):
        nr, fl, vs = e.get("noop") or {}, e.get("floor") or {}, e.get("vs_stock") or {}
        note = "" if nr.get("noop_ok") else " (not a no-op: %s)" % (_what_changed(nr) or "failed")
        out.append(("setting %s, N=%d: no-op re-run" % (name, kn["hosts"]), _f(nr.get("wall_s"), 1, " s") + note,
                    _f(fl.get("wall_s"), 1, " s") + " floor (same setting)", _f(e.get("ratio"), 2, "x"), "-"))
        if name != "stock":
            out.append(("  vs stock: no-op wall, floor wall, no-op CPU per host", "%s, %s, %s" % (
                _f(vs.get("noop"), 2, "x"), _f(vs.get("floor"), 2, "x"), _f(e.get("cpu_vs_stock"), 2, "x")), "stock ansible.cfg", "-", "-"))
    return out


def _rollout_rows(r, label):
    """Rows of one measured rollout (bench.py rollout_run): unavailability, capacity, wall time."""
    return [(label + ": unavailability per host (max)", _f(r["unavailability"]["max"], 1, " s"),
             _f(r["startup"]["median"], 1, " s") + " stand-in start-up (median)",
             "+" + _f(r["overhead"]["max"], 1, " s") + " overhead (max)",
             _goal(r["overhead"]["max"], GOALS["rollout_overhead_s"])),
            ("  fleet capacity (min endpoints answering)", _f(r["capacity_min"]), "N - batch = %d" % r["capacity_floor"], "-",
             "met" if r["capacity_ok"] else "NOT met"),
            ("  rollout wall time", _f(r["run"]["wall_s"], 1, " s") + ("" if r["run"]["ok"] else " (FAILED: %s)" % r["run"]["log"]),
             "%d/%d hosts on target" % (r["hosts_on_target"], len(r["per_host"])), "-", "-")]


def _ms(seconds, signed=False):
    if seconds is None:
        return "-"
    return ("%+.1f ms" if signed else "%.1f ms") % (seconds * 1000.0)


def _load_text(ld):
    return "%d failed, %d truncated of %d sent (%d streams)" % (ld["failed"], ld["truncated"], ld["sent"], ld["streams"])


def _gateway_rows(gw):
    """Rows of the gateway section (bench.py section_gateway): latency added, then per rollout the
    requests through the gateway and the hosts' own endpoints."""
    out = []
    lat = gw.get("latency")
    if lat:
        for p in ("p50", "p99"):
            out.append(("gateway latency added per chat request, %s (%d + %d requests one at a time)" % (p, lat["n"]["through"], lat["n"]["direct"]),
                        _ms(lat["added"][p], signed=True) + " (%s through it)" % _ms(lat["through"][p]), _ms(lat["direct"][p]) + " straight to a host",
                        _f(_ratio(lat["through"][p], lat["direct"][p]), 2, "x"), "-"))
    for run in gw.get("runs", []):
        r, ld = run["rollout"], run["load"]
        label = "gateway, rollout serial 1 -> %s, N=%d, drain %s" % (r["target"], r["hosts"], "on" if run["drain"] else "off")
        note = " (%d while a host's own endpoint was out)" % run["bad_in_outage"] if ld["bad"] and "bad_in_outage" in run else ""
        out.append((label + ": chat requests through the gateway",
                    _load_text(ld) + note + ("" if run["covered"] else " (load did NOT cover the rollout)"),
                    "-", "-", ("0 bad: " + ("met" if ld["bad"] == 0 and run["covered"] else "NOT met")) if run["drain"] else "comparison"))
        out += [("  " + fig if i == 0 else fig, v, f, ra, g) for i, (fig, v, f, ra, g) in
                enumerate(_rollout_rows(r, "hosts' own endpoints"))]
    if gw.get("image"):
        out.append(("gateway image (sim)", "%s (%s)" % (gw["image"], gw.get("haproxy") or "-"), "-", "-", "-"))
    return out


def _ratio(a, b):
    if a is None or not b:
        return None
    return a / b


def figures_text(results):
    lines = ["", "=" * 100, "ascendfleet.llm benchmarks (%s, load %s)" % (
        results.get("started"), " ".join("%.1f" % x for x in results["machine"]["load_avg_start"])), "=" * 100]
    for fig, value, floor, ratio, goal in rows(results):
        lines.append("%-58s %-22s | floor %-40s | %-16s | goal %s" % (fig, value, floor, ratio, goal))
    lines.append("-" * 100)
    for goal, fig, value, floor, ratio, verdict in goal_rows(results.get("goals") or []):
        lines.append("GOAL %-62s %-48s %s (floor %s, %s): %s" % (goal, fig, value, floor, ratio, verdict))
    for nm in results.get("not_measured", []):
        lines.append("NOT MEASURED: %s: %s" % (nm["what"], nm["why"]))
    for err in results.get("errors", []):
        lines.append("HARNESS ERROR: %s" % err)
    lines.append("total %.0f s; machine: %d cores, %.1f GiB; load at end %s" % (
        results.get("total_s", 0), results["machine"]["cores"], results["machine"]["memory_bytes"] / 1073741824.0,
        " ".join("%.1f" % x for x in results["machine"].get("load_avg_end", []))))
    return "\n".join(lines)


def markdown(results):
    m = results["machine"]
    cfg = results["config"]
    out = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (bench/run.sh -> bench/bench.py); do not edit by hand. Raw figures:",
        "[bench/results/latest.json](../bench/results/latest.json). Absolute times on a shared 2-core machine are",
        "noise, so every figure is a ratio against a floor measured in the same run, on the same fleet.",
        "",
        "## Latest run",
        "",
        "- Date: %s; commit `%s`; total %.0f s" % (results.get("started"), (results.get("commit") or "")[:12], results.get("total_s", 0)),
    ]
    if results.get("note"):
        out.append("- Tree measured: %s" % results["note"])
    out += [
        "- Machine: %d cores (%s), %.1f GiB memory, kernel %s, Docker %s, %s, Python %s" % (
            m["cores"], m["cpu"], m["memory_bytes"] / 1073741824.0, m["kernel"], m["docker"], m["ansible_core"], m["python"]),
        "- Load average (1, 5, 15 min) at the start: %s; at the end: %s (the machine is shared with other jobs)" % (
            ", ".join("%.2f" % x for x in m["load_avg_start"]), ", ".join("%.2f" % x for x in m.get("load_avg_end", []))),
        "- Sizes: no-op on N = %s with %s deployment(s) per host; prefetch %.2f GiB in %d shards to %d hosts; rollouts %s; repeat %d" % (
            ", ".join(str(n) for n in cfg["noop_hosts"]), " and ".join(str(d) for d in cfg.get("noop_deployments", [1])), cfg["prefetch_bytes"] / 1073741824.0, cfg["prefetch_shards"],
            cfg["prefetch_hosts"], ", ".join("serial %s over %d hosts" % (s, n) for s, n in cfg["rollouts"]), cfg["repeat"])
        + ("; gateway: serial 1 over %d hosts with drain and without, at most %d chat requests each from %d workers (one per %s s each), "
           "%d latency rounds" % (cfg["gateway_hosts"], cfg["gateway_requests"], cfg["gateway_workers"], _f(cfg["gateway_pace"], 2),
                                  cfg["gateway_latency_rounds"]) if "gateway" in cfg.get("sections", []) else ""),
        "",
        "",
        "## Goals (issues 14, 30 and 31)",
        "",
        "Every goal with its figure, the floor measured in the same run, and whether it is met; for one",
        "not met, the measured reason. The benchmark never fails on speed.",
        "",
        "| Goal | Figure | Value | Floor (same run) | Ratio | Met |",
        "|---|---|---|---|---|---|",
    ]
    for goal, fig, value, floor, ratio, verdict in goal_rows(results.get("goals") or []):
        out.append("| %s | %s | %s | %s | %s | %s |" % (goal, fig, value, floor, ratio, verdict.replace("|", "/")))
    out += [
        "",
        "## All figures",
        "",
        "| Figure | Value | Floor (same run) | Ratio | Goal |",
        "|---|---|---|---|---|",
    ]
    for fig, value, floor, ratio, goal in rows(results):
        out.append("| %s | %s | %s | %s | %s |" % (fig.strip(), value, floor, ratio, goal))
    if results.get("not_measured"):
        out += ["", "Not measured in this run:", ""]
        out += ["- %s: %s" % (nm["what"], nm["why"]) for nm in results["not_measured"]]
    if results.get("errors"):
        out += ["", "Harness errors in this run:", ""]
        out += ["- %s" % e for e in results["errors"]]
    worst = None
    for _, sec in _sections(results):
        for _, e in sorted((sec.get("by_hosts") or {}).items(), key=lambda kv: int(kv[0])):
            if e.get("noop"):
                worst = e["noop"]
    if worst:
        out += ["", "Module executions of the no-op re-run with the most deployments at N=%d (all hosts), by task:" % worst["hosts"], ""]
        out += ["| Task | Executions |", "|---|---|"]
        # (results JSON is written with sorted keys: order by count here)
        out += ["| %s | %d |" % (k, v) for k, v in sorted(worst.get("by_task", {}).items(), key=lambda kv: (-kv[1], kv[0]))]
        out += ["", "By module: " + ", ".join("`%s` %d" % (k, v) for k, v in sorted(worst["by_module"].items(), key=lambda kv: (-kv[1], kv[0])))]
        if worst.get("changed_tasks"):
            out += ["", "Tasks that reported `changed` on the no-op re-run: " + "; ".join(worst["changed_tasks"]) + "."]
        out += ["", "Slowest tasks of that run (seconds, summed over batches): " +
                "; ".join("%s %.1f" % (k, v) for k, v in sorted(worst.get("slowest_tasks", []), key=lambda kv: -kv[1]))]
    out += ["", METHOD]
    return "\n".join(out) + "\n"


METHOD = """## Reproduce

```sh
make bench                      # BENCH_QUICK=1 make bench for a smaller, faster pass
BENCH_NOOP_HOSTS=1,4,8,16 BENCH_NOOP_DEPLOYMENTS=2 BENCH_PREFETCH_SIZE=4GiB BENCH_PREFETCH_HOSTS=8 BENCH_ROLLOUTS=1@8,25%@8 make bench
```

Knobs (environment): `BENCH_QUICK=1`, `BENCH_NOOP_HOSTS` (default `1,4,8,16`; quick `1,2`),
`BENCH_NOOP_DEPLOYMENTS` (deployments per host of each no-op section, default `1,2`), `BENCH_PREFETCH_SIZE`
(`2GiB`), `BENCH_PREFETCH_SHARDS` (`4`), `BENCH_PREFETCH_HOSTS` (`4`), `BENCH_ROLLOUTS` (`1@2,50%@4`:
serial@hosts), `BENCH_REPEAT` (`1`; the median is kept), `BENCH_FLOOR_REPEAT` (`1`: floors per N at least; one right before each no-op), `BENCH_SECTIONS`
(`noop,prefetch,rollout,gateway`; e.g. `BENCH_SECTIONS=gateway` runs the gateway section alone, on its
own first deploy; `knobs`, opt-in: forks, strategy free and a fact cache against the stock
`ansible.cfg` on the largest N, figures for docs/real-fleet.md), `BENCH_GATEWAY_HOSTS` (`4`; quick `2`), `BENCH_GATEWAY_REQUESTS` (`6000`: at most, per
rollout), `BENCH_GATEWAY_WORKERS` (`4`), `BENCH_GATEWAY_PACE` (`0.25`: seconds between two requests of
one worker, at least), `BENCH_GATEWAY_LATENCY_ROUNDS` (`200`), `BENCH_MITOGEN` (a directory holding `ansible_mitogen`, e.g. an unpacked
mitogen wheel: adds stock-vs-`mitogen_linear` runs), `BENCH_NOTE` (a line about the tree
measured), `BENCH_KEEP=1` (leave the fleet up), `BENCH_HUB_PORT` (`18180`),
`BENCH_PREFIX`/`BENCH_NETWORK` (`ascendfleet-bench`: host `<prefix>-NN`, hub `<prefix>-hub`, gateway
`<prefix>-gw`), `BENCH_WORK` (`.cache/bench`), `BENCH_WRITE_DOCS` (`1`, `0` in quick mode).
The benchmark never fails on speed: it exits non-zero only when the harness itself breaks.

## How each figure is measured

The harness brings up its own fleet with `tests/sim/fleet.sh` (`ASCENDFLEET_SIM_INVENTORY` = a
generated inventory of N hosts `ascendfleet-bench-NN`, the first with the seed's profile
`seed-910b2`, the others `idle-910b3`; `ASCENDFLEET_SIM_NETWORK=ascendfleet-bench`;
`ASCENDFLEET_SIM_HUB=0`; `ASCENDFLEET_SIM_WITH_REGISTRY=0`: the sim vars deliver images as archives, and
the shared `ascendfleet-sim-registry` of the demo fleet and molecule is neither started nor removed)
and its own stand-in hub `ascendfleet-bench-hub` (network alias `ascendfleet-sim-hub`, so the sim
group_vars reach it; published on 127.0.0.1:18180; a config with the benchmark's multi-GiB model and
the second deployment's Qwen/Qwen3-8B). None of these names is used by `make sim-up`/`make demo`
(`ascendfleet-sim-*`) or molecule (`sim-<scenario>`). The inventories for N = 1, 4, 8, 16 are the
first N hosts of one fleet and carry a copy of `inventories/sim/group_vars`. Every playbook runs with the repository's
`ansible.cfg`, so forks, pipelining and fact gathering are what users get. Everything is torn
down at the end.

1. **No-op re-run.** Per section of D deployments per host (`BENCH_NOOP_DEPLOYMENTS`: the sim
   inventory's `qwen`, then also `chat`, Qwen3-8B on one card, port 8001), `playbooks/deploy-qwen.yml`
   converges the whole fleet to those deployments (`-e @deployments-D.json`, serial 100%). The
   section with the most deployments runs first: its converge is the "first deploy" row (every
   deployment of the run deployed on the whole fleet at once); each later section's converge only
   removes the deployments it does not have (`state: absent`, deploy phase only: `--tags deploy`) and is not timed, which costs far
   less than deploying the fleet twice. Then, per N (largest first), the floor and the re-run
   are timed back to back, the floor right before each re-run (where a re-run is repeated, so is
   its floor; the floors' median is the denominator). The floor
   (`bench/playbooks/floor.yml`) is what an engineer would hand-write for the same fleet: per host
   one `npu-smi info` read, and per deployment one `community.docker.docker_compose_v2`
   (`state: present`, `pull: never`) on the Compose project vllm_compose deployed. The goals: the
   re-run <= 2x the floor at every N and D; control-node CPU per host <= 2x the floor's; peak
   memory <= 1.5x the floor's at the largest N; the re-run's own N=16/N=1 growth no worse than the
   floor's. **Nothing changed anywhere**: a run counts as a no-op only when the recap shows
   `changed=0` for every host, localhost included, no task printed `changed` (on a host or
   delegated to the control node), and no file under the repository or the run's working
   directory (where the reports go) was written, created or removed (size, mtime and sha256 of
   every file, before and after; the harness's own logs are left out). The reports describe the
   hosts of the run and what it did (a deploy reports "deployed", a no-op "unchanged"), so the
   files are judged only on a no-op right after a no-op of the same inventory and deployments:
   the smallest N is measured last and its no-op twice (both timed, the median kept), the second
   judged; the larger N follow runs on other hosts (their files are recorded, not judged). Every
   no-op's changes on the hosts and the control node's tasks are judged. Each goal not met is named with
   where the cost went: module executions and tasks (ok + skipped) per host against the floor's,
   and the slowest tasks.
   **Module executions** are counted by `bench/callback_plugins/bench_count.py`: it wraps
   `ActionBase._execute_module` (every AnsiballZ payload an action plugin runs, whichever plugin
   asked: `template` counts its `stat` and its `copy`, each `async_status` poll counts), plus
   `_low_level_execute_command` and `_transfer_data` (to check pipelining: with it, one remote
   command per module and no file transfer). ansible-core forks its workers from the process
   that loaded the callback, so the wraps see every task. `set_fact`, `assert`, `debug`,
   `include_*` run no module and count nothing. Modules that run on the control node for a host
   (`delegate_to: localhost`, `run_once` reports) are counted for that host.
2. **Prefetch fan-out.** The floor is what a person with a shell would do: a plain HTTP GET of
   every file of the model from the hub onto the seed (Python `urllib`, no verification), then
   a plain parallel `rsync -a` from a read-only rsync daemon on the seed to the other N-1 hosts.
   Then the role runs (`playbooks/prefetch.yml` with `ascendfleet_deployments` naming the
   benchmark's model, empty caches); the hub's `/_sim/stats` byte counter for that model, reset
   just before, gives the bytes served (goal: one model's worth whatever N).
3. **Prefetch no-op.** `prefetch.yml` again on the cached model vs `sha256sum` of the same files
   on all N hosts at once (what re-hashing costs; the files are in the page cache, so this floor
   is CPU-bound and favours the re-hash), and vs the floor playbook on the same N hosts. The
   speed-up grows with the model: the no-op reads no model bytes, `sha256sum` reads them all.
4. **Rollout** (one deployment per host, after the no-op sections). `deploy-qwen.yml -e ascendfleet_image_version=<v> -e ascendfleet_image_os=<os>
   -e vllm_compose_serial=<s>` on the first N hosts, each run to a stand-in tag no host runs yet
   (v0.18.0rc1-openeuler, then v0.18.0rc1, ...), so every host of the run changes. A client thread per
   endpoint (`bench/benchlib/poller.py`) polls `GET /v1/models` every 0.25 s (2 s timeout) from
   the control node. Per host, unavailability = last good answer -> first good answer
   (`benchlib/metrics.py: outages`); the stand-in's own start-up is the new container's
   `State.StartedAt` -> its `Application startup complete.` log line (the configured model-load
   delay plus process start); overhead = the longest outage minus that start-up. Capacity = the
   number of endpoints whose latest answer was good, at every answer; its minimum is compared with
   N - batch (batch as Ansible computes `serial`).
5. **Gateway** (issue 31; one deployment per host, after the rollouts). The gateway section's
   inventory is the first N hosts (`BENCH_GATEWAY_HOSTS`, 4) and a gateway host of its own,
   `<prefix>-gw` (a sim host like the others, group `ascendfleet_gateways`; `fleet.sh` starts it
   with the fleet; no other section's inventory names it, so no other run sets it up or drains on
   it). `playbooks/gateway.yml` brings HAProxy up there (not timed) with health checks every 2 s,
   timeout 2 s, fall 2, rise 2 (the role's 10 s interval is for engines that take minutes to
   start; the stand-in takes about 5 s); the harness waits until HAProxy's Prometheus endpoint
   (`haproxy_server_status`) shows the N servers UP. **Latency added**: 200 rounds of two
   non-streaming chat requests, one at a time, from the control node: one through the gateway
   (`http://<gateway>:8080/v1`), one straight to a host's endpoint (the N hosts in turn), the
   order swapped every round; each on a new connection; p50 and p99 of each side over the
   requests answered, and the difference (`benchlib/metrics.py: added_latency`). **Drain**: the
   same serial-1 rollout of the N hosts (`deploy-qwen.yml`, `vllm_compose_serial=1`, a stand-in
   tag no host runs yet, one every host has already where there is one: no archive to copy)
   twice: with `vllm_compose_gateway_drain: true` (the role's default: each deployment drained
   on the gateway before it is touched, enabled after its gate) and with
   `false` (the gateway's health checks alone follow the hosts). During each,
   `bench/benchlib/load.py` sends OpenAI chat requests for the sim deployment's served name
   through the gateway: 4 workers, each at most one request per 0.25 s, every third request
   streaming, each on a new connection with a 30 s timeout, from 2 s before the playbook
   starts until every host answers again after it, at most 6000 requests (and 900 s) per
   rollout; the load "covers" the rollout when it was still sending when the playbook ended.
   Each answer is judged by `benchlib/chat.py`: failed = no status line (refused, reset, timed
   out) or a status other than 200; truncated = 200 but a JSON body without a `finish_reason`
   or cut short, a stream without a chunk carrying a `finish_reason` or without its final
   `data: [DONE]`, or a connection broken while reading. The goal: 0 failed or truncated with
   drain (the run without drain, in the floor column, shows what the drain is worth). The
   stand-in answers in milliseconds (no `ASCENDFLEET_SIM_RESPONSE_SECONDS`), so few requests are
   in flight when a container stops, and HAProxy retries a refused connection on another server
   (`option redispatch`, `retries 2`): what still fails without drain is a request the server
   took and closed without an answer (the gateway's 502), counted by its reason. The poller of item 4 watches the hosts' own endpoints at the same time
   (their outages show the hosts really went away). The sim gateway runs Debian 12's HAProxy
   2.6 (image `ascendfleet-sim/haproxy`, loaded from the sim cache's archive), not the role's
   default `docker.io/library/haproxy:3.0.5`: there is no registry here.
6. **Control node.** Every `ansible-playbook` runs under `bench/benchlib/runner.py`: CPU seconds
   from `os.wait4` rusage (the playbook, its forked workers and the `docker exec` clients of the
   docker connection), peak memory by sampling the process tree's RSS and PSS from `/proc` every
   0.2 s (PSS splits the pages the forked workers share; RSS counts them once per process).

## Settings that matter (ansible.cfg)

- **Pipelining**: ansible-core's global `pipelining` is read from `[defaults]` or `[connection]`;
  an `[ssh_connection]` key only reaches the ssh plugin. `community.docker.docker` has no option
  of its own (it takes the global one), so with the earlier `[ssh_connection] pipelining = true`
  the docker connection ran without pipelining. Measured on one sim host, floor playbook (2
  modules), three runs each, load about 10: `[ssh_connection]` 10 remote commands and 2 file
  transfers per run (5 `docker exec` + 1 copy per module: temp dir, transfer, chmod, run,
  clean-up), 5.4-10.0 s; `[connection]` 2 commands, 0 transfers, 3.2-5.6 s. The setting now lives
  in `[connection]`, read by both the ssh and docker connections. Every run's "cmds/module" in
  the log checks it: 1.00 for plain modules; `template`/`copy` tasks still make a temp dir and
  clean it up, which is why whole-role runs show about 2.
- **Fact gathering**: `gathering = explicit`; the roles gather what they use (npu_verify reads the
  host in one module), nothing else runs `setup`.
- **Forks**: `forks = 20`, above the largest simulated fleet, so no batch waits for a fork.
- **Strategy, forks, fact cache**: the opt-in `knobs` section (`BENCH_SECTIONS=knobs`) runs the
  floor and the no-op re-run per setting against the stock `ansible.cfg`; its last figures and what
  they mean for a large fleet are in [real-fleet.md](real-fleet.md#8-large-fleets-forks-slicing-awx-and-automation-controller).
  The deploy play stays `serial` and health-gated per batch whatever the strategy.
- **Mitogen**: mitogen 0.3.54 (PyPI, current) is maintained and loads on ansible-core 2.19.14 (its
  `ansible_mitogen/loaders.py` has a minimum version, no maximum). It needs
  `ansible_connection: docker` (its own docker transport; the `community.docker.docker` name is
  not taken over) and the strategy `mitogen_linear`, which ansible-core 2.19 flags: "Use of
  strategy plugins not included in ansible.builtin are deprecated ... This feature will be
  removed from ansible-core in a future release." `BENCH_MITOGEN=<dir with ansible_mitogen>`
  measures it against the stock run back to back (rows above when present). It is not a default
  of the collection: it is an extra controller dependency on a mechanism ansible-core is
  removing, and its gain comes from the per-module cost the roles are meant to keep low anyway.
- **Noise**: the machine is shared; its load average moved between about 3 and 11 during the
  runs recorded here. Each figure pairs runs made back to back, but a single pair can still be
  off by a factor of 2; `BENCH_REPEAT=3` takes medians at three times the cost.
"""
