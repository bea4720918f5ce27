"""scripts/fleet-test.sh, the entry point ops teams run on their own inventory
(docs/testing-your-fleet.md): the plan (pure: ansible-inventory + the mapping file) and, with
Docker and the sim's assets, the example inventory end to end (with a vaulted API key) and two
broken changes to it that must fail with the collection's own message."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sim_ready import sim_ready  # noqa: E402  pylint: disable=wrong-import-position

TOP = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = TOP / "inventories" / "example"
PLAN = TOP / "tests" / "sim" / "fleetci" / "plan.py"
BIN = pathlib.Path(sys.executable).parent
ENV = dict(os.environ, PATH="%s:%s" % (BIN, os.environ.get("PATH", "")), ANSIBLE_CONFIG=str(TOP / "ansible.cfg"))
SECRET = "fleet-test-secret-7f3a9c"


def copy_example(tmp_path):
    inv = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inv)
    return inv


def plan(tmp_path, inv, *extra):
    work = tmp_path / "work"
    result = subprocess.run([sys.executable, str(PLAN), "--inventory", str(inv / "hosts.yml"), "--work", str(work),
                             "--prefix", "fleetci-plan", "--roll-to", "v0.18.0rc1", *extra],
                            capture_output=True, text=True, env=ENV, check=False)
    return result, work


def test_plan_maps_one_host_per_group_onto_matching_profiles(tmp_path):
    result, work = plan(tmp_path, EXAMPLE)
    assert result.returncode == 0, result.stderr
    got = json.loads((work / "plan.json").read_text())
    hosts = {h["real"]: h for h in got["hosts"]}
    assert sorted(hosts) == ["npu-b01", "npu-c01"]
    assert got["limit"] == "npu-b01,npu-c01,localhost"
    b01, c01 = hosts["npu-b01"], hosts["npu-c01"]
    assert b01["sim"] == "fleetci-plan-npu-b01"
    assert b01["stands_for"] == ["npu-b01", "npu-b02", "npu-b03"]
    assert c01["stands_for"] == ["npu-c01", "npu-c02"]
    # The seed's 910B2 host is the stock profile; the A3 host with two busy chips is derived.
    assert b01["profile"] == "seed-910b2"
    assert b01["facts"] == {"family": "910B", "model": "910B2", "chips": 8, "busy": [0, 1, 2, 3], "driver": "25.2.1"}
    assert c01["facts"] == {"family": "A3", "model": "Ascend910", "chips": 16, "busy": [0, 1], "driver": "25.2.1"}
    derived = json.loads((work / "profiles" / ("%s.json" % c01["profile"])).read_text())
    busy = [c["device"] for n in derived["npus"] for c in n["chips"] if c.get("processes")]
    assert busy == [0, 1]
    assert [(d["name"], d["port"]) for d in b01["deployments"]] == [("qwen", 8000), ("qwen-small", 8001)]
    hub = json.loads((work / "hub.json").read_text())
    assert hub["models"] == {
        "Qwen/Qwen3.5-27B": {"revisions": ["master"], "shards": 11, "weights_bytes": 11 << 20},
        "Qwen/Qwen3-8B": {"revisions": ["v1.0"], "shards": 5, "weights_bytes": 5 << 20},
    }
    assert got["image_tags"] == ["v0.17.0rc1-a3-openeuler", "v0.17.0rc1-openeuler",
                                 "v0.18.0rc1-a3-openeuler", "v0.18.0rc1-openeuler"]
    sim_inv = (work / "sim-inventory.yml").read_text()
    assert "fleetci-plan-npu-b01:\n      ascendfleet_sim_profile: seed-910b2" in sim_inv


def test_plan_overlay_replaces_connection_variables_only_for_simulated_hosts(tmp_path):
    result, work = plan(tmp_path, EXAMPLE)
    assert result.returncode == 0, result.stderr
    overlay = work / "overlay.yml"
    out = subprocess.run(
        [str(BIN / "ansible"), "all", "-i", str(EXAMPLE / "hosts.yml"), "-e", "@%s" % overlay, "-m", "ansible.builtin.debug",
         "-a", json.dumps({"msg": "{{ ansible_connection }} {{ ansible_host }} {{ ansible_user }} {{ ansible_become }}"})],
        capture_output=True, text=True, env=ENV, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "npu-b01 | SUCCESS => \n    msg: community.docker.docker fleetci-plan-npu-b01 root False" in out.stdout
    assert "npu-b02 | SUCCESS => \n    msg: community.docker.docker fleetci-plan-not-simulated-npu-b02 root False" in out.stdout


def test_plan_names_the_host_and_the_fix_when_hardware_is_missing(tmp_path):
    inv = copy_example(tmp_path)
    mapping = inv / "ascendfleet-sim.yml"
    mapping.write_text(mapping.read_text().replace("  npu_a3:\n", "  npu_a3_typo:\n"))
    result, _work = plan(tmp_path, inv)
    assert result.returncode == 2
    assert "group npu_a3_typo is not in inventory" in result.stderr or "host npu-c01" in result.stderr
    mapping.write_text(mapping.read_text().replace("  npu_a3_typo:\n", "  npu_a3:\n").replace("chips: 16", "chips: 12"))
    result, _work = plan(tmp_path, inv)
    assert result.returncode == 2
    assert "mapping group npu_a3: no simulated host has family A3, chips 12" in result.stderr


def test_plan_refuses_a_host_whose_groups_disagree(tmp_path):
    inv = copy_example(tmp_path)
    hosts = inv / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("        npu-c02:\n", "        npu-b02:\n        npu-c02:\n"))
    result, _work = plan(tmp_path, inv)
    assert result.returncode == 2
    assert "host npu-b02 is in mapped groups npu_910b, npu_a3" in result.stderr


def test_plan_asks_a_multi_node_deployment_on_its_head_only_and_simulates_every_member(tmp_path):
    inv = copy_example(tmp_path)
    # A two-node deployment on the A3 pair, beside each group's own deployments.
    (inv / "group_vars" / "npu_a3" / "multinode.yml").write_text(
        "---\nascendfleet_deployments:\n"
        "  - {name: big, model: Qwen/Qwen3.5-27B, preset: qwen3.5-27b, port: 8010, members: [npu-c01, npu-c02]}\n")
    result, _work = plan(tmp_path, inv)
    assert result.returncode == 2
    assert "deployment big spans npu-c01, npu-c02, but npu-c02 is not simulated" in result.stderr
    assert "give its group sample: all" in result.stderr
    mapping = inv / "ascendfleet-sim.yml"
    mapping.write_text(mapping.read_text().replace("busy: [0, 1], driver: 25.2.1}\n    sample: 1",
                                                   "busy: [0, 1], driver: 25.2.1}\n    sample: all"))
    result, work = plan(tmp_path, inv)
    assert result.returncode == 0, result.stderr
    hosts = {h["real"]: h for h in json.loads((work / "plan.json").read_text())["hosts"]}
    assert sorted(hosts) == ["npu-b01", "npu-c01", "npu-c02"]
    assert [(d["name"], d["api"]) for d in hosts["npu-c01"]["deployments"]] == [("big", True)]
    assert [(d["name"], d["api"]) for d in hosts["npu-c02"]["deployments"]] == [("big", False)]
    assert all(d["api"] for d in hosts["npu-b01"]["deployments"])


# ---------------------------------------------------------------- end to end, with Docker

def needs_sim(test):
    """End to end on a simulated fleet: needs Docker and the sim's assets; marked `fleet` (pytest.ini)."""
    return pytest.mark.fleet(pytest.mark.skipif(not sim_ready(), reason="needs Docker and the sim's assets (make sim-assets)")(test))


PREFIX = "fleetci-t"


@pytest.fixture(scope="module")
def sim_fleet():
    """One simulated fleet for the module: the example's run keeps it up (--keep), the broken
    changes then run against the deployed fleet, as a team's next change would; removed at the end."""
    works = []
    yield works
    if works:
        env = dict(ENV, ASCENDFLEET_SIM_INVENTORY=str(works[-1] / "sim-inventory.yml"),
                   ASCENDFLEET_SIM_NETWORK=PREFIX + "-net", ASCENDFLEET_SIM_HUB_NAME=PREFIX + "-hub",
                   ASCENDFLEET_SIM_WITH_REGISTRY="0")
        subprocess.run([str(TOP / "tests" / "sim" / "fleet.sh"), "down"], env=env, capture_output=True, timeout=600, check=False)


def fleet_test(tmp_path, sim_fleet, inv, *extra):
    work = tmp_path / "work"
    sim_fleet.append(work)
    result = subprocess.run([str(TOP / "scripts" / "fleet-test.sh"), "-i", str(inv / "hosts.yml"), "--prefix", PREFIX,
                             "--work", str(work), "--keep", *extra],
                            capture_output=True, text=True, env=ENV, timeout=2400, check=False)
    return result, work


@needs_sim
def test_example_with_a_vaulted_api_key_converges_is_idempotent_answers_and_rolls_forward(tmp_path, sim_fleet):
    inv = copy_example(tmp_path)
    password = tmp_path / "vault-password"
    password.write_text("fleet-test-vault-password\n")
    vault = inv / "group_vars" / "ascend_servers" / "vault.yml"
    vault.write_text("---\nvault_vllm_api_key: %s\n" % SECRET)
    subprocess.run([str(BIN / "ansible-vault"), "encrypt", "--vault-password-file", str(password), str(vault)],
                   check=True, capture_output=True, env=ENV)
    assert SECRET not in vault.read_text()
    with open(inv / "group_vars" / "ascend_servers" / "rollout.yml", "a", encoding="utf-8") as handle:
        handle.write('vllm_compose_api_key: "{{ vault_vllm_api_key }}"\n')
    result, work = fleet_test(tmp_path, sim_fleet, inv, "--roll-to", "v0.18.0rc1", "--vault-password-file", str(password))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    for phase in ("sim-up", "converge", "idempotence", "verify", "roll-forward", "verify-rolled"):
        assert "fleet-test: %-13s ok" % phase in out, out[-3000:]
    assert "qwen-small runs quay.io/ascend/vllm-ascend:v0.18.0rc1-a3-openeuler" in (work / "verify-rolled.log").read_text()
    assert "qwen runs quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler" in (work / "verify-rolled.log").read_text()
    # The secret stays on the sim hosts: not in the output, the work directory or the copy's files.
    assert SECRET not in out
    for path in list(work.rglob("*")) + list(inv.rglob("*")):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@needs_sim
@pytest.mark.parametrize("change,message", [
    # Two deployments on one port.
    (("group_vars/ascend_servers/deployments.yml", "    port: 8001\n", "    port: 8000\n"),
     "npu-b01: deployment qwen-small: port: 8000 is also the port of deployment qwen"),
    # The A3 image forced onto the 910B group.
    (("group_vars/npu_910b/deployments.yml", "ascendfleet_deployment_defaults:\n",
      "ascendfleet_image_variant: \"-a3\"\nascendfleet_deployment_defaults:\n"),
     "is the A3 image variant but the host's chips are 910B"),
], ids=["port-collision", "image-for-the-wrong-chip"])
def test_a_broken_change_fails_with_the_collections_message(tmp_path, sim_fleet, change, message):
    inv = copy_example(tmp_path)
    path, old, new = change
    text = (inv / path).read_text()
    assert old in text
    (inv / path).write_text(text.replace(old, new))
    result, _work = fleet_test(tmp_path, sim_fleet, inv)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-3000:]
    assert message in out, out[-6000:]
    assert "fleet-test: converge failed" in out
    assert ("fleet-test: npu-b01 ran on sim host fleetci-t-npu-b01 (stock profile seed-910b2; mapping group "
            "npu_910b) and stands for npu-b01, npu-b02, npu-b03") in out
