#!/usr/bin/python3 -IS
"""Ascend NPU host simulator (test infrastructure, never shipped).

One self-contained Python 3.11 standard-library file. host-init copies it to
/usr/local/bin/npu-smi, /usr/local/Ascend/driver/tools/hccn_tool and
/usr/local/bin/npu-sim-fault; it dispatches on the name it is called by
(or on ``ASCENDFLEET_SIM_TOOL``). Output formats are written from the real
samples in /work/shared/npu-smi-samples/ (see README.md next to this file);
this simulator never imports the product's parser.

Environment:
  ASCENDFLEET_SIM_ROOT         prefix for every path (default "/"), for tests
  ASCENDFLEET_SIM_NPU_PROFILE  profile JSON (default <root>/etc/ascendfleet-sim/profile.json)
  ASCENDFLEET_SIM_DOCKER_FAKE  JSON file with a list of `docker inspect` objects
                               used instead of asking the Docker Engine
  ASCENDFLEET_SIM_DOCKER_SOCK  Docker Engine socket (default /var/run/docker.sock)
"""

import json
import os
import re
import sys

PROFILE_DEFAULT = "etc/ascendfleet-sim/profile.json"
# a copy in the driver's lib64/, which compose files mount into containers: npu-smi
# mounted into a container then shows the chips whose /dev/davinciN it can see
PROFILE_IN_LIB64 = "usr/local/Ascend/driver/lib64/ascendfleet_sim_profile.json"
STATE_DIR = "run/ascendfleet-sim"
FAULTS_FILE = "faults.json"
DEVICE_MAJOR = {"davinci": 236, "davinci_manager": 237, "devmm_svm": 238, "hisi_hdc": 239}
CONTROL_DEVICES = ("davinci_manager", "devmm_svm", "hisi_hdc")
COMPOSE_PLUGIN_DIRS = (
    "usr/libexec/docker/cli-plugins",
    "usr/lib/docker/cli-plugins",
    "usr/local/lib/docker/cli-plugins",
    "usr/local/libexec/docker/cli-plugins",
)
COMPOSE_HIDDEN_SUFFIX = ".ascendfleet-sim-hidden"

USAGE_LINE = "Usage: npu-smi info <watch|proc|-h|-m|-l|-t type> [Options...]"
HELP_TEXT = USAGE_LINE + """

Commands:
       watch          Show all device's status in scrolling format
       proc           Show device's matrix process status in scrolling format
       -h, --help     Show this help text and exit
       -m             Show all device's mapping information
       -l             Show all device's topology information
       -t type        Show information for type
                      type: board, flash, memory, usages, sensors, temp, power, volt, mac-addr,
                            common, health, product, ecc, ip, sys-time, i2c_check, work-mode,
                            ecc-enable, p2p-enable, ssh-enable, license, customized-info,
                            device-share, nve-level, aicpu-config, pcie-err, mcu-monitor,
                            err-count, boot-area, vnpu-mode, info-vnpu, vnpu-svm, cpu-num-cfg,
                            first-power-on-date, proc-mem, phyid-remap, vnpu-cfg-recover, key-manage,
                            template-info, pkcs-enable, p2p-mem-cfg, pwm-mode, pwm-duty-ratio,
                            boot-select, topo.

Options:
       -i %d          Card ID
       -c %d          Chip ID
       -p %d          Chip Physical ID
"""

# Table geometry per layout, measured on the real samples (see README.md).
LAYOUTS = {
    # 910B / A3 / 910A since 23.0: 98 columns
    "wide": {"cols": (27, 15, 52), "npu_w": 6, "proc_npu_w": 8, "version_col": 35,
             "power_w": 12, "temp_w": 18, "huge_pair": 5, "aicore_w": 12, "mem_w": 18,
             "mem_pair": 5, "hbm": True, "chip_sep": "plain"},
    # Atlas 800 model 9010 (910A) in Huawei's docs: 93 columns
    "narrow": {"cols": (22, 15, 52), "npu_w": 6, "proc_npu_w": 8, "version_col": 36,
               "power_w": 12, "temp_w": 18, "huge_pair": 5, "aicore_w": 12, "mem_w": 18,
               "mem_pair": 5, "hbm": True, "chip_sep": "plain"},
    # 310P (Atlas 300I Pro / Duo): 106 columns, no HBM column
    "310p": {"cols": (31, 17, 54), "npu_w": 8, "proc_npu_w": 8, "version_col": 51,
             "power_w": 13, "temp_w": 18, "huge_pair": 6, "aicore_w": 13, "mem_w": 40,
             "mem_pair": 5, "hbm": False, "chip_sep": "columns"},
    # Ascend 950 (A5): npu-smi built with NPU_SMI_V2 - four cells, one chip per NPU ID, "NPU Util(%)";
    # NOT measured on a capture (none was found): the printf formats of npu-smi's own source, Huawei's
    # CANN driver repository npucli/src/npu_info_print.c (commit e29d066, mirror verylucky01/driver),
    # print_total_info_header_950 and the NPU_SMI_V2 branches. Rendered by render_info_v2.
    "v2": {"cols": (8, 18, 15, 53), "hbm": True, "v2": True},
}
FAMILY_LAYOUT = {"910B": "wide", "A3": "wide", "910A": "wide", "310P": "310p", "A5": "v2"}
# A5: NPU_950_DEVICE_ID 0xd806 of npu-smi's source (npucli/inc/npu_common.h, see LAYOUTS "v2").
FAMILY_PCI_DEVICE_ID = {"910A": "0xD801", "910B": "0xD802", "A3": "0xD803", "310P": "0xD500", "A5": "0xD806"}

# version.info defaults per driver release line, taken from the real samples
# (driver-version.info-*): ascendhal_version, Innerversion, compatible_version,
# compatible_version_fw.
DRIVER_LINES = {
    "23.0": ("7.35.19", "V100R001C15SPC012B220",
             "[V100R001C29],[V100R001C30],[V100R001C13],[V100R001C15]", "[7.0.0,7.1.99]"),
    "24.1": ("7.35.23", "V100R001C18SPC001B233",
             "[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]",
             "[7.0.0,7.2.99]"),
    "25.0": ("7.35.23", "V100R001C21SPC002B220",
             "[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]",
             "[7.0.0,7.7.99]"),
    "25.3": ("7.35.23", "V100R001C23SPC002B212",
             "[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C22],[V100R001C23]",
             "[7.0.0,8.9.9]"),
}
FIRMWARE_LINES = {
    "7.1": "[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]",
    "7.7": "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]",
}


class SimError(Exception):
    """A mistake in a profile or in the simulator's own input."""


# --------------------------------------------------------------------- paths
def root():
    return os.environ.get("ASCENDFLEET_SIM_ROOT", "/") or "/"


def rpath(rel):
    return os.path.join(root(), rel.lstrip("/"))


def profile_path():
    explicit = os.environ.get("ASCENDFLEET_SIM_NPU_PROFILE")
    if explicit:
        return explicit
    host = rpath(PROFILE_DEFAULT)
    if not os.path.exists(host) and os.path.exists(rpath(PROFILE_IN_LIB64)):
        return rpath(PROFILE_IN_LIB64)
    return host


def in_container(path):
    """True when running from the lib64 copy, i.e. inside a container."""
    return path == rpath(PROFILE_IN_LIB64)


def visible_only(profile):
    """Keep the chips whose /dev/davinciN exists (npu-smi inside a container)."""
    npus = []
    for npu in profile["npus"]:
        chips = [c for c in npu["chips"] if os.path.exists(rpath("/dev/davinci%d" % c["device"]))]
        if chips:
            npus.append(dict(npu, chips=chips))
    profile["npus"] = npus
    return profile


def state_path():
    return rpath(os.path.join(STATE_DIR, FAULTS_FILE))


# ------------------------------------------------------------------ profiles
def load_profile(path):
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise SimError(
            "simulator profile %s not found: run /opt/ascendfleet-sim/npu/host-init "
            "(or set ASCENDFLEET_SIM_NPU_PROFILE to a profile JSON file)" % path) from None
    except json.JSONDecodeError as exc:
        raise SimError("simulator profile %s is not valid JSON: %s" % (path, exc)) from None
    return normalise_profile(data, path)


def _need(mapping, key, where):
    if key not in mapping:
        raise SimError("%s: missing required key %r (see tests/sim/npu/README.md)" % (where, key))
    return mapping[key]


def normalise_profile(data, where="profile"):
    """Validate a profile and expand chip_defaults into every chip."""
    if not isinstance(data, dict):
        raise SimError("%s: the profile must be a JSON object" % where)
    family = _need(data, "family", where)
    if family not in FAMILY_LAYOUT:
        raise SimError("%s: family %r is not one of %s" % (where, family, sorted(FAMILY_LAYOUT)))
    for key in ("model", "soc", "npu_smi_version", "driver", "firmware", "npus"):
        _need(data, key, where)
    layout = dict(LAYOUTS[data.get("layout", FAMILY_LAYOUT[family])])
    if "version_column" in data:
        layout["version_col"] = int(data["version_column"])
    data["_layout"] = layout
    defaults = data.get("chip_defaults", {})
    seen = {}
    for npu in data["npus"]:
        nwhere = "%s: npus[id=%s]" % (where, npu.get("id"))
        _need(npu, "id", nwhere)
        chips = _need(npu, "chips", nwhere)
        for index, chip in enumerate(chips):
            merged = dict(defaults)
            merged.update(chip)
            merged.setdefault("chip", index)
            cwhere = "%s chip %s" % (nwhere, merged["chip"])
            for key in ("device", "bus_id"):
                _need(merged, key, cwhere)
            if merged["device"] in seen:
                raise SimError("%s: device %s is already used by NPU %s" % (
                    cwhere, merged["device"], seen[merged["device"]]))
            seen[merged["device"]] = npu["id"]
            merged.setdefault("health", "OK")
            merged.setdefault("processes", [])
            chips[index] = merged
    data.setdefault("faults", {})
    return data


def all_chips(profile):
    for npu in profile["npus"]:
        for chip in npu["chips"]:
            yield npu, chip


def read_faults():
    try:
        with open(state_path(), encoding="utf-8") as fh:
            return json.load(fh)
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def write_faults(faults):
    path = state_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(faults, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def effective_faults(profile):
    """Profile faults, overridden by the runtime state of npu-sim-fault."""
    base = profile.get("faults", {})
    state = read_faults()
    health = {str(k): v for k, v in base.get("health", {}).items()}
    health.update({str(k): v for k, v in state.get("health", {}).items()})
    link = {str(d): "DOWN" for d in base.get("link_down", [])}
    link.update({str(k): v for k, v in state.get("link", {}).items()})
    return {
        "dcmi": bool(state.get("dcmi", base.get("dcmi", False))),
        "health": health,
        "link": link,
        "no_ip": {str(d) for d in base.get("no_ip", [])} ^ {str(d) for d in state.get("no_ip", [])},
        "ping_silent": ({str(d) for d in base.get("ping_silent", [])}
                        ^ {str(d) for d in state.get("ping_silent", [])}),
    }


# -------------------------------------------------------------- live docker
def _docker_inspect_all():
    fake = os.environ.get("ASCENDFLEET_SIM_DOCKER_FAKE")
    if fake:
        try:
            with open(fake, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError) as exc:
            raise SimError("ASCENDFLEET_SIM_DOCKER_FAKE=%s: cannot read a JSON list of "
                           "`docker inspect` objects: %s" % (fake, exc)) from None
        if not isinstance(data, list):
            raise SimError("ASCENDFLEET_SIM_DOCKER_FAKE=%s: expected a JSON list of "
                           "`docker inspect` objects" % fake)
        return data
    sock = os.environ.get("ASCENDFLEET_SIM_DOCKER_SOCK", "/var/run/docker.sock")
    if not os.path.exists(sock):
        return []
    import http.client  # only when a socket exists: keeps npu-smi fast
    import socket

    class UnixConnection(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(self.timeout)
            self.sock.connect(sock)

    conn = UnixConnection("localhost", timeout=1.5)  # one keep-alive connection

    def get(path):
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            return None
        return json.loads(body)

    try:
        listing = get("/containers/json") or []
        result = []
        for item in listing:
            detail = get("/containers/%s/json" % item["Id"])
            if detail:
                result.append(detail)
        return result
    except (OSError, ValueError, http.client.HTTPException):
        return []  # docker down or hung: show the static state only
    finally:
        conn.close()


DAVINCI_RE = re.compile(r"^/dev/davinci(\d+)$")


def _gpu_memory_utilization(args):
    for i, arg in enumerate(args):
        if arg.startswith("--gpu-memory-utilization="):
            value = arg.split("=", 1)[1]
        elif arg == "--gpu-memory-utilization" and i + 1 < len(args):
            value = args[i + 1]
        else:
            continue
        try:
            return min(max(float(value), 0.0), 1.0)
        except ValueError:
            return None
    return None


def _process_name(container):
    pid = container.get("State", {}).get("Pid")
    cmdline = [container.get("Path") or ""] + list(container.get("Args") or [])
    image = str(container.get("Config", {}).get("Image", ""))
    if "vllm" in " ".join(cmdline) or "vllm" in image:
        return "VLLMWorker_TP"
    try:
        with open("/proc/%s/comm" % pid, encoding="utf-8") as fh:
            return fh.read().strip()[:15]
    except (OSError, TypeError):
        return os.path.basename(cmdline[0])[:15] or "unknown"


def live_processes():
    """{device index: [(pid, name, utilization or None)]} of running containers."""
    result = {}
    for container in _docker_inspect_all():
        state = container.get("State", {})
        if not state.get("Running", False) or not state.get("Pid"):
            continue
        devices = (container.get("HostConfig") or {}).get("Devices") or []
        util = _gpu_memory_utilization(list(container.get("Args") or []))
        name = None
        for dev in devices:
            match = DAVINCI_RE.match(str(dev.get("PathOnHost", "")))
            if not match:
                continue
            if name is None:
                name = _process_name(container)
            result.setdefault(int(match.group(1)), []).append((state["Pid"], name, util))
    return result


# ---------------------------------------------------------------- rendering
def _fmt_power(value):
    if isinstance(value, (int, float)):
        return "%.1f" % value
    return str(value)


def _pair(used, total, width):
    return str(used).ljust(width) + "/ " + str(total)


class Table:
    def __init__(self, layout):
        self.lay = layout
        self.c1, self.c2, self.c3 = layout["cols"]
        self.width = self.c1 + self.c2 + self.c3 + 4

    def full(self, ch="-"):
        return "+" + ch * (self.width - 2) + "+"

    def cols(self, ch):
        return "+" + ch * self.c1 + "+" + ch * self.c2 + "+" + ch * self.c3 + "+"

    def row(self, a, b, c):
        return "|" + (" " + a).ljust(self.c1) + "|" + (" " + b).ljust(self.c2) + "|" + \
            (" " + c).ljust(self.c3) + "|"

    def wide_row(self, text):
        return ("| " + text).ljust(self.width - 1) + "|"


def chip_view(profile, npu, chip, faults, live):
    """The figures npu-smi shows for one chip, live processes included."""
    view = dict(chip)
    view["health"] = faults["health"].get(str(chip["device"]), chip["health"])
    procs = [dict(p) for p in chip.get("processes", [])]
    hbm = list(chip.get("hbm", [0, 0]))
    mem = list(chip.get("memory", [0, 0]))
    entries = live.get(chip["device"], [])
    if entries:
        # HBM (or the 310P's memory) rises to utilization x capacity; the
        # process is charged what it adds.
        target = hbm if profile["_layout"]["hbm"] else mem
        for pid, name, util in entries:
            util = util if util is not None else profile.get("live", {}).get(
                "memory_fraction", 0.9)
            wanted = int(target[1] * util)
            charge = max(wanted - target[0], 0)
            target[0] += charge
            procs.append({"pid": pid, "name": name, "memory": charge})
        view["aicore"] = max(int(chip.get("aicore", 0)),
                             int(profile.get("live", {}).get("aicore", 12)))
    view["hbm"], view["memory"], view["procs"] = hbm, mem, procs
    return view


def render_info_v2(profile, faults, live):
    """`npu-smi info` of an Ascend 950 (layout v2): the printf formats of npu-smi's source (see LAYOUTS)."""
    version = profile["npu_smi_version"]
    border = "+" + "=" * 8 + "+" + "=" * 18 + "+" + "=" * 15 + "+" + "=" * 53 + "+"
    proc_border = "+" + "=" * 27 + "+" + "=" * 15 + "+" + "=" * 53 + "+"
    out = ["+" + "-" * 97 + "+",
           "| %s %-40s Version: %-37s |" % ("npu-smi", version, version),
           "+" + "-" * 8 + "+" + "-" * 18 + "+" + "-" * 15 + "+" + "-" * 53 + "+",
           "| NPU ID | Name             | Health        | Power(W)    Temp(C)           Hugepages-Usage(page) |",
           "|        |                  | Bus-Id        | NPU Util(%) Memory-Usage(MB)  HBM-Usage(MB)         |",
           border]
    views = []
    for npu in profile["npus"]:
        chips = [chip_view(profile, npu, c, faults, live) for c in npu["chips"]]
        views.append((npu, chips))
        for v in chips:
            power = v.get("power", "NA")
            out.append("| %-7d| %-17s| %-13s | %-11s %-17d %-6d/ %-13d |" % (
                npu["id"], profile.get("name", profile["model"]), v["health"],
                ("%.1f" % power) if isinstance(power, (int, float)) else power,
                int(v.get("temp", 0)), *[int(x) for x in v.get("hugepages", [0, 0])]))
            # Memory-Usage is printed 0 / 0 on a 950 (the HBM column carries the device memory).
            out.append("|%-8s|%-18s| %-13s | %-11d %-5d/ %-10d %-6d/ %-13d |" % (
                "", "", v["bus_id"], int(v.get("aicore", 0)), 0, 0, int(v["hbm"][0]), int(v["hbm"][1])))
        out.append(border)
    out.append("+" + "-" * 27 + "+" + "-" * 15 + "+" + "-" * 53 + "+")
    out.append("| NPU ID                    | Process id    | Process name             | Process memory(MB)       |")
    out.append(proc_border)
    for npu, chips in views:
        rows = ["| %-26d | %-13d | %-24s | %-23d |" % (npu["id"], int(p["pid"]), p["name"], int(p["memory"]))
                for v in chips for p in v["procs"]]
        if not rows:
            rows.append("| No running processes found in NPU %-7d%s|" % (npu["id"], " " * 55))
        out.extend(rows)
        out.append(proc_border)
    return "\n".join(out) + "\n"


def render_mapping_v2(profile):
    """`npu-smi info -m` of an Ascend 950: print_mapping_info_950 of npu-smi's source (NPU ID, Slot ID,
    Chip ID, Chip Phy-ID, Chip Name; no Mcu row)."""
    indent = profile.get("detail_indent", "\t")
    lines = [indent + "%-30s %-30s %-30s %-30s %-30s" % ("NPU ID", "Slot ID", "Chip ID", "Chip Phy-ID", "Chip Name")]
    for slot, npu in enumerate(profile["npus"]):
        chip = npu["chips"][0]
        lines.append(indent + "%-30d %-30d %-30d %-30d %s" % (
            npu["id"], slot, 0, chip["device"], profile.get("chip_name", profile["model"])))
    return "\n".join(lines) + "\n"


def render_info(profile, faults, live):
    lay = profile["_layout"]
    if lay.get("v2"):
        return render_info_v2(profile, faults, live)
    t = Table(lay)
    version = profile["npu_smi_version"]
    out = [t.full("-")]
    head = ("| npu-smi " + version).ljust(lay["version_col"]) + "Version: " + version
    out.append(head.ljust(t.width - 1) + "|")
    out.append(t.cols("-"))
    if lay["hbm"]:
        h3a = "Power(W)".ljust(lay["power_w"]) + "Temp(C)".ljust(lay["temp_w"]) + \
            "Hugepages-Usage(page)"
        h3b = "AICore(%)".ljust(lay["aicore_w"]) + "Memory-Usage(MB)".ljust(lay["mem_w"]) + \
            "HBM-Usage(MB)"
    else:
        h3a = "Power(W)".ljust(lay["power_w"]) + "Temp(C)".ljust(lay["temp_w"]) + \
            "Hugepages-Usage(page)"
        h3b = "AICore(%)".ljust(lay["aicore_w"]) + "Memory-Usage(MB)"
    w = lay["npu_w"]
    second = {"A3": "Phy-ID", "310P": "Device"}.get(profile["family"], "")
    out.append(t.row("NPU".ljust(w) + "Name", "Health", h3a))
    out.append(t.row(("Chip".ljust(w) + second).rstrip(), "Bus-Id", h3b))
    out.append(t.cols("="))
    views = []
    for npu in profile["npus"]:
        chips = [chip_view(profile, npu, c, faults, live) for c in npu["chips"]]
        views.append((npu, chips))
        for i, v in enumerate(chips):
            c3a = _fmt_power(v.get("power", "NA")).ljust(lay["power_w"]) + \
                str(v.get("temp", 0)).ljust(lay["temp_w"]) + \
                _pair(*v.get("hugepages", [0, 0]), lay["huge_pair"])
            c3b = str(v.get("aicore", 0)).ljust(lay["aicore_w"]) + \
                _pair(*v["memory"], lay["mem_pair"])
            if lay["hbm"]:
                c3b = c3b.ljust(lay["aicore_w"] + lay["mem_w"]) + _pair(*v["hbm"], lay["mem_pair"])
            out.append(t.row(str(npu["id"]).ljust(w) + profile.get("name", profile["model"]),
                             v["health"], c3a))
            line2 = str(v["chip"]).ljust(w) + (str(v["device"]) if second else "")
            out.append(t.row(line2.rstrip(), v["bus_id"], c3b))
            if i + 1 < len(chips):
                out.append(t.full("-") if lay["chip_sep"] == "plain" else t.cols("-"))
        out.append(t.cols("="))
    # process table
    pw = lay["proc_npu_w"]
    out.append(t.cols("-"))
    proc_c3 = "Process name".ljust(25) + "| " + "Process memory(MB)"
    out.append(t.row("NPU".ljust(pw) + "Chip", "Process id", proc_c3))
    out.append(t.cols("="))
    for npu, chips in views:
        rows = []
        for v in chips:
            for p in v["procs"]:
                rows.append(t.row(str(npu["id"]).ljust(pw) + str(v["chip"]), str(p["pid"]),
                                  str(p["name"]).ljust(25) + "| " + str(p["memory"])))
        if not rows:
            rows.append(t.wide_row("No running processes found in NPU %s" % npu["id"]))
        out.extend(rows)
        out.append(t.cols("="))
    return "\n".join(out) + "\n"


def render_mapping(profile):
    if profile["_layout"].get("v2"):
        return render_mapping_v2(profile)
    indent = profile.get("detail_indent", "\t")
    pad = profile.get("mapping_trailing_pad", False)
    last = (lambda s: s.ljust(30)) if pad else (lambda s: s)
    lines = [indent + "NPU ID".ljust(31) + "Chip ID".ljust(31) + "Chip Logic ID".ljust(31) +
             last("Chip Name")]
    for npu in profile["npus"]:
        for chip in npu["chips"]:
            lines.append(indent + str(npu["id"]).ljust(31) + str(chip["chip"]).ljust(31) +
                         str(chip.get("logic_id", chip["device"])).ljust(31) +
                         profile.get("chip_name", "Ascend " + profile["model"]))
        if profile.get("mapping_mcu", True):
            lines.append(indent + str(npu["id"]).ljust(31) + str(len(npu["chips"])).ljust(31) +
                         "-".ljust(31) + last("Mcu"))
    return "\n".join(lines) + "\n"


def _kv(indent, key, value):
    return indent + key.ljust(31) + ": " + str(value)


def render_health(profile, chip, faults):
    indent = profile.get("detail_indent", "\t")
    health = faults["health"].get(str(chip["device"]), chip["health"])
    detail = chip.get("health_detail", {})
    if health == "OK":
        code, info = "NA", ["NA"]
    else:
        code = detail.get("error_code", "80E01801")
        info = detail.get("error_information",
                          ["simulated fault: chip health turned %s" % health])
    lines = [_kv(indent, "Health Status", health), _kv(indent, "Error Code", code),
             _kv(indent, "Error Information", info[0])]
    for extra in info[1:]:
        lines.extend(["", indent + " " * 31 + ": " + extra])
    return "\n".join(lines) + "\n"


def render_board(profile, npu, chip):
    indent = profile.get("detail_indent", "\t")
    board = dict(profile.get("board", {}))
    board.update(npu.get("board", {}))
    family = profile["family"]
    first = npu["chips"][0]
    if chip is None:
        rows = [("NPU ID", npu["id"]),
                ("Software Version", profile["driver"]["version"]),
                ("Firmware Version", profile["firmware"]["version"]),
                ("Compatibility", board.get("compatibility", "OK")),
                ("Board ID", board.get("board_id", "0x02")),
                ("PCB ID", board.get("pcb_id", "A")),
                ("BOM ID", board.get("bom_id", 1)),
                ("PCIe Bus Info", first["bus_id"]),
                ("Slot ID", board.get("slot_id", npu["id"])),
                ("Class ID", board.get("class_id", "NA")),
                ("PCI Vendor ID", "0x19E5"),
                ("PCI Device ID", board.get("pci_device_id", FAMILY_PCI_DEVICE_ID[family])),
                ("Subsystem Vendor ID", board.get("subsystem_vendor_id", "0x0200")),
                ("Subsystem Device ID", board.get("subsystem_device_id", "0x0100")),
                ("Chip Count", len(npu["chips"]))]
    else:
        cboard = dict(board)
        cboard.update(chip.get("board", {}))
        if family == "A3":
            rows = [("NPU ID", npu["id"]), ("NPU Name", profile.get("npu_name", "9392")),
                    ("Chip ID", chip["chip"]), ("Chip Name", profile["model"])]
        else:
            rows = [("NPU ID", npu["id"]), ("Chip ID", chip["chip"]), ("Chip Type", "Ascend"),
                    ("Chip Name", profile["model"])]
        rows += [("Chip Version", cboard.get("chip_version", "V1")),
                 ("Board ID", cboard.get("board_id", "0x02")),
                 ("PCB ID", cboard.get("chip_pcb_id", "NA")),
                 ("BOM ID", cboard.get("bom_id", 1)),
                 ("VDie ID", cboard.get("vdie_id", _die_id("V", chip["device"]))),
                 ("NDie ID", cboard.get("ndie_id", _die_id("N", chip["device"]))),
                 ("Chip Position ID", cboard.get("chip_position_id", chip["chip"])),
                 ("PCIe Bus Info", chip["bus_id"]),
                 ("Firmware Version", profile["firmware"]["version"])]
    return "\n".join(_kv(indent, k, v) for k, v in rows) + "\n"


def _die_id(kind, device):
    base = 0x42C711D4 if kind == "V" else 0x27216594
    return "%08X 20B03704 4A10C8D4 14CC040A D2102003" % ((base + device) & 0xFFFFFFFF)


# --------------------------------------------------------------- host files
def _line_key(version, table):
    """The entry of `table` for the release line of `version` (newest not newer)."""
    def num(text):
        return tuple(int(x) for x in re.findall(r"\d+", text)[:2])
    wanted = num(version)
    keys = sorted(table, key=num)
    best = keys[0]
    for key in keys:
        if num(key) <= wanted:
            best = key
    return best


def driver_version_info(profile):
    """/usr/local/Ascend/driver/version.info (format of driver-version.info-*)."""
    drv = profile["driver"]
    version = drv["version"]
    hal, inner, compat, compat_fw = DRIVER_LINES[_line_key(version, DRIVER_LINES)]
    lines = ["Version=" + version,
             "ascendhal_version=" + drv.get("ascendhal_version", hal),
             "aicpu_version=1.0", "tdt_version=1.0", "log_version=1.0", "prof_version=2.0",
             "dvppkernels_version=1.1", "tsfw_version=1.0",
             "Innerversion=" + drv.get("innerversion", inner),
             "compatible_version=" + drv.get("compatible_version", compat),
             "compatible_version_fw=" + drv.get("compatible_version_fw", compat_fw)]
    package = drv.get("package_version", version)
    if package is not None:  # 24.1.rc1 (doc) has no package_version line
        lines.append("package_version=" + package)
    return "\n".join(lines) + "\n"


def firmware_version_info(profile):
    """/usr/local/Ascend/firmware/version.info (format of firmware-version.info-*)."""
    fw = profile["firmware"]
    line = _line_key(fw["version"], FIRMWARE_LINES)
    return "\n".join([
        "Version=" + fw["version"],
        "firmware_version=1.0",
        "package_version=" + fw.get("package_version", profile["driver"]["version"]),
        "compatible_version_drv=" + fw.get("compatible_version_drv", FIRMWARE_LINES[line]),
    ]) + "\n"


def ascend_install_info(profile):
    """/etc/ascend_install.info (format of etc-ascend_install.info-driver-firmware-full-*)."""
    user = profile.get("install_user", "HwHiAiUser")
    return "\n".join([
        "UserName=" + user, "UserGroup=" + user,
        "Driver_Install_Type=full", "Driver_Install_Path_Param=/usr/local/Ascend",
        "Driver_Install_For_All=yes", "Driver_Install_Mode=normal",
        "Firmware_Install_Type=full", "Firmware_Install_Path_Param=/usr/local/Ascend",
    ]) + "\n"


# ------------------------------------------------------------------ npu-smi
def _invalid(which):
    text = {"i": "Invalid card id.\nError parameter of -i\n",
            "c": "Invalid chip id.\nError parameter of -c\n"}[which]
    sys.stdout.write(text + USAGE_LINE + "\n")
    return 1


def npu_smi(argv):
    path = profile_path()
    profile = load_profile(path)
    container = in_container(path)
    if container:
        visible_only(profile)
    faults = effective_faults(profile)
    if faults["dcmi"]:
        sys.stdout.write("DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"
                         "dcmi module initialize failed. ret is -8005\n")
        return 1
    if not argv or argv[0] != "info":
        sys.stdout.write("Usage: npu-smi <info|set|clear|upgrade|...> [Options...]\n"
                         "(simulator: only `npu-smi info ...` is simulated)\n")
        return 1
    args = argv[1:]
    if not args:
        sys.stdout.write(render_info(profile, faults, {} if container else live_processes()))
        return 0
    if args[0] in ("-h", "--help"):
        sys.stdout.write(HELP_TEXT)
        return 0
    if args == ["-m"]:
        sys.stdout.write(render_mapping(profile))
        return 0
    opts = {}
    i = 0
    while i < len(args):
        key = args[i]
        if key in ("-t", "-i", "-c") and i + 1 < len(args):
            opts[key] = args[i + 1]
            i += 2
            continue
        sys.stdout.write("Error parameter of %s\n%s\n" % (key, USAGE_LINE))
        return 1
    kind = opts.get("-t")
    if kind not in ("health", "board"):
        sys.stdout.write("simulator: `npu-smi info -t %s` is not simulated "
                         "(supported: -t health, -t board)\n" % kind)
        return 1
    if "-i" not in opts:
        return _invalid("i")
    npu = next((n for n in profile["npus"] if str(n["id"]) == opts["-i"]), None)
    if npu is None:
        return _invalid("i")
    chip = None
    if "-c" in opts:
        chip = next((c for c in npu["chips"] if str(c["chip"]) == opts["-c"]), None)
        if chip is None:
            return _invalid("c")
    if kind == "health":
        target = chip or npu["chips"][0]
        sys.stdout.write(render_health(profile, target, faults))
    else:
        sys.stdout.write(render_board(profile, npu, chip))
    return 0


# ----------------------------------------------------------------- hccn_tool
HCCN_USAGE = ("Usage: hccn_tool -i <device_id> -<link|ip|net_health|fec> -g\n"
              "       hccn_tool -i <device_id> -ping -g address <ip>\n"
              "(simulator: only these getters are simulated)\n")
PING_PACKETS = 3  # what the real tool sends by default (see README.md, ping)


def chip_network(chip, faults):
    """A chip's RoCE port as hccn_tool sees it: the profile's network, then the faults."""
    net = dict(chip.get("network", {}))
    dev = str(chip["device"])
    net["link"] = faults["link"].get(dev, net.get("link", "UP"))
    if dev in faults["no_ip"]:
        net.pop("ip", None)
    net["answers"] = bool(net.get("ip")) and net["link"] == "UP" and dev not in faults["ping_silent"]
    return net


def hccn_tool(argv):
    profile = load_profile(profile_path())
    faults = effective_faults(profile)
    if faults["dcmi"]:
        sys.stdout.write("dcmi module initialize failed. ret is -8005\n")
        return 1
    ping = len(argv) == 6 and argv[2:5] == ["-ping", "-g", "address"]
    if len(argv) < 4 or argv[0] != "-i" or (argv[-1] != "-g" and not ping) or \
            (argv[2] == "-ping" and not ping):
        sys.stdout.write(HCCN_USAGE)
        return 1
    chip = next((c for _, c in all_chips(profile) if str(c["device"]) == argv[1]), None)
    if chip is None:
        sys.stdout.write("device id %s is invalid\n" % argv[1])
        return 1
    net = chip_network(chip, faults)
    what = argv[2]
    if ping:
        return hccn_ping(chip, net, argv[5])
    if what == "-link":
        sys.stdout.write("link status: %s\n" % net["link"])
    elif what == "-ip":
        if net.get("ip"):  # real tool prints nothing for a port without an address
            netmask = net.get("netmask", "255.255.255.0")
            sys.stdout.write("ipaddr:%s\nnetmask:%s\n" % (net["ip"], netmask))
    elif what == "-net_health":
        health = net.get("net_health", "Init")
        if net["link"] != "UP" or str(chip["device"]) in faults["no_ip"]:
            health = "Socket failed"  # the real state of a port that cannot reach its detect IP
        sys.stdout.write("net health status: %s\n" % health)
    elif what == "-fec":
        sys.stdout.write("fec mode: %s\n" % net.get("fec", "no FEC mode"))
    else:
        sys.stdout.write("simulator: hccn_tool %s -g is not simulated\n" % what)
        return 1
    return 0


def _icmp_checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def icmp_echo(src, dst, seq, timeout):
    """One real ICMP echo from the NPU's address (an alias on the sim host, see
    sync_fabric) to dst; the round trip in seconds, or None when nothing came back."""
    import socket
    import struct
    import time
    ident = (os.getpid() ^ seq) & 0xFFFF
    payload = b"ascendfleet-sim hccn ping"
    header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    packet = struct.pack("!BBHHH", 8, 0, _icmp_checksum(header + payload), ident, seq) + payload
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    except OSError:
        return None
    with sock:
        try:
            sock.bind((src, 0))  # fails when the port has no address up: nothing is sent
            start = time.monotonic()
            sock.sendto(packet, (dst, 0))
        except OSError:
            return None
        deadline = start + timeout
        for _ in range(256):  # other ICMP traffic is read and skipped, bounded
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            sock.settimeout(left)
            try:
                data, addr = sock.recvfrom(2048)
            except OSError:
                return None
            ihl = (data[0] & 0x0F) * 4
            kind, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
            if kind == 0 and rid == ident and rseq == seq and addr[0] == dst:
                return time.monotonic() - start
    return None


def hccn_ping(chip, net, address):
    """`hccn_tool -i N -ping -g address IP`, in the real output format (README.md)."""
    import ipaddress
    try:
        ipaddress.IPv4Address(address)
    except ValueError:
        sys.stdout.write("address %s is invalid\n" % address)
        return 1
    timeout = float(os.environ.get("ASCENDFLEET_SIM_PING_TIMEOUT", "1") or 1)
    lines = ["device %d PING %s" % (chip["device"], address)]
    received = 0
    for seq in range(PING_PACKETS):
        rtt = icmp_echo(net["ip"], address, seq, timeout) if net["answers"] else None
        if rtt is None:
            lines.append("recv time out seq=%d" % seq)
        else:
            received += 1
            lines.append("recv seq=%d,time=%.6fms" % (seq, rtt * 1000))
    lines.append("%d packets transmitted, %d received, %.2f%% packet loss" % (
        PING_PACKETS, received, 100.0 * (PING_PACKETS - received) / PING_PACKETS))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if received == PING_PACKETS else 1  # the real tool fails on "recv time out seq"


# -------------------------------------------------------------------- fabric
# With "fabric" in the profile, every NPU port that is up, has an address and answers is an
# IP alias (/32, label <if>:npuN) on the sim host's interface, plus a link route for its
# subnet: NPUs of sim hosts on one Docker network then reach each other with real ICMP, and
# a fault (link down, no address, silent) removes the alias, so peers really stop hearing it.
def fabric_interface(profile):
    explicit = os.environ.get("ASCENDFLEET_SIM_FABRIC_IFACE") or \
        (profile.get("fabric") or {}).get("interface")
    if explicit:
        return explicit
    with open("/proc/net/route", encoding="utf-8") as fh:
        for line in fh.readlines()[1:]:
            fields = line.split()
            if len(fields) > 2 and fields[1] == "00000000":
                return fields[0]
    raise SimError("fabric: no default route to find the interface (set fabric.interface)")


def _ip(*args):
    import subprocess
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=10,
                          check=False)


def sync_fabric(profile):
    """Make the NPU aliases match the profile and the faults; returns the addresses up."""
    if not profile.get("fabric") or root() != "/":
        return []
    import ipaddress
    iface = fabric_interface(profile)
    faults = effective_faults(profile)
    want, subnets = {}, set()
    for _, chip in all_chips(profile):
        net = chip_network(chip, faults)
        if net["answers"]:
            want[net["ip"]] = "%s:npu%d" % (iface, chip["device"])
            subnets.add(ipaddress.IPv4Interface(
                "%s/%s" % (net["ip"], net.get("netmask", "255.255.255.0"))).network)
    have = set()
    for line in _ip("-o", "-4", "addr", "show", "dev", iface).stdout.splitlines():
        fields = line.split()
        if ":npu" in line and "inet" in fields:
            addr = fields[fields.index("inet") + 1].split("/")[0]
            if addr in want:
                have.add(addr)
            else:
                _ip("addr", "del", addr + "/32", "dev", iface)
    for addr, label in sorted(want.items()):
        if addr not in have:
            out = _ip("addr", "add", addr + "/32", "dev", iface, "label", label)
            if out.returncode != 0 and "File exists" not in out.stderr:
                raise SimError("fabric: ip addr add %s dev %s failed: %s" % (
                    addr, iface, out.stderr.strip()))
    for subnet in sorted(subnets):
        _ip("route", "replace", str(subnet), "dev", iface, "scope", "link")
    return sorted(want)


# ---------------------------------------------------------- devices / faults
def make_device(name, major, minor, use_mknod):
    """Create /dev/<name> (char major:minor) under the root prefix."""
    path = rpath("/dev/" + name)
    if use_mknod:
        import stat
        try:
            st = os.lstat(path)
            if stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == major and \
                    os.minor(st.st_rdev) == minor:
                return path
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.mknod(path, 0o660 | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(path, 0o660)  # not reduced by the umask
    else:
        # tmp root / not root: a regular file records what would be created
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("char %d:%d\n" % (major, minor))
    return path


def use_mknod():
    return root() == "/" and os.geteuid() == 0


def set_compose_hidden(hidden):
    """Hide (rename) or restore the docker compose CLI plugin; returns paths touched."""
    touched = []
    for rel in COMPOSE_PLUGIN_DIRS:
        plugin = rpath(rel + "/docker-compose")
        hidden_path = plugin + COMPOSE_HIDDEN_SUFFIX
        if hidden and os.path.exists(plugin):
            os.replace(plugin, hidden_path)
            touched.append(plugin)
        elif not hidden and os.path.exists(hidden_path):
            os.replace(hidden_path, plugin)
            touched.append(plugin)
    return touched


FABRIC_FAULTS = {  # npu-sim-fault <cmd> <arg> N -> (state key, fault on)
    "link": {"down": ("link", True), "up": ("link", False)},
    "ip": {"clear": ("no_ip", True), "restore": ("no_ip", False)},
    "ping": {"silent": ("ping_silent", True), "answer": ("ping_silent", False)},
}
FAULT_USAGE = """usage: npu-sim-fault <command>
  warning N             chip with /dev/davinciN reports Health Warning
  alarm N | critical N  same with Alarm / Critical
  ok N                  chip N reports OK (also over a profile's Warning)
  dcmi on|off           npu-smi fails like an unloaded driver (ret is -8005)
  remove-device N       delete /dev/davinciN
  restore-device N      recreate /dev/davinciN
  compose off|on        hide / restore the docker compose CLI plugin
  link down|up N        NPU N's RoCE link DOWN / UP (hccn_tool -link -g; the fabric alias goes)
  ip clear|restore N    NPU N has no address (hccn_tool -ip -g prints nothing) / has it again
  ping silent|answer N  NPU N keeps link and address but peers' pings get no reply / get one
  status                print the fault state (JSON)
  clear                 undo every fault set with this command
State: /run/ascendfleet-sim/faults.json (tmpfs: a container restart resets it to the profile).
"""


def npu_sim_fault(argv):
    profile = load_profile(profile_path())
    devices = {c["device"] for _, c in all_chips(profile)}
    state = read_faults()
    state.setdefault("health", {})

    def device_arg_at(pos):
        if len(argv) != pos + 1 or not argv[pos].isdigit() or int(argv[pos]) not in devices:
            raise SimError("npu-sim-fault %s: give a device index N of /dev/davinciN, one of %s"
                           % (" ".join(argv[:pos]), sorted(devices)))
        return int(argv[pos])

    def device_arg():
        return device_arg_at(1)

    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(FAULT_USAGE)
        return 0 if argv else 2
    cmd = argv[0]
    if cmd in ("warning", "alarm", "critical"):
        state["health"][str(device_arg())] = cmd.capitalize()
    elif cmd == "ok":
        state["health"][str(device_arg())] = "OK"
    elif cmd == "dcmi" and len(argv) == 2 and argv[1] in ("on", "off"):
        state["dcmi"] = argv[1] == "on"
    elif cmd == "remove-device":
        dev = device_arg()
        try:
            os.unlink(rpath("/dev/davinci%d" % dev))
        except FileNotFoundError:
            pass
        state["removed_devices"] = sorted(set(state.get("removed_devices", [])) | {dev})
    elif cmd == "restore-device":
        dev = device_arg()
        make_device("davinci%d" % dev, DEVICE_MAJOR["davinci"], dev, use_mknod())
        state["removed_devices"] = sorted(set(state.get("removed_devices", [])) - {dev})
    elif cmd == "compose" and len(argv) == 2 and argv[1] in ("on", "off"):
        set_compose_hidden(argv[1] == "off")
        state["compose_hidden"] = argv[1] == "off"
    elif cmd in ("link", "ip", "ping") and len(argv) == 3 and argv[1] in FABRIC_FAULTS[cmd]:
        dev = device_arg_at(2)
        key, on = FABRIC_FAULTS[cmd][argv[1]]
        if key == "link":
            state.setdefault("link", {})[str(dev)] = "DOWN" if on else "UP"
        else:
            base = {str(d) for d in profile.get("faults", {}).get(key, [])}
            # the state holds the difference to the profile (effective_faults XORs them)
            want = (str(dev) in base) != on
            current = set(state.get(key, []))
            state[key] = sorted((current | {str(dev)}) if want else (current - {str(dev)}))
        write_faults(state)
        sync_fabric(profile)
        return 0
    elif cmd == "status":
        sys.stdout.write(json.dumps(state, indent=2, sort_keys=True) + "\n")
        return 0
    elif cmd == "clear":
        for dev in state.get("removed_devices", []):
            make_device("davinci%d" % dev, DEVICE_MAJOR["davinci"], dev, use_mknod())
        if state.get("compose_hidden"):
            set_compose_hidden(False)
        state = {"health": {}}
        write_faults(state)
        sync_fabric(profile)
        return 0
    else:
        raise SimError("npu-sim-fault: unknown command %r\n%s" % (" ".join(argv), FAULT_USAGE))
    write_faults(state)
    return 0


# --------------------------------------------------------------------- main
TOOLS = {"npu-smi": npu_smi, "hccn_tool": hccn_tool, "npu-sim-fault": npu_sim_fault}


def main(argv=None):
    argv = sys.argv if argv is None else argv
    tool = os.environ.get("ASCENDFLEET_SIM_TOOL") or os.path.basename(argv[0])
    if tool not in TOOLS:
        tool = "npu-smi"
    try:
        return TOOLS[tool](argv[1:])
    except SimError as exc:
        sys.stderr.write("%s (ascendfleet simulator): %s\n" % (tool, exc))
        return 2


if __name__ == "__main__":
    sys.exit(main())
