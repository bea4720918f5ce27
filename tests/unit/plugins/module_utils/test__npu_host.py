"""Host facts parsers and probes, over real tool output (fixtures/npu_host/SOURCES.md).

Expected values are read off the fixture files by hand.
"""
import json
import os
import pathlib

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_host import (
    HostFactsError,
    disk_facts,
    existing_ancestor,
    image_probe_script,
    mount_point,
    parse_compose_version,
    parse_docker_version,
    parse_hccn_ip,
    parse_hccn_link,
    parse_toolkit_install_info,
    parse_version_cfg,
    path_facts,
    split_marked_files,
    toolkit_version_from_files,
)

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "npu_host"


def fixture(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


TOOLKIT_INFO = "ascend_toolkit_install.info-8.3.RC2-aarch64-vllm-ascend-v0.12.0rc1.txt"
VERSION_CFG = "version.cfg-8.0.T63-mindie-2.0.T3.1.txt"


def test_toolkit_install_info():
    info = parse_toolkit_install_info(fixture(TOOLKIT_INFO), "x/ascend_toolkit_install.info")
    assert info == {
        "version": "8.3.RC2",
        "package_name": "Ascend-cann-toolkit",
        "arch": "aarch64",
        "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux",
        "source": "x/ascend_toolkit_install.info",
    }


def test_toolkit_install_info_without_version_is_refused():
    text = "".join(line + "\n" for line in fixture(TOOLKIT_INFO).splitlines() if not line.startswith("version="))
    with pytest.raises(HostFactsError, match="has no version= line"):
        parse_toolkit_install_info(text)


def test_toolkit_install_info_that_is_not_key_value_is_refused():
    with pytest.raises(HostFactsError, match="expected key=value"):
        parse_toolkit_install_info("Ascend-cann-toolkit 8.3.RC2\n")


def test_version_cfg_takes_the_cann_release_after_the_colon():
    assert parse_version_cfg(fixture(VERSION_CFG))["version"] == "8.0.T63"


@pytest.mark.parametrize("text, expected", [
    # the component:CANN form of every real sample, and a value without component
    ("# version: 1.0\ntoolkit_running_version=[7.6.0.1.220:8.0.0]\n", "8.0.0"),
    ("runtime_running_version=[7.5.0.1.129:8.0.RC3]\n", "8.0.RC3"),
    ("toolkit_running_version=[8.3.RC2]\n", "8.3.RC2"),
])
def test_version_cfg_forms(text, expected):
    assert parse_version_cfg(text)["version"] == expected


@pytest.mark.parametrize("text, message", [
    ("# version: 1.0\naoe_running_version=[7.6.0.1.220:8.0.0]\n", "no toolkit_running_version"),
    ("toolkit_running_version=8.0.0\n", "cannot read toolkit_running_version=8.0.0"),
    ("toolkit_running_version=[7.6.0.1.220:]\n", "cannot read"),
])
def test_version_cfg_errors(text, message):
    with pytest.raises(HostFactsError, match=message):
        parse_version_cfg(text)


def test_install_info_wins_over_version_cfg():
    files = {
        "/t/version.cfg": fixture(VERSION_CFG),
        "/t/aarch64-linux/ascend_toolkit_install.info": fixture(TOOLKIT_INFO),
    }
    found = toolkit_version_from_files(files)
    assert (found["version"], found["source"]) == ("8.3.RC2", "/t/aarch64-linux/ascend_toolkit_install.info")
    assert toolkit_version_from_files({"/t/version.cfg": fixture(VERSION_CFG)})["version"] == "8.0.T63"
    assert toolkit_version_from_files({}) is None


def test_image_probe_round_trip(tmp_path):
    """The probe script, run by a real /bin/sh over a toolkit tree, prints what split_marked_files reads back."""
    import subprocess

    root = tmp_path / "ascend-toolkit" / "latest"
    (root / "aarch64-linux").mkdir(parents=True)
    (root / "aarch64-linux" / "ascend_toolkit_install.info").write_text(fixture(TOOLKIT_INFO))
    (root / "version.cfg").write_text(fixture(VERSION_CFG))
    script = image_probe_script((str(root), str(tmp_path / "cann")))
    out = subprocess.run(["/bin/sh", "-c", script], check=True, capture_output=True, text=True).stdout
    files = split_marked_files(out)
    assert sorted(files) == [str(root / "aarch64-linux" / "ascend_toolkit_install.info"), str(root / "version.cfg")]
    assert files[str(root / "version.cfg")].rstrip("\n") == fixture(VERSION_CFG).rstrip("\n")
    assert toolkit_version_from_files(files)["version"] == "8.3.RC2"


def test_image_probe_prints_nothing_without_toolkit(tmp_path):
    import subprocess

    script = image_probe_script((str(tmp_path / "none"),))
    out = subprocess.run(["/bin/sh", "-c", script], check=True, capture_output=True, text=True).stdout
    assert split_marked_files(out) == {}


def test_docker_version_engine_reachable():
    assert parse_docker_version(fixture("docker-version-json-20.10.24-debian-bookworm.txt")) == {
        "client_version": "20.10.24+dfsg1",
        "server_version": "20.10.24+dfsg1",
        "api_version": "1.41",
    }


def test_docker_version_engine_unreachable():
    facts = parse_docker_version(fixture("docker-version-json-20.10.24-engine-unreachable.txt"))
    assert facts == {"client_version": "20.10.24+dfsg1", "server_version": None, "api_version": None}


def test_docker_version_engine_from_components_only():
    text = json.dumps({"Client": {"Version": "24.0.7"},
                       "Server": {"Components": [{"Name": "containerd", "Version": "1.6.20"},
                                                 {"Name": "Engine", "Version": "24.0.7"}]}})
    assert parse_docker_version(text)["server_version"] == "24.0.7"


@pytest.mark.parametrize("text", ["", "Cannot connect to the Docker daemon", "{not json"])
def test_docker_version_garbage(text):
    with pytest.raises(HostFactsError, match="docker version printed"):
        parse_docker_version(text)


def test_compose_version():
    assert parse_compose_version(fixture("docker-compose-version-v2.40.3.txt")) == "2.40.3"
    assert parse_compose_version("docker-compose version 1.29.2, build unknown\n") == "1.29.2"


def test_compose_plugin_missing_is_not_a_version():
    text = fixture("docker-compose-version-plugin-missing.stdout.txt") + fixture("docker-compose-version-plugin-missing.stderr.txt")
    with pytest.raises(HostFactsError, match="no version"):
        parse_compose_version(text)


def test_hccn_link():
    assert parse_hccn_link(fixture("hccn_tool-link-g-up-doc.txt")) == "UP"
    assert parse_hccn_link(fixture("hccn_tool-link-g-down-gpustack-test.txt")) == "DOWN"
    with pytest.raises(HostFactsError, match="no 'link status:' line"):
        parse_hccn_link("dcmi module initialize failed. ret is -8005\n")


def test_hccn_ip():
    assert parse_hccn_ip(fixture("hccn_tool-910B1-ip-g.txt")) == {"ipaddr": "29.1.112.213", "netmask": "255.255.0.0"}
    assert parse_hccn_ip(fixture("hccn_tool-910A-ip-g.txt")) == {"ipaddr": "192.161.200.10", "netmask": "255.255.255.0"}
    # a port without an address prints nothing at all (910A sample notes, -i 2)
    assert parse_hccn_ip("") == {"ipaddr": None, "netmask": None}
    with pytest.raises(HostFactsError, match="no 'ipaddr:' line"):
        parse_hccn_ip("device id 9 is invalid\n")


def test_path_facts(tmp_path):
    (tmp_path / "f").write_text("x")
    os.symlink(str(tmp_path / "gone"), str(tmp_path / "dangling"))
    assert path_facts(str(tmp_path)) == {"path": str(tmp_path), "exists": True, "type": "directory"}
    assert path_facts(str(tmp_path / "f"))["type"] == "file"
    assert path_facts(str(tmp_path / "missing")) == {"path": str(tmp_path / "missing"), "exists": False, "type": None}
    assert path_facts(str(tmp_path / "dangling")) == {"path": str(tmp_path / "dangling"), "exists": False, "type": "link"}
    assert path_facts(str(tmp_path / "f" / "below"))["exists"] is False
    assert path_facts("/dev/null")["type"] == "char"


def test_disk_facts_of_a_cache_that_does_not_exist_yet(tmp_path):
    cache = tmp_path / "a" / "b" / "modelscope"
    facts = disk_facts(str(cache))
    assert facts["exists"] is False
    assert facts["probed_path"] == str(tmp_path)
    assert facts["mount_point"] == mount_point(str(tmp_path))
    vfs = os.statvfs(str(tmp_path))
    assert facts["total_bytes"] == vfs.f_blocks * vfs.f_frsize
    assert 0 < facts["free_bytes"] <= facts["total_bytes"]
    assert facts["writable"] is True


def test_disk_facts_of_a_file(tmp_path):
    (tmp_path / "cache").write_text("not a dir")
    facts = disk_facts(str(tmp_path / "cache"))
    assert (facts["exists"], facts["type"], facts["probed_path"]) == (True, "file", str(tmp_path / "cache"))


def test_mount_point_and_ancestor():
    assert mount_point("/") == "/"
    assert mount_point("/proc/self") == "/proc"
    assert existing_ancestor("/proc/no/such/dir") == "/proc"
