"""The stand-in ModelScope hub's HTTP endpoints, over real HTTP on 127.0.0.1 (simulator tests).

Expected shapes come from the real client's source (modelscope-hub 0.5.1, see
tests/sim/hub/README.md), not from the simulator's code.
"""

import hashlib
import http.client
import json
import pathlib
import struct
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "hub"))
from hub_harness import Hub  # noqa: E402

Q35 = "Qwen/Qwen3.5-27B"
Q06 = "Qwen/Qwen3-0.6B"
SHARD1 = "model-00001-of-00002.safetensors"
SHARD2 = "model-00002-of-00002.safetensors"


@pytest.fixture(scope="module")
def hub():
    server = Hub()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def fresh(hub):
    hub.reset()


def file_url(model, path, revision="master"):
    return "/api/v1/models/%s/repo?Revision=%s&FilePath=%s" % (model, revision, path)


def test_file_list_has_the_fields_the_client_reads(hub):
    status, body = hub.json("/api/v1/models/%s/repo/files?Revision=master&Recursive=True" % Q35)
    assert status == 200
    assert body["Code"] == 200 and body["Success"] is True
    files = {f["Path"]: f for f in body["Data"]["Files"]}
    for required in ("config.json", "tokenizer.json", "tokenizer_config.json",
                     "model.safetensors.index.json", SHARD1, SHARD2):
        assert required in files
    for entry in files.values():
        assert entry["Type"] == "blob"
        assert isinstance(entry["Size"], int)
        assert len(entry["Sha256"]) == 64
        assert entry["Name"] == entry["Path"].rsplit("/", 1)[-1]
    assert files[SHARD1]["IsLFS"] is True and files["config.json"]["IsLFS"] is False


def test_vl_config_and_text_config(hub):
    vl = json.loads(hub.request(file_url(Q35, "config.json"))[2])
    assert vl["architectures"] == ["Qwen3_5ForConditionalGeneration"]
    assert "vision_config" in vl
    assert vl["text_config"]["max_position_embeddings"] == 262144
    text = json.loads(hub.request(file_url(Q06, "config.json"))[2])
    assert text["architectures"] == ["Qwen3ForCausalLM"]
    assert "vision_config" not in text
    assert text["max_position_embeddings"] == 40960


def test_served_bytes_match_the_listed_sha256_and_safetensors_framing(hub):
    files = hub.files(Q35)
    for path in ("config.json", SHARD1):
        status, _headers, body = hub.request(file_url(Q35, path))
        assert status == 200
        assert len(body) == files[path]["Size"]
        assert hashlib.sha256(body).hexdigest() == files[path]["Sha256"]
    # A real safetensors file: u64 little-endian header length, JSON header, data.
    (hlen,) = struct.unpack("<Q", body[:8])
    header = json.loads(body[8:8 + hlen])
    (tensor,) = [k for k in header if k != "__metadata__"]
    start, end = header[tensor]["data_offsets"]
    assert 8 + hlen + end == len(body)
    index = json.loads(hub.request(file_url(Q35, "model.safetensors.index.json"))[2])
    assert index["weight_map"][tensor] == SHARD1
    assert sorted(set(index["weight_map"].values())) == [SHARD1, SHARD2]


def test_lfs_files_redirect_to_signed_storage_that_honours_range(hub):
    status, headers, _body = hub.request(file_url(Q35, SHARD1), follow=False)
    assert status == 302
    location = headers["Location"]
    assert location.startswith("/cdn/Qwen/Qwen3.5-27B/") and "Signature=" in location
    whole = hub.request(location)[2]
    status, headers, part = hub.request(location, headers={"Range": "bytes=1000-"})
    assert status == 206
    assert headers["Content-Range"] == "bytes 1000-%d/%d" % (len(whole) - 1, len(whole))
    assert part == whole[1000:]
    status, headers, part = hub.request(location, headers={"Range": "bytes=10-19"})
    assert (status, part) == (206, whole[10:20])
    status, headers, _body = hub.request(location, headers={"Range": "bytes=%d-" % len(whole)})
    assert status == 416 and headers["Content-Range"] == "bytes */%d" % len(whole)
    tampered = location.replace("Signature=", "Signature=0")
    assert hub.request(tampered)[0] == 403


def test_small_files_served_by_the_hub_ignore_range(hub):
    status, _headers, body = hub.request(file_url(Q35, "config.json"),
                                         headers={"Range": "bytes=5-"})
    assert status == 200
    assert len(body) == hub.files(Q35)["config.json"]["Size"]


def test_revisions_and_a_pinned_commit_where_one_shard_differs(hub):
    status, body = hub.json("/api/v1/models/%s/revisions" % Q35)
    assert status == 200
    revmap = body["Data"]["RevisionMap"]
    assert [b["Revision"] for b in revmap["Branches"]] == ["master"]
    tags = {t["Revision"]: t["CommitId"] for t in revmap["Tags"]}
    assert set(tags) == {"v1.0", "v0.9"}
    assert tags["v1.0"] == revmap["Branches"][0]["CommitId"]
    new, old = hub.files(Q35, "master"), hub.files(Q35, tags["v0.9"])
    assert set(new) == set(old)
    changed = sorted(p for p in new if new[p]["Sha256"] != old[p]["Sha256"])
    assert changed == [SHARD2]
    assert hub.files(Q35, "v0.9") == old


def test_unknown_revision_answers_like_the_real_hub_and_404_on_request(hub):
    # Measured behaviour of modelscope.cn (README): the listing is a success with no files.
    status, body = hub.json("/api/v1/models/%s/repo/files?Revision=nosuch&Recursive=True" % Q06)
    assert status == 200 and body["Data"]["Files"] is None
    status, body = hub.json(file_url(Q06, "config.json", "nosuch"))
    assert status == 404 and body["Code"] == 10990101007 and body["Success"] is False
    hub.faults(unknown_revision="404")
    status, body = hub.json("/api/v1/models/%s/repo/files?Revision=nosuch&Recursive=True" % Q06)
    assert status == 404
    assert body["Code"] == 10010205001 and body["Success"] is False
    assert "record not found" in body["Message"] and body["RequestId"]


def test_unknown_model_is_a_404_in_the_hub_envelope(hub):
    status, body = hub.json("/api/v1/models/Qwen/NoSuchModel/repo/files?Revision=master")
    assert status == 404
    assert set(body) == {"Code", "Message", "RequestId", "Success"}
    assert body["Success"] is False


def test_private_repo_needs_the_token_as_bearer_or_cookie(hub):
    hub.faults(private=[Q06], token="ms-sim-secret")
    listing = "/api/v1/models/%s/repo/files?Revision=master&Recursive=True" % Q06
    assert hub.json(listing)[0] == 401
    assert hub.json(listing, headers={"Authorization": "Bearer wrong"})[0] == 401
    assert hub.json(listing, headers={"Authorization": "Bearer ms-sim-secret"})[0] == 200
    assert hub.json(listing, headers={"Cookie": "a=b; m_session_id=ms-sim-secret"})[0] == 200
    assert hub.request(file_url(Q06, "config.json"))[0] == 401
    assert hub.json("/api/v1/models/%s/revisions" % Q06)[0] == 401
    # Other repos stay public.
    assert hub.json("/api/v1/models/%s/repo/files?Revision=master" % Q35)[0] == 200
    assert hub.json("/_sim/faults")[1]["token"] == "<set>"  # never echoed back


def test_stats_count_bytes_actually_sent_per_model_and_file(hub):
    location = hub.request(file_url(Q35, SHARD1), follow=False)[1]["Location"]
    size = hub.files(Q35)[SHARD1]["Size"]
    hub.request(location, headers={"Range": "bytes=100-"})
    hub.request(file_url(Q06, "config.json"))
    stats = hub.stats()
    config_size = hub.files(Q06)["config.json"]["Size"]
    assert stats["models"][Q35]["files"] == {SHARD1: size - 100}
    assert stats["models"][Q06]["bytes"] == config_size
    assert stats["bytes_total"] == size - 100 + config_size
    assert stats["requests"]["file"] == 2 and stats["requests"]["cdn"] == 1
    assert [e["range"] for e in stats["log"] if e["path"].startswith("/cdn/")] == ["bytes=100-"]
    hub.reset()
    assert hub.stats()["bytes_total"] == 0


def test_drop_after_bytes_cuts_the_body_once_and_counts_what_was_sent(hub):
    hub.faults(drop_after_bytes={Q35: 300000})
    location = hub.request(file_url(Q35, SHARD1), follow=False)[1]["Location"]
    with pytest.raises(Exception):  # http.client.IncompleteRead: the connection was cut
        hub.request(location)
    assert hub.stats()["models"][Q35]["bytes"] == 300000
    status, _headers, body = hub.request(location, headers={"Range": "bytes=300000-"})
    assert status == 206
    assert len(body) == hub.files(Q35)[SHARD1]["Size"] - 300000
    assert hub.stats()["models"][Q35]["bytes"] == hub.files(Q35)[SHARD1]["Size"]


def test_bad_checksum_once_serves_same_length_wrong_bytes_then_good(hub):
    hub.faults(bad_checksum_once="%s/config.json" % Q06)
    entry = hub.files(Q06)["config.json"]
    first = hub.request(file_url(Q06, "config.json"))[2]
    second = hub.request(file_url(Q06, "config.json"))[2]
    assert len(first) == entry["Size"]
    assert hashlib.sha256(first).hexdigest() != entry["Sha256"]
    assert hashlib.sha256(second).hexdigest() == entry["Sha256"]


def test_bad_fault_requests_name_the_problem(hub):
    status, body = hub.json("/_sim/faults", "POST", {"drop_after": 5})
    assert status == 400 and "unknown field(s) drop_after" in body["error"]
    status, body = hub.json("/_sim/faults", "POST", {"unknown_revision": "500"})
    assert status == 400 and "unknown_revision" in body["error"]


def test_model_sizes_come_from_the_config_and_bytes_are_deterministic(tmp_path):
    config = {"models": {Q35: {"weights_bytes": 3 * 1024 * 1024 + 7, "shards": 3}}}
    first, second = Hub(config), Hub(config)
    try:
        a, b = first.files(Q35), second.files(Q35)
        shards = sorted(p for p in a if p.endswith(".safetensors"))
        assert shards == ["model-0000%d-of-00003.safetensors" % i for i in (1, 2, 3)]
        index = json.loads(first.request(file_url(Q35, "model.safetensors.index.json"))[2])
        assert index["metadata"]["total_size"] == 3 * 1024 * 1024 + 7
        assert {p: e["Sha256"] for p, e in a.items()} == {p: e["Sha256"] for p, e in b.items()}
    finally:
        first.stop()
        second.stop()


def test_a_bad_config_is_refused_with_the_fix(tmp_path):
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"models": {Q35: {"weights_bytes": 1, "shards": 2}}}))
    proc = subprocess.run([sys.executable, str(pathlib.Path(__file__).parent / "hub" / "server.py"),
                           "--port", "0", "--config", str(config)],
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode != 0
    assert "weights_bytes (1) must be >= shards (2)" in proc.stderr


def test_private_and_token_from_the_config_survive_a_reset():
    server = Hub({"private": [Q06], "token": "ms-config-token"})
    try:
        listing = "/api/v1/models/%s/repo/files?Revision=master" % Q06
        server.reset()
        assert server.json(listing)[0] == 401
        assert server.json(listing, headers={"Authorization": "Bearer ms-config-token"})[0] == 200
    finally:
        server.stop()


def test_delay_and_throttle_slow_the_answers_down(hub):
    hub.faults(delay_ms=300)
    started = time.monotonic()
    assert hub.request(file_url(Q06, "config.json"))[0] == 200
    assert time.monotonic() - started >= 0.3
    hub.faults(delay_ms=0, throttle_bytes_per_sec=100000)
    size = hub.files(Q06)["tokenizer.json"]["Size"]
    started = time.monotonic()
    assert len(hub.request(file_url(Q06, "tokenizer.json"))[2]) == size
    assert time.monotonic() - started >= size / 100000.0 * 0.9


def test_control_posts_keep_a_keep_alive_connection_usable(hub):
    conn = http.client.HTTPConnection("127.0.0.1", hub.port, timeout=10)
    try:
        conn.request("POST", "/_sim/reset", body=json.dumps({"unused": "body"}),
                     headers={"Content-Type": "application/json"})
        first = conn.getresponse()
        assert first.status == 200 and json.loads(first.read()) == {"ok": True}
        conn.request("GET", "/api/v1/models/%s/revisions" % Q06)
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["Success"] is True
    finally:
        conn.close()


def test_a_models_own_revisions_resolve_to_its_latest_files():
    pinned = "0123456789abcdef0123456789abcdef01234567"
    server = Hub(config={"models": {"Team/Model-7B": {"weights_bytes": 3 * 1024 * 1024, "shards": 3,
                                                      "revisions": [pinned, "release-2", "master"]}}})
    try:
        latest = server.files("Team/Model-7B", "master")
        assert sorted(p for p in latest if p.endswith(".safetensors")) == [
            "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
            "model-00003-of-00003.safetensors"]
        digests = {p: f["Sha256"] for p, f in latest.items()}
        assert {p: f["Sha256"] for p, f in server.files("Team/Model-7B", pinned).items()} == digests
        assert {p: f["Sha256"] for p, f in server.files("Team/Model-7B", "release-2").items()} == digests
        assert {f["CommitId"] for f in server.files("Team/Model-7B", pinned).values()} == {pinned}
        status, body = server.json("/api/v1/models/Team/Model-7B/revisions")
        assert status == 200
        assert {t["Revision"] for t in body["Data"]["RevisionMap"]["Tags"]} == {"v1.0", "v0.9", "release-2"}
        status, body = server.json("/api/v1/models/Team/Model-7B/repo/files?Revision=other&Recursive=True")
        assert status == 200 and body["Data"]["Files"] is None
    finally:
        server.stop()


def test_latest_config_changes_the_config_of_the_latest_commit_only():
    """A moved branch can bring a new config.json with its weights (tests/sim/test_fleet_revisions.py)."""
    pinned = "89abcdef0123456789abcdef0123456789abcdef"
    server = Hub(config={"models": {Q35: {"weights_bytes": 65536, "shards": 2, "revisions": [pinned],
                                          "latest_config": {"text_config": {"seq_length": 163840}}}}})
    try:
        configs = {rev: json.loads(server.request(file_url(Q35, "config.json", rev))[2])
                   for rev in ("master", "v0.9", pinned)}
        assert configs["master"]["text_config"]["seq_length"] == 163840
        assert configs[pinned] == configs["master"]
        assert "seq_length" not in configs["v0.9"]["text_config"]
        # Only the key given changed: the rest of text_config and the vision config are the stock ones.
        configs["master"]["text_config"].pop("seq_length")
        assert configs["master"] == configs["v0.9"]
        new, old = server.files(Q35, "master"), server.files(Q35, "v0.9")
        assert sorted(p for p in new if new[p]["Sha256"] != old[p]["Sha256"]) == ["config.json", SHARD2]
    finally:
        server.stop()
