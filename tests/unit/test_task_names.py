"""Every templated task name renders on every path.

Ansible templates a task's name even when the task is skipped, so a name that uses a variable
set only on some paths prints "<< error 1 - '...' is undefined >>" in the run's output (seen:
"Copy the models from the seed {{ __model_prefetch_seed }}" on a one-host run). A name may use
only what is defined whenever the task file runs: the role's defaults and vars, Ansible's magic
variables, the task's own loop variable, the `vars:` of the blocks around it, and what every
include of the file passes in (its `vars:`, its blocks' `vars:` and `loop_var`, inherited through
nested includes; a file named by a variable, `include_tasks: "{{ steps }}"`, is included by it
with every value an include passes for that variable); anything else needs `| default`.
"""
import re
import pathlib

import jinja2
import jinja2.meta
import jinja2.nodes
import pytest
import yaml

TOP = pathlib.Path(__file__).resolve().parents[2]
MAGIC = {
    "inventory_hostname", "inventory_hostname_short", "ansible_play_hosts", "ansible_play_batch",
    "ansible_play_hosts_all", "ansible_check_mode", "ansible_diff_mode", "playbook_dir", "role_path",
    "hostvars", "groups", "group_names", "ansible_loop_var", "ansible_facts", "omit", "true", "false",
    "none", "True", "False", "None", "ansible_playbook_python", "ansible_version", "role_name",
}
INCLUDE_ACTIONS = ("include_tasks", "import_tasks", "ansible.builtin.include_tasks",
                   "ansible.builtin.import_tasks")
ENV = jinja2.Environment()


def _tasks(items, around=frozenset()):
    """Every task of a task list with the vars of the blocks around it, blocks flattened (with the
    block's own name as a task)."""
    for task in items or []:
        if not isinstance(task, dict):
            continue
        yield task, around
        inner = around | set((task.get("vars") or {}).keys())
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key), frozenset(inner))


def _load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8")) or []


def _include(task):
    for action in INCLUDE_ACTIONS:
        if action in task:
            target = task[action]
            return target["file"] if isinstance(target, dict) else target
    return None


def _given(task, around=frozenset()):
    """What an include passes into the file it includes: its vars, its blocks' vars and its loop
    variable."""
    given = set(around) | set((task.get("vars") or {}).keys())
    if "loop" in task or any(k.startswith("with_") for k in task):
        given.add((task.get("loop_control") or {}).get("loop_var", "item"))
    return given


def _role_cases(role):
    tasks_dir = role / "tasks"
    known = set(MAGIC)
    for sub in ("defaults", "vars"):
        f = role / sub / "main.yml"
        if f.exists():
            known |= set((yaml.safe_load(f.read_text(encoding="utf-8")) or {}).keys())
    files = {p.name: _load(p) for p in sorted(tasks_dir.glob("*.yml"))}
    # provided[f]: what is defined whenever f runs. Entry points (never included) start from
    # the role's own variables; an included file gets what every includer gives it.
    includers = {name: [] for name in files}
    # What the includes pass for each variable (a file named by a variable is each of them).
    passed = {}
    for items in files.values():
        for task, _around in _tasks(items):
            for key, value in (task.get("vars") or {}).items():
                passed.setdefault(key, set()).add(value if isinstance(value, str) else None)
    for name, items in files.items():
        for task, around in _tasks(items):
            target = _include(task)
            named = re.fullmatch(r"\{\{\s*(\w+)\s*\}\}", target or "")
            for one in (passed.get(named.group(1), ()) if named else [target]):
                if one in includers:
                    includers[one].append((name, _given(task, around)))
    provided = {}

    def resolve(name, stack=()):
        if name in provided:
            return provided[name]
        if not includers[name] or name in stack:
            provided[name] = set(known)
            return provided[name]
        sets = [resolve(src, stack + (name,)) | given for src, given in includers[name]]
        provided[name] = set.intersection(*sets)
        return provided[name]

    for name, items in files.items():
        for task, around in _tasks(items):
            if isinstance(task.get("name"), str) and "{{" in task["name"]:
                yield "%s/tasks/%s: %s" % (role.name, name, task["name"]), task, resolve(name) | around


def _playbook_cases():
    for path in sorted((TOP / "playbooks").glob("*.yml")):
        for play in _load(path):
            if not isinstance(play, dict):
                continue
            known = MAGIC | set((play.get("vars") or {}).keys())
            for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                for task, around in _tasks(play.get(key)):
                    if isinstance(task.get("name"), str) and "{{" in task["name"]:
                        yield "playbooks/%s: %s" % (path.name, task["name"]), task, known | around


CASES = [c for role in sorted((TOP / "roles").iterdir()) if (role / "tasks").is_dir() for c in _role_cases(role)]
CASES += list(_playbook_cases())


def _unsafe_names(name, task, known):
    """The variables of a name that may be undefined where the task runs (none: it renders)."""
    ast = ENV.parse(name)
    guarded = set()
    for node in ast.find_all(jinja2.nodes.Filter):
        if node.name in ("default", "d"):
            guarded |= {n.name for n in node.node.find_all(jinja2.nodes.Name)}
            if isinstance(node.node, jinja2.nodes.Name):
                guarded.add(node.node.name)
    own = set(known) | _given(task) | set((task.get("vars") or {}).keys())
    return sorted(jinja2.meta.find_undeclared_variables(ast) - own - guarded)


def test_the_scan_sees_the_templated_names():
    # Proof the scan reads the roles: vllm_compose names its deployments in its task names.
    assert any("__vllm_compose_dep" in c[0] for c in CASES)
    assert len(CASES) > 20


@pytest.mark.parametrize("where,task,known", CASES, ids=[c[0] for c in CASES])
def test_task_name_renders_on_every_path(where, task, known):
    assert _unsafe_names(task["name"], task, known) == [], (
        "%s: the name uses variables that are not defined on every path to this task; use a "
        "role default, a variable every include passes in, or '| default(...)'" % where)


def test_a_conditionally_set_variable_is_caught():
    task = {"name": "Copy the models from the seed {{ __model_prefetch_seed }}"}
    assert _unsafe_names(task["name"], task, MAGIC) == ["__model_prefetch_seed"]
    task = {"name": "Copy from {{ __model_prefetch_seed | default('the seed') }}"}
    assert _unsafe_names(task["name"], task, MAGIC) == []
    task = {"name": "Copy {{ item.model }}", "loop": []}
    assert _unsafe_names(task["name"], task, MAGIC) == []


def test_a_file_named_by_a_variable_gets_what_its_includer_gives():
    # vllm_compose's unit.yml includes "{{ __vllm_compose_unit_steps }}" (rollout.yml, ...) inside a
    # block whose vars define __vllm_compose_dep: the steps' names may use it, the scan knows it.
    steps = [c for c in CASES if c[0].startswith("vllm_compose/tasks/rollout.yml: Assign NPU cards to")]
    assert len(steps) == 1 and "__vllm_compose_dep" in steps[0][2]
