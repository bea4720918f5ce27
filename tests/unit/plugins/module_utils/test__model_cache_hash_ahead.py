"""HashAhead (model_fetch's verification): every file of a transfer hashed once, while it runs,
and a file that changed after it was hashed read again - so a corrupt or replaced file is never
vouched for by an earlier read. Expected sha256 values come from hashlib on the bytes written."""

import hashlib
import os
import threading
import time

from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
from ansible_collections.ascendfleet.llm.plugins.module_utils import _model_cache as mc

SHARD = b"\x5a" * (3 << 20) + b"tail"
CONFIG = b'{"architectures": ["Qwen3ForCausalLM"]}\n'


def entry(path, data):
    return {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def later(seconds=10):
    """A clock ``seconds`` ahead: every file on disk counts as settled."""
    return lambda: time.time() + seconds


def land(directory, path, data):
    """Write ``data`` under a temporary name and rename it into place, as rsync and the CLI do."""
    full = os.path.join(str(directory), path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full + ".tmp", "wb") as handle:
        handle.write(data)
    os.replace(full + ".tmp", full)


def test_a_landed_file_is_hashed_once_and_its_hash_reused(tmp_path):
    files = [entry("model.safetensors", SHARD), entry("config.json", CONFIG)]
    land(tmp_path, "model.safetensors", SHARD)
    ahead = mc.HashAhead(str(tmp_path), files, clock=later())
    assert ahead.hash_next() is True
    assert ahead.bytes_read == len(SHARD)
    assert ahead.hash_next() is False  # config.json has not landed; the shard is hashed already
    land(tmp_path, "config.json", CONFIG)
    observed = ahead.observed()
    assert observed == {"model.safetensors": (len(SHARD), files[0]["sha256"]),
                        "config.json": (len(CONFIG), files[1]["sha256"])}
    assert ahead.bytes_read == len(SHARD) + len(CONFIG)  # no byte read twice
    assert facts.verify_entries(files, observed) == []


def test_a_file_changed_after_its_hash_is_read_again(tmp_path):
    files = [entry("model.safetensors", SHARD)]
    land(tmp_path, "model.safetensors", SHARD)
    ahead = mc.HashAhead(str(tmp_path), files, clock=later())
    assert ahead.hash_next() is True
    # Corrupted in place, same size, after it was hashed (a later tick: ctime moves).
    time.sleep(0.05)
    with open(os.path.join(str(tmp_path), "model.safetensors"), "r+b") as handle:
        handle.seek(100)
        handle.write(b"\xa5")
    bad = facts.verify_entries(files, ahead.observed())
    assert len(bad) == 1 and bad[0][0] == "model.safetensors" and bad[0][1].startswith("sha256 ")
    assert ahead.bytes_read == 2 * len(SHARD)


def test_a_file_replaced_after_its_hash_is_read_again(tmp_path):
    good = entry("model.safetensors", SHARD)
    land(tmp_path, "model.safetensors", SHARD)
    ahead = mc.HashAhead(str(tmp_path), [good], clock=later())
    assert ahead.hash_next() is True
    corrupt = bytearray(SHARD)
    corrupt[7] ^= 0xFF
    land(tmp_path, "model.safetensors", bytes(corrupt))  # a new inode under the same name
    assert ahead.observed() == {"model.safetensors": (len(SHARD), hashlib.sha256(bytes(corrupt)).hexdigest())}


def test_unsettled_wrong_size_and_missing_files_are_not_hashed_ahead(tmp_path):
    files = [entry("a.safetensors", SHARD), entry("b.safetensors", SHARD), entry("c.json", CONFIG)]
    land(tmp_path, "a.safetensors", SHARD)
    land(tmp_path, "b.safetensors", SHARD[:-1])
    ahead = mc.HashAhead(str(tmp_path), files, settle=60)  # a.safetensors landed just now
    assert ahead.hash_next() is False and ahead.bytes_read == 0
    observed = ahead.observed()
    # At verification a file is read when its size is the manifest's, never when it is not.
    assert observed == {"a.safetensors": (len(SHARD), files[0]["sha256"]),
                        "b.safetensors": (len(SHARD) - 1, None), "c.json": (None, None)}
    assert ahead.bytes_read == len(SHARD)
    assert facts.verify_entries(files, observed) == [
        ("b.safetensors", "size %d, expected %d" % (len(SHARD) - 1, len(SHARD))), ("c.json", "missing")]


def test_the_background_hashes_files_as_they_land_during_the_transfer(tmp_path):
    files = [entry("model-0000%d-of-00003.safetensors" % i, SHARD[i:]) for i in (1, 2, 3)]
    ahead = mc.HashAhead(str(tmp_path), files, clock=later(), poll=0.01).start()
    try:
        for item, i in zip(files, (1, 2, 3)):
            land(tmp_path, item["path"], SHARD[i:])
        deadline = time.monotonic() + 20
        while len(ahead.hashes) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        ahead.stop()
    assert sorted(ahead.hashes) == sorted(f["path"] for f in files)
    read = ahead.bytes_read
    assert read == sum(f["size"] for f in files)
    assert facts.verify_entries(files, ahead.observed()) == []
    assert ahead.bytes_read == read  # verification read nothing again


def test_stop_abandons_a_read_under_way(tmp_path):
    data = SHARD * 8
    files = [entry("big.safetensors", data)]
    land(tmp_path, "big.safetensors", data)
    ahead = mc.HashAhead(str(tmp_path), files, clock=later())
    ahead._stop.set()  # pylint: disable=protected-access
    assert ahead.hash_next() is False and ahead.hashes == {}
    ahead.start()
    ahead.stop()
    assert ahead._thread is None  # pylint: disable=protected-access
    assert ahead.observed() == {"big.safetensors": (len(data), files[0]["sha256"])}


def test_shards_that_land_together_at_the_end_are_hashed_by_several_threads(tmp_path, monkeypatch):
    # Four shards renamed into place as the transfer ends (the CLI's workers finish together): the
    # verification reads them at once, each once, and a corrupt one is still named.
    shards = [bytes([n]) * (2 << 20) + b"shard%d" % n for n in range(4)]
    files = [entry("model-%05d-of-00004.safetensors" % (n + 1), data) for n, data in enumerate(shards)]
    for item, data in zip(files, shards):
        land(tmp_path, item["path"], data)
    with open(os.path.join(str(tmp_path), files[2]["path"]), "r+b") as handle:
        handle.seek(7)
        handle.write(b"\xff")
    threads = set()
    real = facts.sha256_file

    def recorded(path, *args, **kwargs):
        threads.add(threading.get_ident())
        time.sleep(0.2)  # long enough that one thread could not have taken every file
        return real(path, *args, **kwargs)

    monkeypatch.setattr(mc, "sha256_file", recorded)
    monkeypatch.setattr(mc.os, "cpu_count", lambda: 4)
    ahead = mc.HashAhead(str(tmp_path), files, clock=later())
    observed = ahead.observed()
    assert len(threads) > 1
    assert ahead.bytes_read == sum(len(data) for data in shards)
    bad = facts.verify_entries(files, observed)
    assert [path for path, _reason in bad] == [files[2]["path"]]
    assert {path: digest for path, (_size, digest) in observed.items() if path != files[2]["path"]} == {
        item["path"]: item["sha256"] for item in files if item is not files[2]}
