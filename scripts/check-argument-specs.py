"""Fail when a role's defaults/main.yml and meta/argument_specs.yml drift apart.

Every public variable a role reads has a default in defaults/main.yml and a description in
meta/argument_specs.yml (entry point ``main``); the two lists of names must be equal. Options
that are required have no default and are listed only in the spec.
"""
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    problems = []
    roles = sorted(p for p in (ROOT / "roles").glob("*") if p.is_dir())
    for role in roles:
        spec_file = role / "meta" / "argument_specs.yml"
        defaults_file = role / "defaults" / "main.yml"
        if not spec_file.is_file():
            problems.append(f"{role.name}: meta/argument_specs.yml is missing")
            continue
        spec = yaml.safe_load(spec_file.read_text()) or {}
        options = ((spec.get("argument_specs") or {}).get("main") or {}).get("options") or {}
        defaults = {}
        if defaults_file.is_file():
            defaults = yaml.safe_load(defaults_file.read_text()) or {}
        required = {k for k, v in options.items() if (v or {}).get("required")}
        missing_spec = sorted(set(defaults) - set(options))
        missing_default = sorted(set(options) - set(defaults) - required)
        required_with_default = sorted(required & set(defaults))
        for name in missing_spec:
            problems.append(f"{role.name}: {name} has a default but no entry in meta/argument_specs.yml")
        for name in missing_default:
            problems.append(f"{role.name}: {name} is in meta/argument_specs.yml but has no default (mark it required or add a default)")
        for name in required_with_default:
            problems.append(f"{role.name}: {name} is required in meta/argument_specs.yml but also has a default")
        for name, opt in options.items():
            if not name.startswith(role.name + "_"):
                problems.append(f"{role.name}: option {name} does not carry the role prefix {role.name}_")
            if "default" in (opt or {}) and name in defaults and opt["default"] != defaults[name]:
                problems.append(f"{role.name}: {name} default differs: spec {opt['default']!r} vs defaults {defaults[name]!r}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"argument_specs: {len(roles)} role(s) checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
