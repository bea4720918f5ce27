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


# --------------------------------------------------------------------------- argparse recordings
# scripts/releases/record-argparse.py builds `vllm serve`'s parser from the wheel (make releases-argparse); its
# options win over the static reading, and every disagreement between the two is explained in STATIC_MISREADINGS.


def test_the_oldest_and_newest_releases_vllm_parsers_are_recorded():
    releases = gen.load_inputs()
    order = sorted(releases, key=gen._release_key)  # pylint: disable=protected-access
    recorded = set(gen.load_argparse())
    assert releases[order[0]]["vllm_version"] in recorded
    assert releases[order[-1]]["vllm_version"] in recorded


def test_each_recording_is_vllms_own_parser_of_the_releases_wheel():
    releases = gen.load_inputs(argparse_wins=False)
    for version, recording in gen.load_argparse().items():
        wheels = {e["vllm_dist"]["sha256"] for e in releases.values() if e["vllm_version"] == version}
        assert wheels == {recording["wheel"]["sha256"]}, version
        assert recording["platform"] == "vllm.platforms.cpu.CpuPlatform" and recording["platform_adds_to_parser"] is False
        assert recording["help_options"] == ["--help", "-h"]
        options = recording["options"]
        assert [f for f in gen.MUST_HAVE if f not in options] == [], version
        # BooleanOptionalAction: each --no-X is a switch next to its --X
        assert [o for o in options if o.startswith("--no-") and options.get("--" + o[5:]) != "switch"] == [], version


def test_recorded_releases_take_the_argparse_options():
    static = gen.load_inputs(argparse_wins=False)
    recordings = gen.load_argparse()
    for tag, entry in gen.load_inputs().items():
        recording = recordings.get(entry["vllm_version"])
        if recording is None:
            assert entry["flags"] == static[tag]["flags"] and entry["flags_source"].startswith("static: "), tag
        else:
            assert entry["flags"] == recording["options"], tag
            assert entry["flags_source"] == ("argparse: vllm serve's parser built from the wheel "
                                             "(scripts/releases/inputs/argparse/vllm-%s.json)" % entry["vllm_version"])


def test_every_disagreement_of_the_static_reading_with_argparse_is_explained():
    assert gen.unexplained(gen.static_vs_argparse()) == []
    assert set(gen.STATIC_MISREADINGS) <= set(gen.load_argparse())


def copied_recording(tmp_path, version):
    """The inputs copied to tmp_path; the path and content of the copy of vLLM ``version``'s recording."""
    for path in gen.INPUTS.glob("*.json"):
        shutil.copy(path, tmp_path)
    shutil.copytree(gen.INPUTS / "argparse", tmp_path / "argparse")
    path = tmp_path / "argparse" / ("vllm-%s.json" % version)
    return path, json.loads(path.read_text())


def test_an_unexplained_disagreement_and_a_stale_explanation_are_named(tmp_path):
    path, recording = copied_recording(tmp_path, "0.17.0")
    del recording["options"]["--no-enable-log-requests"]
    recording["options"]["--model-weights"] = "value"
    path.write_text(json.dumps(recording))
    found = gen.static_vs_argparse(tmp_path)
    assert found["0.17.0"] == {"--model-weights": (None, "value"), "--no-enable-log-requests": ("switch", None)}
    explained = dict(gen.STATIC_MISREADINGS, **{"0.17.0": {"--no-enable-log-requests": "why"}})
    explained["0.23.0"] = dict(explained["0.23.0"], **{"--port": "stale"})
    lines = gen.unexplained(found, explained)
    assert lines == [
        "vllm 0.17.0 --model-weights: the static reading says absent, argparse says value; explain it in "
        "STATIC_MISREADINGS of scripts/gen-vllm-cli-data.py (or fix the reading)",
        "vllm 0.23.0 --port: listed in STATIC_MISREADINGS but both readings agree; drop the entry"]


def test_a_recording_of_another_wheel_is_refused(tmp_path):
    path, recording = copied_recording(tmp_path, "0.17.0")
    recording["wheel"]["sha256"] = "0" * 64
    path.write_text(json.dumps(recording))
    with pytest.raises(SystemExit, match="v0.17.0rc1: scripts/releases/inputs/argparse/vllm-0.17.0.json records"):
        gen.load_inputs(tmp_path)


def test_the_names_an_independent_static_reading_disputed_as_argparse_settles_them():
    # Read in the recordings (vllm serve's parser built from the vLLM 0.17.0, 0.23.0, 0.26.0 wheels): none has
    # --model-weights nor --enable-mm-processor-stats; all have --enable-log-requests and its --no- form;
    # --hf-token takes a value and has no --no- form (0.23.0, 0.26.0: STATIC_MISREADINGS).
    recordings = gen.load_argparse()
    for version in ("0.17.0", "0.23.0", "0.26.0"):
        options = recordings[version]["options"]
        for absent in ("--model-weights", "--enable-mm-processor-stats", "--no-enable-mm-processor-stats"):
            assert absent not in options, (version, absent)
        assert options["--enable-log-requests"] == options["--no-enable-log-requests"] == "switch"
        assert options["--hf-token"] == "value" and "--no-hf-token" not in options
    data = gen.load_inputs()
    assert "--no-hf-token" not in data["v0.23.0"]["flags"] and data["v0.23.0"]["flags"]["--hf-token"] == "value"
