"""Generate plugins/module_utils/_vllm_cli_data.py: what each supported vllm-ascend release's vLLM accepts.

For every vllm-ascend release in RELEASES this reads, from the real sources and without importing vLLM
(it needs torch):

* the exact vLLM pin, from the release's own Dockerfile (``ARG VLLM_TAG=vX.Y.Z``) in a git clone of
  vllm-project/vllm-ascend (``--vllm-ascend-repo``; cloned from GitHub when the path does not exist);
* that vLLM release's wheel from the package index (``pip download vllm==X.Y.Z --no-deps
  --only-binary=:all:`` into ``--download-dir``, reused when present), whose files are parsed with ``ast``:
  - the ``vllm serve`` flags: every ``add_argument`` of ``make_arg_parser``/``subparser_init`` and the
    ``add_cli_args`` methods (engine and frontend), with ``--no-<flag>`` where argparse's
    BooleanOptionalAction adds it (explicitly, or through ``get_kwargs`` for a ``bool`` config field),
    and the fields of the frontend dataclass that ``FrontendArgs.add_cli_args`` turns into flags;
  - the reasoning parsers and tool-call parsers registered by name (lazy-registration tables and
    ``register_module`` decorators);
  - the members of ``CUDAGraphMode`` (the values ``compilation_config.cudagraph_mode`` takes);
* what vllm-ascend adds at the same tag (its platform plugin's ``pre_register_and_update``): flags,
  parsers, and the ``--quantization`` method it appends.

Where `vllm serve`'s parser of a vLLM version has been built from its wheel (scripts/releases/record-argparse.py,
make releases-argparse: a throwaway virtualenv under /var/tmp), the options it recorded under
scripts/releases/inputs/argparse/ are the release's flags; the static reading stays in the release's input, and
each name the two disagree on is explained in STATIC_MISREADINGS (the unit test fails on one that is not).

Provenance (vllm-ascend commit, the Dockerfile line, the wheel's file name and sha256, the sha256 of
every parsed file) is written next to the data. Not run in CI (it needs the network); its output is
recorded per release under scripts/releases/inputs/ (``record``, network), and the data file is rendered
from those inputs offline (``render``, the default: ``make releases``), byte for byte; it prints what
each release changes. tests/unit/test_gen_vllm_cli_data.py checks both (docs/adding-a-release.md).

    python scripts/gen-vllm-cli-data.py record [TAG...] [--vllm-ascend-repo DIR] [--download-dir DIR]
    python scripts/gen-vllm-cli-data.py [render] [--check]
"""
import argparse
import ast
import difflib
import hashlib
import json
import pathlib
import re
import subprocess
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
GENERATOR = "scripts/gen-vllm-cli-data.py"
OUTPUT = ROOT / "plugins" / "module_utils" / "_vllm_cli_data.py"
INPUTS = ROOT / "scripts" / "releases" / "inputs"
# Every vllm-ascend release the collection supports -> the git ref of vllm-project/vllm-ascend its facts are
# read at (the tag; a release branch while the tag does not exist yet, with the reason recorded in "ref_note").
RELEASES = {
    "v0.17.0rc1": "v0.17.0rc1", "v0.18.0rc1": "v0.18.0rc1", "v0.18.0": "v0.18.0", "v0.19.1rc1": "v0.19.1rc1",
    "v0.20.2rc1": "v0.20.2rc1", "v0.21.0rc1": "v0.21.0rc1", "v0.22.1rc1": "v0.22.1rc1", "v0.23.0rc1": "v0.23.0rc1",
    "v0.23.0": "v0.23.0", "v0.24.0rc1": "v0.24.0rc1", "v0.25.1rc1": "v0.25.1rc1",
    "v0.26.0rc1": "releases/v0.26.0rc",
}
REF_NOTES = {
    "v0.26.0rc1": "not tagged in the vllm-ascend snapshot of 2026-08-22 (in preparation); read at the head of the "
                  "release branch releases/v0.26.0rc",
}
# Image tag suffix of each Dockerfile of a release (.github/workflows/schedule_image_build_and_push.yaml).
DOCKERFILE_VARIANT = {
    "Dockerfile": "", "Dockerfile.openEuler": "-openeuler", "Dockerfile.a3": "-a3",
    "Dockerfile.a3.openEuler": "-a3-openeuler", "Dockerfile.310p": "-310p",
    "Dockerfile.310p.openEuler": "-310p-openeuler", "Dockerfile.a5": "-a5", "Dockerfile.a5.openEuler": "-a5-openeuler",
}
# The facts every release in the data has (the unit test and --check fail on a release without one).
FACTS = ("cudagraph_modes", "flags", "images", "reasoning_parsers", "source_files", "tool_call_parsers",
         "vllm_ascend", "vllm_dist", "vllm_pin", "vllm_version")
VLLM_ASCEND_GIT = "https://github.com/vllm-project/vllm-ascend.git"
# Files of the wheel that build the `vllm serve` parser, and the functions in them that add arguments.
PARSER_FILES = ("vllm/entrypoints/openai/cli_args.py", "vllm/engine/arg_utils.py", "vllm/entrypoints/cli/serve.py")
PARSER_FUNCS = {"make_arg_parser", "add_cli_args", "subparser_init", "_customize_cli_kwargs"}
# Flags every vLLM this collection supports has; the generator fails when one is not found (a parse gap).
MUST_HAVE = ("--host", "--port", "--served-model-name", "--tensor-parallel-size", "--max-model-len",
             "--max-num-seqs", "--reasoning-parser", "--tool-call-parser", "--enable-auto-tool-choice",
             "--compilation-config", "--enable-prefix-caching", "--no-enable-prefix-caching",
             "--gpu-memory-utilization", "--api-key", "--speculative-config", "--headless")
SWITCH_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version"}
# Where the static reading of a wheel (serve_flags) and `vllm serve`'s parser as vLLM builds it
# (scripts/releases/record-argparse.py, inputs/argparse/) disagree: {vLLM version: {option: why}}. The data
# takes argparse's answer; tests/unit/test_gen_vllm_cli_data.py fails on a disagreement not listed here.
_HF_TOKEN = ("ModelConfig.hf_token is `bool | str | None`; get_kwargs of this vLLM's arg_utils.py has a branch for exactly "
             "{bool, str, None} before its bool branch (type=str, nargs='?': a bare --hf-token is True, else the token), "
             "so there is no BooleanOptionalAction and no --no-hf-token; the static reading (ClassIndex.is_bool) takes "
             "any field holding bool for a switch")
STATIC_MISREADINGS = {
    "0.21.0": {"--hf-token": _HF_TOKEN, "--no-hf-token": _HF_TOKEN},
    "0.22.1": {"--hf-token": _HF_TOKEN, "--no-hf-token": _HF_TOKEN},
    "0.23.0": {"--hf-token": _HF_TOKEN, "--no-hf-token": _HF_TOKEN},
    "0.24.0": {"--hf-token": _HF_TOKEN, "--no-hf-token": _HF_TOKEN},
    "0.25.1": {"--hf-token": _HF_TOKEN, "--no-hf-token": _HF_TOKEN},
    "0.26.0": {"--hf-token": _HF_TOKEN, "--no-hf-token": _HF_TOKEN},
}


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- vllm-ascend side


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def vllm_pin(repo, tag):
    """The vLLM tag a vllm-ascend release's Dockerfile clones (``tag``: a git ref), with the line it came from."""
    text = git(repo, "show", "%s:Dockerfile" % tag).decode()
    match = re.search(r"^ARG VLLM_TAG=v?(\S+)\s*$", text, re.M)
    if not match:
        raise SystemExit("%s: no 'ARG VLLM_TAG=' in Dockerfile" % tag)
    return match.group(1), match.group(0).strip(), sha256(text.encode())


def ascend_additions(repo, tag):
    """What vllm-ascend's plugin adds to vLLM's CLI at `tag`: flags, parsers, quantization methods."""
    files = [p for p in git(repo, "ls-tree", "-r", "--name-only", tag, "vllm_ascend").decode().split()
             if p.endswith(".py")]
    flags, reasoning, tools, quant, hashes = set(), set(), set(), set(), {}
    constants = {}
    for path in files:
        data = git(repo, "show", "%s:%s" % (tag, path))
        tree = ast.parse(data)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        constants[target.id] = node.value.value
        touched = False
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "pre_register_and_update":
                touched = True
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                        if call.func.attr == "add_argument":
                            flags.update(a.value for a in call.args if isinstance(a, ast.Constant))
                        elif call.func.attr == "append" and "quant" in ast.unparse(call.func.value):
                            quant.update(ast.unparse(a) for a in call.args)
            names = registered_names(node)
            if names:
                touched = True
                (reasoning if names[0] == "reasoning" else tools).update(names[1])
        if touched:
            hashes[path] = sha256(data)
    quant = {constants.get(q, q.strip("'\"")) for q in quant}
    return {"flags": sorted(flags), "reasoning_parsers": sorted(reasoning), "tool_call_parsers": sorted(tools),
            "quantization_methods": sorted(quant), "source_files": hashes}


def image_cann(repo, ref):
    """{image tag suffix: {"dockerfile", "from", "cann"}} from every Dockerfile of the release at ``ref``.

    The base image is ``quay.io/ascend/cann:<CANN>-<chip>-<os>-py<X>``; from v0.26 the FROM line takes
    ``ARG CANN_VERSION`` / ``BASE_OS`` / ``CANN_QUAY_URL``, whose defaults are substituted here.
    """
    names = git(repo, "ls-tree", "--name-only", ref).decode().split()
    images = {}
    for name in sorted(n for n in names if n in DOCKERFILE_VARIANT):
        text = git(repo, "show", "%s:%s" % (ref, name)).decode()
        args = {m.group(1): m.group(2) for m in re.finditer(r'^ARG (\w+)="?([^"\s]*)"?\s*$', text, re.M)}
        line = re.search(r"^FROM (\S+)", text, re.M)
        if not line:
            raise SystemExit("%s:%s: no FROM line" % (ref, name))
        base = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), line.group(1))
        cann = re.fullmatch(r"[^:]+/cann:(\d+\.\d+\.\d+(?:[.-](?:rc|beta|alpha)\.?\d+)?)-.+", base, re.I)
        if not cann:
            raise SystemExit("%s:%s: cannot read the CANN version of %r" % (ref, name, base))
        images[DOCKERFILE_VARIANT[name]] = {"dockerfile": name, "from": base, "cann": cann.group(1),
                                            "sha256": sha256(text.encode())}
    return images


# --------------------------------------------------------------------------- vLLM wheel side


def registered_names(node):
    """('reasoning'|'tool', names) for a parser registration call/decorator, else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    owner = ast.unparse(node.func.value)
    kind = "reasoning" if "ReasoningParserManager" in owner else "tool" if "ToolParserManager" in owner else None
    if kind is None or node.func.attr not in ("register_module", "register_lazy_module"):
        return None
    values = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "name"]
    names = []
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            names.append(value.value)
        elif isinstance(value, (ast.List, ast.Tuple)):
            names.extend(e.value for e in value.elts if isinstance(e, ast.Constant))
    return (kind, names) if names else None


def parser_tables(files, prefix):
    """Names from `_..._PARSERS_TO_REGISTER = {name: ...}` tables and register decorators under `prefix`."""
    names = set()
    used = {}
    for path, data in files.items():
        if not path.startswith(prefix):
            continue
        tree = ast.parse(data)
        for node in ast.walk(tree):
            hit = False
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                target = node.targets[0]
                if isinstance(target, ast.Name) and re.fullmatch(r"_\w*PARSERS_TO_REGISTER", target.id):
                    names.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
                    hit = True
            found = registered_names(node)
            if found and found[1] and all(isinstance(n, str) for n in found[1]):
                # register_lazy_module(name, ...) inside the loop over the table has a Name, not a str
                names.update(found[1])
                hit = True
            if hit:
                used[path] = sha256(data)
    return sorted(names), used


class ClassIndex:
    """Dataclass fields by class name (with bases) across the parsed modules; module-level aliases."""

    def __init__(self, trees):
        self.classes = {}
        self.aliases = {}
        self.dataclasses = set()
        for tree in trees:
            for node in tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self.aliases.setdefault(node.targets[0].id, node.value)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None \
                        and "TypeAlias" in ast.unparse(node.annotation):
                    self.aliases.setdefault(node.target.id, node.value)
                elif isinstance(node, ast.ClassDef):
                    fields = {}
                    for stmt in node.body:
                        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                            ann = stmt.annotation
                            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                                ann = ast.parse(ann.value, mode="eval").body
                            if re.match(r"(typing\.)?(ClassVar|InitVar)\b", ast.unparse(ann)):
                                continue
                            fields[stmt.target.id] = ann
                    bases = [ast.unparse(b).rsplit(".", maxsplit=1)[-1] for b in node.bases]
                    self.classes.setdefault(node.name, (bases, fields))
                    decorators = " ".join(ast.unparse(d) for d in node.decorator_list)
                    if re.search(r"dataclass|config", decorators):
                        self.dataclasses.add(node.name)

    def fields(self, name, depth=0):
        bases, own = self.classes.get(name, ([], {}))
        merged = {}
        for base in bases if depth < 8 else ():
            merged.update(self.fields(base, depth + 1))
        merged.update(own)
        return merged

    def names_in(self, ann, depth=0):
        names = set()
        for node in ast.walk(ann):
            if isinstance(node, ast.Name):
                names.add(node.id)
                if depth < 4 and node.id in self.aliases:
                    names |= self.names_in(self.aliases[node.id], depth + 1)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and depth < 4:
                try:
                    names |= self.names_in(ast.parse(node.value, mode="eval").body, depth + 1)
                except SyntaxError:
                    pass
        return names

    def is_bool(self, ann):
        """get_kwargs' rule: a dataclass-typed field parses JSON; else a field whose type holds bool is a switch."""
        names = self.names_in(ann)
        return "bool" in names and not (names & self.dataclasses) and "Literal" not in names


def serve_flags(files):
    """{flag: 'switch'|'value'} of `vllm serve`, read from the parser-building functions."""
    config_trees = [ast.parse(d) for p, d in files.items() if p.startswith("vllm/config")]
    parser_trees = {p: ast.parse(files[p]) for p in PARSER_FILES if p in files}
    index = ClassIndex(config_trees + list(parser_trees.values()))
    flags = {}

    def add(names, switch, negatable):
        for name in names:
            flags[name] = "switch" if switch else flags.get(name, "value")
            if negatable and name.startswith("--"):
                flags["--no-" + name[2:]] = "switch"

    for path, tree in parser_trees.items():
        for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)] + [tree]:
            for func in cls.body:
                if not (isinstance(func, ast.FunctionDef) and func.name in PARSER_FUNCS):
                    continue
                owner = cls.name if isinstance(cls, ast.ClassDef) else None
                kwargs_of, overrides, extra, removed = {}, {}, {}, set()
                for node in ast.walk(func):
                    # X = get_kwargs(Cls) / get_kwargs(cls)
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                            and ast.unparse(node.value.func).endswith("get_kwargs") and node.value.args:
                        target = ast.unparse(node.targets[0])
                        arg = ast.unparse(node.value.args[0])
                        kwargs_of[target] = "FrontendArgs" if arg == "cls" else arg
                    # X["field"]["action"|"flags"] = value
                    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
                        sub = node.targets[0]
                        if isinstance(sub.value, ast.Subscript) and isinstance(sub.slice, ast.Constant):
                            field = sub.value.slice.value if isinstance(sub.value.slice, ast.Constant) else None
                            if sub.slice.value == "action":
                                overrides[field] = ast.unparse(node.value)
                            elif sub.slice.value == "flags" and isinstance(node.value, (ast.List, ast.Tuple)):
                                extra[field] = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
                    if isinstance(node, ast.Delete):
                        for t in node.targets:
                            if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant):
                                removed.add(t.slice.value)
                for node in ast.walk(func):
                    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and node.func.attr == "add_argument"):
                        continue
                    names = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")]
                    action = next((ast.unparse(k.value) for k in node.keywords if k.arg == "action"), None)
                    star = next((k.value for k in node.keywords if k.arg is None), None)
                    if isinstance(star, ast.Dict):
                        # **{**X["field"], "default": None, ...}
                        for key, value in zip(star.keys, star.values):
                            if isinstance(key, ast.Constant) and key.value == "action":
                                action = ast.unparse(value)
                        star = next((v for k, v in zip(star.keys, star.values) if k is None), None)
                    dynamic = any(isinstance(a, ast.JoinedStr) for a in node.args)
                    if dynamic:
                        # for key, value in X.items(): add_argument(*flags, f"--{key.replace('_', '-')}", **value)
                        source = kwargs_of.get(ast.unparse(star)) if star is not None else None
                        if source is None:
                            source = next(iter(kwargs_of.values()), owner)
                        for field, ann in index.fields(source).items():
                            if field in removed:
                                continue
                            act = overrides.get(field)
                            negatable = index.is_bool(ann) if act is None else act.endswith("BooleanOptionalAction")
                            switch = negatable or (act is not None and act.strip("'\"") in SWITCH_ACTIONS)
                            add(["--" + field.replace("_", "-")] + extra.get(field, []), switch, negatable)
                        continue
                    if not names:
                        continue
                    if action is not None:
                        negatable = action.endswith("BooleanOptionalAction")
                        add(names, negatable or action.strip("'\"") in SWITCH_ACTIONS, negatable)
                    elif isinstance(star, ast.Subscript) and isinstance(star.slice, ast.Constant):
                        source = kwargs_of.get(ast.unparse(star.value))
                        ann = index.fields(source).get(star.slice.value) if source else None
                        act = overrides.get(star.slice.value)
                        negatable = (ann is not None and index.is_bool(ann)) if act is None else act.endswith("BooleanOptionalAction")
                        add(names, negatable, negatable)
                    else:
                        add(names, False, False)
    return dict(sorted(flags.items()))


def cudagraph_modes(files):
    for path, data in files.items():
        if not path.startswith("vllm/config"):
            continue
        for node in ast.walk(ast.parse(data)):
            if isinstance(node, ast.ClassDef) and node.name == "CUDAGraphMode":
                return [t.id for s in node.body if isinstance(s, ast.Assign) for t in s.targets
                        if isinstance(t, ast.Name) and t.id.isupper()], path
    raise SystemExit("no class CUDAGraphMode under vllm/config")


def wheel_for(version, download_dir):
    found = sorted(download_dir.glob("vllm-%s-*.whl" % version))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "vllm==%s" % version, "--no-deps",
                        "--only-binary=:all:", "-d", str(download_dir)], check=True)
        found = sorted(download_dir.glob("vllm-%s-*.whl" % version))
    if not found:
        raise SystemExit("vllm==%s: no wheel on the package index" % version)
    return found[0]


def read_wheel(path):
    wanted = re.compile(r"vllm/(config|engine|entrypoints|reasoning|tool_parsers|utils)/.*\.py$|vllm/config\.py$")
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist() if wanted.match(n)}


def vllm_facts(wheel):
    files = read_wheel(wheel)
    flags = serve_flags(files)
    missing = [f for f in MUST_HAVE if f not in flags]
    if missing:
        raise SystemExit("%s: parse gap, flags not found: %s" % (wheel.name, " ".join(missing)))
    reasoning, r_files = parser_tables(files, "vllm/reasoning/")
    tools, t_files = parser_tables(files, "vllm/tool_parsers/")
    if not tools:
        tools, t_files = parser_tables(files, "vllm/entrypoints/openai/tool_parsers/")
    modes, mode_file = cudagraph_modes(files)
    used = {p: sha256(files[p]) for p in PARSER_FILES if p in files}
    used.update(r_files)
    used.update(t_files)
    used[mode_file] = sha256(files[mode_file])
    return {"flags": flags, "reasoning_parsers": reasoning, "tool_call_parsers": tools,
            "cudagraph_modes": modes, "source_files": dict(sorted(used.items()))}


def record(repo, download_dir, tag):
    """Read one release's facts from the vllm-ascend clone and the vLLM wheel (network, slow)."""
    ref = RELEASES[tag]
    version, line, dockerfile_hash = vllm_pin(repo, ref)
    wheel = wheel_for(version, download_dir)
    facts = vllm_facts(wheel)
    ascend = ascend_additions(repo, ref)
    entry = {
        "vllm_version": version,
        "vllm_pin": {"file": "Dockerfile", "line": line, "sha256": dockerfile_hash,
                     "vllm_ascend_commit": git(repo, "rev-list", "-n1", ref).decode().strip()},
        "vllm_dist": {"file": wheel.name, "sha256": sha256(wheel.read_bytes())},
        **facts,
        "vllm_ascend": ascend,
        "images": image_cann(repo, ref),
    }
    if ref != tag:
        entry["vllm_pin"]["ref"] = ref
        entry["vllm_pin"]["ref_note"] = REF_NOTES[tag]
    print("%-11s vllm %-7s %4d flags, %2d reasoning parsers, %2d tool-call parsers, cudagraph %s; ascend adds %s; CANN %s"
          % (tag, version, len(facts["flags"]), len(facts["reasoning_parsers"]), len(facts["tool_call_parsers"]),
             "/".join(facts["cudagraph_modes"]), ascend["quantization_methods"] or "nothing",
             ", ".join("%s=%s" % (v or "A2", i["cann"]) for v, i in sorted(entry["images"].items()))), file=sys.stderr)
    return entry


def load_inputs(inputs=INPUTS, argparse_wins=True):
    """The recorded facts of every release: {tag: facts} from inputs/<tag>.json (the static reading), with the
    flags of `vllm serve`'s parser as vLLM builds it (inputs/argparse/vllm-<version>.json) where recorded."""
    releases = {}
    for path in sorted(inputs.glob("*.json")):
        releases[path.stem] = json.loads(path.read_text())
    if argparse_wins:
        recordings = load_argparse(inputs)
        for tag, entry in releases.items():
            recording = recordings.get(entry.get("vllm_version"))
            if recording is None:
                entry["flags_source"] = "static: the wheel's parser-building code read with ast"
                continue
            if recording["wheel"] != entry.get("vllm_dist"):
                raise SystemExit("%s: %s records %s, not the wheel the release was read from (%s)"
                                 % (tag, recording["path"], recording["wheel"], entry.get("vllm_dist")))
            entry["flags"] = dict(recording["options"])
            entry["flags_source"] = "argparse: vllm serve's parser built from the wheel (%s)" % recording["path"]
    return releases


def load_argparse(inputs=INPUTS):
    """{vLLM version: recording} of scripts/releases/record-argparse.py (make releases-argparse)."""
    recordings = {}
    for path in sorted((inputs / "argparse").glob("vllm-*.json")):
        recording = json.loads(path.read_text())
        recording["path"] = "scripts/releases/inputs/argparse/%s" % path.name
        recordings[recording["vllm_version"]] = recording
    return recordings


def static_vs_argparse(inputs=INPUTS):
    """{vLLM version: {option: (static reading's kind, argparse's kind)}} where they differ (None: absent), for every
    vLLM version with an argparse recording; argparse's own -h/--help are not compared (the static reading
    leaves them out, and they are no serve setting)."""
    static = load_inputs(inputs, argparse_wins=False)
    found = {}
    for version, recording in sorted(load_argparse(inputs).items()):
        flags = next((e["flags"] for e in static.values() if e["vllm_version"] == version), None)
        if flags is None:
            continue
        parsed = recording["options"]
        found[version] = {name: (flags.get(name), parsed.get(name)) for name in sorted(set(flags) | set(parsed))
                          if flags.get(name) != parsed.get(name)}
    return found


def unexplained(disagreements, explained=None):
    """Lines naming each static/argparse disagreement without an entry in STATIC_MISREADINGS, and each entry that
    no longer disagrees."""
    explained = STATIC_MISREADINGS if explained is None else explained
    lines = []
    for version, names in sorted(disagreements.items()):
        for name, (static, parsed) in names.items():
            if name not in explained.get(version, {}):
                lines.append("vllm %s %s: the static reading says %s, argparse says %s; explain it in STATIC_MISREADINGS"
                             " of %s (or fix the reading)" % (version, name, static or "absent", parsed or "absent", GENERATOR))
    for version, names in sorted(explained.items()):
        for name in names:
            if version in disagreements and name not in disagreements[version]:
                lines.append("vllm %s %s: listed in STATIC_MISREADINGS but both readings agree; drop the entry"
                             % (version, name))
    return lines


def missing_facts(releases):
    """["<tag>: no <fact>", ...] for every release that lacks one of FACTS (or one not in RELEASES)."""
    problems = []
    for tag in RELEASES:
        if tag not in releases:
            problems.append("%s: not recorded (run: %s record %s)" % (tag, GENERATOR, tag))
    for tag, entry in sorted(releases.items()):
        if tag not in RELEASES:
            problems.append("%s: recorded but not in RELEASES of %s" % (tag, GENERATOR))
        for fact in FACTS:
            if entry.get(fact) in (None, "", [], {}) and not (fact == "vllm_ascend" and isinstance(entry.get(fact), dict)):
                problems.append("%s: no %s" % (tag, fact))
    return problems


def _release_key(tag):
    m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)(?:rc(\d+))?", tag)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)) if m.group(4) else 1 << 30)


def _names(entry, kind):
    if kind == "flags":
        return set(entry["flags"]) | set(entry["vllm_ascend"].get("flags") or [])
    if kind in ("reasoning_parsers", "tool_call_parsers"):
        return set(entry[kind]) | set(entry["vllm_ascend"].get(kind) or [])
    return set(entry[kind])


def changes(old, new):
    """Lines an operator reads: what each release changes against the one before it, and against the committed data."""
    lines = []
    order = sorted(new, key=_release_key)
    for before, tag in zip([None] + order[:-1], order):
        entry = new[tag]
        if before is None:
            continue
        prev = new[before]
        parts = []
        for kind, label in (("flags", "flags"), ("reasoning_parsers", "reasoning parsers"),
                            ("tool_call_parsers", "tool-call parsers"), ("cudagraph_modes", "cudagraph modes")):
            added, removed = sorted(_names(entry, kind) - _names(prev, kind)), sorted(_names(prev, kind) - _names(entry, kind))
            if kind == "flags":
                renamed = []
                for name in list(removed):
                    near = difflib.get_close_matches(name, added, n=1, cutoff=0.85)
                    if near:
                        renamed.append("%s -> %s" % (name, near[0]))
                if renamed:
                    parts.append("  renamed? %s" % ", ".join(renamed))
            if added:
                parts.append("  new %s: %s" % (label, " ".join(added)))
            if removed:
                parts.append("  removed %s: %s" % (label, " ".join(removed)))
        cann_prev = {v: i["cann"] for v, i in prev["images"].items()}
        cann_new = {v: i["cann"] for v, i in entry["images"].items()}
        for variant in sorted(set(cann_prev) | set(cann_new)):
            a, b = cann_prev.get(variant), cann_new.get(variant)
            if a != b:
                parts.append("  CANN of image%s: %s -> %s" % (variant or " (A2)", a or "no image", b or "no image"))
        header = "%s (vLLM %s) against %s (vLLM %s)" % (tag, entry["vllm_version"], before, prev["vllm_version"])
        lines.append(header + (":" if parts else ": no change"))
        lines.extend(parts)
    for tag in sorted(set(new) - set(old), key=_release_key):
        lines.append("added to the data: %s" % tag)
    for tag in sorted(set(old) - set(new), key=_release_key):
        lines.append("removed from the data: %s" % tag)
    for tag in sorted(set(old) & set(new), key=_release_key):
        if old[tag] != new[tag]:
            keys = sorted(k for k in set(old[tag]) | set(new[tag]) if old[tag].get(k) != new[tag].get(k))
            lines.append("changed in the data: %s (%s)" % (tag, ", ".join(keys)))
    return lines


def render(releases):
    body = json.dumps(releases, indent=4, sort_keys=True)  # JSON of str/list/dict only: a Python literal
    return (
        '# -*- coding: utf-8 -*-\n'
        '# Copyright: (c) 2026, ascendfleet.llm contributors\n'
        '# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),\n'
        '# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).\n'
        '# GENERATED by scripts/gen-vllm-cli-data.py (make releases) from its recorded inputs under\n'
        '# scripts/releases/inputs/ (read from the vLLM wheels on the package index and the vllm-ascend\n'
        '# release tags); do not edit by hand, re-run the generator.\n'
        '"""What each supported vllm-ascend release\'s `vllm serve` accepts (flags, parsers, cudagraph modes), and\n'
        'the CANN of each of its images.\n\n'
        'PRIVATE to this collection. Read through plugins/module_utils/_vllm_cli.py.\n'
        '"""\n\n'
        'from __future__ import absolute_import, division, print_function\n\n'
        '__metaclass__ = type\n\n'
        'GENERATOR = "scripts/gen-vllm-cli-data.py"\n'
        'INPUTS = "scripts/releases/inputs"\n\n'
        'RELEASES = %s\n' % body
    )


def read_committed(path):
    """RELEASES of the committed data file (a Python literal after 'RELEASES = '), or {}."""
    if not path.exists():
        return {}
    return json.loads(path.read_text().split("RELEASES = ", 1)[1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=("render", "record"), default="render",
                        help="render (default, offline): write the data from the recorded inputs and print what "
                             "changed; record: read the releases named (default: those not recorded yet) from the "
                             "sources into the inputs")
    parser.add_argument("releases", nargs="*", help="with record: the releases to (re-)read")
    parser.add_argument("--vllm-ascend-repo", type=pathlib.Path, default=ROOT / ".cache" / "vllm-ascend")
    parser.add_argument("--download-dir", type=pathlib.Path, default=ROOT / ".cache" / "vllm-wheels")
    parser.add_argument("--inputs", type=pathlib.Path, default=INPUTS)
    parser.add_argument("--output", type=pathlib.Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="render: fail when the committed file differs, write nothing")
    args = parser.parse_args(argv)
    if args.command == "record":
        tags = args.releases or [t for t in RELEASES if not (args.inputs / ("%s.json" % t)).exists()]
        unknown = [t for t in tags if t not in RELEASES]
        if unknown:
            raise SystemExit("not in RELEASES of %s: %s (add each with the git ref to read it at)" % (GENERATOR, " ".join(unknown)))
        if not args.vllm_ascend_repo.exists():
            subprocess.run(["git", "clone", "--bare", VLLM_ASCEND_GIT, str(args.vllm_ascend_repo)], check=True)
        args.download_dir.mkdir(parents=True, exist_ok=True)
        args.inputs.mkdir(parents=True, exist_ok=True)
        for tag in tags:
            entry = record(args.vllm_ascend_repo, args.download_dir, tag)
            (args.inputs / ("%s.json" % tag)).write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n")
        print("recorded %s; now run: make releases" % " ".join(tags) if tags else "nothing to record", file=sys.stderr)
        return 0
    releases = load_inputs(args.inputs)
    problems = missing_facts(releases)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    text = render(releases)
    old = args.output.read_text() if args.output.exists() else ""
    for line in changes(read_committed(args.output), releases):
        print(line)
    for version, names in sorted(static_vs_argparse(args.inputs).items()):
        print("vllm %s: argparse settles %s" % (version, ", ".join(
            "%s (static: %s, argparse: %s)" % (n, a or "absent", b or "absent") for n, (a, b) in names.items())
            if names else "nothing: both readings agree"))
    for line in unexplained(static_vs_argparse(args.inputs)):
        print(line, file=sys.stderr)
    if args.check:
        print("up to date" if old == text else "%s differs from what %s writes from %s" % (args.output, GENERATOR, args.inputs),
              file=sys.stderr)
        return 0 if old == text else 1
    if old != text:
        args.output.write_text(text)
        print("wrote %s" % args.output, file=sys.stderr)
    else:
        print("%s is up to date" % args.output, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
