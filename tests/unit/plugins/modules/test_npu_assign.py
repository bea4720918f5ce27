# -*- coding: utf-8 -*-
"""ascendfleet.llm.npu_assign through its real entry point, with fake npu-smi and docker."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.ascendfleet.llm.plugins.modules import npu_assign

from .conftest import FAKE_DOCKER, FAKE_NPU_SMI

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
SEED_PIDS = [1316011, 1316012, 1316013, 1316014]


def args(tmp_path, **kw):
    base = {"owner": "q", "count": 2, "executable": FAKE_NPU_SMI,
            "ledger_path": str(tmp_path / "l.json"), "proc_root": str(tmp_path / "proc"),
            "docker_executable": FAKE_DOCKER}
    base.update(kw)
    return base


def ledger(tmp_path):
    with open(str(tmp_path / "l.json")) as handle:
        return json.load(handle)


def give_back_args(tmp_path, **kw):
    """args() without count: device_ids and count are mutually exclusive."""
    out = args(tmp_path, **kw)
    out.pop("count")
    return out


def write_ledger(tmp_path, assignments):
    (tmp_path / "l.json").write_text(json.dumps({"version": 1, "assignments": assignments}))


def containerise(tmp_path, monkeypatch, pids_projects):
    """Fake /proc/PID/cgroup for each pid and fake docker labels for its container."""
    mapping = []
    for pid, project in pids_projects.items():
        cid = ("%064x" % pid)
        d = tmp_path / "proc" / str(pid)
        d.mkdir(parents=True)
        (d / "cgroup").write_text("0::/system.slice/docker-%s.scope\n" % cid)
        if project:
            mapping.append("%s=%s" % (cid, project))
    monkeypatch.setenv("FAKE_DOCKER_PROJECTS", ",".join(mapping))


def test_seed_assign_then_idempotent(run_module, tmp_path):
    failed, result = run_module(npu_assign.main, args(tmp_path))
    assert not failed
    assert result["changed"] is True
    assert result["device_ids"] == [4, 5]
    assert result["device_paths"] == ["/dev/davinci4", "/dev/davinci5"]
    assert result["previous_device_ids"] == []
    assert result["family"] == "910B"
    assert ledger(tmp_path) == {"version": 1, "assignments": {"q": [4, 5]}}
    failed, result = run_module(npu_assign.main, args(tmp_path))
    assert result["changed"] is False and result["device_ids"] == [4, 5]
    failed, result = run_module(npu_assign.main, args(tmp_path, owner="r"))
    assert result["device_ids"] == [6, 7]
    assert ledger(tmp_path)["assignments"] == {"q": [4, 5], "r": [6, 7]}


def test_check_mode_and_diff_write_nothing(run_module, tmp_path):
    failed, result = run_module(npu_assign.main, args(
        tmp_path, _ansible_check_mode=True, _ansible_diff=True))
    assert result["changed"] is True and result["device_ids"] == [4, 5]
    assert json.loads(result["diff"]["before"]) == {"version": 1, "assignments": {}}
    assert json.loads(result["diff"]["after"]) == {"version": 1, "assignments": {"q": [4, 5]}}
    assert result["diff"]["after_header"] == str(tmp_path / "l.json")
    assert os.listdir(str(tmp_path)) == []


def test_sticky_owner_keeps_busy_cards(run_module, tmp_path):
    """The owner's own vLLM now occupies the cards it holds: kept, changed false."""
    write_ledger(tmp_path, {"q": [0, 1, 2, 3]})
    failed, result = run_module(npu_assign.main, args(tmp_path, count=4))
    assert not failed and result["changed"] is False
    assert result["device_ids"] == [0, 1, 2, 3]


def test_own_containers_recognised_without_ledger(run_module, tmp_path, monkeypatch):
    containerise(tmp_path, monkeypatch, dict((p, "q") for p in SEED_PIDS))
    failed, result = run_module(npu_assign.main, args(tmp_path, count=4))
    assert not failed and result["device_ids"] == [0, 1, 2, 3] and result["changed"] is True
    failed, result = run_module(npu_assign.main, args(tmp_path, owner="r", count=8))
    assert failed
    assert "/dev/davinci0: held by q" in result["msg"]


def test_other_projects_containers_are_busy(run_module, tmp_path, monkeypatch):
    containerise(tmp_path, monkeypatch, {1316011: "qwen-coder", 1316012: None})
    failed, result = run_module(npu_assign.main, args(tmp_path, count=8))
    assert failed
    assert result["msg"].startswith(
        "cannot give 8 NPU chip(s) to q: not enough free NPU chips: 8 requested, 4 usable. "
        "Unavailable: /dev/davinci0: busy, pid 1316011 (compose project qwen-coder); "
        "/dev/davinci1: busy, pid 1316012; /dev/davinci2: busy, pid 1316013; "
        "/dev/davinci3: busy, pid 1316014")
    assert result["unavailable"][1] == {"device_id": 1, "device_path": "/dev/davinci1",
                                        "reason": "busy, pid 1316012"}
    # 1316012 is in a container docker does not know: rc 1 with partial output, no warning.
    assert "No such container" not in json.dumps(result.get("warnings", []))


def test_missing_docker_warns(run_module, tmp_path, monkeypatch):
    containerise(tmp_path, monkeypatch, {1316011: "q"})
    failed, result = run_module(npu_assign.main, args(
        tmp_path, docker_executable="docker-not-installed-here"))
    assert not failed and result["device_ids"] == [4, 5]
    # core 2.19 emits structured warnings: search their JSON.
    assert "docker not found: processes in containers (pids 1316011)" in json.dumps(
        result["warnings"])


def test_every_reason_listed(run_module, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE",
                       "910B4-24.1.rc3-8cards-one-card-nearly-full-no-process-table.txt")
    write_ledger(tmp_path, {"qwen-coder": [5]})
    failed, result = run_module(npu_assign.main, args(tmp_path, count=8, exclude=[7]))
    assert failed
    assert result["unavailable"] == [
        {"device_id": 4, "device_path": "/dev/davinci4",
         "reason": "97% of HBM used, no visible process"},
        {"device_id": 5, "device_path": "/dev/davinci5", "reason": "held by qwen-coder"},
        {"device_id": 7, "device_path": "/dev/davinci7", "reason": "excluded"},
    ]
    assert ledger(tmp_path)["assignments"] == {"qwen-coder": [5]}


def test_unhealthy_held_card_is_replaced(run_module, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE", "910-23.0.5-8cards-one-Warning-doc-handedited-elided.txt")
    write_ledger(tmp_path, {"q": [0]})
    failed, result = run_module(npu_assign.main, args(tmp_path, count=1))
    assert not failed and result["changed"] is True
    assert result["device_ids"] == [7] and result["previous_device_ids"] == [0]
    assert result["family"] == "910A"


def test_corrupt_ledger_reported(run_module, tmp_path):
    (tmp_path / "l.json").write_text('{"version": 1, "assignments": {"q": [1], "r": [1]}}')
    failed, result = run_module(npu_assign.main, args(tmp_path))
    assert failed
    assert "device 1 is held by both 'q' and 'r'" in result["msg"]
    assert str(tmp_path / "l.json") in result["msg"]
    assert (tmp_path / "l.json").read_text() == '{"version": 1, "assignments": {"q": [1], "r": [1]}}'


def test_absent_releases(run_module, tmp_path):
    write_ledger(tmp_path, {"q": [4, 5], "r": [6]})
    release = {"owner": "q", "state": "absent", "ledger_path": str(tmp_path / "l.json"),
               "executable": "/nonexistent/npu-smi"}
    failed, result = run_module(npu_assign.main, release)
    assert not failed and result["changed"] is True
    assert result["device_ids"] == [] and result["previous_device_ids"] == [4, 5]
    assert ledger(tmp_path)["assignments"] == {"r": [6]}
    failed, result = run_module(npu_assign.main, release)
    assert result["changed"] is False


def test_absent_without_ledger_creates_nothing(run_module, tmp_path):
    failed, result = run_module(npu_assign.main, {
        "owner": "q", "state": "absent", "ledger_path": str(tmp_path / "d" / "l.json")})
    assert not failed and result["changed"] is False and result["device_ids"] == []
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.parametrize("extra, message", [
    ({"count": 3}, "count 3 is not a valid tensor-parallel size: use a power of two"),
    ({"count": 0}, "count 0 is not a valid tensor-parallel size"),
    ({"owner": "Qwen Chat"}, "owner 'Qwen Chat' is not a valid deployment name"),
    # Issue 28: `$` matched before a trailing newline, so "q\n" became an owner in the ledger.
    ({"owner": "q\n"}, "owner 'q\\n' is not a valid deployment name: use lower-case letters, digits, '-' and '_'"),
    ({"owner": "q\nr"}, "owner 'q\\nr' is not a valid deployment name"),
    ({"owner": "q "}, "owner 'q ' is not a valid deployment name"),
    ({"count": None}, "count is required with state=present"),
    ({"idle_threshold_pct": 120}, "idle_threshold_pct must be between 0 and 100"),
])
def test_bad_options(run_module, tmp_path, extra, message):
    failed, result = run_module(npu_assign.main, args(tmp_path, **extra))
    assert failed and message in result["msg"]
    assert not os.path.exists(str(tmp_path / "l.json"))


def test_npu_smi_failure_leaves_ledger(run_module, tmp_path, monkeypatch):
    write_ledger(tmp_path, {"q": [4, 5]})
    monkeypatch.setenv("FAKE_NPU_SMI_RC", "1")
    monkeypatch.setenv("FAKE_NPU_SMI_STDERR", "dcmi module initialize failed. ret is -8005")
    failed, result = run_module(npu_assign.main, args(tmp_path))
    assert failed and "dcmi module initialize failed. ret is -8005" in result["msg"]
    assert ledger(tmp_path)["assignments"] == {"q": [4, 5]}


ANSIBLE = os.path.join(os.path.dirname(sys.executable), "ansible")


@pytest.mark.skipif(not os.path.exists(ANSIBLE), reason="no ansible CLI next to %s" % sys.executable)
def test_done_when_adhoc_command(tmp_path):
    """Issue 3's acceptance command, from a directory holding ./fake-npu-smi."""
    os.symlink(FAKE_NPU_SMI, str(tmp_path / "fake-npu-smi"))
    state = str(tmp_path / "l.json")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    for name in ("FAKE_NPU_SMI_SAMPLE", "FAKE_NPU_SMI_RC", "FAKE_DOCKER_PROJECTS"):
        env.pop(name, None)
    results = []
    for dummy in range(2):
        proc = subprocess.run(
            [ANSIBLE, "localhost", "-m", "ascendfleet.llm.npu_assign", "-a",
             json.dumps({"owner": "q", "count": 2, "executable": "./fake-npu-smi",
                         "ledger_path": state})],
            check=False, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        head, sep, body = proc.stdout.partition("=>")
        assert head.startswith("localhost | "), proc.stdout
        results.append((head.split("|")[1].strip(), yaml.safe_load(body)))
    (status1, first), (status2, second) = results
    assert status1 == "CHANGED" and first["changed"] is True
    assert len(first["device_ids"]) == 2 and set(first["device_ids"]) <= {4, 5, 6, 7}
    assert status2 == "SUCCESS" and second["changed"] is False
    assert second["device_ids"] == first["device_ids"]


def test_device_ids_give_the_restored_version_its_chips_back(run_module, tmp_path):
    # A rollout gave q chips 6,7; the rollback restores the version that ran on 4,5: the ledger
    # must say 4,5 again, or another deployment could later be given chips in use.
    write_ledger(tmp_path, {"q": [6, 7], "other": [0]})
    failed, result = run_module(npu_assign.main, give_back_args(tmp_path, device_ids=[5, 4]))
    assert not failed and result["changed"] is True
    assert result["device_ids"] == [4, 5] and result["previous_device_ids"] == [6, 7]
    assert ledger(tmp_path)["assignments"] == {"q": [4, 5], "other": [0]}
    failed, result = run_module(npu_assign.main, give_back_args(tmp_path, device_ids=[4, 5]))
    assert not failed and result["changed"] is False


def test_device_ids_held_by_another_owner_are_refused(run_module, tmp_path):
    write_ledger(tmp_path, {"q": [6, 7], "other": [4]})
    failed, result = run_module(npu_assign.main, give_back_args(tmp_path, device_ids=[4, 5]))
    assert failed
    assert result["msg"] == ("cannot give /dev/davinci4, /dev/davinci5 back to q: /dev/davinci4 (held by other). "
                             "To fix: release the other deployment's chips (state=absent) or roll back to a version on free chips")
    assert ledger(tmp_path)["assignments"] == {"q": [6, 7], "other": [4]}


def test_device_ids_with_count_or_absent_are_refused(run_module, tmp_path):
    failed, result = run_module(npu_assign.main, args(tmp_path, device_ids=[4]))
    assert failed and "mutually exclusive" in result["msg"]
    failed, result = run_module(npu_assign.main, give_back_args(tmp_path, state="absent", device_ids=[4]))
    assert failed and "goes with state=present" in result["msg"]


def test_a5_host_assigns_free_chips(run_module, tmp_path, monkeypatch):
    # DERIVED 950 sample: NPU 4 runs a python process that is not in a container of the owner (busy).
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE", "DERIVED-A5-950PR-v2-layout-from-910B3-25.2.0-one-python-process.txt")
    failed, result = run_module(npu_assign.main, args(tmp_path, count=4))
    assert not failed and result["family"] == "A5" and result["device_ids"] == [0, 1, 2, 3]
    failed, result = run_module(npu_assign.main, args(tmp_path, owner="r", count=4))
    assert failed and "4 requested, 3 usable" in result["msg"] and "/dev/davinci4: busy, pid 1601114" in result["msg"]
