"""Image sources judged in the pre-flight (issue 28): the archive missing on the control node, the
registry unreachable, the tag unknown to the registry; an image on the host needs neither.
Docker's texts are those of Docker CLI 28.2 (`docker manifest inspect`, run on this machine)."""
from ansible_collections.ascendfleet.llm.plugins.filter.image_sources import vllm_compose_image_source_errors
from ansible_collections.ascendfleet.llm.plugins.module_utils._image_sources import archive_name, errors

HOST = "npu-a01"
REF = "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"
MIRRORED = "registry.site:5000/quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"
ARCHIVE = "quay.io_ascend_vllm-ascend_v0.18.0rc1-openeuler.tar"
UNREACHABLE = ('failed to configure transport: error pinging v2 registry: Get "https://registry.site:5000/v2/": '
               'dial tcp: lookup registry.site on 10.255.255.53:53: no such host')
REFUSED = ('failed to configure transport: error pinging v2 registry: Get "https://127.0.0.1:9/v2/": dial tcp '
           '127.0.0.1:9: connect: connection refused')


def loop(*results):
    return {"results": list(results), "changed": False}


def missing(ref):
    return {"item": ref, "rc": 1, "stdout": "", "stderr": "Error: No such image: " + ref}


def test_archive_name_is_image_yml_s():
    assert archive_name(REF) == ARCHIVE
    assert archive_name("r:5000/a/b@sha256:" + "0" * 64) == "r_5000_a_b_sha256_" + "0" * 64 + ".tar"


def test_archive_missing_on_the_control_node():
    out = errors(HOST, "archive", {REF: ["qwen"]}, loop(missing(REF)),
                 remote=loop({"item": REF, "stat": {"exists": False}}),
                 local=loop({"item": REF, "stat": {"exists": False}}),
                 archive_dir="/srv/images/", remote_dir="/var/cache/ascendfleet/images")
    assert out == ["npu-a01: deployment qwen: vllm_compose_image_archive_dir: /srv/images/" + ARCHIVE + " is missing on "
                   "the control node (image " + REF + " is not on the host, and no archive waits in "
                   "/var/cache/ascendfleet/images). Fix: save the image there on the control node (docker save -o "
                   "/srv/images/" + ARCHIVE + " " + REF + "), or set vllm_compose_image_archive_dir to the directory that "
                   "holds it, or use ascendfleet_image_source: pull"]


def test_archive_unreadable_or_a_directory():
    [unreadable] = errors(HOST, "archive", {REF: ["qwen"]}, loop(missing(REF)), remote=loop(),
                          local=loop({"item": REF, "stat": {"exists": True, "readable": False, "isdir": False}}),
                          archive_dir="/srv/images")
    assert "/srv/images/%s on the control node cannot be read by the user running ansible-playbook" % ARCHIVE in unreadable
    [directory] = errors(HOST, "archive", {REF: ["qwen"]}, loop(missing(REF)), remote=loop(),
                         local=loop({"item": REF, "stat": {"exists": True, "readable": True, "isdir": True}}),
                         archive_dir="/srv/images")
    assert "is a directory, not the image archive of " + REF in directory


def test_archive_dir_empty():
    [text] = errors(HOST, "archive", {REF: ["a", "b"]}, loop(missing(REF)), remote=loop(), local=None,
                    archive_dir="", remote_dir="/var/cache/ascendfleet/images")
    assert text.startswith("npu-a01: deployment a, b: vllm_compose_image_archive_dir: is empty while the image source is archive")


def test_archive_not_needed():
    # the image is on the host (an offline host that deleted the archive after loading it)
    assert errors(HOST, "archive", {REF: ["qwen"]}, loop({"item": REF, "rc": 0, "stdout": "sha256:ab"}),
                  remote=loop(), local=loop(), archive_dir="/srv/images") == []
    # the archive waits on the host already
    assert errors(HOST, "archive", {REF: ["qwen"]}, loop(missing(REF)),
                  remote=loop({"item": REF, "stat": {"exists": True}}), local=loop(), archive_dir="/srv/images") == []
    # a readable archive on the control node
    assert errors(HOST, "archive", {REF: ["qwen"]}, loop(missing(REF)), remote=loop({"item": REF, "stat": {"exists": False}}),
                  local=loop({"item": REF, "stat": {"exists": True, "readable": True, "isdir": False}}),
                  archive_dir="/srv/images") == []


def test_registry_unreachable():
    for text in (UNREACHABLE, REFUSED):
        [out] = errors(HOST, "pull", {MIRRORED: ["qwen"]}, loop(missing(MIRRORED)),
                       manifests=loop({"item": MIRRORED, "rc": 1, "stdout": "", "stderr": text}))
        assert out.startswith("npu-a01: deployment qwen: image " + MIRRORED + ": registry.site:5000 cannot be reached "
                              "from the host. Fix: check that the registry is up")
        assert "set ascendfleet_image_mirror" in out


def test_tag_unknown_to_the_registry():
    [out] = errors(HOST, "pull", {MIRRORED: ["qwen"]}, loop(missing(MIRRORED)),
                   manifests=loop({"item": MIRRORED, "rc": 1, "stdout": "", "stderr": "no such manifest: " + MIRRORED}))
    assert out.startswith("npu-a01: deployment qwen: image " + MIRRORED + ": registry.site:5000 does not serve it (no such "
                          "tag, or no such digest in that repository). Fix: check the tag (ascendfleet_image_version")


def test_pull_answers_left_to_the_pull():
    """Not certain before the login or with the daemon's own trust: the pull decides (and names it)."""
    for text in ("errors: denied: requested access to the resource is denied unauthorized: authentication required",
                 'Get "https://r:5002/v2/": http: server gave HTTP response to HTTPS client',
                 "x509: certificate signed by unknown authority", "The command action failed to execute in the expected time frame"):
        assert errors(HOST, "pull", {MIRRORED: ["qwen"]}, loop(missing(MIRRORED)),
                      manifests=loop({"item": MIRRORED, "rc": 1, "stderr": text})) == [], text
    # the registry knows it; and an image on the host is not asked for (offline hosts)
    assert errors(HOST, "pull", {MIRRORED: ["qwen"]}, loop(missing(MIRRORED)),
                  manifests=loop({"item": MIRRORED, "rc": 0, "stdout": "{}"})) == []
    assert errors(HOST, "pull", {MIRRORED: ["qwen"]}, loop({"item": MIRRORED, "rc": 0}),
                  manifests=loop({"item": MIRRORED, "skipped": True})) == []


def test_filter_groups_the_plan_s_deployments_by_image():
    plan = {"deployments": [{"name": "a", "image": REF}, {"name": "b", "image": REF}],
            "multinode": [{"name": "big", "image": MIRRORED}], "errors": []}
    out = vllm_compose_image_source_errors(plan, HOST, "pull", loop(missing(REF), missing(MIRRORED)),
                                           manifests=loop({"item": REF, "rc": 1, "stderr": "no such manifest: " + REF},
                                                          {"item": MIRRORED, "rc": 1, "stderr": UNREACHABLE}))
    assert [line.split(": image ")[0] for line in out] == ["npu-a01: deployment a, b", "npu-a01: deployment big"]


# --------------------------------------------------------------------------- a registry that does not answer
def test_a_probe_stopped_by_its_time_out_names_the_registry_and_the_bound():
    # `timeout --foreground --signal=KILL 15 docker manifest inspect ...` exits 137 when it kills the CLI.
    [text] = errors(HOST, "pull", {MIRRORED: ["qwen"]}, loop(missing(MIRRORED)),
                    manifests=loop({"item": MIRRORED, "rc": 137, "stdout": "", "stderr": "", "msg": "non-zero return code"}))
    assert text == ("npu-a01: deployment qwen: image " + MIRRORED + ": registry registry.site:5000 did not answer within "
                    "15 s (docker manifest inspect from the host, stopped: a firewall that drops the packets, a proxy "
                    "the host needs and does not use, or a registry that accepts the connection and hangs). Fix: check "
                    "that registry.site:5000 is up and that the host reaches it (from the host: curl -sS -m 10 "
                    "https://registry.site:5000/v2/), or set ascendfleet_image_mirror to a registry the host reaches, "
                    "or use ascendfleet_image_source: archive")
    [text] = errors(HOST, "pull", {REF: ["qwen"]}, loop(missing(REF)), registry_timeout=4,
                    manifests=loop({"item": REF, "rc": 124, "stderr": ""}))
    assert ": registry quay.io did not answer within 4 s (" in text
    # Docker's own TLS handshake bound (10 s) is a registry the host cannot reach.
    tls = ('failed to configure transport: error pinging v2 registry: Get '
           '"https://127.0.0.1:42963/v2/": net/http: TLS handshake timeout')
    [text] = errors(HOST, "pull", {REF: ["qwen"]}, loop(missing(REF)),
                    manifests=loop({"item": REF, "rc": 1, "stderr": tls}))
    assert "quay.io cannot be reached from the host" in text


# --------------------------------------------------------------------------- the rollback's image check
def _slurped(name, state):
    import base64
    import json
    return {"item": {"name": name, "port": 8000}, "content": base64.b64encode(json.dumps(state).encode()).decode(),
            "encoding": "base64", "source": "/opt/ascendfleet/%s/last-good/state.json" % name}


STATE = {"name": "qwen", "model": "Qwen/Qwen3-8B", "revision": "master", "image": REF, "device_ids": [4, 5],
         "port": 8000, "served_model_name": "qwen3-8b", "model_root": "/root/.cache/modelscope/hub/models"}


def test_the_versions_to_return_to_are_read_from_their_records():
    from ansible_collections.ascendfleet.llm.plugins.module_utils._image_sources import version_images
    states = loop(_slurped("qwen", STATE),
                  # no previous/ for chat: slurp failed (failed_when: false); the rollback reports it itself
                  {"item": {"name": "chat"}, "failed": True, "msg": "file not found: /opt/ascendfleet/chat/previous/state.json"},
                  {"item": {"name": "torn"}, "content": "bm90IGpzb24=", "encoding": "base64"})  # "not json"
    assert version_images(states) == {"deployments": [{"name": "qwen", "image": REF}]}
    assert version_images(None) == {"deployments": []}


def test_a_rollback_to_an_image_pruned_from_the_host_is_refused():
    versions = {"deployments": [{"name": "qwen", "image": REF}, {"name": "chat", "image": MIRRORED}]}
    present = loop(missing(REF), {"item": MIRRORED, "rc": 0, "stdout": "sha256:9c21\n"})
    # Whatever the image source: the restore starts the version without pulling.
    for source in ("pull", "archive"):
        assert vllm_compose_image_source_errors(versions, HOST, source, present, rollback_target="last-good") == [
            "npu-a01: deployment qwen: vllm_compose_rollback_target: the last-good version runs image " + REF + ", which "
            "is no longer on the host (removed or pruned since), so the rollback could not start it; nothing was "
            "changed. Fix: put the image back on the host (docker pull " + REF + ", or docker load -i <its archive>), "
            "or roll back to another version (-e vllm_compose_rollback_target=previous)"]
    [text] = vllm_compose_image_source_errors({"deployments": [{"name": "qwen", "image": REF}]}, HOST, "pull",
                                              loop(missing(REF)), rollback_target="previous")
    assert "the previous version runs image " in text and text.endswith("(-e vllm_compose_rollback_target=last-good)")
    # Every image there: nothing to refuse.
    assert vllm_compose_image_source_errors(versions, HOST, "pull", loop({"item": REF, "rc": 0}, {"item": MIRRORED, "rc": 0}),
                                            rollback_target="last-good") == []
