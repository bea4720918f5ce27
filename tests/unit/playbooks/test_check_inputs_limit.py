"""playbooks/check_inputs.yml runs under any --limit (issue 28): the way ops teams re-run one
server (``--limit npu-a01``) used to skip the check play, which ran on localhost, so a bad play
knob passed with rc 0. The same held for playbooks/multinode_members.yml (the multi-node
deployments were then silently not rolled out) and the summary plays (no fleet summary). Real
ansible-playbook runs against an inventory whose hosts cannot be reached (ssh to port 9): the
checks run on the control node, so a refusal comes before any connection, and a play that did
reach for a host would show UNREACHABLE."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
ANSIBLE_PLAYBOOK = pathlib.Path(sys.executable).parent / "ansible-playbook"
INVENTORY = """\
all:
  children:
    ascend_servers:
      hosts:
        npu-a01: {ansible_host: 127.0.0.1, ansible_port: 9, ansible_connection: ssh, ansible_user: nobody}
        npu-a02: {ansible_host: 127.0.0.1, ansible_port: 9, ansible_connection: ssh, ansible_user: nobody}
"""


MULTINODE = """\
ascendfleet_deployments:
  - {name: chat, model: Qwen/Qwen3-8B}
  - {name: big, model: Qwen/Qwen3-8B, members: [npu-a01, npu-a02]}
"""


def run(tmp_path, playbook, *args, host_vars=None, group_vars=None):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(INVENTORY)
    if group_vars is not None:
        (tmp_path / "group_vars").mkdir(exist_ok=True)
        (tmp_path / "group_vars" / "ascend_servers.yml").write_text(group_vars)
    for host, text in (host_vars or {}).items():
        (tmp_path / "host_vars").mkdir(exist_ok=True)
        (tmp_path / "host_vars" / (host + ".yml")).write_text(text)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", str(inventory), str(ROOT / "playbooks" / playbook)] + list(args),
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def recap(out, host):
    line = next(line for line in out.splitlines() if line.startswith(host + " ") and "ok=" in line)
    return dict(part.split("=") for part in line.split(":", 1)[1].split())


@pytest.mark.parametrize("playbook", ["deploy_qwen.yml", "prefetch.yml", "verify.yml", "rollback.yml", "undeploy.yml"])
def test_a_bad_play_knob_is_refused_under_limit(tmp_path, playbook):
    rc, out = run(tmp_path, playbook, "--limit", "npu-a01", "-e", "vllm_compose_serial=half")
    assert rc == 2, out
    assert ("npu-a01: vllm_compose_serial: 'half' is neither a number of hosts (1 or more) nor a percentage "
            "(1% to 100%). Fix: give a batch size") in out, out
    assert "UNREACHABLE" not in out, out
    assert recap(out, "npu-a01")["failed"] == "1"
    assert "npu-a02" not in out


def test_a_shared_input_set_under_its_role_name_is_refused_under_limit(tmp_path):
    rc, out = run(tmp_path, "deploy_qwen.yml", "--limit", "npu-a02",
                  host_vars={"npu-a02": "model_prefetch_cache_dir: /mnt/disk2/modelscope\n"})
    assert rc == 2, out
    assert "npu-a02: model_prefetch_cache_dir: is set to '/mnt/disk2/modelscope', but" in out
    assert "vllm_compose_cache_dir reads '/var/lib/ascendfleet/modelscope' (the default; ascendfleet_cache_dir is not set)" in out
    assert "Fix: set ascendfleet_cache_dir (the one name every role reads)" in out
    assert "UNREACHABLE" not in out, out


def test_one_bad_host_stops_the_whole_run(tmp_path):
    """Without --limit, a bad input of one host ends the run for all (as the localhost play did):
    the good host does not go on to the next play."""
    rc, out = run(tmp_path, "deploy_qwen.yml", host_vars={"npu-a02": "vllm_compose_health_timeout: 0\n"})
    assert rc == 2, out
    assert "npu-a02: vllm_compose_health_timeout: 0 is outside the range" in out
    assert "UNREACHABLE" not in out, out
    assert "Verify the NPU hosts" not in out


def test_good_inputs_pass_without_touching_a_host(tmp_path):
    rc, out = run(tmp_path, "check_inputs.yml", "--limit", "npu-a01")
    assert rc == 0, out
    assert recap(out, "npu-a01") == {"ok": "1", "changed": "0", "unreachable": "0", "failed": "0", "skipped": "0",
                                     "rescued": "0", "ignored": "0"}


# --------------------------------------------------------------------------- multi-node deployments under --limit
@pytest.mark.parametrize("playbook", ["deploy_qwen.yml", "rollback.yml", "verify-fabric.yml", "undeploy.yml"])
def test_a_limit_that_splits_a_multinode_deployment_is_refused_before_any_change(tmp_path, playbook):
    """--limit npu-a01 used to empty the member group (its play ran on localhost): deploy_qwen.yml went
    on with rc 0 and never rolled out `big`, rollback.yml never rolled it back. Now the run stops
    before any host is contacted, naming host, deployment, the member left out and the fix."""
    rc, out = run(tmp_path, playbook, "--limit", "npu-a01", group_vars=MULTINODE)
    assert rc == 2, out
    assert ("npu-a01: deployment big: members: npu-a02 left out of this run by --limit; a multi-node deployment "
            "changes on all its members at once, so nothing was changed. Fix: run with --limit npu-a01,npu-a02 "
            "(every member of big in the run), or without --limit") in " ".join(out.split()), out
    assert "UNREACHABLE" not in out, out
    assert "npu-a02" not in out.split("PLAY RECAP")[1]


@pytest.mark.parametrize("names,refused", [("big", True), ("chat", False)])
def test_undeploy_under_limit_refuses_only_a_chosen_multinode_deployment(tmp_path, names, refused):
    """undeploy.yml --limit npu-a01 used to remove `big` from npu-a01 alone, leaving its head or worker
    half-running on npu-a02. Only the deployments chosen by undeploy_names are judged: removing the
    one-host `chat` from npu-a01 goes on (here to the host, which cannot be reached)."""
    rc, out = run(tmp_path, "undeploy.yml", "--limit", "npu-a01", "-e", "undeploy_names=" + names, group_vars=MULTINODE)
    flat = " ".join(out.split())
    assert ("npu-a01: deployment big: members: npu-a02 left out of this run by --limit" in flat) is refused, out
    if refused:
        assert rc == 2 and "UNREACHABLE" not in out, out
    else:
        assert rc == 4 and "fatal: [npu-a01]: UNREACHABLE!" in out, out


def test_a_member_missing_from_the_inventory_is_refused_on_every_member(tmp_path):
    rc, out = run(tmp_path, "deploy_qwen.yml", group_vars=MULTINODE.replace("[npu-a01, npu-a02]", "[npu-a01, npu-a02, npu-x9]"))
    assert rc == 2, out
    flat = " ".join(out.split())
    for host in ("npu-a01", "npu-a02"):
        assert ("%s: deployment big: members: npu-x9 not in the inventory group ascend_servers; a multi-node "
                "deployment changes on all its members at once, so nothing was changed. Fix: add npu-x9 to "
                "ascend_servers, or correct the members of big in ascendfleet_deployments" % host) in flat, out
    assert "UNREACHABLE" not in out and "Verify the NPU hosts" not in out


def test_a_limit_naming_every_member_reaches_the_multinode_plays(tmp_path):
    """Before, the member group stayed empty under any --limit: verify-fabric.yml ended with rc 0
    having checked nothing. Now its fabric play runs on both members (here: UNREACHABLE, as a play
    that reaches for the hosts shows)."""
    rc, out = run(tmp_path, "verify-fabric.yml", "--limit", "npu-a01,npu-a02", group_vars=MULTINODE)
    assert rc == 4, out
    fabric = out.split("PLAY [Measure and judge the fabric of the multi-node deployments]")[1]
    assert "fatal: [npu-a01]: UNREACHABLE!" in fabric and "fatal: [npu-a02]: UNREACHABLE!" in fabric, out


def test_a_limit_on_hosts_of_no_multinode_deployment_passes(tmp_path):
    # npu-a02 serves only one-host deployments: nothing to refuse, and the multi-node plays skip it.
    rc, out = run(tmp_path, "verify-fabric.yml", "--limit", "npu-a02",
                  host_vars={"npu-a02": "ascendfleet_deployments: [{name: chat, model: Qwen/Qwen3-8B}]\n"},
                  group_vars=MULTINODE)
    assert rc == 0, out
    assert "UNREACHABLE" not in out and "npu-a01 " not in out.split("PLAY RECAP")[1], out


@pytest.mark.parametrize("playbook,play", [("deploy_qwen.yml", "Summarise the fleet"),
                                           ("rollback.yml", "Summarise the fleet"),
                                           ("undeploy.yml", "Summarise the fleet"),
                                           ("status.yml", "Report the fleet status")])
def test_the_summary_play_runs_under_limit(tmp_path, playbook, play):
    """The summary and status-report plays ran on localhost, so --limit npu-a01 skipped them and no
    fleet summary was written. They run on the hosts of the run now (once, on the control node)."""
    rc, out = run(tmp_path, playbook, "--limit", "npu-a01", "--list-hosts")
    assert rc == 0, out
    section = out.split("): %s" % play)[1].split("play #")[0]
    assert "pattern: ['ascend_servers']" in section and "hosts (1):" in section and "npu-a01" in section, out


SUMMARY_PLAY = """\
- name: What the rollout of npu-a01 reported
  hosts: ascend_servers
  gather_facts: false
  tasks:
    - name: Note npu-a01's entry
      ansible.builtin.set_fact:
        __vllm_compose_results:
          - {host: npu-a01, deployment: chat, cards: [4], image: "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler",
             endpoint: "http://npu-a01:8001/v1", status: unchanged, reason: ""}
      when: inventory_hostname == 'npu-a01'

- name: Summarise the fleet (as deploy_qwen.yml's last play)
  hosts: ascend_servers
  gather_facts: false
  tasks:
    - name: Write and show the fleet summary
      ansible.builtin.include_role:
        name: ascendfleet.llm.vllm_compose
        tasks_from: summary
"""


@pytest.mark.parametrize("limit,silent", [(["--limit", "npu-a01"], []), ([], ["npu-a02"])])
def test_the_summary_is_written_under_limit_and_names_only_hosts_of_the_run(tmp_path, limit, silent):
    """The summary's tasks run once, on the control node, connecting to no host (the hosts here
    cannot be reached). A host --limit leaves out is not listed as a host without a result; one in
    the run without an entry is."""
    play = tmp_path / "summary.yml"
    play.write_text(SUMMARY_PLAY)
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(INVENTORY)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", str(inventory), str(play), "-e",
                           "ascendfleet_report_dir=" + str(tmp_path / "reports")] + limit,
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "UNREACHABLE" not in out, out
    record = json.loads((tmp_path / "reports" / "vllm_compose.json").read_text())
    assert [d["deployment"] for d in record["deployments"]] == ["chat"]
    assert record["hosts_without_result"] == silent


def test_one_check_judges_every_host_and_names_each_bad_one(tmp_path):
    """Issue 30: one task judges the inputs of every host of the run (run_once, on the control
    node), where each host used to run its own: every bad host is named with its variable and fix,
    in one refusal, before any host is contacted; with good inputs the run's hosts run one check in all."""
    bad = {"npu-a01": "vllm_compose_health_timeout: 0\n", "npu-a02": "model_prefetch_cache_dir: relative/dir\n"}
    rc, out = run(tmp_path, "check_inputs.yml", host_vars=bad)
    assert rc == 2, out
    flat = " ".join(out.split())
    assert "npu-a01: vllm_compose_health_timeout: 0 is outside the range" in flat, out
    assert "npu-a02: model_prefetch_cache_dir: 'relative/dir'" in flat, out
    assert "UNREACHABLE" not in out, out
    good = tmp_path / "good"
    good.mkdir()
    rc, out = run(good, "check_inputs.yml")
    assert rc == 0, out
    assert recap(out, "npu-a01")["ok"] == "1", out
    assert "npu-a02" not in out.split("PLAY RECAP")[1], out
