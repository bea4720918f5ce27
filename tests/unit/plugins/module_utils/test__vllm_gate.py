# -*- coding: utf-8 -*-
"""The health gate's and host survey's pure logic on real output: container logs of the stand-in
vLLM (captured from tests/sim/vllm: a crash-looping container on Docker, the -crash image's
engine-core failure, a never-healthy server polled 45 times), `docker inspect` of a
crash-looping container, and /proc trees built like the kernel's."""

import copy
import datetime
import json
import os
import pathlib

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_gate as gate
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_gate import (
    container_problem,
    describe_holder,
    device_ids,
    digest_log,
    holder_problem,
    log_report,
    models_problem,
    parse_listeners,
    port_holders,
    process_command,
    socket_pids,
    survey,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_status import parse_containers

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "vllm_gate"
NOW = datetime.datetime(2026, 12, 1, 7, 42, tzinfo=datetime.timezone.utc)
ROOT_CAUSE = ("RuntimeError: NPU function error: aclrtMalloc, error code is 207001 [ERROR] 2026-12-01-00:00:00 "
              "(PID:264, Device:0, RankID:-1) ERR00100 PTA call acl api failed")


def text(name):
    return (FIXTURES / name).read_text()


# --------------------------------------------------------------------------- digest_log


def test_engine_core_crash_leads_with_the_root_cause():
    digest = digest_log(text("log-engine-core-crash.txt"))
    assert digest["errors"] == [
        ROOT_CAUSE,
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        "EngineCore failed to start.",
    ]
    assert digest["access_lines_omitted"] == 0
    assert digest["lines"] == 20
    assert digest["tail"][-1] == ("[ascendfleet-sim] ASCENDFLEET_SIM_CRASH_AT_START is set: this image's engine "
                                  "dies while loading the model.")


def test_crash_loop_repeats_count_once():
    digest = digest_log(text("log-crash-looping.txt"))
    assert digest["errors"] == [
        "ImportError: libascend_hal.so: cannot open shared object file: No such file or directory",
        "EngineCore failed to start.",
    ]
    assert len(digest["tail"]) == 40
    assert digest["lines"] == 70


def test_access_lines_are_filtered_out_of_the_tail_and_counted():
    log = text("log-never-healthy.txt")
    digest = digest_log(log, tail=40)
    assert not any('HTTP/1.1" 503' in line for line in digest["tail"])
    # 62 lines, 45 of them access lines: the 17 others fit in the tail, all 45 are omitted.
    assert digest["lines"] == 62
    assert len(digest["tail"]) == 17
    assert digest["access_lines_omitted"] == 45
    assert digest["errors"] == ["EngineCore is not responding (ASCENDFLEET_SIM_NEVER_HEALTHY is set: this broken "
                                "image answers /health with 503 forever)."]
    assert digest["tail"][0].endswith("Available plugins for group vllm.platform_plugins: ascend -> vllm_ascend:register")


def test_omitted_counts_only_the_access_lines_the_tail_covers():
    log = "\n".join(["INFO:     boot %d" % i for i in range(5)] +
                    ['INFO:     127.0.0.1:1 - "GET /health HTTP/1.1" 503 Service Unavailable'] * 3 +
                    ["INFO:     late"] +
                    ['(APIServer pid=1) INFO:     127.0.0.1:2 - "GET /v1/models HTTP/1.1" 200 OK'] * 2)
    digest = digest_log(log, tail=2)
    assert digest["tail"] == ["INFO:     boot 4", "INFO:     late"]
    assert digest["access_lines_omitted"] == 5
    digest = digest_log(log, tail=1)
    assert digest["tail"] == ["INFO:     late"]
    assert digest["access_lines_omitted"] == 2


def test_argparse_errors_are_vllms_errors():
    log = ("usage: vllm serve [model_tag] [options]\n"
           "vllm: error: unrecognized arguments: --max-num-seq 8\n")
    assert digest_log(log)["errors"] == ["vllm: error: unrecognized arguments: --max-num-seq 8"]


def test_chained_tracebacks_give_each_exception_once():
    log = "\n".join([
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in <module>',
        "KeyError: 'rope_scaling'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "b.py", line 2, in <module>',
        "    raise ValueError(x)",
        "ValueError: unknown rope type",
        "INFO 12-01 08:00:00 [x.py:1] not an error",
        "WARNING 12-01 08:00:00 [x.py:1] a warning",
    ])
    assert digest_log(log)["errors"] == ["KeyError: 'rope_scaling'", "ValueError: unknown rope type"]


def test_log_report_shape():
    digest = digest_log(text("log-never-healthy.txt"), tail=40)
    report = log_report(digest, 40)
    assert report.splitlines()[0] == "vLLM's errors:"
    assert "Last 40 lines of the container log (45 access-log lines omitted):" in report
    assert log_report({"errors": [], "tail": [], "access_lines_omitted": 1}, 3) == (
        "Last 3 lines of the container log (1 access-log line omitted):\n(no log)")


# --------------------------------------------------------------------------- container_problem


def crash_looping():
    """The real crash-looping container, with the compose labels vllm_compose's containers carry."""
    raw = json.loads(text("inspect-crash-looping.json"))
    raw[0]["Config"]["Labels"].update({"com.docker.compose.project": "qwen", "com.docker.compose.service": "vllm-ascend",
                                       "io.ascendfleet.llm.deployment": "qwen"})
    return raw


def parsed(raw):
    return parse_containers(json.dumps(raw), NOW)["qwen"][0]


def test_restarting_container_fails_naming_the_exit_code_and_restarts():
    assert container_problem(parsed(crash_looping())) == (
        "the container is crash-looping: restarting after exit code 1, 7 restart(s) since the change")


def running(raw, restarts=0, started="2026-12-01T07:41:52.278184422Z", cid=None):
    raw = copy.deepcopy(raw)
    raw[0]["State"].update({"Status": "running", "Restarting": False, "ExitCode": 0, "StartedAt": started, "Pid": 4242})
    raw[0]["RestartCount"] = restarts
    if cid:
        raw[0]["Id"] = cid
    return parsed(raw)


def test_running_fresh_container_passes():
    assert container_problem(running(crash_looping())) is None


def test_restarted_since_the_change_fails_even_when_running_again():
    problem = container_problem(running(crash_looping(), restarts=2))
    assert problem == "the container crashed and was restarted 2 time(s) since the change"


def test_not_fresh_counts_restarts_from_the_baseline():
    base = running(crash_looping(), restarts=3)
    assert container_problem(running(crash_looping(), restarts=3), base, fresh=False) is None
    assert container_problem(running(crash_looping(), restarts=4), base, fresh=False).startswith(
        "the container crashed and was restarted 1 time(s)")


def test_not_fresh_first_look_is_its_own_baseline():
    """vllm_gate judges its first look without a baseline. A container the change left running (compose
    up changed nothing) that Docker had restarted 3 times before the run - a crash-loop whose cause the
    run repaired (the model put back) - used to fail there: 'restarted 3 time(s) since the change'; its
    restore failed the same way (sim: molecule vllm_compose_health_gate)."""
    assert container_problem(running(crash_looping(), restarts=3), None, fresh=False) is None
    assert container_problem(running(crash_looping(), restarts=3), None, fresh=True) == (
        "the container crashed and was restarted 3 time(s) since the change")


def test_replaced_or_restarted_during_the_gate_fails():
    base = running(crash_looping())
    assert container_problem(running(crash_looping(), cid="f" * 64), base).startswith(
        "the container was replaced by another one (ffffffffffff)")
    assert container_problem(running(crash_looping(), started="2026-12-01T07:45:00.1Z"), base).startswith(
        "the container was restarted since the gate began")


@pytest.mark.parametrize("status, expected", [
    ("exited", "the container exited (exit code 1)"),
    ("dead", "the container is dead (exit code 1)"),
    ("paused", "the container is paused, not running"),
    ("created", "the container is created, not running"),
])
def test_stopped_states_fail(status, expected):
    raw = crash_looping()
    raw[0]["State"]["Status"] = status
    assert container_problem(parsed(raw)) == expected


def test_oom_kill_is_named():
    raw = crash_looping()
    raw[0]["State"].update({"Status": "exited", "OOMKilled": True, "ExitCode": 137})
    assert container_problem(parsed(raw)) == "the container exited (exit code 137, killed for lack of memory)"


def test_no_container():
    assert container_problem(None).startswith("no container of the deployment exists")


# --------------------------------------------------------------------------- who holds a port

# /proc/net/tcp as the kernel prints it: a listener on 0.0.0.0:8000 (inode 41001), an established
# connection to it, and a listener on 127.0.0.1:8002 (inode 41002).
TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F40 0100007F:D4A2 01 00000000:00000000 00:00000000 00000000     0        0 41003 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F42 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41002 1 0000000000000000 100 0 0 10 0
"""
TCP6 = ("  sl  local_address                         remote_address                        st tx_queue rx_queue tr "
        "tm->when retrnsmt   uid  timeout inode\n"
        "   0: 00000000000000000000000000000000:1F41 00000000000000000000000000000000:0000 0A 00000000:00000000 "
        "00:00000000 00000000     0        0 41004 1 0000000000000000 100 0 0 10 0\n")
CID_OWN = "a" * 64
CID_OLD = "b" * 64


def test_parse_listeners_reads_only_listening_sockets():
    assert parse_listeners(TCP, TCP6) == {8000: ["41001"], 8002: ["41002"], 8001: ["41004"]}
    assert parse_listeners("") == {}


@pytest.fixture
def proc(tmp_path):
    """A /proc tree: pid 100 (vLLM in container aaaa) holds 8000, pid 200 (http.server, no container) holds 8002."""
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "tcp").write_text(TCP)
    (tmp_path / "net" / "tcp6").write_text(TCP6)
    for pid, inode, cgroup, cmd in ((100, "41001", "0::/system.slice/docker-%s.scope\n" % CID_OWN,
                                     b"vllm\0serve\0/root/.cache/modelscope/hub/models/Qwen/Qwen3-8B\0"),
                                    (200, "41002", "0::/user.slice/session-1.scope\n", b"python3\0-m\0http.server\x008002\0")):
        fd = tmp_path / str(pid) / "fd"
        fd.mkdir(parents=True)
        os.symlink("socket:[%s]" % inode, str(fd / "7"))
        os.symlink("/dev/null", str(fd / "0"))
        (tmp_path / str(pid) / "cgroup").write_text(cgroup)
        (tmp_path / str(pid) / "cmdline").write_bytes(cmd)
    (tmp_path / "self").mkdir()
    return tmp_path


def test_socket_pids_and_commands(proc):
    assert socket_pids(["41001", "41002", "41004"], str(proc)) == {"41001": [100], "41002": [200], "41004": []}
    assert process_command(200, str(proc)) == "python3 -m http.server 8002"
    assert process_command(999, str(proc)) == "?"


def test_port_holders_name_the_container(proc):
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, "%s /qwen-vllm-ascend-1 qwen\n" % CID_OWN, ""

    # pid 200 runs in a cgroup named like a container this Docker does not know (a simulated host
    # is itself a container of the outer Docker): a plain process of the host.
    (proc / "200" / "cgroup").write_text("0::/docker/%s\n" % CID_OLD)
    holders = port_holders([8000, 8002, 8003], run, str(proc))
    assert holders[8000] == [{"pid": 100, "command": "vllm serve /root/.cache/modelscope/hub/models/Qwen/Qwen3-8B",
                              "container_id": CID_OWN, "container_name": "qwen-vllm-ascend-1", "project": "qwen"}]
    assert holders[8002] == [{"pid": 200, "command": "python3 -m http.server 8002", "container_id": None,
                              "container_name": None, "project": None}]
    assert holders[8003] == []
    assert len(calls) == 1 and calls[0][-2:] == [CID_OWN, CID_OLD]


# docker inspect of qwen and chat, captured on a sim host after their deploy (what vllm_host_info
# read first in the same execution).
INSPECTED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "vllm_noop" / "inspect-two-projects.json").read_text())
CID_QWEN = "d73bd7ec9f8139bd12583ba284018ac033fd9716781da9733433a26011156de4"


def test_port_holders_take_the_containers_already_inspected(proc):
    # The container holding the port is one the caller inspected: its name and project come from
    # there, no second docker inspect; a container it did not inspect is still asked (and only it).
    (proc / "100" / "cgroup").write_text("0::/system.slice/docker-%s.scope\n" % CID_QWEN)
    calls = []

    def run(argv):
        calls.append(argv)
        return 1, "", "Error: No such object: %s\n" % CID_OLD

    holders = port_holders([8000, 8002], run, str(proc), inspected=INSPECTED)
    assert holders[8000] == [{"pid": 100, "command": "vllm serve /root/.cache/modelscope/hub/models/Qwen/Qwen3-8B",
                              "container_id": CID_QWEN, "container_name": "qwen-vllm-ascend-1", "project": "qwen"}]
    assert calls == []
    # The same answer as the one docker inspect the holders needed before (docker's own --format line).
    alone = port_holders([8000, 8002], lambda argv: (0, "%s /qwen-vllm-ascend-1 qwen\n" % CID_QWEN, ""), str(proc))
    assert alone == holders
    (proc / "200" / "cgroup").write_text("0::/docker/%s\n" % CID_OLD)
    holders = port_holders([8000, 8002], run, str(proc), inspected=INSPECTED)
    assert [argv[-1:] for argv in calls] == [[CID_OLD]]
    assert holders[8000][0]["project"] == "qwen" and holders[8002][0]["container_id"] is None


def test_port_holder_in_a_cgroup_docker_does_not_know_is_a_plain_process(proc):
    (proc / "200" / "cgroup").write_text("0::/docker/%s\n" % CID_OLD)
    holders = port_holders([8002], lambda argv: (1, "", "Error: No such object: %s\n" % CID_OLD), str(proc))
    assert holders[8002][0]["container_id"] is None
    # Docker not answering at all: the cgroup's id is all there is.
    holders = port_holders([8002], lambda argv: (1, "", "Cannot connect to the Docker daemon"), str(proc))
    assert holders[8002][0]["container_id"] == CID_OLD


def test_holder_problem():
    own = {"pid": 100, "container_id": CID_OWN, "container_name": "qwen-vllm-ascend-1", "project": "qwen", "command": "vllm serve x"}
    old = {"pid": 300, "container_id": CID_OLD, "container_name": "qwen-old-vllm-ascend-1", "project": "qwen-old",
           "command": "vllm serve x"}
    assert holder_problem(8000, [own], CID_OWN, "qwen") is None
    assert holder_problem(8000, [old], CID_OWN, "qwen") == (
        "port 8000 is answered by container qwen-old-vllm-ascend-1 of compose project qwen-old (pid 300: vllm serve x), "
        "not by deployment qwen's container (aaaaaaaaaaaa)")
    assert holder_problem(8000, [], CID_OWN, "qwen").startswith("port 8000 answers but no process on this host")
    web = {"pid": 200, "container_id": None, "project": None, "command": "python3 -m http.server 8002"}
    assert describe_holder(web) == "pid 200 (python3 -m http.server 8002)"


def test_models_problem():
    root = "/root/.cache/modelscope/hub/models/Qwen/Qwen3-8B"
    answer = {"object": "list", "data": [{"id": "Qwen3-8B", "root": root}]}
    assert models_problem(8001, answer, "Qwen3-8B", root) is None
    assert models_problem(8001, answer, "Qwen3-8B") is None
    assert models_problem(8001, answer, "Qwen", root) == "/v1/models on port 8001 lists 'Qwen3-8B', not 'Qwen'"
    assert models_problem(8001, answer, "Qwen3-8B", "/elsewhere") == (
        "/v1/models on port 8001 serves 'Qwen3-8B' from %s, not from /elsewhere" % root)
    assert models_problem(8001, None, "Qwen") == "/v1/models on port 8001 did not answer a model list"


# --------------------------------------------------------------------------- survey


def test_device_ids_from_host_config():
    devices = [{"PathOnHost": "/dev/davinci4", "PathInContainer": "/dev/davinci4", "CgroupPermissions": "rwm"},
               {"PathOnHost": "/dev/davinci_manager", "PathInContainer": "/dev/davinci_manager", "CgroupPermissions": "rwm"},
               {"PathOnHost": "/dev/davinci5", "PathInContainer": "/dev/davinci5", "CgroupPermissions": "rwm"}]
    assert device_ids(devices) == [4, 5]
    assert device_ids(None) == []


def old_qwen():
    return {"qwen": [{"name": "qwen-vllm-ascend-1", "deployment": "qwen", "state": "running", "port": 8000,
                      "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "device_ids": [4, 5]}]}


def test_renamed_deployment_is_an_orphan_refused_on_its_port_and_cards():
    found = survey("sim-1", old_qwen(), [{"name": "qwen-new", "port": 8000, "devices": [5, 6]}], ["qwen-new"],
                   ledger={"qwen": [4, 5]}, project_dirs=["qwen"])
    assert [o["name"] for o in found["orphans"]] == ["qwen"]
    orphan = found["orphans"][0]
    assert (orphan["ports"], orphan["cards"], orphan["project_dir"]) == ([8000], [4, 5], True)
    assert orphan["summary"] == (
        "qwen is not in ascendfleet_deployments but holds container qwen-vllm-ascend-1 (running), port 8000, cards 4, 5. "
        "Fix: add {name: qwen, state: absent} to ascendfleet_deployments and run again: that removes the old "
        "deployment's containers, project directory and cards")
    assert found["errors"] == [
        "sim-1: deployment qwen-new: port: 8000 is held by orphan deployment qwen (qwen-vllm-ascend-1, "
        "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler), which ascendfleet_deployments no longer names. Fix: add "
        "{name: qwen, state: absent} to ascendfleet_deployments and run again: that removes the old deployment's "
        "containers, project directory and cards, or give qwen-new another port",
        "sim-1: deployment qwen-new: devices: card 5 is held by orphan deployment qwen (qwen-vllm-ascend-1), which "
        "ascendfleet_deployments no longer names. Fix: add {name: qwen, state: absent} to ascendfleet_deployments "
        "and run again: that removes the old deployment's containers, project directory and cards",
    ]


def test_orphan_elsewhere_is_listed_not_refused():
    found = survey("sim-1", old_qwen(), [{"name": "small", "port": 8001, "devices": None}], ["small"],
                   ledger={"qwen": [4, 5], "small": [6]})
    assert [o["name"] for o in found["orphans"]] == ["qwen"]
    assert found["errors"] == []


def test_absent_names_and_foreign_compose_projects_are_not_orphans():
    projects = dict(old_qwen(), web=[{"name": "web-nginx-1", "deployment": None, "state": "running", "port": None}])
    found = survey("sim-1", projects, [], ["qwen"], ledger={"qwen": [4, 5]})
    assert found == {"orphans": [], "errors": [], "port_holders": {}}


def test_ledger_only_orphan_holds_cards():
    found = survey("sim-1", {}, [{"name": "qwen-new", "port": 8000, "devices": [4, 5]}], ["qwen-new"], ledger={"gone": [4]})
    assert found["orphans"][0]["cards"] == [4]
    assert found["errors"][0].startswith("sim-1: deployment qwen-new: devices: card 4 is held by orphan deployment gone "
                                         "(in the npu_assign ledger)")


def test_foreign_process_and_other_deployment_on_a_planned_port():
    web = {"pid": 200, "command": "python3 -m http.server 8002", "container_id": None, "container_name": None, "project": None}
    mine = {"pid": 100, "command": "vllm serve", "container_id": CID_OWN, "container_name": "a-vllm-ascend-1", "project": "a"}
    other = {"pid": 101, "command": "vllm serve", "container_id": CID_OLD, "container_name": "b-vllm-ascend-1", "project": "b"}
    planned = [{"name": "a", "port": 8000, "devices": None}, {"name": "b", "port": 8002, "devices": None},
               {"name": "c", "port": 8001, "devices": None}]
    found = survey("sim-1", {}, planned, ["a", "b", "c"], listeners={8000: [mine], 8002: [web], 8001: [other]})
    assert found["errors"] == [
        "sim-1: deployment b: port: 8002 is already held by pid 200 (python3 -m http.server 8002), which is not a "
        "deployment of this collection; vLLM could not bind it and the health gate must not be answered by it. Fix: "
        "stop that process or give b another port",
        "sim-1: deployment c: port: 8001 is held by deployment b today (container b-vllm-ascend-1 of compose project b "
        "(pid 101: vllm serve)). Fix: move one of them to a free port first, then swap in a second run",
    ]


def test_port_of_a_deployment_being_removed_is_free_for_the_renamed_one():
    old = {"pid": 300, "command": "vllm serve", "container_id": CID_OLD, "container_name": "qwen-vllm-ascend-1", "project": "qwen"}
    found = survey("sim-1", old_qwen(), [{"name": "qwen-new", "port": 8000, "devices": None}], ["qwen", "qwen-new"],
                   ledger={"qwen": [4, 5]}, listeners={8000: [old]})
    assert found["errors"] == [] and found["orphans"] == []


# --------------------------------------------------------------------------- last-known-good model

def _completeness(answers):
    def ask(model, revision, key):
        return answers[(model, key or revision)]
    return ask


def test_a_last_known_good_on_a_damaged_other_model_refuses_the_change():
    planned = [{"name": "qwen", "model": "Qwen/Qwen3-8B", "revision": "master", "port": 8000}]
    last_good = {"qwen": {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "v1", "image": "x"}}
    answers = {("Qwen/Qwen3.5-27B", "v1"): {"complete": False, "reasons": ["model-00002-of-00011.safetensors is missing"]}}
    errors = gate.last_good_problems("npu-a01", planned, last_good, _completeness(answers))
    assert errors == [
        "npu-a01: deployment qwen: model: its last-known-good serves Qwen/Qwen3.5-27B (revision v1), which is not "
        "complete in the cache (model-00002-of-00011.safetensors is missing), so a failed change could not roll "
        "back. Fix: fetch it again before the change: ansible-playbook playbooks/prefetch.yml --limit npu-a01 -e "
        "'{\"model_prefetch_models\": [{\"model\": \"Qwen/Qwen3.5-27B\", \"revision\": \"v1\"}]}'; nothing was changed"]


def test_a_complete_or_same_or_unrecorded_last_known_good_passes():
    planned = [{"name": "a", "model": "Qwen/Qwen3-8B", "revision": "master"},
               {"name": "b", "model": "Qwen/Qwen3-8B", "revision": "master"},
               {"name": "c", "model": "Qwen/Qwen3-8B"},
               {"name": "d", "model": "Qwen/Qwen3-8B"}]
    last_good = {"a": {"model": "Qwen/Qwen3.5-27B", "revision": "master"},
                 "b": {"model": "Qwen/Qwen3-8B", "revision": "master"},   # the plan's own model: the planner judges it
                 "c": {"image": "quay.io/ascend/vllm-ascend:v0.17.0rc1"}}  # a record written before model was kept
    asked = []

    def ask(model, revision, key):
        asked.append((model, revision, key))
        return {"complete": True, "reasons": []}
    assert gate.last_good_problems("h", planned, last_good, ask) == []
    assert asked == [("Qwen/Qwen3.5-27B", "master", None)]


# The revisions cache layout (issue 29): last-known-good names the revision directory it mounts.
COMMIT_A = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
COMMIT_B = "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"
A_BYTES = {"config.json": b'{"model_type": "qwen3_5"}\n', "model-00001-of-00002.safetensors": b"\x01" * 4096,
           "model-00002-of-00002.safetensors": b"\x02" * 2048}
B_BYTES = dict(A_BYTES, **{"model-00002-of-00002.safetensors": b"\x03" * 3000})


def _revision(cache, key, contents):
    """A complete revision directory, written as the prefetch writes it (staging, finish)."""
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_revisions as mr
    import hashlib
    files = [{"path": p, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()} for p, b in sorted(contents.items())]
    staging = cache / "revisions" / "Qwen" / "Qwen3.5-27B" / (".staging-" + key)
    for path, data in contents.items():
        (staging / path).parent.mkdir(parents=True, exist_ok=True)
        (staging / path).write_bytes(data)
    mr.finish(str(staging), mr.revision_dir(str(cache), "Qwen/Qwen3.5-27B", key), "Qwen/Qwen3.5-27B", key, key,
              ["master"], files, "http://hub")
    mr.record_ref(str(cache), "Qwen/Qwen3.5-27B", "master", key, key, "2026-12-05T02:00:00Z")


def _revision_completeness(cache):
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_revisions as mr

    def ask(model, revision, key):
        return mr.revision_completeness(str(cache), model, key) if key else facts.model_completeness(str(cache), model, revision)
    return ask


def test_a_moved_branch_does_not_deadlock_on_its_last_known_good_revision(tmp_path):
    """Issue 29's deadlock: master moved A -> B; last-known-good serves A. In the revisions layout B
    is fetched beside A, A's directory stays complete, so the change to B is not refused."""
    _revision(tmp_path, COMMIT_A, A_BYTES)
    _revision(tmp_path, COMMIT_B, B_BYTES)
    planned = [{"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master", "revision_key": COMMIT_B}]
    last_good = {"qwen": {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master", "revision_key": COMMIT_A}}
    assert gate.last_good_problems("npu-a01", planned, last_good, _revision_completeness(tmp_path)) == []


def test_a_last_known_good_revision_that_is_gone_refuses_the_change_naming_its_directory(tmp_path):
    _revision(tmp_path, COMMIT_B, B_BYTES)
    planned = [{"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master", "revision_key": COMMIT_B}]
    last_good = {"qwen": {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master", "revision_key": COMMIT_A}}
    assert gate.last_good_problems("npu-a01", planned, last_good, _revision_completeness(tmp_path)) == [
        "npu-a01: deployment qwen: model: its last-known-good serves Qwen/Qwen3.5-27B (revision master, directory "
        "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15), which is not complete in the cache (no completion marker), so a "
        "failed change could not roll back. Fix: fetch it again before the change: ansible-playbook "
        "playbooks/prefetch.yml --limit npu-a01 -e '{\"model_prefetch_models\": [{\"model\": \"Qwen/Qwen3.5-27B\", "
        "\"revision\": \"3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15\"}]}'; nothing was changed"]


def test_a_last_known_good_on_the_planned_revision_is_left_to_the_planner(tmp_path):
    planned = [{"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master", "revision_key": COMMIT_B}]
    last_good = {"qwen": {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master", "revision_key": COMMIT_B}}
    assert gate.last_good_problems("npu-a01", planned, last_good, _revision_completeness(tmp_path)) == []
