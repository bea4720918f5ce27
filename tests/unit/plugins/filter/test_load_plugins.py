"""ascendfleet.llm.load_plugins (issue 30): its input unchanged, every filter and action plugin of the
collection loaded in the calling process; and every playbook of the collection names it in its first play (or
imports check_inputs.yml, which does), so ansible-playbook loads the filters before any task forks."""
import pathlib
import sys

import yaml

from ansible_collections.ascendfleet.llm.plugins.filter.load_plugins import FilterModule

ROOT = pathlib.Path(__file__).resolve().parents[4]
FILTER = FilterModule().filters()["load_plugins"]
PACKAGE = "ansible_collections.ascendfleet.llm.plugins."


def test_input_unchanged_and_every_filter_and_action_loaded():
    names = sorted("%s.%s" % (kind, p.stem) for kind in ("filter", "action") for p in (ROOT / "plugins" / kind).glob("*.py")
                   if p.stem != "load_plugins")
    assert {"filter.facts", "filter.inputs", "filter.vllm_compose", "action.fleet_report", "action.vllm_lock"} <= set(names)
    for name in names:
        sys.modules.pop(PACKAGE + name, None)
    value = ["ascend_servers"]
    assert FILTER(value) is value
    assert FILTER("ascend_servers") == "ascend_servers"
    assert [n for n in names if PACKAGE + n not in sys.modules] == []


def test_every_playbook_loads_the_filters_before_its_first_task():
    books = sorted(p for p in (ROOT / "playbooks").glob("*.yml") if not p.is_symlink())
    first = {}
    for book in books:
        play = yaml.safe_load(book.read_text())[0]
        first[book.name] = play.get("ansible.builtin.import_playbook") or play.get("hosts")
    loads = "'ascend_servers' | ascendfleet.llm.load_plugins"
    assert loads in first.pop("check_inputs.yml")
    # Playbooks the others import (they run after a first play that loaded the filters), on their
    # own they start with no task on the collection's filters per host worth loading them for.
    imported_only = {"gateway.yml", "multinode_members.yml", "verify-fabric.yml", "fabric_checks.yml"}
    missing = [name for name, head in first.items()
               if name not in imported_only and head != "check_inputs.yml" and loads not in str(head)]
    assert missing == []


def test_a_process_forked_after_it_leaves_the_inherited_objects_to_no_collection():
    """A worker (forked after the filter ran) starts with every inherited object in the permanent
    generation, so its garbage collector never visits them (nor copies their pages); the parent's
    own collector is left as it is."""
    import gc
    import os

    FILTER("ascend_servers")
    FILTER("ascend_servers")  # a second call registers nothing more
    assert gc.get_freeze_count() == 0
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.write(write, str(gc.get_freeze_count()).encode())
        os._exit(0)  # pylint: disable=protected-access
    os.close(write)
    frozen = int(os.read(read, 64) or b"0")
    os.close(read)
    os.waitpid(pid, 0)
    assert frozen > 10000
    assert gc.get_freeze_count() == 0


def test_ansible_cores_own_filters_and_tests_are_wrapped_in_the_calling_process():
    """ansible-core wraps its own Jinja filters and tests at their first use in a process (a cache of
    its plugin loaders): the filter fills it, so a worker forked after it finds them ready. In a
    fresh interpreter, where nothing else used a filter before."""
    import os
    import subprocess

    script = (
        "from ansible.plugins.loader import filter_loader, test_loader\n"
        "from ansible_collections.ascendfleet.llm.plugins.filter.load_plugins import load_plugins\n"
        "before = [len(loader._cached_non_collection_wrappers) for loader in (filter_loader, test_loader)]\n"
        "load_plugins('ascend_servers')\n"
        "after = [sorted(loader._cached_non_collection_wrappers) for loader in (filter_loader, test_loader)]\n"
        "print(before, 'ansible.builtin.to_json' in after[0], 'ansible.builtin.combine' in after[0],"
        " 'ansible.builtin.match' in after[1])\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["[0,", "0]", "True", "True", "True"]
