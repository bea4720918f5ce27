# -*- coding: utf-8 -*-
"""The npu-smi parser against every shared sample, plus edits of them and broken output."""

import os
import re

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_smi as npu_smi

from .npu_smi_cases import CASES, INSTALL_CASES, VERSION_CASES

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "npu_smi")
SEED = "910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt"
A3_SOFTSHARE = "A3-unknown-softshare-container-2dies-proc-in-container-column-doc-handedited.txt"


def read(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def parse(text):
    warnings = []
    info = npu_smi.parse_info(text, warnings.append)
    return info, warnings


def chip_tuple(chip, threshold=npu_smi.DEFAULT_IDLE_THRESHOLD_PCT):
    return (chip.npu_id, chip.chip_id, chip.device_id, chip.name, chip.health, chip.bus_id,
            chip.power_w, chip.temp_c, chip.aicore_pct, chip.memory_used_mb,
            chip.memory_total_mb, chip.hbm_used_mb, chip.hbm_total_mb, chip.is_idle(threshold))


def test_every_info_sample_has_a_case():
    """A new sample copied into fixtures/ must get hand-written expectations."""
    tables = set(f for f in os.listdir(FIXTURES) if f.endswith(".txt") and
                 read(f).lstrip().startswith("+"))
    assert tables == set(c["fixture"] for c in CASES)
    for name in os.listdir(FIXTURES):
        if name.endswith(".txt") and name not in tables:
            assert name in ([v[0] for v in VERSION_CASES]
                            + [i[0] for i in INSTALL_CASES]), name


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_parse_info_sample(case):
    info, warnings = parse(read(case["fixture"]))
    assert info.version == case["version"]
    assert info.driver_version == case["driver"]
    assert info.layout == case["layout"]
    assert info.has_process_table is case["proc_table"]
    assert [chip_tuple(c) for c in info.chips] == case["chips"]
    got = dict((c.device_id, [(p.pid, p.name, p.memory_mb) for p in c.processes])
               for c in info.chips if c.processes)
    assert got == case["processes"]
    assert len(warnings) == case["warnings"], warnings
    assert npu_smi.detect_family(info) == case["family"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_missing_last_border_still_parses(case):
    """Output cut right before its closing border line reads the same."""
    text = read(case["fixture"]).rstrip("\n")
    cut = text[:text.rstrip().rfind("\n")]
    assert npu_smi._BORDER_RE.match(text[len(cut):].strip())
    info, dummy = parse(cut)
    assert [chip_tuple(c) for c in info.chips] == case["chips"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_wider_table_parses_the_same(case):
    """npu-smi 26.x prints wider tables (116 columns): pad every cell by 18 characters."""
    lines = []
    for line in read(case["fixture"]).splitlines():
        if line.startswith("+"):
            line = line[:-1] + "-" * 18 + "+"
        elif line.startswith("|"):
            line = line[:-1] + " " * 18 + "|"
        lines.append(line)
    if case["fixture"] == SEED:
        assert max(len(x) for x in lines) == 116
    info, dummy = parse("\n".join(lines))
    assert [chip_tuple(c) for c in info.chips] == case["chips"]


def test_threshold_changes_idle():
    info, dummy = parse(read("310-20.2.0-atlas800-3000-4chips-npu215-doc.txt"))
    # 2703 / 8192 MB = 32.996%
    assert [c.is_idle(32.9) for c in info.chips] == [False] * 4
    assert [c.is_idle(33.0) for c in info.chips] == [True] * 4


def test_to_dict_has_documented_keys():
    info, dummy = parse(read(SEED))
    first = info.chips[0].to_dict()
    assert sorted(first) == sorted([
        "npu_id", "chip_id", "device_id", "device_path", "name", "health", "bus_id",
        "power_w", "temp_c", "aicore_pct", "memory_used_mb", "memory_total_mb",
        "hbm_used_mb", "hbm_total_mb", "processes", "idle"])
    assert first["processes"] == [
        {"pid": 1316011, "name": "VLLMWorker_TP", "memory_mb": 60891, "pid_in_container": None}]
    assert first["device_path"] == "/dev/davinci0"


SEED_ROW_3 = "| 3       0                 | 1316014       | VLLMWorker_TP            | 60891                   |"
SEED_NO_PROC_5 = "| No running processes found in NPU 5                                                            |"


def test_same_pid_on_two_chips_and_empty_name():
    text = read(SEED)
    assert SEED_NO_PROC_5 in text
    text = text.replace(
        SEED_NO_PROC_5,
        "| 5       0                 | 1316014       |                          | 1024                    |\n"
        "| 5       0                 | 777           |                          | 12                      |")
    info, dummy = parse(text)
    chips = info.by_device()
    assert [(p.pid, p.name, p.memory_mb) for p in chips[3].processes] == [
        (1316014, "VLLMWorker_TP", 60891)]
    assert [(p.pid, p.name, p.memory_mb) for p in chips[5].processes] == [
        (1316014, "", 1024), (777, "", 12)]
    assert chips[5].is_idle() is False


def test_process_id_in_container_column_with_a_process():
    text = read(A3_SOFTSHARE)
    old = "| No running processes found in NPU 0                                                           |"
    assert old in text
    text = text.replace(
        old, "| 0     1            | 4242          | python      | 2048               | 17                    |")
    info, dummy = parse(text)
    assert info.chips[0].processes == ()
    assert info.chips[1].processes == (npu_smi.Process(4242, "python", 2048, 17),)


def test_no_process_section():
    text = read(SEED)
    text = text[:text.index("| NPU     Chip")]
    info, dummy = parse(text)
    assert info.has_process_table is False
    assert [c.processes for c in info.chips] == [()] * 8
    # Memory alone then marks NPUs 0-3 busy.
    assert [c.is_idle() for c in info.chips] == [False] * 4 + [True] * 4


def test_text_around_the_table_is_warned_about():
    info, warnings = parse("$ npu-smi info\n" + read(SEED) + "$ \n")
    assert len(info.chips) == 8
    assert len(warnings) == 2


@pytest.mark.parametrize("text, message", [
    ("", "printed nothing"),
    ("  \n\n", "printed nothing"),
    ("bash: npu-smi: command not found\n", "no chip table found"),
    ("+----+\n| hello world |\n+----+\n", "expected the npu-smi version line"),
    ("dcmi module initialize failed. ret is -8005\n", "no chip table found"),
], ids=["empty", "blank", "garbage-command-not-found", "garbage-table", "dcmi-error"])
def test_parse_info_rejects(text, message):
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info(text)
    assert message in str(err.value)


def _seed_lines():
    return read(SEED).splitlines()


def test_unknown_health_word():
    text = read(SEED).replace("| OK            |", "| Degraded      |", 1)
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info(text)
    assert "unknown health value 'Degraded'" in str(err.value)
    assert "Degraded" in str(err.value).split("Offending line(s):")[1]


def test_truncated_inside_a_chip():
    lines = _seed_lines()
    cut = lines.index("| 5     910B2               | OK            | 97.5        43                0    / 0             |")
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info("\n".join(lines[:cut + 1]))
    assert "exactly two rows" in str(err.value)
    assert "| 5     910B2" in str(err.value)


def test_truncated_after_header():
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info("\n".join(_seed_lines()[:6]))
    assert "lists no chips" in str(err.value)


def test_garbage_inside_table():
    lines = _seed_lines()
    lines.insert(10, "Segmentation fault")
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info("\n".join(lines))
    assert "Segmentation fault" in str(err.value)


def test_bad_number_names_the_line():
    text = read(SEED).replace("3390 / 65536", "33x0 / 65536", 1)
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info(text)
    assert "'33x0' is not a whole number" in str(err.value)


def test_process_row_for_unknown_chip():
    text = read(SEED).replace(SEED_NO_PROC_5, SEED_ROW_3.replace("| 3       0", "| 9       0"))
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info(text)
    assert "NPU 9 chip 0" in str(err.value)


def test_unknown_layout():
    text = read(SEED).replace("| Chip                      | Bus-Id", "| Chip  Slot                | Bus-Id")
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info(text)
    assert "unknown chip table layout" in str(err.value)


def test_missing_value_is_reported():
    text = read(SEED).replace("| 97.2        41  ", "| 97.2            ", 1)
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_info(text)
    assert "expected 3 values" in str(err.value)


@pytest.mark.parametrize("fixture, version, package, extra", VERSION_CASES,
                         ids=[v[0][:-4] for v in VERSION_CASES])
def test_parse_version_info(fixture, version, package, extra):
    got = npu_smi.parse_version_info(read(fixture), fixture)
    assert got["version"] == version
    assert got["package_version"] == package
    assert got["values"][extra[0]] == extra[1]


@pytest.mark.parametrize("fixture, values", INSTALL_CASES, ids=[i[0][:-4] for i in INSTALL_CASES])
def test_parse_install_info(fixture, values):
    assert npu_smi.parse_install_info(read(fixture)) == values


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("just words\n", "expected key=value"),
    ("ascendhal_version=7.35.19\n", "no Version= line"),
])
def test_parse_version_info_rejects(text, message):
    with pytest.raises(npu_smi.NpuSmiParseError) as err:
        npu_smi.parse_version_info(text)
    assert message in str(err.value)


def test_family_by_name_when_memory_is_silent():
    """No HBM column and Chip layout: the Name column decides."""
    info, dummy = parse(read(SEED))
    chips = tuple(c.__class__(**dict(c.__dict__, hbm_used_mb=None, hbm_total_mb=None))
                  for c in info.chips)
    assert npu_smi.detect_family(info.__class__(
        info.version, info.driver_version, info.layout, chips, True)) == "910B"


def test_error_message_lists_offending_lines_without_traceback():
    err = npu_smi.NpuSmiParseError("bad", ["a", "b"])
    assert str(err) == "bad\nOffending line(s):\n  'a'\n  'b'"
    assert re.search("Traceback", str(err)) is None


def test_na_memory_reads_as_unknown():
    text = read(SEED).replace("3390 / 65536", "NA", 1)
    info, dummy = parse(text)
    chip4 = info.by_device()[4]
    assert (chip4.hbm_used_mb, chip4.hbm_total_mb) == (None, None)
    # No device memory figure: falls back to Memory-Usage 0 / 0, unknown, so not idle.
    assert chip4.memory_used_pct() is None and chip4.is_idle() is False


def test_a3_process_row_by_chip_index_or_phy_id():
    text = read("A3-910_93-24.1.rc3.7-16chips-idle-no-processes.txt")
    old = "| No running processes found in NPU 1                                                            |"
    assert old in text
    by_index = text.replace(
        old, "| 1       1                 | 5150          | python                   | 2000                    |")
    by_phy = text.replace(
        old, "| 1       3                 | 5150          | python                   | 2000                    |")
    for variant in (by_index, by_phy):
        info, dummy = parse(variant)
        busy = [(c.npu_id, c.chip_id, c.device_id, [p.pid for p in c.processes])
                for c in info.chips if c.processes]
        assert busy == [(1, 1, 3, [5150])]


# ---------------------------------------------------------------------------------------------
# Ascend 950 (A5). No captured npu-smi output of a 950 was found (fixtures/npu_smi/SOURCES.md); the
# derived sample renders a real one (910B3) with the printf formats of npu-smi's own source.

A5_DERIVED = "DERIVED-A5-950PR-v2-layout-from-910B3-25.2.0-one-python-process.txt"


def test_the_derived_a5_sample_is_what_its_script_writes():
    import importlib.util
    spec = importlib.util.spec_from_file_location("derive_a5_sample", os.path.join(FIXTURES, "derive_a5_sample.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render() == read(A5_DERIVED)


def test_a5_process_rows_as_vllm_ascend_parses_them():
    # The process-table rows of vllm-ascend's tests/ut/device_allocator/test_cpu_binding.py
    # (test_get_running_npus_from_npu_only_process_table, NPU ID only), put under the derived header.
    text = read(A5_DERIVED)
    head = text[:text.index("| NPU ID                    | Process id")]
    table = ("| NPU ID                    | Process id    | Process name             | Process memory(MB)       |\n"
             "+===========================+===============+=====================================================+\n"
             "| 0                          | 2018733       | VLLMWorker_TP            | 30212                   |\n"
             "| 1                          | 2018734       | VLLMWorker_TP            | 30212                   |\n"
             "+===========================+===============+=====================================================+\n")
    info, warnings = parse(head + table)
    assert warnings == []
    assert [(c.device_id, [(p.pid, p.name, p.memory_mb) for p in c.processes]) for c in info.chips[:3]] == [
        (0, [(2018733, "VLLMWorker_TP", 30212)]), (1, [(2018734, "VLLMWorker_TP", 30212)]), (2, [])]


@pytest.mark.parametrize("name, family", [
    ("950PR_9599", "A5"), ("950DT_9582", "A5"), ("Ascend950DT", "A5"), ("Ascend 950PR", "A5"),
    ("960DT_9600", None), ("910B3", None),
])
def test_a5_family_needs_the_v2_layout_and_a_950_name(name, family):
    text = read(A5_DERIVED).replace("| 950PR_9599       |", "| %-17s|" % name)
    info, dummy = parse(text)
    assert info.layout == "npu-id" and npu_smi.detect_family(info) == family


def test_a5_names_in_the_old_layout_are_not_a5():
    # The A5 rule reads the 950 table only: a 950 name in a 910B table stays undecided by name.
    text = read("910B4-24.1.rc3-8cards-one-card-nearly-full-no-process-table.txt").replace("910B4", "950PR")
    info, dummy = parse(text)
    assert info.layout == "npu" and npu_smi.detect_family(info) == "910B"  # HBM without DDR decides


def test_a5_second_row_must_start_with_two_empty_cells():
    text = read(A5_DERIVED).replace("|        |                  | 0000:C1:00.0", "| 0      |                  | 0000:C1:00.0")
    with pytest.raises(npu_smi.NpuSmiParseError, match="four cells per row"):
        parse(text)
