"""Fidelity: the stand-in vllm's own lists (tests/sim/vllm/cli_lists.json, gen_cli_lists.py, regex scan)
equal the product's generated data (plugins/module_utils/_vllm_cli_data.py, ast scan) for every release; the
flags equal the ast scan recorded in scripts/releases/inputs/<release>.json (the data may take argparse's).

The two are generated independently from the same vLLM wheels; neither reads the other. A test may
read both: this is where they are compared, so neither can drift alone.
"""
import ast
import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PRODUCT = HERE.parents[1] / "plugins" / "module_utils" / "_vllm_cli_data.py"
SIM_LISTS = json.loads((HERE / "vllm" / "cli_lists.json").read_text())
STATIC_INPUTS = HERE.parents[1] / "scripts" / "releases" / "inputs"


def product_releases():
    """RELEASES of the product's generated module, read as a literal (no import of the product's code)."""
    for node in ast.parse(PRODUCT.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "RELEASES":
            return ast.literal_eval(node.value)
    raise AssertionError("no RELEASES in %s" % PRODUCT)


RELEASES = product_releases()


def test_same_releases():
    assert sorted("v" + r for r in SIM_LISTS) == sorted(RELEASES)


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_same_lists(release):
    product, sim = RELEASES[release], SIM_LISTS[release[1:]]
    assert sim["vllm"] == product["vllm_version"]
    assert sim["wheel"] == product["vllm_dist"]["file"] and sim["wheel_sha256"] == product["vllm_dist"]["sha256"]
    assert sim["reasoning_parsers"] == product["reasoning_parsers"]
    assert sim["tool_call_parsers"] == product["tool_call_parsers"]
    assert sim["cudagraph_modes"] == product["cudagraph_modes"]
    # Flags: the product's data takes `vllm serve`'s parser as vLLM builds it where recorded (flags_source
    # "argparse: ..."), which settles names both static readings get wrong (--no-hf-token of vLLM >= 0.21: see
    # STATIC_MISREADINGS of scripts/gen-vllm-cli-data.py). The regex scan is compared with the other static
    # reading, the ast scan recorded in the release's input.
    static = json.loads((STATIC_INPUTS / ("%s.json" % release)).read_text())["flags"]
    assert sim["flags"] == sorted(f for f in static if f.startswith("--"))
