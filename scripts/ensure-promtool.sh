#!/usr/bin/env bash
# Make sure promtool (from Debian's `prometheus` package) is in the virtualenv: the rule and
# configuration tests (tests/unit/roles/fleet_monitoring/) run `promtool check config`,
# `promtool check rules` and `promtool test rules`. Idempotent: does nothing when
# <venv>/bin/promtool exists. The package is downloaded and unpacked, not installed, so no
# Prometheus service starts on this machine.   Usage: ensure-promtool.sh VENV
set -euo pipefail
venv=$(cd "${1:?usage: ensure-promtool.sh VENV}" && pwd)
if [ -x "$venv/bin/promtool" ]; then
  exit 0
fi
work=$(mktemp -d /tmp/ascendfleet-promtool.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "ensure-promtool: unpacking promtool from Debian's prometheus package into $venv/bin"
cd "$work"
if ! apt-get download -qq prometheus 2>/dev/null; then
  apt-get update -qq
  apt-get download -qq prometheus
fi
dpkg-deb -x prometheus_*.deb root
install -m 0755 root/usr/bin/promtool "$venv/bin/promtool"
"$venv/bin/promtool" --version | head -1
