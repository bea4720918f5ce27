# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The declared schema of every role variable and shared input, checked by one validator.

PRIVATE to this collection; may change without notice. Standard library and ansible.module_utils only
(it is shipped to hosts with the modules whose module_utils import it, e.g. through _vllm_deploy).

One schema (``schema()``), two parts declared once each and cross-checked by
tests/unit/plugins/module_utils/test__input_schema.py:

- the roles' meta/argument_specs.yml (the public declaration ansible-doc and docs/roles/*.md read;
  passed in as parsed ``options``): type, element type, choices, suboptions, no_log;
- RULES / SHARED_RULES below, what a spec cannot say: ranges, absolute paths, anchored formats,
  play keywords. A rule never repeats a type or choices, and a role variable that reads a shared
  ``ascendfleet_`` input has no rule of its own: the shared input's rule is the one rule.

``check()`` validates each value with Ansible's own ``ArgumentSpecValidator`` (what role argument
specs use: types, element types, choices, unknown or missing suboptions), after a shape check that
refuses what the validator would silently turn into something else (``"a,b"`` split into a list,
``['x']`` made the text ``"['x']"``, ``True`` taken as the number 1, ``"~/x"`` expanded on the
control node; as _deploy_schema does for deployment keys), then the rule on top. One message per
bad input::

    <host>: <variable>: <problem>. Fix: <fix>

Every pattern here is matched against the whole value (``re.fullmatch``): ``re.match`` with
``^...$`` also accepts a value with a trailing newline, which then reaches a path, a ledger or a
compose file. The identifiers several modules check (digest, deployment name, model id) are
``_facts``' rules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from urllib.parse import urlsplit

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import is_digest
from ansible_collections.ascendfleet.llm.plugins.module_utils._shared_inputs import readers as shared_readers

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


# An image reference: [registry[:port]/]path[:tag][@sha256:digest], no whitespace (the role
# variable vllm_compose_image and the deployment key image; _deploy_schema imports it).
IMAGE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,254}(@sha256:[0-9a-f]{64})?")
# A registry mirror put before an image reference: host[:port][/path], no whitespace.
MIRROR_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,254}")
# Seconds in a year: the longest time-out a role takes (a larger one is a typo, and overflows
# Ansible's async and until arithmetic long before it means anything).
YEAR = 365 * 24 * 3600

# variable -> rule: what a role's argument spec cannot say. Never a type or choices (those are the
# spec's); never for a role variable that reads a shared input (SHARED_RULES holds its one rule).
# Kinds: range (min/max, numbers; never NaN or infinite), abspath (no control character, no '..'
# step), percent_or_count (play keyword serial), digest, version, url, nonempty, size, pattern
# (+ form: re.fullmatch). "optional": an empty string means unset. "each": the rule applies to
# every item of a list. "fix" overrides the generic fix.
RULES = {
    # vllm_compose
    "vllm_compose_health_timeout": {"kind": "range", "min": 1, "max": YEAR, "fix": "give the health gate's time-out in seconds, e.g. 1800"},
    "vllm_compose_health_interval": {"kind": "range", "min": 1, "max": 600,
                                     "fix": "give the polling interval in seconds, e.g. 10 (below the time-out)"},
    "vllm_compose_smoke_timeout": {"kind": "range", "min": 1, "max": YEAR, "fix": "give the smoke test's time-out in seconds, e.g. 300"},
    "vllm_compose_log_tail": {"kind": "range", "min": 0, "max": 100000, "fix": "give a number of log lines, e.g. 40"},
    "vllm_compose_lock_timeout": {"kind": "range", "min": 0, "max": YEAR,
                                  "fix": "give seconds to wait for another run's rollout lock, e.g. 60"},
    "vllm_compose_drain_timeout": {"kind": "range", "min": 0, "max": 24 * 3600,
                                   "fix": "give seconds vLLM lets the requests in flight finish on stop, e.g. 120 "
                                          "(0: abort them, vLLM's default)"},
    "vllm_compose_image_pull_timeout": {"kind": "range", "min": 1, "max": YEAR, "fix": "give the pull's time-out in seconds, e.g. 3600"},
    "vllm_compose_image_pull_interval": {"kind": "range", "min": 1, "max": 3600,
                                         "fix": "give seconds between two progress reports, e.g. 10"},
    "vllm_compose_project_root": {"kind": "abspath"},
    "vllm_compose_image_archive_remote_dir": {"kind": "abspath"},
    "vllm_compose_shm_size": {"kind": "size"},
    "vllm_compose_serial": {"kind": "percent_or_count"},
    "vllm_compose_max_fail_percentage": {"kind": "range", "min": 0, "max": 100,
                                         "fix": "give a whole percentage from 0 (stop at the first failed host) to 100"},
    # model_prefetch
    "model_prefetch_venv": {"kind": "abspath"},
    "model_prefetch_attempts": {"kind": "range", "min": 1, "max": 100, "fix": "give a number of download attempts, e.g. 3"},
    "model_prefetch_space_margin_mb": {"kind": "range", "min": 0, "max": 10 ** 9, "fix": "give free space to keep in MB, e.g. 1024"},
    "model_prefetch_lock_timeout": {"kind": "range", "min": 1, "max": YEAR, "fix": "give seconds to wait for the cache lock, e.g. 600"},
    "model_prefetch_timeout": {"kind": "range", "min": 1, "max": YEAR, "fix": "give the download time-out in seconds"},
    "model_prefetch_progress_interval": {"kind": "range", "min": 1, "max": 3600, "fix": "give seconds between progress lines, e.g. 30"},
    "model_prefetch_fanout_port": {"kind": "range", "min": 1, "max": 65535, "fix": "give a TCP port between 1 and 65535"},
    "model_prefetch_endpoint": {"kind": "url", "optional": True},
    "model_prefetch_mirror_url": {"kind": "url", "optional": True},
    "model_prefetch_pip_index_url": {"kind": "url", "optional": True},
    # npu_verify
    "npu_verify_idle_threshold_pct": {"kind": "range", "min": 0, "max": 100, "fix": "give a percentage from 0 to 100"},
    "npu_verify_min_healthy_chips": {"kind": "range", "min": 0, "max": 64, "fix": "give a number of chips, e.g. 8"},
    "npu_verify_cache_min_free_gb": {"kind": "range", "min": 0, "max": 10 ** 6, "fix": "give free space in GB, e.g. 200"},
    "npu_verify_max_fail_percentage": {"kind": "range", "min": 0, "max": 100, "fix": "give a whole percentage from 0 to 100"},
    "npu_verify_docker_min_version": {"kind": "version"},
    "npu_verify_compose_min_version": {"kind": "version"},
    # fleet_monitoring
    "fleet_monitoring_dir": {"kind": "abspath", "fix": "give an absolute path starting with /, e.g. /etc/ascendfleet/monitoring"},
    "fleet_monitoring_npu_exporter_port": {"kind": "range", "min": 1, "max": 65535,
                                           "fix": "give a TCP port between 1 and 65535 (MindCluster NPU Exporter listens on 8082)"},
    "fleet_monitoring_prometheus_port": {"kind": "range", "min": 1, "max": 65535,
                                         "fix": "give a TCP port between 1 and 65535, e.g. 9090, or null for none"},
    "fleet_monitoring_prometheus_ready_timeout": {"kind": "range", "min": 1, "max": YEAR,
                                                  "fix": "give seconds to wait for Prometheus to be ready, e.g. 60"},
}

# The shared inventory inputs (``ascendfleet_``): the one rule of the input and of every role
# variable that defaults to it (test__input_schema: no RULES entry repeats it).
SHARED_RULES = {
    "ascendfleet_cache_dir": {"kind": "abspath"},
    "ascendfleet_cache_keep_revisions": {"kind": "range", "min": 0, "max": 1000,
                                         "fix": "give how many revisions of a model each host keeps, e.g. 2 (0: only "
                                                "those a deployment, last-known-good or previous mounts)"},
    "ascendfleet_image_digest": {"kind": "digest", "optional": True},
    "ascendfleet_image_version": {"kind": "version"},
    "ascendfleet_image_repository": {"kind": "nonempty"},
    "ascendfleet_image": {"kind": "pattern", "pattern": IMAGE_RE, "optional": True,
                          "form": "an image reference without spaces",
                          "fix": "give an image reference such as quay.io/ascend/vllm-ascend:v0.18.0rc1, or leave it empty"},
    "ascendfleet_image_mirror": {"kind": "pattern", "pattern": MIRROR_RE, "optional": True,
                                 "form": "a registry host[:port][/path] without spaces",
                                 "fix": "give the mirror as host[:port][/path], e.g. mirror.example:5000, or leave it empty"},
    "ascendfleet_host_mounts": {"kind": "abspath", "each": True,
                                "fix": "give every host path as an absolute path, e.g. /usr/local/dcmi"},
    "ascendfleet_control_devices": {"kind": "abspath", "each": True,
                                    "fix": "give every device node as an absolute path, e.g. /dev/davinci_manager"},
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


# What the validator takes from an argument spec entry (a role's Jinja default is not a value, and
# the description is documentation).
VALIDATOR_KEYS = ("type", "elements", "choices", "options", "required", "no_log", "aliases",
                  "mutually_exclusive", "required_together", "required_one_of", "required_if", "required_by")
_VALIDATORS = {}


def validator_spec(spec):
    """The ``ArgumentSpecValidator`` entry of one argument spec entry: its declared type, elements,
    choices and suboptions (recursively), without the default (a role default is often a template)
    or the description. Suboptions keep their literal defaults."""
    out = dict((k, v) for k, v in (spec or {}).items() if k in VALIDATOR_KEYS)
    if isinstance(out.get("options"), dict):
        out["options"] = dict((name, dict(validator_spec(sub), **({"default": sub["default"]} if "default" in (sub or {}) else {})))
                              for name, sub in out["options"].items())
    out.setdefault("type", "raw")
    return out


def _validator(name, spec):
    key = (name, repr(sorted((spec or {}).items())))
    if key not in _VALIDATORS:
        _VALIDATORS[key] = ArgumentSpecValidator({name: validator_spec(spec)})
    return _VALIDATORS[key]


def validate(name, spec, value):
    """``(converted, errors)``: ``value`` of the variable ``name`` through Ansible's
    ``ArgumentSpecValidator`` built from its argument spec entry (types, elements, choices,
    suboptions: what ansible-core's role argument validation checks)."""
    bad_key = _non_string_key(value) if (spec or {}).get("options") else None
    if bad_key is not None:
        # the validator itself fails on one among suboptions (it joins the keys as text)
        return None, [TypeError("holds the key %r, which is not a string" % (bad_key,))]
    result = _validator(name, spec).validate({name: value})
    return result.validated_parameters.get(name), list(result.errors.errors)


def _non_string_key(value):
    """A mapping key (at any depth) that is not a string, else None."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return key
            found = _non_string_key(item)
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for item in value:
            found = _non_string_key(item)
            if found is not None:
                return found
    return None


def check_value(host, name, value, spec, rule=None):
    """Messages for one input against its argument spec entry and rule (a no_log value is never shown).

    Order: the shape (what the validator would convert silently), Ansible's validator (type,
    elements, choices, suboptions), then the rule and, for text, one line without control characters."""
    spec = spec or {}
    kind = spec.get("type", "raw")
    secret = bool(spec.get("no_log"))
    if kind == "str" and secret and not isinstance(value, str):
        return [_not_a_secret_string(host, name, value)]
    ok, converted = convert(value, kind)
    if not ok:
        shown = "a %s (value hidden, no_log)" % type(value).__name__ if secret else _describe(value)
        return [message(host, name, "%s is not of type %s" % (shown, kind),
                        "%s%s" % (TYPE_FIX.get(kind, "give a %s" % kind), _hint(spec)))]
    choices = spec.get("choices")
    if choices and converted not in choices:
        return [message(host, name, "%r is not one of %s" % (value, ", ".join(repr(c) for c in choices)),
                        "use one of %s" % ", ".join(repr(c) for c in choices))]
    elements = spec.get("elements")
    if kind == "list" and elements and elements != "raw":
        for index, item in enumerate(converted or []):
            if not convert(item, elements)[0]:
                return [message(host, "%s[%d]" % (name, index), "%s is not of type %s" % (_describe(item), elements),
                                "give every item of %s as a %s" % (name, elements))]
    if value is not None:
        refused = _validator_messages(host, name, spec, value)
        if refused:
            return refused
    if rule is None:
        rule = RULES.get(name)
    if converted is None:
        return []
    if rule is not None:
        refused = _check_rule(host, name, value, converted, rule)
        if refused:
            return refused
    return _one_line(host, name, converted, kind, elements, secret)


def _validator_messages(host, name, spec, value):
    """Ansible's validator on a value of the right shape: what it still refuses, in the collection's words."""
    _converted, errors = validate(name, spec, value)
    if not errors:
        return []
    sub = spec.get("options")
    if isinstance(sub, dict) and spec.get("type") == "list" and isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            problems = validate("item", {"type": "dict", "options": sub}, item)[1]
            if problems:
                return [message(host, "%s[%d]" % (name, index), _sub_problem(problems[0], sub), _sub_fix(name, sub))]
    if isinstance(sub, dict):
        return [message(host, name, _sub_problem(errors[0], sub), _sub_fix(name, sub))]
    if spec.get("no_log"):
        return [message(host, name, "is not a valid %s (value hidden, no_log)" % spec.get("type", "value"),
                        TYPE_FIX.get(spec.get("type"), "give a valid value"))]
    return [message(host, name, "%r is refused: %s" % (value, str(errors[0]).replace("'%s'" % name, "").strip()),
                    "%s%s" % (TYPE_FIX.get(spec.get("type"), "give a valid value"), _hint(spec)))]


def _sub_problem(error, sub):
    name = type(error).__name__
    text = str(error)
    if name == "UnsupportedError":
        return "holds an unknown key (%s)" % text.split(". Supported", 1)[0].split(".", 1)[-1]
    if name == "RequiredError":
        return "lacks the required key(s) %s" % ", ".join(sorted(k for k, v in sub.items() if (v or {}).get("required")))
    return text


def _sub_fix(name, sub):
    required = sorted(k for k, v in sub.items() if (v or {}).get("required"))
    return "give each item of %s as a mapping with the keys %s%s" % (
        name, ", ".join(sorted(sub)), " (%s required)" % ", ".join(required) if required else "")


def _one_line(host, name, value, kind, elements, secret):
    """Text (a str or path value, each str or path item) holds no line break or other control character:
    it reaches file names, command lines, environments and YAML files."""
    if kind in ("str", "path"):
        items = [(name, value)]
    elif kind == "list" and elements in ("str", "path"):
        items = [("%s[%d]" % (name, i), item) for i, item in enumerate(value or [])]
    else:
        return []
    for label, item in items:
        if isinstance(item, str) and CONTROL_RE.search(item):
            shown = "the value (hidden, no_log)" if secret else repr(item)
            return [message(host, label, "%s holds a line break or another control character" % shown,
                            "give the value on one line without control characters")]
    return []


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
    if rule.get("each") and isinstance(value, list):
        for index, item in enumerate(value):
            refused = _check_rule(host, "%s[%d]" % (name, index), item, item, dict(rule, each=False))
            if refused:
                return refused
        return []
    kind = rule["kind"]
    fix = rule.get("fix")
    if rule.get("optional") and value in ("", None):
        return []
    if kind == "range":
        number = _as_float(value)
        low, high = rule.get("min"), rule.get("max")
        if number is None or not math.isfinite(number) or (low is not None and number < low) or (
                high is not None and number > high):
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
        if ".." in value.split("/"):
            return [message(host, name, "%r holds a '..' step (it names another directory than it says)" % (raw,),
                            fix or "give the absolute path without '..' steps, e.g. /var/lib/ascendfleet/modelscope")]
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
    elif kind == "pattern":
        if not isinstance(value, str) or rule["pattern"].fullmatch(value) is None:
            return [message(host, name, "%r is not %s" % (raw, rule["form"]), fix or "give %s" % rule["form"])]
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


def readers_of(options):
    """shared input -> the role variables that default to it (sorted)."""
    readers = {}
    for role_var, source in sorted(shared_inputs(options).items()):
        readers.setdefault(source, []).append(role_var)
    return readers


def rule_for(name, options):
    """The one rule of ``name``: its own (RULES), else that of the shared input it is or reads."""
    if name in RULES:
        return RULES[name]
    return SHARED_RULES.get(shared_inputs(options).get(name, name))


def spec_for(name, options):
    """The argument spec entry of ``name``; for a shared input, that of a role variable whose default
    is the input (test__input_schema: every such reader declares the same type, elements, choices)."""
    if name in options:
        return options[name]
    entry = shared_readers(options).get(name)
    if entry and entry["direct"]:
        direct = sorted(entry["direct"])
        strict = [r for r in direct if (options.get(r) or {}).get("choices")] or direct
        return options[strict[0]]
    if entry:
        # Only derived readers (model_prefetch_models: the models of ascendfleet_deployments, items
        # of another shape): the input's type and element type, not the reader's keys.
        derived = options[sorted(entry["derived"])[0]]
        return dict((k, v) for k, v in derived.items() if k in ("type", "elements"))
    return None


def schema(options):
    """The one declared schema: variable -> entry, for every role variable of ``options`` (the
    merged argument specs), every shared input they read and every play knob with a rule.

    An entry holds ``spec`` (the argument spec entry: type, elements, choices, suboptions, no_log,
    default), ``rule`` (RULES / SHARED_RULES, or None), ``reads`` (the shared input a role
    variable defaults to) and ``readers`` (for a shared input, the role variables that read it)."""
    shared = shared_inputs(options)
    readers = readers_of(options)
    out = {}
    for name in sorted(set(options) | set(readers) | set(RULES)):
        out[name] = {"spec": spec_for(name, options) or {"type": "raw"}, "rule": rule_for(name, options),
                     "reads": shared.get(name), "readers": readers.get(name, [])}
    return out


def check(host, options, values, names=None):
    """Messages for every input in ``values`` (variable -> value, only those that are set) against ``options``.

    ``options``: the merged ``argument_specs.main.options`` of the roles. ``names`` limits the
    check; variables with a RULE but no spec entry (play knobs) are checked by their rule.
    A role variable that holds what the user set as its shared ``ascendfleet_`` input (the
    inventory name, see ``shared_inputs``) is reported under that name, since that is what to fix.
    """
    shared = shared_inputs(options)
    readers = readers_of(options)
    errors = []
    for name in sorted(names if names is not None else values):
        if name not in values:
            continue
        spec = options.get(name)
        if spec is None and name in readers:
            # A shared input on its own (the control node's check of a host's vars, where role
            # defaults do not exist): checked as the role variables that read it.
            spec, label = spec_for(name, options), name
        elif spec is None and name not in RULES:
            continue
        else:
            source = shared.get(name)
            label = source if source in values and values[source] == values[name] else name
        for text in check_value(host, label, values[name], spec, rule=rule_for(name, options)):
            if text not in errors:
                errors.append(text)
    return errors


# The argument spec types a rule kind applies to (a rule never declares a type of its own).
RULE_TYPES = {
    "range": ("int", "float"), "abspath": ("path",), "digest": ("str",), "version": ("str",), "url": ("str",),
    "nonempty": ("str",), "size": ("str",), "pattern": ("str",), "percent_or_count": ("raw",),
}
RULE_KEYS = frozenset(["kind", "min", "max", "optional", "each", "fix", "pattern", "form"])
# What every role variable reading one shared input must declare alike.
AGREE_KEYS = ("type", "elements", "choices", "options", "no_log")


def schema_problems(options):
    """Where the two declarations of the schema disagree (the roles' argument specs ``options`` and
    RULES / SHARED_RULES): one line each, [] when they agree. Run by the unit tests on the real specs."""
    problems = []
    shared = shared_inputs(options)
    direct = dict((name, sorted(entry["direct"])) for name, entry in shared_readers(options).items())
    for name, rule in sorted(list(RULES.items()) + list(SHARED_RULES.items())):
        extra = set(rule) - RULE_KEYS
        if extra:
            problems.append("%s: the rule declares %s, which the argument spec says (or nothing does)"
                            % (name, ", ".join(sorted(extra))))
        if rule.get("kind") not in RULE_TYPES:
            problems.append("%s: unknown rule kind %r" % (name, rule.get("kind")))
            continue
        if name in SHARED_RULES:
            readers = direct.get(name)
            if not readers:
                problems.append("%s: a shared rule, but no role variable defaults to it" % name)
                continue
            specs = [(r, options[r]) for r in readers]
        elif name not in options:
            problems.append("%s: a rule for a variable no role declares" % name)
            continue
        elif name in shared:
            problems.append("%s: reads %s, whose rule in SHARED_RULES is its only rule: remove it from RULES"
                            % (name, shared[name]))
            continue
        else:
            specs = [(name, options[name])]
        for reader, spec in specs:
            kind = (spec or {}).get("elements") if rule.get("each") else (spec or {}).get("type", "raw")
            if kind not in RULE_TYPES[rule["kind"]]:
                problems.append("%s: rule %s needs %s %s, but the argument spec declares %s"
                                % (reader, rule["kind"], "elements" if rule.get("each") else "type",
                                   " or ".join(RULE_TYPES[rule["kind"]]), kind))
            if "choices" in (spec or {}):
                problems.append("%s: has choices and a rule %s: one of them is enough" % (reader, rule["kind"]))
    for source, readers in sorted(direct.items()):
        first = readers[0]
        for reader in readers[1:]:
            for key in AGREE_KEYS:
                if (options[first] or {}).get(key) != (options[reader] or {}).get(key):
                    problems.append("%s and %s read %s but declare different %s: %r and %r" % (
                        first, reader, source, key, (options[first] or {}).get(key), (options[reader] or {}).get(key)))
    for name, spec in sorted(options.items()):
        default = (spec or {}).get("default")
        if default is None or (isinstance(default, str) and "{{" in default):
            continue
        for text in check_value("default", name, default, spec, rule=rule_for(name, options)):
            problems.append("%s: its own default is refused: %s" % (name, text))
    return problems
