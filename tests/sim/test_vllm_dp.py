"""The stand-in vLLM's multi-node data-parallel start-up contract (head + --headless members over
TCP on loopback), run as subprocesses like test_vllm_sim.py."""

import os
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_vllm_sim import SIM, Host, Running, chat, free_port  # noqa: E402

MODEL = "Qwen/Qwen3-0.6B"


class Member:
    """A --headless member, its output collected line by line."""

    def __init__(self, host, args, env=None):
        self.lines = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen([sys.executable, str(SIM), "serve"] + args, env=host.env(**(env or {})),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            if "EngineCore ready" in line:
                self.ready.set()

    def log(self):
        return "".join(self.lines)

    def wait(self, seconds=15):
        rc = self.proc.wait(seconds)
        self.reader.join(5)
        return rc

    stop = Running.stop  # SIGTERM, then kill after 5 s; the same on a head and a member


@pytest.fixture()
def host(tmp_path):
    return Host(tmp_path)


@pytest.fixture()
def procs():
    started = []
    yield started
    for proc in started:
        proc.stop()


def head_args(rpc, size=2, local=1, extra=()):
    return [MODEL, "--tensor-parallel-size", "2", "--data-parallel-size", str(size),
            "--data-parallel-size-local", str(local), "--data-parallel-address", "127.0.0.1",
            "--data-parallel-rpc-port", str(rpc)] + list(extra)


def member_args(rpc, start=1, size=2, local=1, model=MODEL, tp="2", extra=()):
    return [model, "--tensor-parallel-size", tp, "--data-parallel-size", str(size),
            "--data-parallel-size-local", str(local), "--headless", "--data-parallel-start-rank", str(start),
            "--data-parallel-address", "127.0.0.1", "--data-parallel-rpc-port", str(rpc)] + list(extra)


def head(host, procs, rpc, env=None, **kwargs):
    server = Running(host, head_args(rpc, **kwargs), env, wait=False)
    procs.append(server)
    deadline = time.monotonic() + 10
    while "Data parallel front-end listening" not in server.log():
        assert server.proc.poll() is None and time.monotonic() < deadline, server.log()
        time.sleep(0.05)
    return server


def member(host, procs, rpc, env=None, **kwargs):
    proc = Member(host, member_args(rpc, **kwargs), env)
    procs.append(proc)
    return proc


def port_closed(server):
    status = None
    try:
        status, _, _ = server.request("/health")
    except OSError:
        return True
    return status is None


def test_head_opens_its_api_only_after_every_rank_joined(host, procs):
    rpc = free_port()
    server = head(host, procs, rpc, extra=["--api-server-count", "2"])
    time.sleep(0.5)  # well past the 0.1 s load delay: the head still waits for rank 1
    assert port_closed(server)
    assert "Waiting for 1 local, 1 remote core engine proc(s) to start." in server.log()
    node1 = member(host, procs, rpc)
    assert server.started.wait(15), server.log()
    assert node1.ready.wait(5), node1.log()
    assert server.json("/health")[0] == 200
    status, body = server.json("/v1/chat/completions", chat("hello from rank 0", model=MODEL))
    assert status == 200 and body["choices"][0]["message"]["content"]
    log = server.log()
    assert "Data parallel rank(s) 1 ready on" in log and "All 2 data parallel ranks joined." in log
    assert "Starting vLLM API server 0 on" in log and "Starting vLLM API server 1 on" in log
    assert "Waiting for init message from front-end." in node1.log()


def test_headless_member_without_a_head_fails_after_the_timeout_like_vllm(host, procs):
    rpc = free_port()
    started = time.monotonic()
    node1 = member(host, procs, rpc, env={"ASCENDFLEET_SIM_DP_HANDSHAKE_SECONDS": "1"})
    assert node1.wait() == 1
    assert 0.9 < time.monotonic() - started < 10
    log = node1.log()
    assert "(EngineCore_DP1 pid=" in log and "EngineCore failed to start." in log
    assert "RuntimeError: Did not receive response from front-end process within 5 minutes" in log
    assert "could not reach the head at 127.0.0.1:%d" % rpc in log
    assert "Connection refused" in log


def test_head_fails_when_a_rank_dies(host, procs):
    rpc = free_port()
    server = head(host, procs, rpc)
    node1 = member(host, procs, rpc)
    assert server.started.wait(15), server.log()
    node1.proc.kill()
    assert server.proc.wait(10) == 1
    server.reader.join(5)
    log = server.log()
    assert "Engine core proc EngineCore_DP1 died unexpectedly, shutting down client." in log
    assert "EngineDeadError: EngineCore encountered an issue." in log


def test_member_exits_when_the_head_goes_away(host, procs):
    rpc = free_port()
    server = head(host, procs, rpc)
    node1 = member(host, procs, rpc)
    assert server.started.wait(15) and node1.ready.wait(5)
    server.stop()
    assert node1.wait() == 1
    assert "Lost the front-end at 127.0.0.1:%d" % rpc in node1.log()


@pytest.mark.parametrize("kwargs, env, reason", (
    ({"model": "Qwen/Qwen3.5-27B"}, None, "model 'Qwen/Qwen3.5-27B' differs from the head's 'Qwen/Qwen3-0.6B'"),
    ({"tp": "1"}, None, "tensor_parallel_size 1 differs from the head's 2"),
    ({"size": 3}, None, "data_parallel_size 3 differs from the head's 2"),
    ({}, {"ASCENDFLEET_SIM_VLLM_VERSION": "0.18.0rc1"}, "version '0.18.0rc1' differs from the head's '0.17.0rc1'"),
    ({"start": 0}, None, "rank(s) [0] already joined"),
))
def test_members_that_differ_from_the_head_are_refused(host, procs, kwargs, env, reason):
    rpc = free_port()
    server = head(host, procs, rpc)
    if kwargs.get("tp") == "1":
        host.devices(4)  # the member maps what its own tp x local needs
    elif kwargs.get("size") == 3:
        host.devices(4, 5)
    node1 = member(host, procs, rpc, env=env, **kwargs)
    assert node1.wait() == 1, node1.log()
    assert "refused data parallel rank(s)" in node1.log() and reason in node1.log()
    assert "Refused engine core from 127.0.0.1" in server.log() and reason in server.log()
    assert server.proc.poll() is None and port_closed(server)  # still waiting for a good rank 1


def test_head_times_out_when_a_rank_never_joins(host, procs):
    rpc = free_port()
    server = head(host, procs, rpc, env={"ASCENDFLEET_SIM_DP_WAIT_SECONDS": "1"})
    assert server.proc.wait(10) == 1
    server.reader.join(5)
    log = server.log()
    assert "TimeoutError: Timed out waiting for engines to send initial message on input socket." in log
    assert "data parallel rank(s) 1 never joined 127.0.0.1:%d" % rpc in log


def run(host, args, env=None):
    proc = subprocess.run([sys.executable, str(SIM), "serve"] + args, env=host.env(**(env or {})),
                          capture_output=True, text=True, timeout=15)
    return proc.returncode, proc.stdout + proc.stderr


def test_each_node_maps_the_npus_of_its_own_ranks(host):
    # dp 2 x tp 2 on one node needs 4 NPUs; the head of a two-node dp 2 needs 2 (host has 4, 5)
    rc, out = run(host, [MODEL, "--tensor-parallel-size", "2", "--data-parallel-size", "2"])
    assert rc == 1 and "The number of visible NPUs (2) does not match the world size (4)." in out
    host.devices(4)
    rc, out = run(host, member_args(free_port()))
    assert rc == 1 and "The number of visible NPUs (1) does not match the world size (2)." in out


@pytest.mark.parametrize("args, message", (
    (head_args(29999, size=2, local=3), "data_parallel_size_local (3) must be between 1 and data_parallel_size (2)"),
    (member_args(29999, start=2), "data parallel ranks 2..2 exceed data_parallel_size 2"),
    (head_args(29999, extra=["--data-parallel-start-rank", "1"]), "--data-parallel-start-rank is only applicable in --headless mode"),
))
def test_inconsistent_layouts_are_refused(host, args, message):
    rc, out = run(host, args)
    assert rc == 1 and message in out


def test_head_on_an_address_that_is_not_its_own_fails(host):
    args = head_args(free_port())
    args[args.index("127.0.0.1")] = "192.0.2.123"  # TEST-NET-1, never local
    rc, out = run(host, args)
    assert rc == 1
    assert "zmq.error.ZMQError: Cannot assign requested address (addr='tcp://192.0.2.123:" in out


def test_single_node_flags_keep_the_old_behaviour(host, procs):
    server = Running(host, [MODEL, "--tensor-parallel-size", "2"])
    procs.append(server)
    assert "Data parallel front-end" not in server.log()
    assert server.json("/health")[0] == 200
