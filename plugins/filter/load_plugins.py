# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter loading the collection's filter and action plugins into the calling process (issue 30).

Documentation: load_plugins.yml beside this file.

ansible-playbook runs each task of each host in a worker process forked from its own process, and
a worker loads a collection's plugins - source compiled, not byte code - the first time it needs
one: all of the collection's filters when a task names one of them (measured ~0.2 s of
control-node CPU per host and task), an action plugin and the module_utils it imports when a task
runs it. Named in a play keyword (rendered by ansible-playbook itself, before any task of the
play), this filter loads them there once, and every worker forked after inherits them. It wraps
ansible-core's own filters and tests there too (each worker did it at its first use of one), and has
every worker forked afterwards freeze what it inherits (``gc.freeze()`` at fork), so that a worker's
garbage collector never walks - and copies the pages of - the parent's whole heap.
"""

from __future__ import annotations

import gc
import importlib
import os

from ansible.plugins.loader import filter_loader, test_loader

COLLECTION = "ansible_collections.ascendfleet.llm.plugins"
KINDS = ("filter", "action")
_FROZEN_IN_WORKERS = False


def load_plugins(value):
    """``value`` unchanged, once every filter and action plugin of the collection is loaded in this process."""
    plugins = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for kind in KINDS:
        for name in sorted(os.listdir(os.path.join(plugins, kind))):
            stem, ext = os.path.splitext(name)
            if ext == ".py" and not stem.startswith("_") and stem != "load_plugins":
                importlib.import_module("%s.%s.%s" % (COLLECTION, kind, stem))
    # ansible-core's own filters and tests (to_json, bool, combine, ...), wrapped once per process at
    # their first use: here, not in every worker.
    for loader in (filter_loader, test_loader):
        for dummy in loader.all():
            pass
    global _FROZEN_IN_WORKERS  # pylint: disable=global-statement
    if not _FROZEN_IN_WORKERS:
        # A worker's garbage collector leaves alone every object it inherits from ansible-playbook's
        # process: a collection of the oldest generation would otherwise visit them all, touching
        # (and so copying) every page of the parent's heap, in every worker.
        os.register_at_fork(after_in_child=gc.freeze)
        _FROZEN_IN_WORKERS = True
    return value


class FilterModule(object):
    """The collection's plugin loader."""

    def filters(self):
        return {"load_plugins": load_plugins}
