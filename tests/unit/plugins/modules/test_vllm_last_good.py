# -*- coding: utf-8 -*-
"""ascendfleet.llm.vllm_last_good through its real entry point, on a project directory in a
temporary directory laid out as vllm_compose leaves it (compose.yaml, an empty last-good/ after
the first render; its compose.yaml as the role rendered it on a sim host). state.json must hold
the bytes the role wrote before this module did: Ansible's own to_nice_json of the state, and a newline."""

import json
import os

import pytest
from ansible.plugins.filter.core import to_nice_json

from ansible_collections.ascendfleet.llm.plugins.modules import vllm_last_good

from .conftest import HERE

FIX = os.path.join(HERE, "fixtures", "vllm_last_good")
STATE = {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master",
         "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "device_ids": [4, 5], "port": 8000,
         "served_model_name": "Qwen", "model_root": "/models/Qwen/Qwen3.5-27B"}


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def mode(path):
    return oct(os.stat(path).st_mode & 0o777)


@pytest.fixture
def project(tmp_path):
    pdir = tmp_path / "qwen"
    (pdir / "last-good").mkdir(parents=True)
    os.chmod(pdir / "last-good", 0o755)
    (pdir / "compose.yaml").write_bytes(read(os.path.join(FIX, "compose-qwen.txt")))
    return pdir


def test_first_record_writes_compose_and_state_as_the_role_did(run_module, project):
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": STATE, "keep_previous": True})
    assert not failed and out["changed"] is True
    assert out["written"] == [str(project / "previous"), str(project / "last-good" / "compose.yaml"),
                              str(project / "last-good" / "state.json")]
    assert read(project / "last-good" / "compose.yaml") == read(os.path.join(FIX, "compose-qwen.txt"))
    assert read(project / "last-good" / "state.json") == (to_nice_json(STATE) + "\n").encode()
    assert mode(project / "last-good" / "state.json") == "0o644" and mode(project / "previous") == "0o755"
    assert os.listdir(project / "previous") == []
    # The same again (a re-run after the change: the compose file did not change): nothing written.
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": STATE})
    assert not failed and out["changed"] is False and out["written"] == []
    # keep_previous copies last-good/ to previous/ whenever it is set.
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": STATE, "keep_previous": True})
    assert out["written"] == [str(project / "previous" / "compose.yaml"), str(project / "previous" / "state.json")]


def test_a_new_tag_keeps_the_old_last_good_as_previous(run_module, project):
    run_module(vllm_last_good.main, {"path": str(project), "state": STATE})
    old_compose = read(project / "compose.yaml")
    new_compose = old_compose.replace(b"v0.17.0rc1", b"v0.18.0rc1")
    assert new_compose != old_compose
    (project / "compose.yaml").write_bytes(new_compose)
    new_state = dict(STATE, image="quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler")
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": new_state, "keep_previous": True,
                                                   "_ansible_diff": True})
    assert not failed and out["changed"] is True
    assert read(project / "previous" / "compose.yaml") == old_compose
    assert json.loads(read(project / "previous" / "state.json"))["image"].endswith("v0.17.0rc1-openeuler")
    assert read(project / "last-good" / "compose.yaml") == new_compose
    assert json.loads(read(project / "last-good" / "state.json"))["image"].endswith("v0.18.0rc1-openeuler")
    assert '"image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"' in out["diff"]["before"]
    assert '"image": "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"' in out["diff"]["after"]


def test_check_mode_writes_nothing(run_module, project):
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": STATE, "keep_previous": True,
                                                   "_ansible_check_mode": True})
    assert not failed and out["changed"] is True and len(out["written"]) == 3
    assert sorted(os.listdir(project)) == ["compose.yaml", "last-good"]
    assert os.listdir(project / "last-good") == []


def test_a_wrong_mode_is_put_right(run_module, project):
    run_module(vllm_last_good.main, {"path": str(project), "state": STATE})
    os.chmod(project / "last-good" / "state.json", 0o600)
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": STATE})
    assert out["written"] == [str(project / "last-good" / "state.json")]
    assert mode(project / "last-good" / "state.json") == "0o644"


def test_no_compose_file_fails_naming_the_directory(run_module, tmp_path):
    failed, out = run_module(vllm_last_good.main, {"path": str(tmp_path / "gone"), "state": STATE})
    assert failed
    assert out["msg"].startswith("cannot record last-known-good in %s: cannot read %s/compose.yaml" % (
        tmp_path / "gone", tmp_path / "gone"))
    assert not (tmp_path / "gone").exists()


def test_the_record_returns_the_state_it_replaced(run_module, project):
    # The fleet summary's "revision master: <old> -> <new>" reads the revision the deployment served before.
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": STATE})
    assert not failed and out["replaced"] is None
    key_a, key_b = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15", "9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c"
    run_module(vllm_last_good.main, {"path": str(project), "state": dict(STATE, revision_key=key_a)})
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": dict(STATE, revision_key=key_b),
                                                   "keep_previous": True})
    assert not failed and out["replaced"] == dict(STATE, revision_key=key_a)
    assert json.loads(read(project / "previous" / "state.json"))["revision_key"] == key_a
    (project / "last-good" / "state.json").write_bytes(b"{not json")
    failed, out = run_module(vllm_last_good.main, {"path": str(project), "state": STATE})
    assert not failed and out["replaced"] is None
