# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter loading every filter plugin of the collection into the calling process (issue 30).

Documentation: load_filters.yml beside this file.

ansible-playbook runs each task of each host in a worker process forked from its own process, and
a worker loads a collection's filter plugins - source compiled, not byte code - the first time one
of them is named: measured ~0.2 s of control-node CPU per host and task that names one. Named in a
play keyword (rendered by ansible-playbook itself, before any task of the play), this filter loads
them there once, and every worker forked after inherits them.
"""

from __future__ import annotations

import importlib
import os

PACKAGE = "ansible_collections.ascendfleet.llm.plugins.filter"


def load_filters(value):
    """``value`` unchanged, once every filter plugin of the collection is loaded in this process."""
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        stem, ext = os.path.splitext(name)
        if ext == ".py" and not stem.startswith("_") and stem != "load_filters":
            importlib.import_module("%s.%s" % (PACKAGE, stem))
    return value


class FilterModule(object):
    """The collection's filter loader."""

    def filters(self):
        return {"load_filters": load_filters}
