# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Role variables of one shared input that disagree: refused, naming both and the shared name.

PRIVATE to this collection; may change without notice. Standard library and ansible.module_utils only.

Several roles read one shared inventory input through a role variable each, whose default is
the input (``vllm_compose_cache_dir: "{{ ascendfleet_cache_dir | default(...) }}"``). A role
variable set on its own (the names of the first release: ``model_prefetch_cache_dir``,
``vllm_compose_deployments``) then makes that role use another value than the others: the
prefetch fills /mnt/disk2 and vllm_compose looks in its default cache. ``conflicts()`` finds,
from a host's variables as the control node sees them (inventory and extra vars, no role
defaults), each shared input whose readers would get different values, and says which one name
to set instead.

A reader is *direct* when its default is the input itself (``{{ ascendfleet_x | default(D) }}``,
D a literal or ``'name' | ascendfleet.llm.fleet_fact``) and *derived* when it transforms it
(``model_prefetch_models``: the models of ``ascendfleet_deployments``). A derived reader set on its
own is the user's explicit choice of another shape (a model list) and is not compared.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import json
import posixpath
import re

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import DEFAULTS

# Shared inputs whose readers may differ on purpose: each role writes its own report, and a site
# (or a test) may send one role's report elsewhere.
MAY_DIFFER = frozenset(["ascendfleet_report_dir"])

# {{ ascendfleet_x | default(<D>) }} and nothing else: a direct reader.
DIRECT_RE = re.compile(r"\s*\{\{\s*(ascendfleet_[a-z0-9_]+)\s*\|\s*default\((.*)\)\s*\}\}\s*\Z", re.DOTALL)
FACT_RE = re.compile(r"\s*'([a-z0-9_]+)'\s*\|\s*ascendfleet\.llm\.fleet_fact\s*\Z")
# {{ ascendfleet_x | ... }}: any reader.
READER_RE = re.compile(r"\s*\{\{\s*(ascendfleet_[a-z0-9_]+)\s*(\||\}\})")

UNKNOWN = object()


def _default_of(text):
    """The value a direct reader's ``default(...)`` gives, or UNKNOWN."""
    fact = FACT_RE.match(text)
    if fact:
        return DEFAULTS.get(fact.group(1), UNKNOWN)
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return UNKNOWN


def readers(options):
    """shared input -> {"direct": {role variable: its default's value}, "derived": [role variables]}.

    A default whose ``default(...)`` is not a literal or a fleet fact (a filter after it) is derived.
    """
    out = {}
    for name, spec in sorted((options or {}).items()):
        default = (spec or {}).get("default")
        if not isinstance(default, str):
            continue
        match = READER_RE.match(default)
        if not match:
            continue
        entry = out.setdefault(match.group(1), {"direct": {}, "derived": []})
        direct = DIRECT_RE.match(default)
        value = _default_of(direct.group(2)) if direct and direct.group(1) == match.group(1) else UNKNOWN
        if value is not UNKNOWN:
            entry["direct"][name] = value
        else:
            entry["derived"].append(name)
    return out


def _same(value):
    """A comparable form: paths without a trailing / or ./ parts, data as canonical JSON."""
    if isinstance(value, str) and value.startswith("/"):
        return posixpath.normpath(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _show(value):
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        names = [str(v.get("name", v.get("model", "?"))) for v in value]
        text = "%d item(s): %s" % (len(value), ", ".join(names))
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _reads(seen, shared):
    name, value, how = seen
    if how == "set":
        return "%s is set to %s" % (name, _show(value))
    if how == "shared":
        return "%s reads %s from %s" % (name, _show(value), shared)
    return "%s reads %s (the default; %s is not set)" % (name, _show(value), shared)


def conflicts(host, options, values, skip=()):
    """One message per shared input whose role variables disagree on ``host``.

    ``options``: the merged argument specs of the roles; ``values``: the host's variables that are
    set (variable -> value; role defaults are not values); ``skip``: variables refused already for
    their own type or format (not compared, their message says what to fix first).
    """
    messages = []
    for shared, entry in sorted(readers(options).items()):
        if shared in MAY_DIFFER or shared in skip:
            continue
        shared_set = shared in values
        # (role variable, value it reads, how: "set" or the shared input's value or default)
        seen = []
        for name, default in sorted(entry["direct"].items()):
            if name in skip:
                seen = None
                break
            if name in values:
                seen.append((name, values[name], "set"))
            elif shared_set:
                seen.append((name, values[shared], "shared"))
            else:
                seen.append((name, default, "default"))
        if seen is None:
            continue
        for name in sorted(entry["derived"]):
            if name in values:
                continue  # an explicit value of another shape (e.g. a model list): the user's choice
            label = "%s (computed from %s)" % (name, shared)
            if shared_set:
                seen.append((label, values[shared], "shared"))
            else:
                default = next(iter(entry["direct"].values()), UNKNOWN)
                if default is not UNKNOWN:
                    seen.append((label, default, "default"))
        own = [s for s in seen if s[2] == "set"]
        if not own or len(set(_same(s[1]) for s in seen)) <= 1:
            continue
        first = own[0]
        others = [s for s in seen if _same(s[1]) != _same(first[1])]
        told = "; ".join(_reads(s, shared) for s in others)
        set_vars = sorted(set(s[0] for s in own))
        problem = ("is set to %s, but %s: the roles would use different values of the one shared input %s"
                   % (_show(first[1]), told, shared))
        fix = ("set %s (the one name every role reads) to the value you want and remove %s"
               % (shared, " and ".join(set_vars)))
        messages.append("%s: %s: %s. Fix: %s" % (host, first[0], problem, fix))
    return messages
