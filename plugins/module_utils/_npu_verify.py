# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""npu_verify's checks: is an Ascend host ready to serve vllm-ascend? Pure judgement, no I/O.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
controller in the filter ``ascendfleet.llm.npu_verify_judge``, Python >= 3.8).

The role gathers (a raw Python probe, ``npu_info``, ``npu_host_facts``), :func:`judge` turns
what was gathered into findings, the role writes the fleet report and fails the hosts that did
not pass. Each check is a function ``check_<name>(ctx) -> [Finding]``; a finding is
``{"check", "verdict" ("fail" or "note"), "message" (what is wrong and what is needed, naming
the host), "fix" (what to do, or None)}``. ``reason(finding)`` is the one-line text the report
and the failure message show: ``<message>; fix: <fix>``.
"""

from __future__ import annotations

import json
import re

from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import (
    VersionError,
    cann_driver_requirement,
    compare_ascend_versions,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._lists import unique

CHECKS = ("python", "npu_smi", "chips", "driver", "cann", "devices", "docker", "disk", "hccn")
_LEADING_VERSION = re.compile(r"^[0-9]+([.][0-9]+)*")
_PYTHON_VERSION = re.compile(r"^[0-9]+[.][0-9]+")


def truncate(text, length, end="...", leeway=5):
    """Jinja's ``truncate`` (word boundary, leeway 5), so messages read as they always did."""
    text = str(text)
    if len(text) <= length + leeway:
        return text
    return text[:length - len(end)].rsplit(" ", 1)[0] + end


def _numbers(version):
    """Leading numbers of a Docker/Compose/Python version (``20.10.24+dfsg1`` -> (20, 10, 24)), or None."""
    match = _LEADING_VERSION.match(str(version or ""))
    return tuple(int(n) for n in match.group(0).split(".")) if match else None


def _older(version, minimum):
    have, want = _numbers(version), _numbers(minimum)
    return have is not None and want is not None and have < want


def _one_line(text):
    """Line breaks (from a tool's output) and the blanks around them become one space."""
    return None if text is None else re.sub(r"\s*\n\s*", " ", text).strip()


def finding(check, fail, message, fix=None):
    return {"check": check, "verdict": "fail" if fail else "note", "message": _one_line(message), "fix": _one_line(fix)}


def reason(item):
    """The one-line text of a finding: ``<message>; fix: <fix>``."""
    return item["message"] if not item.get("fix") else "%s; fix: %s" % (item["message"], item["fix"])


def python_version(raw):
    """The target Python version the raw probe printed (last non-empty line), or None."""
    lines = [line for line in (raw or {}).get("stdout_lines") or [] if line]
    last = lines[-1].strip() if lines else ""
    return last if _PYTHON_VERSION.match(last) else None


class Context:
    """What the checks read: the gathered facts and the role's settings, with derived values."""

    def __init__(self, host, gathered, settings):
        self.host = host
        self.settings = settings
        self.raw = gathered.get("python_raw") or {}
        self.interpreter = gathered.get("interpreter") or "python3"
        self.python = python_version(self.raw)
        self.python_min = settings.get("python_min", "3.8")
        self.python_usable = (self.raw.get("rc", 1) == 0 and self.python is not None
                              and not _older(self.python, self.python_min))
        self.npu = gathered.get("npu") or {}
        self.facts = gathered.get("host") or {}
        self.npu_ok = "chips" in self.npu
        self.host_ok = "driver" in self.facts
        self.chips = self.npu.get("chips") or []
        self.family = self.npu.get("family")
        self.image = gathered.get("image")
        self.requirement = settings["requirement"]
        cache = self.facts.get("cache") or {}
        models = cache.get("models") or []
        self.models_to_fetch = [m["model"] for m in models if not m.get("complete")]
        sizes = settings.get("model_sizes_gb") or {}
        self.need_gb = (sum(float(sizes.get(m) or 0) for m in self.models_to_fetch)
                        + float(settings.get("cache_min_free_gb", 0)))
        self.free_gb = round(cache["free_bytes"] / 1e9, 1) if "free_bytes" in cache else None


def check_python(ctx):
    out = []
    if not ctx.python_usable:
        if ctx.python is not None:
            what = "target Python is %s (%s)" % (ctx.python, ctx.interpreter)
        else:
            said = " ".join(str(ctx.raw.get(k) or "") for k in ("stderr", "stdout", "msg")).strip()
            what = "no usable Python at %s (%s)" % (ctx.interpreter, truncate(said, 160))
        out.append(finding("python", True, "%s: %s; needs Python >= %s (ansible-core's floor for target hosts)"
                           % (ctx.host, what, ctx.python_min),
                           "install python3 %s or newer on the host and point ansible_python_interpreter at it"
                           % ctx.python_min))
    elif not ctx.host_ok:
        out.append(finding("python", True, "%s: ascendfleet.llm.npu_host_facts failed (%s); needs the module to run with %s"
                           % (ctx.host, truncate(ctx.facts.get("msg") or "no message", 200), ctx.interpreter),
                           "run it by hand with -vvv to see the error and report it"))
    return out


def check_npu_smi(ctx):
    supported = list(ctx.settings["supported_families"])
    if ctx.python_usable and not ctx.npu_ok:
        said = (ctx.npu.get("msg") or "no output").split(". Check that")[0]
        return [finding("npu_smi", True, "%s: npu-smi does not work: %s; needs `npu-smi info` to list the chips"
                        % (ctx.host, truncate(said, 240)),
                        "load the Ascend driver (reinstall Ascend-hdk-*-npu-driver or reboot), check `npu-smi info` "
                        "and `dmesg | grep -i davinci` by hand, then re-run")]
    if not ctx.npu_ok:
        return []
    if not ctx.chips:
        return [finding("npu_smi", True, "%s: npu-smi info lists no chips; needs at least one NPU" % ctx.host,
                        "check that the cards are seated and seen (`lspci | grep -i d80`) and that the driver matches them")]
    if ctx.family is None or ctx.family not in supported:
        names = ", ".join(unique(c.get("name") for c in ctx.chips))
        what = ("chip family %s (chips %s) has no vllm-ascend image" % (ctx.family, names) if ctx.family
                else "chip family not recognised from npu-smi info (chips %s)" % names)
        return [finding("npu_smi", True, "%s: %s; needs one of %s" % (ctx.host, what, ", ".join(supported)),
                        "serve from hosts with supported chips, or add the family to npu_verify_supported_families "
                        "and set npu_verify_image if you have an image for it")]
    return []


def check_chips(ctx):
    out = []
    fail_on = bool(ctx.settings.get("fail_on_unhealthy_chip"))
    bad = [c for c in ctx.chips if c.get("health") != "OK"]
    if bad:
        listed = ", ".join("%s (NPU %s chip %s) reports Health %s" % (c["device_path"], c["npu_id"], c["chip_id"], c["health"])
                           for c in bad)
        what = ("needs every chip healthy (npu_verify_fail_on_unhealthy_chip)" if fail_on
                else "excluded from assignment (unhealthy_device_ids %s)" % ",".join(str(c["device_id"]) for c in bad))
        out.append(finding("chips", fail_on, "%s: %s; %s" % (ctx.host, listed, what),
                           "read `npu-smi info -t health -i %s -c %s`, repair or reset the chip, then re-run"
                           % (bad[0]["npu_id"], bad[0]["chip_id"])))
    healthy = len(ctx.chips) - len(bad)
    minimum = int(ctx.settings.get("min_healthy_chips", 1))
    if ctx.npu_ok and ctx.chips and healthy < minimum:
        out.append(finding("chips", True, "%s: %d healthy chip(s) of %d; needs at least %d (npu_verify_min_healthy_chips)"
                           % (ctx.host, healthy, len(ctx.chips), minimum),
                           "repair the unhealthy chips or lower npu_verify_min_healthy_chips"))
    return out


def _driver_older(version, minimum):
    try:
        return compare_ascend_versions(str(version), str(minimum)) < 0
    except VersionError:
        return False


def check_driver(ctx):
    if not ctx.host_ok:
        return []
    out = []
    for part in ("driver", "firmware"):
        facts = ctx.facts[part]
        if facts.get("version") is None:
            out.append(finding("driver", True, "%s: %s; needs the %s version.info to check the %s against the image"
                               % (ctx.host, facts.get("error"), part, part),
                               "install the Ascend %s (Ascend-hdk-<chip>-npu-%s_<version>.run --full), which writes %s"
                               % (part, part, facts.get("path"))))
    info = ctx.facts.get("install_info") or {}
    if info.get("error") is not None:
        out.append(finding("driver", True, "%s: %s; needs the driver installer's record (the vllm-ascend container mounts it)"
                           % (ctx.host, info["error"]), "reinstall the Ascend driver, which writes %s" % info.get("path")))
    driver = ctx.facts["driver"].get("version")
    need = ctx.requirement
    if driver is not None and _driver_older(driver, need["driver_min"]):
        out.append(finding("driver", True, "%s: driver %s is older than vllm-ascend %s (CANN %s) supports; needs driver >= %s"
                           % (ctx.host, driver, ctx.settings["image_version"], "/".join(str(c) for c in need["cann"]),
                              need["driver_min"]),
                           "upgrade the Ascend driver and firmware to %s or newer (Ascend HDK), or choose a vllm-ascend "
                           "release that supports driver %s (ascendfleet_image_version)" % (need["driver_min"], driver)))
    return out


def check_cann(ctx):
    if not ctx.host_ok:
        return []
    image = ctx.facts.get("image") or {}
    host_cann = ctx.facts.get("host_cann") or {}
    checks = []
    if image.get("cann_version") is not None:
        checks.append({"where": "image %s" % image.get("name"), "version": image["cann_version"],
                       "fix": "use a vllm-ascend release whose CANN the driver supports (ascendfleet_image_version)"})
    if host_cann.get("version") is not None:
        checks.append({"where": "host toolkit %s" % host_cann.get("source"), "version": host_cann["version"],
                       "fix": "upgrade or remove the host CANN toolkit (vllm-ascend uses the CANN inside its image)"})
    matrix = ctx.settings["driver_matrix"]
    lines = list(dict.fromkeys(str(c) for row in matrix for c in row.get("cann", [])))  # once each, newest row first
    out = []
    for item in checks:
        line = ".".join(str(item["version"]).split(".")[:2])
        if line not in lines:
            out.append(finding("cann", True, "%s: CANN %s of the %s is not in npu_verify_driver_matrix (CANN lines %s); "
                               "needs a matrix row naming CANN %s" % (ctx.host, item["version"], item["where"], ", ".join(lines), line),
                               "add a row with its minimum driver to npu_verify_driver_matrix, or %s" % item["fix"]))
    driver = ctx.facts["driver"].get("version")
    for item in checks:
        line = ".".join(str(item["version"]).split(".")[:2])
        if line not in lines or driver is None:
            continue
        row = cann_driver_requirement(str(item["version"]), matrix)
        if _driver_older(driver, row["driver_min"]):
            out.append(finding("cann", True, "%s: CANN %s of the %s needs driver >= %s, the driver is %s"
                               % (ctx.host, item["version"], item["where"], row["driver_min"], driver),
                               "upgrade the Ascend driver to %s or newer, or %s" % (row["driver_min"], item["fix"])))
    if "image" in ctx.facts and image.get("cann_version") is None and (ctx.facts.get("docker") or {}).get("reachable"):
        what = ("image %s not on host yet; its CANN is checked once vllm_compose has loaded it" % image.get("name")
                if not image.get("present") else "CANN of image %s not read: %s" % (image.get("name"), image.get("error")))
        out.append(finding("cann", False, "%s: %s" % (ctx.host, what)))
    return out


def _node_problem(node):
    return "is missing" if not node.get("exists") else "is not a character device (%s)" % node.get("type")


def check_devices(ctx):
    out = []
    nodes = ctx.facts.get("devices") or []
    chip_paths = [c.get("device_path") for c in ctx.chips]
    for node in nodes:
        if node.get("path") not in chip_paths or (node.get("exists") and node.get("type") == "char"):
            continue
        chip = next(c for c in ctx.chips if c.get("device_path") == node["path"])
        out.append(finding("devices", True, "%s: %s %s though npu-smi lists its chip (NPU %s chip %s); needs a device node for every chip"
                           % (ctx.host, node["path"], _node_problem(node), chip["npu_id"], chip["chip_id"]),
                           "reload the Ascend driver or reboot so that it recreates %s (check `ls -l /dev/davinci*`)" % node["path"]))
    control = list(ctx.settings.get("control_devices") or [])
    names = [path.rsplit("/", 1)[-1] for path in control]
    for node in nodes:
        if node.get("name") not in names or (node.get("exists") and node.get("type") == "char"):
            continue
        out.append(finding("devices", True, "%s: %s %s; needs %s for every NPU container"
                           % (ctx.host, node["path"], _node_problem(node), ", ".join(control)),
                           "reload the Ascend driver or reboot so that it recreates %s" % node["path"]))
    for path in ctx.facts.get("paths") or []:
        if not path.get("exists"):
            out.append(finding("devices", True, "%s: %s is missing; needs it because the vllm-ascend container mounts it "
                               "(npu_verify_mount_paths)" % (ctx.host, path["path"]),
                               "install the Ascend driver with its tools (it provides /usr/local/dcmi, npu-smi, driver lib64/, "
                               "version.info, hccn_tool, /etc/ascend_install.info), or drop the path from npu_verify_mount_paths "
                               "(ascendfleet_host_mounts) if your compose file does not mount it"))
    return out


def check_docker(ctx):
    if not ctx.host_ok:
        return []
    docker = ctx.facts.get("docker") or {}
    engine_min = ctx.settings["docker_min_version"]
    compose_min = ctx.settings["compose_min_version"]
    out = []
    if not docker.get("reachable"):
        missing = docker.get("cli") is None
        out.append(finding("docker", True, "%s: %s; needs Docker Engine >= %s running"
                           % (ctx.host, "the docker CLI is not installed" if missing
                              else "Docker Engine does not answer (%s)" % docker.get("error"), engine_min),
                           "install Docker Engine and the compose plugin (docker-ce + docker-compose-plugin, or docker.io + "
                           "docker-compose)" if missing
                           else "start it (systemctl enable --now docker) and make sure the Ansible user may use /var/run/docker.sock"))
    elif _older(docker.get("server_version"), engine_min):
        out.append(finding("docker", True, "%s: Docker Engine %s is too old; needs Docker Engine >= %s"
                           % (ctx.host, docker.get("server_version"), engine_min), "upgrade Docker Engine"))
    compose = docker.get("compose_version")
    if docker.get("cli") is not None and (compose is None or _older(compose, compose_min)):
        what = ("Docker Compose v2 is missing (docker compose version: %s)" % docker.get("compose_error") if compose is None
                else "Docker Compose %s is too old" % compose)
        out.append(finding("docker", True, "%s: %s; needs Docker Compose >= %s as the docker CLI plugin (`docker compose`)"
                           % (ctx.host, what, compose_min),
                           "install the compose plugin (package docker-compose-plugin or docker-compose, or the static binary "
                           "as /usr/libexec/docker/cli-plugins/docker-compose)"))
    return out


def check_disk(ctx):
    if not ctx.host_ok:
        return []
    cache = ctx.facts.get("cache") or {}
    cache_dir = ctx.settings["cache_dir"]
    mount = ctx.settings.get("cache_mount") or ""
    out = []
    if cache.get("exists") and cache.get("type") != "directory":
        out.append(finding("disk", True, "%s: cache %s is a %s, not a directory; needs a directory for the model cache"
                           % (ctx.host, cache_dir, cache.get("type")),
                           "move it away or set ascendfleet_cache_dir to a directory"))
    if mount and cache.get("mount_point") != mount:
        out.append(finding("disk", True, "%s: cache %s is on %s, not on %s; needs the cache on the intended disk (npu_verify_cache_mount)"
                           % (ctx.host, cache_dir, cache.get("mount_point"), mount),
                           "mount the disk at %s (check /etc/fstab and `findmnt %s`), or correct npu_verify_cache_mount"
                           % (mount, mount)))
    if not cache.get("writable"):
        out.append(finding("disk", True, "%s: %s is not writable%s; needs a writable model cache"
                           % (ctx.host, cache.get("probed_path"),
                              "" if cache.get("exists") else " (%s does not exist yet)" % cache_dir),
                           "check the mount options (read-only?) and ownership of %s, or run with become" % cache.get("probed_path")))
    if ctx.free_gb is not None and ctx.free_gb < ctx.need_gb:
        out.append(finding("disk", True, "%s: cache disk %s has %s GB free; needs %s GB (models to fetch: %s, plus "
                           "npu_verify_cache_min_free_gb %s)"
                           % (ctx.host, cache.get("mount_point"), ctx.free_gb, round(ctx.need_gb, 1),
                              ", ".join(ctx.models_to_fetch) or "none", ctx.settings.get("cache_min_free_gb")),
                           "free space on %s or point ascendfleet_cache_dir at a bigger disk" % cache.get("mount_point")))
    return out


def check_hccn(ctx):
    if not ctx.host_ok or not ctx.settings.get("hccn_enabled"):
        return []
    ports = ctx.facts.get("hccn") or []
    ok = [p for p in ports if p.get("error") is None]
    bad = ([p for p in ok if p.get("link") != "UP"] + [p for p in ok if p.get("link") == "UP" and not p.get("ipaddr")]
           + [p for p in ports if p.get("error") is not None])
    if not bad:
        return []

    def state(port):
        if port.get("error") is not None:
            return port["error"]
        return "link %s%s" % (port.get("link"), "" if port.get("ipaddr") else ", no IP address")
    listed = "; ".join("/dev/davinci%s %s" % (p["device_id"], state(p)) for p in sorted(bad, key=lambda p: p["device_id"]))
    return [finding("hccn", True, "%s: RoCE network of %d chip(s) not ready (%s); needs link UP and an address on every chip "
                    "for multi-node serving" % (ctx.host, len(bad), listed),
                    "check cables and switch ports (`hccn_tool -i N -link -g`), set the addresses (`hccn_tool -i N -ip -s "
                    "address <ip> netmask <mask>`), or set npu_verify_hccn_enabled to false for single-node hosts")]


def judge(host, gathered, settings):
    """Findings and the host verdict from what the role gathered.

    ``gathered``: ``python_raw`` (the raw probe's result), ``interpreter``, ``npu`` (npu_info's
    result, with ``msg`` when it failed), ``host`` (npu_host_facts' result, likewise) and
    ``image`` (the reference checked, or None when no image is known for the chips).
    ``settings``: the role's inputs (``supported_families``, ``fail_on_unhealthy_chip``,
    ``min_healthy_chips``, ``image_version``, ``requirement`` (its driver-matrix row),
    ``driver_matrix``, ``control_devices``, ``docker_min_version``, ``compose_min_version``,
    ``cache_dir``, ``cache_mount``, ``cache_min_free_gb``, ``model_sizes_gb``, ``hccn_enabled``,
    ``python_min``).

    Returns ``{"findings": [...], "fact": {...}}``; ``fact`` is ``ascendfleet_npu``, the host
    verdict other roles read (family, chips and their ids, versions, image, cache, verdict,
    reasons, notes, failed_checks).
    """
    ctx = Context(host, gathered, settings)
    findings = []
    for name in CHECKS:
        findings += globals()["check_" + name](ctx)
    failing = [f for f in findings if f["verdict"] == "fail"]
    chips = ctx.chips
    first = chips[0].get("name") if chips else None
    soc = "" if ctx.family == "A3" else "Ascend%s" % (first or "")
    image = ctx.facts.get("image") or {}
    cache = ctx.facts.get("cache") or {}
    docker = ctx.facts.get("docker") or {}
    fact = {
        "family": ctx.family,
        "soc": soc if re.match(r"^Ascend[0-9]", soc) else None,
        "chip_name": first,
        "npu_smi_version": ctx.npu.get("npu_smi_version"),
        "chips": chips,
        "chip_count": len(chips),
        "healthy_device_ids": [c["device_id"] for c in chips if c.get("health") == "OK"],
        "unhealthy_device_ids": [c["device_id"] for c in chips if c.get("health") != "OK"],
        "idle_device_ids": [c["device_id"] for c in chips if c.get("idle")],
        "driver_version": (ctx.facts.get("driver") or {}).get("version"),
        "firmware_version": (ctx.facts.get("firmware") or {}).get("version"),
        "host_cann_version": (ctx.facts.get("host_cann") or {}).get("version"),
        "image": ctx.image,
        "image_present": image.get("present"),
        "image_cann_version": image.get("cann_version"),
        # What the image's CANN was read from (its ID, the file): the record image_record() reads back.
        "image_id": image.get("id"),
        "image_cann_source": image.get("source"),
        "driver_min": ctx.requirement["driver_min"],
        "docker_version": docker.get("server_version"),
        "compose_version": docker.get("compose_version"),
        "python_version": ctx.python,
        "cache": {"path": settings["cache_dir"], "exists": cache.get("exists"), "mount_point": cache.get("mount_point"),
                  "free_gb": ctx.free_gb, "models_to_fetch": ctx.models_to_fetch if ctx.host_ok else []},
        "verdict": "fail" if failing else "pass",
        "reasons": [reason(f) for f in failing],
        "notes": [reason(f) for f in findings if f["verdict"] != "fail"],
        "failed_checks": unique(f["check"] for f in failing),
    }
    return {"findings": findings, "fact": fact, "python_usable": ctx.python_usable}


def _whole_gb(free_gb):
    """Free space for the report in whole GB (rounded down): the report is rewritten only when what
    it says changes, and a live figure to 0.1 GB changed with every log line or download elsewhere
    on the disk, so a no-op re-run rewrote it (issue 30). The check itself uses the exact figure."""
    return None if free_gb is None else int(free_gb // 1)


def fleet_rows(hosts, verdicts):
    """The fleet table of the report: one row per host (failing hosts first, then by name).

    ``verdicts`` maps a host to its ``ascendfleet_npu`` (missing: the host left the run before
    its verdict). Returns ``{"hosts": [...], "summary": {"hosts", "pass", "fail"}}``.
    """
    rows = []
    for host in hosts:
        f = verdicts.get(host)
        if not f:
            rows.append({"host": host, "verdict": "fail", "family": None, "chips": None, "healthy": None,
                         "unhealthy_device_ids": None, "idle": None, "driver": None, "firmware": None,
                         "image_cann": None, "host_cann": None, "docker": None, "compose": None, "cache_free_gb": None,
                         "reasons": ["%s: no verdict (host unreachable or failed before verification finished)" % host],
                         "notes": []})
            continue
        rows.append({"host": host, "verdict": f["verdict"], "family": f["family"], "chips": f["chip_count"],
                     "healthy": len(f["healthy_device_ids"]), "unhealthy_device_ids": f["unhealthy_device_ids"],
                     "idle": len(f["idle_device_ids"]), "driver": f["driver_version"], "firmware": f["firmware_version"],
                     "image_cann": f["image_cann_version"], "host_cann": f["host_cann_version"],
                     "image": f.get("image"), "image_id": f.get("image_id"), "image_cann_source": f.get("image_cann_source"),
                     "docker": f["docker_version"], "compose": f["compose_version"],
                     "cache_free_gb": _whole_gb((f.get("cache") or {}).get("free_gb")),
                     "reasons": f["reasons"], "notes": f["notes"]})
    rows.sort(key=lambda r: ("0 " if r["verdict"] == "fail" else "1 ") + r["host"])
    passing = len([r for r in rows if r["verdict"] == "pass"])
    return {"hosts": rows, "summary": {"hosts": len(rows), "pass": passing, "fail": len(rows) - passing}}


def _show(value):
    """A value as the play output shows it (Jinja's ``~``: None is ``None``)."""
    return "None" if value is None else str(value)


def fleet_lines(fleet, report_path):
    """The fleet table as the play shows it: a headline, one line per host, its reasons and notes."""
    lines = ["npu_verify: %d of %d host(s) pass; report: %s/npu_verify.md"
             % (fleet["summary"]["pass"], fleet["summary"]["hosts"], report_path)]
    for r in fleet["hosts"]:
        lines.append("%s  %s  family=%s chips=%s healthy=%s idle=%s driver=%s docker=%s compose=%s"
                     % (r["verdict"].upper(), r["host"], _show(r["family"]), _show(r["chips"]), _show(r["healthy"]),
                        _show(r["idle"]), _show(r["driver"]), _show(r["docker"]), _show(r["compose"])))
        lines += ["    FAIL " + m for m in r["reasons"]]
        lines += ["    note " + m for m in r["notes"]]
    return lines


def image_records(report_text):
    """What the last fleet report says the CANN of each host's image was, by image ID:
    ``{host: {"id", "cann_version", "source"}}``, for the rows that hold all three.

    ``report_text`` is npu_verify.json as fleet_rows() wrote it (empty when there is none). The
    record lets npu_host_facts (option ``image_record``) start no probe container for an image whose
    ID did not change (an ID is the digest of the image's content). Anything else - no report, a
    report of an older release, unreadable JSON - gives ``{}``: every image is probed as before.
    Parsed once per run for every host (the role's gather.yml), not once per host.
    """
    try:
        report = json.loads(report_text) if report_text else {}
    except ValueError:
        return {}
    rows = report.get("hosts") if isinstance(report, dict) else None
    out = {}
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and isinstance(row.get("host"), str) and row["host"] not in out:
            image_id, cann, source = row.get("image_id"), row.get("image_cann"), row.get("image_cann_source")
            out[row["host"]] = ({"id": image_id, "cann_version": cann, "source": source}
                                if all(isinstance(v, str) and v for v in (image_id, cann, source)) else {})
    return dict((host, record) for host, record in out.items() if record)


def image_record(report_text, host):
    """What the last fleet report says the CANN of ``host``'s image was, by image ID, or ``{}``
    (:func:`image_records` for one host)."""
    return image_records(report_text).get(host, {})
