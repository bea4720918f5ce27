"""Record the options `vllm serve` accepts, as vLLM's own argparse builds them, for a vLLM version.

For each version: a throwaway virtualenv under /var/tmp (removed afterwards, never in the repo or the
product), the CPU wheel of torch, the vLLM wheel from the package index without its dependencies
(``pip install --no-deps``; the same wheel, by sha256, that scripts/gen-vllm-cli-data.py reads statically),
then only what importing the parser needs: scripts/releases/argparse_probe.py is run in the venv, and each
module it cannot import is installed (vLLM's own requirement spec when it is a direct dependency, with its
dependencies, torch held at the CPU wheel) until the parser builds. Nothing is stubbed. vLLM picks its
platform from plugins; none of its built-in ones is detected on a machine without a GPU, so the venv gets a
platform plugin (vLLM's entry-point group ``vllm.platform_plugins``, as vllm-ascend registers its NPU
platform) that selects vLLM's own CpuPlatform. The platform's only hook into the parser is
``pre_register_and_update(parser)``, which CpuPlatform does not override; the probe checks that and the
recording says so (``platform_adds_to_parser``: false).

Writes scripts/releases/inputs/argparse/vllm-<version>.json: every option string (the ``--no-*`` forms that
BooleanOptionalAction adds included), switch or value, and provenance (wheel file and sha256, python, torch,
the packages installed, date). Needs the network; not run in CI (make releases-argparse).

    python scripts/releases/record-argparse.py [VERSION...] [--download-dir DIR] [--torch 2.13.0]

Without versions: every vLLM version a recorded release (scripts/releases/inputs/<tag>.json) is built on that
has no recording yet.
"""
import argparse
import datetime
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import importlib.util

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
INPUTS = HERE / "inputs"
OUT = INPUTS / "argparse"
PROBE = HERE / "argparse_probe.py"
PLATFORM_QUALNAME = "vllm.platforms.cpu.CpuPlatform"
# Import name -> distribution name, where they differ and the distribution is not one of vLLM's direct
# requirements under its own name.
DISTRIBUTIONS = {
    "yaml": "pyyaml", "PIL": "pillow", "zmq": "pyzmq", "cv2": "opencv-python-headless", "cpuinfo": "py-cpuinfo",
    "google": "protobuf", "huggingface_hub": "huggingface-hub", "multipart": "python-multipart",
    "dateutil": "python-dateutil", "pythonjsonlogger": "python-json-logger", "sklearn": "scikit-learn",
}
MAX_ROUNDS = 80
_SPEC = importlib.util.spec_from_file_location("gen_vllm_cli_data", ROOT / "scripts" / "gen-vllm-cli-data.py")
GEN = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(GEN)  # its wheel_for: the same download, into the same directory


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def direct_requirements(metadata_text):
    """{normalised name: requirement spec without extras or markers} of a METADATA's unconditional Requires-Dist."""
    found = {}
    for line in metadata_text.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        spec, _sep, marker = line.split(":", 1)[1].partition(";")
        if "extra ==" in marker:
            continue
        spec = re.sub(r"\[[^\]]*\]", "", spec).strip()
        found[normalise(re.split(r"[<>=!~ (]", spec, maxsplit=1)[0])] = spec.replace(" ", "")
    return found


def missing_requirement(stderr, requirements):
    """What an import failure (the probe's stderr) says to install, as a pip requirement; None when it is not
    a missing module or distribution (then the failure is reported as it is)."""
    dist = re.search(r"The '([^']+)' distribution was not found", stderr)  # transformers' version check
    module = re.search(r"No module named '([^'.]+)", stderr)
    if dist:
        name = dist.group(1)
    elif module:
        name = DISTRIBUTIONS.get(module.group(1), module.group(1))
    else:
        return None
    if normalise(name) in ("vllm", "torch"):
        return None  # a part of vLLM or torch itself: not something to install
    return requirements.get(normalise(re.split(r"[<>=!~ (]", name, maxsplit=1)[0]), name)


def seed(requirements, recordings=OUT):
    """What the parser of the versions recorded before needed, as requirements of this vLLM (its own spec where
    it is a direct dependency); installed in one go before the probe asks for the rest one module at a time."""
    names = {}
    for path in sorted(recordings.glob("vllm-*.json")):
        for spec in json.loads(path.read_text()).get("installed_for_the_parser", []):
            name = normalise(re.split(r"[<>=!~ (]", spec, maxsplit=1)[0])
            names.setdefault(name, spec)
    return [requirements.get(name, names[name]) for name in sorted(names)]


def expected_wheels(inputs=INPUTS):
    """{vLLM version: {file, sha256}} of the wheels the recorded releases were read from."""
    wheels = {}
    for path in sorted(inputs.glob("*.json")):
        entry = json.loads(path.read_text())
        wheels.setdefault(entry["vllm_version"], entry["vllm_dist"])
    return wheels


def add_platform_plugin(site):
    """vLLM's out-of-tree platform mechanism (entry point group vllm.platform_plugins) selecting its CpuPlatform."""
    info = site / "ascendfleet_record_platform-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ascendfleet-record-platform\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[vllm.platform_plugins]\nrecord_cpu = ascendfleet_record_platform:cpu\n")
    (site / "ascendfleet_record_platform.py").write_text("def cpu():\n    return %r\n" % PLATFORM_QUALNAME)


def record(version, wheel, torch):
    venv = pathlib.Path(tempfile.mkdtemp(prefix="vllm-argparse-%s-" % version, dir="/var/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python, pip = str(venv / "bin" / "python"), [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile"]
        subprocess.run(pip + ["torch==%s" % torch], check=True)
        subprocess.run(pip + ["--no-deps", str(wheel)], check=True)
        site = pathlib.Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                           check=True, capture_output=True, text=True).stdout.strip())
        add_platform_plugin(site)
        meta = next(site.glob("vllm-*.dist-info")) / "METADATA"
        requirements = direct_requirements(meta.read_text())
        hold = venv / "hold-torch.txt"
        hold.write_text("torch==%s\n" % torch)
        out = venv / "options.json"
        added = []
        first = seed(requirements, OUT)
        if first:
            # one resolver run for what the parser of earlier recorded versions needed (each pip install is slow)
            print("vllm %s: installing what earlier recordings needed: %s" % (version, " ".join(first)), file=sys.stderr)
            installed = subprocess.run(pip + ["-c", str(hold)] + first, capture_output=True, text=True, check=False)
            if installed.returncode:
                raise SystemExit("vllm %s: pip install %s failed:\n%s" % (version, " ".join(first), installed.stderr[-3000:]))
            added.extend(first)
        for _round in range(MAX_ROUNDS):
            run = subprocess.run([python, str(PROBE), str(out)], capture_output=True, text=True, cwd=str(venv), check=False)
            if run.returncode == 0:
                break
            want = missing_requirement(run.stderr, requirements)
            if want is None or want in added:
                raise SystemExit("vllm %s: the parser does not build:\n%s" % (version, run.stderr[-3000:]))
            print("vllm %s: the parser needs %s" % (version, want), file=sys.stderr)
            installed = subprocess.run(pip + ["-c", str(hold), want], capture_output=True, text=True, check=False)
            if installed.returncode:
                raise SystemExit("vllm %s: pip install %s failed:\n%s" % (version, want, installed.stderr[-3000:]))
            added.append(want)
        else:
            raise SystemExit("vllm %s: the parser still does not build after %d installs" % (version, MAX_ROUNDS))
        result = json.loads(out.read_text())
        freeze = subprocess.run([python, "-m", "pip", "list", "--format=freeze"], check=True, capture_output=True,
                                text=True).stdout.split()
        result["python"] = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                                          check=True, capture_output=True, text=True).stdout.strip()
        result["installed_for_the_parser"] = added
        result["installed_first_from_earlier_recordings"] = first
        result["venv_packages"] = sorted(p for p in freeze if not p.lower().startswith("ascendfleet-record-platform"))
        return result
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="vLLM versions (default: those of recorded releases not recorded yet)")
    parser.add_argument("--download-dir", type=pathlib.Path, default=ROOT / ".cache" / "vllm-wheels")
    parser.add_argument("--torch", default="2.13.0", help="torch version (its CPU wheel) to install (default %(default)s)")
    args = parser.parse_args(argv)
    wheels = expected_wheels()
    versions = args.versions or [v for v in wheels if not (OUT / ("vllm-%s.json" % v)).exists()]
    unknown = [v for v in versions if v not in wheels]
    if unknown:
        raise SystemExit("no recorded release is built on vLLM %s (record the release first: make releases-record)"
                         % " ".join(unknown))
    args.download_dir.mkdir(parents=True, exist_ok=True)
    OUT.mkdir(parents=True, exist_ok=True)
    for version in versions:
        wheel = GEN.wheel_for(version, args.download_dir)
        digest = sha256_of(wheel)
        if (wheel.name, digest) != (wheels[version]["file"], wheels[version]["sha256"]):
            raise SystemExit("vllm %s: %s (sha256 %s) is not the wheel the release data was read from (%s, %s)"
                             % (version, wheel.name, digest, wheels[version]["file"], wheels[version]["sha256"]))
        result = record(version, wheel, args.torch)
        if result["vllm_version"] != version:
            raise SystemExit("vllm %s: the venv imported vLLM %s" % (version, result["vllm_version"]))
        if result["platform"] != PLATFORM_QUALNAME or result["platform_adds_to_parser"]:
            raise SystemExit("vllm %s: built on %s, which adds to the parser: not vLLM's own flags" % (version, result["platform"]))
        result["wheel"] = {"file": wheel.name, "sha256": digest}
        result["recorded"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        result["recorded_by"] = "scripts/releases/record-argparse.py"
        (OUT / ("vllm-%s.json" % version)).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        written = (OUT / ("vllm-%s.json" % version)).relative_to(ROOT)
        print("vllm %s: %d options (%s); written %s" % (version, len(result["options"]), result["platform"], written),
              file=sys.stderr)
    if not versions:
        print("nothing to record", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
