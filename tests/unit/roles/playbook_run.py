"""Run a playbook of the tests with the real ansible-playbook on this machine (connection local):
the inventory and the play written to ``tmp_path``, the collection's ansible.cfg, and with
``fake_docker`` a ``docker`` on PATH that answers nothing (exit 0)."""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
ANSIBLE_PLAYBOOK = pathlib.Path(sys.executable).parent / "ansible-playbook"


def run_playbook(tmp_path, inventory, play_text, fake_docker=False):
    """ansible-playbook -i <inventory (a dict, as JSON)> <play_text>; returns the CompletedProcess."""
    (tmp_path / "inventory.json").write_text(json.dumps(inventory))
    play = tmp_path / "play.yml"
    play.write_text(play_text)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    if fake_docker:
        bindir = tmp_path / "bin"
        bindir.mkdir()
        (bindir / "docker").write_text("#!/bin/sh\nexit 0\n")
        (bindir / "docker").chmod(0o755)
        env["PATH"] = "%s:%s" % (bindir, os.environ["PATH"])
    return subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", str(tmp_path / "inventory.json"), str(play)],
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)


def one_read_play(roles):
    """The head of the first play of the one-read tests (issue 30): the verify play's imports of the
    ``roles``' variables (tasks_from: read_args, no task); the test appends the task that keeps the
    answers as npu_verify's judge.yml does."""
    head = ["", "- name: The one read of the verify play, as judge.yml keeps it", "  hosts: all", "  gather_facts: false", "  tasks:"]
    for role in roles:
        head += ["    - name: Take %s's variables" % role, "      ansible.builtin.import_role:",
                 "        name: ascendfleet.llm.%s" % role, "        tasks_from: read_args"]
    return "\n".join(head) + "\n"
