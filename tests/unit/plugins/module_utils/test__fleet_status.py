"""Tests of the fleet verdict and its renderings (plugins/module_utils/_fleet_status.py)."""
import copy
import json
import pathlib

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_status import (
    evaluate,
    render_html,
    render_markdown,
    render_text,
)

RECORDS = json.loads((pathlib.Path(__file__).parents[2] / "fixtures" / "status" / "sim-fleet-records.json").read_text())


def _records():
    return copy.deepcopy(RECORDS)


def _host(fleet, name):
    return next(h for h in fleet["hosts"] if h["host"] == name)


def test_the_sim_fleet_verdicts():
    fleet = evaluate(_records(), "2026-11-30 16:00:00 UTC")
    assert [(h["host"], h["verdict"]) for h in fleet["hosts"]] == [
        ("sim-910b2-seed", "ok"), ("sim-910b3-idle", "attention"), ("sim-a3-16chips", "ok"), ("sim-310p-duo", "failed")]
    assert fleet["summary"] == {"ok": 2, "attention": 1, "failed": 1}
    seed = _host(fleet, "sim-910b2-seed")
    (qwen,) = seed["deployments"]
    assert qwen["reasons"] == []
    assert (qwen["requests_running"], qwen["requests_waiting"], qwen["kv_cache_usage_pct"]) == (3.0, 1.0, 41.5)
    assert qwen["cards"] == [4, 5] and qwen["image_current"] is True
    assert seed["chip_counts"] == {"busy": 6, "idle": 2}


def test_pending_rollout_needs_attention_and_names_both_images():
    (qwen,) = _host(evaluate(_records()), "sim-910b3-idle")["deployments"]
    assert qwen["verdict"] == "attention"
    assert qwen["reasons"] == [
        "runs quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler (its last-known-good), desired "
        "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler: a rollout is pending or was rolled back "
        "(see reports/vllm_compose.md; roll out with playbooks/deploy-qwen.yml)"]


def test_restarting_container_fails_the_host_and_says_why():
    (qwen,) = _host(evaluate(_records()), "sim-310p-duo")["deployments"]
    assert qwen["verdict"] == "failed"
    assert qwen["reasons"][0] == ("container qwen-vllm-ascend-1 is restarting (exit code 1, 6 restarts); "
                                  "read `docker compose -p qwen logs`")
    assert "no last-known-good compose file" in qwen["reasons"][1]


def test_unreachable_host_is_failed_with_the_connection_message():
    records = _records()
    records[0]["observed"] = {"unreachable": True, "msg": "Failed to connect to the host via ssh: timed out"}
    host = _host(evaluate(records), "sim-910b2-seed")
    assert host["verdict"] == "failed"
    assert host["reasons"] == ["Failed to connect to the host via ssh: timed out"]
    host = _host(evaluate([["sim-910b2-seed", {}, {}]]), "sim-910b2-seed")
    assert host["verdict"] == "failed" and "no status gathered" in host["reasons"][0]


def test_health_and_served_name_and_missing_container():
    records = _records()
    records[0]["observed"]["deployments"][0]["probe"]["health_status"] = 503
    records[2]["observed"]["deployments"][0]["probe"]["models"] = ["other"]
    records[1]["observed"]["deployments"] = []
    fleet = evaluate(records)
    assert _host(fleet, "sim-910b2-seed")["deployments"][0]["reasons"][0] == "/health on port 8000: 503"
    assert _host(fleet, "sim-a3-16chips")["deployments"][0]["reasons"][0] == "/v1/models lists other, not Qwen"
    idle = _host(fleet, "sim-910b3-idle")
    assert idle["verdict"] == "failed"
    assert idle["deployments"][0]["reasons"][0].startswith("not running: no container of compose project qwen")


def test_unhealthy_chip_problems_plan_errors_orphans_and_full_kv_cache():
    records = _records()
    seed = records[0]
    seed["observed"]["chips"][7].update(health="Alarm", state="unhealthy")
    seed["observed"]["problems"] = ["NPU ledger /var/lib/ascendfleet/npu-assignments.json is not valid JSON"]
    seed["plan"]["errors"] = ["sim-910b2-seed: deployment qwen: model: not prefetched"]
    seed["observed"]["deployments"][0]["probe"]["metrics"]["kv_cache_usage_pct"] = 97.0
    orphan = copy.deepcopy(seed["observed"]["deployments"][0])
    orphan["name"] = "old-test"
    seed["observed"]["deployments"].append(orphan)
    host = _host(evaluate(records), "sim-910b2-seed")
    assert host["verdict"] == "attention"
    assert host["reasons"] == [
        "NPU ledger /var/lib/ascendfleet/npu-assignments.json is not valid JSON",
        "unhealthy chip(s): davinci7 (Alarm)",
        "desired state invalid: sim-910b2-seed: deployment qwen: model: not prefetched"]
    assert [d["name"] for d in host["deployments"]] == ["qwen", "old-test"]
    assert host["deployments"][0]["reasons"] == ["KV cache 97% full (requests will queue; add cards or replicas)"]
    assert host["deployments"][1]["reasons"][0] == (
        "runs but is not a present deployment in ascendfleet_deployments: an orphan holding port 8000 and card(s) 4, 5 "
        "(remove it with {name: old-test, state: absent} and playbooks/undeploy.yml, or add it)")


def test_text_table_has_one_line_per_deployment_and_a_count():
    lines = render_text(evaluate(_records()))
    assert lines[0].split()[:3] == ["HOST", "STATUS", "DEPLOYMENT"]
    assert len(lines) == 1 + 4 + 1
    assert lines[2].startswith("sim-910b3-idle") and "ATTENTION" in lines[2]
    assert "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler -> :v0.18.0rc1-openeuler " in lines[2]
    assert lines[4].split()[:2] == ["sim-310p-duo", "FAILED"]
    assert lines[-1] == "4 host(s): 2 ok, 1 need attention, 1 failed"


def test_markdown_escapes_pipes_and_lists_every_host():
    records = _records()
    records[3]["observed"]["problems"] = ["docker: a | b"]
    md = render_markdown(evaluate(records, "2026-11-30 16:00:00 UTC"))
    assert "4 host(s): **2 ok**, **1 need attention**, **1 failed**." in md
    assert "a \\| b" in md
    for name in ("sim-910b2-seed", "sim-910b3-idle", "sim-a3-16chips", "sim-310p-duo"):
        assert "## %s:" % name in md


def test_html_is_self_contained_and_escapes_text():
    records = _records()
    records[3]["observed"]["problems"] = ["<script>alert(1)</script>"]
    page = render_html(evaluate(records))
    assert page.startswith("<!DOCTYPE html>")
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    for external in ("http://", "https://", "src=", "<link", "@import", "url("):
        assert external not in page


def test_previous_version_is_shown_when_it_differs():
    records = _records()
    records[0]["observed"]["deployments"][0]["previous"] = {"exists": True, "image": "quay.io/ascend/vllm-ascend:v0.16.0-openeuler"}
    fleet = evaluate(records)
    assert _host(fleet, "sim-910b2-seed")["deployments"][0]["previous_image"] == "quay.io/ascend/vllm-ascend:v0.16.0-openeuler"
    assert "previous quay.io/ascend/vllm-ascend:v0.16.0-openeuler" in render_markdown(fleet)
    assert 'previous <code title="quay.io/ascend/vllm-ascend:v0.16.0-openeuler">v0.16.0-openeuler</code>' in render_html(fleet)


def test_ledger_only_orphan_and_absent_holder_need_attention():
    """Cards held in the ledger by a name nothing explains (no inventory entry, no container)."""
    records = _records()
    seed = records[0]
    seed["observed"]["ledger"]["old-qwen"] = [6, 7]
    seed["observed"]["ledger"]["gone"] = [2]
    seed["plan"]["absent"] = [{"name": "gone", "model": "Qwen/Qwen3-8B"}]
    seed["observed"]["ledger"]["empty"] = []
    host = _host(evaluate(records), "sim-910b2-seed")
    assert host["verdict"] == "attention"
    assert host["reasons"] == [
        "gone has state: absent but the npu_assign ledger still gives it card(s) 2 (run playbooks/deploy-qwen.yml or "
        "playbooks/undeploy.yml to free them)",
        "the npu_assign ledger gives card(s) 6, 7 to old-qwen, which the inventory does not name and which runs no "
        "container: an orphan holding cards (add {name: old-qwen, state: absent} to ascendfleet_deployments and run "
        "playbooks/deploy-qwen.yml to free them)"]
    # The fleet's own deployments in the ledger are no orphans.
    assert _host(evaluate(_records()), "sim-910b2-seed")["reasons"] == []


def _multinode_records(member_state="running"):
    """The seed host's qwen as the head of a two-node deployment, and a second host as its member:
    the member's container shares the head's data, but it runs headless (vllm_status finds no
    answer on its port)."""
    head = _records()[0]
    node = {"members": ["sim-910b2-seed", "sim-member"], "head": "sim-910b2-seed"}
    desired = dict(head["plan"]["deployments"][0])
    head["plan"] = dict(head["plan"], deployments=[],
                        multinode=[dict(desired, multinode=dict(node, role="head"))])
    member = copy.deepcopy(head)
    member["host"] = "sim-member"
    member["plan"]["multinode"] = [dict(desired, multinode=dict(node, role="member"))]
    observed = member["observed"]["deployments"][0]
    observed["probe"] = {"port": 8000, "health_status": None, "health_error": "connection refused", "models": None,
                         "models_error": None, "metrics": {}, "metrics_error": None}
    observed["containers"][0]["state"] = member_state
    return [head, member]


def test_a_multinode_deployment_is_one_entry_with_its_members_and_cards():
    fleet = evaluate(_multinode_records())
    assert fleet["multinode"] == [{
        "name": "qwen", "head": "sim-910b2-seed", "verdict": "ok", "reasons": [],
        "members": [{"host": "sim-910b2-seed", "role": "head", "verdict": "ok", "state": "running", "cards": [4, 5]},
                    {"host": "sim-member", "role": "member", "verdict": "ok", "state": "running", "cards": [4, 5]}],
        "model": "Qwen/Qwen3.5-27B", "image_running": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler",
        "image_desired": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "port": 8000}]
    # A headless member is judged by its container, not by an API it does not open; no orphan either.
    assert [(h["host"], h["verdict"]) for h in fleet["hosts"]] == [("sim-910b2-seed", "ok"), ("sim-member", "ok")]
    text = render_text(fleet)
    assert ("multi-node qwen: OK - head sim-910b2-seed (cards 4,5, running), member sim-member (cards 4,5, running)"
            in text)
    assert any(" qwen (member of sim-910b2-seed) " in line for line in text)
    assert "## Multi-node deployments" in render_markdown(fleet)
    assert 'data-deployment="qwen" data-verdict="ok"' in render_html(fleet)


def test_a_member_that_is_down_makes_the_whole_deployment_need_attention():
    fleet = evaluate(_multinode_records(member_state="exited"))
    (entry,) = fleet["multinode"]
    assert entry["verdict"] == "attention"
    assert entry["reasons"] == ["sim-member (member): container qwen-vllm-ascend-1 is exited (exit code 0, 0 restarts); "
                                "read `docker compose -p qwen logs`"]
    head = _host(fleet, "sim-910b2-seed")
    assert head["verdict"] == "attention"
    assert head["reasons"][-1].startswith("multi-node deployment qwen needs attention: sim-member (member): container")
    assert _host(fleet, "sim-member")["verdict"] == "failed"
    # Without the member's record at all (unreachable, left out), the deployment still needs attention.
    (entry,) = evaluate(_multinode_records()[:1])["multinode"]
    assert entry["verdict"] == "attention"
    assert entry["reasons"] == ["sim-member (member): no status (host unreachable, or not in the run)"]


# The revisions cache layout (issue 29): the container's label names the revision it mounts, the plan
# the revision its name resolves to in the cache now.
COMMIT_A = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
COMMIT_B = "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"


def _revision_records(serving, desired, last_good):
    records = _records()
    seed = records[0]
    seed["observed"]["deployments"][0]["containers"][0]["revision_key"] = serving
    seed["observed"]["deployments"][0]["last_good"]["revision_key"] = last_good
    seed["plan"]["deployments"][0]["revision_key"] = desired
    return records


def test_a_deployment_serving_its_revision_names_it():
    fleet = evaluate(_revision_records(COMMIT_B, COMMIT_B, COMMIT_B))
    (qwen,) = _host(fleet, "sim-910b2-seed")["deployments"]
    assert (qwen["verdict"], qwen["reasons"]) == ("ok", [])
    assert (qwen["revision_key"], qwen["revision_key_desired"]) == (COMMIT_B, COMMIT_B)
    assert "deployment **qwen** (Qwen/Qwen3.5-27B @ 9e2f6b3d8a15): ok;" in render_markdown(fleet)


def test_a_rolled_back_revision_needs_attention_and_names_both():
    (qwen,) = _host(evaluate(_revision_records(COMMIT_A, COMMIT_B, COMMIT_A)), "sim-910b2-seed")["deployments"]
    assert qwen["verdict"] == "attention"
    assert qwen["reasons"] == [
        "serves revision 3c1a4f0e9b7d (its last-known-good), while master resolves to 9e2f6b3d8a15 in the cache: a "
        "rollout is pending or was rolled back (see reports/vllm_compose.md; roll out with playbooks/deploy-qwen.yml)"]


def test_the_flat_layout_rows_carry_no_revision():
    (qwen,) = _host(evaluate(_records()), "sim-910b2-seed")["deployments"]
    assert "revision_key" not in qwen
