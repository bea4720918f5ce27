"""host-init against a temporary root: the files a sim host gets, in real formats."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu"))
import simtest as st  # noqa: E402


def read(root, rel):
    with open(os.path.join(str(root), rel), encoding="utf-8") as fh:
        return fh.read()


def tree(root):
    result = {}
    for base, _, files in os.walk(str(root)):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as fh:
                result[os.path.relpath(path, str(root))] = (fh.read(), os.stat(path).st_mode)
    return result


def test_idle_910b4_host_files_equal_the_real_samples(tmp_path):
    proc, root = st.host_init(tmp_path, "idle-910b4")
    assert proc.returncode == 0, proc.stderr
    assert read(root, "usr/local/Ascend/driver/version.info") == \
        st.sample("driver-version.info-25.0.rc1.1-910B.txt")
    assert read(root, "usr/local/Ascend/firmware/version.info") == \
        st.sample("firmware-version.info-7.7.0.1.231-910B.txt")
    assert read(root, "etc/ascend_install.info") == \
        st.sample("etc-ascend_install.info-driver-firmware-full-HwHiAiUser.txt")
    assert read(root, "usr/local/Ascend/driver/lib64/ascendfleet_sim_soc") == "Ascend910B4"
    assert os.path.isfile(os.path.join(str(root), "usr/local/Ascend/driver/lib64/libascend_hal.so"))
    assert os.listdir(os.path.join(str(root), "usr/local/dcmi"))


def test_old_driver_profile_writes_the_23_0_7_files(tmp_path):
    proc, root = st.host_init(tmp_path, "fault-old-driver")
    assert proc.returncode == 0, proc.stderr
    assert read(root, "usr/local/Ascend/driver/version.info") == \
        st.sample("driver-version.info-23.0.7-910A.txt")
    assert read(root, "usr/local/Ascend/firmware/version.info") == \
        st.sample("firmware-version.info-7.1.0.11.220-910A.txt")


@pytest.mark.parametrize("profile,soc,devices", [
    ("seed-910b2", "Ascend910B2", range(8)),
    ("a3-16chips", "Ascend910_9392", range(16)),
    ("310p-duo", "Ascend310P3", range(4)),
])
def test_device_nodes_and_soc(tmp_path, profile, soc, devices):
    proc, root = st.host_init(tmp_path, profile)
    assert proc.returncode == 0, proc.stderr
    dev = sorted(os.listdir(os.path.join(str(root), "dev")))
    expected = sorted(["davinci%d" % n for n in devices] +
                      ["davinci_manager", "devmm_svm", "hisi_hdc"])
    assert dev == expected
    # outside a real root the nodes are regular files naming what mknod would create
    assert read(root, "dev/davinci%d" % devices[-1]) == "char 236:%d\n" % devices[-1]
    assert read(root, "dev/davinci_manager") == "char 237:0\n"
    assert read(root, "usr/local/Ascend/driver/lib64/ascendfleet_sim_soc") == soc


def test_installed_tools_run_from_the_new_root(tmp_path):
    proc, root = st.host_init(tmp_path, "seed-910b2")
    assert proc.returncode == 0, proc.stderr
    fake = tmp_path / "none.json"
    fake.write_text("[]", encoding="utf-8")
    env = dict(os.environ, ASCENDFLEET_SIM_ROOT=str(root), ASCENDFLEET_SIM_DOCKER_FAKE=str(fake))
    env.pop("ASCENDFLEET_SIM_NPU_PROFILE", None)
    npu_smi = os.path.join(str(root), "usr/local/bin/npu-smi")
    assert os.access(npu_smi, os.X_OK)
    out = subprocess.run([sys.executable, npu_smi, "info"], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out == st.sample("910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt")
    hccn = os.path.join(str(root), "usr/local/Ascend/driver/tools/hccn_tool")
    out = subprocess.run([sys.executable, hccn, "-i", "0", "-link", "-g"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out == "link status: UP\n"
    fault = os.path.join(str(root), "usr/local/bin/npu-sim-fault")
    out = subprocess.run([sys.executable, fault, "status"], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert '"health": {}' in out


def test_rerun_is_idempotent_and_repairs(tmp_path):
    proc, root = st.host_init(tmp_path, "fault-missing-device")
    assert proc.returncode == 0, proc.stderr
    first = tree(root)
    assert "dev/davinci5" not in first and "dev/davinci4" in first
    # a restart after someone recreated the missing node and broke a file
    (root / "dev" / "davinci5").write_text("char 236:5\n", encoding="utf-8")
    (root / "usr/local/Ascend/driver/version.info").write_text("garbage", encoding="utf-8")
    proc, root = st.host_init(tmp_path, "fault-missing-device")
    assert proc.returncode == 0, proc.stderr
    assert tree(root) == first
    assert "missing: [5]" in proc.stdout


def test_no_compose_hides_and_restores_the_plugin(tmp_path):
    plugin_dir = tmp_path / "root" / "usr/libexec/docker/cli-plugins"
    plugin_dir.mkdir(parents=True)
    plugin = plugin_dir / "docker-compose"
    plugin.write_text("#!/bin/sh\n", encoding="utf-8")
    proc, _ = st.host_init(tmp_path, "fault-no-compose")
    assert proc.returncode == 0, proc.stderr
    assert not plugin.exists()
    proc, _ = st.host_init(tmp_path, "fault-no-compose")  # restart: still hidden
    assert proc.returncode == 0 and not plugin.exists()
    proc, _ = st.host_init(tmp_path, "seed-910b2")
    assert plugin.read_text(encoding="utf-8") == "#!/bin/sh\n"


def test_execs_the_program_with_the_arguments(tmp_path):
    proc, _ = st.host_init(tmp_path, "idle-910b3", exec_program="/bin/echo",
                           args=["--storage-driver=vfs", "--debug"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "--storage-driver=vfs --debug"


def test_unknown_profile_lists_the_valid_names(tmp_path):
    proc, _ = st.host_init(tmp_path, "910b9")
    assert proc.returncode == 2
    assert "profile '910b9' not found" in proc.stderr and "seed-910b2" in proc.stderr


def test_unset_profile_is_named(tmp_path):
    proc, _ = st.host_init(tmp_path, "")
    assert proc.returncode == 2
    assert "ASCENDFLEET_SIM_PROFILE is not set" in proc.stderr


def test_fault_dcmi_profile_makes_the_installed_npu_smi_fail(tmp_path):
    proc, root = st.host_init(tmp_path, "fault-dcmi")
    assert proc.returncode == 0, proc.stderr
    env = dict(os.environ, ASCENDFLEET_SIM_ROOT=str(root))
    env.pop("ASCENDFLEET_SIM_NPU_PROFILE", None)
    out = subprocess.run([sys.executable, os.path.join(str(root), "usr/local/bin/npu-smi"),
                          "info"], env=env, capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert out.stdout.endswith("dcmi module initialize failed. ret is -8005\n")


def test_npu_smi_mounted_into_a_container_shows_the_mapped_chips(tmp_path):
    # a container gets npu-smi and the driver's lib64/ (with the profile copy)
    # mounted, plus /dev/davinci2 and /dev/davinci3; no /etc/ascendfleet-sim
    proc, host = st.host_init(tmp_path, "seed-910b2")
    assert proc.returncode == 0, proc.stderr
    ctr = tmp_path / "container"
    lib64 = "usr/local/Ascend/driver/lib64"
    (ctr / lib64).mkdir(parents=True)
    (ctr / "dev").mkdir()
    for name in os.listdir(os.path.join(str(host), lib64)):
        (ctr / lib64 / name).write_bytes((host / lib64 / name).read_bytes())
    for dev in ("davinci2", "davinci3", "davinci_manager"):
        (ctr / "dev" / dev).write_text("", encoding="utf-8")
    env = dict(os.environ, ASCENDFLEET_SIM_ROOT=str(ctr),
               ASCENDFLEET_SIM_DOCKER_SOCK=str(tmp_path / "absent.sock"))
    env.pop("ASCENDFLEET_SIM_NPU_PROFILE", None)
    env.pop("ASCENDFLEET_SIM_DOCKER_FAKE", None)
    out = subprocess.run([sys.executable, os.path.join(str(host), "usr/local/bin/npu-smi"),
                          "info"], env=env, capture_output=True, text=True, check=True).stdout
    lines = st.sample("910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt").splitlines()
    # header (6 lines), NPU 2 and 3 blocks (3 lines each), process header (3 lines),
    # NPU 2 and 3 process rows with their separators
    expected = lines[0:6] + lines[12:18] + lines[30:33] + lines[37:41]
    assert out.splitlines() == expected
