"""Containers that map /dev/davinciN show up in npu-smi as processes on chip N."""

import http.server
import json
import os
import socket
import socketserver
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu"))
import simtest as st  # noqa: E402

SEED = "910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt"


def container(cid, pid, devices, args=(), path="vllm", running=True, image="x"):
    return {"Id": cid, "Name": "/" + cid, "Path": path, "Args": list(args),
            "State": {"Running": running, "Pid": pid if running else 0},
            "Config": {"Image": image},
            "HostConfig": {"Devices": [{"PathOnHost": d, "PathInContainer": d,
                                        "CgroupPermissions": "rwm"} for d in devices]}}


VLLM_TP2 = container("vllm", 4242,
                     ["/dev/davinci4", "/dev/davinci5", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"],
                     args=["serve", "Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2",
                           "--gpu-memory-utilization", "0.95"])


def test_vllm_container_makes_its_chips_busy(tmp_path):
    proc = st.run("npu-smi", ["info"], st.profile_file("seed-910b2"), tmp_path, fake=[VLLM_TP2])
    assert proc.returncode == 0, proc.stderr
    # 0.95 x 65536 = 62259 MB used; the process is charged 62259 - 3390 = 58869
    expected = st.sample(SEED)
    for npu, bus in ((4, "0000:81:00.0"), (5, "0000:41:00.0")):
        expected = expected.replace(
            "| 0                         | %s  | 0           0    / 0          3390 / 65536  " % bus,
            "| 0                         | %s  | 12          0    / 0          62259/ 65536  " % bus)
        expected = expected.replace(
            "| No running processes found in NPU %d                                          "
            "                  |" % npu,
            "| %d       0                 | 4242          | VLLMWorker_TP            "
            "| 58869                   |" % npu)
    assert proc.stdout != st.sample(SEED)
    assert proc.stdout == expected


def test_default_is_ninety_percent_and_other_containers_use_their_comm(tmp_path):
    me = os.getpid()
    with open("/proc/%d/comm" % me, encoding="utf-8") as fh:
        comm = fh.read().strip()
    fake = [container("worker", me, ["/dev/davinci6"], path="/usr/bin/sleep"),
            container("stopped", 1, ["/dev/davinci7"], running=False),
            container("nodev", 7, []),
            container("vllm", 99, ["/dev/davinci7"], image="quay.io/ascend/vllm-ascend:v0.17.0rc1")]
    proc = st.run("npu-smi", ["info"], st.profile_file("seed-910b2"), tmp_path, fake=fake)
    lines = proc.stdout.splitlines()
    # 0.9 x 65536 = 58982; charged 58982 - 3390 = 55592
    assert "| 6       0                 | %-14s| %-25s| 55592                   |" % (
        me, comm[:15]) in lines
    assert "| 7       0                 | 99            | VLLMWorker_TP            " \
        "| 55592                   |" in lines
    assert sum("58982/ 65536" in line for line in lines) == 2
    assert "| No running processes found in NPU 5" + " " * 60 + "|" in lines


def test_a3_device_maps_to_phy_id_and_310p_to_device_column(tmp_path):
    proc = st.run("npu-smi", ["info"], st.profile_file("a3-16chips"), tmp_path,
                  fake=[container("a3", 555, ["/dev/davinci3"])])
    lines = proc.stdout.splitlines()
    assert "| 1     3                   | 0000:9B:00.0  | 12          0    / 0          " \
        "58982/ 65536         |" in lines
    assert "| 1       1                 | 555           | VLLMWorker_TP            " \
        "| 55797                   |" in lines
    proc = st.run("npu-smi", ["info"], st.profile_file("310p-duo"), tmp_path,
                  fake=[container("p", 777, ["/dev/davinci2"])])
    lines = proc.stdout.splitlines()
    # 310P has no HBM: the Memory-Usage cell rises, 0.9 x 44280 = 39852
    assert "| 0       2                     | 0000:83:00.0    | 12           39852/ 44280" \
        "                            |" in lines
    assert "| 32832   0                     | 777             | VLLMWorker_TP            " \
        "| 38229                     |" in lines


class _FakeDocker(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def _serve_fake_docker(sock_path, containers, delay=0.0):
    by_id = {c["Id"]: c for c in containers}

    class Handler(http.server.BaseHTTPRequestHandler):
        def address_string(self):
            return "unix"

        def log_message(self, *args):
            pass

        def do_GET(self):
            time.sleep(delay)
            if self.path == "/containers/json":
                body = [{"Id": c["Id"]} for c in containers if c["State"]["Running"]]
            elif self.path.startswith("/containers/") and self.path.endswith("/json"):
                body = by_id.get(self.path.split("/")[2])
            else:
                body = None
            data = json.dumps(body).encode()
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = _FakeDocker(sock_path, Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_docker_engine_api_over_the_unix_socket(tmp_path):
    sock = str(tmp_path / "docker.sock")
    server = _serve_fake_docker(sock, [VLLM_TP2])
    try:
        proc = st.run("npu-smi", ["info"], st.profile_file("seed-910b2"), tmp_path,
                      env={"ASCENDFLEET_SIM_DOCKER_FAKE": "", "ASCENDFLEET_SIM_DOCKER_SOCK": sock})
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr
    assert "| 4       0                 | 4242          | VLLMWorker_TP" in proc.stdout
    assert "| 5       0                 | 4242          | VLLMWorker_TP" in proc.stdout


def test_docker_down_shows_the_static_state(tmp_path):
    dead = str(tmp_path / "dead.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(dead)
    s.close()  # the socket file exists, nobody listens
    for sock in (dead, str(tmp_path / "absent.sock")):
        start = time.monotonic()
        proc = st.run("npu-smi", ["info"], st.profile_file("seed-910b2"), tmp_path,
                      env={"ASCENDFLEET_SIM_DOCKER_FAKE": "",
                           "ASCENDFLEET_SIM_DOCKER_SOCK": sock})
        assert time.monotonic() - start < 5
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == st.sample(SEED)


def test_bad_fake_file_is_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    proc = st.run("npu-smi", ["info"], st.profile_file("seed-910b2"), tmp_path,
                  env={"ASCENDFLEET_SIM_DOCKER_FAKE": str(bad)})
    assert proc.returncode == 2
    assert "ASCENDFLEET_SIM_DOCKER_FAKE=%s" % bad in proc.stderr


def test_npu_smi_info_is_fast(tmp_path):
    sock = str(tmp_path / "docker.sock")
    server = _serve_fake_docker(sock, [VLLM_TP2])
    try:
        best = min(_timed(tmp_path, sock) for _ in range(3))
    finally:
        server.shutdown()
        server.server_close()
    assert best < 0.3, "npu-smi info took %.3f s" % best


def _timed(tmp_path, sock):
    start = time.monotonic()
    proc = st.run("npu-smi", ["info"], st.profile_file("a3-16chips"), tmp_path,
                  env={"ASCENDFLEET_SIM_DOCKER_FAKE": "", "ASCENDFLEET_SIM_DOCKER_SOCK": sock})
    assert proc.returncode == 0, proc.stderr
    return time.monotonic() - start
