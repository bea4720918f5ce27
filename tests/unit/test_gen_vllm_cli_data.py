"""scripts/gen-vllm-cli-data.py (make releases): the committed release data is what the generator writes from
its recorded inputs, every release has all of its facts, and the change report names what an operator
meets when rolling forward."""
import importlib.util
import json
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("gen_vllm_cli_data", ROOT / "scripts" / "gen-vllm-cli-data.py")
gen = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gen)

OUTPUT = ROOT / "plugins" / "module_utils" / "_vllm_cli_data.py"


def test_committed_data_is_what_the_generator_writes_from_its_inputs():
    releases = gen.load_inputs()
    assert gen.render(releases) == OUTPUT.read_text(), "run: make releases"


def test_check_mode_passes_on_the_committed_tree_and_fails_on_a_stale_file(tmp_path, capsys):
    assert gen.main(["render", "--check"]) == 0
    stale = tmp_path / "_vllm_cli_data.py"
    stale.write_text(OUTPUT.read_text().replace('"--watermark": "value",\n', "", 1))
    assert gen.main(["render", "--check", "--output", str(stale)]) == 1
    assert "differs from what" in capsys.readouterr().err


def test_every_release_is_recorded_with_every_fact():
    releases = gen.load_inputs()
    assert set(releases) == set(gen.RELEASES)
    assert gen.missing_facts(releases) == []


def test_a_release_without_a_fact_or_unrecorded_is_named(tmp_path):
    for path in gen.INPUTS.glob("*.json"):
        shutil.copy(path, tmp_path)
    entry = json.loads((tmp_path / "v0.25.1rc1.json").read_text())
    del entry["images"]
    entry["cudagraph_modes"] = []
    (tmp_path / "v0.25.1rc1.json").write_text(json.dumps(entry))
    (tmp_path / "v0.18.0.json").unlink()
    problems = gen.missing_facts(gen.load_inputs(tmp_path))
    assert problems == ["v0.18.0: not recorded (run: scripts/gen-vllm-cli-data.py record v0.18.0)",
                        "v0.25.1rc1: no cudagraph_modes", "v0.25.1rc1: no images"]
    assert gen.main(["render", "--inputs", str(tmp_path), "--output", str(tmp_path / "out.py")]) == 1
    assert not (tmp_path / "out.py").exists()


def test_the_change_report_of_the_new_releases():
    releases = gen.load_inputs()
    lines = gen.changes({t: e for t, e in releases.items() if t != "v0.26.0rc1"}, releases)
    text = "\n".join(lines)
    # Written from the wheels and Dockerfiles: vLLM 0.24.0 drops the "minimax" tool parser (minimax_m3 is
    # new), v0.24.0rc1's images go back from CANN 9.1.0 to 9.0.1, the 310P ones to 9.1.0-beta.1.
    block = text.split("v0.24.0rc1 (vLLM 0.24.0) against v0.23.0 (vLLM 0.23.0):\n", 1)[1].split("\nv0.25.1rc1", 1)[0]
    assert "  removed tool-call parsers: minimax\n" in block + "\n"
    assert "  new tool-call parsers: minimax_m3\n" in block + "\n"
    assert "  CANN of image-a3: 9.1.0 -> 9.0.1" in block
    assert "  CANN of image-310p: 9.1.0 -> 9.1.0-beta.1" in block
    assert "--prefill-schedule-interval" in block.split("new flags: ", 1)[1].split("\n", 1)[0]
    assert "v0.25.1rc1 (vLLM 0.25.1) against v0.24.0rc1 (vLLM 0.24.0):\n  new flags: --enable-per-request-metrics" in text
    assert lines[-1] == "added to the data: v0.26.0rc1"


def test_change_report_guesses_renames_and_reports_no_change():
    base = {"flags": {"--a": "value", "--max-num-partial-prefills": "value"}, "reasoning_parsers": [], "tool_call_parsers": [],
            "cudagraph_modes": ["NONE"], "vllm_ascend": {}, "images": {"": {"cann": "9.0.1"}}, "vllm_version": "1"}
    renamed = dict(base, flags={"--a": "value", "--max-num-partial-prefill": "value"}, vllm_version="2")
    same = dict(renamed, vllm_version="3")
    lines = gen.changes({}, {"v1.0.0": base, "v2.0.0": renamed, "v3.0.0": same})
    assert lines[:4] == ["v2.0.0 (vLLM 2) against v1.0.0 (vLLM 1):",
                         "  renamed? --max-num-partial-prefills -> --max-num-partial-prefill",
                         "  new flags: --max-num-partial-prefill",
                         "  removed flags: --max-num-partial-prefills"]
    assert lines[4] == "v3.0.0 (vLLM 3) against v2.0.0 (vLLM 2): no change"


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_image_cann_reads_from_lines_and_their_build_args(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "Dockerfile").write_text("FROM quay.io/ascend/cann:9.0.1-910b-ubuntu22.04-py3.12\n")
    (tmp_path / "Dockerfile.a5.openEuler").write_text(
        'ARG CANN_QUAY_URL="quay.io/ascend/cann"\nARG CANN_VERSION="9.1.0"\nARG BASE_OS="openeuler24.03"\n'
        "FROM ${CANN_QUAY_URL}:${CANN_VERSION}-950-${BASE_OS}-py3.12\n")
    (tmp_path / "Dockerfile.310p").write_text("FROM quay.io/ascend/cann:9.1.0-beta.1-310p-ubuntu22.04-py3.12\n")
    (tmp_path / "Dockerfile.unknown").write_text("FROM scratch\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    images = gen.image_cann(tmp_path, "HEAD")
    assert {v: i["cann"] for v, i in images.items()} == {"": "9.0.1", "-310p": "9.1.0-beta.1", "-a5-openeuler": "9.1.0"}
    assert images["-a5-openeuler"]["from"] == "quay.io/ascend/cann:9.1.0-950-openeuler24.03-py3.12"


def test_image_cann_refuses_an_unreadable_base(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    with pytest.raises(SystemExit, match="cannot read the CANN version of 'ubuntu:22.04'"):
        gen.image_cann(tmp_path, "HEAD")
