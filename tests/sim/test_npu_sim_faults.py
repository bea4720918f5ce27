"""Faults on demand: by profile and by npu-sim-fault inside a sim host."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu"))
import simtest as st  # noqa: E402

DCMI = ("DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"
        "dcmi module initialize failed. ret is -8005\n")


def _init(tmp_path, profile):
    proc, root = st.host_init(tmp_path, profile)
    assert proc.returncode == 0, proc.stderr
    return os.path.join(str(root), "etc/ascendfleet-sim/profile.json"), root


def test_warning_profile(tmp_path):
    path, _ = _init(tmp_path, "fault-warning-chip")
    out = st.run("npu-smi", ["info"], path, tmp_path).stdout
    assert "| 3     910B2               | Warning       | 102.5       43  " in out
    assert out.count("| OK            |") == 7
    health = st.run("npu-smi", ["info", "-t", "health", "-i", "3"], path, tmp_path).stdout
    assert health.splitlines() == [
        "\tHealth Status                  : Warning",
        "\tError Code                     : 80E01801",
        "\tError Information              : node type=SoC, sensor type=Temperature, "
        "event state=overtemperature"]


def test_warning_command_and_back(tmp_path):
    path, _ = _init(tmp_path, "seed-910b2")
    assert st.run("npu-sim-fault", ["warning", "6"], path, tmp_path).returncode == 0
    out = st.run("npu-smi", ["info"], path, tmp_path).stdout
    assert "| 6     910B2               | Warning       | 88.6" in out
    health = st.run("npu-smi", ["info", "-t", "health", "-i", "6", "-c", "0"], path, tmp_path)
    assert health.stdout.startswith("\tHealth Status                  : Warning\n")
    assert "Error Code                     : NA" not in health.stdout
    assert st.run("npu-sim-fault", ["ok", "6"], path, tmp_path).returncode == 0
    assert st.run("npu-smi", ["info"], path, tmp_path).stdout == \
        st.sample("910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt")


def test_a3_warning_addresses_the_device_index(tmp_path):
    path, _ = _init(tmp_path, "a3-16chips")
    st.run("npu-sim-fault", ["critical", "11"], path, tmp_path)
    lines = st.run("npu-smi", ["info"], path, tmp_path).stdout.splitlines()
    row = lines.index("| 1     11                  | 0000:8B:00.0  | 0           0    / 0          "
                      "3201 / 65536         |")
    assert lines[row - 1].startswith("| 5     Ascend910           | Critical      | -  ")
    assert sum("| Critical " in line for line in lines) == 1


def test_dcmi_by_command(tmp_path):
    path, _ = _init(tmp_path, "seed-910b2")
    st.run("npu-sim-fault", ["dcmi", "on"], path, tmp_path)
    for args in (["info"], ["info", "-m"], ["info", "-t", "health", "-i", "0"]):
        proc = st.run("npu-smi", args, path, tmp_path)
        assert (proc.returncode, proc.stdout) == (1, DCMI)
    assert st.run("hccn_tool", ["-i", "0", "-link", "-g"], path, tmp_path).returncode == 1
    st.run("npu-sim-fault", ["dcmi", "off"], path, tmp_path)
    assert st.run("npu-smi", ["info"], path, tmp_path).returncode == 0


def test_dcmi_profile_can_be_switched_off(tmp_path):
    path, _ = _init(tmp_path, "fault-dcmi")
    assert st.run("npu-smi", ["info"], path, tmp_path).stdout == DCMI
    st.run("npu-sim-fault", ["dcmi", "off"], path, tmp_path)
    assert st.run("npu-smi", ["info"], path, tmp_path).returncode == 0


def test_remove_and_restore_device(tmp_path):
    path, root = _init(tmp_path, "seed-910b2")
    node = os.path.join(str(root), "dev/davinci5")
    assert os.path.exists(node)
    assert st.run("npu-sim-fault", ["remove-device", "5"], path, tmp_path).returncode == 0
    assert not os.path.exists(node)
    status = json.loads(st.run("npu-sim-fault", ["status"], path, tmp_path).stdout)
    assert status["removed_devices"] == [5]
    # npu-smi still lists the NPU: the driver sees it, only the node is gone
    assert "| 5     910B2 " in st.run("npu-smi", ["info"], path, tmp_path).stdout
    st.run("npu-sim-fault", ["restore-device", "5"], path, tmp_path)
    assert os.path.exists(node)


def test_compose_command_and_clear(tmp_path):
    plugin = tmp_path / "root" / "usr/libexec/docker/cli-plugins/docker-compose"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("plugin", encoding="utf-8")
    path, root = _init(tmp_path, "seed-910b2")
    st.run("npu-sim-fault", ["compose", "off"], path, tmp_path)
    st.run("npu-sim-fault", ["remove-device", "2"], path, tmp_path)
    st.run("npu-sim-fault", ["dcmi", "on"], path, tmp_path)
    assert not plugin.exists()
    assert st.run("npu-sim-fault", ["clear"], path, tmp_path).returncode == 0
    assert plugin.exists() and os.path.exists(os.path.join(str(root), "dev/davinci2"))
    assert st.run("npu-smi", ["info"], path, tmp_path).returncode == 0


def test_bad_fault_commands_are_named(tmp_path):
    path, _ = _init(tmp_path, "310p-duo")
    proc = st.run("npu-sim-fault", ["warning", "9"], path, tmp_path)
    assert proc.returncode == 2
    assert "give a device index N of /dev/davinciN, one of [0, 1, 2, 3]" in proc.stderr
    proc = st.run("npu-sim-fault", ["explode"], path, tmp_path)
    assert proc.returncode == 2 and "unknown command 'explode'" in proc.stderr
    assert "usage: npu-sim-fault" in st.run("npu-sim-fault", ["--help"], path, tmp_path).stdout


def test_ok_overrides_a_warning_profile_and_clear_restores_it(tmp_path):
    path, _ = _init(tmp_path, "fault-warning-chip")
    st.run("npu-sim-fault", ["ok", "3"], path, tmp_path)
    assert "Warning" not in st.run("npu-smi", ["info"], path, tmp_path).stdout
    st.run("npu-sim-fault", ["clear"], path, tmp_path)
    out = st.run("npu-smi", ["info"], path, tmp_path).stdout
    assert "| 3     910B2               | Warning " in out
