"""scripts/gen-role-docs.py on a fixture role: what it writes, and --check failing on stale docs."""
import importlib.util
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "unit" / "fixtures" / "gen_role_docs"
spec = importlib.util.spec_from_file_location("gen_role_docs", ROOT / "scripts" / "gen-role-docs.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


@pytest.fixture()
def tree(tmp_path):
    shutil.copytree(str(FIX / "roles"), str(tmp_path / "roles"))
    return tmp_path


def _run(tree, *extra):
    return gen.main(["--roles-dir", str(tree / "roles"), "--docs-dir", str(tree / "docs" / "roles")] + list(extra))


def test_generates_the_page_and_the_readme_block(tree):
    assert _run(tree, "--check") == 1          # nothing generated yet: stale
    assert _run(tree) == 0
    assert (tree / "docs" / "roles" / "demo_role.md").read_text() == (FIX / "expected" / "demo_role.md").read_text()
    assert (tree / "roles" / "demo_role" / "README.md").read_text() == (FIX / "expected" / "README.md").read_text()
    assert _run(tree, "--check") == 0


def test_check_fails_when_a_spec_changes_and_names_the_fix(tree, capsys):
    assert _run(tree) == 0
    spec_file = tree / "roles" / "demo_role" / "meta" / "argument_specs.yml"
    spec_file.write_text(spec_file.read_text().replace("default: 8000", "default: 9000"))
    assert _run(tree, "--check") == 1
    err = capsys.readouterr().err
    assert "demo_role.md" in err and "README.md" in err
    assert "run python scripts/gen-role-docs.py" in err
    assert "`9000`" in err                     # the diff shows what changed
    assert (tree / "docs" / "roles" / "demo_role.md").read_text().count("`8000`") == 1   # --check writes nothing


def test_hand_edits_of_generated_docs_are_caught(tree):
    assert _run(tree) == 0
    page = tree / "docs" / "roles" / "demo_role.md"
    page.write_text(page.read_text() + "\nhand-written line\n")
    assert _run(tree, "--check") == 1


def test_page_of_a_removed_role_is_stale(tree):
    assert _run(tree) == 0
    shutil.rmtree(str(tree / "roles" / "demo_role"))
    assert _run(tree, "--check") == 1
    assert _run(tree) == 0
    assert not (tree / "docs" / "roles" / "demo_role.md").exists()


def test_readme_without_markers_is_left_alone(tree):
    readme = tree / "roles" / "demo_role" / "README.md"
    readme.write_text("# demo_role\n\nNo generated block.\n")
    assert _run(tree) == 0
    assert readme.read_text() == "# demo_role\n\nNo generated block.\n"


def test_bad_spec_is_reported(tree, capsys):
    (tree / "roles" / "demo_role" / "meta" / "argument_specs.yml").write_text("argument_specs: {}\n")
    assert _run(tree) == 2
    assert "has no argument_specs entry points" in capsys.readouterr().err
