"""host-init + npu-smi in a real sim host container (needs Docker and the host image)."""

import os
import subprocess
import sys
import time
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu"))
import simtest as st  # noqa: E402

IMAGE = "ascendfleet-sim/host:latest"
CAPS = ("AUDIT_CONTROL AUDIT_WRITE CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID IPC_LOCK "
        "IPC_OWNER KILL LEASE LINUX_IMMUTABLE MAC_ADMIN MAC_OVERRIDE MKNOD NET_ADMIN "
        "NET_BIND_SERVICE NET_BROADCAST NET_RAW SETFCAP SETGID SETPCAP SETUID SYSLOG SYS_ADMIN "
        "SYS_BOOT SYS_CHROOT SYS_MODULE SYS_NICE SYS_PACCT SYS_PTRACE SYS_RAWIO SYS_TIME "
        "SYS_TTY_CONFIG WAKE_ALARM").split()


def _docker(*args, check=True, timeout=120, **kwargs):
    return subprocess.run(["docker"] + list(args), capture_output=True, text=True,
                          timeout=timeout, check=check, **kwargs)


@pytest.fixture(scope="module")
def sim_host():
    try:
        if _docker("info", check=False, timeout=20).returncode != 0:
            pytest.skip("docker info fails: no Docker Engine to run a sim host")
    except FileNotFoundError:
        pytest.skip("docker CLI not installed")
    if _docker("image", "inspect", IMAGE, check=False).returncode != 0:
        pytest.skip("%s not built (tests/sim/build-images.sh builds it)" % IMAGE)
    name = "simnpu-pytest-%s" % uuid.uuid4().hex[:8]
    sim_dir = os.path.dirname(st.NPU_DIR)
    cmd = ["run", "-d", "--name", name]
    for cap in CAPS:
        cmd += ["--cap-add", cap]
    cmd += ["--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
            "--tmpfs", "/run", "--tmpfs", "/tmp", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
            "-v", "/var/lib/docker", "-v", "%s:/opt/ascendfleet-sim:ro" % sim_dir,
            "-e", "ASCENDFLEET_SIM_PROFILE=seed-910b2", IMAGE,
            "/opt/ascendfleet-sim/npu/host-init"]
    _docker(*cmd)
    try:
        deadline = time.monotonic() + 60
        while _docker("exec", name, "docker", "info", check=False).returncode != 0:
            if time.monotonic() > deadline:
                logs = _docker("logs", name, check=False)
                pytest.fail("inner dockerd did not start: %s" % (logs.stdout + logs.stderr))
            time.sleep(0.5)
        yield name
    finally:
        _docker("rm", "-f", "-v", name, check=False)


def test_sim_host_shows_the_seed_and_its_own_container(sim_host):
    def npu_smi():
        return _docker("exec", sim_host, "npu-smi", "info").stdout

    assert npu_smi() == st.sample("910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt")
    ls = _docker("exec", sim_host, "ls", "-l", "/dev/davinci3", "/dev/hisi_hdc").stdout
    assert ls.startswith("crw-rw---- 1 root root 236, 3 ")
    assert "239, 0" in ls

    # a tiny image made inside the sim host from its own sleep binary and libraries
    _docker("exec", sim_host, "sh", "-c",
            "tar -ch $(ldd /usr/bin/sleep | grep -o '/[^ ]*') /usr/bin/sleep 2>/dev/null"
            " | docker import - simnpu-sleep:latest")
    _docker("exec", sim_host, "docker", "run", "-d", "--name", "simnpu-job",
            "--device", "/dev/davinci6", "--device", "/dev/davinci7",
            "--device", "/dev/davinci_manager", "simnpu-sleep:latest", "/usr/bin/sleep", "600")
    pid = _docker("exec", sim_host, "docker", "inspect", "-f", "{{.State.Pid}}",
                  "simnpu-job").stdout.strip()
    out = npu_smi()
    for npu in (6, 7):
        assert "| %d       0                 | %-14s| sleep                    | 55592   " % (
            npu, pid) in out
    assert out.count("58982/ 65536") == 2

    _docker("exec", sim_host, "docker", "rm", "-f", "simnpu-job")
    assert npu_smi() == st.sample("910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt")

    _docker("exec", sim_host, "npu-sim-fault", "dcmi", "on")
    proc = _docker("exec", sim_host, "npu-smi", "info", check=False)
    assert proc.returncode == 1
    assert proc.stdout.endswith("dcmi module initialize failed. ret is -8005\n")
