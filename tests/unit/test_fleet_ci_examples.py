"""The example pipelines of docs/testing-your-fleet.md are valid for their CI systems, as
judged by the schemas check-jsonschema vendors (GitHub's workflow schema from SchemaStore,
GitLab's own CI schema), and the check catches a broken pipeline."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

TOP = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = TOP / "examples" / "fleet-ci"
TOOL = shutil.which("check-jsonschema", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("check-jsonschema")
CASES = [("github-actions.yml", "vendor.github-workflows"), ("gitlab-ci.yml", "vendor.gitlab-ci")]

pytestmark = pytest.mark.skipif(TOOL is None, reason="check-jsonschema is not installed (make venv)")


def check(schema, path):
    return subprocess.run([TOOL, "--builtin-schema", schema, str(path)], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("name,schema", CASES)
def test_example_pipeline_is_valid(name, schema):
    result = check(schema, EXAMPLES / name)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name,schema,old,new", [
    ("github-actions.yml", "vendor.github-workflows", "runs-on: ubuntu-24.04", "runs_on: ubuntu-24.04"),
    ("gitlab-ci.yml", "vendor.gitlab-ci", "when: always\n", "when: sometimes\n"),
])
def test_a_broken_pipeline_fails_the_check(tmp_path, name, schema, old, new):
    text = (EXAMPLES / name).read_text()
    assert old in text
    broken = tmp_path / name
    broken.write_text(text.replace(old, new))
    assert check(schema, broken).returncode != 0


def test_the_pipelines_run_the_documented_entry_point():
    for name, _schema in CASES:
        text = (EXAMPLES / name).read_text()
        assert re.search(r"make (-C \S+ )?fleet-test", text) and "VAULT_PASSWORD_FILE=" in text and "ROLL_TO=" in text, name
