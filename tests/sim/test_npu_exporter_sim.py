"""The stand-in NPU Exporter (tests/sim/npu/npu_exporter_sim.py) on a simulated host's profile.

Expected values are the profile's (typed in from the real npu-smi samples) and the metric names
and labels of MindCluster's NPU Exporter documentation.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu"))
import simtest as st  # noqa: E402

EXPORTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu", "npu_exporter_sim.py")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def exporter(tmp_path):
    def start(profile, containers=()):
        fake = tmp_path / "containers.json"
        fake.write_text(json.dumps(list(containers)), encoding="utf-8")
        env = dict(os.environ, ASCENDFLEET_SIM_NPU_PROFILE=st.profile_file(profile),
                   ASCENDFLEET_SIM_ROOT=str(tmp_path / "root"), ASCENDFLEET_SIM_DOCKER_FAKE=str(fake))
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-I", EXPORTER, "--host", "127.0.0.1", "--port", str(port)], env=env)
        procs.append(proc)
        url = "http://127.0.0.1:%d" % port
        for _ in range(50):
            try:
                urllib.request.urlopen(url + "/", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        return url, env
    procs = []
    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def samples(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        name_labels, value = line.rsplit(" ", 2)[0], line.rsplit(" ", 2)[1:]
        out[name_labels] = value
    return out


def get(url):
    return urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()


def test_seed_host_metrics_follow_the_profile(exporter):
    url, _ = exporter("seed-910b2")
    text = get(url)
    assert "machine_npu_nums 8" in text.splitlines()
    labels0 = ('container_name="",id="0",model_name="910B2-Ascend-V1",namespace="",pcie_bus_info="0000:C1:00.0",'
               'pod_name="",vdie_id="42C711D4-20B03704-4A10C8D4-14CC040A-D2102003"')
    s = samples(text)
    assert s["npu_chip_info_health_status{%s}" % labels0][0] == "1"
    # Chips 0-3 carry the seed's foreign vLLM job (64231 of 65536 MB), chip 4 the idle 3390.
    assert s["npu_chip_info_hbm_used_memory{%s}" % labels0][0] == "64231"
    assert s["npu_chip_info_hbm_total_memory{%s}" % labels0][0] == "65536"
    chip4 = [k for k in s if k.startswith("npu_chip_info_hbm_used_memory{") and 'id="4"' in k]
    assert [s[k][0] for k in chip4] == ["3390"]
    assert s["npu_chip_info_power{%s}" % labels0][0] == "97.2"
    # Each sample carries a millisecond timestamp, as the real exporter's do.
    assert abs(int(s["npu_chip_info_health_status{%s}" % labels0][1]) - time.time() * 1000) < 60000
    assert "# TYPE npu_chip_info_hbm_used_memory gauge" in text


def test_a_fault_turns_the_chip_unhealthy_on_the_next_scrape(exporter, tmp_path):
    url, env = exporter("seed-910b2")
    proc = st.run("npu-sim-fault", ["alarm", "7"], st.profile_file("seed-910b2"), tmp_path)
    assert proc.returncode == 0, proc.stderr
    health = dict((k, v[0]) for k, v in samples(get(url)).items() if k.startswith("npu_chip_info_health_status{"))
    assert [k for k, v in health.items() if v == "0"] == [k for k in health if 'id="7"' in k]
    errors = [k for k, v in samples(get(url)).items() if k.startswith("npu_chip_info_error_code{") and v[0] != "0"]
    assert len(errors) == 1 and 'id="7"' in errors[0]


def test_a_running_container_takes_hbm_on_its_chips(exporter):
    container = {"State": {"Running": True, "Pid": 4242}, "Path": "vllm", "Args": ["serve", "--gpu-memory-utilization", "0.9"],
                 "Config": {"Image": "quay.io/ascend/vllm-ascend:v0.17.0rc1"},
                 "HostConfig": {"Devices": [{"PathOnHost": "/dev/davinci5"}]}}
    url, _ = exporter("seed-910b2", [container])
    used = dict((k, v[0]) for k, v in samples(get(url)).items() if k.startswith("npu_chip_info_hbm_used_memory{"))
    (chip5,) = [v for k, v in used.items() if 'id="5"' in k]
    assert chip5 == str(int(65536 * 0.9))


def test_310p_reports_memory_not_hbm(exporter):
    url, _ = exporter("310p-duo")
    text = get(url)
    assert "npu_chip_info_hbm_used_memory" not in text
    assert "npu_chip_info_used_memory{" in text and "machine_npu_nums 4" in text.splitlines()
