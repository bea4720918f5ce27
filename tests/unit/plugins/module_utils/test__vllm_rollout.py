"""Tests of the rollout state machine (plugins/module_utils/_vllm_rollout.py): every path of role
vllm_compose moves one deployment through it; the expected entries are written by hand from what a
sim host reported (qwen on cards 4 and 5, port 8000, last-known-good v0.17.0rc1 on cards 0 and 1)."""
import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_rollout as sm

DEP = {"name": "qwen", "model": "Qwen/Qwen3-8B", "revision": "master", "port": 8000, "devices": None,
       "image": "quay.io/ascend/vllm-ascend:v0.18.0rc1", "served_model_name": "Qwen3-8B",
       "container_model_path": "/models/Qwen/Qwen3-8B", "tool_call_parser": "hermes"}
# last-good/state.json as vllm_last_good wrote it on the sim host before this change.
LKG = {"device_ids": [0, 1], "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1", "model": "Qwen/Qwen3-8B",
       "model_root": "/models/Qwen/Qwen3-8B", "name": "qwen", "port": 8000, "revision": "master",
       "served_model_name": "Qwen3-8B"}
SHA_NEW, SHA_OLD = "5b1d0c8f" * 5, "9e2a77d1" * 5


def rendered(changed, live, last_good):
    r = sm.step(sm.new("qwen", "sim-1"), [sm.CARDS, sm.IMAGE], cards=[4, 5])
    return sm.step(r, sm.RENDERED, render_changed=changed, live_checksum=live, last_good_checksum=last_good)


def test_a_change_gated_and_recorded_is_deployed():
    r = rendered(True, SHA_NEW, SHA_OLD)
    assert (r["new_config"], r["gate_due"]) == (True, True)
    r = sm.step(r, [sm.STARTED, sm.GATED, sm.RECORDED], fresh=True)
    assert r["history"] == ["planned", "cards held", "image present", "rendered", "started", "gated", "recorded"]
    assert sm.result(r, DEP, "10.0.0.5") == {
        "host": "sim-1", "deployment": "qwen", "model": "Qwen/Qwen3-8B", "cards": [4, 5],
        "image": "quay.io/ascend/vllm-ascend:v0.18.0rc1", "endpoint": "http://10.0.0.5:8000/v1",
        "served_model_name": "Qwen3-8B", "status": "deployed", "reason": ""}


def test_a_live_config_no_gate_passed_on_is_never_kept():
    # A stopped run rendered the file: render changes nothing now, but live != last-good.
    r = rendered(False, SHA_NEW, SHA_OLD)
    assert (r["new_config"], r["gate_due"]) == (True, True)
    r = sm.step(r, sm.STARTED, fresh=False)
    assert r["gate_due"] is True
    with pytest.raises(sm.RolloutError, match="has not passed a gate"):
        sm.step(r, sm.KEPT)
    # No last-known-good at all: the same.
    assert rendered(False, SHA_NEW, "")["gate_due"] is True


def test_last_good_that_compose_left_alone_is_gated_then_unchanged():
    # compose up had nothing to do - which a container restarting under the same file also gives.
    r = sm.step(rendered(False, SHA_OLD, SHA_OLD), sm.STARTED, fresh=False)
    assert (r["new_config"], r["gate_due"]) == (False, True)
    with pytest.raises(sm.RolloutError, match="has not passed a gate"):
        sm.step(r, sm.KEPT)
    r = sm.step(r, [sm.GATED, sm.RECORDED])
    assert sm.status(r) == "unchanged"
    assert sm.result(r, DEP, "10.0.0.5")["cards"] == [4, 5]
    # With proof that it runs as written and answers, it is kept without a gate.
    proven = sm.step(rendered(False, SHA_OLD, SHA_OLD), sm.STARTED, fresh=False, as_written=True)
    assert sm.status(sm.step(proven, sm.KEPT)) == "unchanged"


def test_last_good_started_anew_is_gated_but_keeps_previous():
    # The container was gone: compose recreated it from last-good's file. Gate due, not a new config.
    r = sm.step(rendered(False, SHA_OLD, SHA_OLD), sm.STARTED, fresh=True)
    assert (r["new_config"], r["gate_due"]) == (False, True)


def test_record_only_after_a_gate():
    r = rendered(True, SHA_NEW, SHA_OLD)
    with pytest.raises(sm.RolloutError, match="no transition rendered -> recorded"):
        sm.step(r, sm.RECORDED)
    with pytest.raises(sm.RolloutError, match="no transition started -> recorded"):
        sm.step(sm.step(r, sm.STARTED, fresh=True), sm.RECORDED)


def test_kept_from_rendered_needs_the_containers_as_written():
    r = rendered(False, SHA_OLD, SHA_OLD)
    with pytest.raises(sm.RolloutError, match="as_written"):
        sm.step(r, sm.KEPT)
    assert sm.status(sm.step(r, sm.KEPT, as_written=True)) == "unchanged"


def test_a_failed_gate_restored_reports_the_restored_version_and_its_cards():
    r = sm.step(rendered(True, SHA_NEW, SHA_OLD), sm.STARTED, fresh=True)
    gate = {"failed": True, "reason": "/health: answered HTTP 503 for 30 s",
            "vllm_errors": ["RuntimeError: NPU out of memory"]}
    r = sm.step(r, sm.FAILED, task="Wait until the deployment's own container answers on port 8000", result=gate)
    assert r["reason"] == ("RuntimeError: NPU out of memory - Wait until the deployment's own container answers on "
                           "port 8000: /health: answered HTTP 503 for 30 s")
    r = sm.step(r, [sm.RESTORING, sm.RESTORED], restore_from="last-good", state=LKG, changed=True)
    assert sm.result(r, DEP, "10.0.0.5") == {
        "host": "sim-1", "deployment": "qwen", "model": "Qwen/Qwen3-8B", "cards": [0, 1],
        "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1", "endpoint": "http://10.0.0.5:8000/v1",
        "served_model_name": "Qwen3-8B", "status": "rolled back", "reason": r["reason"]}


def test_a_restore_that_changed_nothing_after_a_failure_is_still_a_rollback():
    r = sm.step(rendered(False, SHA_OLD, SHA_OLD), [sm.STARTED], fresh=True)
    r = sm.step(r, [sm.FAILED, sm.RESTORING, sm.RESTORED], reason="gate: failed", state=LKG, changed=False)
    assert sm.status(r) == "rolled back"


def test_a_failed_restore_is_failed_with_both_reasons():
    r = sm.step(rendered(True, SHA_NEW, SHA_OLD), [sm.STARTED, sm.FAILED], fresh=True, reason="gate: 503")
    r = sm.step(r, sm.RESTORING)
    r = sm.step(r, sm.FAILED, reason="rollback to last-known-good failed too: exited (1)")
    assert sm.status(r) == "failed"
    assert r["reason"] == "gate: 503; rollback to last-known-good failed too: exited (1)"
    entry = sm.result(r, DEP, "10.0.0.5")
    assert (entry["status"], entry["cards"], entry["image"]) == ("failed", [4, 5], DEP["image"])


def test_rollback_on_demand():
    r = sm.step(sm.new("qwen", "sim-1"), [sm.RESTORING, sm.RESTORED], restore_from="previous", state=LKG, changed=True)
    r = sm.step(r, sm.RECORDED)
    assert sm.status(r) == "rolled back" and r["restore_from"] == "previous"
    same = sm.step(sm.new("qwen", "sim-1"), [sm.RESTORING, sm.RESTORED], state=LKG, changed=False)
    assert sm.status(same) == "unchanged" and sm.result(same, DEP, "h")["cards"] == [0, 1]


def test_check_mode():
    r = sm.step(sm.new("qwen", "sim-1"), sm.CARDS, cards=[4, 5])
    with pytest.raises(sm.RolloutError, match="no transition cards held -> rendered"):
        sm.step(r, sm.RENDERED, render_changed=True)
    r = sm.step(r, sm.RENDERED, check_mode=True, render_changed=True)
    assert sm.status(sm.step(r, sm.CHECKED, check_mode=True)) == "would change"
    quiet = sm.step(sm.step(sm.new("qwen"), sm.CARDS, cards=[]), sm.RENDERED, check_mode=True,
                    render_changed=False, live_checksum=SHA_OLD, last_good_checksum=SHA_OLD)
    assert sm.status(sm.step(quiet, sm.CHECKED)) == "unchanged"
    assert sm.status(sm.step(quiet, sm.CHECKED, due=True)) == "would change"


def test_removed_and_absent_entries():
    gone = sm.step(sm.new("qwen", "sim-1"), sm.REMOVED, cards=[4, 5])
    assert sm.result(gone, DEP, "10.0.0.5") == {
        "host": "sim-1", "deployment": "qwen", "model": "Qwen/Qwen3-8B", "cards": [4, 5], "image": "",
        "endpoint": "", "served_model_name": "", "status": "removed", "reason": ""}
    assert sm.status(sm.step(sm.new("qwen"), sm.ABSENT, cards=[])) == "absent"


def test_refusal_entry_and_skipped_gate():
    refused = sm.step(sm.new("(all)", "sim-1"), sm.FAILED, reason="validation: port 80 is taken")
    assert sm.result(refused, {}, "10.0.0.5") == {
        "host": "sim-1", "deployment": "(all)", "model": "", "cards": [], "image": "", "endpoint": "",
        "served_model_name": "", "status": "failed", "reason": "validation: port 80 is taken"}
    skipped = sm.step(rendered(True, SHA_NEW, SHA_OLD), sm.STARTED, fresh=True)
    assert sm.status(skipped) == "not gated"


def test_members_in_the_entry():
    r = sm.step(rendered(False, SHA_OLD, SHA_OLD), sm.KEPT, as_written=True)
    members = [{"host": "sim-1", "cards": [4, 5]}, {"host": "sim-2", "cards": [0, 1]}]
    assert sm.result(r, DEP, "10.0.0.5", members=members)["members"] == members


def test_failure_reason():
    assert sm.failure_reason("Render the compose file of qwen", {"msg": "failed to validate"}) == \
        "Render the compose file of qwen: failed to validate"
    assert sm.failure_reason(None, {"stderr": "no such service"}) == "a task: no such service"
    long = sm.failure_reason("t", {"msg": "x" * 700})
    assert len(long) == len("t: ") + 600 and long.endswith("...")
    assert sm.failure_reason("t", {"msg": "m", "vllm_errors": ["E1", "E2"]}, errors=["L1"]) == "L1 - t: m"


def test_gate_inputs_and_record():
    assert sm.gate_check(DEP, True, True) == {
        "project": "qwen", "port": 8000, "served_model_name": "Qwen3-8B", "model_root": "/models/Qwen/Qwen3-8B",
        "fresh": True, "tool_call_parser": "hermes", "smoke": True}
    assert sm.gate_check(DEP, False, True, restored=LKG) == {
        "project": "qwen", "port": 8000, "served_model_name": "Qwen3-8B", "model_root": "/models/Qwen/Qwen3-8B",
        "fresh": False, "tool_call_parser": "", "smoke": False}
    assert sm.record_state(DEP, ["4", 5]) == dict(LKG, device_ids=[4, 5], image=DEP["image"])


def test_the_table_is_closed_and_bad_input_refused():
    for state, targets in sm.TRANSITIONS.items():
        assert state in sm.STATES and all(t in sm.STATES for t in targets)
    assert set(sm.TRANSITIONS) == set(sm.STATES)
    with pytest.raises(sm.RolloutError, match="no state 'deployed'"):
        sm.step(sm.new("qwen"), "deployed")
    with pytest.raises(sm.RolloutError, match="not a rollout"):
        sm.step({"name": "qwen"}, sm.CARDS)
    with pytest.raises(sm.RolloutError, match="none, it ended"):
        sm.step(sm.step(sm.new("qwen"), sm.ABSENT), sm.CARDS)


def test_a_deployment_without_members_is_a_unit_of_one():
    assert sm.unit(DEP, "sim-1") == {"members": ["sim-1"], "head": "sim-1", "role": "head", "multinode": False}


def test_a_multinode_deployment_is_one_unit_on_its_members():
    # The plan of mn-member for qwen-mn (members [mn-head, mn-member]: _vllm_deploy._member_ranks).
    dep = dict(DEP, name="qwen-mn", multinode={"members": ["mn-head", "mn-member"], "head": "mn-head",
                                               "role": "member", "local": 1, "start_rank": 1})
    assert sm.unit(dep, "mn-member") == {"members": ["mn-head", "mn-member"], "head": "mn-head",
                                         "role": "member", "multinode": True}
    assert sm.unit(dep, "mn-head")["role"] == "head"
    with pytest.raises(sm.RolloutError, match="mn-other is not one of its members mn-head, mn-member"):
        sm.unit(dep, "mn-other")


def test_a_restore_that_fails_says_so_whatever_step_failed():
    gate = {"reason": "not healthy within 12 s: /health: answered HTTP 503", "vllm_errors": []}
    failed = sm.step(rendered(True, SHA_NEW, SHA_OLD), [sm.STARTED, sm.FAILED], fresh=True, task="gate", result=gate)
    back = sm.step(failed, sm.RESTORING, restore_from="last-good")
    again = sm.step(back, sm.FAILED, task="Wait until the deployment's own container answers on port 8000", result=gate)
    assert again["reason"] == ("gate: not healthy within 12 s: /health: answered HTTP 503; rollback to last-known-good "
                               "failed too: Wait until the deployment's own container answers on port 8000: not healthy "
                               "within 12 s: /health: answered HTTP 503")
    assert sm.status(again) == "failed"
    # On demand (rollback.yml to previous/): no failed change before it.
    demand = sm.step(sm.step(sm.new("qwen", "sim-1"), sm.RESTORING, restore_from="previous"), sm.FAILED,
                     task="Ensure the compose project is up for qwen", result={"msg": "port is already allocated"})
    assert demand["reason"] == "rollback to previous/ failed: Ensure the compose project is up for qwen: port is already allocated"
    # A step of the restore that failed before its state was read adds its reason to the failure.
    early = sm.step(failed, sm.FAILED, restore=True, task="Read the last-known-good state of qwen",
                    result={"msg": "file not found"})
    assert early["reason"].endswith("; rollback to last-known-good failed too: Read the last-known-good state of qwen: "
                                    "file not found")
    assert sm.step(failed, sm.FAILED, reason="no state.json")["reason"].endswith("; no state.json")


# --------------------------------------------------------------------------- revisions cache layout (issue 29)

COMMIT_A = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
COMMIT_B = "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"
DEP_B = dict(DEP, revision_key=COMMIT_B, mount_source="/var/lib/ascendfleet/modelscope/revisions/Qwen/Qwen3-8B/" + COMMIT_B)
LKG_A = dict(LKG, revision_key=COMMIT_A)


def test_the_record_names_the_revision_it_serves():
    assert sm.record_state(DEP_B, [4, 5]) == {
        "name": "qwen", "model": "Qwen/Qwen3-8B", "revision": "master", "image": "quay.io/ascend/vllm-ascend:v0.18.0rc1",
        "device_ids": [4, 5], "port": 8000, "served_model_name": "Qwen3-8B", "model_root": "/models/Qwen/Qwen3-8B",
        "revision_key": COMMIT_B}
    assert "revision_key" not in sm.record_state(DEP, [4, 5])  # the flat layout records as before


def test_a_moved_branch_deployed_says_old_to_new():
    r = sm.step(rendered(True, SHA_NEW, SHA_OLD), [sm.STARTED, sm.GATED], fresh=True)
    r = sm.step(r, sm.RECORDED, replaced=LKG_A)
    entry = sm.result(r, DEP_B, "10.0.0.5")
    assert (entry["status"], entry["revision_key"], entry["revision_change"]) == (
        "deployed", COMMIT_B, "revision master: 3c1a4f0e9b7d -> 9e2f6b3d8a15")


def test_no_change_line_without_a_move():
    r = sm.step(rendered(True, SHA_NEW, SHA_OLD), [sm.STARTED, sm.GATED], fresh=True)
    # The image changed, the revision did not; a first record replaces nothing; a flat record names no key.
    for replaced in (dict(LKG, revision_key=COMMIT_B), None, LKG):
        entry = sm.result(sm.step(r, sm.RECORDED, replaced=replaced), DEP_B, "10.0.0.5")
        assert entry["revision_key"] == COMMIT_B and "revision_change" not in entry


def test_a_rolled_back_revision_names_the_old_one():
    r = sm.step(rendered(True, SHA_NEW, SHA_OLD), sm.STARTED, fresh=True)
    r = sm.step(r, sm.FAILED, reason="the stand-in refused revision 9e2f6b3d8a15")
    r = sm.step(r, [sm.RESTORING, sm.RESTORED], restore_from="last-good", state=LKG_A, changed=True)
    entry = sm.result(r, DEP_B, "10.0.0.5")
    assert (entry["status"], entry["revision_key"]) == ("rolled back", COMMIT_A)
    assert "revision_change" not in entry
