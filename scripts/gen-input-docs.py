"""Write the schema tables of docs/input-checks.md: every role variable and shared input (the roles'
meta/argument_specs.yml + plugins/module_utils/_inputs.py RULES, joined by ``_inputs.schema``) and
every deployment key (plugins/module_utils/_deploy_schema.py).

Each table sits between its markers (``<!-- BEGIN variable-schema -->`` / ``<!-- END variable-schema -->``,
``<!-- BEGIN deployment-schema -->`` / ``<!-- END deployment-schema -->``) and is never edited by hand.
``--check`` (``make lint``) fails when the file is not what this writes.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.ascendfleet.llm.plugins.filter.inputs import ROLES, role_options  # noqa: E402
from ansible_collections.ascendfleet.llm.plugins.module_utils import _deploy_schema as schema  # noqa: E402
from ansible_collections.ascendfleet.llm.plugins.module_utils import _inputs as inputs  # noqa: E402

DOC = ROOT / "docs" / "input-checks.md"
BEGIN, END = "<!-- BEGIN deployment-schema -->", "<!-- END deployment-schema -->"
VAR_BEGIN, VAR_END = "<!-- BEGIN variable-schema -->", "<!-- END variable-schema -->"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def table():
    rows = ["| key | type | null | range, choices, form | refused | what it is |", "|---|---|---|---|---|---|"]
    for key in sorted(schema.SCHEMA):
        entry = schema.SCHEMA[key]
        kind = entry["type"] + ("/" + entry["elements"] if entry.get("elements") else "")
        if entry["type"] == "raw":
            kind = " or ".join({"dict": "mapping", "str": "JSON string"}[s] for s in entry.get("shape", ()))
        limits = []
        if "choices" in entry:
            limits.append("one of " + ", ".join("`%s`" % c for c in entry["choices"]))
        if "min" in entry or "max" in entry or "min_excl" in entry:
            low = "(%s" % entry["min_excl"] if "min_excl" in entry else "[%s" % entry.get("min", "")
            limits.append("%s, %s]" % (low, entry.get("max", "")))
        if entry.get("pattern") is not None:
            limits.append("`%s` (%s)" % (entry["pattern"].pattern, entry.get("form", "")))
        if entry.get("key_pattern") is not None:
            limits.append("names `%s`, at most %d characters" % (entry["key_pattern"].pattern, schema.ENV_NAME_MAX))
        refused = ", ".join("`%s`" % f for f in sorted(entry.get("forbidden") or {}))
        null = "yes" if entry.get("null", True) else "no"
        fields = (key, kind, null, cell("; ".join(limits)), cell(refused), cell(entry.get("doc", "")))
        rows.append("| `%s` | %s | %s | %s | %s | %s |" % fields)
    return "\n".join(rows)


def describe_rule(rule):
    """What a rule of _inputs.RULES / SHARED_RULES asks, in a few words."""
    if not rule:
        return ""
    kind = rule["kind"]
    if kind == "range":
        text = "[%s, %s]" % (rule.get("min", ""), rule.get("max", ""))
    elif kind == "pattern":
        text = "`%s` (%s)" % (rule["pattern"].pattern, rule["form"])
    else:
        text = {"abspath": "an absolute path, no '..' step", "digest": "`sha256:` + 64 lower-case hex digits",
                "version": "a version such as v0.18.0rc1", "url": "an http(s) URL with a host, no whitespace",
                "nonempty": "not empty", "size": "a size such as 1g or 512m",
                "percent_or_count": "a count >= 1, a percentage 1%-100%, or a list of them"}[kind]
    if rule.get("each"):
        text = "each item " + text
    if rule.get("optional"):
        text += "; empty: unset"
    return text


def describe(spec):
    text = spec.get("description", "")
    if isinstance(text, list):
        text = text[0] if text else ""
    return re.sub(r"[COVIB]\(([^)]*)\)", r"\1", str(text))


def variable_table():
    options = role_options(ROLES)
    rows = ["| variable | type | choices, range, form | reads / read by | what it is |", "|---|---|---|---|---|"]
    for name, entry in sorted(inputs.schema(options).items()):
        spec = entry["spec"]
        kind = spec.get("type", "raw") + ("/" + spec["elements"] if spec.get("elements") else "")
        if isinstance(spec.get("options"), dict):
            kind += " (keys %s)" % ", ".join(sorted(spec["options"]))
        if spec.get("no_log"):
            kind += ", secret"
        limits = []
        if spec.get("choices"):
            limits.append("one of " + ", ".join("`%s`" % (c if c != "" else '""') for c in spec["choices"]))
        if entry["rule"]:
            limits.append(describe_rule(entry["rule"]))
        if name in schema.VARIABLES:
            limits.append("every key as in the deployment schema below")
        if entry["reads"]:
            link = "reads `%s`" % entry["reads"]
        elif entry["readers"]:
            link = "shared input of " + ", ".join("`%s`" % r for r in entry["readers"])
        else:
            link = ""
        what = describe(spec) if name in options else "the shared input (set it in the inventory)"
        rows.append("| `%s` | %s | %s | %s | %s |" % (name, cell(kind), cell("; ".join(limits)), cell(link), cell(what)))
    return "\n".join(rows)


def _replace(text, begin, end, body):
    if begin not in text or end not in text:
        raise SystemExit("%s: the markers %s and %s are missing" % (DOC, begin, end))
    head, rest = text.split(begin, 1)
    _old, tail = rest.split(end, 1)
    return "%s%s\n%s\n%s%s" % (head, begin, body, end, tail)


def render(text):
    return _replace(_replace(text, VAR_BEGIN, VAR_END, variable_table()), BEGIN, END, table())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when docs/input-checks.md is not up to date")
    args = parser.parse_args()
    text = DOC.read_text()
    new = render(text)
    if args.check:
        if new != text:
            print("docs/input-checks.md: a schema table is out of date; run scripts/gen-input-docs.py")
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
