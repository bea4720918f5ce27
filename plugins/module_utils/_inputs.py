# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Every role input and play-level knob checked for type and range, one message shape.

PRIVATE to this collection; may change without notice. Standard library and ansible.module_utils only
(it is shipped to hosts with the modules whose module_utils import it, e.g. through _vllm_deploy).

Types, elements and choices come from the roles' meta/argument_specs.yml (passed in as parsed
``options``); what a spec cannot say (ranges, absolute paths, formats, play keywords) is in RULES
below. ``check()`` returns one message per bad input::

    <host>: <variable>: <problem>. Fix: <fix>

Every pattern here is matched against the whole value (``re.fullmatch``): ``re.match`` with
``^...$`` also accepts a value with a trailing newline, which then reaches a path, a ledger or a
compose file. The identifiers several modules check (digest, deployment name, model id) are
``_facts``' rules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from urllib.parse import urlsplit

from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import is_digest

# serial as a percentage, as ansible-core reads it (helpers.pct_to_int: the value ends with '%' and
# int() of the rest): "25%", " 25 %"; not "12.5%" nor "25%\n" (ansible-core fails on both).
PERCENT_RE = re.compile(r"\s*(\d+)\s*%", re.ASCII)
# A release, optionally with a build suffix a site (or the sim) adds to its tags: v0.18.0rc1-broken.
VERSION_RE = re.compile(r"v?\d+\.\d+(\.\d+)?([.-]?(rc|post|alpha|beta|a|b)\.?\d+)*(-[A-Za-z0-9][A-Za-z0-9_.]*)*",
                        re.IGNORECASE | re.ASCII)
# An http(s) URL: scheme, a non-empty authority, then an optional path/query/fragment; no
# whitespace or control character anywhere (the value reaches command lines and environments).
URL_RE = re.compile(r"https?://[^\s\x00-\x1f\x7f/?#]+(?:[/?#][^\s\x00-\x1f\x7f]*)?", re.IGNORECASE)
SIZE_RE = re.compile(r"\d+(\.\d+)?[bkmgBKMG]?", re.ASCII)
INT_RE = re.compile(r"\s*[-+]?\d+\s*", re.ASCII)
# A line break, tab or other control character: never part of a path or a name.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def is_version(value):
    """Whether ``value`` (the whole string) is a version such as v0.18.0rc1, 24.0.0 or v0.18.0rc1-site."""
    return isinstance(value, str) and VERSION_RE.fullmatch(value) is not None


def is_url(value):
    """Whether ``value`` (the whole string) is an http(s) URL with a host and no whitespace."""
    if not isinstance(value, str) or URL_RE.fullmatch(value) is None:
        return False
    try:
        return bool(urlsplit(value).hostname)
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return False


def message(host, variable, problem, fix):
    """The one shape every refusal has."""
    return "%s: %s: %s. Fix: %s" % (host, variable, problem, fix)


# variable -> rule. Kinds: range (min/max, numbers), abspath, percent_or_count (play keyword
# serial), percent (max_fail_percentage), digest, version, url, nonempty. "optional": an empty
# string means unset. "fix" overrides the generic fix.
RULES = {
    # vllm_compose
    "vllm_compose_health_timeout": {"kind": "range", "min": 1, "fix": "give the health gate's time-out in seconds, e.g. 1800"},
    "vllm_compose_health_interval": {"kind": "range", "min": 1, "max": 600,
                                     "fix": "give the polling interval in seconds, e.g. 10 (below the time-out)"},
    "vllm_compose_smoke_timeout": {"kind": "range", "min": 1, "fix": "give the smoke test's time-out in seconds, e.g. 300"},
    "vllm_compose_log_tail": {"kind": "range", "min": 0, "max": 100000, "fix": "give a number of log lines, e.g. 40"},
    "vllm_compose_project_root": {"kind": "abspath"},
    "vllm_compose_image_archive_remote_dir": {"kind": "abspath"},
    "vllm_compose_cache_dir": {"kind": "abspath"},
    "vllm_compose_image_digest": {"kind": "digest", "optional": True},
    "vllm_compose_image_version": {"kind": "version"},
    "vllm_compose_image_repository": {"kind": "nonempty"},
    "vllm_compose_shm_size": {"kind": "size"},
    "vllm_compose_serial": {"kind": "percent_or_count"},
    "vllm_compose_max_fail_percentage": {"kind": "range", "min": 0, "max": 100,
                                         "fix": "give a whole percentage from 0 (stop at the first failed host) to 100"},
    # model_prefetch
    "model_prefetch_cache_dir": {"kind": "abspath"},
    "model_prefetch_venv": {"kind": "abspath"},
    "model_prefetch_attempts": {"kind": "range", "min": 1, "max": 100, "fix": "give a number of download attempts, e.g. 3"},
    "model_prefetch_space_margin_mb": {"kind": "range", "min": 0, "fix": "give free space to keep in MB, e.g. 1024"},
    "model_prefetch_lock_timeout": {"kind": "range", "min": 1, "fix": "give seconds to wait for the cache lock, e.g. 600"},
    "model_prefetch_timeout": {"kind": "range", "min": 1, "fix": "give the download time-out in seconds"},
    "model_prefetch_progress_interval": {"kind": "range", "min": 1, "max": 3600, "fix": "give seconds between progress lines, e.g. 30"},
    "model_prefetch_fanout_port": {"kind": "range", "min": 1, "max": 65535, "fix": "give a TCP port between 1 and 65535"},
    "model_prefetch_endpoint": {"kind": "url", "optional": True},
    "model_prefetch_mirror_url": {"kind": "url", "optional": True},
    "model_prefetch_pip_index_url": {"kind": "url", "optional": True},
    # npu_verify
    "npu_verify_idle_threshold_pct": {"kind": "range", "min": 0, "max": 100, "fix": "give a percentage from 0 to 100"},
    "npu_verify_min_healthy_chips": {"kind": "range", "min": 0, "max": 64, "fix": "give a number of chips, e.g. 8"},
    "npu_verify_cache_min_free_gb": {"kind": "range", "min": 0, "fix": "give free space in GB, e.g. 200"},
    "npu_verify_max_fail_percentage": {"kind": "range", "min": 0, "max": 100, "fix": "give a whole percentage from 0 to 100"},
    "npu_verify_cache_dir": {"kind": "abspath"},
    "npu_verify_docker_min_version": {"kind": "version"},
    "npu_verify_compose_min_version": {"kind": "version"},
    "npu_verify_image_version": {"kind": "version"},
}

# The shared inventory inputs (``ascendfleet_``): every role variable that defaults to one is
# checked by its rule too, and so is the input itself where no role default exists.
SHARED_RULES = {
    "ascendfleet_cache_dir": {"kind": "abspath"},
    "ascendfleet_image_digest": {"kind": "digest", "optional": True},
    "ascendfleet_image_version": {"kind": "version"},
    "ascendfleet_image_repository": {"kind": "nonempty"},
}

TYPE_FIX = {
    "int": "give a whole number",
    "float": "give a number",
    "bool": "give true or false",
    "str": "give a string",
    "path": "give a path",
    "list": "give a YAML list",
    "dict": "give a YAML mapping",
    "raw": "give a value",
}


def _as_int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and INT_RE.fullmatch(value):
        return int(value)
    return None


def _as_float(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def to_bool(value):
    """``(ok, converted)``: ``value`` read as Ansible reads a boolean option (strict
    ``ansible.module_utils.parsing.convert_bool.boolean``): True/False, the integers 1/0 and the
    strings yes/no, true/false, on/off, y/n, t/f, 1/0 (any case). Anything else (``"maybe"``, 2,
    None, a list) is not ok. The one conversion of every boolean input and deployment key, so that
    ``"no"`` is False wherever the value is used."""
    try:
        return True, boolean(value, strict=True)
    except TypeError:
        return False, None


def convert(value, kind):
    """``(ok, converted)`` for ``value`` as argument-spec ``kind`` (ansible's conversions, a bit stricter)."""
    if value is None:
        return True, None
    if kind == "int":
        out = _as_int(value)
        return out is not None, out
    if kind == "float":
        out = _as_float(value)
        return out is not None, out
    if kind == "bool":
        return to_bool(value)
    if kind in ("str", "path"):
        return isinstance(value, (str, int, float)) and not isinstance(value, bool), str(value)
    if kind == "list":
        return isinstance(value, (list, tuple)), list(value) if isinstance(value, (list, tuple)) else None
    if kind == "dict":
        return isinstance(value, dict), value
    return True, value


def _describe(value):
    return "%r (%s)" % (value, type(value).__name__ if not isinstance(value, str) else "a string")


def check_value(host, name, value, spec, rule=None):
    """Messages for one input against its argument spec entry and rule (a no_log value is never shown)."""
    kind = (spec or {}).get("type", "raw")
    if kind == "str" and (spec or {}).get("no_log") and not isinstance(value, str):
        return [_not_a_secret_string(host, name, value)]
    ok, converted = convert(value, kind)
    if not ok:
        shown = "a %s (value hidden, no_log)" % type(value).__name__ if (spec or {}).get("no_log") else _describe(value)
        return [message(host, name, "%s is not of type %s" % (shown, kind),
                        "%s%s" % (TYPE_FIX.get(kind, "give a %s" % kind), _hint(spec)))]
    choices = (spec or {}).get("choices")
    if choices and converted not in choices:
        return [message(host, name, "%r is not one of %s" % (value, ", ".join(repr(c) for c in choices)),
                        "use one of %s" % ", ".join(repr(c) for c in choices))]
    elements = (spec or {}).get("elements")
    if kind == "list" and elements and elements != "raw":
        for index, item in enumerate(converted or []):
            if not convert(item, elements)[0]:
                return [message(host, "%s[%d]" % (name, index), "%s is not of type %s" % (_describe(item), elements),
                                "give every item of %s as a %s" % (name, elements))]
    rule = rule or RULES.get(name)
    if rule is None or converted is None:
        return []
    return _check_rule(host, name, value, converted, rule)


def _not_a_secret_string(host, name, value):
    """A no_log string input (an API key, a token, a password) given as something else: the roles
    write it into files and headers as it is and measure it (``| length``), so a number, a list or
    null fails a later task after the host changed (and a YAML ``0123`` would be the key ``83``)."""
    kinds = ((bool, "a boolean"), ((int, float), "a number"), ((list, tuple), "a list"), (dict, "a mapping"))
    what = next((label for types, label in kinds if isinstance(value, types)), "a %s" % type(value).__name__)
    if value is None:
        what = "null"
    return message(host, name, "is %s (value hidden, no_log), not a string" % what,
                   "quote it ('...') in the inventory or extra-vars, or keep it in Ansible Vault as a string "
                   "(ansible-vault encrypt_string); leave it unset or '' for none")


def _hint(spec):
    default = (spec or {}).get("default")
    if default not in (None, "", [], {}) and len(repr(default)) <= 40 and not (isinstance(default, str) and "{{" in default):
        return ", e.g. %r (the default)" % (default,)
    return ""


def _check_rule(host, name, raw, value, rule):
    kind = rule["kind"]
    fix = rule.get("fix")
    if rule.get("optional") and value in ("", None):
        return []
    if kind == "range":
        number = _as_float(value)
        low, high = rule.get("min"), rule.get("max")
        if number is None or (low is not None and number < low) or (high is not None and number > high):
            bounds = ("from %s to %s" % (low, high) if high is not None else "%s or more" % low)
            return [message(host, name, "%r is outside the range %s" % (raw, bounds), fix or "give a value %s" % bounds)]
    elif kind == "abspath":
        if not isinstance(value, str) or not value.startswith("/") or "{{" in value:
            return [message(host, name, "%r is not an absolute path" % (raw,),
                            fix or "give an absolute path starting with /, e.g. /var/lib/ascendfleet/modelscope")]
        if CONTROL_RE.search(value):
            return [message(host, name, "%r holds a line break or another control character" % (raw,),
                            fix or "give the absolute path on one line without control characters, "
                                   "e.g. /var/lib/ascendfleet/modelscope")]
    elif kind == "digest":
        if not is_digest(str(value)):
            return [message(host, name, "%r is not an image digest" % (raw,),
                            fix or "give sha256:<64 lower-case hex digits> (docker image inspect --format '{{.RepoDigests}}'), "
                                   "or leave it empty")]
    elif kind == "version":
        if not is_version(str(value)):
            return [message(host, name, "%r is not a version" % (raw,), fix or "give a version such as v0.18.0rc1 or 24.0.0")]
    elif kind == "url":
        if not is_url(str(value)):
            return [message(host, name, "%r is not an http(s) URL" % (raw,),
                            fix or "give a URL such as https://host/path (http or https, a host, no spaces or line "
                                   "breaks), or leave it empty")]
    elif kind == "nonempty":
        if str(value).strip() == "":
            return [message(host, name, "is empty", fix or "give a value")]
        if CONTROL_RE.search(str(value)):
            return [message(host, name, "%r holds a line break or another control character" % (raw,),
                            fix or "give the value on one line without control characters")]
    elif kind == "size":
        if not SIZE_RE.fullmatch(str(value)):
            return [message(host, name, "%r is not a size" % (raw,), fix or "give a size such as 1g, 512m or 16g")]
    elif kind == "percent_or_count":
        return _check_serial(host, name, raw)
    return []


def _check_serial(host, name, value):
    """Play keyword serial: a count >= 1, a percentage 1-100%, or a list of them (ramp-up)."""
    items = value if isinstance(value, list) and value else [value]
    for item in items:
        count = _as_int(item)
        percent = PERCENT_RE.fullmatch(item) if isinstance(item, str) else None
        if count is not None and count >= 1:
            continue
        if percent and 0 < float(percent.group(1)) <= 100:
            continue
        return [message(host, name, "%r is neither a number of hosts (1 or more) nor a percentage (1%% to 100%%)" % (item,),
                        "give a batch size such as 1, 2 or '25%%' (or a list such as [1, '50%%'])".replace("%%", "%"))]
    return []


# A role variable whose default is the shared inventory input: "{{ ascendfleet_x | default(...) }}".
# A prefix match on purpose (the rest of the template is the fallback).
SHARED_DEFAULT_RE = re.compile(r"\s*\{\{\s*(ascendfleet_[a-z0-9_]+)\s*(\||\}\})")


def shared_inputs(options):
    """role variable -> the shared ``ascendfleet_`` inventory input it defaults to (from the specs)."""
    shared = {}
    for name, spec in (options or {}).items():
        default = (spec or {}).get("default")
        match = SHARED_DEFAULT_RE.match(default) if isinstance(default, str) else None
        if match:
            shared[name] = match.group(1)
    return shared


def check(host, options, values, names=None):
    """Messages for every input in ``values`` (variable -> value, only those that are set) against ``options``.

    ``options``: the merged ``argument_specs.main.options`` of the roles. ``names`` limits the
    check; variables with a RULE but no spec entry (play knobs) are checked by their rule.
    A role variable that holds what the user set as its shared ``ascendfleet_`` input (the
    inventory name, see ``shared_inputs``) is reported under that name, since that is what to fix.
    """
    shared = shared_inputs(options)
    readers = {}  # shared input -> the role variables that default to it
    for role_var, source in sorted(shared.items()):
        readers.setdefault(source, []).append(role_var)

    def rule_of(name):
        """A variable's rule, else its shared input's, else another role variable's reading it."""
        if name in RULES:
            return RULES[name]
        source = shared.get(name, name)
        if source in SHARED_RULES:
            return SHARED_RULES[source]
        for sibling in readers.get(source, []):
            if sibling in RULES:
                return RULES[sibling]
        return None

    errors = []
    for name in sorted(names if names is not None else values):
        if name not in values:
            continue
        spec = options.get(name)
        if spec is None and name in readers:
            # A shared input on its own (the control node's check of a host's vars, where role
            # defaults do not exist): checked as the role variables that read it.
            strict = [r for r in readers[name] if (options.get(r) or {}).get("choices") or r in RULES] or readers[name]
            spec, label = options.get(strict[0]), name
        elif spec is None and name not in RULES:
            continue
        else:
            source = shared.get(name)
            label = source if source in values and values[source] == values[name] else name
        for text in check_value(host, label, values[name], spec, rule=rule_of(name)):
            if text not in errors:
                errors.append(text)
    return errors
