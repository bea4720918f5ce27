"""npu_host_facts end to end with the docker CLI mocked by real captured output."""
import pathlib

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.ascendfleet.llm.plugins.modules import npu_host_facts

HOST = pathlib.Path(__file__).parents[1] / "module_utils" / "fixtures" / "npu_host"
NPU = pathlib.Path(__file__).parents[1] / "module_utils" / "fixtures" / "npu_smi"


def read(path):
    return path.read_text(encoding="utf-8")


class Exit(Exception):
    pass


def run(monkeypatch, args, commands, cli="/usr/bin/docker"):
    """Run main() with ``commands`` mapping argv tuples to (rc, out, err); return the result."""
    calls = []

    def run_command(self, argv, **kwargs):
        calls.append(tuple(argv))
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        return commands[tuple(argv)]

    def exit_json(self, **kwargs):
        raise Exit(dict(kwargs, failed=False))

    def fail_json(self, **kwargs):
        raise Exit(dict(kwargs, failed=True))

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: cli)
    with patch_module_args(args):
        with pytest.raises(Exit) as caught:
            npu_host_facts.main()
    return caught.value.args[0], calls


VERSION = ("/usr/bin/docker", "version", "--format", "{{json .}}")
COMPOSE = ("/usr/bin/docker", "compose", "version")


@pytest.fixture
def ascend(tmp_path):
    """Driver, firmware and install info files from the real samples."""
    (tmp_path / "driver").mkdir()
    (tmp_path / "firmware").mkdir()
    (tmp_path / "driver" / "version.info").write_text(read(NPU / "driver-version.info-25.0.rc1.1-910B.txt"))
    (tmp_path / "firmware" / "version.info").write_text(read(NPU / "firmware-version.info-7.7.0.1.231-910B.txt"))
    (tmp_path / "install.info").write_text(read(NPU / "etc-ascend_install.info-driver-firmware-full-HwHiAiUser.txt"))
    toolkit = tmp_path / "toolkit" / "aarch64-linux"
    toolkit.mkdir(parents=True)
    (toolkit / "ascend_toolkit_install.info").write_text(
        read(HOST / "ascend_toolkit_install.info-8.3.RC2-aarch64-vllm-ascend-v0.12.0rc1.txt"))
    return tmp_path


def base_args(root, **extra):
    args = {"driver_dir": str(root / "driver"), "firmware_dir": str(root / "firmware"),
            "install_info": str(root / "install.info"), "toolkit_dirs": [str(root / "none"), str(root / "toolkit")],
            "device_ids": [0], "control_devices": ["null"]}
    args.update(extra)
    return args


def test_healthy_host(monkeypatch, ascend):
    result, calls = run(monkeypatch, base_args(ascend, cache_dir=str(ascend / "cache"),
                                               models=[{"model": "Qwen/Qwen3.5-27B"}]), {
        VERSION: (0, read(HOST / "docker-version-json-20.10.24-debian-bookworm.txt"), ""),
        COMPOSE: (0, read(HOST / "docker-compose-version-v2.40.3.txt"), ""),
    })
    assert result["failed"] is False and result["changed"] is False
    assert result["driver"]["version"] == "25.0.rc1.1"
    assert result["firmware"]["version"] == "7.7.0.1.231"
    assert result["install_info"]["values"]["UserName"] == "HwHiAiUser"
    assert result["host_cann"] == {"found": True, "version": "8.3.RC2", "arch": "aarch64", "error": None,
                                   "source": str(ascend / "toolkit" / "aarch64-linux" / "ascend_toolkit_install.info")}
    assert [(d["path"], d["exists"]) for d in result["devices"]] == [("/dev/davinci0", False), ("/dev/null", True)]
    assert result["docker"]["reachable"] is True
    assert (result["docker"]["server_version"], result["docker"]["compose_version"]) == ("20.10.24+dfsg1", "2.40.3")
    assert result["cache"]["exists"] is False and result["cache"]["probed_path"] == str(ascend)
    assert result["cache"]["models"][0]["complete"] is False
    assert calls == [VERSION, COMPOSE]
    assert "image" not in result and "hccn" not in result


def test_engine_down_and_no_compose_are_findings_not_failures(monkeypatch, ascend):
    result, dummy = run(monkeypatch, base_args(ascend), {
        VERSION: (1, read(HOST / "docker-version-json-20.10.24-engine-unreachable.txt"),
                  read(HOST / "docker-version-json-20.10.24-engine-unreachable.stderr.txt")),
        COMPOSE: (1, read(HOST / "docker-compose-version-plugin-missing.stdout.txt"),
                  read(HOST / "docker-compose-version-plugin-missing.stderr.txt")),
    })
    assert result["failed"] is False
    assert result["docker"]["reachable"] is False
    assert result["docker"]["error"] == "Cannot connect to the Docker daemon at unix:///run/nonexistent.sock. Is the docker daemon running?"
    assert result["docker"]["compose_version"] is None
    assert result["docker"]["compose_error"] == "docker: 'compose' is not a docker command. / See 'docker --help'"


def test_no_docker_cli(monkeypatch, ascend):
    result, calls = run(monkeypatch, base_args(ascend, image="quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"), {}, cli=None)
    assert result["failed"] is False and calls == []
    assert result["docker"]["cli"] is None
    assert result["docker"]["error"] == "the docker CLI (docker) is not installed"
    assert result["image"]["present"] is False


def test_image_not_on_host(monkeypatch, ascend):
    image = "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"
    inspect = ("/usr/bin/docker", "image", "inspect", "--format", "{{.Id}}", image)
    result, calls = run(monkeypatch, base_args(ascend, image=image), {
        VERSION: (0, read(HOST / "docker-version-json-20.10.24-debian-bookworm.txt"), ""),
        COMPOSE: (0, read(HOST / "docker-compose-version-v2.40.3.txt"), ""),
        inspect: (1, "", "Error: No such image: %s\n" % image),
    })
    assert result["image"] == {"name": image, "present": False, "id": None, "cann_version": None, "source": None,
                               "error": "Error: No such image: %s" % image, "recorded": False}
    assert calls[-1] == inspect  # nothing is run from an absent image, nothing is pulled


def test_image_cann_is_read_without_starting_the_server(monkeypatch, ascend):
    image = "quay.io/ascend/vllm-ascend:v0.12.0rc1"
    inspect = ("/usr/bin/docker", "image", "inspect", "--format", "{{.Id}}", image)
    path = "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info"
    probe_out = "==> ascendfleet-file: %s\n%s\n" % (
        path, read(HOST / "ascend_toolkit_install.info-8.3.RC2-aarch64-vllm-ascend-v0.12.0rc1.txt"))
    commands = {
        VERSION: (0, read(HOST / "docker-version-json-20.10.24-debian-bookworm.txt"), ""),
        COMPOSE: (0, read(HOST / "docker-compose-version-v2.40.3.txt"), ""),
        inspect: (0, "sha256:abc\n", ""),
    }

    def probe_key():
        from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_host import image_probe_script
        return ("/usr/bin/docker", "run", "--rm", "--pull", "never", "--network", "none", "--entrypoint", "/bin/sh",
                image, "-c", image_probe_script())

    commands[probe_key()] = (0, probe_out, "")
    result, calls = run(monkeypatch, base_args(ascend, image=image), commands)
    assert result["image"] == {"name": image, "present": True, "id": "sha256:abc", "cann_version": "8.3.RC2",
                               "source": path, "error": None, "recorded": False}
    assert probe_key() in calls
    # A record of another image ID: the image is read again.
    result, calls = run(monkeypatch, base_args(ascend, image=image, image_record={
        "id": "sha256:old", "cann_version": "8.2.RC1", "source": path}), commands)
    assert result["image"]["cann_version"] == "8.3.RC2" and result["image"]["recorded"] is False
    assert probe_key() in calls
    # The record of this image ID (what the first read found): no container is started.
    record = {"id": "sha256:abc", "cann_version": "8.3.RC2", "source": path}
    result, calls = run(monkeypatch, base_args(ascend, image=image, image_record=record), commands)
    assert result["image"] == {"name": image, "present": True, "id": "sha256:abc", "cann_version": "8.3.RC2",
                               "source": path, "error": None, "recorded": True}
    assert calls[-1] == inspect and probe_key() not in calls


@pytest.mark.parametrize("args, message", [
    ({"control_devices": ["/dev/davinci_manager"]}, "control_devices takes names under /dev"),
    ({"device_ids": [-1]}, "device ids are the N of /dev/davinciN"),
    ({"models": [{"model": "Qwen3"}], "cache_dir": "/tmp"}, "models[].model must be Owner/Name, not 'Qwen3'"),
    # Issue 28: one model-id rule (_facts.model_id_parts) for every check.
    ({"models": [{"model": "Qwen/Qwen3\n"}], "cache_dir": "/tmp"},
     "models[].model must be Owner/Name, not 'Qwen/Qwen3\\n': give 'Owner/Name' as on modelscope.cn"),
    ({"models": [{"model": "Qwen/Qwen 3"}], "cache_dir": "/tmp"}, "models[].model must be Owner/Name, not 'Qwen/Qwen 3'"),
    ({"models": [{"model": "a/."}], "cache_dir": "/tmp"}, "models[].model must be Owner/Name, not 'a/.'"),
    ({"models": [{"model": "a//b"}], "cache_dir": "/tmp"}, "models[].model must be Owner/Name, not 'a//b'"),
    ({"models": [{"model": "Qwen/Qwen3"}]}, "models needs cache_dir"),
])
def test_bad_options(monkeypatch, ascend, args, message):
    result, dummy = run(monkeypatch, base_args(ascend, docker=False, **args), {})
    assert result["failed"] is True
    assert message in result["msg"]


def test_missing_files_are_reported(monkeypatch, tmp_path):
    result, dummy = run(monkeypatch, base_args(tmp_path, docker=False, hccn_device_ids=[0],
                                               hccn_tool=str(tmp_path / "hccn_tool")), {})
    assert result["driver"]["error"] == "%s does not exist" % (tmp_path / "driver" / "version.info")
    assert result["install_info"]["error"] == "%s does not exist" % (tmp_path / "install.info")
    assert result["host_cann"]["found"] is False
    assert result["hccn"] == [{"device_id": 0, "link": None, "ipaddr": None, "netmask": None,
                               "error": "%s is not an executable file" % (tmp_path / "hccn_tool")}]
    assert "docker" not in result


def test_hccn_per_chip(monkeypatch, tmp_path):
    tool = tmp_path / "hccn_tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    t = str(tool)
    result, calls = run(monkeypatch, base_args(tmp_path, docker=False, hccn_device_ids=[0, 3, 4], hccn_tool=t), {
        (t, "-i", "0", "-link", "-g"): (0, read(HOST / "hccn_tool-link-g-up-doc.txt"), ""),
        (t, "-i", "0", "-ip", "-g"): (0, read(HOST / "hccn_tool-910A-ip-g.txt"), ""),
        (t, "-i", "3", "-link", "-g"): (0, read(HOST / "hccn_tool-link-g-down-gpustack-test.txt"), ""),
        (t, "-i", "3", "-ip", "-g"): (0, read(HOST / "hccn_tool-910B1-ip-g.txt"), ""),
        (t, "-i", "4", "-link", "-g"): (1, "dcmi module initialize failed. ret is -8005\n", ""),
    })
    assert result["hccn"] == [
        {"device_id": 0, "link": "UP", "ipaddr": "192.161.200.10", "netmask": "255.255.255.0", "error": None},
        {"device_id": 3, "link": "DOWN", "ipaddr": "29.1.112.213", "netmask": "255.255.0.0", "error": None},
        {"device_id": 4, "link": None, "ipaddr": None, "netmask": None,
         "error": "hccn_tool -i 4: dcmi module initialize failed. ret is -8005"},
    ]


def fake_npu_smi(root):
    tool = root / "npu-smi"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    return str(tool)


def test_npu_smi_reads_the_chips_first_and_picks_their_image(monkeypatch, ascend):
    smi = fake_npu_smi(ascend)
    a3 = "quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler"
    inspect = ("/usr/bin/docker", "image", "inspect", "--format", "{{.Id}}", a3)
    result, calls = run(monkeypatch, base_args(ascend, npu_smi=True, npu_smi_executable=smi, hccn=True,
                                               hccn_tool=str(ascend / "no-hccn_tool"),
                                               images={"910B": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "A3": a3}), {
        (smi, "info"): (0, read(NPU / "A3-910_93-24.1.rc3.5-16chips-idle-no-processes.txt"), ""),
        VERSION: (0, read(HOST / "docker-version-json-20.10.24-debian-bookworm.txt"), ""),
        COMPOSE: (0, read(HOST / "docker-compose-version-v2.40.3.txt"), ""),
        inspect: (1, "", "Error: No such image: %s\n" % a3),
    })
    assert result["failed"] is False
    assert calls[0] == (smi, "info") and inspect in calls  # npu-smi first: its family names the image
    npu = result["npu"]
    assert (npu["family"], npu["npu_smi_version"], npu["has_process_table"]) == ("A3", "24.1.rc3.5", True)
    assert [(c["npu_id"], c["chip_id"], c["device_id"]) for c in npu["chips"][:4]] == [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
    # device_ids [0] from the caller, then every chip npu-smi lists, once each; then the control device.
    assert [d["path"] for d in result["devices"]] == ["/dev/davinci%d" % n for n in range(16)] + ["/dev/null"]
    assert [h["device_id"] for h in result["hccn"]] == list(range(16))
    assert result["image"]["name"] == a3 and result["image"]["present"] is False


def test_npu_smi_failure_is_data_with_npu_info_message(monkeypatch, ascend):
    smi = fake_npu_smi(ascend)
    result, calls = run(monkeypatch, base_args(ascend, docker=False, npu_smi=True, npu_smi_executable=smi,
                                               images={"910B": "quay.io/ascend/vllm-ascend:v0.17.0rc1"}), {
        (smi, "info"): (1, "", "dcmi model initialized failed, because the device is used. ret is -8020\n"),
    })
    assert result["failed"] is False and calls == [(smi, "info")]  # no family: no image read
    assert result["npu"] == {
        "msg": "%s info failed (rc 1): dcmi model initialized failed, because the device is used. ret is -8020. "
               "Check that the Ascend driver is loaded and that the user may access /dev/davinci* "
               "(root or the HwHiAiUser group)." % smi,
        "rc": 1, "stdout": "", "stderr": "dcmi model initialized failed, because the device is used. ret is -8020\n"}
    assert [d["path"] for d in result["devices"]] == ["/dev/davinci0", "/dev/null"]
    assert "image" not in result and "hccn" not in result


def test_npu_smi_missing_is_data(monkeypatch, ascend):
    missing = str(ascend / "bin" / "npu-smi")
    result, calls = run(monkeypatch, base_args(ascend, docker=False, npu_smi=True, npu_smi_executable=missing), {})
    assert result["failed"] is False and calls == []
    assert result["npu"] == {"msg": "npu-smi not found: %s is not an executable file; is the Ascend driver installed? "
                                    "Set executable to the full path of npu-smi." % missing}


def test_without_npu_smi_nothing_of_it_is_read(monkeypatch, ascend):
    result, calls = run(monkeypatch, base_args(ascend, docker=False, images={"910B": "x:y"}), {})
    assert calls == [] and "npu" not in result and "image" not in result


def test_an_a5_host_reads_the_a5_image(monkeypatch, ascend):
    # DERIVED 950 sample (fixtures/npu_smi/SOURCES.md): family A5 picks the -a5 image of the images map.
    smi = fake_npu_smi(ascend)
    a5 = "quay.io/ascend/vllm-ascend:v0.26.0rc1-a5-openeuler"
    inspect = ("/usr/bin/docker", "image", "inspect", "--format", "{{.Id}}", a5)
    result, calls = run(monkeypatch, base_args(ascend, npu_smi=True, npu_smi_executable=smi,
                                               images={"910B": "quay.io/ascend/vllm-ascend:v0.26.0rc1-openeuler", "A5": a5}), {
        (smi, "info"): (0, read(NPU / "DERIVED-A5-950PR-v2-layout-from-910B3-25.2.0-one-python-process.txt"), ""),
        VERSION: (0, read(HOST / "docker-version-json-20.10.24-debian-bookworm.txt"), ""),
        COMPOSE: (0, read(HOST / "docker-compose-version-v2.40.3.txt"), ""),
        inspect: (1, "", "Error: No such image: %s\n" % a5),
    })
    assert result["failed"] is False and result["npu"]["family"] == "A5"
    assert [d["path"] for d in result["devices"]] == ["/dev/davinci%d" % n for n in range(8)] + ["/dev/null"]
    assert result["image"]["name"] == a5 and result["image"]["present"] is False


def _revision(cache, model, commit, name, contents):
    """A revision directory as model_prefetch leaves one (_model_revisions: staging, finish, refs)."""
    import hashlib
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_revisions as mr
    staging = pathlib.Path(mr.staging_dir(str(cache), model, commit))
    staging.mkdir(parents=True)
    for path, data in contents.items():
        (staging / path).write_bytes(data)
    files = [{"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for p, d in sorted(contents.items())]
    mr.finish(str(staging), mr.revision_dir(str(cache), model, commit), model, commit, commit, [name], files, "http://hub")
    mr.record_ref(str(cache), model, name, commit, commit, "2026-12-05T00:00:00Z")


def test_the_cache_is_read_in_its_layout(monkeypatch, ascend):
    """npu_verify's disk count: with the revisions layout a model fetched into its revision
    directory is complete (today's reader would count it as still to fetch)."""
    commit = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
    cache = ascend / "cache"
    _revision(cache, "Qwen/Qwen3.5-27B", commit, "master", {"config.json": b"{}\n", "model.safetensors": b"\x01" * 64})
    commands = {VERSION: (0, read(HOST / "docker-version-json-20.10.24-debian-bookworm.txt"), ""),
                COMPOSE: (0, read(HOST / "docker-compose-version-v2.40.3.txt"), "")}
    models = [{"model": "Qwen/Qwen3.5-27B"}, {"model": "Qwen/Qwen3-8B", "revision": "v1.0"}]
    result, _calls = run(monkeypatch, base_args(ascend, cache_dir=str(cache), layout="revisions", models=models), commands)
    qwen, other = result["cache"]["models"]
    assert (qwen["complete"], qwen["key"], qwen["migrates"], qwen["reasons"]) == (True, commit, False, [])
    assert qwen["marker"] == str(cache / "revisions" / "Qwen" / "Qwen3.5-27B" / commit / ".ascendfleet" / "complete")
    assert (other["complete"], other["key"]) == (False, None)
    assert other["reasons"] == ["revision 'v1.0' was never fetched into the revision cache"]
    # The flat layout (the default) reads <cache>/models: nothing there.
    result, _calls = run(monkeypatch, base_args(ascend, cache_dir=str(cache), models=models), commands)
    assert [m["complete"] for m in result["cache"]["models"]] == [False, False]
    assert "key" not in result["cache"]["models"][0]
