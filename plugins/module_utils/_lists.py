# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Small list helpers the collection's pure logic shares.

PRIVATE to this collection; may change without notice. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def unique(items):
    """The items in their first order, each once (by equality: for dicts and lists too, as Jinja's
    ``unique`` keeps them)."""
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out
