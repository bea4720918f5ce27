"""Pull progress (plugins/module_utils/_image_pull.py) on Docker Engine API lines recorded from a real
daemon (fixtures/image_pull/SOURCES.md). Expected numbers are read off those lines by hand: layer
sizes 24007513, 6002037 and 300298 bytes (v1), 5001737 bytes for v2's own layer."""
import base64
import json
import os

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _image_pull as ip

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "image_pull")
V1 = 24007513 + 6002037 + 300298


def lines(name):
    with open(os.path.join(HERE, name), "rb") as handle:
        return handle.read().splitlines()


def fed(name, upto=None):
    progress = ip.PullProgress()
    for line in lines(name)[:upto]:
        progress.feed(line)
    return progress


def test_a_fresh_pull_ends_with_every_layer_and_byte():
    snap = fed("pull-fresh.jsonl").snapshot()
    assert (snap["layers"], snap["layers_done"], snap["layers_present"]) == (3, 3, 0)
    assert snap["bytes_done"] == snap["bytes_total"] == V1
    assert snap["status"] == "Status: Downloaded newer image for 127.0.0.1:32768/h32a/pullrec:v1"
    assert snap["error"] is None and snap["up_to_date"] is False
    assert ip.describe(snap) == "3/3 layers, 30.3 MB of 30.3 MB (100%)"


def test_mid_download_the_bytes_are_what_the_daemon_counted():
    # Line 10: 300298 (small, complete) + 69180 (mid) + 261691 (big) bytes; every layer sized.
    snap = fed("pull-fresh.jsonl", 10).snapshot()
    assert snap["bytes_done"] == 300298 + 69180 + 261691
    assert snap["bytes_total"] == V1 and snap["layers_sized"] == 3
    assert snap["layers_done"] == 0 and snap["layers_downloading"] == 2
    assert ip.describe(snap) == "0/3 layers, 631.2 kB of 30.3 MB (2%)"


def test_before_a_layer_reports_its_size_the_total_is_at_least():
    # Line 6: the small layer (300298) and the mid one (6002037) sized, the big one not yet.
    snap = fed("pull-fresh.jsonl", 6).snapshot()
    assert snap["bytes_total"] == 300298 + 6002037 and snap["layers_sized"] == 2
    assert ip.describe(snap) == "0/3 layers, 72.8 kB of at least 6.3 MB (2 of 3 layers sized)"


def test_rate_and_time_left_from_samples():
    progress = ip.PullProgress()
    all_lines = lines("pull-fresh.jsonl")
    for line in all_lines[:10]:
        progress.feed(line)
    progress.sample(100.0)
    progress.feed(all_lines[10])
    progress.feed(all_lines[11])
    progress.feed(all_lines[12])  # the big layer at 18317312 bytes
    progress.sample(102.0)
    done = 300298 + 6002037 + 18317312
    assert progress.downloaded() == done
    rate = (done - (300298 + 69180 + 261691)) / 2.0
    assert progress.rate() == pytest.approx(rate)
    text = ip.describe(progress.snapshot(), elapsed=75)
    assert text == "0/3 layers, 24.6 MB of 30.3 MB (81%%), %.1f MB/s, about 0s left, 1m15s elapsed" % (rate / 1e6)


def test_the_rate_window_drops_old_samples():
    progress = ip.PullProgress()
    for second in range(30):
        progress.samples.append((float(second), second * 1000))
    progress.sample(30.0)
    assert progress.samples[0][0] >= 30.0 - ip.RATE_WINDOW - 1


def test_an_image_that_is_there_is_up_to_date():
    snap = fed("pull-uptodate.jsonl").snapshot()
    assert snap["up_to_date"] is True and snap["layers"] == 0
    assert ip.describe(snap) == "up to date"


def test_layers_already_on_the_host_are_not_downloaded():
    snap = fed("pull-layer-exists.jsonl").snapshot()
    assert (snap["layers"], snap["layers_done"], snap["layers_present"]) == (2, 2, 1)
    assert snap["bytes_done"] == snap["bytes_total"] == 5001737
    assert ip.describe(snap) == "2/2 layers (1 already on the host), 5.0 MB of 5.0 MB (100%)"


def test_an_error_in_the_stream_is_the_daemons_message():
    progress = ip.PullProgress()
    errors = [progress.feed(line) for line in lines("pull-blob-missing.jsonl")]
    assert errors[-1] == "unknown blob" and not any(errors[:-1])
    assert progress.snapshot()["error"] == "unknown blob"
    assert ip.describe(progress.snapshot()) == "failed: unknown blob"


def test_the_404_body_is_a_message_not_a_stream():
    body = json.loads(lines("pull-notag-http404.json")[0])
    assert body == {"message": "manifest for 127.0.0.1:32768/h32a/pullrec:nosuchtag not found: manifest unknown: "
                               "manifest unknown"}


def test_nothing_yet():
    assert ip.describe(None) == "starting"
    assert ip.describe(ip.PullProgress().snapshot()) == "resolving the manifest"


@pytest.mark.parametrize("ref, want", [
    ("quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler", ("quay.io/ascend/vllm-ascend", "v0.18.0rc1-openeuler")),
    ("mirror:5000/quay.io/ascend/vllm-ascend:v0.17.0rc1", ("mirror:5000/quay.io/ascend/vllm-ascend", "v0.17.0rc1")),
    ("mirror:5000/quay.io/ascend/vllm-ascend", ("mirror:5000/quay.io/ascend/vllm-ascend", "latest")),
    ("quay.io/ascend/vllm-ascend:v0.17.0rc1@sha256:" + "a" * 64, ("quay.io/ascend/vllm-ascend", "sha256:" + "a" * 64)),
    ("busybox", ("busybox", "latest")),
])
def test_split_reference(ref, want):
    assert ip.split_reference(ref) == want


def test_registry_auth_is_base64url_json():
    header = ip.registry_auth("ascendfleet", "s3cr+t/=", "reg:5001")
    assert json.loads(base64.urlsafe_b64decode(header)) == {"username": "ascendfleet", "password": "s3cr+t/=",
                                                            "serveraddress": "reg:5001"}


def test_login_of_reads_what_docker_login_wrote():
    auth = base64.b64encode(b"ascendfleet:pa:ss").decode()
    config = {"auths": {"reg:5001": {"auth": auth}, "https://index.docker.io/v1/": {"auth": auth}}}
    assert ip.login_of(config, "reg:5001") == ("auth", "ascendfleet", "pa:ss")
    assert ip.login_of(config, "docker.io") == ("auth", "ascendfleet", "pa:ss")
    assert ip.login_of(config, "other:5000") is None
    assert ip.login_of({"auths": {"reg:5001": {}}, "credsStore": "pass"}, "reg:5001") == ("helper", "pass")
    assert ip.login_of({"credHelpers": {"reg:5001": "ecr-login"}}, "reg:5001") == ("helper", "ecr-login")
    assert ip.login_of(None, "reg:5001") is None
