# -*- coding: utf-8 -*-
"""ascendfleet.llm.npu_info through its real entry point, with a fake npu-smi."""

import pytest

from ansible_collections.ascendfleet.llm.plugins.modules import npu_info

from .conftest import FAKE_NPU_SMI


def test_seed_host(run_module, monkeypatch, tmp_path):
    log = tmp_path / "calls"
    monkeypatch.setenv("FAKE_NPU_SMI_LOG", str(log))
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI})
    assert not failed and result["changed"] is False
    assert log.read_text() == "info LC_ALL=C\n"
    assert result["npu_smi_version"] == "25.2.1"
    assert result["family"] == "910B"
    assert result["has_process_table"] is True
    assert [c["device_id"] for c in result["chips"]] == list(range(8))
    assert [c["idle"] for c in result["chips"]] == [False] * 4 + [True] * 4
    chip3 = result["chips"][3]
    assert chip3 == {
        "npu_id": 3, "chip_id": 0, "device_id": 3, "device_path": "/dev/davinci3",
        "name": "910B2", "health": "OK", "bus_id": "0000:02:00.0", "power_w": 102.5,
        "temp_c": 43.0, "aicore_pct": 0.0, "memory_used_mb": 0, "memory_total_mb": 0,
        "hbm_used_mb": 64231, "hbm_total_mb": 65536, "idle": False,
        "processes": [{"pid": 1316014, "name": "VLLMWorker_TP", "memory_mb": 60891,
                       "pid_in_container": None}]}


def test_check_mode_reads_too(run_module):
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI,
                                                "_ansible_check_mode": True})
    assert not failed and len(result["chips"]) == 8


def test_a3_device_ids_are_phy_ids(run_module, monkeypatch):
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE", "A3-910_93-24.1.rc3.5-16chips-idle-no-processes.txt")
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI})
    assert result["family"] == "A3"
    assert [(c["npu_id"], c["chip_id"], c["device_id"]) for c in result["chips"][:4]] == [
        (0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
    assert result["chips"][1]["power_w"] is None


def test_310p_npu_ids_are_not_device_ids(run_module, monkeypatch):
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE",
                       "310P3-duo-25.2.0-2cards-4chips-idle-npu-ids-64-32832.txt")
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI})
    assert [(c["npu_id"], c["device_id"]) for c in result["chips"]] == [
        (64, 0), (64, 1), (32832, 2), (32832, 3)]
    assert result["chips"][0]["hbm_total_mb"] is None
    assert result["family"] == "310P"


def test_threshold_option(run_module, monkeypatch):
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE", "310-20.2.0-atlas800-3000-4chips-npu215-doc.txt")
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI})
    assert [c["idle"] for c in result["chips"]] == [False] * 4
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI,
                                                "idle_threshold_pct": 40})
    assert [c["idle"] for c in result["chips"]] == [True] * 4


def test_missing_executable(run_module, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    failed, result = run_module(npu_info.main, {"executable": "npu-smi-not-here"})
    assert failed
    assert result["msg"].startswith("npu-smi not found: no 'npu-smi-not-here' in PATH")
    assert "is the Ascend driver installed?" in result["msg"]
    failed, result = run_module(npu_info.main, {"executable": "/opt/none/npu-smi"})
    assert failed and "/opt/none/npu-smi is not an executable file" in result["msg"]


def test_nonzero_exit_includes_stderr(run_module, monkeypatch):
    monkeypatch.setenv("FAKE_NPU_SMI_RC", "255")
    monkeypatch.setenv("FAKE_NPU_SMI_STDERR", "dcmi module initialize failed. ret is -8005")
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI})
    assert failed and result["rc"] == 255
    assert "info failed (rc 255): dcmi module initialize failed. ret is -8005" in result["msg"]


@pytest.mark.parametrize("sample, message", [
    ("etc-ascend_install.info-driver-firmware-full-HwHiAiUser.txt", "no chip table found"),
    ("driver-version.info-25.3.rc1.txt", "no chip table found"),
])
def test_unparseable_output(run_module, monkeypatch, tmp_path, sample, message):
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE", sample)
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI})
    assert failed
    assert result["msg"].startswith("cannot read the output of ")
    assert message in result["msg"]
    assert "Traceback" not in result["msg"]


def test_a5_family_from_the_950_table(run_module, monkeypatch):
    # DERIVED sample (module_utils/fixtures/npu_smi/SOURCES.md): no captured npu-smi output of a 950 exists.
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE", "DERIVED-A5-950PR-v2-layout-from-910B3-25.2.0-one-python-process.txt")
    failed, result = run_module(npu_info.main, {"executable": FAKE_NPU_SMI})
    assert not failed and result["family"] == "A5"
    assert [(c["npu_id"], c["chip_id"], c["device_path"]) for c in result["chips"][:2]] == [
        (0, 0, "/dev/davinci0"), (1, 0, "/dev/davinci1")]
    assert result["chips"][4]["processes"] == [{"pid": 1601114, "name": "python", "memory_mb": 18429,
                                                "pid_in_container": None}]
    assert [c["idle"] for c in result["chips"]] == [True] * 4 + [False] + [True] * 3
