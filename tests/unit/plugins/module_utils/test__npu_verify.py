"""npu_verify's checks (plugins/module_utils/_npu_verify.py), one test group per check.

The facts are built the way the role gathers them, from real captured output: the fixtures under
fixtures/npu_smi/ and fixtures/npu_host/ are verbatim copies of ../shared/npu-smi-samples (their
SOURCES.md says where each was captured), parsed with the collection's own parsers. The expected
findings are written by hand from those captures and the supported releases
(v0.17.0rc1 -> CANN 8.5/9.0 -> driver >= 25.0; v0.11.0 -> CANN 8.2 -> driver >= 24.1.rc2).
"""
import copy
import json
import pathlib

import pytest

from ansible_collections.ascendfleet.llm.plugins.filter.npu_verify import npu_verify_fleet, npu_verify_judge, npu_verify_python
from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_verify as nv
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import fleet_fact
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import driver_requirement
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_host import (
    parse_compose_version,
    parse_docker_version,
    parse_hccn_ip,
    parse_hccn_link,
    toolkit_version_from_files,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    detect_family,
    parse_info,
    parse_install_info,
    parse_version_info,
)

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
SEED = "910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt"
A3 = "A3-910_93-24.1.rc3.7-16chips-idle-no-processes.txt"
WARNING_910A = "910A-24.1.RC2-8cards-warning-health-hlt-processes-doc.txt"
IMAGE = "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"
H = "npu-a01"


def text(name, kind="npu_smi"):
    return (FIXTURES / kind / name).read_text()


def npu(name=SEED):
    """npu_info's result for a captured `npu-smi info`."""
    info = parse_info(text(name))
    return {"chips": [c.to_dict() for c in info.chips], "family": detect_family(info), "npu_smi_version": info.version}


def version_file(name, path):
    parsed = parse_version_info(text(name), path)
    return {"path": path, "exists": True, "version": parsed["version"], "package_version": parsed["package_version"],
            "values": parsed["values"], "error": None}


def host_facts(chips=None):
    """npu_host_facts' result for a healthy 910B host: captured driver/firmware/install files, Docker
    20.10.24 with Compose 2.40.3, every device node and mounted path present, a roomy cache."""
    chips = npu()["chips"] if chips is None else chips
    docker = parse_docker_version(text("docker-version-json-20.10.24-debian-bookworm.txt", "npu_host"))
    docker.update(cli="/usr/bin/docker", reachable=True, error=None, compose_error=None,
                  compose_version=parse_compose_version(text("docker-compose-version-v2.40.3.txt", "npu_host")))
    return {
        "driver": version_file("driver-version.info-25.0.rc1.1-910B.txt", "/usr/local/Ascend/driver/version.info"),
        "firmware": version_file("firmware-version.info-7.7.0.1.231-910B.txt", "/usr/local/Ascend/firmware/version.info"),
        "install_info": {"path": "/etc/ascend_install.info", "exists": True, "error": None,
                         "values": parse_install_info(text("etc-ascend_install.info-driver-firmware-full-HwHiAiUser.txt"))},
        "host_cann": {"found": False, "version": None, "arch": None, "source": None, "error": None},
        "devices": ([{"path": c["device_path"], "name": c["device_path"][5:], "exists": True, "type": "char"} for c in chips]
                    + [{"path": "/dev/" + n, "name": n, "exists": True, "type": "char"}
                       for n in ("davinci_manager", "devmm_svm", "hisi_hdc")]),
        "paths": [{"path": p, "exists": True, "type": "file"} for p in fleet_fact("host_mounts")],
        "docker": docker,
        "image": {"name": IMAGE, "present": False, "id": None, "cann_version": None, "source": None,
                  "error": "Error: No such image: " + IMAGE},
        "cache": {"path": "/mnt/disk2/modelscope", "exists": True, "type": "directory", "probed_path": "/mnt/disk2/modelscope",
                  "mount_point": "/mnt/disk2", "free_bytes": 1099511627776, "total_bytes": 3298534883328, "writable": True,
                  "models": [{"model": "Qwen/Qwen3.5-27B", "revision": "master", "complete": False,
                              "reasons": ["no completion marker"], "marker": "/x"}]},
    }


def gathered(**kw):
    out = {"python_raw": {"rc": 0, "stdout": "3.11.2\r\n", "stdout_lines": ["3.11.2"], "stderr": ""},
           "interpreter": "/usr/bin/python3", "npu": npu(), "host": host_facts(), "image": IMAGE}
    out.update(kw)
    return out


def settings(**kw):
    """The role defaults, as vars/main.yml hands them to the judge."""
    matrix = fleet_fact("releases")
    out = {"supported_families": fleet_fact("families"), "fail_on_unhealthy_chip": False, "min_healthy_chips": 1,
           "image_version": "v0.17.0rc1", "requirement": driver_requirement("v0.17.0rc1", matrix), "driver_matrix": matrix,
           "control_devices": fleet_fact("control_devices"), "docker_min_version": "20.10", "compose_min_version": "2.0",
           "cache_dir": "/mnt/disk2/modelscope", "cache_mount": "", "cache_min_free_gb": 10,
           "model_sizes_gb": {"Qwen/Qwen3.5-27B": 54}, "hccn_enabled": False, "python_min": "3.8"}
    out.update(kw)
    return out


def judged(g=None, s=None):
    return nv.judge(H, g or gathered(), s or settings())


def reasons(g=None, s=None, check=None):
    return [nv.reason(f) for f in judged(g, s)["findings"] if check is None or f["check"] == check]


# -- a healthy host -------------------------------------------------------------------------------
def test_the_seed_host_passes_with_one_note():
    result = judged()
    fact = result["fact"]
    assert fact["verdict"] == "pass" and fact["reasons"] == [] and fact["failed_checks"] == []
    assert fact["notes"] == ["npu-a01: image %s not on host yet; its CANN is checked once vllm_compose has loaded it" % IMAGE]
    # from the capture: 8 x 910B2, NPUs 0-3 run VLLMWorker_TP, 4-7 at 3390 of 65536 MB HBM
    assert (fact["family"], fact["soc"], fact["chip_name"], fact["npu_smi_version"]) == ("910B", "Ascend910B2", "910B2", "25.2.1")
    assert fact["chip_count"] == 8 and fact["healthy_device_ids"] == list(range(8)) and fact["unhealthy_device_ids"] == []
    assert fact["idle_device_ids"] == [4, 5, 6, 7]
    assert (fact["driver_version"], fact["firmware_version"], fact["driver_min"]) == ("25.0.rc1.1", "7.7.0.1.231", "25.0")
    assert (fact["docker_version"], fact["compose_version"], fact["python_version"]) == ("20.10.24+dfsg1", "2.40.3", "3.11.2")
    assert fact["image"] == IMAGE and fact["image_present"] is False and fact["image_cann_version"] is None
    assert fact["cache"] == {"path": "/mnt/disk2/modelscope", "exists": True, "mount_point": "/mnt/disk2", "free_gb": 1099.5,
                             "models_to_fetch": ["Qwen/Qwen3.5-27B"]}
    assert [f["verdict"] for f in result["findings"]] == ["note"]


def test_an_a3_host_has_no_soc_name():
    fact = judged(gathered(npu=npu(A3), host=host_facts(npu(A3)["chips"])))["fact"]
    assert fact["family"] == "A3" and fact["soc"] is None and fact["chip_count"] == 16 and fact["idle_device_ids"] == list(range(16))


# -- python ---------------------------------------------------------------------------------------
def test_python_too_old():
    raw = {"rc": 0, "stdout": "3.6.8\r\n", "stdout_lines": ["3.6.8"], "stderr": ""}
    assert reasons(gathered(python_raw=raw, npu={}, host={}), check="python") == [
        "npu-a01: target Python is 3.6.8 (/usr/bin/python3); needs Python >= 3.8 (ansible-core's floor for target hosts); "
        "fix: install python3 3.8 or newer on the host and point ansible_python_interpreter at it"]
    assert npu_verify_python(raw, "3.8") == {"version": "3.6.8", "usable": False}


def test_no_python_at_all():
    raw = {"rc": 127, "stdout": "", "stdout_lines": [], "stderr": "/bin/sh: 1: /usr/bin/python3: not found\n", "msg": "non-zero return code"}
    result = judged(gathered(python_raw=raw, npu={}, host={}))
    assert [nv.reason(f) for f in result["findings"]] == [
        "npu-a01: no usable Python at /usr/bin/python3 (/bin/sh: 1: /usr/bin/python3: not found non-zero return code); "
        "needs Python >= 3.8 (ansible-core's floor for target hosts); fix: install python3 3.8 or newer on the host and point "
        "ansible_python_interpreter at it"]
    assert result["fact"]["failed_checks"] == ["python"] and result["fact"]["python_version"] is None


def test_host_facts_module_failed():
    assert reasons(gathered(host={"failed": True, "msg": "MODULE FAILURE\nSee stdout/stderr for the exact error"}), check="python") == [
        "npu-a01: ascendfleet.llm.npu_host_facts failed (MODULE FAILURE See stdout/stderr for the exact error); needs the module "
        "to run with /usr/bin/python3; fix: run it by hand with -vvv to see the error and report it"]


# -- npu_smi --------------------------------------------------------------------------------------
def test_npu_smi_fails():
    # the message npu_info fails with when `npu-smi info` exits 1 (dcmi error text from the sim profile fault-dcmi)
    msg = ("/usr/local/bin/npu-smi info failed (rc 1): DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3) dcmi module initialize "
           "failed. ret is -8005. Check that the Ascend driver is loaded and that the user may access /dev/davinci*")
    assert reasons(gathered(npu={"failed": True, "msg": msg}), check="npu_smi") == [
        "npu-a01: npu-smi does not work: /usr/local/bin/npu-smi info failed (rc 1): DrvMngGetConsoleLogLevel failed. "
        "(g_conLogLevel=3) dcmi module initialize failed. ret is -8005; needs `npu-smi info` to list the chips; fix: load the "
        "Ascend driver (reinstall Ascend-hdk-*-npu-driver or reboot), check `npu-smi info` and `dmesg | grep -i davinci` by "
        "hand, then re-run"]


def test_npu_smi_lists_no_chips():
    assert reasons(gathered(npu={"chips": [], "family": None}), check="npu_smi") == [
        "npu-a01: npu-smi info lists no chips; needs at least one NPU; fix: check that the cards are seated and seen "
        "(`lspci | grep -i d80`) and that the driver matches them"]


def test_a_910a_host_has_no_image():
    chips = npu("910A-22.0.3.1-8cards-idle-doc.txt")
    assert reasons(gathered(npu=chips, host=host_facts(chips["chips"])), check="npu_smi") == [
        "npu-a01: chip family 910A (chips 910A) has no vllm-ascend image; needs one of 310P, 910B, A3, A5; fix: serve from hosts "
        "with supported chips, or add the family to npu_verify_supported_families and set npu_verify_image if you have an "
        "image for it"]


# -- chips ----------------------------------------------------------------------------------------
def test_warning_chips_are_excluded_or_fail_the_host():
    chips = npu(WARNING_910A)
    g = gathered(npu=chips, host=host_facts(chips["chips"]))
    found = [f for f in judged(g)["findings"] if f["check"] == "chips"]
    assert [(f["verdict"], nv.reason(f)) for f in found] == [
        ("note", "npu-a01: /dev/davinci3 (NPU 3 chip 0) reports Health Warning, /dev/davinci7 (NPU 7 chip 0) reports Health "
                 "Warning; excluded from assignment (unhealthy_device_ids 3,7); fix: read `npu-smi info -t health -i 3 -c 0`, "
                 "repair or reset the chip, then re-run")]
    strict = [f for f in judged(g, settings(fail_on_unhealthy_chip=True, min_healthy_chips=7))["findings"] if f["check"] == "chips"]
    assert [(f["verdict"], f["message"].split("; ", 1)[1]) for f in strict] == [
        ("fail", "needs every chip healthy (npu_verify_fail_on_unhealthy_chip)"),
        ("fail", "needs at least 7 (npu_verify_min_healthy_chips)")]
    assert strict[1]["message"] == "npu-a01: 6 healthy chip(s) of 8; needs at least 7 (npu_verify_min_healthy_chips)"
    assert judged(g)["fact"]["unhealthy_device_ids"] == [3, 7]


# -- driver ---------------------------------------------------------------------------------------
def test_driver_older_than_the_release_needs():
    facts = host_facts()
    facts["driver"] = version_file("driver-version.info-23.0.7-910A.txt", "/usr/local/Ascend/driver/version.info")
    assert reasons(gathered(host=facts), check="driver") == [
        "npu-a01: driver 23.0.7 is older than vllm-ascend v0.17.0rc1 (CANN 8.5/9.0) supports; needs driver >= 25.0; fix: "
        "upgrade the Ascend driver and firmware to 25.0 or newer (Ascend HDK), or choose a vllm-ascend release that supports "
        "driver 23.0.7 (ascendfleet_image_version)"]
    # the same driver is new enough for v0.11.0 (CANN 8.2, driver >= 24.1.rc2)? 23.0.7 is not
    old = settings(image_version="v0.11.0", requirement=driver_requirement("v0.11.0", fleet_fact("releases")))
    assert "needs driver >= 24.1.rc2" in reasons(gathered(host=facts), old, check="driver")[0]
    facts["driver"] = version_file("driver-version.info-24.1.rc2.2.txt", "/usr/local/Ascend/driver/version.info")
    assert reasons(gathered(host=facts), old, check="driver") == []


def test_unreadable_version_files_and_install_info():
    facts = host_facts()
    facts["firmware"] = {"path": "/usr/local/Ascend/firmware/version.info", "exists": False, "version": None,
                         "package_version": None, "values": {}, "error": "/usr/local/Ascend/firmware/version.info does not exist"}
    facts["install_info"] = {"path": "/etc/ascend_install.info", "exists": False, "values": {},
                             "error": "/etc/ascend_install.info does not exist"}
    assert reasons(gathered(host=facts), check="driver") == [
        "npu-a01: /usr/local/Ascend/firmware/version.info does not exist; needs the firmware version.info to check the "
        "firmware against the image; fix: install the Ascend firmware (Ascend-hdk-<chip>-npu-firmware_<version>.run --full), "
        "which writes /usr/local/Ascend/firmware/version.info",
        "npu-a01: /etc/ascend_install.info does not exist; needs the driver installer's record (the vllm-ascend container "
        "mounts it); fix: reinstall the Ascend driver, which writes /etc/ascend_install.info"]


# -- cann -----------------------------------------------------------------------------------------
def test_image_cann_needs_a_newer_driver():
    facts = host_facts()
    facts["driver"] = version_file("driver-version.info-23.0.7-910A.txt", "/usr/local/Ascend/driver/version.info")
    facts["image"] = {"name": IMAGE, "present": True, "id": "sha256:1", "cann_version": "8.5.0",
                      "source": "/usr/local/Ascend/cann/x86_64-linux/ascend_toolkit_install.info", "error": None}
    assert reasons(gathered(host=facts), check="cann") == [
        "npu-a01: CANN 8.5.0 of the image %s needs driver >= 25.0, the driver is 23.0.7; fix: upgrade the Ascend driver to "
        "25.0 or newer, or use a vllm-ascend release whose CANN the driver supports (ascendfleet_image_version)" % IMAGE]


def test_a_cann_line_the_matrix_does_not_know():
    # the CANN 8.3.RC2 toolkit inside vllm-ascend v0.12.0rc1 (captured), here as a host toolkit
    path = "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info"
    parsed = toolkit_version_from_files({path: text("ascend_toolkit_install.info-8.3.RC2-aarch64-vllm-ascend-v0.12.0rc1.txt", "npu_host")})
    facts = host_facts()
    facts["host_cann"] = {"found": True, "version": parsed["version"], "arch": parsed["arch"], "source": path, "error": None}
    assert reasons(gathered(host=facts), check="cann")[0] == (
        "npu-a01: CANN 8.3.RC2 of the host toolkit %s is not in npu_verify_driver_matrix (CANN lines 9.1, 9.0, 8.5, 8.2); "
        "needs a matrix row naming CANN 8.3; fix: add a row with its minimum driver to npu_verify_driver_matrix, or upgrade "
        "or remove the host CANN toolkit (vllm-ascend uses the CANN inside its image)" % path)


def test_an_unreadable_image_cann_is_a_note():
    facts = host_facts()
    facts["image"] = dict(facts["image"], present=True, error="no CANN toolkit version file in " + IMAGE)
    found = [f for f in judged(gathered(host=facts))["findings"] if f["check"] == "cann"]
    assert [(f["verdict"], f["fix"]) for f in found] == [("note", None)]
    assert found[0]["message"] == "npu-a01: CANN of image %s not read: no CANN toolkit version file in %s" % (IMAGE, IMAGE)
    facts["docker"]["reachable"] = False
    assert [f for f in judged(gathered(host=facts))["findings"] if f["check"] == "cann"] == []


# -- devices --------------------------------------------------------------------------------------
def test_missing_device_nodes_and_paths():
    facts = host_facts()
    facts["devices"][5] = {"path": "/dev/davinci5", "name": "davinci5", "exists": False, "type": None}
    facts["devices"][9] = {"path": "/dev/devmm_svm", "name": "devmm_svm", "exists": True, "type": "file"}
    facts["paths"][2] = {"path": "/usr/local/bin/npu-smi", "exists": False, "type": None}
    assert reasons(gathered(host=facts), check="devices") == [
        "npu-a01: /dev/davinci5 is missing though npu-smi lists its chip (NPU 5 chip 0); needs a device node for every chip; "
        "fix: reload the Ascend driver or reboot so that it recreates /dev/davinci5 (check `ls -l /dev/davinci*`)",
        "npu-a01: /dev/devmm_svm is not a character device (file); needs /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc "
        "for every NPU container; fix: reload the Ascend driver or reboot so that it recreates /dev/devmm_svm",
        "npu-a01: /usr/local/bin/npu-smi is missing; needs it because the vllm-ascend container mounts it "
        "(npu_verify_mount_paths); fix: install the Ascend driver with its tools (it provides /usr/local/dcmi, npu-smi, "
        "driver lib64/, version.info, hccn_tool, /etc/ascend_install.info), or drop the path from npu_verify_mount_paths "
        "(ascendfleet_host_mounts) if your compose file does not mount it"]


# -- docker ---------------------------------------------------------------------------------------
def test_engine_unreachable_and_compose_missing():
    facts = host_facts()
    engine = parse_docker_version(text("docker-version-json-20.10.24-engine-unreachable.txt", "npu_host"))
    stderr = text("docker-version-json-20.10.24-engine-unreachable.stderr.txt", "npu_host").strip()
    facts["docker"].update(engine, reachable=False, error=stderr, compose_version=None,
                           compose_error="docker: 'compose' is not a docker command. / See 'docker --help'")
    assert reasons(gathered(host=facts), check="docker") == [
        "npu-a01: Docker Engine does not answer (%s); needs Docker Engine >= 20.10 running; fix: start it (systemctl enable "
        "--now docker) and make sure the Ansible user may use /var/run/docker.sock" % stderr,
        "npu-a01: Docker Compose v2 is missing (docker compose version: docker: 'compose' is not a docker command. / See "
        "'docker --help'); needs Docker Compose >= 2.0 as the docker CLI plugin (`docker compose`); fix: install the compose "
        "plugin (package docker-compose-plugin or docker-compose, or the static binary as "
        "/usr/libexec/docker/cli-plugins/docker-compose)"]


def test_no_docker_cli_and_old_versions():
    facts = host_facts()
    facts["docker"] = {"cli": None, "client_version": None, "server_version": None, "reachable": False,
                       "error": "the docker CLI (docker) is not installed", "compose_version": None,
                       "compose_error": "the docker CLI (docker) is not installed"}
    assert reasons(gathered(host=facts), check="docker") == [
        "npu-a01: the docker CLI is not installed; needs Docker Engine >= 20.10 running; fix: install Docker Engine and the "
        "compose plugin (docker-ce + docker-compose-plugin, or docker.io + docker-compose)"]
    newer = settings(docker_min_version="24.0", compose_min_version="2.41")
    assert [f["message"] for f in judged(gathered(), newer)["findings"] if f["check"] == "docker"] == [
        "npu-a01: Docker Engine 20.10.24+dfsg1 is too old; needs Docker Engine >= 24.0",
        "npu-a01: Docker Compose 2.40.3 is too old; needs Docker Compose >= 2.41 as the docker CLI plugin (`docker compose`)"]


# -- disk -----------------------------------------------------------------------------------------
def test_cache_disk_findings():
    facts = host_facts()
    facts["cache"].update(type="file", mount_point="/", writable=False, free_bytes=40 * 10 ** 9)
    assert [f["message"] for f in judged(gathered(host=facts), settings(cache_mount="/mnt/disk2"))["findings"]
            if f["check"] == "disk"] == [
        "npu-a01: cache /mnt/disk2/modelscope is a file, not a directory; needs a directory for the model cache",
        "npu-a01: cache /mnt/disk2/modelscope is on /, not on /mnt/disk2; needs the cache on the intended disk (npu_verify_cache_mount)",
        "npu-a01: /mnt/disk2/modelscope is not writable; needs a writable model cache",
        "npu-a01: cache disk / has 40.0 GB free; needs 64.0 GB (models to fetch: Qwen/Qwen3.5-27B, plus "
        "npu_verify_cache_min_free_gb 10)"]


def test_a_complete_model_needs_no_room():
    facts = host_facts()
    facts["cache"].update(free_bytes=40 * 10 ** 9)
    facts["cache"]["models"][0].update(complete=True, reasons=[])
    assert reasons(gathered(host=facts), check="disk") == []
    facts["cache"].update(free_bytes=9 * 10 ** 9, exists=False, probed_path="/mnt/disk2", writable=False)
    assert [f["message"] for f in judged(gathered(host=facts))["findings"] if f["check"] == "disk"] == [
        "npu-a01: /mnt/disk2 is not writable (/mnt/disk2/modelscope does not exist yet); needs a writable model cache",
        "npu-a01: cache disk /mnt/disk2 has 9.0 GB free; needs 10.0 GB (models to fetch: none, plus npu_verify_cache_min_free_gb 10)"]


# -- hccn -----------------------------------------------------------------------------------------
def test_roce_links():
    up = parse_hccn_link(text("hccn_tool-link-g-up-doc.txt", "npu_host"))
    down = parse_hccn_link(text("hccn_tool-link-g-down-gpustack-test.txt", "npu_host"))
    address = parse_hccn_ip(text("hccn_tool-910B1-ip-g.txt", "npu_host"))
    facts = host_facts()
    facts["hccn"] = [dict({"device_id": 0, "link": up, "error": None}, **address),
                     dict({"device_id": 1, "link": down, "error": None}, **address),
                     {"device_id": 2, "link": up, "ipaddr": None, "netmask": None, "error": None},
                     {"device_id": 3, "link": None, "ipaddr": None, "netmask": None,
                      "error": "hccn_tool -i 3: exit 255"}]
    assert reasons(gathered(host=facts), check="hccn") == []  # off unless npu_verify_hccn_enabled
    assert [f["message"] for f in judged(gathered(host=facts), settings(hccn_enabled=True))["findings"] if f["check"] == "hccn"] == [
        "npu-a01: RoCE network of 3 chip(s) not ready (/dev/davinci1 link DOWN; /dev/davinci2 link UP, no IP address; "
        "/dev/davinci3 hccn_tool -i 3: exit 255); needs link UP and an address on every chip for multi-node serving"]


# -- verdict, filters and the fleet table ----------------------------------------------------------
def test_failing_checks_make_the_verdict():
    facts = host_facts()
    facts["driver"] = version_file("driver-version.info-23.0.7-910A.txt", "/usr/local/Ascend/driver/version.info")
    facts["devices"][5]["exists"] = False
    fact = npu_verify_judge(gathered(host=facts), H, settings())
    assert fact["verdict"] == "fail" and fact["failed_checks"] == ["driver", "devices"]
    assert len(fact["reasons"]) == 2 and [f["check"] for f in fact["findings"]] == ["driver", "cann", "devices"]


def test_judging_does_not_change_its_input():
    g = gathered()
    before = copy.deepcopy(g)
    judged(g)
    assert g == before


def test_fleet_table_puts_failing_hosts_first():
    good = judged()["fact"]
    bad = dict(good, verdict="fail", reasons=["b: broken"])
    fleet = npu_verify_fleet(["c", "a", "b", "gone"], {"a": good, "b": bad, "c": good}, "/srv/reports")
    assert [r["host"] for r in fleet["hosts"]] == ["b", "gone", "a", "c"]
    assert fleet["summary"] == {"hosts": 4, "pass": 2, "fail": 2}
    assert fleet["hosts"][1]["reasons"] == ["gone: no verdict (host unreachable or failed before verification finished)"]
    assert fleet["lines"][0] == "npu_verify: 2 of 4 host(s) pass; report: /srv/reports/npu_verify.md"
    assert fleet["lines"][1] == ("FAIL  b  family=910B chips=8 healthy=8 idle=4 driver=25.0.rc1.1 docker=20.10.24+dfsg1 "
                                 "compose=2.40.3")
    assert fleet["lines"][2] == "    FAIL b: broken"
    assert "FAIL  gone  family=None chips=None healthy=None idle=None driver=None docker=None compose=None" in fleet["lines"]


@pytest.mark.parametrize("text_in, length, expected", [
    ("short", 10, "short"),
    ("a" * 12, 10, "a" * 12),            # within the leeway of 5
    ("one two three four five six", 10, "one..."),
])
def test_truncate_reads_like_jinja(text_in, length, expected):
    assert nv.truncate(text_in, length) == expected


# -- the image record (the last report's CANN of each host's image, by image ID) -----------------
def test_the_report_records_the_image_cann_by_id_for_the_next_run():
    from ansible_collections.ascendfleet.llm.plugins.filter.npu_verify import npu_verify_image_record
    facts = host_facts()
    source = "/usr/local/Ascend/cann/x86_64-linux/ascend_toolkit_install.info"
    facts["image"] = {"name": IMAGE, "present": True, "id": "sha256:1", "cann_version": "8.5.0", "source": source,
                      "error": None, "recorded": False}
    read = judged(gathered(host=facts))["fact"]
    absent = judged()["fact"]  # the image not on the host yet: nothing to record
    fleet = npu_verify_fleet(["a", "b"], {"a": read, "b": absent}, "/srv/reports")
    # What report.yml writes (npu_verify.json) and the next run's gather.yml reads back.
    text_out = json.dumps({"hosts": fleet["hosts"], "summary": fleet["summary"]}, indent=4)
    assert npu_verify_image_record(text_out, "a") == {"id": "sha256:1", "cann_version": "8.5.0", "source": source}
    assert npu_verify_image_record(text_out, "b") == {}
    assert npu_verify_image_record(text_out, "new-host") == {}
    # Every host's at once (gather.yml parses the report once per run, not once per host).
    from ansible_collections.ascendfleet.llm.plugins.filter.npu_verify import npu_verify_image_records
    assert npu_verify_image_records(text_out) == {"a": {"id": "sha256:1", "cann_version": "8.5.0", "source": source}}


@pytest.mark.parametrize("report", [
    "",                                                     # no report yet
    "{not json",                                            # a broken file
    '["a"]',                                                # not the report's shape
    # A report of an older release (no image_id in the rows).
    '{"hosts": [{"host": "a", "image_cann": "8.5.0"}], "summary": {}}',
    '{"hosts": [{"host": "a", "image_id": "sha256:1", "image_cann": null, "image_cann_source": null}]}',
])
def test_no_usable_record_reads_the_image_again(report):
    from ansible_collections.ascendfleet.llm.plugins.filter.npu_verify import npu_verify_image_record, npu_verify_image_records
    assert npu_verify_image_record(report, "a") == {}
    assert npu_verify_image_record(None, "a") == {}
    assert npu_verify_image_records(report) == {}


def test_the_first_row_of_a_host_decides_its_record():
    from ansible.errors import AnsibleFilterError

    from ansible_collections.ascendfleet.llm.plugins.filter.npu_verify import npu_verify_image_records
    row = {"host": "a", "image_id": "sha256:1", "image_cann": "8.5.0", "image_cann_source": "/f"}
    report = '{"hosts": [%s, %s, %s]}' % ('{"host": "a", "image_id": null}', '{"host": "b"}', json.dumps(row))
    assert npu_verify_image_records(report) == {}
    with pytest.raises(AnsibleFilterError, match="npu_verify_image_records: expects the text of npu_verify.json"):
        npu_verify_image_records({"hosts": []})


def test_the_fleet_report_does_not_change_with_free_space_under_a_gb():
    """Issue 30: two no-op runs in a row rewrote reports/npu_verify.json and .md, only because the
    cache disk's free space moved (74.8 -> 75.9 GB on the bench, the disk shared with other writers).
    The report gives free space in whole GB (rounded down); the check uses the exact figure."""
    first, second = judged()["fact"], copy.deepcopy(judged()["fact"])
    first["cache"]["free_gb"], second["cache"]["free_gb"] = 1099.5, 1099.1
    rows = [nv.fleet_rows([H], {H: fact}) for fact in (first, second)]
    assert rows[0] == rows[1] and rows[0]["hosts"][0]["cache_free_gb"] == 1099
    second["cache"]["free_gb"] = 1098.9
    assert nv.fleet_rows([H], {H: second})["hosts"][0]["cache_free_gb"] == 1098
