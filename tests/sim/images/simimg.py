#!/usr/bin/env python3
"""Build plan for the simulator images (test infrastructure, never shipped).

Two jobs, both pure functions so pytest can check them without Docker:

* find the Debian mirror that apt on this machine is configured with (deb822 ``*.sources``
  files and one-line ``*.list`` files), so debootstrap and apt inside the images use the same
  mirror and nothing hard-codes a host;
* compute a content hash of each image's inputs, used as its tag. Docker's image store is
  the cache: an image whose input tag already exists is reused, so a fresh clone on the same
  machine (CI) skips the build.

``python3 simimg.py plan`` prints shell assignments that ``tests/sim/build-images.sh`` evals.
Standard library only.
"""

import argparse
import glob
import hashlib
import os
import shlex
import subprocess
import sys

SUITE = "bookworm"
HASH_LEN = 16

# Acquire options from this machine's apt configuration that are carried into the images
# (a frozen or snapshot mirror needs Check-Valid-Until "false" inside the image as well).
CARRIED_APT_OPTIONS = ("Acquire::Check-Valid-Until", "Acquire::Check-Date")


class PlanError(Exception):
    """Raised with a message that names what is wrong and how to fix it."""


def _deb822_stanzas(text):
    stanza = {}
    key = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("#"):
            continue
        if not line.strip():
            if stanza:
                yield stanza
            stanza, key = {}, None
            continue
        if line[0] in " \t" and key:
            stanza[key] += " " + line.strip()
            continue
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        key = key.strip().lower()
        stanza[key] = value.strip()
    if stanza:
        yield stanza


def parse_deb822(text):
    """Return (types, uri, suites, components) tuples of a deb822 ``.sources`` text."""
    entries = []
    for st in _deb822_stanzas(text):
        if st.get("enabled", "yes").lower() == "no":
            continue
        types = st.get("types", "").split()
        suites = st.get("suites", "").split()
        comps = st.get("components", "").split()
        for uri in st.get("uris", "").split():
            entries.append((types, uri, suites, comps))
    return entries


def parse_one_line(text):
    """Return (types, uri, suites, components) tuples of a one-line ``.list`` text."""
    entries = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        kind = words.pop(0)
        if words and words[0].startswith("["):
            while words and not words[0].endswith("]"):
                words.pop(0)
            if words:
                words.pop(0)
        if len(words) < 2:
            continue
        entries.append(([kind], words[0], [words[1]], words[2:]))
    return entries


def _suite_kind(suite):
    base = suite.rstrip("/")
    if base.endswith("-security") or base.endswith("/updates"):
        return "security"
    if "-" in base:
        return "other"  # -updates, -backports, -proposed-updates
    return "archive"


def find_mirrors(entries):
    """Pick the archive and security mirrors out of parsed apt source entries.

    Returns a dict {"archive": uri, "security": uri or ""}. The archive mirror is the first
    ``deb`` entry with ``main`` on a plain release suite (bookworm, trixie, stable...); the
    security mirror the first ``deb`` entry on a ``*-security`` suite.
    """
    archive = security = ""
    for types, uri, suites, comps in entries:
        if "deb" not in types or "main" not in comps:
            continue
        for suite in suites:
            kind = _suite_kind(suite)
            if kind == "archive" and not archive:
                archive = uri
            elif kind == "security" and not security:
                security = uri
    if not archive:
        raise PlanError(
            "no Debian archive mirror found in apt's sources (need a 'deb' entry with component "
            "'main' on a release suite such as bookworm); fix /etc/apt/sources.list(.d) or set "
            "ASCENDFLEET_SIM_MIRROR=http://your-mirror/debian")
    for name, uri in (("archive", archive), ("security", security)):
        if uri and not uri.startswith(("http://", "https://")):
            raise PlanError(
                "apt's %s mirror %r is not http(s); the image builds (debootstrap, apt inside "
                "docker build) need a network mirror: set ASCENDFLEET_SIM_MIRROR (and "
                "ASCENDFLEET_SIM_SECURITY_MIRROR) to one" % (name, uri))
    return {"archive": archive.rstrip("/"), "security": security.rstrip("/")}


def read_apt_sources(root="/"):
    """Parse every apt sources file under ``root`` (``/`` on a real machine)."""
    entries = []
    etc = os.path.join(root, "etc/apt")
    paths = [os.path.join(etc, "sources.list")]
    paths += sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.list")))
    paths += sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.sources")))
    for path in paths:
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        entries += parse_deb822(text) if path.endswith(".sources") else parse_one_line(text)
    return entries


def machine_mirrors(root="/", environ=None):
    environ = os.environ if environ is None else environ
    override = environ.get("ASCENDFLEET_SIM_MIRROR", "").strip()
    if override:
        return find_mirrors([(["deb"], override, [SUITE], ["main"])] + (
            [(["deb"], environ["ASCENDFLEET_SIM_SECURITY_MIRROR"], [SUITE + "-security"], ["main"])]
            if environ.get("ASCENDFLEET_SIM_SECURITY_MIRROR", "").strip() else []))
    return find_mirrors(read_apt_sources(root))


def apt_sources_for_image(mirrors):
    """The deb822 sources file written into the images (bookworm on the machine's mirrors)."""
    text = ("Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
            % (mirrors["archive"], SUITE, SUITE))
    if mirrors["security"]:
        text += ("\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n"
                 "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
                 % (mirrors["security"], SUITE))
    return text


def carried_apt_conf(dump_text):
    """apt.conf lines for the image from ``apt-config dump`` output (options listed above)."""
    lines = []
    for raw in dump_text.splitlines():
        name, _, value = raw.strip().partition(" ")
        if name in CARRIED_APT_OPTIONS:
            lines.append("%s %s" % (name, value.strip()))
    return "".join(line + "\n" for line in sorted(lines))


def input_hash(parts):
    """Hash of an image's inputs.

    ``parts`` is an iterable of (label, bytes-or-str). Labels take part in the hash, order does
    not (parts are sorted by label), and every part is length-prefixed so no two different sets
    of inputs can produce the same byte stream.
    """
    h = hashlib.sha256()
    seen = set()
    for label, data in sorted(parts, key=lambda p: p[0]):
        if label in seen:
            raise ValueError("duplicate input label %r" % label)
        seen.add(label)
        if isinstance(data, str):
            data = data.encode("utf-8")
        for chunk in (label.encode("utf-8"), data):
            h.update(b"%d:" % len(chunk))
            h.update(chunk)
    return h.hexdigest()[:HASH_LEN]


def _read(path):
    with open(path, "rb") as fh:
        return fh.read()


def plan(images_dir, ca_bundle, compose_bin, mirrors, apt_conf):
    """Tags of the five build stages.

    rootfs     debootstrap --variant=minbase + base packages (slow, ~1 min)
    host-pkgs  rootfs + docker.io & co (slow, ~1 min)
    base       rootfs + the machine's CA bundle (seconds)
    host       host-pkgs + CA bundle + Compose v2 plugin (seconds)
    registry   base + Debian's docker-registry, htpasswd, openssl (~20 s)
    prometheus base + Debian's prometheus package (monitoring scenarios; ~1 min)
    haproxy    base + Debian's haproxy package (the gateway scenarios; seconds)
    The CA bundle goes in last so a changed bundle only costs the two fast stages.
    """
    sources = apt_sources_for_image(mirrors)
    rootfs = input_hash([
        ("rootfs.sh", _read(os.path.join(images_dir, "rootfs.sh"))),
        ("base-packages.txt", _read(os.path.join(images_dir, "base-packages.txt"))),
        ("suite", SUITE),
        ("apt-sources", sources),
        ("apt-conf", apt_conf),
    ])
    host_pkgs = input_hash([
        ("rootfs", rootfs),
        ("Dockerfile.host-pkgs", _read(os.path.join(images_dir, "Dockerfile.host-pkgs"))),
        ("host-packages.txt", _read(os.path.join(images_dir, "host-packages.txt"))),
    ])
    ca = _read(ca_bundle)
    base = input_hash([
        ("rootfs", rootfs),
        ("Dockerfile.base", _read(os.path.join(images_dir, "Dockerfile.base"))),
        ("ca-bundle", ca),
    ])
    host = input_hash([
        ("host-pkgs", host_pkgs),
        ("Dockerfile.host", _read(os.path.join(images_dir, "Dockerfile.host"))),
        ("ca-bundle", ca),
        ("docker-compose", _read(compose_bin)),
    ])
    registry = input_hash([
        ("base", base),
        ("Dockerfile.registry", _read(os.path.join(images_dir, "Dockerfile.registry"))),
        ("registry-packages.txt", _read(os.path.join(images_dir, "registry-packages.txt"))),
    ])
    prometheus = input_hash([
        ("base", base),
        ("Dockerfile.prometheus", _read(os.path.join(images_dir, "Dockerfile.prometheus"))),
    ])
    haproxy = input_hash([
        ("base", base),
        ("Dockerfile.haproxy", _read(os.path.join(images_dir, "Dockerfile.haproxy"))),
    ])
    return {
        "ROOTFS_TAG": "in-" + rootfs,
        "HOST_PKGS_TAG": "in-" + host_pkgs,
        "BASE_TAG": "in-" + base,
        "HOST_TAG": "in-" + host,
        "REGISTRY_TAG": "in-" + registry,
        "PROMETHEUS_TAG": "in-" + prometheus,
        "HAPROXY_TAG": "in-" + haproxy,
        "APT_ARCHIVE": mirrors["archive"],
        "APT_SECURITY": mirrors["security"],
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan", help="print shell assignments for build-images.sh")
    p.add_argument("--ca-bundle", default="/etc/ssl/certs/ca-certificates.crt")
    p.add_argument("--compose-bin", required=True)
    p.add_argument("--write-apt-dir", help="write apt sources/conf for the image here")
    sub.add_parser("mirrors", help="print the apt mirrors found on this machine")
    args = ap.parse_args(argv)
    images_dir = os.path.dirname(os.path.abspath(__file__))
    try:
        mirrors = machine_mirrors()
        if args.cmd == "mirrors":
            print("archive=%s\nsecurity=%s" % (mirrors["archive"], mirrors["security"]))
            return 0
        for path, what in ((args.ca_bundle, "CA bundle"), (args.compose_bin, "Compose v2 binary")):
            if not os.path.isfile(path):
                raise PlanError("%s %s does not exist" % (what, path))
        dump = subprocess.run(["apt-config", "dump"], check=True, capture_output=True,
                              text=True).stdout
        apt_conf = carried_apt_conf(dump)
        result = plan(images_dir, args.ca_bundle, args.compose_bin, mirrors, apt_conf)
    except PlanError as exc:
        print("simimg: %s" % exc, file=sys.stderr)
        return 2
    if args.write_apt_dir:
        os.makedirs(args.write_apt_dir, exist_ok=True)
        with open(os.path.join(args.write_apt_dir, "debian.sources"), "w", encoding="utf-8") as fh:
            fh.write(apt_sources_for_image(mirrors))
        with open(os.path.join(args.write_apt_dir, "90ascendfleet-sim"), "w", encoding="utf-8") as fh:
            fh.write(apt_conf)
    for key, value in result.items():
        print("%s=%s" % (key, shlex.quote(value)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
