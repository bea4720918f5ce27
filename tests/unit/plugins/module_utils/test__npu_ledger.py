# -*- coding: utf-8 -*-
"""The NPU ledger file: format, validation, locking, atomic replace."""

import json
import multiprocessing
import os

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_ledger as ledger


def test_missing_file_is_empty(tmp_path):
    assert ledger.read(str(tmp_path / "none.json")) == {}


def test_round_trip(tmp_path):
    path = str(tmp_path / "sub" / "l.json")
    ledger.write(path, {"b": [7, 6], "a": [0], "gone": []})
    assert ledger.read(path) == {"a": [0], "b": [6, 7]}
    with open(path) as handle:
        assert json.load(handle) == {"version": 1, "assignments": {"a": [0], "b": [6, 7]}}
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"
    assert os.listdir(str(tmp_path / "sub")) == ["l.json"]


def test_blank_file_is_empty(tmp_path):
    path = tmp_path / "l.json"
    path.write_text("")
    assert ledger.read(str(path)) == {}


@pytest.mark.parametrize("text, message", [
    ("{not json", "is not valid JSON"),
    ("[]", "top level must be a JSON object"),
    ('{"version": 2, "assignments": {}}', "unsupported version 2"),
    ('{"version": 1}', "'assignments' must be an object"),
    ('{"version": 1, "assignments": {"q": [1, "x"]}}', "owner 'q' must map to a list"),
    ('{"version": 1, "assignments": {"q": [true]}}', "owner 'q' must map to a list"),
    ('{"version": 1, "assignments": {"q": [1], "r": [1]}}', "device 1 is held by both"),
])
def test_corrupt_ledger_is_reported_not_dropped(tmp_path, text, message):
    path = tmp_path / "l.json"
    path.write_text(text)
    with pytest.raises(ledger.LedgerError) as err:
        ledger.read(str(path))
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert "never reset automatically" in str(err.value)
    assert path.read_text() == text


def _add_owner(path, name):
    with ledger.Lock(path):
        current = ledger.read(path)
        taken = set(d for ids in current.values() for d in ids)
        free = min(set(range(64)) - taken)
        current[name] = [free]
        ledger.write(path, current)


def test_concurrent_writers_do_not_lose_updates(tmp_path):
    path = str(tmp_path / "l.json")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_add_owner, args=(path, "o%d" % i)) for i in range(12)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(30)
        assert proc.exitcode == 0
    result = ledger.read(path)
    assert sorted(result) == sorted("o%d" % i for i in range(12))
    assert sorted(d for ids in result.values() for d in ids) == list(range(12))


def test_lock_file_is_separate_from_the_ledger(tmp_path):
    path = str(tmp_path / "dir" / "l.json")
    with ledger.Lock(path) as lock:
        assert lock.path == path + ".lock"
        assert os.path.exists(path + ".lock")
    assert not os.path.exists(path)
