"""Tests of the simulated fleet's plumbing: endpoint discovery (pure), and, with Docker, the
image cache of build-images.sh and a one-host fleet brought up and down by fleet.sh."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fleet_endpoints  # noqa: E402  pylint: disable=wrong-import-position

ALL_CAPS_BUT_SYS_RESOURCE = {
    "AUDIT_CONTROL", "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID",
    "IPC_LOCK", "IPC_OWNER", "KILL", "LEASE", "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE", "MKNOD",
    "NET_ADMIN", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP",
    "SETUID", "SYSLOG", "SYS_ADMIN", "SYS_BOOT", "SYS_CHROOT", "SYS_MODULE", "SYS_NICE", "SYS_PACCT",
    "SYS_PTRACE", "SYS_RAWIO", "SYS_TIME", "SYS_TTY_CONFIG", "WAKE_ALARM",
}


def _container(name, cmd, mode="host", ports=None, env=None, project="qwen"):
    return {
        "Name": "/" + name,
        "Config": {"Entrypoint": None, "Cmd": cmd, "Env": env or [],
                   "Labels": {"com.docker.compose.project": project}},
        "HostConfig": {"NetworkMode": mode},
        "NetworkSettings": {"Ports": ports or {}},
    }


def test_endpoints_host_network_bridge_and_others():
    containers = [
        _container("qwen-vllm-1", ["vllm", "serve", "/models/Qwen3.5-27B", "--port", "8123",
                                   "--api-key", "k1"]),
        _container("other-vllm-1", ["vllm", "serve", "/models/x"], env=["VLLM_API_KEY=k2", "A=b"]),
        _container("bridged-vllm-1", ["vllm", "serve", "/m", "--port=9000"], mode="qwen_default",
                   ports={"9000/tcp": [{"HostIp": "0.0.0.0", "HostPort": "19000"}]}),
        _container("unpublished-vllm-1", ["vllm", "serve", "/m"], mode="qwen_default"),
        _container("helper-1", ["sleep", "infinity"]),
    ]
    assert fleet_endpoints.endpoints(containers, "172.30.0.2") == [
        {"container": "qwen-vllm-1", "project": "qwen", "url": "http://172.30.0.2:8123/v1", "api_key": "k1"},
        {"container": "other-vllm-1", "project": "qwen", "url": "http://172.30.0.2:8000/v1", "api_key": "k2"},
        {"container": "bridged-vllm-1", "project": "qwen", "url": "http://172.30.0.2:19000/v1", "api_key": None},
    ]


def test_endpoints_main_without_deployments_exits_1(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(""))
    assert fleet_endpoints.main(["--host", "h", "--address", "172.30.0.2"]) == 1
    assert capsys.readouterr().out == ""


def _docker_ok():
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


needs_docker = pytest.mark.skipif(not _docker_ok(), reason="Docker is not answering (docker info failed)")


def _env():
    env = dict(os.environ)
    # ansible-inventory and the Compose wheel live in the interpreter's virtualenv.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["ASCENDFLEET_SIM_VLLM"] = "0"  # these tests need the base and host images only
    return env


def _run(*cmd, env=None, check=True):
    return subprocess.run(list(cmd), capture_output=True, text=True, env=env or _env(), check=check, timeout=600)


def _inspect(kind, name):
    r = _run("docker", kind, "inspect", name, check=False)
    return json.loads(r.stdout)[0] if r.returncode == 0 else None


@needs_docker
def test_build_images_reuses_its_cache():
    _run(os.path.join(HERE, "build-images.sh"))  # builds when cold (~1 min), else reuses
    out = _run(os.path.join(HERE, "build-images.sh")).stdout
    assert "build-images: building" not in out
    tags = {}
    for repo in ("base", "host"):
        line = [ln for ln in out.splitlines() if ln.startswith("build-images: reusing ascendfleet-sim/%s:in-" % repo)]
        assert len(line) == 1, out
        tags[repo] = line[0].split()[2]
        # :latest is the image of the current input tag
        assert _inspect("image", tags[repo])["Id"] == _inspect("image", "ascendfleet-sim/%s:latest" % repo)["Id"]
    host = _inspect("image", "ascendfleet-sim/host:latest")
    assert "/var/lib/docker" in host["Config"]["Volumes"]
    with open("/etc/ssl/certs/ca-certificates.crt", "rb") as ca:
        r = subprocess.run(["docker", "run", "--rm", "-i", "ascendfleet-sim/host:latest", "sh", "-c",
                            "docker compose version --short; python3 -c 'import requests, venv'; "
                            "cmp /etc/ssl/certs/ca-certificates.crt - && echo ca-same"],
                           stdin=ca, capture_output=True, timeout=120, check=False)
    lines = r.stdout.decode().split()
    assert r.returncode == 0, r.stderr
    assert lines[0].startswith("2.") and lines[-1] == "ca-same"


@needs_docker
def test_fleet_up_is_idempotent_and_down_leaves_nothing(tmp_path):
    name = "ascendfleet-sim-pytest-%d" % os.getpid()
    network = name + "-net"
    inv = tmp_path / "hosts.yml"
    inv.write_text("---\nascend_servers:\n  hosts:\n    %s:\n      ascendfleet_sim_profile: seed-910b2\n" % name)
    env = _env()
    env.update(ASCENDFLEET_SIM_INVENTORY=str(inv), ASCENDFLEET_SIM_NETWORK=network, ASCENDFLEET_SIM_HUB="0")
    fleet = os.path.join(HERE, "fleet.sh")
    try:
        up = _run(fleet, "up", env=env)
        c = _inspect("container", name)
        assert c["State"]["Running"]
        assert {cap.replace("CAP_", "", 1) for cap in c["HostConfig"]["CapAdd"]} == ALL_CAPS_BUT_SYS_RESOURCE
        assert not c["HostConfig"]["Privileged"]
        assert set(c["HostConfig"]["SecurityOpt"]) == {"seccomp=unconfined", "apparmor=unconfined"}
        assert set(c["HostConfig"]["Tmpfs"]) == {"/run", "/tmp"}
        assert "ASCENDFLEET_SIM_PROFILE=seed-910b2" in c["Config"]["Env"]
        mounts = {m["Destination"]: m for m in c["Mounts"]}
        assert mounts["/opt/ascendfleet-sim"]["Source"] == HERE and not mounts["/opt/ascendfleet-sim"]["RW"]
        assert mounts["/var/lib/docker"]["Name"] == "ascendfleet-sim-%s-docker" % name
        assert mounts["/sys/fs/cgroup"]["RW"]
        assert list(c["NetworkSettings"]["Networks"]) == [network]
        assert _run("docker", "exec", name, "docker", "info", "--format", "{{.Driver}}").stdout.strip() == "overlay2"
        assert "%s " % name in up.stdout and "dockerd ok" in up.stdout

        again = _run(fleet, "up", env=env)
        assert "host %s (seed-910b2) is running" % name in again.stdout
        assert _inspect("container", name)["Id"] == c["Id"]

        ep = _run(fleet, "endpoints", env=env)
        assert "no stand-in vLLM deployments" in ep.stdout
    finally:
        down = _run(fleet, "down", env=env, check=False)
    assert down.returncode == 0, down.stderr
    assert _inspect("container", name) is None
    assert _inspect("volume", "ascendfleet-sim-%s-docker" % name) is None
    assert _inspect("network", network) is None
    assert _run(fleet, "down", env=env).returncode == 0


# --------------------------------------------------------------------------- the gateway (issue 31)

SIM_INVENTORY = os.path.join(HERE, "..", "..", "inventories", "sim", "hosts.yml")


def test_gateway_lines_url_first_then_models_and_a_call(capsys, monkeypatch):
    assert fleet_endpoints.gateway_lines("sim-gateway", "172.30.0.9", 8080, ["Qwen", "chat"]) == [
        "sim-gateway  http://172.30.0.9:8080/v1  (the gateway: one URL for every model, routed by the request's \"model\")",
        "    models: Qwen, chat",
        "    curl -s http://172.30.0.9:8080/v1/chat/completions -H 'Content-Type: application/json' \\",
        "      -d '{\"model\": \"Qwen\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}'",
    ]
    # main asks the gateway's /v1/models (bounded: 3 s) and exits 1 while it does not answer.
    asked = []
    monkeypatch.setattr(fleet_endpoints, "served_models", lambda url, key: (asked.append(url), ([], "refused"))[1])
    assert fleet_endpoints.main(["--host", "sim-gateway", "--address", "172.30.0.9", "--gateway-port", "8080"]) == 1
    assert asked == ["http://172.30.0.9:8080/v1"]
    assert capsys.readouterr().out.splitlines()[:2] == [
        "sim-gateway  http://172.30.0.9:8080/v1  (the gateway: one URL for every model, routed by the request's \"model\")",
        "    models: not answering yet (refused)"]


def _fleet_function(name, inventory):
    """Run one function of fleet.sh (its text, as written there) against an inventory."""
    script = open(os.path.join(HERE, "fleet.sh"), encoding="utf-8").read()
    start = script.index("\n%s() {" % name) + 1
    body = script[start:script.index("\n}\n", start) + 3]
    proc = subprocess.run(["bash", "-c", 'die() { echo "$*" >&2; exit 1; }\ninventory=%s\n%s\n%s' % (inventory, body, name)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_the_sim_inventory_has_a_gateway_that_fleet_sh_starts_and_prints():
    hosts = _fleet_function("inventory_hosts", SIM_INVENTORY)
    assert hosts[-1] == "sim-gateway idle-910b3"
    assert "sim-910b2-seed seed-910b2" in hosts
    assert _fleet_function("gateway_hosts", SIM_INVENTORY) == ["sim-gateway 8080"]


def test_demo_prints_the_gateway_url_before_each_hosts_endpoints(tmp_path):
    """scripts/demo.sh run in a copy of the tree whose fleet.sh and ansible-playbook only say what was asked."""
    top = tmp_path / "tree"
    for path in ("scripts", "tests/sim", "inventories/sim", "playbooks"):
        (top / path).mkdir(parents=True)
    for role in ("npu_verify", "model_prefetch", "vllm_compose"):
        (top / "roles" / role / "tasks").mkdir(parents=True)
        (top / "roles" / role / "tasks" / "main.yml").write_text("---\n")
    (top / "inventories/sim/hosts.yml").write_text("---\n")
    (top / "playbooks/deploy_qwen.yml").write_text("---\n")
    demo = open(os.path.join(HERE, "..", "..", "scripts", "demo.sh"), encoding="utf-8").read()
    (top / "scripts/demo.sh").write_text(demo)
    (top / "tests/sim/fleet.sh").write_text("#!/bin/sh\necho \"fleet.sh $1\"\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ansible-playbook").write_text("#!/bin/sh\necho \"ansible-playbook $1\"\n")
    for stub in (top / "tests/sim/fleet.sh", bin_dir / "ansible-playbook"):
        stub.chmod(0o755)
    proc = subprocess.run(["bash", str(top / "scripts/demo.sh")], capture_output=True, text=True, timeout=60, check=False,
                          env=dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"])))
    assert proc.returncode == 0, proc.stderr
    calls = [line for line in proc.stdout.splitlines() if line.startswith(("fleet.sh", "ansible-playbook"))]
    assert calls == ["fleet.sh up", "ansible-playbook playbooks/deploy-qwen.yml", "ansible-playbook playbooks/status.yml",
                     "fleet.sh gateways", "fleet.sh endpoints"]
