"""The rollback's image check (issue 28): playbooks/rollback.yml restores a version with
`pull: never`, so a version whose image was pruned from the host since used to be put back (its
compose file, its cards) and then fail in `docker compose up`. Its pre-flight now runs the image
pre-flight (roles/vllm_compose/tasks/preflight_images.yml) on the images the versions to return
to record in their state.json, and refuses a missing one before anything changes.

Real ansible-playbook runs the role's file on this machine (connection local) over a project
root in a temporary directory; `docker` is a stand-in on PATH that knows one image and logs every
call (the check must only inspect: no pull, no registry probe, nothing else)."""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[4]
ANSIBLE_PLAYBOOK = pathlib.Path(sys.executable).parent / "ansible-playbook"
PRESENT = "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"
PRUNED = "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"
FAKE_DOCKER = """#!/bin/sh
echo "$*" >> "%(log)s"
if [ "$1 $2" = "image inspect" ]; then
  for ref; do :; done
  if [ "$ref" = "%(present)s" ]; then echo sha256:9c216db4e9b4; exit 0; fi
  echo "Error response from daemon: No such image: $ref" >&2; exit 1
fi
echo "unexpected docker call: $*" >&2; exit 2
"""
PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - name: The rollback's image check
      ansible.builtin.include_role:
        name: ascendfleet.llm.vllm_compose
        tasks_from: preflight_images
      vars:
        __vllm_compose_source_rollback: %(deployments)s
        __vllm_compose_source_defer: %(defer)s
        vllm_compose_project_root: %(root)s
        vllm_compose_rollback_target: %(target)s
        vllm_compose_image_source: pull
    - name: Keep what was noted
      ansible.builtin.copy:
        content: "{{ __vllm_compose_source_refusals | to_json }}"
        dest: %(refusals)s
        mode: "0600"
"""


def run(tmp_path, versions, deployments, target="previous", defer=False):
    root = tmp_path / "opt"
    for name, image in versions.items():
        (root / name / target).mkdir(parents=True)
        state = {"name": name, "image": image, "device_ids": [4, 5], "port": 8000}
        (root / name / target / "state.json").write_text(json.dumps(state, indent=4))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "docker.log"
    (bindir / "docker").write_text(FAKE_DOCKER % {"log": log, "present": PRESENT})
    (bindir / "docker").chmod(0o755)
    play = tmp_path / "play.yml"
    play.write_text(PLAY % {"deployments": json.dumps([{"name": d} for d in deployments]), "defer": str(defer).lower(),
                            "root": root, "target": target, "refusals": tmp_path / "refusals.json"})
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), PATH="%s:%s" % (bindir, os.environ["PATH"]))
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", "npu-a01,", "-c", "local", "-e",
                           "ansible_python_interpreter=" + sys.executable, str(play)],
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    calls = log.read_text().splitlines() if log.exists() else []
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split()), calls


def test_a_version_whose_image_was_pruned_is_refused(tmp_path):
    rc, out, calls = run(tmp_path, {"qwen": PRUNED, "chat": PRESENT}, ["qwen", "chat", "never-deployed"])
    assert rc == 2, out
    assert ("npu-a01: deployment qwen: vllm_compose_rollback_target: the previous version runs image " + PRUNED + ", which "
            "is no longer on the host (removed or pruned since), so the rollback could not start it; nothing was changed. "
            "Fix: put the image back on the host (docker pull " + PRUNED + ", or docker load -i <its archive>), or roll "
            "back to another version (-e vllm_compose_rollback_target=last-good)") in out, out
    assert "deployment chat" not in out and "never-deployed:" not in out
    # Only read: one docker image inspect per image, no registry probe, no pull.
    assert sorted(calls) == sorted(["image inspect --format {{.Id}} " + PRESENT, "image inspect --format {{.Id}} " + PRUNED])


def test_deferred_the_refusals_are_noted_per_deployment(tmp_path):
    # multinode_rollback.yml defers: every member of a deployment is refused together afterwards;
    # a deployment whose image is there (other, to last-good/) is noted with nothing to refuse.
    rc, out, _calls = run(tmp_path, {"big": PRUNED, "other": PRESENT}, ["big", "other"], target="last-good", defer=True)
    assert rc == 0, out
    refusals = json.loads((tmp_path / "refusals.json").read_text())
    assert refusals == {"other": [], "big": [
        "npu-a01: deployment big: vllm_compose_rollback_target: the last-good version runs image " + PRUNED + ", which is "
        "no longer on the host (removed or pruned since), so the rollback could not start it; nothing was changed. Fix: "
        "put the image back on the host (docker pull " + PRUNED + ", or docker load -i <its archive>), or roll back to "
        "another version (-e vllm_compose_rollback_target=previous)"]}
