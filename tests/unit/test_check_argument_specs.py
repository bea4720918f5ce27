"""The defaults <-> argument_specs parity check that `make lint` runs over every role."""
import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-argument-specs.py"


@pytest.fixture()
def checker(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("check_argument_specs", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    return mod


def write_role(root, name, defaults, spec):
    role = root / "roles" / name
    (role / "defaults").mkdir(parents=True)
    (role / "meta").mkdir(parents=True)
    (role / "defaults" / "main.yml").write_text(defaults)
    (role / "meta" / "argument_specs.yml").write_text(spec)


SPEC_OK = """argument_specs:
  main:
    options:
      demo_port:
        type: int
        default: 8000
      demo_name:
        type: str
        required: true
"""


def test_matching_role_passes(checker, tmp_path, capsys):
    write_role(tmp_path, "demo", "demo_port: 8000\n", SPEC_OK)
    assert checker.main() == 0
    assert "1 role(s) checked, 0 problem(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "defaults, spec, message",
    [
        ("demo_port: 8000\ndemo_extra: 1\n", SPEC_OK, "demo_extra has a default but no entry"),
        ("{}\n", SPEC_OK, "demo_port is in meta/argument_specs.yml but has no default"),
        ("demo_port: 8000\ndemo_name: x\n", SPEC_OK, "demo_name is required in meta/argument_specs.yml but also has a default"),
        ("demo_port: 9000\n", SPEC_OK, "demo_port default differs: spec 8000 vs defaults 9000"),
        ("port: 1\n", "argument_specs:\n  main:\n    options:\n      port:\n        default: 1\n", "option port does not carry the role prefix demo_"),
    ],
    ids=["default-without-spec", "spec-without-default", "required-with-default", "different-default", "unprefixed"],
)
def test_drift_is_reported(checker, tmp_path, capsys, defaults, spec, message):
    write_role(tmp_path, "demo", defaults, spec)
    assert checker.main() == 1
    assert message in capsys.readouterr().err


def test_missing_spec_file_is_reported(checker, tmp_path, capsys):
    (tmp_path / "roles" / "demo" / "defaults").mkdir(parents=True)
    assert checker.main() == 1
    assert "demo: meta/argument_specs.yml is missing" in capsys.readouterr().err
