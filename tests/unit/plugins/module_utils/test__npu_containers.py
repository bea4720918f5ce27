# -*- coding: utf-8 -*-
"""PID -> /proc/PID/cgroup -> container id -> compose project, with a fake /proc and docker."""

import json
import pathlib

from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_containers as containers

CID_A = "a" * 63 + "1"
CID_B = "0123456789abcdef" * 4


def make_proc(root, pid, cgroup):
    d = root / str(pid)
    d.mkdir(parents=True)
    (d / "cgroup").write_text(cgroup)


def test_container_id_from_cgroup_formats(tmp_path):
    make_proc(tmp_path, 1, "0::/system.slice/docker-%s.scope\n" % CID_A)
    make_proc(tmp_path, 2, "12:devices:/docker/%s\n11:cpu:/docker/%s\n" % (CID_B, CID_B))
    make_proc(tmp_path, 3, "0::/user.slice/user-0.slice/session-1.scope\n")
    make_proc(tmp_path, 4, "0::/docker/%s/nested\n" % ("f" * 65))
    root = str(tmp_path)
    assert containers.container_id(1, root) == CID_A
    assert containers.container_id(2, root) == CID_B
    assert containers.container_id(3, root) is None
    assert containers.container_id(4, root) is None  # 65 hex digits is no container id
    assert containers.container_id(99, root) is None  # process gone


class FakeDocker(object):
    def __init__(self, labels, rc=0, err=""):
        self.labels, self.rc, self.err, self.calls = labels, rc, err, []

    def __call__(self, argv):
        self.calls.append(argv)
        out = "".join("%s %s\n" % (cid, json.dumps(self.labels[cid]))
                      for cid in argv[6:] if cid in self.labels)
        return self.rc, out, self.err


def test_pid_owners(tmp_path):
    make_proc(tmp_path, 10, "0::/system.slice/docker-%s.scope\n" % CID_A)
    make_proc(tmp_path, 11, "0::/system.slice/docker-%s.scope\n" % CID_A)
    make_proc(tmp_path, 12, "0::/docker/%s\n" % CID_B)
    make_proc(tmp_path, 13, "0::/init.scope\n")
    docker = FakeDocker({CID_A: {"com.docker.compose.project": "qwen-chat"},
                         CID_B: {"other": "x"}})
    owners, warnings = containers.pid_owners([10, 11, 12, 13, 14], docker,
                                             proc_root=str(tmp_path), docker="/x/docker")
    assert owners == {10: "qwen-chat", 11: "qwen-chat", 12: None, 13: None, 14: None}
    assert warnings == []
    assert docker.calls == [["/x/docker", "inspect", "--type", "container", "--format",
                             "{{.Id}} {{json .Config.Labels}}", CID_B, CID_A]]
    owners, dummy = containers.pid_owners([12], docker, label="other", proc_root=str(tmp_path))
    assert owners == {12: "x"}


def test_pid_owners_without_docker(tmp_path):
    make_proc(tmp_path, 10, "0::/docker/%s\n" % CID_A)
    owners, warnings = containers.pid_owners([10], None, proc_root=str(tmp_path))
    assert owners == {10: None}
    assert warnings == ["docker not found: processes in containers (pids 10) cannot be "
                        "attributed to a deployment"]


def test_docker_failure_is_a_warning(tmp_path):
    make_proc(tmp_path, 10, "0::/docker/%s\n" % CID_A)
    docker = FakeDocker({}, rc=1, err="Cannot connect to the Docker daemon")
    owners, warnings = containers.pid_owners([10], docker, proc_root=str(tmp_path))
    assert owners == {10: None}
    assert len(warnings) == 1 and "Cannot connect to the Docker daemon" in warnings[0]


def test_no_containers_no_docker_call(tmp_path):
    docker = FakeDocker({})
    owners, warnings = containers.pid_owners([5], docker, proc_root=str(tmp_path))
    assert owners == {5: None} and docker.calls == [] and warnings == []


# docker inspect of qwen and chat, captured on a sim host after their deploy.
INSPECTED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "vllm_noop" / "inspect-two-projects.json").read_text())
CID_QWEN = "d73bd7ec9f8139bd12583ba284018ac033fd9716781da9733433a26011156de4"
CID_CHAT = "3630ae2c6ac6e79d91d06483af02fa79118a30c11edd3472c621c11e0f9ce21b"


def test_pid_owners_take_the_labels_of_containers_already_inspected(tmp_path):
    make_proc(tmp_path, 10, "0::/system.slice/docker-%s.scope\n" % CID_QWEN)
    make_proc(tmp_path, 11, "0::/docker/%s\n" % CID_CHAT)
    make_proc(tmp_path, 12, "0::/docker/%s\n" % CID_B)
    docker = FakeDocker({CID_B: {"com.docker.compose.project": "other"}})
    owners, warnings = containers.pid_owners([10, 11], docker, proc_root=str(tmp_path), inspected=INSPECTED)
    assert owners == {10: "qwen", 11: "chat"} and warnings == [] and docker.calls == []
    # The same answer as one docker inspect of both (their labels as captured).
    alone = FakeDocker(dict((c["Id"], c["Config"]["Labels"]) for c in INSPECTED))
    assert containers.pid_owners([10, 11], alone, proc_root=str(tmp_path))[0] == owners
    # A container not inspected before is asked, alone.
    owners, warnings = containers.pid_owners([10, 12], docker, proc_root=str(tmp_path), docker="/x/docker",
                                             inspected=INSPECTED)
    assert owners == {10: "qwen", 12: "other"} and warnings == []
    assert [argv[6:] for argv in docker.calls] == [[CID_B]]
