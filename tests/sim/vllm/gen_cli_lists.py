#!/usr/bin/env python3
"""Simulator build input: the stand-in vllm's own lists of what each release's `vllm serve` accepts.

Test infrastructure only. Writes tests/sim/vllm/cli_lists.json, which the stand-in `vllm`
(vllm_sim.py) reads in the image to refuse unknown flags and parsers as the real one does.

Deliberately independent of the product's generator (scripts/gen-vllm-cli-data.py) and its data
(never imported): the parsers and cudagraph modes come from a scan of the text of the vLLM wheels with
regular expressions (no ast); the flags ("flags") are the option strings of `vllm serve`'s parser as
vLLM itself builds it, read from a recording of that parser (one JSON per vLLM version with an
"options" map, as scripts/releases/record-argparse.py writes them under scripts/releases/inputs/argparse/:
the upstream fact, not the product's reading of it), with the recording's file name and sha256 kept
next to them. A static reading of the source cannot settle every name: the regex scan's flags, kept as
"flags_static", say `--no-hf-token` for vLLM >= 0.21, which argparse never builds (ModelConfig.hf_token
is `bool | str | None`: a value option). The fidelity test tests/sim/test_vllm_cli_fidelity.py
compares both with the product's data, so a mistake in either half shows. The vLLM version each
vllm-ascend release is built on is written below by the sim's maintainer from the release's
Dockerfile (ARG VLLM_TAG); the fidelity test compares it with the product's provenance too.

    tests/sim/vllm/gen_cli_lists.py WHEEL_DIR ARGPARSE_DIR   everything (wheels: pip download vllm==X
                                                              --no-deps --only-binary=:all:)
    tests/sim/vllm/gen_cli_lists.py --flags ARGPARSE_DIR     only the flags, from the parser recordings
                                                              (the wheel-scanned facts are kept; offline)
"""
import hashlib
import json
import pathlib
import re
import sys
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "cli_lists.json"
# vllm-ascend release -> ARG VLLM_TAG of its Dockerfile (github.com/vllm-project/vllm-ascend, tag of the release).
BUILT_ON = {
    "0.17.0rc1": "0.17.0", "0.18.0rc1": "0.18.0", "0.18.0": "0.18.0", "0.19.1rc1": "0.19.1",
    "0.20.2rc1": "0.20.2", "0.21.0rc1": "0.21.0", "0.22.1rc1": "0.22.1", "0.23.0rc1": "0.23.0", "0.23.0": "0.23.0",
    "0.24.0rc1": "0.24.0", "0.25.1rc1": "0.25.1",
    # 0.26.0rc1: not tagged in the vllm-ascend snapshot of 2026-08-22; the head of branch releases/v0.26.0rc.
    "0.26.0rc1": "0.26.0",
}
# What vllm-ascend's platform plugin adds to the serve parser (pre_register_and_update): the
# "ascend" --quantization method only; no flags, no parsers (read in each release's platform.py) up to
# 0.25.1rc1; 0.26.0rc1 also registers the kimi_k3 reasoning and tool-call parsers (not listed here: these
# lists are vLLM's own, as the fidelity test compares them).

CLASS_RE = re.compile(r"^class (\w+)(?:\(([^)\n]*)\))?:[ \t]*$", re.M)
FIELD_RE = re.compile(r"^    ([a-z_][a-z0-9_]*): (.+?)(?: = .*)?$")


def class_bodies(text):
    """{class name: (bases, body text)} for top-level classes."""
    out = {}
    starts = list(CLASS_RE.finditer(text))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[m.end():end]
        stop = re.search(r"^\S", body, re.M)
        out[m.group(1)] = ([b.strip().split(".")[-1] for b in (m.group(2) or "").split(",") if b.strip()],
                           body[:stop.start()] if stop else body)
    return out


def fields_of(classes, name, depth=0):
    bases, body = classes.get(name, ([], ""))
    out = {}
    for base in bases if depth < 6 else ():
        out.update(fields_of(classes, base, depth + 1))
    for line in body.splitlines():
        m = FIELD_RE.match(line)
        if m and not m.group(2).startswith(("ClassVar", "InitVar")) and "(" not in m.group(1):
            out[m.group(1)] = m.group(2)
    return out


def is_switch(annotation, dataclass_names):
    """bool in the field's type, no nested config dataclass and no Literal -> argparse BooleanOptionalAction."""
    words = set(re.findall(r"\w+", annotation))
    return "bool" in words and "Literal" not in words and not (words & dataclass_names)


def scan(wheel):
    with zipfile.ZipFile(wheel) as zf:
        texts = {n: zf.read(n).decode("utf-8") for n in zf.namelist()
                 if re.match(r"vllm/(config|engine|entrypoints|reasoning|tool_parsers)/.*\.py$", n)}
    classes = {}
    for name, text in texts.items():
        if name.startswith("vllm/config/") or name in ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py"):
            for cls, value in class_bodies(text).items():
                classes.setdefault(cls, value)
    dataclass_names = {c for c in classes if c.endswith("Config")}
    flags = set()
    for path in ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/cli/serve.py"):
        text = texts.get(path, "")
        sources = {m.group(1): m.group(2) for m in re.finditer(r"(\w+) = get_kwargs\((\w+)\)", text)}
        actions = {(m.group(1), m.group(2)): m.group(3)
                   for m in re.finditer(r'(\w+)\["(\w+)"\]\["action"\] = ([\w.]+)', text)}
        for m in re.finditer(r"add_argument\(\s*((?:\"-[\w-]+\",\s*)+)(.*?)\)\n", text, re.S):
            names = re.findall(r'"(--?[\w-]+)"', m.group(1))
            rest = m.group(2)
            negatable = re.search(r"action=(argparse\.)?BooleanOptionalAction", rest) is not None
            ref = re.search(r"\*\*(\w+)\[\"(\w+)\"\]", rest)
            if ref and "action=" not in rest:
                source = sources.get(ref.group(1))
                override = actions.get(ref.group(1, 2))
                if override is not None:
                    negatable = override.endswith("BooleanOptionalAction")
                elif source:
                    negatable = is_switch(fields_of(classes, source).get(ref.group(2), ""), dataclass_names)
            for flag in names:
                if flag.startswith("--"):
                    flags.add(flag)
                    if negatable:
                        flags.add("--no-" + flag[2:])
        if re.search(r'add_argument\(\s*\*\w+,\s*f"--\{key\.replace', text):
            var = re.search(r"for key, value in (\w+)\.items\(\):\s*\n\s*extra_flags", text) or \
                re.search(r"for key, value in (\w+)\.items\(\)", text)
            source = sources.get(var.group(1)) if var else None
            source = "FrontendArgs" if source in (None, "cls") else source
            for field, annotation in fields_of(classes, source).items():
                override = actions.get((var.group(1), field)) if var else None
                flag = "--" + field.replace("_", "-")
                flags.add(flag)
                negatable = override.endswith("BooleanOptionalAction") if override else is_switch(annotation, dataclass_names)
                if negatable:
                    flags.add("--no-" + flag[2:])

    def registered(prefix):
        names = set()
        for path, text in texts.items():
            if not path.startswith(prefix):
                continue
            table = re.search(r"_\w*PARSERS_TO_REGISTER = \{(.*?)\n\}", text, re.S)
            if table:
                names.update(re.findall(r'^    "([\w.-]+)": \(', table.group(1), re.M))
            names.update(re.findall(r'register_module\(\s*(?:name=)?"([\w.-]+)"', text))
            for group in re.findall(r"register_module\(\s*(?:name=)?\[([^\]]*)\]", text):
                names.update(re.findall(r'"([\w.-]+)"', group))
        return sorted(names)

    compilation = texts.get("vllm/config/compilation.py", "")
    block = re.search(r"class CUDAGraphMode\(enum\.Enum\):(.*?)\n    def ", compilation, re.S)
    modes = re.findall(r"^    ([A-Z_]+) = ", block.group(1), re.M) if block else []
    tools = registered("vllm/tool_parsers/") or registered("vllm/entrypoints/openai/tool_parsers/")
    return {"flags": sorted(flags), "reasoning_parsers": registered("vllm/reasoning/"), "tool_call_parsers": tools,
            "cudagraph_modes": modes}


def parser_flags(argparse_dir, vllm, wheel_name):
    """The long options of `vllm serve`'s parser as recorded for ``vllm`` (``--no-*`` forms included), and
    where they come from; the recording must be of the same wheel."""
    path = pathlib.Path(argparse_dir) / ("vllm-%s.json" % vllm)
    if not path.is_file():
        raise SystemExit("gen_cli_lists: no recording of vllm %s's parser at %s (scripts/releases/record-argparse.py "
                         "%s writes it)" % (vllm, path, vllm))
    data = path.read_bytes()
    recording = json.loads(data)
    if recording.get("vllm_version") != vllm or recording.get("wheel", {}).get("file") != wheel_name:
        raise SystemExit("gen_cli_lists: %s records vllm %s (%s), not %s (%s)" % (
            path, recording.get("vllm_version"), recording.get("wheel", {}).get("file"), vllm, wheel_name))
    flags = sorted(name for name in recording["options"] if name.startswith("--") and name != "--help")
    return flags, {"file": path.name, "sha256": hashlib.sha256(data).hexdigest()}


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    flags_only = argv[1] == "--flags"
    old = json.loads(OUT.read_text()) if flags_only else {}
    out = {}
    for release, vllm in BUILT_ON.items():
        if flags_only:
            if release not in old:
                raise SystemExit("gen_cli_lists: %s is not in %s yet: run with WHEEL_DIR ARGPARSE_DIR" % (release, OUT))
            entry = dict(old[release])
            entry.setdefault("flags_static", entry["flags"])
        else:
            wheel = sorted(pathlib.Path(argv[1]).glob("vllm-%s-*.whl" % vllm))[0]
            entry = {"vllm": vllm, "wheel": wheel.name, "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
            entry.update(scan(wheel))
            entry["flags_static"] = entry.pop("flags")
        entry["flags"], entry["flags_from"] = parser_flags(argv[2], vllm, entry["wheel"])
        out[release] = entry
        only_parser = sorted(set(entry["flags"]) - set(entry["flags_static"]))
        only_static = sorted(set(entry["flags_static"]) - set(entry["flags"]))
        print("%s: vllm %s, %d flags%s%s" % (release, vllm, len(entry["flags"]),
                                             "; only the parser has " + " ".join(only_parser) if only_parser else "",
                                             "; only the static reading has " + " ".join(only_static) if only_static else ""),
              file=sys.stderr)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
