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
    imported_only = {"gateway.yml", "multinode_members.yml", "verify-fabric.yml"}
    missing = [name for name, head in first.items()
               if name not in imported_only and head != "check_inputs.yml" and loads not in str(head)]
    assert missing == []
