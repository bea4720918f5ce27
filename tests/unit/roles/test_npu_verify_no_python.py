"""npu_verify on a host where ascendfleet.llm.npu_host_facts cannot run (no Python at the
interpreter path): the host read fails, its rescue asks the host with raw (which needs no Python),
and the verdict names the python check - one task per host when the module runs (issue 30: the raw
probe is the read's rescue, not a skipped task on every host). Real ansible-playbook, connection local."""
import json

from .playbook_run import run_playbook

PLAY = """
- name: Verify a host whose interpreter does not exist
  hosts: all
  gather_facts: false
  tasks:
    - name: Verify the host
      ansible.builtin.import_role:
        name: ascendfleet.llm.npu_verify
        tasks_from: verify
    - name: Keep the verdict
      ansible.builtin.copy:
        content: "{{ ascendfleet_npu | to_json }}"
        dest: "%(out)s"
        mode: "0644"
      delegate_to: localhost
      vars:
        ansible_python_interpreter: "%(python)s"
"""


def test_a_host_the_module_cannot_run_on_is_read_with_raw_and_fails_python(tmp_path):
    import sys

    out = tmp_path / "verdict.json"
    inventory = {"all": {"hosts": {"nopython": {
        "ansible_connection": "local", "ansible_python_interpreter": str(tmp_path / "no" / "python3"),
        "npu_verify_fail_hosts": False, "ascendfleet_report_dir": str(tmp_path / "reports")}}}}
    proc = run_playbook(tmp_path, inventory, PLAY % {"out": out, "python": sys.executable})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # The read failed and was rescued by the raw probe; no host was left failed.
    assert "Read the target Python version (raw, as npu_host_facts could not run)" in proc.stdout
    assert "rescued=1" in proc.stdout and "failed=0" in proc.stdout
    verdict = json.loads(out.read_text())
    assert verdict["verdict"] == "fail"
    assert verdict["failed_checks"][:1] == ["python"], verdict["failed_checks"]
    assert str(tmp_path / "no" / "python3") in " ".join(verdict["reasons"])
