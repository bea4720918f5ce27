"""Write the deployment schema table of docs/input-checks.md from plugins/module_utils/_deploy_schema.py.

The table sits between the markers ``<!-- BEGIN deployment-schema -->`` and ``<!-- END deployment-schema -->``
and is never edited by hand. ``--check`` (``make lint``) fails when the file is not what this writes.
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.ascendfleet.llm.plugins.module_utils import _deploy_schema as schema  # noqa: E402

DOC = ROOT / "docs" / "input-checks.md"
BEGIN, END = "<!-- BEGIN deployment-schema -->", "<!-- END deployment-schema -->"


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


def render(text):
    if BEGIN not in text or END not in text:
        raise SystemExit("%s: the markers %s and %s are missing" % (DOC, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    _old, tail = rest.split(END, 1)
    return "%s%s\n%s\n%s%s" % (head, BEGIN, table(), END, tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when docs/input-checks.md is not up to date")
    args = parser.parse_args()
    text = DOC.read_text()
    new = render(text)
    if args.check:
        if new != text:
            print("docs/input-checks.md: the deployment schema table is out of date; run scripts/gen-input-docs.py")
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
