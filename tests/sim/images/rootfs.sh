#!/usr/bin/env bash
# Stage "rootfs" of the simulator images: debootstrap --variant=minbase bookworm from the
# mirror apt on this machine uses, plus base-packages.txt, then `docker import` as TAG.
# Usage: rootfs.sh TAG MIRROR APT_DIR   (APT_DIR holds debian.sources and 90ascendfleet-sim,
# written by simimg.py plan --write-apt-dir; build-images.sh calls this).
set -euo pipefail
tag=$1 mirror=$2 apt_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
command -v debootstrap >/dev/null || { echo "rootfs: debootstrap is missing: apt-get install debootstrap (make docker does)" >&2; exit 2; }
work=$(mktemp -d /var/tmp/ascendfleet-sim-rootfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
pkgs=$(grep -v '^#' "$here/base-packages.txt" | xargs | tr ' ' ,)
echo "rootfs: debootstrap --variant=minbase --include=$pkgs bookworm from $mirror"
if ! debootstrap --variant=minbase --include="$pkgs" bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -30 "$work/debootstrap.log" >&2
  [ -f "$work/rootfs/debootstrap/debootstrap.log" ] && tail -30 "$work/rootfs/debootstrap/debootstrap.log" >&2
  echo "rootfs: debootstrap failed (mirror $mirror); see above" >&2
  exit 1
fi
r=$work/rootfs
rm -f "$r/etc/apt/sources.list"
install -m 0644 "$apt_dir/debian.sources" "$r/etc/apt/sources.list.d/debian.sources"
install -m 0644 "$apt_dir/90ascendfleet-sim" "$r/etc/apt/apt.conf.d/90ascendfleet-sim"
# Container conventions of Debian's own images: no services started by maintainer scripts,
# no package caches or translations kept.
printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
chmod 0755 "$r/usr/sbin/policy-rc.d"
printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\nAPT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\nDir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n' \
  >"$r/etc/apt/apt.conf.d/docker-clean"
printf 'Acquire::Languages "none";\n' >"$r/etc/apt/apt.conf.d/docker-no-languages"
rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/var/log/* "$r/debootstrap"
: >"$r/etc/hostname"
tar -C "$r" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . \
  | docker import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV LANG=C.UTF-8' \
      --change 'CMD ["/bin/bash"]' \
      --message "ascendfleet-sim rootfs: debootstrap minbase bookworm + $pkgs" \
      - "$tag" >/dev/null
echo "rootfs: imported $tag"
