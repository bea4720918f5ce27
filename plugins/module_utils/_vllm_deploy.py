# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""vLLM-Ascend deployments under Docker Compose: presets, merging, validation, rendering data.

PRIVATE to this collection; may change without notice. Standard library and ansible.module_utils
only (runs on the controller in filters and on hosts in modules, Python >= 3.8).

A deployment is a dict from the inventory list ``ascendfleet_deployments``. ``plan()`` resolves
every deployment of one host (built-in base < preset < role-wide defaults < deployment), checks
it against what the host has (chip family, healthy cards, HBM, prefetched models) and returns
the resolved deployments with their vllm command line, environment and image, plus every error
and warning as a message naming the host, the deployment, the variable and the fix.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import VersionError, vllm_ascend_version_key
from ansible_collections.ascendfleet.llm.plugins.module_utils._release_changes import additional_config_key
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import (
    DEPLOYMENT_NAME_FORM,
    FAMILY_VARIANT,
    MODEL_ID_RULE,
    FactError,
    container_model_path,
    fleet_fact,
    image_ref,
    image_variant_of,
    is_deployment_name,
    model_completeness,
    model_dir,
    model_id_parts,
    release_of,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._deploy_schema import SCHEMA, validate
from ansible_collections.ascendfleet.llm.plugins.module_utils._inputs import to_bool

# The reference procedure's flags for Qwen3.5-27B on 910B (docs/architecture.md), and a text model.
# A preset may change from a vllm-ascend release on (``since``: oldest first, each layer applied
# when the image's release is that one or later, above the preset and below the role defaults),
# where that release's official recipe says so; ``source`` names it (docs/input-checks.md lists them).
PRESETS = {
    "qwen3.5-27b": {
        "tensor_parallel_size": 2,
        "max_model_len": 133000,
        "max_num_batched_tokens": 8096,
        "gpu_memory_utilization": 0.95,
        "reasoning_parser": "qwen3",
        "tool_call_parser": "qwen3_coder",
        "enable_auto_tool_choice": True,
        "async_scheduling": True,
        "compilation_config": {"cudagraph_mode": "FULL_DECODE_ONLY"},
        "trust_remote_code": True,
        "since": [
            {"release": "v0.18.0rc1",
             "source": "vllm-ascend docs/source/tutorials/models/Qwen3.5-27B-Qwen3.6-27B.md (v0.18.0 and later): "
                       "single-node A2/A3 start-up command",
             "set": {
                 # The hybrid (GDN) KV cache of Qwen3.5 makes the prefix-cache block very large; the
                 # recipe turns prefix caching off.
                 "enable_prefix_caching": False,
                 # The recipe's MTP speculative decoding (the model's own multi-token-prediction head).
                 "speculative_config": {"method": "qwen3_5_mtp", "num_speculative_tokens": 3, "enforce_eager": True},
             }},
        ],
    },
    # Qwen3-8B: text only, 40960 positions; hermes is vLLM's tool parser for Qwen3 (non-coder).
    "qwen3-8b": {
        "tensor_parallel_size": 1,
        "max_model_len": 32768,
        "gpu_memory_utilization": 0.90,
        "reasoning_parser": "qwen3",
        "tool_call_parser": "hermes",
        "enable_auto_tool_choice": True,
        "trust_remote_code": True,
    },
}

# Multi-node presets (docs/multi-node.md): the recipe's multiprocess data-parallel start-up on two
# Atlas A2 servers (8 x 64 GB each); give the deployment its members (the head first). The
# flags the role has no key for go in extra_args, as the recipe writes them.
PRESETS.update({
    # vllm-ascend docs/source/tutorials/models/Qwen3.5-397B-A17B.md, "Multi-node Deployment with MP
    # (Recommended)", 2 x Atlas 800 A2 (first supported in v0.17.0rc1): node 0 and node 1 commands.
    "qwen3.5-397b-a17b-2xa2": {
        "tensor_parallel_size": 8,
        "data_parallel_size": 2,
        "data_parallel_size_local": 1,
        "data_parallel_rpc_port": 13389,
        "api_server_count": 2,
        "max_model_len": 32768,
        "max_num_batched_tokens": 4096,
        "gpu_memory_utilization": 0.9,
        "trust_remote_code": True,
        "async_scheduling": True,
        "enable_prefix_caching": False,
        "speculative_config": {"method": "qwen3_5_mtp", "num_speculative_tokens": 3, "enforce_eager": True},
        "compilation_config": {"cudagraph_mode": "FULL_DECODE_ONLY"},
        "extra_args": ["--seed", "1024", "--enable-expert-parallel", "--max-num-seqs", "16",
                       "--additional-config", '{"enable_cpu_binding":true,"multistream_overlap_shared_expert":true}'],
        # The recipe's environment beyond the reference one (which already has OMP_PROC_BIND=false,
        # OMP_NUM_THREADS=1, TASK_QUEUE_ENABLE=1, PYTORCH_NPU_ALLOC_CONF, VLLM_USE_MODELSCOPE).
        "extra_env": {"HCCL_BUFFSIZE": "1024"},
    },
    # vllm-ascend docs/source/tutorials/models/DeepSeek-R1.md, "5.2 Multi-Node Data Parallel
    # Deployment" of DeepSeek-R1-W8A8 on 2 x Atlas 800 A2 (validated on v0.13.0): node 0 and node 1.
    # DeepSeek-V3 W8A8 weights have the same architecture (DeepseekV3ForCausalLM) and take the same flags.
    "deepseek-w8a8-2xa2": {
        "tensor_parallel_size": 4,
        "data_parallel_size": 4,
        "data_parallel_size_local": 2,
        "data_parallel_rpc_port": 13389,
        "max_model_len": 16384,
        "max_num_batched_tokens": 4096,
        "gpu_memory_utilization": 0.92,
        "trust_remote_code": True,
        "speculative_config": {"num_speculative_tokens": 3, "method": "mtp"},
        "compilation_config": {"cudagraph_mode": "FULL_DECODE_ONLY"},
        "extra_args": ["--quantization", "ascend", "--seed", "1024", "--enable-expert-parallel", "--max-num-seqs", "16"],
        "extra_env": {"HCCL_BUFFSIZE": "200", "VLLM_ASCEND_BALANCE_SCHEDULING": "1",
                      "HCCL_INTRA_PCIE_ENABLE": "1", "HCCL_INTRA_ROCE_ENABLE": "0"},
    },
})

# What a deployment is when neither preset, role defaults nor the deployment say otherwise.
BASE = {
    "revision": "master",
    "state": "present",
    "port": 8000,
    "tensor_parallel_size": 1,
    "data_parallel_size": 1,
    "max_model_len": None,
    "max_num_batched_tokens": None,
    "gpu_memory_utilization": 0.90,
    "reasoning_parser": None,
    "tool_call_parser": None,
    "enable_auto_tool_choice": False,
    "async_scheduling": False,
    "trust_remote_code": False,
    "compilation_config": None,
    "enable_prefix_caching": None,
    "speculative_config": None,
    "served_model_name": None,
    "extra_args": [],
    "extra_env": {},
    "devices": None,
    "vision": None,
    "image": None,
    "image_version": None,
    # Multi-node (vLLM's multiprocess data parallel across hosts, docs/multi-node.md): the member
    # hosts (inventory names, the head first), the ranks per member (default: data_parallel_size
    # split evenly), the head's RPC port (default: the fleet fact multinode_rpc_port) and the
    # head's API server processes (vLLM's --api-server-count; None: vLLM's default).
    "members": None,
    "data_parallel_size_local": None,
    "data_parallel_rpc_port": None,
    "api_server_count": None,
}

# The settings every member of a multi-node deployment must share with the head (what the
# stand-in and vLLM refuse or hang on when they differ), compared after each member resolved them.
MEMBER_KEYS = ("model", "revision", "image", "tensor_parallel_size", "data_parallel_size",
               "data_parallel_size_local", "data_parallel_rpc_port", "members", "max_model_len",
               "served_model_name", "port", "extra_args")
# The environment of every member (vllm-ascend multi-node tutorials): its address on the NIC the
# members talk over, and that NIC for Gloo, the TP sockets and HCCL's bootstrap socket.
MULTINODE_NIC_ENV = ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME")

KNOWN_KEYS = frozenset(SCHEMA)

# The deployment keys that are booleans: (key, null allowed, fix). Each is read once, as Ansible
# reads a boolean (_inputs.to_bool: "no", "false", "off", 0 are False), after the merge and before
# anything uses it (the checks, the command line, the compose file, the plan's verdict).
_SAME = "; yes/no, on/off and 1/0 mean the same, anything else is refused"
BOOL_KEYS = (
    ("trust_remote_code", False, "write true (vLLM runs the model repository's own code, --trust-remote-code) "
                                 "or false" + _SAME),
    ("enable_auto_tool_choice", False, "write true (--enable-auto-tool-choice, needs tool_call_parser) or false" + _SAME),
    ("async_scheduling", False, "write true (--async-scheduling) or false" + _SAME),
    ("enable_prefix_caching", True, "write true (--enable-prefix-caching), false (--no-enable-prefix-caching) or "
                                    "leave it unset/null (vLLM's default)" + _SAME),
    ("vision", True, "write true (a vision-language model: FlashComm v1 off), false (a text model) or leave it "
                     "unset/null (read from config.json's vision_config)" + _SAME),
)

# The environment of the reference procedure's compose service.
REFERENCE_ENV = (
    ("VLLM_USE_MODELSCOPE", "true"),
    ("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True"),
    ("HCCL_BUFFSIZE", "512"),
    ("OMP_PROC_BIND", "false"),
    ("OMP_NUM_THREADS", "1"),
    ("TASK_QUEUE_ENABLE", "1"),
)
# FlashComm v1 is off for vision-language models (vllm-ascend refuses to start with 'Flash Comm V1 is
# not supported for VL models'): the environment variable up to v0.22, --additional-config's
# enable_flashcomm1 from v0.23.0 (the release change in _release_changes.CHANGES says which, per image).
FLASHCOMM1 = "VLLM_ASCEND_ENABLE_FLASHCOMM1"
ADDITIONAL_CONFIG = "--additional-config"

# Models whose kernels fail under an 8-way tensor split on 910B with
# "aclnnCausalConv1d failed ... blockDim is invalid" (the reference operator's report for Qwen3.5-27B):
# the gated-DeltaNet linear-attention models (Qwen3.5, Qwen3-Next) run a causal conv1d whose
# block dimension is derived from the per-rank head count.
CAUSAL_CONV1D_MODELS = (re.compile(r"qwen3\.5", re.IGNORECASE), re.compile(r"qwen3-next", re.IGNORECASE))

GMU_WARN = 0.95

# vLLM's drain on stop (vLLM PRs #34730, #36666; ../shared/field-facts.md): with --shutdown-timeout N
# the server refuses new requests on SIGTERM and lets the requests in flight finish for up to N
# seconds; its default 0 aborts them. Only a release whose vLLM has the flag gets it (vLLM 0.18 on,
# read from the release data); compose must wait longer than N before it kills the container, so the
# service's stop_grace_period is N + STOP_GRACE_MARGIN (the engine's own shutdown after the drain).
SHUTDOWN_TIMEOUT_FLAG = "--shutdown-timeout"
STOP_GRACE_MARGIN = 30


class DeployError(ValueError):
    """Bad input that cannot be planned at all."""


def _msg(host, name, variable, problem, fix):
    return "%s: deployment %s: %s: %s. Fix: %s" % (host, name, variable, problem, fix)


def _read_flag(dep, key, nullable):
    """``(value, problem)``: boolean key ``key`` of ``dep`` as a bool (None where null is allowed
    and given), or the problem with it."""
    value = dep.get(key)
    if value is None and nullable:
        return None, None
    ok, converted = to_bool(value)
    if not ok:
        return None, "must be %s, got %r" % ("true, false or null" if nullable else "true or false", value)
    return converted, None


def flag(dep, key):
    """The boolean deployment key ``key`` of ``dep``, converted as plan() converts it (None: null,
    where allowed); raises DeployError for a value that is not a boolean."""
    nullable = dict((k, n) for k, n, _fix in BOOL_KEYS)[key]
    value, problem = _read_flag(dep, key, nullable)
    if problem:
        raise DeployError("%s: %s" % (key, problem))
    return value


def _check_bools(dep, host, name, errors):
    """Replace each boolean key of the resolved ``dep`` by its bool (None where null is allowed),
    or refuse it naming the key and the fix."""
    for key, nullable, fix in BOOL_KEYS:
        value, problem = _read_flag(dep, key, nullable)
        if problem:
            errors.append(_msg(host, name, key, problem, fix + " (in the deployment, or in "
                               "vllm_compose_deployment_defaults when it is set there)"))
        else:
            dep[key] = value


def _is_pow2(value):
    return isinstance(value, int) and value > 0 and (value & (value - 1)) == 0


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def preset_layers(preset, release=None):
    """The layers of one preset for an image of ``release`` (``v0.18.0rc1``; None: the preset as is).

    The preset's own keys, then each ``since`` layer whose release is ``release`` or older.
    """
    layers = [dict((k, v) for k, v in preset.items() if k != "since")]
    if release is None:
        return layers
    try:
        key = vllm_ascend_version_key(release)
    except VersionError:
        return layers
    for step in preset.get("since") or []:
        if vllm_ascend_version_key(step["release"]) <= key:
            layers.append(step["set"])
    return layers


def release_of_settings(deployment, image=None):
    """The vllm-ascend release an unresolved deployment will run: its image's tag, else its
    ``image_version``, else the shared version (``image``: the settings _facts.image_ref takes)."""
    image = image or {}
    ref = deployment.get("image") or image.get("image")
    if ref:
        return release_of(str(ref))
    return deployment.get("image_version") or image.get("version") or fleet_fact("image_version")


def merge(deployment, defaults=None, presets=None, release=None):
    """Resolve one deployment: BASE < preset (< its layers up to ``release``) < role-wide defaults < deployment.

    ``extra_env`` dicts merge key by key in the same order; everything else is replaced.
    Raises DeployError for an unknown preset name.
    """
    presets = PRESETS if presets is None else presets
    defaults = defaults or {}
    preset_name = deployment.get("preset", defaults.get("preset"))
    layers = [BASE]
    if preset_name:
        if preset_name not in presets:
            raise DeployError("unknown preset %r (known: %s)" % (preset_name, ", ".join(sorted(presets))))
        layers += preset_layers(presets[preset_name], release)
    layers += [defaults, deployment]
    out = {}
    env = {}
    for layer in layers:
        for key, value in layer.items():
            if key == "extra_env" and isinstance(value, dict):
                env.update(value)
            else:
                out[key] = value
    out["extra_env"] = env
    out["preset"] = preset_name
    if not out.get("served_model_name") and isinstance(out.get("model"), str):
        out["served_model_name"] = out["model"].rsplit("/", 1)[-1]
    return out


def compilation_config_json(value):
    """Return the --compilation-config argument for ``value`` (dict or JSON string), or raise ValueError."""
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError:
            raise ValueError("%r is not JSON" % value)
    else:
        data = value
    if not isinstance(data, dict):
        raise ValueError("%r is not a mapping (vLLM expects a JSON object)" % (value,))
    try:
        return json.dumps(data, separators=(",", ":"), sort_keys=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError("%r cannot be rendered as JSON (%s)" % (value, exc))


def image_registry(ref):
    """The registry an image reference is pulled from, as Docker decides it.

    The first path component names a registry when it contains ``.`` or ``:`` or is ``localhost``
    (``quay.io/ascend/vllm-ascend:v1`` -> ``quay.io``, ``mirror.site:5000/quay.io/...`` ->
    ``mirror.site:5000``); otherwise the image is on Docker Hub (``docker.io``).
    """
    first, sep, _rest = ref.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


# What a failed `docker pull` means, from the daemon's own error text (Docker 20.10-28), and the fix.
# Checked in order; the first match wins. {registry} and {ref} are filled in.
_PULL_FAILURES = (
    (r"manifest unknown|not found: manifest|manifest for .* not found",
     "{registry} does not serve it (no such tag, or no such digest in that repository)",
     "check the tag (ascendfleet_image_version, or the deployment's image_version/image) and "
     "ascendfleet_image_digest against what the registry holds; a pinned digest must be one the registry serves"),
    (r"no basic auth credentials|unauthorized|authentication required|denied|403 Forbidden",
     "{registry} refused the pull: not logged in, wrong credentials or no access to the repository",
     "set vllm_compose_image_registry_username and vllm_compose_image_registry_password (keep the password "
     "in Ansible Vault) for an account that may pull the repository"),
    (r"x509:|certificate signed by unknown authority|certificate is not valid|tls: ",
     "the TLS certificate of {registry} is not trusted by the host's Docker Engine",
     "install the registry's CA certificate as /etc/docker/certs.d/{registry}/ca.crt (or in the system "
     "CA bundle) on the host"),
    (r"server gave HTTP response to HTTPS client",
     "{registry} speaks plain HTTP, which Docker refuses by default",
     "give the registry TLS, or list {registry} under insecure-registries in /etc/docker/daemon.json on "
     "the host (then reload dockerd)"),
    (r"no such host|connection refused|i/o timeout|network is unreachable|no route to host|"
     r"Client\.Timeout|TLS handshake timeout|context deadline exceeded|EOF|connection reset",
     "{registry} cannot be reached from the host",
     "check that the registry is up and that the host resolves and reaches it (DNS, proxy, firewall); "
     "with a site mirror set ascendfleet_image_mirror"),
)


def pull_failure(ref, message):
    """One sentence saying why pulling ``ref`` failed and how to fix it, from the daemon's ``message``."""
    registry = image_registry(ref)
    text = " ".join(str(message or "").split())
    failures = _PULL_FAILURES
    if "@" in ref and re.search(r"unexpected HTTP status: 500", text):
        # The distribution registry answers a digest that names no manifest (e.g. an image ID) with 500.
        failures = _PULL_FAILURES[:1]
        text = text + " (manifest unknown for this digest)"
    for pattern, what, fix in failures:
        if re.search(pattern, text, re.IGNORECASE):
            return "%s. Fix: %s. (Docker said: %s)" % (
                what.format(registry=registry, ref=ref), fix.format(registry=registry, ref=ref), text or "nothing")
    return "pulling %s from %s failed. Fix: see Docker's message: %s" % (ref, registry, text or "(none)")


def text_config(config):
    """The part of config.json holding the language model's sizes (``text_config`` for VL models)."""
    if isinstance(config, dict) and isinstance(config.get("text_config"), dict):
        return config["text_config"]
    return config if isinstance(config, dict) else {}


def flashcomm1_key(dep):
    """The ``--additional-config`` key that turns FlashComm v1 off for ``dep``'s image (from
    v0.23.0), or None when its release still reads VLLM_ASCEND_ENABLE_FLASHCOMM1."""
    return additional_config_key(FLASHCOMM1, release_of(str(dep.get("image") or "")))


def additional_config_at(args):
    """``(index, json text)`` of the ``--additional-config`` value in a list of arguments (the last
    one: vLLM's argparse keeps it), or ``(None, None)``. ``index`` is the value's position (the
    ``--additional-config=VALUE`` form: the flag's own)."""
    found = (None, None)
    for i, arg in enumerate(args):
        arg = str(arg)
        if arg == ADDITIONAL_CONFIG and i + 1 < len(args):
            found = (i + 1, str(args[i + 1]))
        elif arg.startswith(ADDITIONAL_CONFIG + "="):
            found = (i, arg[len(ADDITIONAL_CONFIG) + 1:])
    return found


def with_additional_config(args, key, value):
    """``args`` with ``key: value`` in its ``--additional-config`` JSON: merged into the one given
    (vLLM keeps only the last flag, so a second one would drop the user's keys), else appended. A key
    the user set is kept as given (plan() refuses the one that cannot work)."""
    args = [str(a) for a in args]
    index, text = additional_config_at(args)
    if index is None:
        return args + [ADDITIONAL_CONFIG, json.dumps({key: value}, separators=(",", ":"))]
    try:
        config = json.loads(text)
    except ValueError:
        return args
    if not isinstance(config, dict):
        return args
    config.setdefault(key, value)
    rendered = json.dumps(config, separators=(",", ":"))
    args[index] = rendered if args[index] == text else "%s=%s" % (ADDITIONAL_CONFIG, rendered)
    return args


def shutdown_timeout(cli, dep, seconds):
    """``(timeout, stop_grace_period)`` in seconds for ``dep`` (resolved, with its image), or ``(None, None)``.

    ``seconds`` (the role's vllm_compose_drain_timeout) becomes vLLM's --shutdown-timeout when the
    image's release has the flag (``cli``: the controller-side ``_vllm_cli``; its release data
    decides, a release between or after the known ones by the oldest release that has it); 0 or
    None, no ``cli``, an older or unreadable release: none (vLLM's default, and compose's). A
    --shutdown-timeout the deployment gives in extra_args is kept as given (not written twice) and
    its value, when a number, sets the grace period.
    """
    given = [str(a) for a in dep.get("extra_args") or []]
    for index, arg in enumerate(given):
        if cli is not None and cli.flag_name(arg) == SHUTDOWN_TIMEOUT_FLAG:
            value = arg.partition("=")[2] if "=" in arg else (given[index + 1] if index + 1 < len(given) else "")
            return None, (int(value) + STOP_GRACE_MARGIN if value.isdigit() and int(value) > 0 else None)
    if cli is None or not seconds or int(seconds) <= 0:
        return None, None
    release = cli.release_of(str(dep.get("image") or ""))
    if not (release and cli.release_has("flags", SHUTDOWN_TIMEOUT_FLAG, release)):
        return None, None
    return int(seconds), int(seconds) + STOP_GRACE_MARGIN


def command(dep):
    """The vllm command line (a list) for a resolved deployment."""
    cmd = ["vllm", "serve", container_model_path(dep["model"]),
           "--host", "0.0.0.0", "--port", str(dep["port"]),
           "--tensor-parallel-size", str(dep["tensor_parallel_size"])]
    node = dep.get("multinode")
    if dep["data_parallel_size"] != 1 or node:
        cmd += ["--data-parallel-size", str(dep["data_parallel_size"])]
    if node:
        cmd += ["--data-parallel-size-local", str(node["local"]),
                "--data-parallel-address", str(node["head_address"]),
                "--data-parallel-rpc-port", str(node["rpc_port"])]
        if node["role"] == "head":
            if dep.get("api_server_count"):
                cmd += ["--api-server-count", str(dep["api_server_count"])]
        else:
            cmd += ["--headless", "--data-parallel-start-rank", str(node["start_rank"])]
    cmd += ["--served-model-name", dep["served_model_name"]]
    if dep.get("max_model_len"):
        cmd += ["--max-model-len", str(dep["max_model_len"])]
    if dep.get("max_num_batched_tokens"):
        cmd += ["--max-num-batched-tokens", str(dep["max_num_batched_tokens"])]
    if flag(dep, "trust_remote_code"):
        cmd.append("--trust-remote-code")
    cmd += ["--gpu-memory-utilization", repr(float(dep["gpu_memory_utilization"]))]
    if dep.get("reasoning_parser"):
        cmd += ["--reasoning-parser", dep["reasoning_parser"]]
    if dep.get("tool_call_parser"):
        cmd += ["--tool-call-parser", dep["tool_call_parser"]]
    if flag(dep, "enable_auto_tool_choice"):
        cmd.append("--enable-auto-tool-choice")
    if flag(dep, "async_scheduling"):
        cmd.append("--async-scheduling")
    if flag(dep, "enable_prefix_caching") is not None:
        cmd.append("--enable-prefix-caching" if flag(dep, "enable_prefix_caching") else "--no-enable-prefix-caching")
    if dep.get("speculative_config") not in (None, "", {}):
        cmd += ["--speculative-config", compilation_config_json(dep["speculative_config"])]
    if dep.get("compilation_config") not in (None, "", {}):
        cmd += ["--compilation-config", compilation_config_json(dep["compilation_config"])]
    if dep.get("shutdown_timeout"):
        cmd += [SHUTDOWN_TIMEOUT_FLAG, str(dep["shutdown_timeout"])]
    cmd += [str(a) for a in dep.get("extra_args") or []]
    key = flashcomm1_key(dep) if dep.get("is_vl") else None
    if key:
        cmd = with_additional_config(cmd, key, False)
    return cmd


def environment(dep, is_vl):
    """Container environment: the reference procedure's, FlashComm v1 off for VL models (up to
    v0.22; from v0.23.0 :func:`command` turns it off in --additional-config), then extra_env."""
    env = dict(REFERENCE_ENV)
    if is_vl and not flashcomm1_key(dep):
        env[FLASHCOMM1] = "0"
    node = dep.get("multinode")
    if node:
        env["HCCL_IF_IP"] = str(node["address"])
        for key in MULTINODE_NIC_ENV:
            env[key] = str(node["nic"])
    for key, value in (dep.get("extra_env") or {}).items():
        if isinstance(value, bool):
            value = "1" if value else "0"
        env[str(key)] = str(value)
    return env


def _truthy_env(value):
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def plan(deployments, host="host", family=None, healthy_device_ids=None, hbm_per_card_mb=None,
         models=None, defaults=None, image=None, presets=None, cli=None, network=None, drain_timeout=None):
    """Resolve and validate every deployment of one host.

    ``cli``: the controller-side ``_vllm_cli`` module (what each vllm-ascend release's vLLM
    accepts); when given, parsers, extra_args flags and cudagraph_mode are checked against the
    image's release. Left out on hosts (modules), where the generated data is not shipped.

    ``image``: the shared image settings as ``_facts.image_ref`` takes them (repository,
    version, os, variant, image, digest, source, mirror).
    ``models``: ``{"Owner/Name": {"prefetched": bool, "revision": str, "reason": str,
    "config": {...}, "weights_bytes": int}}`` as the vllm_model_info module returns.
    ``network``: for the multi-node deployments this host is a member of, ``{name: {"head_address",
    "address", "nic"}}`` (the head's address the members reach, this host's address and NIC on
    the route to its peers); without it their command and environment are left out.
    ``drain_timeout``: seconds vLLM lets the requests in flight finish when its container stops
    (:func:`shutdown_timeout`: --shutdown-timeout where the image's release has it, and the compose
    service's ``stop_grace_period`` longer); each deployment gets ``shutdown_timeout`` and
    ``stop_grace_period`` (None where not).
    Returns ``{"deployments": [...], "multinode": [...], "absent": [...], "errors": [...],
    "warnings": [...]}``: single-host deployments, then the multi-node ones this host is a member
    of (each with ``multinode``: role, ranks, members), which the caller rolls out as one unit.
    A multi-node deployment this host is not a member of is left out (and not checked) here.
    """
    errors, warnings, resolved, absent, multinode = [], [], [], [], []
    network = network or {}
    image = image or {}
    models = models or {}
    healthy = sorted(set(healthy_device_ids)) if healthy_device_ids is not None else None
    if not isinstance(deployments, list):
        return {"deployments": [], "absent": [], "warnings": [],
                "errors": ["%s: ascendfleet_deployments: must be a list of deployments, got %s. Fix: write it as a "
                           "YAML list of mappings with at least name and model." % (host, type(deployments).__name__)]}
    if not isinstance(defaults or {}, dict):
        return {"deployments": [], "absent": [], "warnings": [],
                "errors": ["%s: vllm_compose_deployment_defaults: must be a mapping of deployment keys, got %s. Fix: write "
                           "it as a YAML mapping, e.g. {gpu_memory_utilization: 0.9}, or leave it {}"
                           % (host, type(defaults).__name__)]}
    # Booleans of the defaults are refused per deployment (_check_bools), after the merge.
    converted, problems = validate(dict((k, v) for k, v in (defaults or {}).items() if k != "name"), skip_types=("bool",))
    if problems:
        return {"deployments": [], "absent": [], "warnings": [],
                "errors": ["%s: vllm_compose_deployment_defaults: %s: %s. Fix: %s" % (host, key, problem, fix)
                           for key, problem, fix in problems]}
    defaults = dict(defaults or {}, **converted)
    seen_names = set()
    for index, raw in enumerate(deployments):
        label = "#%d" % (index + 1)
        if not isinstance(raw, dict):
            errors.append(_msg(host, label, "ascendfleet_deployments[%d]" % index, "is not a mapping",
                               "give each deployment as a mapping with name and model"))
            continue
        name = raw.get("name")
        if not is_deployment_name(name):
            errors.append(_msg(host, label, "name", "%r is not a valid deployment name" % (name,),
                               "use " + DEPLOYMENT_NAME_FORM))
            continue
        if name in seen_names:
            errors.append(_msg(host, name, "name", "two deployments are named %s" % name, "give each deployment its own name"))
            continue
        seen_names.add(name)
        # The declared schema (_deploy_schema: types, ranges, patterns, forbidden keys, with Ansible's
        # ArgumentSpecValidator); a deployment with a bad key is not planned further.
        converted, problems = validate(raw)
        if problems:
            errors.extend(_msg(host, name, key, problem, fix) for key, problem, fix in problems)
            continue
        raw = dict(raw, **converted)
        try:
            dep = merge(raw, defaults, presets, release_of_settings(dict(defaults or {}, **raw), image))
        except DeployError as exc:
            errors.append(_msg(host, name, "preset", str(exc), "use one of the known presets or drop preset"))
            continue
        if dep.get("state") not in ("present", "absent"):
            errors.append(_msg(host, name, "state", "%r is neither present nor absent" % (dep.get("state"),),
                               "set state: present or state: absent"))
            continue
        members = dep.get("members")
        if members is not None:
            if not (isinstance(members, list) and len(members) >= 2 and all(isinstance(m, str) and m for m in members)
                    and len(set(members)) == len(members)):
                errors.append(_msg(host, name, "members", "%r is not a list of two or more distinct inventory host names"
                                   % (members,), "list the member hosts by inventory name, the head first, e.g. "
                                   "[npu-01, npu-02], or drop members for a one-host deployment"))
                continue
            if host not in members:
                continue
        if dep["state"] == "absent":
            absent.append({"name": name, "model": dep.get("model")})
            continue
        model = dep.get("model")
        if model_id_parts(model) is None:
            errors.append(_msg(host, name, "model", "%r is not a model id" % (model,),
                               "give the ModelScope id as Owner/Name (%s), e.g. Qwen/Qwen3.5-27B" % MODEL_ID_RULE))
            continue
        before = len(errors)
        _check_bools(dep, host, name, errors)
        _check_numbers(dep, host, name, errors, warnings)
        _check_cc(dep, host, name, errors)
        if len(errors) > before:
            continue
        if members is not None:
            if not _member_ranks(dep, host, name, members, network.get(name), errors):
                continue
        world = dep["tensor_parallel_size"] * (dep["multinode"]["local"] if members is not None else dep["data_parallel_size"])
        dep["card_count"] = world
        if not _is_pow2(world):
            errors.append(_msg(host, name, "tensor_parallel_size x data_parallel_size",
                               "%d x %d = %d cards is not a power of two" % (dep["tensor_parallel_size"], dep["data_parallel_size"], world),
                               "use 1, 2, 4, 8 or 16 cards in total (HCCL groups and npu_assign need powers of two)"))
        elif healthy is not None and world > len(healthy):
            errors.append(_msg(host, name, "tensor_parallel_size x data_parallel_size" + ("_local" if members is not None else ""),
                               "needs %d cards but the host has only %d healthy card(s) (%s)"
                               % (world, len(healthy), ", ".join(str(d) for d in healthy) or "none"),
                               "lower tensor_parallel_size/data_parallel_size or repair the cards"))
        conv1d = any(p.search(model) for p in CAUSAL_CONV1D_MODELS) or (
            "linear_conv_kernel_dim" in text_config((models.get(model) or {}).get("config") or {}))
        # A preset whose official recipe runs 8-way (qwen3.5-397b-a17b-2xa2) is not warned about.
        recipe_tp8 = raw.get("tensor_parallel_size") is None and (presets or PRESETS).get(dep.get("preset") or "", {}).get(
            "tensor_parallel_size") == 8
        if dep["tensor_parallel_size"] == 8 and family == "910B" and conv1d and not recipe_tp8:
            warnings.append(_msg(host, name, "tensor_parallel_size",
                                 "8 on 910B is known to fail for %s with 'aclnnCausalConv1d failed ... blockDim is invalid' "
                                 "(its causal-conv1d kernel has an operator limit under an 8-way split; not a memory problem)"
                                 % model, "use tensor_parallel_size 2 or 4 (add data_parallel_size for throughput)"))
        devices = dep.get("devices")
        if devices is not None:
            if not isinstance(devices, list) or not all(_is_int(d) for d in devices) or len(set(devices)) != len(devices):
                errors.append(_msg(host, name, "devices", "%r is not a list of distinct device ids" % (devices,),
                                   "give the N of /dev/davinciN, e.g. [4, 5], or drop devices to let npu_assign choose"))
            elif len(devices) != world:
                errors.append(_msg(host, name, "devices", "%d device(s) given for %d cards" % (len(devices), world),
                                   "list exactly tensor_parallel_size x data_parallel_size device ids"))
            elif healthy is not None and set(devices) - set(healthy):
                errors.append(_msg(host, name, "devices", "device(s) %s are not healthy cards of this host"
                                   % ", ".join(str(d) for d in sorted(set(devices) - set(healthy))),
                                   "choose among %s" % (", ".join(str(d) for d in healthy) or "none")))
        _check_model(dep, host, name, models.get(model), hbm_per_card_mb, errors, warnings)
        try:
            dep["image"] = image_ref(image, family, dep)
        except FactError as exc:
            errors.append(_msg(host, name, "ascendfleet_image_variant", str(exc),
                               "set ascendfleet_image_variant (\"\", \"-a3\", \"-310p\", \"-a5\") or ascendfleet_image"))
            continue
        built_for = image_variant_of(dep["image"])
        if family and built_for and built_for != family:
            errors.append(_msg(host, name, "image", "%s is the %s image variant but the host's chips are %s"
                               % (dep["image"], built_for, family),
                               "use the %s variant (tag suffix %r) or leave ascendfleet_image_variant unset to choose it from the chips"
                               % (family, FAMILY_VARIANT.get(family, "?"))))
        if cli is not None:
            _check_cli(cli, dep, host, name, errors, warnings)
        dep["registry"] = image_registry(dep["image"])
        info = models.get(model) or {}
        is_vl = dep["vision"] if dep.get("vision") is not None else "vision_config" in (info.get("config") or {})
        if is_vl and FLASHCOMM1 in dep["extra_env"] and _truthy_env(dep["extra_env"][FLASHCOMM1]):
            errors.append(_msg(host, name, "extra_env.%s" % FLASHCOMM1,
                               "FlashComm v1 is forced on for %s, a vision-language model; vllm-ascend refuses to start with "
                               "'Flash Comm V1 is not supported for VL models'" % model,
                               "remove %s from extra_env (the role turns FlashComm v1 off for VL models)" % FLASHCOMM1))
        _check_additional_config(dep, host, name, bool(is_vl), errors)
        dep["is_vl"] = bool(is_vl)
        dep["container_model_path"] = container_model_path(model)
        if info.get("mount_source"):
            # The revisions layout: the one revision directory the compose file mounts read-only
            # (a moved branch is a new key, so a changed compose file: rolled out through the gate).
            dep["revision_key"], dep["mount_source"] = info.get("key"), info["mount_source"]
        dep["shutdown_timeout"], dep["stop_grace_period"] = shutdown_timeout(cli, dep, drain_timeout)
        if members is not None and dep["multinode"]["head_address"] is None:
            # Validated only: the caller plans it again with the network of its members.
            dep["command"], dep["environment"] = [], {}
        else:
            dep["command"] = command(dep)
            dep["environment"] = environment(dep, is_vl)
        (multinode if members is not None else resolved).append(dep)
    _check_collisions(resolved + multinode, host, errors)
    return {"deployments": resolved, "multinode": multinode, "absent": absent, "errors": errors, "warnings": warnings}


def _member_ranks(dep, host, name, members, network, errors):
    """Note this member's part of a multi-node deployment as ``dep["multinode"]`` (role, ranks,
    addresses); False (with the errors) when the sizes do not split over the members."""
    count = len(members)
    size, local = dep["data_parallel_size"], dep.get("data_parallel_size_local")
    if local is None:
        if size % count:
            errors.append(_msg(host, name, "data_parallel_size", "%d ranks do not split evenly over %d members" % (size, count),
                               "use a multiple of %d (each member runs data_parallel_size / members ranks) or set "
                               "data_parallel_size_local" % count))
            return False
        local = size // count
    if not _is_int(local) or local < 1 or local * count != size:
        errors.append(_msg(host, name, "data_parallel_size_local", "%r ranks on each of %d members is not data_parallel_size %d"
                           % (local, count, size), "set data_parallel_size_local to data_parallel_size / members (%s)"
                           % (size // count if size % count == 0 else "none fits: change data_parallel_size")))
        return False
    port = dep.get("data_parallel_rpc_port")
    port = fleet_fact("multinode_rpc_port") if port is None else port
    if not _is_int(port) or not 0 < port < 65536 or port == dep["port"]:
        errors.append(_msg(host, name, "data_parallel_rpc_port", "%r is not a TCP port apart from the API port %s"
                           % (port, dep["port"]), "use a free port between 1 and 65535, e.g. the tutorial's %s"
                           % fleet_fact("multinode_rpc_port")))
        return False
    if dep.get("api_server_count") is not None and (not _is_int(dep["api_server_count"]) or dep["api_server_count"] < 1):
        errors.append(_msg(host, name, "api_server_count", "%r is not a positive integer" % (dep["api_server_count"],),
                           "set a whole number >= 1 (the tutorial's 2) or leave it unset"))
        return False
    index = members.index(host)
    dep["data_parallel_size_local"], dep["data_parallel_rpc_port"] = local, port
    dep["multinode"] = {
        "members": list(members), "head": members[0], "role": "head" if index == 0 else "member",
        "local": local, "start_rank": index * local, "rpc_port": port,
        "head_address": (network or {}).get("head_address"), "address": (network or {}).get("address"),
        "nic": (network or {}).get("nic"),
    }
    return True


def _check_additional_config(dep, host, name, is_vl, errors):
    """The ``--additional-config`` of extra_args: a JSON object (the role merges its own keys into
    it), and FlashComm v1 not forced on for a VL model where the image reads it from there."""
    index, text = additional_config_at(dep.get("extra_args") or [])
    if index is None:
        return
    try:
        config = json.loads(text)
    except ValueError:
        config = None
    if not isinstance(config, dict):
        errors.append(_msg(host, name, "extra_args", "%s %s is not a JSON object" % (ADDITIONAL_CONFIG, text),
                           "write it as one argument holding a JSON object, e.g. '{\"enable_cpu_binding\":true}'"))
        return
    key = flashcomm1_key(dep)
    if is_vl and key and config.get(key):
        errors.append(_msg(host, name, "extra_args", "%s sets %s for %s, a vision-language model; vllm-ascend refuses to "
                           "start with 'Flash Comm V1 is not supported for VL models'" % (ADDITIONAL_CONFIG, key, dep["model"]),
                           "drop %s from %s (the role sets it to false for VL models)" % (key, ADDITIONAL_CONFIG)))


def _check_numbers(dep, host, name, errors, warnings):
    for key in ("tensor_parallel_size", "data_parallel_size", "port"):
        if not _is_int(dep.get(key)) or dep[key] < 1:
            errors.append(_msg(host, name, key, "%r is not a positive integer" % (dep.get(key),), "set a whole number >= 1"))
    if _is_int(dep.get("port")) and dep["port"] > 65535:
        errors.append(_msg(host, name, "port", "%d is not a TCP port" % dep["port"], "use a port between 1 and 65535"))
    for key in ("max_model_len", "max_num_batched_tokens"):
        if dep.get(key) is not None and (not _is_int(dep[key]) or dep[key] < 1):
            errors.append(_msg(host, name, key, "%r is not a positive integer" % (dep[key],), "set a whole number of tokens or leave it unset"))
    gmu = dep.get("gpu_memory_utilization")
    if isinstance(gmu, bool) or not isinstance(gmu, (int, float)) or not 0 < gmu <= 1:
        errors.append(_msg(host, name, "gpu_memory_utilization", "%r is outside (0, 1]" % (gmu,),
                           "use a fraction of each card's HBM such as 0.90 (stable) or 0.95 (faster)"))
    elif gmu > GMU_WARN:
        warnings.append(_msg(host, name, "gpu_memory_utilization",
                             "%s is above %s; operators report out-of-memory crashes there ('ready to explode' at 0.98)" % (gmu, GMU_WARN),
                             "use 0.95 or lower; on OOM go to 0.90 first"))
    if dep.get("enable_auto_tool_choice") is True and not dep.get("tool_call_parser"):
        errors.append(_msg(host, name, "enable_auto_tool_choice", "is true without tool_call_parser (vLLM refuses to start)",
                           "set tool_call_parser (qwen3_coder for Qwen3.5) or drop enable_auto_tool_choice"))
    if not isinstance(dep.get("extra_args") or [], list):
        errors.append(_msg(host, name, "extra_args", "is not a list", "give extra vllm flags as a list of strings"))
    if not isinstance(dep.get("extra_env") or {}, dict):
        errors.append(_msg(host, name, "extra_env", "is not a mapping", "give extra environment variables as a mapping"))


def _check_cli(cli, dep, host, name, errors, warnings):
    """What the image's vLLM would refuse at start-up (unknown parser, flag, cudagraph mode)."""
    release = cli.release_of(dep["image"])
    if release not in cli.releases():
        warnings.append(_msg(host, name, "image", "%s is not a vllm-ascend release this collection knows (known: %s), so "
                             "its reasoning/tool-call parsers and extra_args flags are not checked before start-up"
                             % (dep["image"], ", ".join(cli.releases())),
                             "use a known release tag, or check the flags against vllm serve --help of that image"))
        return

    def message(variable, problem, fix):
        return _msg(host, name, variable, problem, fix)

    errors.extend(cli.check(dep, release, message))
    warnings.extend(cli.changes(dep, release, message)[1])  # what this release deprecates
    _check_variant(cli, dep, release, message, errors)


def _known_variants():
    """Every tag suffix vllm-ascend publishes: each family's variant, with and without -openeuler."""
    return set(v + os_ for v in FAMILY_VARIANT.values() for os_ in ("", "-openeuler"))


def _check_variant(cli, dep, release, message, errors):
    """An image variant the release does not build (its Dockerfiles, in the release data): the A5 images
    (-a5) start at v0.21.0rc1, so an A5 host on an older release has no image to run."""
    images = (getattr(cli, "RELEASES", {}).get(release) or {}).get("images")
    tag = str(dep["image"]).split("@", 1)[0].rsplit("/", 1)[-1].partition(":")[2]
    suffix = tag[len(release):] if tag.startswith(release) else None
    if not images or suffix is None or suffix not in _known_variants() or suffix in images:
        return
    family = image_variant_of(dep["image"]) or "?"
    first = [r for r in cli.releases() if suffix in ((cli.RELEASES.get(r) or {}).get("images") or {})]
    errors.append(message("image", "vllm-ascend %s publishes no %s image (the %s variant: its Dockerfiles build %s)"
                          % (release, suffix, family, ", ".join(repr(k) for k in sorted(images))),
                          "set ascendfleet_image_version (or the deployment's image_version) to %s or later" % first[0] if first
                          else "use a release that builds the %s variant" % family))


# Deployment keys vLLM takes as JSON, and how to write each.
JSON_KEYS = (
    ("compilation_config", "write it as YAML data, e.g. compilation_config: {cudagraph_mode: FULL_DECODE_ONLY}, or as a "
                           "JSON string '{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}' (not key:value)"),
    ("speculative_config", "write it as YAML data, e.g. speculative_config: {method: qwen3_5_mtp, num_speculative_tokens: 3}, "
                           "or as a JSON string"),
)


def _check_cc(dep, host, name, errors):
    for key, fix in JSON_KEYS:
        if dep.get(key) in (None, "", {}):
            continue
        try:
            compilation_config_json(dep[key])
        except ValueError as exc:
            errors.append(_msg(host, name, key, str(exc), fix))


def _check_model(dep, host, name, info, hbm_per_card_mb, errors, warnings):
    model = dep["model"]
    if not info or not info.get("prefetched"):
        reason = (info or {}).get("reason") or "no completion marker"
        errors.append(_msg(host, name, "model", "%s (revision %s) is not prefetched: %s" % (model, dep.get("revision"), reason),
                           "fetch the missing files again: run playbooks/prefetch.yml (or deploy-qwen.yml --tags prefetch) "
                           "for this host; nothing was changed, a running container is left as it is"))
        return
    if info.get("revision") not in (None, dep.get("revision")):
        errors.append(_msg(host, name, "revision", "the cache holds %s at revision %s, not %s" % (model, info.get("revision"), dep.get("revision")),
                           "prefetch revision %s or deploy the cached revision" % dep.get("revision")))
    text = text_config(info.get("config") or {})
    max_pos = text.get("max_position_embeddings")
    if dep.get("max_model_len") and _is_int(max_pos) and dep["max_model_len"] > max_pos:
        errors.append(_msg(host, name, "max_model_len", "%d is above %s's max_position_embeddings %d (config.json)"
                           % (dep["max_model_len"], model, max_pos),
                           "set max_model_len to %d or less" % max_pos))
    weights = info.get("weights_bytes")
    gmu = dep.get("gpu_memory_utilization")
    if weights and hbm_per_card_mb and isinstance(gmu, (int, float)) and _is_int(dep.get("tensor_parallel_size")):
        per_card_mb = weights / float(dep["tensor_parallel_size"]) / (1024 * 1024)
        usable_mb = hbm_per_card_mb * gmu
        if per_card_mb > usable_mb:
            errors.append(_msg(host, name, "tensor_parallel_size",
                               "%s weighs %.1f GiB, %.1f GiB per card at tensor_parallel_size %d, more than the %.1f GiB usable per card "
                               "(%d MiB HBM x gpu_memory_utilization %s)"
                               % (model, weights / 1024.0 ** 3, per_card_mb / 1024, dep["tensor_parallel_size"], usable_mb / 1024,
                                  hbm_per_card_mb, gmu),
                               "raise tensor_parallel_size (2, 4, ...) or use a smaller or quantised model"))


def _check_collisions(resolved, host, errors):
    ports, cards = {}, {}
    for dep in resolved:
        other = ports.setdefault(dep["port"], dep["name"])
        if other != dep["name"]:
            errors.append(_msg(host, dep["name"], "port", "%d is also the port of deployment %s" % (dep["port"], other),
                               "give each deployment on a host its own port"))
        for device in dep.get("devices") or []:
            other = cards.setdefault(device, dep["name"])
            if other != dep["name"]:
                errors.append(_msg(host, dep["name"], "devices", "card %d is also given to deployment %s" % (device, other),
                                   "give each deployment its own cards, or drop devices to let npu_assign choose"))


def hbm_per_card(chips, device_ids=None):
    """Smallest device memory (MB) among the chips (HBM, else Memory-Usage total), or None."""
    sizes = []
    for chip in chips or []:
        if device_ids is not None and chip.get("device_id") not in device_ids:
            continue
        size = chip.get("hbm_total_mb") or chip.get("memory_total_mb")
        if size:
            sizes.append(size)
    return min(sizes) if sizes else None


# --------------------------------------------------------------------------- model cache (host side)

CONFIG_KEYS = ("max_position_embeddings", "model_type", "architectures", "torch_dtype", "linear_conv_kernel_dim")


def _small_config(config):
    """The parts of config.json the checks read (keeps module output small)."""
    out = {k: config[k] for k in CONFIG_KEYS if k in config}
    if isinstance(config.get("text_config"), dict):
        out["text_config"] = {k: config["text_config"][k] for k in CONFIG_KEYS if k in config["text_config"]}
    if "vision_config" in config:
        out["vision_config"] = {}
    return out


def model_state(cache_dir, model, revision, verify="quick", layout="flat", reads=None):
    """What the cache holds for ``model`` at ``revision``, for planning a deployment.

    Completeness is ``_facts.model_completeness`` (the one reader: marker, manifest, every
    file at its manifest size, hashes too with ``verify="full"``); for a complete model this
    adds what the checks read from ``config.json`` and the size of the ``*.safetensors``
    weights. Returns ``{"path", "prefetched", "revision" (the marker's), "reason", "config",
    "weights_bytes"}``; never raises for a missing or bad cache.

    ``layout="revisions"`` (``ascendfleet_cache_layout``): the revision directory ``revision``
    resolved to when it was fetched (``_model_revisions.resolved``: refs.json, no hub asked);
    ``path`` is that directory, ``revision`` the name asked for once it is complete, and the
    state adds ``key`` (the commit id, or content key, the deployment serves), ``commit`` and
    ``mount_source`` (what the compose file mounts read-only; None while not complete).
    ``reads``: a ``_facts.CacheReads`` shared by the questions of one read-only execution.
    """
    if layout == "revisions":
        from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import mount_source, resolved

        state = resolved(cache_dir, model, revision, verify, reads=reads)
        out = {"path": state["model_dir"], "prefetched": False, "revision": None, "reason": None,
               "config": {}, "weights_bytes": 0, "key": state["key"], "commit": state["commit"], "mount_source": None}
        if not state["complete"]:
            out["reason"] = "; ".join(state["reasons"]) or "incomplete"
            return out
        out["revision"] = revision
        out = _read_config(out, state["model_dir"], model)
        if out["prefetched"]:
            out["mount_source"] = mount_source(cache_dir, model, state["key"])
        return out
    state = model_completeness(cache_dir, model, revision, verify, reads=reads)
    path = model_dir(cache_dir, model)
    out = {"path": path, "prefetched": False, "revision": state["cached_revision"], "reason": None,
           "config": {}, "weights_bytes": 0}
    if not state["complete"]:
        reasons = state["reasons"]
        if reasons == ["no completion marker"]:
            reasons = ["no completion marker %s" % state["marker"]]
        out["reason"] = "; ".join(reasons)
        return out
    return _read_config(out, path, model)


def _read_config(out, path, model):
    """``out`` with what the checks read from the complete copy in ``path`` (config.json, the
    weights' size) and ``prefetched`` true, or the reason config.json cannot be read."""
    import os

    try:
        with open(os.path.join(path, "config.json"), "rb") as handle:
            config = json.loads(handle.read().decode("utf-8"))
    except (IOError, OSError, ValueError) as exc:
        out["reason"] = "config.json of %s cannot be read (%s)" % (model, exc)
        return out
    if not isinstance(config, dict):
        out["reason"] = "config.json of %s is not a JSON object" % model
        return out
    out["config"] = _small_config(config)
    out["weights_bytes"] = sum(os.stat(os.path.join(path, entry)).st_size
                               for entry in sorted(os.listdir(path)) if entry.endswith(".safetensors"))
    out["prefetched"] = True
    return out
