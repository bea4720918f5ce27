"""The vllm_image_pull module against a unix-socket HTTP server that answers POST /images/create with
the lines a real Docker Engine sent (module_utils/fixtures/image_pull/SOURCES.md), chunked as the
daemon sends them, and GET /images/<ref>/json with an ID. Checks what the module sends (the query,
the credentials header), the progress file it leaves and its result."""
import base64
import json
import os
import socket
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from ansible_collections.ascendfleet.llm.plugins.modules import vllm_image_pull

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "module_utils", "fixtures", "image_pull")
IMAGE_ID = "sha256:ab1436e3f4c8cce86c58aa9603f37015853c7694b49c7b492d5d943175c7ece9"


class UnixHTTPServer(HTTPServer):
    address_family = socket.AF_UNIX

    def server_bind(self):
        self.socket.bind(self.server_address)

    def get_request(self):
        request, _addr = self.socket.accept()
        return request, ("local", 0)


def serve(tmp_path, stream=None, status=200, have_image=True):
    seen = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            seen.append(("POST", self.path, self.headers.get("X-Registry-Auth")))
            with open(os.path.join(FIXTURES, stream), "rb") as handle:
                body = handle.read()
            if status != 200:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for line in body.splitlines():
                line += b"\r\n"  # as the daemon ends each line (the fixtures store \n)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.write(b"0\r\n\r\n")

        def do_GET(self):
            seen.append(("GET", self.path, None))
            body = json.dumps({"Id": IMAGE_ID}).encode() if have_image else b'{"message":"No such image"}'
            self.send_response(200 if have_image else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    # AF_UNIX paths are limited to ~107 bytes: keep the socket in a short temporary directory.
    sock_dir = tempfile.mkdtemp(prefix="dk")
    path = os.path.join(sock_dir, "docker.sock")
    server = UnixHTTPServer(path, Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, "unix://" + path, seen


@pytest.fixture
def docker(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "dockercfg"))
    servers = []

    def start(**kwargs):
        server, host, seen = serve(tmp_path, **kwargs)
        servers.append(server)
        return host, seen
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def args(host, tmp_path, **more):
    out = {"image": "127.0.0.1:32768/h32a/pullrec:v1", "registry": "127.0.0.1:32768", "docker_host": host,
           "progress_file": str(tmp_path / "progress" / "qwen.json")}
    out.update(more)
    return out


def test_a_pull_streams_the_daemons_progress_into_the_file(run_module, docker, tmp_path):
    host, seen = docker(stream="pull-fresh.jsonl")
    failed, result = run_module(vllm_image_pull.main, args(host, tmp_path))
    assert not failed and result["changed"] is True and result["image_id"] == IMAGE_ID
    query = parse_qs(urlparse(seen[0][1]).query)
    assert seen[0][0] == "POST" and query == {"fromImage": ["127.0.0.1:32768/h32a/pullrec"], "tag": ["v1"]}
    assert seen[0][2] is None  # no credentials given, none in the docker config: anonymous
    assert result["msg"] == "pulled 127.0.0.1:32768/h32a/pullrec:v1: 3/3 layers, 30.3 MB of 30.3 MB (100%)"
    written = json.loads((tmp_path / "progress" / "qwen.json").read_text())
    assert written["finished"] is True and written["layers_done"] == 3 and written["bytes_done"] == 30309848
    assert written["image"] == "127.0.0.1:32768/h32a/pullrec:v1"


def test_an_image_already_there_is_no_change(run_module, docker, tmp_path):
    host, seen = docker(stream="pull-uptodate.jsonl")
    failed, result = run_module(vllm_image_pull.main, args(host, tmp_path))
    assert not failed and result["changed"] is False and result["msg"].startswith("have ")


def test_an_error_mid_stream_fails_with_the_daemons_words(run_module, docker, tmp_path):
    host, seen = docker(stream="pull-blob-missing.jsonl")
    failed, result = run_module(vllm_image_pull.main, args(host, tmp_path))
    assert failed and result["msg"] == "unknown blob"
    assert json.loads((tmp_path / "progress" / "qwen.json").read_text())["error"] == "unknown blob"


def test_a_refused_request_fails_like_docker_pull(run_module, docker, tmp_path):
    host, seen = docker(stream="pull-notag-http404.json", status=404)
    failed, result = run_module(vllm_image_pull.main, args(host, tmp_path, image="127.0.0.1:32768/h32a/pullrec:nosuchtag"))
    assert failed
    assert result["msg"] == ("Error response from daemon: manifest for 127.0.0.1:32768/h32a/pullrec:nosuchtag not found: "
                             "manifest unknown: manifest unknown")


def test_credentials_given_or_from_docker_login(run_module, docker, tmp_path):
    host, seen = docker(stream="pull-fresh.jsonl")
    run_module(vllm_image_pull.main, args(host, tmp_path, registry_username="ascendfleet", registry_password="pw"))
    assert json.loads(base64.urlsafe_b64decode(seen[0][2])) == {
        "username": "ascendfleet", "password": "pw", "serveraddress": "127.0.0.1:32768"}
    cfg = tmp_path / "dockercfg"
    cfg.mkdir()
    (cfg / "config.json").write_text(json.dumps({"auths": {"127.0.0.1:32768": {
        "auth": base64.b64encode(b"kept:login").decode()}}}))
    run_module(vllm_image_pull.main, args(host, tmp_path))
    post = [s for s in seen if s[0] == "POST"][-1]
    assert json.loads(base64.urlsafe_b64decode(post[2]))["username"] == "kept"


def test_check_mode_pulls_nothing(run_module, docker, tmp_path):
    host, seen = docker(stream="pull-fresh.jsonl", have_image=False)
    failed, result = run_module(vllm_image_pull.main, dict(args(host, tmp_path), _ansible_check_mode=True))
    assert not failed and result["changed"] is True and result["msg"].startswith("would pull")
    assert [s[0] for s in seen] == ["GET"] and not (tmp_path / "progress").exists()


def test_only_a_unix_socket(run_module, tmp_path):
    failed, result = run_module(vllm_image_pull.main, args("tcp://127.0.0.1:2375", tmp_path))
    assert failed and "only a unix socket" in result["msg"]
