"""The compose file of the revisions cache layout (issue 29): a deployment the planner gave a
``mount_source`` mounts exactly that one revision directory, read-only, where vLLM reads the model
(the command line does not change), and a label names the revision; without it (the flat layout)
the file is byte for byte what it was (the whole ``<cache>/models``, no label)."""
import yaml

from tests.unit.roles.vllm_compose.test_vllm_compose_label import render

CACHE = "/var/lib/ascendfleet/modelscope"
COMMIT_A = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
COMMIT_B = "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"
CONTAINER = "/root/.cache/modelscope/hub/models/Qwen/Qwen3.5-27B"


def revision(key):
    return {"revision_key": key, "mount_source": "%s/revisions/Qwen/Qwen3.5-27B/%s" % (CACHE, key),
            "container_model_path": CONTAINER}


def test_flat_layout_mounts_the_models_directory_as_before():
    service = yaml.safe_load(render(""))["services"]["vllm-ascend"]
    assert service["volumes"][0] == CACHE + "/models:/root/.cache/modelscope/hub/models:ro"
    assert "io.ascendfleet.llm.revision_key" not in service["labels"]
    # A planned deployment of the flat layout carries no revision fields (the planner adds none).
    assert render("", revision_key=None, mount_source=None) == render("")


def test_revisions_layout_mounts_one_revision_read_only():
    service = yaml.safe_load(render("", **revision(COMMIT_A)))["services"]["vllm-ascend"]
    model_mounts = [v for v in service["volumes"] if "modelscope" in v]
    assert model_mounts == [CACHE + "/revisions/Qwen/Qwen3.5-27B/" + COMMIT_A + ":" + CONTAINER + ":ro"]
    assert service["labels"]["io.ascendfleet.llm.revision_key"] == COMMIT_A
    assert service["command"][2] == CONTAINER  # vLLM serves the same path


def test_a_moved_branch_changes_the_compose_file():
    # What makes the plan see a change and the rollout gate it like a new image tag.
    a, b = render("", **revision(COMMIT_A)), render("", **revision(COMMIT_B))
    assert a != b
    assert [line for line in b.splitlines() if line not in a.splitlines()] == [
        '      io.ascendfleet.llm.revision_key: "%s"' % COMMIT_B,
        '      - "%s/revisions/Qwen/Qwen3.5-27B/%s:%s:ro"' % (CACHE, COMMIT_B, CONTAINER)]
