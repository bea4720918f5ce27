"""The stand-in vllm-ascend image, built by tests/sim/vllm/build.sh and run on the outer Docker.

Skipped (with the reason) without Docker or without the base image ascendfleet-sim/base:latest.
Builds one tag under a private repository name (simvllm-pytest/vllm-ascend) so the real tags of
other users of this engine are never touched, runs it the way the seed's compose file does
(davinci devices, driver lib64/ and ModelScope cache mounted, `vllm serve ...` as the command),
and removes its containers and images afterwards.
"""

import json
import os
import pathlib
import shutil
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import pytest

HERE = pathlib.Path(__file__).resolve().parent
BUILD = HERE / "vllm" / "build.sh"
BASE = "ascendfleet-sim/base:latest"
REPO = "simvllm-pytest/vllm-ascend"
TAG = "v0.17.0rc1-openeuler"


def docker(*args, check=True, timeout=120):
    return subprocess.run(["docker"] + list(args), capture_output=True, text=True, check=check, timeout=timeout)


def docker_ready():
    if shutil.which("docker") is None:
        return "docker CLI not installed"
    try:
        if docker("info", check=False, timeout=20).returncode != 0:
            return "docker info failed: no reachable Docker Engine"
    except subprocess.TimeoutExpired:
        return "docker info timed out"
    if docker("image", "inspect", BASE, check=False).returncode != 0:
        return "base image %s is missing (build it with tests/sim/build-images.sh)" % BASE
    return None


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    reason = docker_ready()
    if reason:
        pytest.skip(reason)
    cache = tmp_path_factory.mktemp("simcache")
    env = dict(os.environ, SIMVLLM_REPO=REPO, ASCENDFLEET_SIM_CACHE=str(cache))
    first = subprocess.run([str(BUILD), TAG], capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    again = subprocess.run([str(BUILD), TAG], capture_output=True, text=True, env=env, timeout=300)
    ref = "%s:%s" % (REPO, TAG)
    try:
        yield {"ref": ref, "cache": cache, "first": first.stdout, "again": again.stdout + again.stderr, "rc": again.returncode}
    finally:
        docker("image", "rm", "-f", ref, check=False)


@pytest.fixture()
def surface(tmp_path):
    """Host files the compose file mounts: driver lib64/ with the SoC, the ModelScope cache."""
    lib64 = tmp_path / "driver" / "lib64"
    lib64.mkdir(parents=True)
    (lib64 / "ascendfleet_sim_soc").write_text("Ascend910B2\n")
    model = tmp_path / "models" / "Qwen" / "Qwen3___5-27B"
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps({"text_config": {"max_position_embeddings": 262144},
                                                   "vision_config": {"depth": 27}}))
    (model / "model-00001-of-00001.safetensors").write_bytes(b"\0" * 16)
    return tmp_path


@pytest.fixture()
def containers():
    names = []
    yield names
    for name in names:
        docker("rm", "-f", name, check=False)


def run_args(name, surface, ref, devices=(4, 5), detach=False):
    args = ["run"] + (["-d"] if detach else []) + ["--name", name, "--shm-size", "1g", "-p", "127.0.0.1::8000",
            "-e", "VLLM_USE_MODELSCOPE=true", "-e", "ASCENDFLEET_SIM_STARTUP_SECONDS=0.5",
            "-v", "%s:/root/.cache/modelscope/hub/models:ro" % (surface / "models"),
            "-v", "%s/:/usr/local/Ascend/driver/lib64/:ro" % (surface / "driver" / "lib64")]
    # /dev/null stands in for the char devices, mapped at the paths the compose file uses.
    for dev in ["davinci%d" % n for n in devices] + ["davinci_manager", "devmm_svm", "hisi_hdc"]:
        args += ["--device", "/dev/null:/dev/%s" % dev]
    return args + [ref, "vllm", "serve", "Qwen/Qwen3.5-27B", "--host", "0.0.0.0", "--port", "8000",
                   "--tensor-parallel-size", "2", "--served-model-name", "Qwen", "--max-model-len", "133000",
                   "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}']


def test_build_lists_the_agreed_tags():
    """The tags the roles and molecule scenarios rely on (BRIEF.md, issue 7), in vllm-ascend's naming."""
    out = subprocess.run([str(BUILD), "--list"], capture_output=True, text=True, check=True).stdout.split()
    versions = ["v0.17.0rc1", "v0.18.0rc1"]
    flavours = ["", "-openeuler", "-a3", "-a3-openeuler", "-310p", "-310p-openeuler"]
    expected = ["quay.io/ascend/vllm-ascend:%s%s" % (v, f) for v in versions for f in flavours]
    expected += ["quay.io/ascend/vllm-ascend:v0.18.0rc1-broken-openeuler", "quay.io/ascend/vllm-ascend:v0.18.0rc1-broken",
                 "quay.io/ascend/vllm-ascend:v0.18.0rc1-crash"]
    # then vX and vX-openeuler of every other release the stand-in has lists for (cli_lists.json), oldest first
    others = ["v0.18.0", "v0.19.1rc1", "v0.20.2rc1", "v0.21.0rc1", "v0.22.1rc1", "v0.23.0", "v0.23.0rc1", "v0.24.0rc1",
              "v0.25.1rc1", "v0.26.0rc1"]
    expected += ["quay.io/ascend/vllm-ascend:%s%s" % (v, f) for v in others for f in ("", "-openeuler")]
    assert out == expected


def test_build_notes_a_release_without_lists():
    """A tag newer than the data (the collection warns about it) is built; the stand-in checks only what it models."""
    proc = subprocess.run([str(BUILD), "v0.30.0-openeuler"], capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, SIMVLLM_BASE_IMAGE="simvllm-pytest/no-such-base:latest"))
    assert proc.returncode == 1
    assert ("build.sh: note: tag 'v0.30.0-openeuler': no flag lists for release v0.30.0 (cli_lists.json); its stand-in "
            "checks only the flags it models.") in proc.stderr
    assert ("base image simvllm-pytest/no-such-base:latest is missing" in proc.stderr
            or "Docker is not reachable" in proc.stderr)  # it stops there: nothing is built by this test


@pytest.mark.parametrize("tag", ["latest", "v0.17.0rc1-a5", "v0.17.0rc1-openeuler-a3", "0.17.0rc1"])
def test_build_refuses_unknown_tag_shapes(tag):
    proc = subprocess.run([str(BUILD), tag], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "tag '%s' is not of the form vX[-broken|-crash][-a3|-310p][-openeuler]" % tag in proc.stderr


def test_build_labels_archive_and_reuse(image):
    labels = json.loads(docker("image", "inspect", "-f", "{{json .Config.Labels}}", image["ref"]).stdout)
    assert (labels["ascendfleet.sim.vllm_version"], labels["ascendfleet.sim.variant"], labels["ascendfleet.sim.os_flavour"]) == (
        "0.17.0rc1", "910b", "openeuler")
    config = json.loads(docker("image", "inspect", "-f", "{{json .Config}}", image["ref"]).stdout)
    assert config.get("Entrypoint") is None and config["Cmd"] == ["/bin/bash"]
    archive = image["cache"] / "images" / "simvllm-pytest_vllm-ascend_v0.17.0rc1-openeuler.tar"
    assert archive.stat().st_size > 1000000
    assert image["rc"] == 0
    assert "image   reused  %s" % image["ref"] in image["again"]
    assert "archive reused  %s" % archive in image["again"]


def test_container_serves_health_and_stops_on_sigterm(image, surface, containers):
    name = "simvllm-pytest-%s" % uuid.uuid4().hex[:8]
    containers.append(name)
    docker(*run_args(name, surface, image["ref"], detach=True))
    port = docker("port", name, "8000/tcp").stdout.strip().rsplit(":", 1)[1]
    status, deadline = None, time.time() + 20
    while time.time() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%s/health" % port, timeout=2) as resp:
                status = resp.status
                break
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    logs = docker("logs", name).stdout
    assert status == 200, logs + docker("logs", name).stderr
    assert "Application startup complete." in logs
    with urllib.request.urlopen("http://127.0.0.1:%s/v1/models" % port, timeout=2) as resp:
        assert [m["id"] for m in json.load(resp)["data"]] == ["Qwen"]
    began = time.time()
    docker("stop", "-t", "10", name)
    assert time.time() - began < 8
    assert docker("inspect", "-f", "{{.State.ExitCode}}", name).stdout.strip() == "0"


def test_container_refuses_wrong_chip_and_device_count(image, surface, containers):
    (surface / "driver" / "lib64" / "ascendfleet_sim_soc").write_text("Ascend910_9392\n")
    name = "simvllm-pytest-%s" % uuid.uuid4().hex[:8]
    containers.append(name)
    proc = docker(*run_args(name, surface, image["ref"]), check=False)
    assert proc.returncode == 1
    assert "AscendDeviceType.A3 does not match the installed version's device type: AscendDeviceType.A2" in proc.stderr
    (surface / "driver" / "lib64" / "ascendfleet_sim_soc").write_text("Ascend910B2\n")
    name = "simvllm-pytest-%s" % uuid.uuid4().hex[:8]
    containers.append(name)
    proc = docker(*run_args(name, surface, image["ref"], devices=(4,)), check=False)
    assert proc.returncode == 1
    assert "The number of visible NPUs (1) does not match the world size (2)." in proc.stderr
