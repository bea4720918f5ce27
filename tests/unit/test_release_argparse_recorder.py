"""scripts/releases/record-argparse.py (make releases-argparse): what it installs when building vLLM's parser
fails, read from vLLM's own requirements and the real import errors it meets (the network part is run on
demand, not here; its recordings are checked in tests/unit/test_gen_vllm_cli_data.py)."""
import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("record_argparse", ROOT / "scripts" / "releases" / "record-argparse.py")
rec = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(rec)

# Lines of vllm-0.17.0.dist-info/METADATA (the wheel of v0.17.0rc1), verbatim.
METADATA = "\n".join([
    'Metadata-Version: 2.4',
    'Name: vllm',
    'Version: 0.17.0',
    'Requires-Dist: numpy',
    'Requires-Dist: transformers<5,>=4.56.0',
    'Requires-Dist: fastapi[standard]>=0.115.0',
    'Requires-Dist: llguidance<1.4.0,>=1.3.0; platform_machine == "x86_64" or platform_machine == "arm64" '
    'or platform_machine == "aarch64" or platform_machine == "s390x" or platform_machine == "ppc64le"',
    'Requires-Dist: pyzmq>=25.0.0',
    'Requires-Dist: mistral_common[image]>=1.9.1',
    'Requires-Dist: setuptools<81.0.0,>=77.0.3; python_version > "3.11"',
    'Requires-Dist: torch==2.10.0',
    'Requires-Dist: pandas; extra == "bench"',
    '',
])
# Tails of the probe's stderr met while recording vLLM 0.17.0, verbatim.
NO_ZMQ = "ModuleNotFoundError: No module named 'zmq'\n"
NO_SAFETENSORS = ("importlib.metadata.PackageNotFoundError: No package metadata was found for The 'safetensors>=0.8.0'"
                  ' distribution was not found and is required by this application. \n'
                  "Try: `pip install transformers -U` or `pip install -e '.[dev]'` if you're working with git main\n")
NO_DEVICE = """  File "/var/tmp/h32b-venv17/lib/python3.11/site-packages/vllm/config/device.py", line 56, in __post_init__
    raise RuntimeError(
RuntimeError: Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help debug the issue.
"""


def test_direct_requirements_keep_versions_and_drop_extras_and_optional_ones():
    reqs = rec.direct_requirements(METADATA)
    assert reqs["transformers"] == "transformers<5,>=4.56.0"
    assert reqs["fastapi"] == "fastapi>=0.115.0"
    assert reqs["mistral-common"] == "mistral_common>=1.9.1"
    assert reqs["llguidance"] == "llguidance<1.4.0,>=1.3.0"
    assert "pandas" not in reqs


@pytest.mark.parametrize("stderr, wanted", [
    (NO_ZMQ, "pyzmq>=25.0.0"),             # import name -> vLLM's own requirement spec
    (NO_SAFETENSORS, "safetensors>=0.8.0"),  # not a direct requirement: the spec the checker names
    ("ModuleNotFoundError: No module named 'transformers.models'", "transformers<5,>=4.56.0"),
    ("ModuleNotFoundError: No module named 'packaging'", "packaging"),
    (NO_DEVICE, None),                     # not a missing package: reported as it is
    ("ModuleNotFoundError: No module named 'vllm._C'", None),  # part of vLLM itself: never pip install vllm
    ("ModuleNotFoundError: No module named 'torch'", None),
])
def test_missing_requirement(stderr, wanted):
    assert rec.missing_requirement(stderr, rec.direct_requirements(METADATA)) == wanted


def test_the_wheels_to_record_are_those_the_release_data_was_read_from():
    wheels = rec.expected_wheels()
    for path in rec.INPUTS.glob("*.json"):
        entry = json.loads(path.read_text())
        assert wheels[entry["vllm_version"]] == entry["vllm_dist"], path.name


def test_seed_takes_what_earlier_recordings_needed_at_this_vllms_own_spec(tmp_path):
    (tmp_path / "vllm-0.26.0.json").write_text(json.dumps({"installed_for_the_parser": ["transformers>=5.5.3", "uvloop"]}))
    (tmp_path / "vllm-0.23.0.json").write_text(json.dumps({"installed_for_the_parser": ["pyzmq>=25.0.0", "safetensors>=0.8.0"]}))
    (tmp_path / "other.json").write_text("not a recording")
    assert rec.seed(rec.direct_requirements(METADATA), tmp_path) == [
        "pyzmq>=25.0.0", "safetensors>=0.8.0", "transformers<5,>=4.56.0", "uvloop"]
    assert rec.seed({}, tmp_path / "none") == []
