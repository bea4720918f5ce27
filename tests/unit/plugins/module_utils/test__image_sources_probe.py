"""The image pre-flight's registry probe on loopback (issue 28): a registry that drops the packets
(a listener whose accept queue is full: the kernel drops further SYNs) or that accepts and never
answers (a listener that never reads) used to be found only by the pull, or to hang the play
until the task's own time-out. The real probe (`probe_argv`: coreutils timeout around the real
`docker manifest inspect`) is run against each, bounded, and its result judged by `errors`."""
import shutil
import socket
import subprocess
import time

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._image_sources import errors, probe_argv

BOUND = 2
pytestmark = pytest.mark.skipif(not (shutil.which("docker") and shutil.which("timeout")),
                                reason="needs the docker CLI and coreutils timeout (no daemon, no network beyond loopback)")


def _run(ref):
    started = time.monotonic()
    proc = subprocess.run(probe_argv(ref, BOUND), capture_output=True, text=True, timeout=BOUND + 20, check=False)
    return time.monotonic() - started, {"results": [{"item": ref, "rc": proc.returncode, "stdout": proc.stdout,
                                                     "stderr": proc.stderr}]}


def _missing(ref):
    return {"results": [{"item": ref, "rc": 1, "stderr": "Error: No such image: " + ref}]}


def _judge(ref, manifests):
    return errors("npu-a01", "pull", {ref: ["qwen"]}, _missing(ref), manifests=manifests, registry_timeout=BOUND)


def test_a_registry_that_accepts_and_never_answers():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        ref = "127.0.0.1:%d/ascend/vllm-ascend:v0.18.0rc1" % listener.getsockname()[1]
        took, manifests = _run(ref)
    assert took < BOUND + 3, took
    assert _judge(ref, manifests) == [
        "npu-a01: deployment qwen: image %s: registry %s did not answer within 2 s (docker manifest inspect from "
        "the host, stopped: a firewall that drops the packets, a proxy the host needs and does not use, or a "
        "registry that accepts the connection and hangs). Fix: check that %s is up and that the host reaches it "
        "(from the host: curl -sS -m 10 https://%s/v2/), or set ascendfleet_image_mirror to a registry the host "
        "reaches, or use ascendfleet_image_source: archive" % ((ref, ref.split("/")[0]) + (ref.split("/")[0],) * 2)]


def test_a_registry_that_drops_the_packets():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        queued = []
        try:
            for _attempt in range(4):
                # Fill the accept queue (never accepted): later SYNs to the port are dropped.
                client = socket.socket()
                client.setblocking(False)
                client.connect_ex(("127.0.0.1", port))
                queued.append(client)
            time.sleep(0.2)
            ref = "127.0.0.1:%d/ascend/vllm-ascend:v0.18.0rc1" % port
            took, manifests = _run(ref)
        finally:
            for client in queued:
                client.close()
    assert took < BOUND + 3, took
    [text] = _judge(ref, manifests)
    assert text.startswith("npu-a01: deployment qwen: image %s: registry 127.0.0.1:%d did not answer within 2 s" % (ref, port))


def test_a_registry_that_refuses_is_not_a_time_out():
    # A closed port answers at once (connection refused): not the bound, the pull's own wording.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ref = "127.0.0.1:%d/ascend/vllm-ascend:v0.18.0rc1" % port
    took, manifests = _run(ref)
    assert took < BOUND, took
    [text] = _judge(ref, manifests)
    assert "127.0.0.1:%d cannot be reached from the host" % port in text and "did not answer" not in text
