"""Tests of the simulator image build plan (tests/sim/images/simimg.py): apt mirror detection
from sources files and the input hash that keys the image cache. No Docker needed."""

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "images"))
import simimg  # noqa: E402  pylint: disable=wrong-import-position

IMAGES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "images")

# The deb822 file of a Debian bookworm machine (the layout of this machine's
# /etc/apt/sources.list.d/debian.sources, comments included).
BOOKWORM_DEB822 = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

ONE_LINE = """\
# deb http://old.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb http://backports.example/debian bookworm-backports main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian bookworm main contrib
deb http://mirror.example/debian bookworm-updates main
deb http://security.example/debian-security bookworm-security main
"""


def test_deb822_of_a_bookworm_machine():
    entries = simimg.parse_deb822(BOOKWORM_DEB822)
    assert entries == [
        (["deb"], "http://deb.debian.org/debian", ["bookworm", "bookworm-updates"], ["main"]),
        (["deb"], "http://deb.debian.org/debian-security", ["bookworm-security"], ["main"]),
    ]
    assert simimg.find_mirrors(entries) == {
        "archive": "http://deb.debian.org/debian",
        "security": "http://deb.debian.org/debian-security",
    }


def test_one_line_format_skips_comments_sources_and_backports():
    entries = simimg.parse_one_line(ONE_LINE)
    assert entries[0] == (["deb-src"], "http://src.example/debian", ["bookworm"], ["main"])
    assert entries[2] == (["deb"], "http://mirror.example/debian", ["bookworm"], ["main", "contrib"])
    assert simimg.find_mirrors(entries) == {
        "archive": "http://mirror.example/debian",
        "security": "http://security.example/debian-security",
    }


def test_disabled_stanza_and_trailing_slash():
    text = ("Types: deb\nURIs: http://disabled.example/debian\nSuites: bookworm\nComponents: main\n"
            "Enabled: no\n\n"
            "Types: deb deb-src\nURIs: http://mirror.example/debian/\nSuites: trixie\nComponents: main\n")
    assert simimg.find_mirrors(simimg.parse_deb822(text)) == {
        "archive": "http://mirror.example/debian", "security": ""}


def test_no_archive_mirror_is_a_clear_error():
    entries = simimg.parse_one_line("deb http://security.example/debian-security bookworm-security main\n")
    with pytest.raises(simimg.PlanError, match="ASCENDFLEET_SIM_MIRROR"):
        simimg.find_mirrors(entries)


def test_non_network_mirror_is_refused():
    with pytest.raises(simimg.PlanError, match="not http"):
        simimg.find_mirrors(simimg.parse_one_line("deb file:/srv/mirror bookworm main\n"))


def test_read_apt_sources_from_a_tree(tmp_path):
    (tmp_path / "etc/apt/sources.list.d").mkdir(parents=True)
    (tmp_path / "etc/apt/sources.list").write_text("# empty on deb822 machines\n")
    (tmp_path / "etc/apt/sources.list.d/debian.sources").write_text(BOOKWORM_DEB822)
    (tmp_path / "etc/apt/sources.list.d/other.list").write_text(
        "deb http://vendor.example/apt stable-extra main\n")
    assert simimg.machine_mirrors(str(tmp_path), environ={}) == {
        "archive": "http://deb.debian.org/debian",
        "security": "http://deb.debian.org/debian-security",
    }


def test_environment_overrides_the_machine(tmp_path):
    env = {"ASCENDFLEET_SIM_MIRROR": "http://m.example/debian"}
    assert simimg.machine_mirrors(str(tmp_path), environ=env) == {
        "archive": "http://m.example/debian", "security": ""}


def test_image_sources_use_the_machines_mirrors():
    text = simimg.apt_sources_for_image({"archive": "http://m.example/debian", "security": ""})
    assert text == ("Types: deb\nURIs: http://m.example/debian\nSuites: bookworm bookworm-updates\n"
                    "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")


def test_carried_apt_conf_picks_only_the_listed_options():
    dump = ('APT "";\nAPT::Architecture "amd64";\nAcquire::Check-Valid-Until "false";\n'
            'Acquire::Languages "none";\nAcquire::Check-Date "false";\n')
    assert simimg.carried_apt_conf(dump) == (
        'Acquire::Check-Date "false";\nAcquire::Check-Valid-Until "false";\n')


def test_input_hash_is_stable_order_free_and_sensitive():
    a = simimg.input_hash([("x", b"1"), ("y", "2")])
    assert a == simimg.input_hash([("y", b"2"), ("x", "1")])
    assert len(a) == simimg.HASH_LEN and int(a, 16) >= 0
    assert a != simimg.input_hash([("x", b"1"), ("y", b"3")])
    assert a != simimg.input_hash([("x", b"1"), ("z", b"2")])
    # Boundaries are part of the hash: moving bytes between label and data changes it.
    assert simimg.input_hash([("ab", b"c")]) != simimg.input_hash([("a", b"bc")])
    with pytest.raises(ValueError, match="duplicate"):
        simimg.input_hash([("x", b"1"), ("x", b"2")])


@pytest.fixture(name="plan_inputs")
def fixture_plan_inputs(tmp_path):
    images = tmp_path / "images"
    shutil.copytree(IMAGES_DIR, images, ignore=shutil.ignore_patterns("__pycache__"))
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    compose = tmp_path / "docker-compose"
    compose.write_bytes(b"\x7fELF compose")
    mirrors = {"archive": "http://m.example/debian", "security": "http://s.example/debian-security"}

    def run(**over):
        args = {"mirrors": mirrors, "apt_conf": ""}
        args.update(over)
        return simimg.plan(str(images), str(ca), str(compose), args["mirrors"], args["apt_conf"])
    return images, ca, compose, run


def test_plan_stages_change_only_with_their_inputs(plan_inputs):
    images, ca, compose, run = plan_inputs
    first = run()
    assert first == run()
    assert all(first[k].startswith("in-") for k in ("ROOTFS_TAG", "HOST_PKGS_TAG", "BASE_TAG", "HOST_TAG",
                                                    "PROMETHEUS_TAG"))

    ca.write_text(ca.read_text() + "# another CA\n")
    after_ca = run()
    assert after_ca["ROOTFS_TAG"] == first["ROOTFS_TAG"]
    assert after_ca["HOST_PKGS_TAG"] == first["HOST_PKGS_TAG"]
    assert after_ca["BASE_TAG"] != first["BASE_TAG"]
    assert after_ca["HOST_TAG"] != first["HOST_TAG"]
    assert after_ca["PROMETHEUS_TAG"] != first["PROMETHEUS_TAG"]

    (images / "host-packages.txt").write_text((images / "host-packages.txt").read_text() + "curl\n")
    after_pkgs = run()
    assert after_pkgs["ROOTFS_TAG"] == first["ROOTFS_TAG"]
    assert after_pkgs["BASE_TAG"] == after_ca["BASE_TAG"]
    assert after_pkgs["HOST_PKGS_TAG"] != first["HOST_PKGS_TAG"]
    assert after_pkgs["HOST_TAG"] != after_ca["HOST_TAG"]

    compose.write_bytes(b"\x7fELF compose v2.41")
    after_compose = run()
    assert after_compose["HOST_TAG"] != after_pkgs["HOST_TAG"]
    assert after_compose["BASE_TAG"] == after_pkgs["BASE_TAG"]
    # The registry image sits on base: a new CA bundle rebuilds it, the host's inputs do not.
    assert after_ca["REGISTRY_TAG"] != first["REGISTRY_TAG"]
    assert after_compose["REGISTRY_TAG"] == after_ca["REGISTRY_TAG"]
    (images / "registry-packages.txt").write_text((images / "registry-packages.txt").read_text() + "curl\n")
    after_reg = run()
    assert after_reg["REGISTRY_TAG"] != after_compose["REGISTRY_TAG"]
    assert after_reg["HOST_TAG"] == after_compose["HOST_TAG"]
    assert after_compose["PROMETHEUS_TAG"] == after_pkgs["PROMETHEUS_TAG"]
    (images / "Dockerfile.prometheus").write_text((images / "Dockerfile.prometheus").read_text() + "# x\n")
    after_prom = run()
    assert after_prom["PROMETHEUS_TAG"] != after_compose["PROMETHEUS_TAG"]
    assert after_prom["HOST_TAG"] == after_compose["HOST_TAG"]

    other_mirror = run(mirrors={"archive": "http://other.example/debian", "security": ""})
    assert other_mirror["ROOTFS_TAG"] != after_compose["ROOTFS_TAG"]
    assert other_mirror["APT_ARCHIVE"] == "http://other.example/debian"
    assert run(apt_conf='Acquire::Check-Valid-Until "false";\n')["ROOTFS_TAG"] != after_compose["ROOTFS_TAG"]
