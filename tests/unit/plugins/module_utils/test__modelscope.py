"""Pure rules of the model cache: ids, hub file lists, space, manifest/marker, diff, lock.

Hub answers are written by hand in the format tests/sim/hub/README.md documents for
modelscope-hub 0.5.1 (``{"Code":200,"Data":{"Files":[{"Path","Type","Size","Sha256",...}]}}``).
"""

import json
import subprocess
import sys
import textwrap
from urllib.request import ProxyHandler, build_opener

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
from ansible_collections.ascendfleet.llm.plugins.module_utils import _modelscope as ms

from .raw_tcp import close_at_once, garbage, routes, short_body

SHA_A = "a" * 64
SHA_B = "b" * 64
COMMIT = "360167a01ba11562e3ea220a57ed6999be13ab9c"


def hub_body(files):
    return {"Code": 200, "Data": {"Files": files}, "Message": "success", "Success": True}


def entry(path, size, sha=SHA_A, kind="blob"):
    return {"Path": path, "Name": path.rsplit("/", 1)[-1], "Type": kind, "Size": size,
            "Sha256": sha, "CommitId": COMMIT, "Revision": COMMIT, "IsLFS": False}


# -- ids ---------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["Qwen/Qwen3.5-27B", "Qwen/Qwen3-0.6B", "deepseek-ai/DeepSeek-V3.1",
                                   "a/b", "Owner_1/name.with.dots"])
def test_valid_model_ids(model):
    assert ms.validate_model_id(model) == tuple(model.split("/"))


@pytest.mark.parametrize("model", ["Qwen3.5-27B", "Qwen/Qwen3.5-27B/extra", "/Qwen", "Qwen/",
                                   "Qwen/../etc", "Qw en/x", "-x/y", "x/.hidden", "", None, 42])
def test_malformed_model_ids(model):
    with pytest.raises(ms.ModelPrefetchError) as err:
        ms.validate_model_id(model)
    assert str(err.value).startswith("malformed model id %r: expected 'Owner/Name'" % (model,))


@pytest.mark.parametrize("rev", ["master", "v1.0", COMMIT, "release/2026.01"])
def test_valid_revisions(rev):
    assert ms.validate_revision(rev) == rev


@pytest.mark.parametrize("rev", ["", "-rf", "a b", "../x", None])
def test_malformed_revisions(rev):
    with pytest.raises(ms.ModelPrefetchError, match="malformed revision"):
        ms.validate_revision(rev)


def test_model_dir_layout():
    assert ms.model_dir("/mnt/disk2/modelscope", "Qwen/Qwen3.5-27B") == \
        "/mnt/disk2/modelscope/models/Qwen/Qwen3.5-27B"


# -- file list ---------------------------------------------------------------------------
def test_parse_file_list_sorts_and_skips_trees():
    body = hub_body([entry("model.safetensors", 10, SHA_B), entry("sub", 0, "", "tree"),
                     entry("config.json", 5), entry("sub/x.json", 3)])
    commit, files = ms.parse_file_list(body, "Qwen/X", "v1.0")
    assert commit == COMMIT
    assert files == [{"path": "config.json", "size": 5, "sha256": SHA_A},
                     {"path": "model.safetensors", "size": 10, "sha256": SHA_B},
                     {"path": "sub/x.json", "size": 3, "sha256": SHA_A}]


@pytest.mark.parametrize("files", [None, []])
def test_unknown_revision_is_an_empty_list(files):
    with pytest.raises(ms.HubError) as err:
        ms.parse_file_list(hub_body(files), "Qwen/X", "v9", "http://hub:8080")
    assert err.value.kind == "revision"
    assert str(err.value) == ("Qwen/X: revision 'v9' not found on the hub http://hub:8080 (it lists no "
                              "files for it); pin an existing branch, tag or commit id")


@pytest.mark.parametrize("path", ["../evil", "/etc/passwd", "a/../../b", ".ascendfleet/complete", "a//b"])
def test_unsafe_paths_are_refused(path):
    with pytest.raises(facts.ModelCacheError, match="unsafe file path"):
        ms.parse_file_list(hub_body([entry(path, 1)]), "Qwen/X", "v1")


def test_entry_without_sha256_is_refused():
    with pytest.raises(ms.HubError, match="lists no sha256 for config.json"):
        ms.parse_file_list(hub_body([entry("config.json", 1, "")]), "Qwen/X", "v1")


def test_filter_files():
    files = [{"path": p, "size": 1, "sha256": SHA_A}
             for p in ("config.json", "model-1.safetensors", "model-2.safetensors", "README.md")]
    assert [f["path"] for f in ms.filter_files(files, ["*.json", "*.safetensors"], ["model-2*"])] == \
        ["config.json", "model-1.safetensors"]
    assert ms.filter_files(files) == files


@pytest.mark.parametrize("status,body,token,kind,text", [
    (401, "{}", False, "auth", "Qwen/X is private on the hub http://h (HTTP 401) and no token was given: "
                               "set model_prefetch_token (from a vault) to an access token that can read it"),
    (401, "{}", True, "auth", "Qwen/X: the hub http://h refused the token (HTTP 401); the token in "
                              "model_prefetch_token cannot read this model: use one that can"),
    (404, '{"Code":10010205001,"Message":"获取模型版本失败，信息：record not found"}', False, "revision",
     "Qwen/X: revision 'v9' not found on the hub http://h (HTTP 404); pin an existing branch, tag or commit id"),
    (404, '{"Code":10010205001,"Message":"模型不存在"}', False, "not_found",
     "Qwen/X: model not found on the hub http://h (HTTP 404); check the Owner/Name spelling"),
])
def test_hub_errors(status, body, token, kind, text):
    err = ms.hub_error_for("Qwen/X", "v9", "http://h", status, body, token)
    assert (err.kind, str(err)) == (kind, text)


# -- the hub client against what can answer at the endpoint --------------------------------
FILES_PATH = "/api/v1/models/Qwen/Qwen3-0.6B/repo/files"


def hub_client(server):
    # No proxy from the environment: the server is on loopback.
    return ms.HubClient("http://127.0.0.1:%d" % server.port, timeout=3, opener=build_opener(ProxyHandler({})))


def list_error(server):
    with pytest.raises(ms.HubError) as err:
        hub_client(server).list_files("Qwen/Qwen3-0.6B", "master")
    return err.value.kind, str(err.value)


def test_hub_client_reads_the_file_list(raw_server):
    server = raw_server(routes({FILES_PATH + "?Revision=master&Recursive=True":
                                ("200 OK", json.dumps(hub_body([entry("config.json", 10)])))}))
    assert hub_client(server).list_files("Qwen/Qwen3-0.6B", "master") == (
        COMMIT, [{"path": "config.json", "size": 10, "sha256": SHA_A}])


def test_hub_endpoint_that_is_not_http(raw_server):
    server = raw_server(garbage())
    assert list_error(server) == ("protocol", (
        "hub http://127.0.0.1:%d: 127.0.0.1 port %d answers, but not HTTP: BadStatusLine "
        "'SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5' to GET %s; model_prefetch_endpoint must be the ModelScope "
        "hub's URL (or a mirror speaking its API), not another service" % (server.port, server.port, FILES_PATH)))


def test_hub_file_list_cut_short(raw_server):
    server = raw_server(short_body(length=100000))
    kind, text = list_error(server)
    assert kind == "protocol"
    assert ("127.0.0.1 port %d answered HTTP 200 to GET %s, but closed the connection after 22 of 100000 bytes "
            "of the body (IncompleteRead)" % (server.port, FILES_PATH)) in text


def test_hub_error_answer_cut_short_is_still_its_status(raw_server):
    server = raw_server(short_body("404 Not Found", '{"Code":10010205001,"Mess', length=500))
    assert list_error(server) == ("not_found", "Qwen/Qwen3-0.6B: model not found on the hub http://127.0.0.1:%d "
                                               "(HTTP 404); check the Owner/Name spelling" % server.port)


def test_hub_closing_without_an_answer_is_unreachable(raw_server):
    server = raw_server(close_at_once)
    assert list_error(server) == ("unreachable", (
        "hub http://127.0.0.1:%d is unreachable (127.0.0.1 port %d accepted the connection and closed it without "
        "an answer to GET %s (not an HTTP server, or one that is going down)); check model_prefetch_endpoint and "
        "the host's route/proxy to it" % (server.port, server.port, FILES_PATH)))


def test_hub_answering_html(raw_server):
    server = raw_server(routes({}, default=("200 OK", "<html>captive portal</html>", "text/html")))
    assert list_error(server) == ("protocol", "Qwen/Qwen3-0.6B@master: the hub http://127.0.0.1:%d answered "
                                              "non-JSON: <html>captive portal</html>" % server.port)


# -- space -------------------------------------------------------------------------------
def test_bytes_to_download_counts_partials():
    files = [{"path": "a", "size": 100, "sha256": SHA_A}, {"path": "b", "size": 50, "sha256": SHA_A},
             {"path": "c", "size": 30, "sha256": SHA_A}]
    present = {"a": 100, "b": None, "b.incomplete": 20, "c": 10}
    # a is there, b resumes after 20 bytes, c has the wrong size and is fetched whole.
    assert ms.bytes_to_download(files, present) == 30 + 30


def test_space_error_names_host_disk_and_sizes():
    assert ms.space_shortfall(3 << 20, 2 << 20, 1 << 20) == 2 << 20
    assert ms.space_shortfall(1, 10, 1) == 0
    msg = ms.space_error("node-7", "/mnt/disk2", "/dev/sdb1", "Qwen/Qwen3.5-27B", "v1.0",
                         4273640, 2 << 20, 1 << 20)
    assert msg == ("host node-7: not enough free space on /mnt/disk2 (device /dev/sdb1) for "
                   "Qwen/Qwen3.5-27B@v1.0: needs 5.1 MiB (4.1 MiB to download + 1.0 MiB margin), "
                   "2.0 MiB free; free 3.1 MiB or point model_prefetch_cache_dir at a larger disk")


def test_mount_device_takes_the_last_entry():
    mounts = textwrap.dedent("""\
        overlay / overlay rw 0 0
        /dev/sdb1 /mnt/disk2 ext4 rw 0 0
        tmpfs /mnt/disk2 tmpfs rw,size=2048k 0 0
        """)
    assert ms.mount_device("/mnt/disk2", mounts) == "tmpfs"
    assert ms.mount_device("/", mounts) == "overlay"
    assert ms.mount_device("/nowhere", mounts) == "unknown"


@pytest.mark.parametrize("n,text", [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"),
                                    (54 * (1 << 30), "54.0 GiB")])
def test_format_bytes(n, text):
    assert ms.format_bytes(n) == text


def test_format_progress():
    assert ms.format_progress("Qwen/X", 1 << 30, 4 << 30, 10.0, 3, 15) == \
        "Qwen/X: 1.0 GiB / 4.0 GiB (25.0%) at 102.4 MiB/s, 3/15 files, ~30s left"


# -- manifest and marker -----------------------------------------------------------------
FILES = [{"path": "model.safetensors", "size": 10, "sha256": SHA_B},
         {"path": "config.json", "size": 5, "sha256": SHA_A}]


def complete_state():
    manifest = ms.build_manifest("Qwen/X", "v1.0", COMMIT, FILES, "http://hub")
    raw = facts.dumps_manifest(manifest)
    marker = json.dumps(facts.build_marker("Qwen/X", "v1.0", raw)).encode()
    return manifest, raw, marker


def test_manifest_is_sorted_and_marker_hashes_it():
    manifest, raw, marker = complete_state()
    assert [f["path"] for f in manifest["files"]] == ["config.json", "model.safetensors"]
    assert manifest["total_bytes"] == 15
    assert json.loads(marker) == {"model": "Qwen/X", "revision": "v1.0",
                                  "manifest_sha256": facts.sha256_bytes(raw)}
    assert facts.parse_manifest(raw) == manifest


def test_check_marker_complete():
    raw, marker = complete_state()[1:]
    assert facts.check_marker(marker, raw, "Qwen/X", "v1.0", {"config.json": 5, "model.safetensors": 10}) == []


@pytest.mark.parametrize("change,reason", [
    ({"marker": None}, "no completion marker"),
    ({"marker": b"{not json"}, "completion marker is not valid JSON"),
    ({"revision": "v0.9"}, "marker is for revision 'v1.0', 'v0.9' requested"),
    ({"model": "Qwen/Y"}, "marker is for model 'Qwen/X'"),
    ({"manifest": None}, "manifest is missing"),
    ({"manifest": b"{}\n"}, "manifest does not match the marker's manifest_sha256"),
    ({"sizes": {"config.json": 5, "model.safetensors": 9}},
     "model.safetensors has 9 bytes, manifest says 10"),
    ({"sizes": {"config.json": 5, "model.safetensors": None}}, "model.safetensors is missing"),
    ({"include": ["*.json"]}, "include/exclude globs differ from the manifest's"),
])
def test_check_marker_incomplete(change, reason):
    raw, marker = complete_state()[1:]
    args = {"marker": marker, "manifest": raw, "model": "Qwen/X", "revision": "v1.0",
            "sizes": {"config.json": 5, "model.safetensors": 10}, "include": []}
    args.update(change)
    reasons = facts.check_marker(args["marker"], args["manifest"], args["model"], args["revision"],
                                 args["sizes"], args["include"])
    assert reasons == [reason]


def test_diff_files_for_a_revision_change():
    old = [{"path": "a", "size": 1, "sha256": SHA_A}, {"path": "b", "size": 2, "sha256": SHA_A},
           {"path": "gone", "size": 3, "sha256": SHA_A}]
    new = [{"path": "a", "size": 1, "sha256": SHA_A}, {"path": "b", "size": 2, "sha256": SHA_B},
           {"path": "new", "size": 4, "sha256": SHA_A}]
    assert ms.diff_files(old, new) == {"unchanged": ["a"], "changed": ["b"], "added": ["new"],
                                       "removed": ["gone"]}


def test_verify_entries():
    observed = {"config.json": (5, SHA_A), "model.safetensors": (10, SHA_A)}
    assert facts.verify_entries(FILES, observed) == [
        ("model.safetensors", "sha256 %s, expected %s" % (SHA_A, SHA_B))]
    assert facts.verify_entries(FILES, {"config.json": (4, None)}) == [
        ("model.safetensors", "missing"), ("config.json", "size 4, expected 5")]


# -- lock --------------------------------------------------------------------------------
def test_lock_names_its_holder(tmp_path):
    path = str(tmp_path / "lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            sys.path[:0] = %r
            from ansible_collections.ascendfleet.llm.plugins.module_utils._modelscope import ModelLock
            lock = ModelLock(%r, {"what": "model_fetch Qwen/X@v1 from hub", "host": "node-1"}).acquire()
            print("held", flush=True)
            sys.stdin.readline()
            lock.release()
        """ % (sys.path, path))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ms.LockBusy) as err:
            ms.ModelLock(path).acquire(timeout=0)
        assert str(err.value).startswith("%s is locked by another run (host node-1, pid %d, since "
                                         % (path, holder.pid))
        assert "model_fetch Qwen/X@v1 from hub); two plays or hosts sharing this cache" in str(err.value)
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(10)
    # Released (and a dead holder's lock is released by the kernel): acquiring works again.
    lock = ms.ModelLock(path).acquire(timeout=0)
    lock.release()


def test_error_lines_keep_what_went_wrong():
    from ansible_collections.ascendfleet.llm.plugins.module_utils._model_cache import error_lines
    # stderr + stdout of modelscope-hub 0.5.1 after a drop with retries off (tests/sim/hub/README.md).
    log = (
        "Downloading snapshot of Qwen/Qwen3.5-27B (model)\u2026\n"
        "2026-11-30 15:59:52,171 | INFO    | modelscope_hub.download | Downloading 15 files from Qwen/Qwen3.5-27B@v1.0\n"
        "model-00002-of-00002.safetensors:  33%|###       | 700k/2.10M [00:00<00:00]\r"
        "2026-11-30 15:59:52,267 | ERROR   | modelscope_hub.download | Failed to download "
        "model-00002-of-00002.safetensors: [E1020] ConnectionError\n"
        "error: [E1003] 1 of 15 file(s) failed to download from Qwen/Qwen3.5-27B@v1.0\n"
        "Suggestion: Some files failed to download; completed files are kept.\n")
    assert error_lines(log) == [
        "Failed to download model-00002-of-00002.safetensors: [E1020] ConnectionError",
        "error: [E1003] 1 of 15 file(s) failed to download from Qwen/Qwen3.5-27B@v1.0",
        "Suggestion: Some files failed to download; completed files are kept.",
    ]
