#!/usr/bin/python3
# -*- coding: utf-8 -*-
"""Simulator: a stand-in for the `vllm` command of the vllm-ascend image.

Test infrastructure only (tests/sim), never shipped in a role. Installed as
/usr/local/bin/vllm in the stand-in images built by tests/sim/vllm/build.sh.

`vllm serve MODEL [flags]` enforces the start-up contract a real vllm-ascend
container imposes on its deployer (flags, model on disk, max_model_len, NPU
device nodes, image variant vs. the host's SoC, FlashComm v1 with VL models),
then serves an OpenAI-compatible API with canned but request-dependent answers.
Python 3.11 standard library only. See tests/sim/vllm/README.md.
"""

import argparse
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROG = "vllm"
SIM = "ascendfleet-sim"
# The engine-hang switch (see Server.wait_while_hung) and how long a hung request waits at most.
HANG_FILE_DEFAULT = "/tmp/ascendfleet-sim-engine-hung"
HANG_LIMIT_SECONDS = 600
DEFAULT_VERSION = "0.17.0rc1"

# vLLM's registered parsers (vllm/entrypoints/openai/tool_parsers, vllm/reasoning).
TOOL_CALL_PARSERS = (
    "deepseek_v3", "deepseek_v31", "ernie45", "gigachat3", "glm45", "granite", "granite-20b-fc",
    "hermes", "hunyuan_a13b", "internlm", "jamba", "kimi_k2", "llama3_json", "llama4_json",
    "llama4_pythonic", "longcat", "minimax", "minimax_m2", "mistral", "olmo3", "openai",
    "phi4_mini_json", "pythonic", "qwen3_coder", "qwen3_xml", "seed_oss", "step3", "xlam",
)
REASONING_PARSERS = (
    "deepseek_r1", "deepseek_v3", "ernie45", "glm45", "granite", "hunyuan_a13b", "kimi_k2",
    "minimax_m2", "minimax_m2_append_think", "mistral", "olmo3", "openai_gptoss", "qwen3",
    "seed_oss", "step3",
)

# Image variant (baked into each stand-in image) -> vllm-ascend's AscendDeviceType name.
VARIANT_DEVICE_TYPE = {"910b": "A2", "a3": "A3", "310p": "_310P"}
VARIANT_TAG_SUFFIX = {"910b": "", "a3": "-a3", "310p": "-310p"}
# SoC names the driver reports, as torch_npu.npu.get_soc_name() spells them.
SOC_PATTERNS = (
    (re.compile(r"^Ascend910B\d"), "910b"),
    (re.compile(r"^Ascend910_93\d\d$"), "a3"),
    (re.compile(r"^Ascend310P\d$"), "310p"),
)
# Keys vLLM reads to derive max_model_len (vllm/config/model.py), smallest wins.
MAX_LEN_KEYS = (
    "max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
    "model_max_length", "max_sequence_length", "max_seq_length", "seq_len",
)
# vllm.config.compilation.CUDAGraphMode
CUDAGRAPH_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
CONTROL_DEVICES = ("davinci_manager", "devmm_svm", "hisi_hdc")
# Per release: the flags, parsers and cudagraph modes the real `vllm serve` of that release accepts
# (cli_lists.json, written by gen_cli_lists.py from the vLLM wheel the release is built on). A
# release not listed there keeps the built-in tuples above and this parser's own flags.
CLI_LISTS_PATHS = (
    os.environ.get("ASCENDFLEET_SIM_VLLM_CLI_LISTS", ""),
    os.path.join(os.path.dirname(os.path.realpath(__file__)), "cli_lists.json"),
    "/usr/local/share/ascendfleet-sim/vllm_cli_lists.json",
)


_LISTS = []


def release_lists():
    """The lists of this image's release (ASCENDFLEET_SIM_VLLM_VERSION), or None (read once)."""
    if not _LISTS:
        version = os.environ.get("ASCENDFLEET_SIM_VLLM_VERSION", DEFAULT_VERSION)
        found = None
        for path in CLI_LISTS_PATHS:
            if path and os.path.isfile(path):
                with open(path, encoding="utf-8") as handle:
                    found = json.load(handle).get(version)
                break
        _LISTS.append(found)
    return _LISTS[0]


def unknown_flags(extras, known):
    """Split argparse's leftover tokens into those of flags vLLM knows (ignored here) and the unknown ones.

    A `--flag` token is known when vLLM's FlexibleArgumentParser would know it (`_`->`-`,
    `--x.key` JSON keys); the value tokens after a flag go with it.
    """
    unknown, current = [], None
    for arg in extras:
        if arg.startswith("--") and arg != "--":
            name = "--" + arg[2:].split("=", 1)[0].split(".", 1)[0].rstrip("+").replace("_", "-")
            current = name in known
        if current is not True:
            unknown.append(arg)
    return unknown


class StartupError(Exception):
    """Start-up refusal: `exc_line` mimics the real exception, `hint` is the simulator's plain advice."""

    def __init__(self, exc_line, hint):
        super().__init__(exc_line)
        self.exc_line = exc_line
        self.hint = hint


def env_true(name):
    """vLLM's own env parsing: VLLM_USE_MODELSCOPE is true only for "true" (any case), as in vllm/envs.py."""
    value = os.environ.get(name, "").strip().lower()
    return value == "true" if name == "VLLM_USE_MODELSCOPE" else value in ("1", "true")


def env_int_flag(name):
    """vllm-ascend's env parsing (vllm_ascend/envs.py): bool(int(os.getenv(name, "0")))."""
    value = os.environ.get(name, "0")
    try:
        return bool(int(value))
    except ValueError:
        raise StartupError("ValueError: invalid literal for int() with base 10: %r" % value,
                           "%s takes 0 or 1, not %r." % (name, value))


def log(level, where, msg):
    stamp = time.strftime("%m-%d %H:%M:%S")
    print("(APIServer pid=%d) %s %s [%s] %s" % (os.getpid(), level, stamp, where, msg), flush=True)


def uvicorn_log(msg):
    print("INFO:     %s" % msg, flush=True)


# --------------------------------------------------------------------------- arguments


class FlexibleArgumentParser(argparse.ArgumentParser):
    """Like vLLM's: `--max_model_len` is accepted as `--max-model-len`."""

    def parse_known_args(self, args=None, namespace=None):  # noqa: D401 - argparse API (parse_args calls it)
        fixed = []
        for arg in args if args is not None else sys.argv[1:]:
            if arg.startswith("--") and "_" in arg.split("=", 1)[0]:
                key, sep, value = arg.partition("=")
                arg = key.replace("_", "-") + sep + value
            fixed.append(arg)
        return super().parse_known_args(fixed, namespace)


def compilation_config(value):
    """vLLM parses --compilation-config/-O as JSON (pydantic) or as an optimisation level."""
    if re.fullmatch(r"[0-3]", value.strip()):
        return {"level": int(value)}
    try:
        data = json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            "1 validation error for CompilationConfig\n  Invalid JSON: %s [type=json_invalid, input_value=%r, input_type=str]\n"
            "    (%s: --compilation-config must be JSON such as '{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}', not key:value)"
            % (exc.msg.lower() + " at line %d column %d" % (exc.lineno, exc.colno), value, SIM)
        )
    if not isinstance(data, dict):
        raise argparse.ArgumentTypeError(
            "1 validation error for CompilationConfig\n  Input should be an object [type=model_type, input_value=%r, input_type=str]" % value
        )
    mode = data.get("cudagraph_mode")
    modes = tuple((release_lists() or {}).get("cudagraph_modes") or CUDAGRAPH_MODES)
    if mode is not None and mode not in modes:
        raise argparse.ArgumentTypeError(
            "1 validation error for CompilationConfig\ncudagraph_mode\n  Input should be %s [type=enum, input_value=%r, input_type=str]"
            % (", ".join("'%s'" % m for m in modes[:-1]) + " or '%s'" % modes[-1], mode)
        )
    return data


def json_object(value):
    try:
        data = json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError("Invalid JSON: %s [type=json_invalid, input_value=%r]" % (exc.msg, value))
    if not isinstance(data, dict):
        raise argparse.ArgumentTypeError("Input should be a JSON object, got %r" % value)
    return data


def build_parser():
    parser = FlexibleArgumentParser(prog=PROG, description="vLLM CLI (%s simulator)" % SIM, allow_abbrev=False)
    parser.add_argument("-v", "--version", action="version", version=os.environ.get("ASCENDFLEET_SIM_VLLM_VERSION", DEFAULT_VERSION))
    sub = parser.add_subparsers(dest="subparser", required=True)
    serve = sub.add_parser("serve", prog="vllm serve", usage="vllm serve [model_tag] [options]", allow_abbrev=False,
                           help="Start the vLLM OpenAI Compatible API server.")
    serve.add_argument("model_tag", nargs="?", help="The model tag to serve (local path or hub id).")
    serve.add_argument("--model", dest="model_flag", default=None)
    # Frontend
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--api-key", default=None)
    serve.add_argument("--uvicorn-log-level", default="info", choices=["critical", "error", "warning", "info", "debug", "trace"])
    serve.add_argument("--disable-uvicorn-access-log", action="store_true")
    serve.add_argument("--enable-auto-tool-choice", action="store_true")
    serve.add_argument("--tool-call-parser", default=None)
    serve.add_argument("--chat-template", default=None)
    serve.add_argument("--allowed-local-media-path", default="")
    serve.add_argument("--disable-log-requests", action="store_true")
    serve.add_argument("--enable-log-requests", action="store_true")
    serve.add_argument("--disable-log-stats", action="store_true")
    serve.add_argument("--max-log-len", type=int, default=None)
    # vLLM 0.18 on (PRs #34730, #36666): on SIGTERM refuse new requests and let those in flight finish
    # for up to N seconds; 0 (the default) aborts them. A release without it refuses the flag (main()).
    serve.add_argument("--shutdown-timeout", type=int, default=0)
    # Model
    serve.add_argument("--served-model-name", nargs="+", default=None)
    serve.add_argument("--tokenizer", default=None)
    serve.add_argument("--revision", default=None)
    serve.add_argument("--download-dir", default=None)
    serve.add_argument("--trust-remote-code", action="store_true")
    serve.add_argument("--dtype", default="auto", choices=["auto", "half", "float16", "bfloat16", "float", "float32"])
    serve.add_argument("--seed", type=int, default=None)
    serve.add_argument("--max-model-len", type=int, default=None)
    serve.add_argument("--quantization", "-q", default=None)
    serve.add_argument("--enforce-eager", action="store_true")
    serve.add_argument("--generation-config", default="auto")
    serve.add_argument("--reasoning-parser", default="")
    serve.add_argument("--limit-mm-per-prompt", type=json_object, default=None)
    # Parallelism
    serve.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    serve.add_argument("--pipeline-parallel-size", "-pp", type=int, default=1)
    serve.add_argument("--data-parallel-size", "-dp", type=int, default=1)
    # multi-node data parallel (vLLM's multiprocess DP: a head serving the API, --headless members)
    serve.add_argument("--data-parallel-size-local", type=int, default=None)
    serve.add_argument("--data-parallel-start-rank", type=int, default=None)
    serve.add_argument("--data-parallel-address", default=None)
    serve.add_argument("--data-parallel-rpc-port", type=int, default=None)
    serve.add_argument("--headless", action="store_true")
    serve.add_argument("--api-server-count", type=int, default=None)
    serve.add_argument("--enable-expert-parallel", action="store_true")
    serve.add_argument("--distributed-executor-backend", default=None, choices=["mp", "ray", "uni", "external_launcher"])
    # Cache / scheduler
    serve.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    serve.add_argument("--block-size", type=int, default=None)
    serve.add_argument("--kv-cache-dtype", default="auto")
    serve.add_argument("--swap-space", type=float, default=4)
    serve.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction, default=None)
    serve.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction, default=None)
    serve.add_argument("--max-num-batched-tokens", type=int, default=None)
    serve.add_argument("--max-num-seqs", type=int, default=None)
    serve.add_argument("--async-scheduling", action=argparse.BooleanOptionalAction, default=None)
    # JSON configs
    serve.add_argument("--compilation-config", "-O", type=compilation_config, default=None)
    serve.add_argument("--additional-config", type=json_object, default=None)
    serve.add_argument("--speculative-config", type=json_object, default=None)
    serve.add_argument("--kv-transfer-config", type=json_object, default=None)
    return parser


# --------------------------------------------------------------------------- start-up checks


def driver_dir():
    return os.environ.get("ASCENDFLEET_SIM_DRIVER_DIR", "/usr/local/Ascend/driver")


def dev_dir():
    return os.environ.get("ASCENDFLEET_SIM_DEV_DIR", "/dev")


def read_soc():
    path = os.path.join(driver_dir(), "lib64", "ascendfleet_sim_soc")
    try:
        with open(path, encoding="utf-8") as handle:
            soc = handle.read().strip()
    except OSError:
        raise StartupError(
            "ImportError: libascend_hal.so: cannot open shared object file: No such file or directory",
            "the Ascend driver is not mounted: %s is missing. Mount the host's /usr/local/Ascend/driver/lib64/ "
            "(and driver/version.info) into the container as the seed's compose file does." % path,
        )
    if not soc:
        raise StartupError("RuntimeError: Can not support soc_version: ''.", "%s is empty; the sim host's driver surface is broken." % path)
    return soc


def check_variant(soc):
    variant = os.environ.get("ASCENDFLEET_SIM_IMAGE_VARIANT", "910b").strip().lower()
    if variant not in VARIANT_DEVICE_TYPE:
        raise StartupError(
            "KeyError: %r" % variant,
            "ASCENDFLEET_SIM_IMAGE_VARIANT=%s is not one of %s; rebuild the stand-in image with tests/sim/vllm/build.sh."
            % (variant, ", ".join(VARIANT_DEVICE_TYPE)),
        )
    chip = None
    for pattern, family in SOC_PATTERNS:
        if pattern.match(soc):
            chip = family
            break
    if chip is None:
        raise StartupError("RuntimeError: Can not support soc_version: %s." % soc,
                           "vllm-ascend supports Atlas A2 (Ascend910B*), A3 (Ascend910_93*) and 300I Duo (Ascend310P*) only.")
    if chip != variant:
        raise StartupError(
            "AssertionError: Current device type: AscendDeviceType.%s does not match the installed version's device type: "
            "AscendDeviceType.%s, please check your installation package." % (VARIANT_DEVICE_TYPE[chip], VARIANT_DEVICE_TYPE[variant]),
            "SoC version mismatch: this image is the %s variant but the driver reports %s (%s); run the %s image on this host "
            "(tag v%s%s%s)." % (variant, soc, chip, chip, os.environ.get("ASCENDFLEET_SIM_VLLM_VERSION", DEFAULT_VERSION),
                                VARIANT_TAG_SUFFIX[chip],
                                "" if os.environ.get("ASCENDFLEET_SIM_OS_FLAVOUR") == "ubuntu" else "-openeuler"),
        )
    return chip


def modelscope_candidates(model_id, download_dir):
    owner, _, name = model_id.partition("/")
    if download_dir:
        roots = [download_dir, os.path.join(download_dir, "models")]
    else:
        home = os.path.join(os.path.expanduser("~"), ".cache", "modelscope")
        env = os.environ.get("MODELSCOPE_CACHE")
        roots = [os.path.join(b, "models") for b in ([env] if env else [os.path.join(home, "hub"), home])]
    out = []
    for root in roots:
        # modelscope <= 1.37: <root>/<Owner>/<Name> with dots stored as "___" (Qwen3___5-27B),
        # plus the dotted name (a link to it, or older clients).
        out.append(os.path.join(root, owner, name.replace(".", "___")))
        if "." in name:
            out.append(os.path.join(root, owner, name))
        # modelscope >= 1.38 (modelscope-hub): <root>/<Owner>--<Name>/snapshots/<revision>/
        snaps = os.path.join(root, owner + "--" + name, "snapshots")
        try:
            out.extend(os.path.join(snaps, s) for s in sorted(os.listdir(snaps)))
        except OSError:
            out.append(snaps)
    return out


def huggingface_candidates(model_id, download_dir):
    cache = download_dir or os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface"), "hub")
    snaps = os.path.join(cache, "models--" + model_id.replace("/", "--"), "snapshots")
    try:
        return [os.path.join(snaps, s) for s in sorted(os.listdir(snaps))]
    except OSError:
        return [snaps]


def resolve_model(model, download_dir):
    """Return the local directory holding the model, never downloading."""
    looks_local = model.startswith(("/", "./", "../", "~")) or os.path.exists(model)
    if looks_local:
        path = os.path.expanduser(model)
        if not os.path.isdir(path):
            raise StartupError(
                "OSError: Incorrect path_or_model_id: '%s'. Please provide either the path to a local folder or the repo_id of a model on the Hub." % model,
                "model path %s does not exist in the container; mount the model cache (the prefetched directory) at that path." % path,
            )
        candidates = [path]
    elif re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", model):
        if env_true("VLLM_USE_MODELSCOPE"):
            candidates = modelscope_candidates(model, download_dir)
        else:
            candidates = huggingface_candidates(model, download_dir)
    else:
        raise StartupError("OSError: Incorrect path_or_model_id: '%s'." % model,
                           "give a local directory or a hub id of the form Owner/Name.")
    for path in candidates:
        if os.path.isfile(os.path.join(path, "config.json")):
            return path
    hub = "ModelScope" if env_true("VLLM_USE_MODELSCOPE") else "Hugging Face"
    raise StartupError(
        "OSError: We couldn't connect to the hub to load the files, and couldn't find them in the cached files: %s" % model,
        "model %s is not in the local %s cache (looked for config.json in: %s). This simulator never downloads: "
        "prefetch the model and mount the cache at /root/.cache/modelscope/hub/models (with VLLM_USE_MODELSCOPE=true), "
        "or pass a local path." % (model, hub, ", ".join(candidates)),
    )


def check_weights(path):
    index = os.path.join(path, "model.safetensors.index.json")
    files = [f for f in os.listdir(path) if f.endswith((".safetensors", ".bin", ".pt"))]
    if os.path.isfile(index):
        try:
            with open(index, encoding="utf-8") as handle:
                shards = sorted(set(json.load(handle).get("weight_map", {}).values()))
        except (OSError, ValueError) as exc:
            raise StartupError("json.decoder.JSONDecodeError: %s" % exc, "%s is not valid JSON; re-fetch the model." % index)
        missing = [s for s in shards if not os.path.isfile(os.path.join(path, s))]
        if missing:
            raise StartupError(
                "FileNotFoundError: [Errno 2] No such file or directory: '%s'" % os.path.join(path, missing[0]),
                "%d of %d weight shards listed in model.safetensors.index.json are missing (first: %s); the prefetch is incomplete."
                % (len(missing), len(shards), missing[0]),
            )
    elif not files:
        raise StartupError("RuntimeError: Cannot find any model weights with `%s`" % path,
                           "no *.safetensors/*.bin files in %s; the prefetch is incomplete." % path)


def load_config(path):
    cfg_path = os.path.join(path, "config.json")
    try:
        with open(cfg_path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as exc:
        raise StartupError("OSError: It looks like the config file at '%s' is not a valid JSON file." % cfg_path,
                           "config.json cannot be read (%s); re-fetch the model." % exc)
    if not isinstance(config, dict):
        raise StartupError("OSError: config file at '%s' is not a JSON object." % cfg_path, "re-fetch the model.")
    return config


def derived_max_len(config):
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    found = [(k, text[k]) for k in MAX_LEN_KEYS if isinstance(text.get(k), (int, float))]
    if not found:
        return "max_position_embeddings", None
    key, value = min(found, key=lambda kv: kv[1])
    rope = text.get("rope_scaling") or {}
    if isinstance(rope, dict) and "factor" in rope:
        rope_type = rope.get("rope_type", rope.get("type"))
        if rope_type not in ("su", "longrope", "llama3", "mrope", "default"):
            if rope_type == "yarn" and "original_max_position_embeddings" in rope:
                value = rope["original_max_position_embeddings"]
            value = value * rope["factor"]
    return key, int(value)


def check_devices(world):
    ddir = dev_dir()
    try:
        entries = os.listdir(ddir)
    except OSError:
        entries = []
    chips = sorted((e for e in entries if re.fullmatch(r"davinci\d+", e)), key=lambda e: int(e[7:]))
    missing = [c for c in CONTROL_DEVICES if c not in entries]
    if missing:
        raise StartupError(
            "RuntimeError: drvMngGetConsoleLogLevel failed: device manager %s not found (error code 87)" % os.path.join(ddir, missing[0]),
            "map /dev/davinci_manager, /dev/devmm_svm and /dev/hisi_hdc into the container (missing: %s)." % ", ".join(missing),
        )
    if len(chips) != world:
        mapped = ", ".join(os.path.join(ddir, c) for c in chips) or "none"
        raise StartupError(
            "RuntimeError: The number of visible NPUs (%d) does not match the world size (%d)." % (len(chips), world),
            "%d NPU device node(s) mapped (%s) but tensor_parallel_size x pipeline_parallel_size x data_parallel_size(_local) = %d; "
            "map exactly %d /dev/davinciN devices, one per card the deployment owns." % (len(chips), mapped, world, world),
        )
    return chips


def check_startup(args):
    """Run the start-up contract in the order a real vllm-ascend container meets it."""
    soc = read_soc()
    if args.enable_auto_tool_choice and not args.tool_call_parser:
        raise StartupError("TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser",
                           "add --tool-call-parser (qwen3_coder for Qwen3.5) or drop --enable-auto-tool-choice.")
    lists = release_lists() or {}
    tool_parsers = tuple(lists.get("tool_call_parsers") or TOOL_CALL_PARSERS)
    reasoning_parsers = tuple(lists.get("reasoning_parsers") or REASONING_PARSERS)
    if args.tool_call_parser and args.tool_call_parser not in tool_parsers:
        raise StartupError("KeyError: 'invalid tool call parser: %s (chose from { %s })'" % (args.tool_call_parser, ",".join(tool_parsers)),
                           "use one of vLLM's tool call parsers.")
    if args.reasoning_parser and args.reasoning_parser not in reasoning_parsers:
        raise StartupError("KeyError: 'invalid reasoning parser: %s (chose from { %s })'" % (args.reasoning_parser, ",".join(reasoning_parsers)),
                           "use one of vLLM's reasoning parsers.")
    gmu = args.gpu_memory_utilization
    if not (gmu > 0 and gmu <= 1):
        kind = "greater_than" if gmu <= 0 else "less_than_equal"
        bound = "greater than 0" if gmu <= 0 else "less than or equal to 1"
        raise StartupError(
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig\ngpu_memory_utilization\n"
            "  Input should be %s [type=%s, input_value=%s, input_type=float]" % (bound, kind, gmu),
            "--gpu-memory-utilization must be in (0, 1]; 0.90 is the stable choice on 910B.",
        )
    for name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
        if getattr(args, name) < 1:
            raise StartupError("ValueError: %s must be >= 1, got %d" % (name, getattr(args, name)), "fix --%s." % name.replace("_", "-"))
    model = args.model_tag or args.model_flag
    if not model:
        raise StartupError("ValueError: No model specified.", "give the model as `vllm serve MODEL`.")
    path = resolve_model(model, args.download_dir)
    config = load_config(path)
    check_weights(path)
    key, derived = derived_max_len(config)
    max_len = args.max_model_len
    if derived is not None and max_len is not None and max_len > derived:
        if env_true("VLLM_ALLOW_LONG_MAX_MODEL_LEN"):
            log("WARNING", "model.py:1760", "User-specified max_model_len (%d) is greater than the derived max_model_len (%s=%d). "
                "Make sure the value is correct and within the model context size." % (max_len, key, derived))
        else:
            raise StartupError(
                "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, User-specified "
                "max_model_len (%d) is greater than the derived max_model_len (%s=%d or model_max_length=None in model's config.json). "
                "To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must "
                "be used with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding derived_max_model_len "
                "lead to nan. If the model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA "
                "array out-of-bounds error. [type=value_error, input_value=ArgsKwargs((), {...}), input_type=ArgsKwargs]"
                % (max_len, key, derived),
                "lower --max-model-len to at most %d (the model's %s in %s/config.json)." % (derived, key, path),
            )
    if max_len is None:
        max_len = derived or 2048
    is_vl = "vision_config" in config
    flashcomm1 = env_int_flag("VLLM_ASCEND_ENABLE_FLASHCOMM1") or bool((args.additional_config or {}).get("enable_flashcomm1"))
    if flashcomm1 and is_vl:
        raise StartupError("ValueError: Flash Comm V1 is not supported for VL models.",
                           "%s is a vision-language model: set VLLM_ASCEND_ENABLE_FLASHCOMM1=0 (or leave it unset) and do not set "
                           "enable_flashcomm1 in --additional-config." % model)
    variant = check_variant(soc)
    dp_size, dp_local, dp_start = dp_layout(args)
    world = args.tensor_parallel_size * args.pipeline_parallel_size * dp_local
    chips = check_devices(world)
    return {"model": model, "path": path, "config": config, "max_model_len": max_len, "is_vl": is_vl,
            "soc": soc, "variant": variant, "chips": chips}


# --------------------------------------------------------------------------- multi-node data parallel
# vLLM's multiprocess data parallel across nodes: the head (no --headless) runs the API server and
# its local engine ranks and listens on --data-parallel-address:--data-parallel-rpc-port; every
# --headless member runs ranks start..start+local-1 and connects to it. The head opens its API port
# only once every rank 0..dp-1 has joined. The real handshake is ZMQ + msgpack (HELLO, init message,
# READY, vllm/v1/engine/core.py); the stand-in speaks the same three steps as JSON lines over TCP.
DP_RPC_PORT_DEFAULT = 29550         # vLLM's ParallelConfig.data_parallel_rpc_port default
DP_ADDRESS_DEFAULT = "127.0.0.1"    # ParallelConfig.data_parallel_master_ip default
HANDSHAKE_TIMEOUT_MINS = 5          # vllm/v1/engine/core.py


def dp_layout(args):
    """(dp size, ranks on this node, first rank on this node), checked as vLLM's EngineArgs does."""
    size = args.data_parallel_size
    local = args.data_parallel_size_local if args.data_parallel_size_local is not None else size
    start = args.data_parallel_start_rank or 0
    if local < 1 or local > size:
        raise StartupError("AssertionError: data_parallel_size_local (%d) must be between 1 and data_parallel_size (%d)" % (local, size),
                           "--data-parallel-size-local is the number of ranks on this node: 1..--data-parallel-size.")
    if start and not args.headless:
        raise StartupError("ValueError: --data-parallel-start-rank is only applicable in --headless mode",
                           "only the members (--headless) take --data-parallel-start-rank; the head runs ranks 0..local-1.")
    if start + local > size:
        raise StartupError("ValueError: data parallel ranks %d..%d exceed data_parallel_size %d" % (start, start + local - 1, size),
                           "--data-parallel-start-rank + --data-parallel-size-local must not exceed --data-parallel-size.")
    return size, local, start


def dp_is_multi_node(args):
    size = args.data_parallel_size
    local = args.data_parallel_size_local if args.data_parallel_size_local is not None else size
    return args.headless or local < size


def dp_identity(args, state):
    """What must be the same on every node of one data-parallel deployment."""
    return {"model": state["model"], "data_parallel_size": args.data_parallel_size,
            "tensor_parallel_size": args.tensor_parallel_size, "pipeline_parallel_size": args.pipeline_parallel_size,
            "enable_expert_parallel": bool(args.enable_expert_parallel),
            "version": os.environ.get("ASCENDFLEET_SIM_VLLM_VERSION", DEFAULT_VERSION)}


def dp_seconds(name, default):
    try:
        return max(float(os.environ.get(name, "") or default), 0.1)
    except ValueError:
        return float(default)


def engine_log(rank, level, where, msg):
    stamp = time.strftime("%m-%d %H:%M:%S")
    print("(EngineCore_DP%d pid=%d) %s %s [%s] %s" % (rank, os.getpid(), level, stamp, where, msg), flush=True)


def _send(sock, message):
    sock.sendall((json.dumps(message) + "\n").encode())


def _recv(sock, timeout):
    """One JSON line, or None on EOF / timeout / garbage."""
    sock.settimeout(timeout)
    data = b""
    try:
        while not data.endswith(b"\n") and len(data) < 65536:
            chunk = sock.recv(4096)
            if not chunk:
                return None
            data += chunk
        return json.loads(data)
    except (OSError, ValueError):
        return None


class DPFrontEnd:
    """The head's side: accept members on the RPC port, check them, track the ranks."""

    def __init__(self, args, state, stop):
        self.size, self.local, _ = dp_layout(args)
        self.identity = dp_identity(args, state)
        self.stop = stop
        self.address = args.data_parallel_address or DP_ADDRESS_DEFAULT
        self.port = args.data_parallel_rpc_port or DP_RPC_PORT_DEFAULT
        self.ready = set(range(self.local))  # the head's own ranks
        self.lock = threading.Lock()
        self.joined = threading.Event()
        self.dead = []
        self.members = []
        self.listener = None

    def bind(self):
        import socket
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.address, self.port))
        except OSError as exc:
            sock.close()
            raise StartupError("zmq.error.ZMQError: %s (addr='tcp://%s:%d')" % (exc.strerror, self.address, self.port),
                               "the head listens on --data-parallel-address %s port %d: the address must be one of this node's "
                               "own (the NIC the members reach) and the port free." % (self.address, self.port))
        sock.listen(64)
        sock.settimeout(0.2)
        self.listener = sock
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, peer = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._member, args=(conn, peer), daemon=True).start()

    def _refusal(self, hello):
        if not isinstance(hello, dict) or hello.get("status") != "HELLO":
            return "not a data parallel HELLO"
        for key, mine in self.identity.items():
            theirs = hello.get(key)
            if theirs != mine:
                return "%s %r differs from the head's %r" % (key, theirs, mine)
        ranks = hello.get("ranks") or []
        bad = [r for r in ranks if not isinstance(r, int) or r < 0 or r >= self.size]
        if bad or not ranks:
            return "ranks %s are not within 0..%d" % (ranks, self.size - 1)
        with self.lock:
            taken = sorted(set(ranks) & (self.ready | {r for m in self.members for r in m["ranks"]}))
        if taken:
            return "rank(s) %s already joined (check --data-parallel-start-rank on every member)" % taken
        return None

    def _member(self, conn, peer):
        hello = _recv(conn, 10)
        reason = self._refusal(hello)
        if reason:
            log("ERROR", "core_client.py:1040", "Refused engine core from %s:%d: %s" % (peer[0], peer[1], reason))
            try:
                _send(conn, {"status": "REFUSED", "reason": reason})
            except OSError:
                pass
            conn.close()
            return
        member = {"ranks": hello["ranks"], "peer": peer[0], "host": hello.get("host", "?")}
        with self.lock:
            self.members.append(member)
        _send(conn, {"status": "INIT", "data_parallel_size": self.size})
        ready = _recv(conn, dp_seconds("ASCENDFLEET_SIM_DP_WAIT_SECONDS", 600))
        if not ready or ready.get("status") != "READY":
            self._died(member, conn)
            return
        with self.lock:
            self.ready.update(member["ranks"])
            done = self.ready == set(range(self.size))
        log("INFO", "utils.py:847", "Data parallel rank(s) %s ready on %s (%s)" % (
            ",".join(map(str, member["ranks"])), member["host"], member["peer"]))
        if done:
            self.joined.set()
        conn.settimeout(None)
        try:
            while conn.recv(1):  # the member sends nothing more: EOF means it is gone
                pass
        except OSError:
            pass
        self._died(member, conn)

    def _died(self, member, conn):
        conn.close()
        if self.stop.is_set():
            return
        with self.lock:
            if member in self.members:
                self.members.remove(member)
            self.dead.append(member)
        self.stop.set()

    def wait_for_ranks(self):
        remote = self.size - self.local
        log("INFO", "utils.py:790", "Waiting for %d local, %d remote core engine proc(s) to start." % (self.local, remote))
        deadline = time.monotonic() + dp_seconds("ASCENDFLEET_SIM_DP_WAIT_SECONDS", 600)
        while not self.joined.is_set() and not self.stop.is_set():
            if self.ready == set(range(self.size)):
                self.joined.set()
                break
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(set(range(self.size)) - self.ready)
                print("TimeoutError: Timed out waiting for engines to send initial message on input socket.", file=sys.stderr)
                print("[%s] data parallel rank(s) %s never joined %s:%d: start every --headless member with the head's "
                      "--data-parallel-address and --data-parallel-rpc-port, the same model, parallel sizes and image."
                      % (SIM, ",".join(map(str, missing)), self.address, self.port), file=sys.stderr, flush=True)
                return False
            self.joined.wait(min(left, 0.2))
        return self.joined.is_set()

    def report_death(self):
        for member in self.dead:
            log("ERROR", "core_client.py:568", "Engine core proc EngineCore_DP%d died unexpectedly, shutting down client."
                % member["ranks"][0])
        print("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.",
              file=sys.stderr)
        print("[%s] data parallel rank(s) %s on %s (%s) went away: the whole deployment stops with it."
              % (SIM, ",".join(",".join(map(str, m["ranks"])) for m in self.dead),
                 ",".join(m["host"] for m in self.dead), ",".join(m["peer"] for m in self.dead)), file=sys.stderr, flush=True)

    def close(self):
        if self.listener is not None:
            self.listener.close()


def run_headless(args, state, stop):
    """A --headless member: reach the head, say HELLO, load, say READY, then live as long as the head."""
    import socket
    size, local, start = dp_layout(args)
    ranks = list(range(start, start + local))
    address = args.data_parallel_address or DP_ADDRESS_DEFAULT
    port = args.data_parallel_rpc_port or DP_RPC_PORT_DEFAULT
    timeout = dp_seconds("ASCENDFLEET_SIM_DP_HANDSHAKE_SECONDS", HANDSHAKE_TIMEOUT_MINS * 60)
    hello = dict(dp_identity(args, state), status="HELLO", ranks=ranks, local=False, headless=True,
                 host=socket.gethostname())
    for rank in ranks:
        engine_log(rank, "INFO", "core.py:93", "Initializing a V1 LLM engine (v%s) with config: model=%r, data_parallel_rank=%d, "
                   "data_parallel_size=%d" % (hello["version"], state["model"], rank, size))
    engine_log(ranks[0], "INFO", "core.py:580", "Waiting for init message from front-end.")
    deadline = time.monotonic() + timeout
    last_error, sock, reply = "no attempt", None, None
    for _ in range(100000):  # bounded by the deadline below
        if stop.is_set():
            return 0
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            sock = socket.create_connection((address, port), timeout=min(1.0, left))
            _send(sock, hello)
            reply = _recv(sock, max(deadline - time.monotonic(), 0.1))
            if reply is not None:
                break
            last_error = "the head accepted the connection but did not answer"
            sock.close()
            sock = None
        except OSError as exc:
            last_error = exc.strerror or str(exc)
            if sock is not None:
                sock.close()
                sock = None
        stop.wait(min(0.5, max(deadline - time.monotonic(), 0)))
    if reply is None:
        engine_log(ranks[0], "ERROR", "core.py:708", "EngineCore failed to start.")
        print("Traceback (most recent call last):\n  File \"/vllm-workspace/vllm/vllm/v1/engine/core.py\", line 580, in startup_handshake",
              file=sys.stderr)
        print("RuntimeError: Did not receive response from front-end process within %d minutes" % HANDSHAKE_TIMEOUT_MINS, file=sys.stderr)
        print("[%s] this --headless member (ranks %s) could not reach the head at %s:%d within %g s (%s): start the head first, "
              "and check --data-parallel-address, --data-parallel-rpc-port and the firewall between the nodes."
              % (SIM, ",".join(map(str, ranks)), address, port, timeout, last_error), file=sys.stderr, flush=True)
        return 1
    if reply.get("status") != "INIT":
        sock.close()
        engine_log(ranks[0], "ERROR", "core.py:708", "EngineCore failed to start.")
        print("RuntimeError: The front-end at %s:%d refused data parallel rank(s) %s: %s"
              % (address, port, ",".join(map(str, ranks)), reply.get("reason")), file=sys.stderr)
        print("[%s] every node of one data-parallel deployment runs the same image, model and parallel sizes, each with "
              "its own ranks." % SIM, file=sys.stderr, flush=True)
        return 1
    delay = float(os.environ.get("ASCENDFLEET_SIM_STARTUP_SECONDS", "5") or 0)
    engine_log(ranks[0], "INFO", "default_loader.py:267", "Loading weights from %s" % state["path"])
    if stop.wait(max(delay, 0)):
        sock.close()
        return 0
    try:
        _send(sock, {"status": "READY", "ranks": ranks})
    except OSError:
        pass
    for rank in ranks:
        engine_log(rank, "INFO", "core.py:777", "EngineCore ready (data parallel rank %d of %d, front-end %s:%d)" % (rank, size, address, port))
    gone = threading.Event()

    def watch():
        sock.settimeout(None)
        try:
            while sock.recv(1):
                pass
        except OSError:
            pass
        gone.set()
        stop.set()

    threading.Thread(target=watch, daemon=True).start()
    stop.wait()
    if gone.is_set():
        engine_log(ranks[0], "ERROR", "core.py:840", "Lost the front-end at %s:%d: EngineCore shutting down." % (address, port))
        print("[%s] the head of this data-parallel deployment went away; this member exits with it." % SIM, file=sys.stderr, flush=True)
        return 1
    sock.close()
    engine_log(ranks[0], "INFO", "core.py:850", "Shutting down.")
    return 0


# --------------------------------------------------------------------------- serving


# Histogram buckets of vLLM's V1 Prometheus logger (vllm/v1/metrics/loggers.py).
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
               40.0, 80.0)
E2E_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
               480.0, 960.0, 1920.0, 7680.0)


def version_tuple(version):
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


class Histogram:
    def __init__(self, buckets):
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total = 0
        self.sum = 0.0

    def observe(self, value, times=1):
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += times
        self.total += times
        self.sum += value * times

    def lines(self, name, label):
        out = []
        for bound, count in zip(self.buckets, self.counts):
            out.append('%s_bucket{%s,le="%s"} %.1f' % (name, label, float(bound), count))
        out.append('%s_bucket{%s,le="+Inf"} %.1f' % (name, label, self.total))
        out.append("%s_count{%s} %.1f" % (name, label, self.total))
        out.append("%s_sum{%s} %r" % (name, label, self.sum))
        return out


class Metrics:
    """vLLM's /metrics names and labels (engine, model_name) as of the image's vLLM release."""

    def __init__(self, version=None):
        self.lock = threading.Lock()
        self.version = version_tuple(version or os.environ.get("ASCENDFLEET_SIM_VLLM_VERSION", DEFAULT_VERSION))
        self.running = 0
        self.waiting = 0
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.success = {"stop": 0, "length": 0, "tool_calls": 0}
        self.ttft = Histogram(TTFT_BUCKETS)
        self.itl = Histogram(ITL_BUCKETS)
        self.e2e = Histogram(E2E_BUCKETS)
        self.prefix_queries = 0
        self.prefix_hits = 0
        self.last_prompt = []

    def observe(self, seconds, prompt, completion_tokens):
        """One finished request: latencies and the prefix cache (hits = tokens shared with the last prompt)."""
        tokens = re.findall(r"\S+", prompt)
        hits = 0
        for a, b in zip(tokens, self.last_prompt):
            if a != b:
                break
            hits += 1
        with self.lock:
            self.last_prompt = tokens
            self.prefix_queries += len(tokens)
            self.prefix_hits += hits
            # The stand-in answers in one go: the first token after 40% of the time, the others evenly after it.
            first = seconds * 0.4
            self.ttft.observe(first)
            self.e2e.observe(seconds)
            if completion_tokens > 1:
                self.itl.observe((seconds - first) / (completion_tokens - 1), completion_tokens - 1)

    def render(self, model_name, kv_usage):
        label = 'engine="0",model_name="%s"' % model_name
        with self.lock:
            lines = [
                "# HELP vllm:num_requests_running Number of requests in model execution batches.",
                "# TYPE vllm:num_requests_running gauge",
                "vllm:num_requests_running{%s} %.1f" % (label, self.running),
                "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
                "# TYPE vllm:num_requests_waiting gauge",
                "vllm:num_requests_waiting{%s} %.1f" % (label, self.waiting),
                "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
                "# TYPE vllm:kv_cache_usage_perc gauge",
                "vllm:kv_cache_usage_perc{%s} %s" % (label, kv_usage),
            ]
            # Renamed to kv_cache_usage_perc in 0.9.2, hidden by default in 0.11, removed in 0.12.
            if self.version < (0, 11):
                lines += [
                    "# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.",
                    "# TYPE vllm:gpu_cache_usage_perc gauge",
                    "vllm:gpu_cache_usage_perc{%s} %s" % (label, kv_usage),
                ]
            lines += [
                "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.",
                "# TYPE vllm:prefix_cache_queries_total counter",
                "vllm:prefix_cache_queries_total{%s} %.1f" % (label, self.prefix_queries),
                "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.",
                "# TYPE vllm:prefix_cache_hits_total counter",
                "vllm:prefix_cache_hits_total{%s} %.1f" % (label, self.prefix_hits),
                "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.",
                "# TYPE vllm:prompt_tokens_total counter",
                "vllm:prompt_tokens_total{%s} %.1f" % (label, self.prompt_tokens),
                "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
                "# TYPE vllm:generation_tokens_total counter",
                "vllm:generation_tokens_total{%s} %.1f" % (label, self.generation_tokens),
                "# HELP vllm:request_success_total Count of successfully processed requests.",
                "# TYPE vllm:request_success_total counter",
            ]
            for reason, count in self.success.items():
                lines.append('vllm:request_success_total{%s,finished_reason="%s"} %.1f' % (label, reason, count))
            for name, help_text, hist in (
                    ("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", self.ttft),
                    ("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", self.itl),
                    ("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", self.e2e)):
                lines += ["# HELP %s %s" % (name, help_text), "# TYPE %s histogram" % name] + hist.lines(name, label)
        return "\n".join(lines) + "\n"


def count_tokens(text):
    # Roughly one token per word or CJK character: good enough for counters and usage.
    return len(re.findall(r"[\u4e00-\u9fff]|[^\s\u4e00-\u9fff]+", text))


def extract_place(text):
    match = re.search(r"\b(?:in|for|at|of)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)", text)
    if match:
        return match.group(1)
    match = re.search(r"([\u4e00-\u9fff]{2,4}?)(?:的|今天|明天|现在)?天气", text)
    if match:
        return match.group(1)
    words = re.findall(r"\b[A-Z][a-z][\w'-]*", text)
    return words[-1] if len(words) > 1 else None


def example_value(name, schema, text):
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    place = extract_place(text)
    if place and re.search(r"city|location|place|town|region|where", name, re.I):
        return place
    return place or text.strip()[:64]


def message_text(messages, role=None):
    parts, images = [], 0
    for msg in messages:
        if role and msg.get("role") != role:
            continue
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text":
                    parts.append(str(part.get("text", "")))
                elif part.get("type") in ("image_url", "image", "input_image"):
                    images += 1
    return "\n".join(parts), images


class ApiError(Exception):
    def __init__(self, status, message, err_type="BadRequestError", param=None):
        super().__init__(message)
        self.status, self.message, self.err_type, self.param = status, message, err_type, param

    def body(self):
        return {"error": {"message": self.message, "type": self.err_type, "param": self.param, "code": self.status}}


class Server:
    def __init__(self, args, state):
        self.args = args
        self.state = state
        self.names = args.served_model_name or [state["model"]]
        self.api_key = args.api_key or os.environ.get("VLLM_API_KEY") or None
        self.version = os.environ.get("ASCENDFLEET_SIM_VLLM_VERSION", DEFAULT_VERSION)
        self.healthy = not env_true("ASCENDFLEET_SIM_NEVER_HEALTHY")
        self.reply_delay = float(os.environ.get("ASCENDFLEET_SIM_RESPONSE_SECONDS", "0") or 0)
        # While this file exists the engine is hung (an HCCL collective that never returns): /health
        # still answers 200, requests are accepted and wait (vllm:num_requests_waiting), no token is
        # generated. Tests create it with `docker exec <container> touch <file>` and remove it to recover.
        self.hang_file = os.environ.get("ASCENDFLEET_SIM_HANG_FILE", HANG_FILE_DEFAULT)
        self.metrics = Metrics()
        self.created = int(time.time())
        # Requests being answered (every POST), and whether a stop with --shutdown-timeout is draining them.
        self.inflight = 0
        self.inflight_lock = threading.Lock()
        self.draining = False

    def drain(self, timeout):
        """On stop with --shutdown-timeout: refuse new requests, wait (bounded) for those in flight."""
        self.draining = True
        log("INFO", "launcher.py:112", "Shutdown requested: rejecting new requests, waiting up to %d s for %d "
            "in-flight request(s)" % (timeout, self.inflight))
        deadline = time.monotonic() + timeout
        while self.inflight and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.inflight:
            log("WARNING", "launcher.py:121", "Shutdown timeout of %d s reached: aborting %d in-flight request(s)"
                % (timeout, self.inflight))
        else:
            log("INFO", "launcher.py:118", "All in-flight requests finished.")

    # -- chat -------------------------------------------------------------
    def chat(self, req):
        if not isinstance(req, dict):
            raise ApiError(400, "Request body must be a JSON object.")
        messages = req.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ApiError(400, "1 validation error: messages: Field required (a non-empty list of messages).", param="messages")
        model = req.get("model") or self.names[0]
        if model not in self.names:
            raise ApiError(404, "The model `%s` does not exist." % model, "NotFoundError", "model")
        all_text, images = message_text(messages)
        user_text, _ = message_text(messages, "user")
        if images and not self.state["is_vl"]:
            raise ApiError(400, "At most 0 image(s) may be provided in one prompt.")
        tools = req.get("tools") or []
        tool_choice = req.get("tool_choice", "auto" if tools else "none")
        if tools and tool_choice == "auto" and not (self.args.enable_auto_tool_choice and self.args.tool_call_parser):
            raise ApiError(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
        prompt_tokens = count_tokens(all_text) + 4 * len(messages) + 256 * images
        if prompt_tokens >= self.state["max_model_len"]:
            raise ApiError(400, "This model's maximum context length is %d tokens. However, your request has %d input tokens."
                           % (self.state["max_model_len"], prompt_tokens))

        call = None
        if tools and tool_choice not in ("none", None):
            wanted = tool_choice.get("function", {}).get("name") if isinstance(tool_choice, dict) else None
            funcs = [t.get("function", {}) for t in tools if isinstance(t, dict)]
            func = next((f for f in funcs if f.get("name") == wanted), None) if wanted else (funcs[0] if funcs else None)
            if wanted and func is None:
                raise ApiError(400, "Tool '%s' has not been passed in `tools`." % wanted)
            if func is not None:
                params = func.get("parameters") or {}
                props = params.get("properties") or {}
                keys = params.get("required") or list(props)
                arguments = {k: example_value(k, props.get(k) or {}, user_text) for k in keys}
                call = {"id": "chatcmpl-tool-" + uuid.uuid4().hex, "type": "function",
                        "function": {"name": func.get("name", ""), "arguments": json.dumps(arguments, ensure_ascii=False)}}
        first_line = (user_text.strip().splitlines() or [""])[0][:120]
        message = {"role": "assistant", "content": None, "refusal": None, "annotations": None, "audio": None,
                   "function_call": None, "tool_calls": []}
        if call:
            message["tool_calls"] = [call]
            finish = "tool_calls"
        else:
            seen = " I see %d image(s)." % images if images else ""
            message["content"] = "Simulated reply from %s (stand-in vLLM %s, model %s).%s You said: %s" % (
                SIM, self.version, self.names[0], seen, first_line)
            finish = "stop"
        if self.args.reasoning_parser:
            reasoning = "The user asked: %s. I should answer briefly." % first_line
            message["reasoning_content"] = reasoning
            message["reasoning"] = reasoning
        completion_tokens = count_tokens(json.dumps(message["tool_calls"]) if call else message["content"])
        completion_tokens += count_tokens(message.get("reasoning_content") or "")
        max_tokens = req.get("max_tokens") or req.get("max_completion_tokens")
        if isinstance(max_tokens, int) and 0 < max_tokens < completion_tokens and not call:
            words = message["content"].split()
            message["content"] = " ".join(words[:max_tokens])
            completion_tokens, finish = max_tokens, "length"
        with self.metrics.lock:
            self.metrics.prompt_tokens += prompt_tokens
            self.metrics.generation_tokens += completion_tokens
            self.metrics.success[finish] += 1
        return {
            "id": "chatcmpl-" + uuid.uuid4().hex, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish, "stop_reason": None}],
            "service_tier": None, "system_fingerprint": None,
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + completion_tokens,
                      "completion_tokens": completion_tokens, "prompt_tokens_details": None},
            "prompt_logprobs": None, "kv_transfer_params": None,
        }

    def wait_while_hung(self):
        """Hold a request while the hang file exists (bounded: HANG_LIMIT_SECONDS), counted as waiting."""
        if not (self.hang_file and os.path.exists(self.hang_file)):
            return
        with self.metrics.lock:
            self.metrics.waiting += 1
        try:
            deadline = time.monotonic() + HANG_LIMIT_SECONDS
            while os.path.exists(self.hang_file) and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            with self.metrics.lock:
                self.metrics.waiting -= 1

    def completion(self, req):
        """POST /v1/completions: the prompt's first words echoed, max_tokens honoured (finish_reason length)."""
        if not isinstance(req, dict):
            raise ApiError(400, "Request body must be a JSON object.")
        prompt = req.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1:
            prompt = prompt[0]
        if not isinstance(prompt, str):
            raise ApiError(400, "1 validation error: prompt: Field required (a string).", param="prompt")
        model = req.get("model") or self.names[0]
        if model not in self.names:
            raise ApiError(404, "The model `%s` does not exist." % model, "NotFoundError", "model")
        prompt_tokens = count_tokens(prompt)
        words = ("Simulated completion from %s (stand-in vLLM %s, model %s)." % (SIM, self.version, self.names[0])).split()
        finish = "stop"
        max_tokens = req.get("max_tokens")
        if isinstance(max_tokens, int) and 0 < max_tokens < len(words):
            words, finish = words[:max_tokens], "length"
        with self.metrics.lock:
            self.metrics.prompt_tokens += prompt_tokens
            self.metrics.generation_tokens += len(words)
            self.metrics.success[finish] += 1
        return {
            "id": "cmpl-" + uuid.uuid4().hex, "object": "text_completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "text": " ".join(words), "logprobs": None, "finish_reason": finish,
                         "stop_reason": None, "prompt_logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + len(words),
                      "completion_tokens": len(words), "prompt_tokens_details": None},
        }

    def models(self):
        data = []
        for name in self.names:
            data.append({"id": name, "object": "model", "created": self.created, "owned_by": "vllm",
                         "root": self.state["model"], "parent": None, "max_model_len": self.state["max_model_len"],
                         "permission": [{"id": "modelperm-" + uuid.uuid4().hex, "object": "model_permission",
                                         "created": self.created, "allow_create_engine": False, "allow_sampling": True,
                                         "allow_logprobs": True, "allow_search_indices": False, "allow_view": True,
                                         "allow_fine_tuning": False, "organization": "*", "group": None, "is_blocking": False}]})
        return {"object": "list", "data": data}


def make_handler(server):
    access_log = not server.args.disable_uvicorn_access_log

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "uvicorn"

        def version_string(self):
            return "uvicorn"

        def log_message(self, fmt, *a):  # replaced by uvicorn-style access lines
            return

        def reply(self, status, body, ctype="application/json"):
            raw = body if isinstance(body, bytes) else (json.dumps(body, ensure_ascii=False) if ctype == "application/json" else body).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a health check that timed out while the engine hung)
            if access_log:
                from http import HTTPStatus
                uvicorn_log('%s:%d - "%s %s HTTP/1.1" %d %s' % (self.client_address[0], self.client_address[1], self.command,
                                                                self.path, status, HTTPStatus(status).phrase))

        def authorised(self):
            if not server.api_key or not self.path.startswith("/v1"):
                return True
            if self.headers.get("Authorization", "") == "Bearer " + server.api_key:
                return True
            self.reply(401, {"error": "Unauthorized"})
            return False

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/health":
                if server.healthy:
                    self.reply(200, b"", "application/json")
                else:
                    self.reply(503, b"", "application/json")
            elif path == "/version":
                self.reply(200, {"version": server.version})
            elif path == "/metrics":
                kv = "0.0" if not server.metrics.running else "%.3f" % min(1.0, 0.05 * server.metrics.running)
                self.reply(200, server.metrics.render(server.names[0], kv), "text/plain; version=0.0.4; charset=utf-8")
            elif not self.authorised():
                return
            elif path == "/v1/models":
                if not server.healthy:
                    self.reply(503, ApiError(503, "EngineCore is not ready.", "ServiceUnavailableError").body())
                else:
                    self.reply(200, server.models())
            else:
                self.reply(404, {"detail": "Not Found"})

        def do_POST(self):
            with server.inflight_lock:
                server.inflight += 1
            try:
                self.post()
            finally:
                with server.inflight_lock:
                    server.inflight -= 1

        def post(self):
            path = self.path.split("?", 1)[0]
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.authorised():
                return
            if path not in ("/v1/chat/completions", "/v1/completions"):
                self.reply(404, {"detail": "Not Found"})
                return
            if not server.healthy:
                self.reply(503, ApiError(503, "EngineCore is not ready.", "ServiceUnavailableError").body())
                return
            if server.draining:
                self.reply(503, ApiError(503, "The server is shutting down.", "ServiceUnavailableError").body())
                return
            server.wait_while_hung()
            if path == "/v1/completions":
                try:
                    result = server.completion(json.loads(raw or b"null"))
                except ValueError as exc:
                    result = ApiError(400, "JSON decode error: %s" % exc)
                except ApiError as err:
                    result = err
                if isinstance(result, ApiError):
                    self.reply(result.status, result.body())
                else:
                    self.reply(200, result)
                return
            with server.metrics.lock:
                server.metrics.running += 1
            try:
                try:
                    req = json.loads(raw or b"null")
                except ValueError as exc:
                    raise ApiError(400, "JSON decode error: %s" % exc)
                started = time.monotonic()
                if server.reply_delay:
                    time.sleep(server.reply_delay)
                result = server.chat(req)
                server.metrics.observe(time.monotonic() - started, message_text(req["messages"])[0],
                                       result["usage"]["completion_tokens"])
            except ApiError as err:
                self.reply(err.status, err.body())
                return
            finally:
                with server.metrics.lock:
                    server.metrics.running -= 1
            if req.get("stream"):
                self.stream(result)
            else:
                self.reply(200, result)

        def stream(self, result):
            msg = result["choices"][0]["message"]
            base = {k: result[k] for k in ("id", "created", "model")}
            base["object"] = "chat.completion.chunk"
            deltas = [{"role": "assistant", "content": ""}]
            if msg.get("reasoning_content"):
                deltas.append({"reasoning_content": msg["reasoning_content"], "reasoning": msg["reasoning_content"]})
            if msg["tool_calls"]:
                deltas.append({"tool_calls": [dict(msg["tool_calls"][0], index=0)]})
            else:
                deltas.extend({"content": w + " "} for w in msg["content"].split())
            chunks = [dict(base, choices=[{"index": 0, "delta": d, "logprobs": None, "finish_reason": None}]) for d in deltas]
            chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "logprobs": None,
                                               "finish_reason": result["choices"][0]["finish_reason"], "stop_reason": None}]))
            body = "".join("data: %s\n\n" % json.dumps(c, ensure_ascii=False) for c in chunks) + "data: [DONE]\n\n"
            self.reply(200, body.encode(), "text/event-stream; charset=utf-8")

    return Handler


# What vLLM V1 prints when the engine core process dies while loading (vllm/v1/engine/core.py
# logs the root cause's traceback line by line at ERROR, then the API server's own traceback
# ends in "Engine core initialization failed"); the process exits 1.
CRASH_ROOT_CAUSE = ("RuntimeError: NPU function error: aclrtMalloc, error code is 207001 "
                    "[ERROR] 2026-12-01-00:00:00 (PID:264, Device:0, RankID:-1) ERR00100 PTA call acl api failed")


def engine_core_crash(root_cause=None):
    root_cause = root_cause or CRASH_ROOT_CAUSE
    core = "(EngineCore_DP0 pid=%d)" % (os.getpid() + 1)
    stamp = time.strftime("%m-%d %H:%M:%S")
    frames = (
        "Traceback (most recent call last):",
        '  File "/vllm-workspace/vllm/vllm/v1/engine/core.py", line 699, in run_engine_core',
        "    engine_core = EngineCoreProc(*args, **kwargs)",
        '  File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner_v1.py", line 2417, in load_model',
        "    self.model = get_model(vllm_config=self.vllm_config)",
        root_cause,
    )
    print("%s ERROR %s [core.py:708] EngineCore failed to start." % (core, stamp), flush=True)
    for line in frames:
        print("%s ERROR %s [core.py:708] %s" % (core, stamp, line), flush=True)
    print("(APIServer pid=%d) Traceback (most recent call last):\n"
          '(APIServer pid=%d)   File "/usr/local/bin/vllm", line 8, in <module>\n'
          "(APIServer pid=%d)     sys.exit(main())\n"
          "(APIServer pid=%d) RuntimeError: Engine core initialization failed. See root cause above. "
          "Failed core proc(s): {}" % ((os.getpid(),) * 4), file=sys.stderr)
    print("[%s] ASCENDFLEET_SIM_CRASH_AT_START is set: this image's engine dies while loading the model."
          % SIM, file=sys.stderr, flush=True)
    return 1


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(args):
    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    version = os.environ.get("ASCENDFLEET_SIM_VLLM_VERSION", DEFAULT_VERSION)
    log("INFO", "__init__.py:43", "Available plugins for group vllm.platform_plugins: ascend -> vllm_ascend:register")
    log("INFO", "__init__.py:217", "Platform plugin ascend is activated")
    log("INFO", "api_server.py:1896", "vLLM API server version %s (%s simulator, image variant %s)"
        % (version, SIM, os.environ.get("ASCENDFLEET_SIM_IMAGE_VARIANT", "910b")))
    shown = {k: ("<redacted>" if k == "api_key" else v) for k, v in sorted(vars(args).items()) if v not in (None, False, "", [])}
    log("INFO", "utils.py:328", "non-default args: %s" % shown)
    try:
        state = check_startup(args)
    except StartupError as err:
        log("ERROR", "core.py:708", "EngineCore failed to start.")
        print("Traceback (most recent call last):\n  File \"/usr/local/bin/vllm\", line 8, in <module>\n    sys.exit(main())", file=sys.stderr)
        print(err.exc_line, file=sys.stderr)
        print("[%s] %s" % (SIM, err.hint), file=sys.stderr, flush=True)
        return 1
    log("INFO", "model.py:631", "Resolved architecture: %s" % ",".join(state["config"].get("architectures") or ["unknown"]))
    log("INFO", "model.py:1753", "Using max model len %d" % state["max_model_len"])
    log("INFO", "platform.py:180", "SoC %s (%s), NPUs %s" % (state["soc"], state["variant"], ", ".join(state["chips"])))
    if args.headless:
        return run_headless(args, state, stop)
    front = None
    if dp_is_multi_node(args):
        front = DPFrontEnd(args, state, stop)
        try:
            front.bind()
        except StartupError as err:
            print(err.exc_line, file=sys.stderr)
            print("[%s] %s" % (SIM, err.hint), file=sys.stderr, flush=True)
            return 1
        log("INFO", "core_client.py:455", "Data parallel front-end listening on tcp://%s:%d for %d remote rank(s)"
            % (front.address, front.port, front.size - front.local))
    log("INFO", "default_loader.py:267", "Loading weights from %s" % state["path"])
    delay = float(os.environ.get("ASCENDFLEET_SIM_STARTUP_SECONDS", "5") or 0)
    if stop.wait(max(delay, 0)) and not (front and front.dead):
        log("INFO", "launcher.py:101", "Shutting down during start-up.")
        return 0
    crash = os.environ.get("ASCENDFLEET_SIM_CRASH_AT_START", "").strip()
    if crash and crash != "0":
        return engine_core_crash(crash if crash != "1" else None)
    if front is not None:
        joined = front.wait_for_ranks()
        if front.dead:
            front.report_death()
            front.close()
            return 1
        if not joined:
            front.close()
            if stop.is_set():
                log("INFO", "launcher.py:101", "Shutting down during start-up.")
                return 0
            return 1
        log("INFO", "core_client.py:470", "All %d data parallel ranks joined." % front.size)
    server = Server(args, state)
    host = args.host if args.host is not None else "0.0.0.0"
    try:
        httpd = HTTPServer((host, args.port), make_handler(server))
    except OSError as exc:
        print("OSError: [Errno %d] %s: ('%s', %d)" % (exc.errno or 0, exc.strerror, host, args.port), file=sys.stderr)
        print("[%s] port %d is taken on %s; give each deployment its own --port." % (SIM, args.port, host), file=sys.stderr, flush=True)
        return 1
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    for index in range(max(args.api_server_count or 1, 1)):
        log("INFO", "api_server.py:1971", "Starting vLLM API server %d on http://%s:%d" % (index, host, args.port))
    log("INFO", "launcher.py:37", "Available routes are: /health, /version, /metrics, /v1/models, /v1/completions, /v1/chat/completions")
    uvicorn_log("Started server process [%d]" % os.getpid())
    uvicorn_log("Waiting for application startup.")
    if server.healthy:
        uvicorn_log("Application startup complete.")
    else:
        log("ERROR", "core.py:1040", "EngineCore is not responding (ASCENDFLEET_SIM_NEVER_HEALTHY is set: this broken image "
            "answers /health with 503 forever).")
    stop.wait()
    if args.shutdown_timeout > 0:
        server.drain(args.shutdown_timeout)
    uvicorn_log("Shutting down")
    httpd.shutdown()
    httpd.server_close()
    if front is not None:
        front.close()
        if front.dead:
            front.report_death()
            return 1
    uvicorn_log("Waiting for application shutdown.")
    uvicorn_log("Application shutdown complete.")
    uvicorn_log("Finished server process [%d]" % os.getpid())
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    lists = release_lists()
    parser = build_parser()
    if lists is None:
        args = parser.parse_args(argv)
    else:
        # This release's own flag list decides what is known: flags this stand-in does not model are
        # accepted and ignored (with their values); a flag the stand-in models but the release does
        # not know is refused, as the real `vllm serve` of that release refuses it.
        args, extras = parser.parse_known_args(argv)
        modelled = [a for a in argv if a.startswith("--") and unknown_flags([a], set(lists["flags"]))]
        unknown = unknown_flags(extras, set(lists["flags"])) + [a for a in modelled if a not in extras]
        if unknown:
            parser.error("unrecognized arguments: %s" % " ".join(unknown))
    if args.model_tag and args.model_flag:
        print("vllm serve: error: With `vllm serve`, you should provide the model as a positional argument "
              "or in a config file instead of via the `--model` option.", file=sys.stderr)
        return 2
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
