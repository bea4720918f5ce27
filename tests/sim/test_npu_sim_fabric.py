"""hccn_tool link / ip / net_health / ping per NPU, the fabric faults, and real ICMP between
two sim hosts (the last part needs Docker and the host image)."""

import os
import re
import subprocess
import sys
import time
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu"))
import simtest as st  # noqa: E402

NODE0, NODE1, LINK_DOWN = "multinode-910b3-node0", "multinode-910b3-node1", "fault-multinode-link-down"
HCCN = "/usr/local/Ascend/driver/tools/hccn_tool"


def hccn(tmp_path, profile, *args, env=None):
    return st.run("hccn_tool", list(args), profile, tmp_path, env=env)


def fault(tmp_path, profile, *args):
    return st.run("npu-sim-fault", list(args), profile, tmp_path)


def shape(text):
    """A ping output with its numbers and addresses replaced, to compare with the real sample."""
    text = re.sub(r"time[=-][0-9.]+ms", "time=Tms", text)  # the doc's own typo: time-0.049
    text = re.sub(r"seq=[0-9O]+", "seq=S", text)            # and seq=O for seq=0
    return re.sub(r"\d+\.\d+\.\d+\.\d+", "IP", text)


@pytest.mark.parametrize("name, first", ((NODE0, 11), (NODE1, 21)))
def test_every_npu_of_a_member_has_its_own_address_link_and_health(tmp_path, name, first):
    profile = st.profile_file(name)
    for dev in range(8):
        assert hccn(tmp_path, profile, "-i", str(dev), "-ip", "-g").stdout == \
            "ipaddr:10.77.0.%d\nnetmask:255.255.255.0\n" % (first + dev)
        assert hccn(tmp_path, profile, "-i", str(dev), "-link", "-g").stdout == \
            st.sample("hccn_tool-link-g-up-doc.txt")
        assert hccn(tmp_path, profile, "-i", str(dev), "-net_health", "-g").stdout == \
            st.sample("hccn_tool-net_health-g-init-doc.txt")
    assert st.load(name)["fabric"] == {"interface": None}


def test_link_down_profile_matches_the_real_down_sample_on_that_npu_only(tmp_path):
    profile = st.profile_file(LINK_DOWN)
    assert hccn(tmp_path, profile, "-i", "3", "-link", "-g").stdout == \
        st.sample("hccn_tool-link-g-down-gpustack-test.txt")
    assert hccn(tmp_path, profile, "-i", "3", "-net_health", "-g").stdout == \
        st.sample("hccn_tool-910A-net_health-g-socket-failed.txt")
    assert hccn(tmp_path, profile, "-i", "2", "-link", "-g").stdout == "link status: UP\n"
    # the address stays configured: only the link is down
    assert hccn(tmp_path, profile, "-i", "3", "-ip", "-g").stdout == \
        "ipaddr:10.77.0.24\nnetmask:255.255.255.0\n"


def test_runtime_faults_switch_one_npu_and_clear_restores_it(tmp_path):
    profile = st.profile_file(NODE1)
    assert fault(tmp_path, profile, "ip", "clear", "5").returncode == 0
    assert hccn(tmp_path, profile, "-i", "5", "-ip", "-g").stdout == ""  # as the real tool
    assert hccn(tmp_path, profile, "-i", "4", "-ip", "-g").stdout.startswith("ipaddr:10.77.0.25\n")
    assert fault(tmp_path, profile, "link", "down", "6").returncode == 0
    assert hccn(tmp_path, profile, "-i", "6", "-link", "-g").stdout == "link status: DOWN\n"
    assert fault(tmp_path, profile, "ping", "silent", "7").returncode == 0
    assert hccn(tmp_path, profile, "-i", "7", "-link", "-g").stdout == "link status: UP\n"
    status = fault(tmp_path, profile, "status").stdout
    assert '"no_ip": [\n    "5"\n  ]' in status and '"ping_silent": [\n    "7"\n  ]' in status
    assert fault(tmp_path, profile, "ip", "restore", "5").returncode == 0
    assert hccn(tmp_path, profile, "-i", "5", "-ip", "-g").stdout.startswith("ipaddr:10.77.0.26\n")
    assert fault(tmp_path, profile, "clear").returncode == 0
    assert hccn(tmp_path, profile, "-i", "6", "-link", "-g").stdout == "link status: UP\n"
    assert fault(tmp_path, profile, "status").stdout.strip() == '{\n  "health": {}\n}'


def test_runtime_link_up_overrides_the_profile_fault(tmp_path):
    profile = st.profile_file(LINK_DOWN)
    assert fault(tmp_path, profile, "link", "up", "3").returncode == 0
    assert hccn(tmp_path, profile, "-i", "3", "-link", "-g").stdout == "link status: UP\n"


@pytest.mark.parametrize("args", (("link", "sideways", "1"), ("link", "down", "9"), ("ip", "clear")))
def test_fault_switch_mistakes_exit_2_and_name_the_fix(tmp_path, args):
    proc = fault(tmp_path, st.profile_file(NODE0), *args)
    assert proc.returncode == 2
    assert "npu-sim-fault" in proc.stderr


def test_ping_output_has_the_real_shape_on_loopback(tmp_path):
    data = st.load(NODE0)
    data["npus"][0]["chips"][0]["network"]["ip"] = "127.0.0.2"  # loopback answers 127/8
    proc = hccn(tmp_path, st.save(tmp_path, data), "-i", "0", "-ping", "-g", "address", "127.0.0.1")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("device 0 PING 127.0.0.1\nrecv seq=0,time=")
    assert shape(proc.stdout) == shape(st.sample("hccn_tool-ping-g-ok-atb-doc.txt"))
    assert re.fullmatch(r"\d+\.\d{6}", proc.stdout.splitlines()[1].split("time=")[1][:-2])


def test_ping_from_a_port_without_address_or_link_times_out_and_fails(tmp_path):
    data = st.load(NODE0)
    data["npus"][0]["chips"][0]["network"]["ip"] = "127.0.0.2"
    path = st.save(tmp_path, data)
    for args in (("link", "down", "0"), ("link", "up", "0"), ("ip", "clear", "0")):
        assert fault(tmp_path, path, *args).returncode == 0
        proc = hccn(tmp_path, path, "-i", "0", "-ping", "-g", "address", "127.0.0.1",
                    env={"ASCENDFLEET_SIM_PING_TIMEOUT": "0.2"})
        if args[1] == "up":
            assert proc.returncode == 0
            continue
        assert proc.returncode == 1
        assert proc.stdout == ("device 0 PING 127.0.0.1\nrecv time out seq=0\nrecv time out seq=1\n"
                               "recv time out seq=2\n3 packets transmitted, 0 received, "
                               "100.00% packet loss\n")
        last = st.sample("hccn_tool-ping-g-loss-atb-doc.txt").splitlines()[-1]
        assert shape(proc.stdout.splitlines()[-1]).split(",")[0] == shape(last).split(",")[0]


def test_ping_usage_and_bad_address(tmp_path):
    profile = st.profile_file(NODE0)
    proc = hccn(tmp_path, profile, "-i", "0", "-ping", "-g", "address", "10.77.0.300")
    assert proc.returncode == 1 and "address 10.77.0.300 is invalid" in proc.stdout
    proc = hccn(tmp_path, profile, "-i", "0", "-ping", "-g")
    assert proc.returncode == 1 and "-ping -g address <ip>" in proc.stdout


# ------------------------------------------------------------------ two sim hosts, real ICMP
def _docker(*args, check=True, timeout=60):
    return subprocess.run(["docker"] + list(args), capture_output=True, text=True,
                          timeout=timeout, check=check)


@pytest.fixture(scope="module")
def fabric():
    """Two sim hosts (host-init, then sleep instead of dockerd) on a network of their own,
    plus one without a fabric profile."""
    try:
        if _docker("info", check=False, timeout=20).returncode != 0:
            pytest.skip("docker info fails: no Docker Engine")
    except FileNotFoundError:
        pytest.skip("docker CLI not installed")
    image = "ascendfleet-sim/host:latest"
    if _docker("image", "inspect", image, check=False).returncode != 0:
        pytest.skip("%s not built (tests/sim/build-images.sh builds it)" % image)
    tag = "simfab-pytest-%s" % uuid.uuid4().hex[:8]
    sim_dir = os.path.dirname(st.NPU_DIR)
    names = {"node0": NODE0, "node1": NODE1, "plain": "idle-910b3"}
    _docker("network", "create", tag)
    try:
        for short, profile in names.items():
            _docker("run", "-d", "--name", "%s-%s" % (tag, short), "--network", tag,
                    "--cap-add", "NET_ADMIN", "--cap-add", "NET_RAW", "--cap-add", "MKNOD",
                    "--tmpfs", "/run", "-v", "%s:/opt/ascendfleet-sim:ro" % sim_dir,
                    "-e", "ASCENDFLEET_SIM_PROFILE=" + profile, "-e", "ASCENDFLEET_SIM_EXEC=/bin/sleep",
                    image, "/opt/ascendfleet-sim/npu/host-init", "600")
        deadline = time.monotonic() + 30
        for short in names:
            while "exec /bin/sleep" not in _docker("logs", "%s-%s" % (tag, short)).stdout:
                assert time.monotonic() < deadline, _docker("logs", "%s-%s" % (tag, short)).stderr
                time.sleep(0.2)
        yield {short: "%s-%s" % (tag, short) for short in names}
    finally:
        for short in names:
            _docker("rm", "-f", "%s-%s" % (tag, short), check=False)
        _docker("network", "rm", tag, check=False)


def ping(host, dev, address):
    return _docker("exec", "-e", "ASCENDFLEET_SIM_PING_TIMEOUT=0.3", host, HCCN, "-i", str(dev),
                   "-ping", "-g", "address", address, check=False)


def test_npus_of_two_members_reach_each_other_and_faults_really_cut_them(fabric):
    node0, node1 = fabric["node0"], fabric["node1"]
    for src, dev, dst in ((node0, 0, "10.77.0.21"), (node1, 7, "10.77.0.18"), (node0, 3, "10.77.0.24")):
        proc = ping(src, dev, dst)
        assert proc.returncode == 0, proc.stdout
        assert proc.stdout.endswith("3 packets transmitted, 3 received, 0.00% packet loss\n")
    try:
        for switch, restore in ((("link", "down", "3"), ("link", "up", "3")),
                                (("ip", "clear", "3"), ("ip", "restore", "3")),
                                (("ping", "silent", "3"), ("ping", "answer", "3"))):
            _docker("exec", node1, "npu-sim-fault", *switch)
            proc = ping(node0, 3, "10.77.0.24")
            assert proc.returncode == 1, (switch, proc.stdout)
            assert "recv time out seq=0\n" in proc.stdout
            assert ping(node0, 3, "10.77.0.23").returncode == 0  # the other NPUs still answer
            _docker("exec", node1, "npu-sim-fault", *restore)
            assert ping(node0, 3, "10.77.0.24").returncode == 0, switch
        _docker("exec", node1, "npu-sim-fault", "ping", "silent", "2")
        assert _docker("exec", node1, HCCN, "-i", "2", "-link", "-g").stdout == "link status: UP\n"
        assert ping(node0, 0, "10.77.0.23").returncode == 1
    finally:
        _docker("exec", node1, "npu-sim-fault", "clear", check=False)
    assert ping(node0, 0, "10.77.0.23").returncode == 0


def test_a_host_without_a_fabric_profile_has_no_npu_aliases(fabric):
    out = _docker("exec", fabric["plain"], "ip", "-o", "-4", "addr", "show").stdout
    assert ":npu" not in out
    aliases = _docker("exec", fabric["node0"], "ip", "-o", "-4", "addr", "show").stdout
    assert sorted(re.findall(r"inet (10\.77\.0\.\d+)/32", aliases)) == sorted(
        "10.77.0.%d" % (11 + d) for d in range(8))
