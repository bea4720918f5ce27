"""The generated vLLM CLI data (shape, provenance) and the pre-flight checks built on it.

Expected values are read by hand from the vLLM sources of the pinned releases (vllm/reasoning/__init__.py,
vllm/tool_parsers/__init__.py, vllm/engine/arg_utils.py, vllm/config/compilation.py) and the
vllm-ascend Dockerfiles (ARG VLLM_TAG).
"""
import re

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli as cli
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli_data as data

REQUIRED = ("v0.17.0rc1", "v0.18.0rc1", "v0.18.0", "v0.19.1rc1", "v0.20.2rc1", "v0.21.0rc1", "v0.22.1rc1", "v0.23.0",
            "v0.24.0rc1", "v0.25.1rc1", "v0.26.0rc1")
# vllm-ascend release -> its Dockerfile's ARG VLLM_TAG (read at each tag of vllm-project/vllm-ascend; v0.26.0rc1 at
# the head of its release branch releases/v0.26.0rc, untagged in the snapshot of 2026-08-22).
PINS = {"v0.17.0rc1": "0.17.0", "v0.18.0rc1": "0.18.0", "v0.18.0": "0.18.0", "v0.19.1rc1": "0.19.1",
        "v0.20.2rc1": "0.20.2", "v0.21.0rc1": "0.21.0", "v0.22.1rc1": "0.22.1", "v0.23.0": "0.23.0",
        "v0.24.0rc1": "0.24.0", "v0.25.1rc1": "0.25.1", "v0.26.0rc1": "0.26.0"}
# What vllm-ascend's platform adds besides the "ascend" quantization: v0.26.0rc1 registers the Kimi-K3
# parsers itself (vllm_ascend/patch/platform/patch_kimi_k3_parsers.py on releases/v0.26.0rc).
ASCEND_PARSERS = {"v0.26.0rc1": ["kimi_k3"]}


def msg(variable, problem, fix):
    return "%s: %s. Fix: %s" % (variable, problem, fix)


def test_every_supported_release_is_covered():
    assert set(REQUIRED) <= set(data.RELEASES)
    assert data.GENERATOR == "scripts/gen-vllm-cli-data.py"


@pytest.mark.parametrize("release", sorted(data.RELEASES))
def test_shape_and_provenance(release):
    entry = data.RELEASES[release]
    assert entry["vllm_version"] == PINS.get(release, entry["vllm_version"])
    assert entry["vllm_pin"]["line"] == "ARG VLLM_TAG=v%s" % entry["vllm_version"]
    assert re.fullmatch(r"[0-9a-f]{40}", entry["vllm_pin"]["vllm_ascend_commit"])
    assert re.fullmatch(r"[0-9a-f]{64}", entry["vllm_pin"]["sha256"])
    assert entry["vllm_dist"]["file"].startswith("vllm-%s-" % entry["vllm_version"])
    assert entry["vllm_dist"]["file"].endswith(".whl")
    assert re.fullmatch(r"[0-9a-f]{64}", entry["vllm_dist"]["sha256"])
    assert "vllm/engine/arg_utils.py" in entry["source_files"]
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in entry["source_files"].values())
    assert set(entry["flags"].values()) <= {"switch", "value"}
    assert all(re.fullmatch(r"--?[a-zA-Z0-9][\w-]*", f) for f in entry["flags"])
    assert entry["reasoning_parsers"] == sorted(set(entry["reasoning_parsers"]))
    assert entry["tool_call_parsers"] == sorted(set(entry["tool_call_parsers"]))
    assert entry["vllm_ascend"]["quantization_methods"] == ["ascend"]
    own = ASCEND_PARSERS.get(release, [])
    assert entry["vllm_ascend"]["reasoning_parsers"] == own and entry["vllm_ascend"]["tool_call_parsers"] == own
    assert entry["vllm_pin"].get("ref", release) == ("releases/v0.26.0rc" if release == "v0.26.0rc1" else release)


def test_known_facts_of_vllm_0_17():
    facts = cli.facts("v0.17.0rc1")
    assert facts["cudagraph_modes"] == ["NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"]
    assert "qwen3" in facts["reasoning_parsers"] and "qwen3_coder" in facts["tool_call_parsers"]
    assert "hermes" in facts["tool_call_parsers"]
    flags = facts["flags"]
    assert flags["--max-num-seqs"] == "value"
    assert flags["--enable-prefix-caching"] == "switch" and flags["--no-enable-prefix-caching"] == "switch"
    assert flags["--trust-remote-code"] == "switch"  # bool field of ModelConfig -> BooleanOptionalAction
    assert flags["--headless"] == "switch" and "--no-headless" not in flags  # store_true
    assert "--speculative-config" in flags and "--disable-log-requests" not in flags
    assert flags["--fail-on-environ-validation"] == "switch" and "--no-fail-on-environ-validation" in flags


def test_later_releases_add_flags_and_parsers():
    old, new = cli.facts("v0.17.0rc1"), cli.facts("v0.23.0")
    assert len(new["flags"]) > len(old["flags"])
    assert len(new["reasoning_parsers"]) > len(old["reasoning_parsers"])


@pytest.mark.parametrize("image, release", [
    ("quay.io/ascend/vllm-ascend:v0.18.0rc1", "v0.18.0rc1"),
    ("quay.io/ascend/vllm-ascend:v0.18.0rc1-a3-openeuler", "v0.18.0rc1"),
    ("mirror.local:5000/quay.io/ascend/vllm-ascend:v0.23.0-310p@sha256:" + "a" * 64, "v0.23.0"),
    ("quay.io/ascend/vllm-ascend:v0.18.0rc1-broken", "v0.18.0rc1"),
    ("registry:5000/custom/vllm:latest", None),
    ("", None),
])
def test_release_of(image, release):
    assert cli.release_of(image) == release


def test_releases_sorted_rc_first():
    order = cli.releases()
    assert order.index("v0.18.0rc1") < order.index("v0.18.0") < order.index("v0.19.1rc1")
    assert order[0] == "v0.17.0rc1"


@pytest.mark.parametrize("token, name", [
    ("--max_num_seqs=4", "--max-num-seqs"), ("--compilation-config.mode", "--compilation-config"),
    ("--compilation-config.cudagraph_capture_sizes+", "--compilation-config"), ("4", None), ("-tp", None), ("-1", None),
])
def test_flag_name(token, name):
    assert cli.flag_name(token) == name


def test_check_accepts_what_vllm_accepts():
    dep = {"reasoning_parser": "qwen3", "tool_call_parser": "qwen3_coder",
           "extra_args": ["--max-num-seqs", "16", "--no-enable-prefix-caching", "--max_model_len=4096",
                          "--compilation-config.cudagraph_mode", "FULL", "-tp", "2"],
           "compilation_config": {"cudagraph_mode": "FULL_DECODE_ONLY"}}
    assert cli.check(dep, "v0.17.0rc1", msg) == []


def test_check_names_the_key_the_release_and_the_closest_names():
    dep = {"reasoning_parser": "qwen", "tool_call_parser": "qwen3-coder", "extra_args": ["--max-num-seq", "16"],
           "compilation_config": {"cudagraph_mode": "FULL_DECODE"}}
    errors = cli.check(dep, "v0.18.0rc1", msg)
    assert len(errors) == 4
    assert errors[0].startswith("reasoning_parser: 'qwen' is not a reasoning parser of image v0.18.0rc1 (vLLM 0.18.0)")
    assert "did you mean qwen3" in errors[0]
    assert errors[1].startswith("tool_call_parser: 'qwen3-coder'") and "did you mean qwen3_coder" in errors[1]
    assert errors[2].startswith("extra_args[0]: --max-num-seq is not a flag of image v0.18.0rc1 (vLLM 0.18.0)")
    assert "did you mean --max-num-seqs" in errors[2]
    assert errors[3].startswith("compilation_config.cudagraph_mode: 'FULL_DECODE'") and "FULL_DECODE_ONLY" in errors[3]


def test_a_flag_of_a_later_release_names_the_release_it_needs():
    later = sorted(set(cli.facts("v0.23.0")["flags"]) - set(cli.facts("v0.17.0rc1")["flags"]))
    flag = [f for f in later if f.startswith("--")][0]
    first = cli.first_release_with("flags", flag)
    errors = cli.check({"extra_args": [flag]}, "v0.17.0rc1", msg)
    assert errors == ["extra_args[0]: %s is not a flag of image v0.17.0rc1 (vLLM 0.17.0); vllm serve knows it from %s on. "
                      "Fix: use an image of %s or later (ascendfleet_image_version), or drop the flag" % (flag, first, first)]


def test_a_parser_of_a_later_release_says_so():
    later = sorted(set(cli.facts("v0.23.0")["reasoning_parsers"]) - set(cli.facts("v0.17.0rc1")["reasoning_parsers"]))
    errors = cli.check({"reasoning_parser": later[0]}, "v0.17.0rc1", msg)
    assert "it exists from %s on" % cli.first_release_with("reasoning_parsers", later[0]) in errors[0]


def test_flag_and_value_in_one_item_is_refused():
    errors = cli.check({"extra_args": ["--max-num-seqs 16"]}, "v0.18.0", msg)
    assert errors and "split it into two items, '--max-num-seqs' and '16'" in errors[0]


def test_parser_plugin_lifts_the_name_check():
    dep = {"tool_call_parser": "my_parser", "extra_args": ["--tool-parser-plugin", "/plugins/p.py"]}
    assert cli.check(dep, "v0.17.0rc1", msg) == []


def test_unknown_release_checks_nothing():
    assert cli.check({"extra_args": ["--nonsense"]}, "v9.9.9", msg) == []
