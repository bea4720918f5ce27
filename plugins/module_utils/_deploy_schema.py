# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The one declared schema of a deployment (an entry of ``ascendfleet_deployments`` /
``vllm_compose_deployments``, and ``vllm_compose_deployment_defaults``).

PRIVATE to this collection; may change without notice. Standard library and ansible.module_utils
only (shipped to hosts with _vllm_deploy).

``SCHEMA`` says, per key: the type and element type (Ansible argument-spec types), choices, a range,
a pattern (matched with ``re.fullmatch``, never ``re.match``), forbidden items and whether null is
allowed. ``validate()`` checks a deployment with Ansible's own
``ansible.module_utils.common.arg_spec.ArgumentSpecValidator`` (what role argument specs use: the
conversions of "no" to False, "8000" to 8000, 1 to "1"; unknown keys refused) and adds the rest of
the schema on top, one message per problem in the collection's shape::

    <host>: deployment <name>: <key>: <problem>. Fix: <fix>

Two of the validator's conversions would silently change what a deployment means, so a shape check
refuses them first (docs/architecture.md, "Input checks"): a string where a list or a mapping
belongs (the validator splits ``"a,b"`` into a list and ``"k=v"`` into a mapping) and a list,
mapping or boolean where a string belongs (it would become the text ``"['x']"`` or ``"True"``); a
boolean where a number belongs (``True`` is the integer 1 to Python).

The semantic rules (the model fits the cards, a parser exists in the image's release, ports do not
collide, ...) stay in _vllm_deploy.plan() and run on what this returns.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import (
    DEPLOYMENT_NAME_FORM,
    DEPLOYMENT_NAME_RE,
    MODEL_ID_RE,
    MODEL_ID_RULE,
    is_deployment_name,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._inputs import IMAGE_RE, VERSION_RE

# A POSIX environment variable name (what a shell and Docker Compose take as a key).
ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Any control character but tab, and the Unicode line breaks YAML knows: never part of a value the compose file or a command line carries.
CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")
# A character beyond U+FFFF: JSON (the compose template's quoting) writes it as a surrogate pair,
# which Docker Compose's YAML parser refuses ("found invalid Unicode character escape code").
ASTRAL_RE = re.compile(r"[\U00010000-\U0010ffff]")
# An extra_env value may hold a line feed (the template writes it JSON-quoted, and a container's
# environment takes it as it is: molecule vllm_compose_health_gate passes one through); every
# other control character and Unicode line break is refused there too.
ENV_VALUE_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")
# An environment variable name is a YAML key: at most 256 characters (YAML's implicit key limit is 1024).
ENV_NAME_MAX = 256
# A parser name as vLLM registers them (qwen3, qwen3_coder, deepseek_r1, hermes, ...).
PARSER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
# A ModelScope revision: a branch, a tag or a commit; no '..' path step (it names a cache directory).
REVISION_RE = re.compile(r"(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# A served model name (vLLM's --served-model-name, what clients send as "model"): printable, no spaces.
# Any text clients send as "model" (vLLM takes any string; the template JSON-quotes it and the gate
# compares it as written: molecule vllm_compose_health_gate serves 'Qwen 8B $x #1 "ü" 千问'),
# without blanks at either end, at most 200 characters.
SERVED_NAME_RE = re.compile(r"\S(.{0,198}\S)?", re.S)
# An inventory host name of a multi-node member.
HOST_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,252}")

# Environment variables the collection sets itself (cards, multi-node addresses, the API key's
# env_file): a deployment may not set them. Those of the reference procedure (HCCL_BUFFSIZE,
# OMP_NUM_THREADS, ...) may be changed; VLLM_ASCEND_ENABLE_FLASHCOMM1 has its own rule in plan().
MANAGED_ENV = {
    "ASCEND_RT_VISIBLE_DEVICES": "the cards are given with devices (or chosen by npu_assign) and mapped as "
                                 "/dev/davinciN; inside the container they are numbered from 0",
    "ASCEND_VISIBLE_DEVICES": "the cards are given with devices (or chosen by npu_assign); the Ascend Docker "
                              "runtime is not used",
    "VLLM_API_KEY": "set vllm_compose_api_key (the role writes it to a 0600 env_file)",
    "HCCL_IF_IP": "multi-node deployments get it from the member's address (docs/multi-node.md)",
    "GLOO_SOCKET_IFNAME": "multi-node deployments get it from the NIC towards the peers (docs/multi-node.md)",
    "TP_SOCKET_IFNAME": "multi-node deployments get it from the NIC towards the peers (docs/multi-node.md)",
    "HCCL_SOCKET_IFNAME": "multi-node deployments get it from the NIC towards the peers (docs/multi-node.md)",
}

# vllm serve flags the collection renders from deployment keys: extra_args may not repeat them.
MANAGED_FLAGS = {
    "--host": "the role binds 0.0.0.0 (network_mode host)",
    "--port": "port",
    "--tensor-parallel-size": "tensor_parallel_size", "-tp": "tensor_parallel_size",
    "--data-parallel-size": "data_parallel_size", "-dp": "data_parallel_size",
    "--data-parallel-size-local": "data_parallel_size_local",
    "--data-parallel-address": "members (the head's address is found by the role)",
    "--data-parallel-rpc-port": "data_parallel_rpc_port",
    "--data-parallel-start-rank": "members (ranks follow the members' order)",
    "--headless": "members (every member but the head runs headless)",
    "--api-server-count": "api_server_count",
    "--served-model-name": "served_model_name",
    "--max-model-len": "max_model_len",
    "--max-num-batched-tokens": "max_num_batched_tokens",
    "--trust-remote-code": "trust_remote_code",
    "--gpu-memory-utilization": "gpu_memory_utilization",
    "--reasoning-parser": "reasoning_parser",
    "--tool-call-parser": "tool_call_parser",
    "--enable-auto-tool-choice": "enable_auto_tool_choice",
    "--async-scheduling": "async_scheduling",
    "--enable-prefix-caching": "enable_prefix_caching",
    "--no-enable-prefix-caching": "enable_prefix_caching",
    "--speculative-config": "speculative_config",
    "--compilation-config": "compilation_config", "-O": "compilation_config",
}

_BOOL_FIX = "; yes/no, on/off and 1/0 mean the same, anything else is refused"

# key -> entry. type/elements/choices: Ansible argument-spec types (ArgumentSpecValidator);
# null: null is allowed (it means "unset", the preset's or vLLM's default); min/max: a range;
# pattern (+ form): what the whole value (each item, each key) must match; forbidden: items or
# keys refused (-> why); fix: how to write it; doc: what it is (docs/input-checks.md).
SCHEMA = {
    "name": {"type": "str", "null": False, "pattern": DEPLOYMENT_NAME_RE, "form": DEPLOYMENT_NAME_FORM,
             "doc": "the deployment's name: compose project, directory under vllm_compose_project_root, ledger owner",
             "fix": "use " + DEPLOYMENT_NAME_FORM},
    "model": {"type": "str", "pattern": MODEL_ID_RE, "form": MODEL_ID_RULE,
              "doc": "the ModelScope model id Owner/Name", "says": "%r is not a model id",
              "fix": "give the ModelScope id as Owner/Name (%s), e.g. Qwen/Qwen3.5-27B" % MODEL_ID_RULE},
    "preset": {"type": "str", "doc": "a built-in preset (docs/input-checks.md lists them)",
               "fix": "use one of the known presets or drop preset"},
    "revision": {"type": "str", "null": False, "pattern": REVISION_RE, "form": "a branch, tag or commit: letters, digits, '.', '_', '-', no '..'",
                 "doc": "the model's ModelScope revision", "fix": "give a branch, tag or commit such as master or v1.0"},
    "state": {"type": "str", "choices": ["present", "absent"], "says": "%r is neither present nor absent", "doc": "present, or absent to remove the deployment",
              "fix": "set state: present or state: absent"},
    "port": {"type": "int", "min": 1, "max": 65535, "says": "%r is not a TCP port", "doc": "the API port on the host (network_mode host)",
             "fix": "use a port between 1 and 65535"},
    "tensor_parallel_size": {"type": "int", "says": "%r is not a positive integer", "min": 1, "max": 64,
                             "doc": "cards per model replica (--tensor-parallel-size)",
                             "fix": "set a whole number >= 1 (1, 2, 4, 8 or 16 cards in total)"},
    "data_parallel_size": {"type": "int", "says": "%r is not a positive integer", "min": 1, "max": 1024, "doc": "model replicas (--data-parallel-size)",
                           "fix": "set a whole number >= 1"},
    "data_parallel_size_local": {"type": "int", "min": 1, "max": 1024,
                                 "doc": "multi-node: ranks on each member (default: data_parallel_size / members)",
                                 "fix": "set data_parallel_size / members or leave it unset"},
    "data_parallel_rpc_port": {"type": "int", "min": 1, "max": 65535, "doc": "multi-node: the head's RPC port",
                               "fix": "use a free port between 1 and 65535, e.g. 13389"},
    "api_server_count": {"type": "int", "says": "%r is not a positive integer", "min": 1, "max": 1024, "doc": "multi-node head: API server processes",
                         "fix": "set a whole number >= 1 (the tutorial's 2) or leave it unset"},
    "max_model_len": {"type": "int", "says": "%r is not a positive integer", "min": 1, "max": 100000000, "doc": "--max-model-len (tokens)",
                      "fix": "set a whole number of tokens or leave it unset"},
    "max_num_batched_tokens": {"type": "int", "says": "%r is not a positive integer", "min": 1, "max": 100000000, "doc": "--max-num-batched-tokens",
                               "fix": "set a whole number of tokens or leave it unset"},
    "gpu_memory_utilization": {"type": "float", "null": False, "min_excl": 0, "max": 1, "says": "%r is outside (0, 1]",
                               "doc": "fraction of each card's HBM vLLM may use, in (0, 1]",
                               "fix": "use a fraction of each card's HBM such as 0.90 (stable) or 0.95 (faster)"},
    "reasoning_parser": {"type": "str", "pattern": PARSER_RE, "form": "a parser name (letters, digits, '_', '.', '-')",
                         "doc": "--reasoning-parser (checked against the image's release)",
                         "fix": "give a reasoning parser name such as qwen3, or leave it unset"},
    "tool_call_parser": {"type": "str", "pattern": PARSER_RE, "form": "a parser name (letters, digits, '_', '.', '-')",
                         "doc": "--tool-call-parser (checked against the image's release)",
                         "fix": "give a tool-call parser name such as qwen3_coder or hermes, or leave it unset"},
    "trust_remote_code": {"type": "bool", "null": False, "doc": "--trust-remote-code (the model repository's own code runs)",
                          "fix": "write true (vLLM runs the model repository's own code, --trust-remote-code) or false" + _BOOL_FIX},
    "enable_auto_tool_choice": {"type": "bool", "null": False, "doc": "--enable-auto-tool-choice (needs tool_call_parser)",
                                "fix": "write true (--enable-auto-tool-choice, needs tool_call_parser) or false" + _BOOL_FIX},
    "async_scheduling": {"type": "bool", "null": False, "doc": "--async-scheduling",
                         "fix": "write true (--async-scheduling) or false" + _BOOL_FIX},
    "enable_prefix_caching": {"type": "bool", "doc": "--enable-prefix-caching / --no-enable-prefix-caching; null: vLLM's default",
                              "fix": "write true (--enable-prefix-caching), false (--no-enable-prefix-caching) or leave it "
                                     "unset/null (vLLM's default)" + _BOOL_FIX},
    "vision": {"type": "bool", "doc": "a vision-language model (FlashComm v1 off); null: read from config.json",
               "fix": "write true (a vision-language model: FlashComm v1 off), false (a text model) or leave it unset/null "
                      "(read from config.json's vision_config)" + _BOOL_FIX},
    "compilation_config": {"type": "raw", "shape": ("dict", "str"), "says": "%r is not a mapping (vLLM expects a JSON object)",
                           "doc": "--compilation-config, YAML data or a JSON string",
                           "fix": "write it as YAML data, e.g. compilation_config: {cudagraph_mode: FULL_DECODE_ONLY}, or as a "
                                  "JSON string"},
    "speculative_config": {"type": "raw", "shape": ("dict", "str"), "says": "%r is not a mapping (vLLM expects a JSON object)",
                           "doc": "--speculative-config, YAML data or a JSON string",
                           "fix": "write it as YAML data, e.g. speculative_config: {method: qwen3_5_mtp, "
                                  "num_speculative_tokens: 3}, or as a JSON string"},
    "served_model_name": {"type": "str", "pattern": SERVED_NAME_RE,
                          "form": "a name of 1 to 200 characters without blanks at either end",
                          "doc": "--served-model-name (default: the model id's name part)",
                          "fix": "give the name clients send as model, e.g. Qwen3.5-27B, or leave it unset"},
    "extra_args": {"type": "list", "elements": "str", "forbidden": MANAGED_FLAGS,
                   "doc": "further vllm serve arguments, one flag or value per item (numbers become strings)",
                   "fix": "give extra vllm flags as a list of strings, one flag or value per item"},
    "extra_env": {"type": "dict", "key_pattern": ENV_NAME_RE, "forbidden": MANAGED_ENV,
                  "doc": "further container environment; values are strings (numbers become strings, booleans 1/0)",
                  "fix": "give extra environment variables as a mapping of NAME: value"},
    "devices": {"type": "list", "elements": "int", "min": 0, "max": 63,
                "doc": "the N of /dev/davinciN to use (default: npu_assign chooses)",
                "fix": "give the N of /dev/davinciN, e.g. [4, 5], or drop devices to let npu_assign choose"},
    "image": {"type": "str", "pattern": IMAGE_RE, "form": "an image reference without spaces",
              "doc": "the full image reference (default: from the shared image settings)",
              "fix": "give an image reference such as quay.io/ascend/vllm-ascend:v0.18.0rc1, or leave it unset"},
    "image_version": {"type": "str", "pattern": VERSION_RE, "form": "a version such as v0.18.0rc1",
                      "doc": "the vllm-ascend release tag for this deployment (default: ascendfleet_image_version)",
                      "fix": "give a version such as v0.18.0rc1, or leave it unset"},
    "members": {"type": "list", "elements": "str", "pattern": HOST_NAME_RE, "form": "inventory host names",
                "says": "%r is not a list of two or more distinct inventory host names",
                "doc": "multi-node: the member hosts by inventory name, the head first",
                "fix": "list the member hosts by inventory name, the head first, e.g. [npu-01, npu-02], or drop members "
                       "for a one-host deployment"},
}

# Longest string a deployment key takes (a compose file line, a command-line item).
MAX_LEN = 4096

# What each type takes before conversion. Numbers must be YAML numbers (a quoted '8000' is refused,
# as the planner always did); a string takes a number (model revision 1 -> "1").
_SHAPES = {"str": (str, int, float), "list": (list, tuple), "dict": (dict,), "int": (int, float),
           "float": (int, float), "bool": (bool, int, str)}
_VALIDATORS = {}


def _validator(key):
    if key not in _VALIDATORS:
        entry = SCHEMA[key]
        spec = {"type": entry["type"]}
        for item in ("elements", "choices"):
            if item in entry:
                spec[item] = entry[item]
        _VALIDATORS[key] = ArgumentSpecValidator({key: spec})
    return _VALIDATORS[key]


def _shown(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _shape_problem(entry, value):
    """Why ``value`` has the wrong shape for ``entry`` before any conversion (None: it has the right one)."""
    kind = entry["type"]
    if kind == "raw":
        wanted = entry.get("shape")
        if wanted and not isinstance(value, tuple(t for name in wanted for t in _SHAPES[name])):
            return "%s is a %s, not %s" % (_shown(value), type(value).__name__, " or ".join(
                {"dict": "a mapping", "str": "a string"}[name] for name in wanted))
        return None
    if isinstance(value, bool) and kind in ("str", "int", "float"):
        return "%s is a boolean, not %s" % (_shown(value), {"str": "a string", "int": "a whole number", "float": "a number"}[kind])
    if not isinstance(value, _SHAPES[kind]):
        return "%s is a %s, not %s" % (_shown(value), type(value).__name__, {
            "str": "a string", "int": "a whole number", "float": "a number", "bool": "true or false",
            "list": "a list", "dict": "a mapping"}[kind])
    if kind == "bool" and isinstance(value, int) and not isinstance(value, bool) and value not in (0, 1):
        return "must be true or false, got %r" % (value,)
    return None


def _item_problem(entry, value, where):
    """The problem of one converted scalar (a value, a list item): length, control characters, pattern, range."""
    if isinstance(value, str):
        if len(value) > MAX_LEN:
            return "%s is %d characters long (at most %d)" % (where, len(value), MAX_LEN)
        if (entry.get("control_re") or CONTROL_RE).search(value):
            return "%s %s holds a line break or another control character" % (where, _shown(value))
        if ASTRAL_RE.search(value):
            return "%s %s holds a character beyond U+FFFF (an emoji?), which Docker Compose cannot read back" % (
                where, _shown(value))
        pattern = entry.get("pattern")
        if pattern is not None and pattern.fullmatch(value) is None:
            return "%s %s is not %s" % (where, _shown(value), entry.get("form", "of the allowed form"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = entry.get("min", entry.get("min_excl")), entry.get("max")
        if (low is not None and value < low) or (high is not None and value > high) or (
                "min_excl" in entry and value <= entry["min_excl"]):
            return "%s %r is outside the range %s to %s" % (where, value, low, high)
    return None


def _flag_of(token):
    return token.split("=", 1)[0] if token.startswith("-") else None


def _check_key(key, value):
    """``(converted, problem)`` for one key of a deployment."""
    entry = SCHEMA[key]
    converted, problem = _check_entry(key, entry, value)
    if problem and entry["type"] == "bool":
        problem = "must be %s, got %r" % ("true, false or null" if entry.get("null", True) else "true or false", value)
    elif problem and entry.get("says"):
        problem = entry["says"] % (value,)
    return converted, problem


def _check_entry(key, entry, value):
    """``(converted, problem)`` for one key of a deployment (the detailed problem)."""
    if value is None:
        if entry.get("null", True):
            return None, None
        return None, ("must be true or false, got None" if entry["type"] == "bool" else "is null")
    problem = _shape_problem(entry, value)
    if problem:
        return None, problem
    if isinstance(value, str) and len(value) > MAX_LEN:
        return None, "is %d characters long (at most %d)" % (len(value), MAX_LEN)
    if entry["type"] == "list":
        for index, item in enumerate(value):
            if item is None or isinstance(item, (bool, list, tuple, dict)) or (
                    entry.get("elements") == "int" and isinstance(item, str)):
                return None, "item %d %s is not a %s" % (index, _shown(item), {"str": "string", "int": "whole number"}[
                    entry.get("elements")])
    result = _validator(key).validate({key: value})
    if result.errors.errors:
        if entry["type"] == "bool":
            return None, "must be %s, got %r" % ("true, false or null" if entry.get("null", True) else "true or false", value)
        if entry["type"] in ("int", "float") or entry.get("elements") == "int":
            return None, "%s is not %s" % (_shown(value), "a number" if entry["type"] == "float" else "a whole number")
        if "choices" in entry:
            return None, "%s is not one of %s" % (_shown(value), ", ".join(entry["choices"]))
        return None, "%s: %s" % (_shown(value), result.errors[0])
    converted = result.validated_parameters[key]
    items = converted if entry["type"] == "list" else [converted] if entry["type"] != "dict" else []
    for index, item in enumerate(items):
        problem = _item_problem(entry, item, "item %d" % index if entry["type"] == "list" else "value")
        if problem:
            return None, problem.replace("value ", "", 1) if problem.startswith("value ") else problem
        if entry["type"] == "list" and entry.get("forbidden") and _flag_of(item) in entry["forbidden"]:
            return None, ("item %d %s is a flag the collection renders from %s" % (index, _shown(item), entry["forbidden"][_flag_of(item)]))
    if entry["type"] == "dict":
        out = {}
        for name, item in converted.items():
            if not isinstance(name, str) or entry["key_pattern"].fullmatch(name) is None or len(name) > ENV_NAME_MAX:
                return None, "the key %s is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)" % _shown(name)
            if name in entry["forbidden"]:
                return None, "%s is set by the collection: %s" % (name, entry["forbidden"][name])
            if isinstance(item, bool):
                item = "1" if item else "0"
            elif isinstance(item, (int, float)):
                item = str(item)
            elif not isinstance(item, str):
                return None, "%s: %s is a %s, not a string" % (name, _shown(item), "null" if item is None else type(item).__name__)
            problem = _item_problem({"control_re": ENV_VALUE_CONTROL_RE}, item, "%s:" % name)
            if problem:
                return None, problem
            out[name] = item
        converted = out
    return converted, None


def validate(deployment, skip_types=()):
    """``(converted, problems)`` for one deployment (or the defaults): ``converted`` holds the keys
    ``deployment`` sets, converted as Ansible converts them ("no" -> False, "8000" -> 8000, an
    extra_env value 1 -> "1"); ``problems`` is a list of ``(key, problem, fix)``, one per bad key
    (unknown keys: one entry naming them all)."""
    converted, problems = {}, []
    unknown = sorted(str(k) for k in deployment if k not in SCHEMA)
    if unknown:
        problems.append((", ".join(unknown), "unknown key(s)",
                         "remove them or fix the spelling (known: %s)" % ", ".join(sorted(SCHEMA))))
    for key in sorted(k for k in deployment if k in SCHEMA):
        value, problem = _check_key(key, deployment[key])
        if problem and SCHEMA[key]["type"] in skip_types:
            continue
        if problem:
            problems.append((key, problem, SCHEMA[key]["fix"]))
        else:
            converted[key] = value
    return converted, problems


# The variables that hold deployments (a list) or the defaults of every deployment (a mapping):
# their items are checked against SCHEMA on the control node too (filter input_errors, the first
# play), before the prefetch or any other change, in the planner's words.
VARIABLES = {"ascendfleet_deployments": "list", "vllm_compose_deployments": "list",
             "ascendfleet_deployment_defaults": "defaults", "vllm_compose_deployment_defaults": "defaults"}


def errors(host, variable, value):
    """The schema's messages for the value of one of VARIABLES (``variable``: the name the user set),
    worded as _vllm_deploy.plan() words them; only what the schema says (the planner adds the
    semantic rules on the host). A value of the wrong type is the argument spec's to refuse."""
    out = []
    if VARIABLES.get(variable) == "defaults":
        if isinstance(value, dict):
            # As the planner: booleans of the defaults are judged per deployment, after the merge.
            problems = validate(dict((k, v) for k, v in value.items() if k != "name"), skip_types=("bool",))[1]
            out.extend("%s: %s: %s: %s. Fix: %s" % (host, variable, key, problem, fix) for key, problem, fix in problems)
        return out
    if not isinstance(value, list):
        return out
    for index, raw in enumerate(value):
        if not isinstance(raw, dict):
            continue
        name = raw.get("name")
        if not is_deployment_name(name):
            out.append("%s: deployment #%d: name: %r is not a valid deployment name. Fix: use %s"
                       % (host, index + 1, name, DEPLOYMENT_NAME_FORM))
            continue
        out.extend("%s: deployment %s: %s: %s. Fix: %s" % (host, name, key, problem, fix)
                   for key, problem, fix in validate(raw)[1])
    return out
