"""Fidelity: the stand-in vllm's own lists (tests/sim/vllm/cli_lists.json, gen_cli_lists.py) equal the product's
generated data (plugins/module_utils/_vllm_cli_data.py) for every release.

The flags the stand-in enforces ("flags") are `vllm serve`'s parser as vLLM builds it (the recordings under
scripts/releases/inputs/argparse/, by file name and sha256): they must equal the product's flags exactly, so a
name one half accepts and the other refuses (the regex scan's --no-hf-token of vLLM >= 0.21) fails here. The
stand-in's static regex scan ("flags_static") is compared with the product's static ast scan recorded in
scripts/releases/inputs/<release>.json (two independent readings of the wheel); parsers and cudagraph modes
with the data. Neither half reads the other; a test may read both: this is where they are compared.
"""
import ast
import hashlib
import json
import pathlib
import subprocess

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
    static = json.loads((STATIC_INPUTS / ("%s.json" % release)).read_text())["flags"]
    assert sim["flags_static"] == sorted(f for f in static if f.startswith("--"))


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_the_stand_in_enforces_the_flags_of_the_releases_parser(release):
    """Every long option the product accepts for the release, and no other (its data takes argparse's answer)."""
    product, sim = RELEASES[release], SIM_LISTS[release[1:]]
    product_flags = sorted(f for f in product["flags"] if f.startswith("--") and f != "--help")
    assert sorted(set(sim["flags"]) - set(product_flags)) == [], "the stand-in accepts what %s refuses" % release
    assert sorted(set(product_flags) - set(sim["flags"])) == [], "the stand-in refuses what %s accepts" % release
    assert sim["flags"] == product_flags
    recording = STATIC_INPUTS / "argparse" / sim["flags_from"]["file"]
    assert sim["flags_from"]["file"] == "vllm-%s.json" % product["vllm_version"]
    assert sim["flags_from"]["sha256"] == hashlib.sha256(recording.read_bytes()).hexdigest(), \
        "%s was recorded again: re-run tests/sim/vllm/gen_cli_lists.py --flags scripts/releases/inputs/argparse" % recording


def test_no_hf_token_is_a_static_misreading_the_stand_in_does_not_take():
    """vLLM >= 0.21 builds --hf-token as a value option (bool | str | None): no --no-hf-token (recorded argparse)."""
    for release, lists in SIM_LISTS.items():
        assert "--hf-token" in lists["flags"]
        assert "--no-hf-token" not in lists["flags"], release
    assert "--no-hf-token" in SIM_LISTS["0.26.0rc1"]["flags_static"]


def test_the_stand_in_image_exists_under_every_release_of_the_data():
    """`ascendfleet_image_version: <any release>` finds its 910B images (vX, vX-openeuler) on the sim."""
    listed = subprocess.run([str(HERE / "vllm" / "build.sh"), "--list"], capture_output=True, text=True, check=True,
                            timeout=30).stdout.split()
    tags = [ref.rpartition(":")[2] for ref in listed]
    missing = [release + os_ for release in sorted(RELEASES) for os_ in ("", "-openeuler") if release + os_ not in tags]
    assert missing == []
    assert {tag.split("-")[0] for tag in tags} == set(RELEASES)
