"""Pure parts of bench/bench.py and the bench_count callback, against real ansible-playbook."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import bench

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_parse_ts_docker_times():
    # Docker prints nanoseconds; 2026-11-30T16:00:00Z is 1796054400 (worked out: date -d ... +%s)
    assert bench.parse_ts("2026-11-30T16:00:00.123456789Z") == pytest.approx(1796054400.123456789)
    assert bench.parse_ts("2026-11-30T17:00:00+01:00") == pytest.approx(1796054400.0)
    assert bench.parse_ts("0001-01-01T00:00:00Z") is None
    with pytest.raises(ValueError, match="unexpected Docker time"):
        bench.parse_ts("yesterday")


def test_changed_tasks_from_a_default_callback_log():
    log = "\n".join([
        "TASK [ascendfleet.llm.npu_verify : Read the NPU chips] ****",
        "ok: [h-01]",
        "TASK [ascendfleet.llm.model_prefetch : Write reports/model_prefetch.json] ****",
        "changed: [h-01 -> localhost]",
        "RUNNING HANDLER [Restart x] ****",
        "changed: [h-02]",
        "changed: [h-03]",
    ])
    assert bench.changed_tasks(log) == ["ascendfleet.llm.model_prefetch : Write reports/model_prefetch.json", "Restart x"]


def test_count_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    lines = [
        {"kind": "module", "host": "h-01", "ran_on": "h-01", "connection": "community.docker.docker", "module": "m1"},
        {"kind": "command", "host": "h-01"},
        {"kind": "module", "host": "h-02", "ran_on": "h-02", "connection": "community.docker.docker", "module": "m1"},
        {"kind": "command", "host": "h-02"},
        {"kind": "module", "host": "h-01", "ran_on": "localhost", "connection": "ansible.builtin.local", "module": "copy"},
        {"kind": "command", "host": "localhost"},
        {"kind": "command", "host": "localhost"},
        {"kind": "transfer", "host": "localhost"},
        {"kind": "task", "task": "t1", "seconds": 1.5},
        {"kind": "task", "task": "t1", "seconds": 0.5},
        {"kind": "task", "task": "t2", "seconds": 3.0},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n")
    c = bench.count_lines(str(path), ["h-01", "h-02"])
    assert c["modules_total"] == 3
    assert c["modules_per_host"] == pytest.approx(1.5)
    assert c["modules_on_hosts_per_host"] == pytest.approx(1.0)
    assert c["modules_on_control_node"] == 1
    assert c["commands_per_module"] == pytest.approx(4 / 3)
    assert c["transfers"] == 1
    assert c["by_module"] == {"m1": 2, "copy": 1}
    assert c["slowest_tasks"] == [["t2", 3.0], ["t1", 2.0]]
    assert bench.count_lines(str(tmp_path / "missing"), ["h-01"])["modules_per_host"] == 0


def test_count_lines_per_role(tmp_path):
    """Issue 30: tasks (ok, skipped) and module executions per host, per role."""
    path = tmp_path / "c.jsonl"
    lines = [
        {"kind": "result", "host": "h-01", "role": "ascendfleet.llm.npu_verify", "status": "ok", "task": "Read"},
        {"kind": "result", "host": "h-02", "role": "ascendfleet.llm.npu_verify", "status": "ok", "task": "Read"},
        {"kind": "result", "host": "h-02", "role": "ascendfleet.llm.npu_verify", "status": "skipped", "task": "Raw"},
        {"kind": "result", "host": "h-01", "role": None, "status": "ok", "task": "Check the inputs"},
        {"kind": "result", "host": "other", "role": "ascendfleet.llm.npu_verify", "status": "ok", "task": "Read"},
        {"kind": "module", "host": "h-01", "ran_on": "h-01", "connection": "community.docker.docker", "module": "m1",
         "task": "ascendfleet.llm.npu_verify : Read"},
        {"kind": "module", "host": "h-02", "ran_on": "h-02", "connection": "community.docker.docker", "module": "m1",
         "task": "ascendfleet.llm.npu_verify : Read"},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    c = bench.count_lines(str(path), ["h-01", "h-02"])
    assert c["by_role_per_host"] == {"(playbook)": {"ok": 0.5, "skipped": 0.0, "modules": 0.0},
                                     "npu_verify": {"ok": 1.0, "skipped": 0.5, "modules": 1.0}}
    assert c["modules_total"] == 2


@pytest.mark.skipif(shutil.which("ansible-playbook", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")) is None,
                    reason="ansible-playbook not installed (make setup)")
def test_bench_count_callback_counts_module_executions(tmp_path):
    """A real playbook on localhost: command (1 module), set_fact (0), stat (1), copy of
    unchanged content (stat + file = 2), a loop of 3 commands (3): 7 module executions."""
    (tmp_path / "f.txt").write_text("x\n")
    book = tmp_path / "p.yml"
    book.write_text("""---
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.command: "true"
      changed_when: false
    - ansible.builtin.set_fact:
        a: 1
    - ansible.builtin.stat:
        path: /
    - ansible.builtin.copy:
        content: "x\\n"
        dest: "{{ playbook_dir }}/f.txt"
        mode: "0644"
    - ansible.builtin.command: "echo {{ item }}"
      loop: [1, 2, 3]
      changed_when: false
""")
    counts = tmp_path / "counts.jsonl"
    env = dict(os.environ, ANSIBLE_CALLBACK_PLUGINS=str(ROOT / "bench" / "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="bench_count", BENCH_COUNT_FILE=str(counts),
               ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_PIPELINING="1")
    playbook = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    argv = [playbook, "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable, str(book)]
    res = subprocess.run(argv, env=env, capture_output=True, text=True,
                         cwd=tmp_path, check=False, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    recs = [json.loads(x) for x in counts.read_text().splitlines()]
    modules = [r["module"] for r in recs if r["kind"] == "module"]
    assert len(modules) == 7, modules
    assert modules.count("ansible.legacy.command") == 4
    assert all(r["host"] == "localhost" for r in recs if r["kind"] == "module")
    assert len([r for r in recs if r["kind"] == "task"]) == 5


def test_changed_split_hosts_and_control_node():
    log = "changed: [h-01]\nok: [h-02]\nchanged: [h-01 -> localhost]\nchanged: [h-02 -> localhost]\nchanged: [h-03]\n"
    assert bench.changed_split(log) == (2, 2)
    assert bench.changed_split("ok: [h-01]\n") == (0, 0)


def test_snapshot_sees_written_created_and_removed_files(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "a.json").write_text("{}")
    (tmp_path / "reports" / "b.md").write_text("# b\n")
    (tmp_path / "logs").mkdir()
    (tmp_path / ".git").mkdir()
    skip = {str(tmp_path / "logs")}
    before = bench.snapshot([str(tmp_path)], skip)
    assert sorted(os.path.relpath(p, tmp_path) for p in before) == ["reports/a.json", "reports/b.md"]
    # Unchanged tree: nothing to report.
    assert bench.snapshot_changes(before, bench.snapshot([str(tmp_path)], skip), str(tmp_path)) == []
    # Same content, new mtime (a report rewritten with the same bytes) counts as written.
    st = os.stat(tmp_path / "reports" / "a.json")
    os.utime(tmp_path / "reports" / "a.json", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    (tmp_path / "reports" / "b.md").unlink()
    (tmp_path / "reports" / "c.json").write_text("[]")
    (tmp_path / "logs" / "run.log").write_text("harness output")
    (tmp_path / ".git" / "index").write_text("x")
    after = bench.snapshot([str(tmp_path)], skip)
    assert bench.snapshot_changes(before, after, str(tmp_path)) == [
        ["reports/a.json", "rewritten"], ["reports/b.md", "removed"], ["reports/c.json", "created"]]
    (tmp_path / "reports" / "a.json").write_text('{"at": 1}')
    assert bench.snapshot_changes(after, bench.snapshot([str(tmp_path)], skip), str(tmp_path)) == [["reports/a.json", "changed"]]


def test_bench_deployments_take_the_sim_inventorys_first(tmp_path):
    one = tmp_path / "one.yml"
    one.write_text("ascendfleet_deployments:\n  - {name: qwen, model: Qwen/Qwen3.5-27B, port: 8000}\n")
    other = tmp_path / "other.yml"
    other.write_text("ascendfleet_deployments:\n  - {name: big, model: Qwen/Qwen3.5-27B, port: 8000}\n  - {name: x, model: A/B, port: 9}\n")
    assert [d["name"] for d in bench.bench_deployments(1, str(one))] == ["qwen"]
    assert [d["name"] for d in bench.bench_deployments(2, str(other))] == ["big", "chat"]
    two = bench.bench_deployments(2, str(one))
    assert two[1] == {"name": "chat", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B", "revision": "master", "port": 8001}
    with pytest.raises(ValueError, match="3 deployments per host asked"):
        bench.bench_deployments(3, str(one))
    # The real sim inventory: its deployment and the second one on another port.
    real = bench.bench_deployments(2)
    assert real[0]["port"] != real[1]["port"]


def test_the_fleet_is_as_large_as_the_sections_asked_for(bench_env):
    monkeypatch = bench_env
    cfg = bench.Config()
    assert (cfg.noop_hosts, cfg.noop_deployments, cfg.floor_repeat, cfg.fleet_size) == ([1, 4, 8, 16], [1, 2], 1, 16)
    assert cfg.rollouts == [("1", 2), ("50%", 4)]
    assert cfg.sections == ["noop", "prefetch", "rollout", "gateway"] and cfg.gateway_hosts == 4
    monkeypatch.setenv("BENCH_SECTIONS", "gateway")
    assert bench.Config().fleet_size == 4          # serial 1 over 4 hosts behind the gateway
    monkeypatch.setenv("BENCH_GATEWAY_PACE", "0")
    with pytest.raises(SystemExit, match="BENCH_GATEWAY_PACE"):
        bench.Config()
    monkeypatch.delenv("BENCH_GATEWAY_PACE")
    monkeypatch.setenv("BENCH_SECTIONS", "prefetch,rollout")
    assert bench.Config().fleet_size == 4          # prefetch to 4 hosts, rollout 50% over 4
    monkeypatch.setenv("BENCH_ROLLOUTS", "25%@8")
    assert bench.Config().fleet_size == 8          # rollout 25% over 8 hosts
    monkeypatch.delenv("BENCH_ROLLOUTS")
    monkeypatch.setenv("BENCH_SECTIONS", "noop")
    monkeypatch.setenv("BENCH_NOOP_HOSTS", "1")
    assert bench.Config().fleet_size == 1
    monkeypatch.setenv("BENCH_NOOP_DEPLOYMENTS", "1,3")
    with pytest.raises(SystemExit, match="1 or 2 deployments per host"):
        bench.Config()


@pytest.fixture(name="bench_env")
def fixture_bench_env(monkeypatch, tmp_path):
    """No BENCH_* of the shell; the bench works in tmp_path. The monkeypatch, to set more."""
    for key in list(os.environ):
        if key.startswith("BENCH_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("BENCH_WORK", str(tmp_path))
    return monkeypatch


@pytest.fixture(name="noop_bench")
def fixture_noop_bench(bench_env):
    """A bench of the no-op section on one host, working in tmp_path, whatever BENCH_* the shell has."""
    bench_env.setenv("BENCH_SECTIONS", "noop")
    bench_env.setenv("BENCH_NOOP_HOSTS", "1")


@pytest.mark.usefixtures("noop_bench")
def test_fewer_deployments_after_more_removes_the_others():
    b = bench.Bench(bench.Config())
    flag, path = b.deployments_extra(1, remove_up_to=2)
    assert flag == "-e" and path.startswith("@")
    with open(path[1:], encoding="utf-8") as handle:
        deps = json.load(handle)["ascendfleet_deployments"]
    # The sim inventory's qwen stays; chat, deployed by the two-deployment section, goes.
    assert [(d["name"], d.get("state", "present")) for d in deps] == [("qwen", "present"), ("chat", "absent")]
    with open(b.deployments_extra(1)[1][1:], encoding="utf-8") as handle:
        assert [d["name"] for d in json.load(handle)["ascendfleet_deployments"]] == ["qwen"]
    with open(b.deployments_extra(2)[1][1:], encoding="utf-8") as handle:
        assert [d.get("state", "present") for d in json.load(handle)["ascendfleet_deployments"]] == ["present", "present"]


@pytest.mark.usefixtures("noop_bench")
def test_the_fleet_starts_clean_after_a_killed_bench(monkeypatch):
    """A bench killed mid-run (Ctrl-C) left its hosts' Docker volumes; the next `fleet.sh up` reused
    them, their Engines restarted the old deployments (crash-looping until the prefetch put their model
    back) and the first deploy failed the gate on 4 hosts. `up` takes the fleet and hub down first."""
    calls = []

    def run(argv, **kwargs):
        calls.append(list(argv))
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(bench.subprocess, "run", run)
    b = bench.Bench(bench.Config())
    monkeypatch.setattr(b, "start_hub", lambda: None)
    b.up()
    fleet = [c[1] for c in calls if c[0].endswith("fleet.sh")]
    assert fleet == ["down", "up"], calls
    hub_rm = calls.index(["docker", "rm", "-f", "-v", b.cfg.hub])
    assert hub_rm < next(i for i, c in enumerate(calls) if c[0].endswith("fleet.sh") and c[1] == "up")


def test_next_target_is_a_tag_no_host_runs():
    # The fleet starts on vllm_compose's default, v0.17.0rc1-openeuler; after the rollout section
    # (1@2, 50%@4) the first four hosts run v0.18.0rc1.
    assert bench.next_target({"v0.17.0rc1-openeuler"}) == ("v0.18.0rc1", "openeuler")
    assert bench.next_target({"v0.18.0rc1"}) == ("v0.18.0rc1", "openeuler")
    assert bench.next_target({"v0.18.0rc1-openeuler", "v0.18.0rc1"}) == ("v0.17.0rc1", "ubuntu")
    assert bench.next_target({"v0.18.0rc1-openeuler", "v0.18.0rc1", "v0.17.0rc1", "v0.17.0rc1-openeuler"}) is None
    # An image every host has already goes first: the rollout copies and loads no archive.
    assert bench.next_target({"v0.18.0rc1"}, present_tags={"v0.18.0rc1", "v0.17.0rc1-openeuler"}) == ("v0.17.0rc1", "openeuler")
    assert bench.next_target({"v0.18.0rc1"}, present_tags={"v0.18.0rc1"}) == ("v0.18.0rc1", "openeuler")


def test_only_the_gateway_inventory_names_the_gateway(bench_env):
    """fleet.sh brings the gateway host up and down with the fleet; only the gateway section's
    inventory has it in ascendfleet_gateways (the other sections' runs set up no gateway)."""
    bench_env.setenv("BENCH_SECTIONS", "rollout,gateway")
    bench_env.setenv("BENCH_PREFIX", "hx-bench")
    b = bench.Bench(bench.Config())
    b.write_inventories()
    import yaml  # pylint: disable=import-outside-toplevel

    def read(path):
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    assert read(b.fleet_inv)["ascendfleet_gateways"]["hosts"] == {"hx-bench-gw": {"ascendfleet_sim_profile": "idle-910b3"}}
    assert len(read(b.fleet_inv)["ascend_servers"]["hosts"]) == 4
    gw = read(b.gateway_inv)
    assert list(gw["ascend_servers"]["hosts"]) == ["hx-bench-01", "hx-bench-02", "hx-bench-03", "hx-bench-04"]
    assert list(gw["ascendfleet_gateways"]["hosts"]) == ["hx-bench-gw"]
    assert all("ascendfleet_gateways" not in read(p) for p in b.inv.values())
    assert os.path.isfile(os.path.join(os.path.dirname(b.gateway_inv), "group_vars", "ascendfleet_gateways.yml"))
    assert b.fleet_env()["ASCENDFLEET_SIM_INVENTORY"] == b.fleet_inv


def test_knobs_section_is_opt_in_and_compares_settings_with_stock(bench_env):
    """Issue 30: forks, strategy free and a fact cache, each against the stock ansible.cfg."""
    assert "knobs" not in bench.Config().sections
    bench_env.setenv("BENCH_SECTIONS", "knobs")
    bench_env.setenv("BENCH_NOOP_HOSTS", "4,16")
    assert bench.Config().fleet_size == 16
    settings = dict(bench.knob_settings(16, "/tmp/facts"))
    assert list(settings) == ["stock", "forks 4", "forks 8", "strategy free", "fact cache jsonfile"]
    assert settings["stock"] == {} and settings["forks 4"] == {"ANSIBLE_FORKS": "4"}
    assert settings["strategy free"] == {"ANSIBLE_STRATEGY": "free"}
    assert settings["fact cache jsonfile"]["ANSIBLE_CACHE_PLUGIN_CONNECTION"] == "/tmp/facts"
    # Never below one fork on a tiny fleet.
    assert [setting[0] for setting in bench.knob_settings(1, "/tmp/facts")][:2] == ["stock", "forks 1"]
