#!/usr/bin/env python3
"""Plan a simulated copy of an ops team's fleet (scripts/fleet-test.sh runs this).

Reads the team's inventory with ``ansible-inventory`` (vault arguments passed through; the
decrypted variables stay in this process's memory and are never written) and the mapping
file kept beside it (``ascendfleet-sim.yml``), and writes into the work directory:

  sim-inventory.yml  one sim host per simulated real host, for tests/sim/fleet.sh
  profiles/          the NPU profile of each sim host (tests/sim/profiles/ or derived from one)
  hub.json           the stand-in hub's models: the deployments' model ids and revisions
  overlay.yml        extra vars: the connection variables of the sim hosts and the addresses
                     of the stood-in services (hub, image archives, modelscope wheelhouse)
  plan.json          which sim host stands for which real hosts, its deployments, the limit,
                     the stand-in image tags to build

Test infrastructure (never shipped): standard library only, no product code.
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIM = os.path.dirname(HERE)

# The collection's input names the plan reads or sets, each in this one place.
DEPLOYMENTS_VAR = "ascendfleet_deployments"
DEPLOYMENT_DEFAULTS_VAR = "ascendfleet_deployment_defaults"
IMAGE_VERSION_VAR = "ascendfleet_image_version"
IMAGE_OS_VAR = "ascendfleet_image_os"
API_KEY_VAR = "vllm_compose_api_key"
# The stood-in services' addresses (overlay.yml): name -> value template.
SERVICE_VARS = (
    ("model_prefetch_endpoint", "http://{hub}:8080"),
    ("model_prefetch_wheelhouse", "{cache}/wheelhouse"),
    ("ascendfleet_image_source", "archive"),
    ("vllm_compose_image_archive_dir", "{cache}/images"),
    ("ascendfleet_report_dir", "{work}/reports"),
)
# A deployment's list of hosts it spans (docs/multi-node.md); the first one is the head.
MEMBERS_KEY = "members"
# The group every product playbook targets.
FLEET_GROUP = "ascend_servers"
# What the mapping file's hardware may say; chips/busy/driver are the four facts.
HARDWARE_KEYS = {"family", "model", "chips", "busy", "driver"}
COMMIT_ID = re.compile(r"^[0-9a-f]{40}$")
MIB = 1 << 20


class PlanError(Exception):
    pass


def load_yaml(path):
    """The mapping file: YAML parsed by the PyYAML that ansible-core brings."""
    try:
        import yaml  # ansible-core depends on PyYAML; the venv that runs ansible has it
    except ImportError:
        raise PlanError("PyYAML is missing: run this with the Python of the venv that runs ansible")
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle) or {}
    except OSError as exc:
        raise PlanError("mapping file %s: %s. Fix: create it beside the inventory (see "
                        "docs/testing-your-fleet.md) or pass --mapping" % (path, exc.strerror))
    except yaml.YAMLError as exc:
        raise PlanError("mapping file %s is not valid YAML: %s" % (path, exc))


def read_inventory(inventory, vault_args):
    cmd = ["ansible-inventory", "-i", inventory, "--list"] + list(vault_args)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise PlanError("ansible-inventory not found: run from the project's venv (make setup)")
    if proc.returncode != 0:
        raise PlanError("ansible-inventory -i %s failed:\n%s" % (inventory, proc.stderr.strip()))
    return json.loads(proc.stdout)


def group_hosts(inv, group, seen=None):
    """Every host of a group, children included, in inventory order."""
    seen = seen if seen is not None else set()
    if group in seen:
        return []
    seen.add(group)
    entry = inv.get(group) or {}
    hosts = list(entry.get("hosts") or [])
    for child in entry.get("children") or []:
        for host in group_hosts(inv, child, seen):
            if host not in hosts:
                hosts.append(host)
    return hosts


def chips_of(profile):
    return [chip for npu in profile["npus"] for chip in npu["chips"]]


def base_profiles():
    """The sim's healthy profiles (fault profiles are for the collection's own tests)."""
    found = {}
    pdir = os.path.join(SIM, "profiles")
    for name in sorted(os.listdir(pdir)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(pdir, name), encoding="utf-8") as handle:
            profile = json.load(handle)
        faults = profile.get("faults") or {}
        if any(faults.get(k) for k in ("dcmi", "health", "missing_devices", "no_compose")):
            continue
        found[name[:-5]] = profile
    return found


def profile_facts(profile):
    chips = chips_of(profile)
    return {
        "family": profile.get("family"),
        "model": profile.get("model"),
        "chips": len(chips),
        "busy": sorted(c["device"] for c in chips if c.get("processes")),
        "driver": (profile.get("driver") or {}).get("version"),
    }


def check_hardware(where, hardware):
    if not isinstance(hardware, dict):
        raise PlanError("%s: hardware must be a mapping of %s" % (where, ", ".join(sorted(HARDWARE_KEYS))))
    unknown = sorted(set(hardware) - HARDWARE_KEYS)
    if unknown:
        raise PlanError("%s: hardware: unknown key(s) %s. Fix: use %s"
                        % (where, ", ".join(unknown), ", ".join(sorted(HARDWARE_KEYS))))
    for key in ("family", "chips"):
        if key not in hardware:
            raise PlanError("%s: hardware: %s is missing. Fix: give family (910B, A3, 310P) and chips" % (where, key))
    if not isinstance(hardware["chips"], int) or hardware["chips"] < 1:
        raise PlanError("%s: hardware: chips: %r is not a chip count" % (where, hardware["chips"]))
    busy = hardware.get("busy", [])
    if not isinstance(busy, list) or any(not isinstance(b, int) or not 0 <= b < hardware["chips"] for b in busy):
        raise PlanError("%s: hardware: busy: %r must list device ids 0..%d"
                        % (where, busy, hardware["chips"] - 1))


def derive_profile(where, hardware, profiles):
    """(name, profile JSON) of a sim host with this hardware: a stock profile when one matches
    every given fact, else the closest stock profile with busy chips and driver changed."""
    check_hardware(where, hardware)
    want = {k: hardware[k] for k in hardware}
    if "busy" in want:
        want["busy"] = sorted(want["busy"])
    for key in ("driver", "model"):  # YAML reads driver: 25.0 as a number
        if key in want:
            want[key] = str(want[key])
    family = str(want["family"]).upper()
    candidates = [(n, p) for n, p in profiles.items()
                  if str(p.get("family", "")).upper() == family and len(chips_of(p)) == want["chips"]
                  and ("model" not in want or str(p.get("model")) == str(want["model"]))]
    if not candidates:
        have = sorted({"%s %s x%d" % (p.get("family"), p.get("model"), len(chips_of(p))) for p in profiles.values()})
        raise PlanError("%s: no simulated host has %s: the sim has %s. Fix: change the mapping's "
                        "hardware, or add a profile under tests/sim/profiles/"
                        % (where, ", ".join("%s %s" % (k, want[k]) for k in ("family", "model", "chips") if k in want),
                           "; ".join(have)))
    for name, profile in candidates:
        facts = profile_facts(profile)
        if all(facts[k] == want[k] for k in want if k in facts and k not in ("family",)):
            return name, profile, "stock profile %s" % name
    # Prefer a candidate with the wanted driver, then one with the wanted busy set.
    candidates.sort(key=lambda item: (profile_facts(item[1])["driver"] != want.get("driver"),
                                      profile_facts(item[1])["busy"] != want.get("busy"), item[0]))
    name, stock = candidates[0]
    derived = copy.deepcopy(stock)
    changes = []
    if "driver" in want and want["driver"] != profile_facts(stock)["driver"]:
        derived.setdefault("driver", {})["version"] = str(want["driver"])
        derived["npu_smi_version"] = str(want["driver"])
        changes.append("driver %s" % want["driver"])
    if "busy" in want and want["busy"] != profile_facts(stock)["busy"]:
        defaults = derived.get("chip_defaults") or {}
        key = "hbm" if ("hbm" in defaults or any("hbm" in c for c in chips_of(derived))) else "memory"
        idle = [c.get(key, defaults.get(key)) for c in chips_of(stock) if not c.get("processes")]
        idle = [v for v in idle if v] or [defaults.get(key) or [3390, 65536]]
        base_used = min(v[0] for v in idle)
        for chip in chips_of(derived):
            total = (chip.get(key) or defaults.get(key) or [0, 65536])[1]
            if chip["device"] in want["busy"]:
                used = int(total * 0.93)
                chip["processes"] = [{"pid": 3100000 + chip["device"], "name": "VLLMWorker_TP",
                                      "memory": used - base_used}]
                chip[key] = [used, total]
            else:
                chip.pop("processes", None)
                chip[key] = [base_used, total]
        changes.append("busy chips %s" % (want["busy"] or "none"))
    derived["description"] = "Derived by tests/sim/fleetci/plan.py for %s from %s: %s." % (
        where, name, ", ".join(changes) or "unchanged")
    derived["source"] = "%s.json with the mapping file's hardware" % name
    return None, derived, "%s with %s" % (name, ", ".join(changes))


def sanitise(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "-", name)


def deployments_of(host, hostvars):
    """(deployments, defaults) of a host from the merged inventory vars, literal lists only."""
    deps = hostvars.get(DEPLOYMENTS_VAR, [])
    defaults = hostvars.get(DEPLOYMENT_DEFAULTS_VAR, {}) or {}
    if isinstance(deps, str) or not isinstance(deps, list):
        raise PlanError("host %s: %s is %s, not a list written out in the inventory; the simulated "
                        "fleet reads it from the inventory. Fix: write the list in group_vars/host_vars"
                        % (host, DEPLOYMENTS_VAR, "a template" if isinstance(deps, str) else type(deps).__name__))
    if not isinstance(defaults, dict):
        defaults = {}
    return [d for d in deps if isinstance(d, dict)], defaults


def plan(args):
    mapping_path = args.mapping or os.path.join(os.path.dirname(os.path.abspath(args.inventory)), "ascendfleet-sim.yml")
    mapping = load_yaml(mapping_path)
    if not isinstance(mapping, dict):
        raise PlanError("mapping file %s: expected a mapping with groups, hosts, models" % mapping_path)
    unknown = sorted(set(mapping) - {"groups", "hosts", "models"})
    if unknown:
        raise PlanError("mapping file %s: unknown key(s) %s. Fix: use groups, hosts, models"
                        % (mapping_path, ", ".join(unknown)))
    inv = read_inventory(args.inventory, args.vault_arg)
    hostvars = (inv.get("_meta") or {}).get("hostvars") or {}
    fleet = group_hosts(inv, FLEET_GROUP)
    if not fleet:
        raise PlanError("inventory %s has no hosts in group %s (the group the collection's playbooks "
                        "target)" % (args.inventory, FLEET_GROUP))
    profiles = base_profiles()

    def entry_of(where, spec):
        if not isinstance(spec, dict) or ("profile" in spec) == ("hardware" in spec):
            raise PlanError("%s: give either hardware (family, chips, busy, driver) or profile "
                            "(a tests/sim/profiles/ name)" % where)
        unknown_keys = sorted(set(spec) - {"profile", "hardware", "sample"})
        if unknown_keys:
            raise PlanError("%s: unknown key(s) %s. Fix: use hardware or profile, and sample"
                            % (where, ", ".join(unknown_keys)))
        return spec

    groups = mapping.get("groups") or {}
    hosts_map = mapping.get("hosts") or {}
    # Every fleet host: its mapping entry (host entry first, else its one mapped group).
    owner = {}
    for host in fleet:
        if host in hosts_map:
            owner[host] = ("host %s" % host, entry_of("mapping %s: hosts: %s" % (mapping_path, host), hosts_map[host]))
            continue
        mine = [g for g in groups if host in group_hosts(inv, g)]
        if not mine:
            raise PlanError("host %s (group %s) has no simulated hardware: mapping file %s maps neither it nor a "
                            "group it is in. Fix: add one of its groups under groups: (or the host under hosts:)"
                            % (host, FLEET_GROUP, mapping_path))
        if len(mine) > 1:
            raise PlanError("host %s is in mapped groups %s: the mapping file %s must say which hardware "
                            "it has. Fix: map it under hosts:" % (host, ", ".join(mine), mapping_path))
        owner[host] = ("group %s" % mine[0], entry_of("mapping %s: groups: %s" % (mapping_path, mine[0]), groups[mine[0]]))
    for group in groups:
        if group not in inv:
            raise PlanError("mapping file %s: group %s is not in inventory %s" % (mapping_path, group, args.inventory))
    for host in hosts_map:
        if host not in fleet:
            raise PlanError("mapping file %s: host %s is not in group %s of inventory %s"
                            % (mapping_path, host, FLEET_GROUP, args.inventory))

    # Sample: per mapping entry, its first `sample` hosts (default 1; "all" for every host).
    by_entry = {}
    for host in fleet:
        by_entry.setdefault(owner[host][0], []).append(host)
    sims = []
    written = {}
    for label, members in by_entry.items():
        spec = owner[members[0]][1]
        sample = spec.get("sample", 1)
        if sample == "all":
            sample = len(members)
        if not isinstance(sample, int) or sample < 1:
            raise PlanError("mapping %s: sample: %r must be a positive number or all" % (label, sample))
        chosen, rest = members[:sample], members[sample:]
        if "profile" in spec:
            pname = spec["profile"]
            if not os.path.exists(os.path.join(SIM, "profiles", "%s.json" % pname)):
                raise PlanError("mapping %s: profile %s is not in tests/sim/profiles/ (there: %s)"
                                % (label, pname, ", ".join(sorted(base_profiles()))))
            with open(os.path.join(SIM, "profiles", "%s.json" % pname), encoding="utf-8") as handle:
                pjson = json.load(handle)
            how = "stock profile %s" % pname
        else:
            pname, pjson, how = derive_profile("mapping %s" % label, spec["hardware"], profiles)
            if pname is None:
                pname = "%s-%s" % (args.prefix, sanitise(label.replace(" ", "-")))
        written[pname] = pjson
        for index, host in enumerate(chosen):
            deps, defaults = deployments_of(host, hostvars.get(host, {}))
            present = []
            for dep in deps:
                merged = dict(defaults, **dep)
                if merged.get("state", "present") == "absent":
                    continue
                members = merged.get(MEMBERS_KEY)
                if isinstance(members, list) and host not in members:
                    continue  # a multi-node deployment of other hosts
                present.append({"name": merged.get("name"), "model": merged.get("model"),
                                "revision": str(merged.get("revision") or "master"),
                                "port": merged.get("port", 8000),
                                # A multi-node deployment serves its API from its head (the first
                                # member) only; the other members run headless ranks.
                                "api": not isinstance(members, list) or members[0] == host,
                                "members": members if isinstance(members, list) else None})
            sims.append({
                "real": host, "sim": "%s-%s" % (args.prefix, sanitise(host)), "mapping": label,
                "stands_for": [host] + (rest if index == 0 else []), "profile": pname, "how": how,
                "facts": profile_facts(pjson), "deployments": present,
                "image_version": str(hostvars.get(host, {}).get(IMAGE_VERSION_VAR, "")),
                "image_os": str(hostvars.get(host, {}).get(IMAGE_OS_VAR, "openeuler")),
            })

    # A multi-node deployment runs only with every member in the run: each must be simulated.
    simulated = {sim["real"] for sim in sims}
    for sim in sims:
        for dep in sim["deployments"]:
            missing = [m for m in dep["members"] or [] if m not in simulated]
            if missing:
                raise PlanError("deployment %s spans %s, but %s %s not simulated (the mapping file %s samples one "
                                "host per entry). Fix: map each member under hosts:, or give its group sample: all"
                                % (dep["name"], ", ".join(dep["members"]), ", ".join(missing),
                                   "is" if len(missing) == 1 else "are", mapping_path))

    # The hub serves every present deployment's model at its revisions.
    models_map = mapping.get("models") or {}
    hub = {"models": {}}
    for sim in sims:
        for dep in sim["deployments"]:
            if not dep["model"]:
                continue
            entry = hub["models"].setdefault(dep["model"], {"revisions": []})
            if dep["revision"] not in entry["revisions"]:
                entry["revisions"].append(dep["revision"])
    for model, spec in models_map.items():
        if not isinstance(spec, dict) or set(spec) - {"shards", "weights_mib"}:
            raise PlanError("mapping file %s: models: %s: give shards (and optionally weights_mib)" % (mapping_path, model))
        entry = hub["models"].setdefault(model, {"revisions": []})
        shards = int(spec.get("shards", 1))
        entry["shards"] = shards
        entry["weights_bytes"] = int(spec.get("weights_mib", shards)) * MIB

    # Stand-in images: every variant of the team's image versions (and the roll-forward tag).
    # (vllm-ascend's naming: vX, vX-a3, vX-310p, each with -openeuler for the openEuler image.)
    variant = {"910B": "", "A3": "-a3", "310P": "-310p"}
    tags = sorted({"%s%s%s" % (v, variant.get(str(s["facts"]["family"]).upper(), ""),
                               "-openeuler" if s["image_os"] == "openeuler" else "")
                   for s in sims for v in {s["image_version"], args.roll_to} if v})

    sim_names = {s["real"]: s["sim"] for s in sims}
    hub_name = "%s-hub" % args.prefix
    cache = os.environ.get("ASCENDFLEET_SIM_CACHE") or "/var/cache/ascendfleet-sim"
    os.makedirs(os.path.join(args.work, "profiles"), exist_ok=True)
    for name, pjson in written.items():
        write(os.path.join(args.work, "profiles", "%s.json" % name), json.dumps(pjson, indent=2) + "\n")
    write(os.path.join(args.work, "hub.json"), json.dumps(hub, indent=2, sort_keys=True) + "\n")
    write(os.path.join(args.work, "sim-inventory.yml"), "---\n# Generated by tests/sim/fleetci/plan.py: the sim hosts of %s.\n%s:\n  hosts:\n%s"
          % (args.inventory, FLEET_GROUP, "".join("    %s:\n      ascendfleet_sim_profile: %s\n" % (s["sim"], s["profile"]) for s in sims)))
    local = "inventory_hostname in ['localhost', '127.0.0.1']"
    overlay = [
        "---",
        "# Generated by tests/sim/fleetci/plan.py (extra vars of every run against the simulated fleet).",
        "# 1. Connection variables: each simulated real host is reached in its sim container through",
        "#    the Docker API as root; a host that is not simulated gets a container name that does",
        "#    not exist, so nothing can reach a real machine.",
        "ascendfleet_sim_hosts: %s" % json.dumps(sim_names, sort_keys=True),
        "ansible_connection: \"{{ 'local' if %s else 'community.docker.docker' }}\"" % local,
        "ansible_host: \"{{ ascendfleet_sim_hosts[inventory_hostname] | default('%s-not-simulated-' ~ inventory_hostname) }}\"" % args.prefix,
        "ansible_user: root",
        "ansible_become: false",
        "ansible_python_interpreter: \"{{ ansible_playbook_python if %s else '/usr/bin/python3' }}\"" % local,
        "# 2. The stood-in services: the hub stand-in, the stand-in images (air-gapped archives),",
        "#    the modelscope CLI from the sim's wheelhouse; reports stay in the work directory.",
    ] + ["%s: %s" % (name, value.format(hub=hub_name, cache=cache, work=os.path.abspath(args.work)))
         for name, value in SERVICE_VARS] + [""]
    write(os.path.join(args.work, "overlay.yml"), "\n".join(overlay))
    result = {"inventory": args.inventory, "mapping": mapping_path, "hub": hub_name,
              "limit": ",".join([s["real"] for s in sims] + ["localhost"]),
              "image_tags": tags, "roll_to": args.roll_to, "image_version_var": IMAGE_VERSION_VAR,
              "api_key_var": API_KEY_VAR,
              "hosts": sims}
    write(os.path.join(args.work, "plan.json"), json.dumps(result, indent=2) + "\n")
    return result


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def table(result):
    lines = ["%-24s %-16s %-32s %s" % ("SIM HOST", "REAL HOST", "PROFILE", "STANDS FOR")]
    for s in result["hosts"]:
        f = s["facts"]
        lines.append("%-24s %-16s %-32s %s" % (
            s["sim"], s["real"], "%s (%s %s x%d, busy %s, driver %s)" % (
                s["profile"], f["family"], f["model"], f["chips"], f["busy"] or "none", f["driver"]),
            ", ".join(s["stands_for"])))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--mapping")
    parser.add_argument("--work", required=True)
    parser.add_argument("--prefix", default="fleetci")
    parser.add_argument("--roll-to", default="")
    parser.add_argument("--vault-arg", action="append", default=[],
                        help="passed to ansible-inventory (e.g. --vault-password-file=F)")
    parser.add_argument("--table", action="store_true", help="print the sim-host table of an existing plan.json")
    args = parser.parse_args(argv)
    if args.table:
        with open(os.path.join(args.work, "plan.json"), encoding="utf-8") as handle:
            print(table(json.load(handle)))
        return 0
    try:
        result = plan(args)
    except PlanError as exc:
        sys.stderr.write("fleet-test: %s\n" % exc)
        return 2
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
