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
play), this filter loads them there once, and every worker forked after inherits them.
"""

from __future__ import annotations

import importlib
import os

COLLECTION = "ansible_collections.ascendfleet.llm.plugins"
KINDS = ("filter", "action")


def load_plugins(value):
    """``value`` unchanged, once every filter and action plugin of the collection is loaded in this process."""
    plugins = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for kind in KINDS:
        for name in sorted(os.listdir(os.path.join(plugins, kind))):
            stem, ext = os.path.splitext(name)
            if ext == ".py" and not stem.startswith("_") and stem != "load_plugins":
                importlib.import_module("%s.%s.%s" % (COLLECTION, kind, stem))
    return value


class FilterModule(object):
    """The collection's plugin loader."""

    def filters(self):
        return {"load_plugins": load_plugins}
