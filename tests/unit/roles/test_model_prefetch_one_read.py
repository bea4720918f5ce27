"""model_prefetch's use of the one read per host (issue 30): its inspection (tasks_from: inspect) takes
the cache from the fact ascendfleet_host only when the read asked its own question (model_cache_info's
options, but the hub token) and does not ask the hub itself; otherwise it reads the cache again.

Real ansible-playbook on this machine (connection local), one inventory host per case; the answer
kept in ascendfleet_host is marked by a sentinel missing model, and what the inspection used is read
back from the fan-out record it writes (__model_prefetch_self.missing)."""
import json
import sys

from .playbook_run import one_read_play, run_playbook

SENTINEL = {"model": "Sentinel/Answered-By-The-One-Read", "revision": "master", "include": [], "exclude": []}
CASES = {
    "same": {},
    "verify-asked-differs": {"case_asked": {"verify": "full"}},
    "models-asked-differ": {"case_asked": {"models": []}},
    "asks-the-hub-itself": {"ascendfleet_cache_layout": "revisions", "model_prefetch_resolve": "always"},
    "no-read-this-run": {"case_fact": {}},
    "read-failed": {"case_answer": {"error": "Qwen/Qwen3-8B: cannot read the cache (boom)", "model": "Qwen/Qwen3-8B"}},
}
PLAY = one_read_play(["model_prefetch"]) + """    - name: Keep the answer with its question
      ansible.builtin.set_fact:
        ascendfleet_host: >-
          {{ case_fact if case_fact is defined else
             {'model_cache': case_answer | default({'models': [], 'missing': [%(sentinel)s], 'cli_version': none, 'states': {}}),
              'model_cache_asked': __model_prefetch_read_args | combine(case_asked | default({}))} }}

- name: The prefetch's inspection
  hosts: all
  gather_facts: false
  tasks:
    - name: Read the cache and plan the fan-out
      ansible.builtin.import_role:
        name: ascendfleet.llm.model_prefetch
        tasks_from: inspect
    - name: Keep what the inspection used
      ansible.builtin.copy:
        content: "{{ __model_prefetch_self.missing | to_json }}"
        dest: "%(out)s/{{ inventory_hostname }}.json"
        mode: "0600"
      delegate_to: localhost
"""


def test_the_inspection_takes_the_one_read_only_for_its_own_question(tmp_path):
    hosts = dict((case, dict(hv, ansible_connection="local", ansible_python_interpreter=sys.executable))
                 for case, hv in CASES.items())
    common = {"ascendfleet_deployments": [{"name": "chat", "model": "Qwen/Qwen3-8B", "port": 8000}],
              "ascendfleet_cache_dir": str(tmp_path / "cache"), "model_prefetch_venv": str(tmp_path / "venv"),
              # The hub the revisions layout asks (resolve always): nothing listens there, its answer is an error.
              "model_prefetch_endpoint": "http://127.0.0.1:9"}
    out = tmp_path / "out"
    out.mkdir()
    proc = run_playbook(tmp_path, {"all": {"vars": common, "hosts": hosts}}, PLAY % {"sentinel": json.dumps(SENTINEL), "out": out})
    used = dict((case, json.loads((out / (case + ".json")).read_text())) for case in CASES
                if (out / (case + ".json")).exists())
    # Only the host whose read asked the inspection's own question is answered by it; the others
    # read the cache again (an empty cache: the model is missing), the hub asker fails on the hub.
    assert sorted(case for case, missing in used.items() if SENTINEL in missing) == ["same"], proc.stdout[-3000:]
    for case in ("verify-asked-differs", "models-asked-differ", "no-read-this-run", "read-failed"):
        assert [m["model"] for m in used[case]] == ["Qwen/Qwen3-8B"], (case, used)
    assert "asks-the-hub-itself" not in used and "127.0.0.1:9" in proc.stdout, proc.stdout[-3000:]
