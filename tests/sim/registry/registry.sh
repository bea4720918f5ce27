#!/usr/bin/env bash
# Simulator: the sim registry (test infrastructure only; nothing in roles/ or plugins/ uses it).
#
#   tests/sim/registry/registry.sh up [--password-stdin]   start (or keep) the registry container
#   tests/sim/registry/registry.sh ca FILE                  copy the sim CA certificate to FILE
#   tests/sim/registry/registry.sh push [--private] [--password-stdin] TAG...
#                                        push quay.io/ascend/vllm-ascend:TAG (built by
#                                        tests/sim/vllm/build.sh) into the mirror (:5000/:5002, as
#                                        quay.io/ascend/vllm-ascend) or the private instance (:5001,
#                                        as ascend-private/vllm-ascend)
#   tests/sim/registry/registry.sh port 5000|5001|5002     the 127.0.0.1 port an instance is published on
#   tests/sim/registry/registry.sh trust HOST...            install the sim CA on sim hosts, as a site does:
#                                        /etc/docker/certs.d/<name>:5000/ca.crt (and :5001)
#   tests/sim/registry/registry.sh fleet HOST...            up + push every stand-in tag
#                                        (tests/sim/vllm/build.sh --list) + trust (fleet.sh up)
#   tests/sim/registry/registry.sh down                     remove the container
#
# The container ($ASCENDFLEET_SIM_IMAGE_PREFIX/registry, from tests/sim/build-images.sh) runs tests/sim/registry/serve:
# the real distribution registry three times, TLS from a CA it generates, basic auth on :5001, plain
# HTTP on :5002. It joins the sim network, so the hosts reach it as <name>:<port>; its ports are
# published on 127.0.0.1 only (random ports), from where this machine's engine pushes (Docker
# treats 127.0.0.0/8 as an insecure registry, so it needs no trust in the sim CA).
# Env: ASCENDFLEET_SIM_REGISTRY (container name, default ascendfleet-sim-registry),
#      ASCENDFLEET_SIM_NETWORK (default ascendfleet-sim), ASCENDFLEET_SIM_REGISTRY_USER (default
#      ascendfleet; the password comes from stdin with --password-stdin, never from the environment).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
name=${ASCENDFLEET_SIM_REGISTRY:-ascendfleet-sim-registry}
network=${ASCENDFLEET_SIM_NETWORK:-ascendfleet-sim}
user=${ASCENDFLEET_SIM_REGISTRY_USER:-ascendfleet}
# shellcheck source=tests/sim/simenv.sh
. "$here/simenv.sh"
image=$(sim_image registry)
source_repo=quay.io/ascend/vllm-ascend
state=/var/lib/ascendfleet-sim-registry
say() { echo "registry: $*"; }
die() { echo "registry: $*" >&2; exit 1; }

port() { # port 5000|5001|5002 -> the published 127.0.0.1 port
  docker port "$name" "$1/tcp" 2>/dev/null | sed -n 's/^127\.0\.0\.1:\([0-9]*\)$/\1/p' | head -1
}

wait_ready() { # wait_ready PORT... (bounded: 60 s)
  local p deadline=$(( $(date +%s) + 60 ))
  for p in "$@"; do
    until docker exec "$name" python3 -c "import socket; socket.create_connection(('127.0.0.1', $p), 1).close()" 2>/dev/null; do
      [ "$(date +%s)" -lt "$deadline" ] || { docker logs --tail 20 "$name" >&2; die "$name does not listen on :$p after 60 s"; }
      sleep 0.5
    done
  done
}

cmd_up() {
  local password=""
  [ "${1:-}" = --password-stdin ] && IFS= read -r password
  [ -n "$(docker images -q "$image")" ] || die "image $image is missing: run tests/sim/build-images.sh (make sim-images)"
  docker network inspect "$network" >/dev/null 2>&1 || die "network $network does not exist (start the fleet or the molecule hosts first)"
  if [ "$(docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ]; then
    say "$name is running"
  elif docker inspect "$name" >/dev/null 2>&1; then
    [ "$(docker inspect -f '{{index .Config.Labels "ascendfleet-sim.registry"}}' "$name")" = 1 ] \
      || die "a container named $name exists that registry.sh did not start; remove it or set ASCENDFLEET_SIM_REGISTRY"
    docker start "$name" >/dev/null
    say "$name started again"
  else
    docker run -d --name "$name" --hostname "$name" --label ascendfleet-sim.registry=1 \
      --network "$network" -p 127.0.0.1::5000 -p 127.0.0.1::5001 -p 127.0.0.1::5002 \
      -v "$here:/opt/ascendfleet-sim:ro" -e "ASCENDFLEET_SIM_REGISTRY_NAMES=$name" \
      "$image" /opt/ascendfleet-sim/registry/serve >/dev/null
    say "$name created on network $network"
  fi
  if [ -n "$password" ]; then
    printf '%s\n' "$password" | docker exec -i "$name" htpasswd -iBc "$state/auth/htpasswd" "$user" 2>/dev/null \
      || die "htpasswd failed in $name"
  fi
  wait_ready 5000 5002
  [ -z "$password" ] || wait_ready 5001
  say "$name: mirror https://$name:5000 (127.0.0.1:$(port 5000)), private https://$name:5001" \
      "(127.0.0.1:$(port 5001)), plain http://$name:5002 (127.0.0.1:$(port 5002))"
}

cmd_ca() { # ca FILE
  [ -n "${1:-}" ] || die "usage: registry.sh ca FILE"
  docker exec "$name" cat "$state/ca/ca.crt" >"$1.tmp" && mv "$1.tmp" "$1"
  say "CA certificate of $name written to $1"
}

cmd_push() {
  local private=0 password="" tags=() tag src dst p cfg
  while [ $# -gt 0 ]; do
    case $1 in
      --private) private=1 ;;
      --password-stdin) IFS= read -r password ;;
      *) tags+=("$1") ;;
    esac
    shift
  done
  [ ${#tags[@]} -gt 0 ] || die "usage: registry.sh push [--private] [--password-stdin] TAG..."
  if [ "$private" = 1 ]; then
    p=$(port 5001)
    [ -n "$password" ] || die "push --private needs --password-stdin"
  else
    p=$(port 5000)
  fi
  [ -n "$p" ] || die "$name is not running (registry.sh up)"
  # A login of our own: this machine's ~/.docker/config.json is not touched.
  cfg=$(mktemp -d /tmp/ascendfleet-sim-registry-push.XXXXXX)
  push_cfg=$cfg
  trap 'rm -rf "$push_cfg"' EXIT
  if [ "$private" = 1 ]; then
    printf '%s\n' "$password" | DOCKER_CONFIG=$cfg docker login -u "$user" --password-stdin "127.0.0.1:$p" >/dev/null
  fi
  local id marker
  for tag in "${tags[@]}"; do
    src=$source_repo:$tag
    id=$(docker image inspect -f '{{.Id}}' "$src" 2>/dev/null) || die "$src is missing: run tests/sim/vllm/build.sh"
    # Pushed before with the same image ID (noted inside the registry container): nothing to do.
    marker=$state/pushed/$([ "$private" = 1 ] && echo private || echo mirror)/$tag
    if [ "$(docker exec "$name" cat "$marker" 2>/dev/null)" = "$id" ]; then
      say "$src is in $name already"
      continue
    fi
    if [ "$private" = 1 ]; then dst=127.0.0.1:$p/ascend-private/vllm-ascend:$tag; else dst=127.0.0.1:$p/$source_repo:$tag; fi
    docker tag "$src" "$dst"
    if ! timeout 300 env DOCKER_CONFIG="$cfg" docker push -q "$dst" >/dev/null; then
      docker rmi "$dst" >/dev/null 2>&1 || true
      die "push of $dst failed"
    fi
    docker rmi "$dst" >/dev/null
    docker exec "$name" sh -c "mkdir -p '${marker%/*}' && echo '$id' >'$marker'"
    say "pushed $src to $name:$([ "$private" = 1 ] && echo 5001/ascend-private/vllm-ascend:$tag || echo 5000/$src)"
  done
}

cmd_trust() { # trust HOST...
  local h p
  [ $# -gt 0 ] || die "usage: registry.sh trust HOST..."
  for h in "$@"; do
    for p in 5000 5001; do
      docker exec "$name" cat "$state/ca/ca.crt" \
        | docker exec -i "$h" sh -c "mkdir -p '/etc/docker/certs.d/$name:$p' && cat >'/etc/docker/certs.d/$name:$p/ca.crt'" \
        || die "could not install the CA of $name on $h"
    done
  done
  say "$* trust $name (/etc/docker/certs.d/$name:{5000,5001}/ca.crt)"
}

cmd_fleet() { # fleet HOST...: what fleet.sh up needs for vllm_compose_image_source: pull
  local tags
  cmd_up
  local t built=()
  mapfile -t tags < <("$here/vllm/build.sh" --list | sed 's/^.*://')
  for t in "${tags[@]}"; do
    if [ -n "$(docker images -q "$source_repo:$t")" ]; then built+=("$t"); else say "$source_repo:$t is not built; not pushed"; fi
  done
  [ ${#built[@]} -eq 0 ] || cmd_push "${built[@]}"
  [ $# -eq 0 ] || cmd_trust "$@"
}

cmd_down() {
  if docker inspect "$name" >/dev/null 2>&1; then
    [ "$(docker inspect -f '{{index .Config.Labels "ascendfleet-sim.registry"}}' "$name")" = 1 ] \
      || die "$name was not started by registry.sh; not removing it"
    docker rm -f -v "$name" >/dev/null
    say "$name removed"
  fi
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  ca) shift; cmd_ca "$@" ;;
  push) shift; cmd_push "$@" ;;
  port) shift; port "${1:?usage: registry.sh port 5000|5001|5002}" ;;
  trust) shift; cmd_trust "$@" ;;
  fleet) shift; cmd_fleet "$@" ;;
  down) cmd_down ;;
  *) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
