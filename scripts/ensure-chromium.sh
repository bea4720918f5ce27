#!/usr/bin/env bash
# Make sure Debian's headless-capable Chromium is installed: the status-page test
# (tests/unit/test_status_page_browser.py) renders the HTML report in it. Idempotent: does
# nothing when `chromium` is already on PATH. Needs root (apt) the first time.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
echo "ensure-chromium: installing chromium (Debian package) for the status page browser test"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "ensure-chromium: chromium still missing after apt-get install" >&2; exit 1; }
