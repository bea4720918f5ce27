#!/usr/bin/env bash
# The simulated Ascend fleet (test infrastructure, never shipped): one container per host of
# inventories/sim/hosts.yml, each running its own Docker Engine with the NPU surface of its
# profile, plus the stand-in ModelScope hub and the site registry (tests/sim/registry). Idempotent.
#   fleet.sh up         build/reuse everything the sim needs (tests/sim/assets.sh), start the
#                       network, hub, registry and hosts, wait for each host's Docker Engine
#   fleet.sh down       remove the hosts, the hub, their volumes and the network (images stay)
#   fleet.sh status     hosts, profiles, addresses and health
#   fleet.sh endpoints  the OpenAI endpoints of the stand-in vLLM deployments on the hosts
#   fleet.sh gateways   the fleet's one endpoint: each gateway's URL (group ascendfleet_gateways)
# Env: ASCENDFLEET_SIM_INVENTORY (default inventories/sim/hosts.yml),
#      ASCENDFLEET_SIM_WAIT (seconds to wait for each host's dockerd, default 120),
#      ASCENDFLEET_SIM_NETWORK (default ascendfleet-sim), ASCENDFLEET_SIM_HUB=0 (no hub),
#      ASCENDFLEET_SIM_WITH_REGISTRY=0 (neither start nor remove the sim registry),
#      ASCENDFLEET_SIM_CACHE / ASCENDFLEET_SIM_IMAGE_PREFIX (tests/sim/simenv.sh),
#      ASCENDFLEET_SIM_HUB_NAME (default ascendfleet-sim-hub), ASCENDFLEET_SIM_HUB_PORT
#      (loopback port published for the hub, default 18080; empty publishes none),
#      ASCENDFLEET_SIM_HUB_CONFIG (a hub config JSON, tests/sim/hub/server.py --config; the
#      hub is recreated on every `up` when one is given),
#      ASCENDFLEET_SIM_PROFILES_DIR (a directory of more profiles <name>.json, mounted into
#      the hosts and read instead of tests/sim/profiles/).
# `down` removes only what belongs to the inventory's hosts (and the hub unless
# ASCENDFLEET_SIM_HUB=0), so a second fleet with another inventory/network can coexist.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/sim/simenv.sh
. "$here/simenv.sh"
host_image=$(sim_image host)
base_image=$(sim_image base)
inventory=${ASCENDFLEET_SIM_INVENTORY:-$top/inventories/sim/hosts.yml}
network=${ASCENDFLEET_SIM_NETWORK:-ascendfleet-sim}
with_hub=${ASCENDFLEET_SIM_HUB:-1}
with_registry=${ASCENDFLEET_SIM_WITH_REGISTRY:-1}
hub=${ASCENDFLEET_SIM_HUB_NAME:-ascendfleet-sim-hub}
hub_port=${ASCENDFLEET_SIM_HUB_PORT-18080}
hub_config=${ASCENDFLEET_SIM_HUB_CONFIG:-}
profiles_dir=${ASCENDFLEET_SIM_PROFILES_DIR:-}
label=ascendfleet-sim.fleet
wait_s=${ASCENDFLEET_SIM_WAIT:-120}
# Every capability but SYS_RESOURCE (not in this machine's bounding set, so --privileged and
# --cap-add ALL fail); enough for the inner dockerd, mknod and --device.
caps=(AUDIT_CONTROL AUDIT_WRITE CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID IPC_LOCK IPC_OWNER
      KILL LEASE LINUX_IMMUTABLE MAC_ADMIN MAC_OVERRIDE MKNOD NET_ADMIN NET_BIND_SERVICE
      NET_BROADCAST NET_RAW SETFCAP SETGID SETPCAP SETUID SYSLOG SYS_ADMIN SYS_BOOT SYS_CHROOT
      SYS_MODULE SYS_NICE SYS_PACCT SYS_PTRACE SYS_RAWIO SYS_TIME SYS_TTY_CONFIG WAKE_ALARM)

say() { echo "fleet: $*"; }
die() { echo "fleet: $*" >&2; exit 1; }

need_docker() {
  docker info >/dev/null 2>&1 || die "Docker is not answering (docker info failed): run 'make docker'"
}

# "name profile" lines for the hosts of groups ascend_servers and ascendfleet_gateways (the
# gateway is a sim host too) in the inventory.
inventory_hosts() {
  [ -f "$inventory" ] || die "inventory $inventory does not exist"
  command -v ansible-inventory >/dev/null 2>&1 \
    || die "ansible-inventory not found: activate the project's venv (make setup; . .venv/bin/activate)"
  ANSIBLE_INVENTORY_ENABLED=yaml ansible-inventory -i "$inventory" --list 2>/dev/null | python3 -c '
import json, sys
inv = json.load(sys.stdin)
hosts = inv.get("ascend_servers", {}).get("hosts", [])
if not hosts:
    sys.exit("fleet: the inventory has no hosts in group ascend_servers")
hv = inv.get("_meta", {}).get("hostvars", {})
hosts += [h for h in inv.get("ascendfleet_gateways", {}).get("hosts", []) if h not in hosts]
for h in hosts:
    p = hv.get(h, {}).get("ascendfleet_sim_profile")
    if not p:
        sys.exit("fleet: host %s has no ascendfleet_sim_profile host var (name of tests/sim/profiles/<name>.json)" % h)
    print(h, p)
'
}

# "name port" lines for the gateways (group ascendfleet_gateways; port: fleet_gateway_port, else
# the role's default 8080).
gateway_hosts() {
  ANSIBLE_INVENTORY_ENABLED=yaml ansible-inventory -i "$inventory" --list 2>/dev/null | python3 -c '
import json, sys
inv = json.load(sys.stdin)
hv = inv.get("_meta", {}).get("hostvars", {})
for h in inv.get("ascendfleet_gateways", {}).get("hosts", []):
    print(h, hv.get(h, {}).get("fleet_gateway_port", 8080))
'
}

running() { [ "$(cstate "$1")" = running ]; }
cstate() { docker inspect -f '{{.State.Status}}' "$1" 2>/dev/null | grep . || echo absent; }
image_id() { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null; }
container_image() { docker inspect -f '{{.Image}}' "$1" 2>/dev/null; }

ensure_network() {
  if docker network inspect "$network" >/dev/null 2>&1; then
    say "network $network exists"
  else
    docker network create --label "$label=1" "$network" >/dev/null
    say "network $network created"
  fi
}

# Keep a running container whose image is current; otherwise (re)create it.
current() { # current NAME IMAGE
  local want
  want=$(image_id "$2")
  running "$1" && [ "$(container_image "$1")" = "$want" ]
}

start_hub() {
  if [ "$with_hub" = 0 ]; then
    say "hub: not started (ASCENDFLEET_SIM_HUB=0)"
    return 0
  fi
  if [ ! -f "$here/hub/server.py" ]; then
    say "hub: tests/sim/hub/server.py does not exist yet; no stand-in ModelScope hub started"
    return 0
  fi
  local where="http://$hub:8080 from the hosts" run_args=() hub_args=()
  [ -n "$hub_port" ] && where="http://127.0.0.1:$hub_port, $where" && run_args+=(-p "127.0.0.1:$hub_port:8080")
  if [ -n "$hub_config" ]; then
    [ -f "$hub_config" ] || die "hub config $hub_config (ASCENDFLEET_SIM_HUB_CONFIG) does not exist"
    run_args+=(-v "$(cd "$(dirname "$hub_config")" && pwd)/$(basename "$hub_config"):/etc/ascendfleet-sim-hub.json:ro")
    hub_args+=(--config /etc/ascendfleet-sim-hub.json)
  elif current "$hub" "$base_image"; then
    say "hub: $hub is running ($where)"
    return 0
  fi
  if docker inspect "$hub" >/dev/null 2>&1; then
    [ -n "$(docker inspect -f "{{index .Config.Labels \"$label\"}}" "$hub")" ] \
      || die "a container named $hub exists that fleet.sh did not start; remove it or set ASCENDFLEET_SIM_HUB_NAME"
    docker rm -f "$hub" >/dev/null
  fi
  docker run -d --name "$hub" --hostname "$hub" --label "$label=hub" \
    --network "$network" "${run_args[@]}" \
    -v "$here:/opt/ascendfleet-sim:ro" --tmpfs /tmp \
    --mount "type=volume,source=$hub-state,target=/var/lib/ascendfleet-sim-hub,volume-label=$label=hub" \
    "$base_image" \
    python3 /opt/ascendfleet-sim/hub/server.py --port 8080 --state-dir /var/lib/ascendfleet-sim-hub "${hub_args[@]}" >/dev/null
  say "hub: started $hub ($where)"
}

host_command() {
  if [ -x "$here/npu/host-init" ]; then
    echo /opt/ascendfleet-sim/npu/host-init
  else
    echo /usr/sbin/dockerd
  fi
}

start_host() { # start_host NAME PROFILE
  local name=$1 profile=$2 cmd args=() c
  if current "$name" "$host_image"; then
    say "host $name ($profile) is running"
    return 0
  fi
  if [ -n "$profiles_dir" ]; then
    [ -d "$profiles_dir" ] || die "profiles directory $profiles_dir (ASCENDFLEET_SIM_PROFILES_DIR) does not exist"
    args+=(-v "$(cd "$profiles_dir" && pwd):/opt/ascendfleet-sim-profiles:ro"
           -e ASCENDFLEET_SIM_PROFILES_DIR=/opt/ascendfleet-sim-profiles)
  fi
  [ -f "$here/profiles/$profile.json" ] || [ -f "$profiles_dir/$profile.json" ] \
    || say "warning: profile tests/sim/profiles/$profile.json does not exist (yet); host $name starts without its NPU surface checks"
  if docker inspect "$name" >/dev/null 2>&1; then
    [ -n "$(docker inspect -f "{{index .Config.Labels \"$label\"}}" "$name")" ] \
      || die "a container named $name exists that fleet.sh did not start (a molecule instance?); remove it or rename the host"
    docker rm -f "$name" >/dev/null
  fi
  for c in "${caps[@]}"; do args+=(--cap-add "$c"); done
  cmd=$(host_command)
  docker run -d --name "$name" --hostname "$name" --label "$label=host" \
    --label "ascendfleet-sim.profile=$profile" \
    "${args[@]}" --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --tmpfs /run --tmpfs /tmp \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
    --mount "type=volume,source=ascendfleet-sim-$name-docker,target=/var/lib/docker,volume-label=$label=host" \
    -v "$here:/opt/ascendfleet-sim:ro" \
    -e "ASCENDFLEET_SIM_PROFILE=$profile" \
    --network "$network" \
    "$host_image" "$cmd" >/dev/null
  say "host $name ($profile) started: $cmd"
}

wait_hosts() { # wait_hosts NAME...
  local pending=("$@") left deadline=$(( $(date +%s) + wait_s )) h
  while [ ${#pending[@]} -gt 0 ]; do
    left=()
    for h in "${pending[@]}"; do
      if ! running "$h"; then
        docker logs --tail 30 "$h" >&2 || true
        die "host $h exited while starting (its log is above)"
      fi
      docker exec "$h" docker info >/dev/null 2>&1 || left+=("$h")
    done
    pending=(${left[@]+"${left[@]}"})
    [ ${#pending[@]} -eq 0 ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
      for h in "${pending[@]}"; do docker logs --tail 20 "$h" >&2 || true; done
      die "the Docker Engine of ${pending[*]} did not answer 'docker info' within ${wait_s}s (logs above)"
    fi
    sleep 1
  done
}

cmd_up() {
  local t0 hosts=() name profile
  t0=$(date +%s)
  need_docker
  mapfile -t lines < <(inventory_hosts)
  [ ${#lines[@]} -gt 0 ] || exit 1
  "$here/assets.sh"
  ensure_network
  start_hub
  [ -x "$here/npu/host-init" ] \
    || say "tests/sim/npu/host-init does not exist yet: hosts run plain /usr/sbin/dockerd (no NPU surface)"
  for line in "${lines[@]}"; do
    read -r name profile <<<"$line"
    start_host "$name" "$profile"
    hosts+=("$name")
  done
  wait_hosts "${hosts[@]}"
  # The registry of the simulated site (the pull path, vllm_compose_image_source: pull).
  if [ "$with_registry" != 0 ]; then
    ASCENDFLEET_SIM_NETWORK=$network "$here/registry/registry.sh" fleet "${hosts[@]}"
  fi
  say "up in $(( $(date +%s) - t0 ))s: ${hosts[*]}"
  cmd_status
}

cmd_down() {
  need_docker
  local name profile names=() vols=() v
  mapfile -t lines < <(inventory_hosts)
  for line in "${lines[@]}"; do
    read -r name profile <<<"$line"
    names+=("$name")
    vols+=("ascendfleet-sim-$name-docker")
  done
  if [ "$with_hub" != 0 ]; then
    names+=("$hub")
    vols+=("$hub-state")
  fi
  [ "$with_registry" = 0 ] || "$here/registry/registry.sh" down
  for name in "${names[@]}"; do
    if docker inspect "$name" >/dev/null 2>&1; then
      [ -n "$(docker inspect -f "{{index .Config.Labels \"$label\"}}" "$name")" ] \
        || { say "container $name was not started by fleet.sh; left alone"; continue; }
      docker rm -f -v "$name" >/dev/null
      say "removed container $name"
    fi
  done
  for v in "${vols[@]}"; do
    if docker volume inspect "$v" >/dev/null 2>&1; then
      docker volume rm "$v" >/dev/null
      say "removed volume $v"
    fi
  done
  # The network may have been created by fleet.sh or by a molecule scenario (same name);
  # whoever finds it unused last removes it - but under scripts/molecule-all.sh
  # (ASCENDFLEET_SIM_KEEP_NETWORK=1), which removes it once at its end: a scenario being created
  # beside this one may have made it and not yet started its hosts on it.
  if [ "${ASCENDFLEET_SIM_KEEP_NETWORK:-0}" = 1 ]; then
    say "network $network kept (ASCENDFLEET_SIM_KEEP_NETWORK=1)"
  elif docker network inspect -f '{{json .Labels}}' "$network" 2>/dev/null | grep -qE '"ascendfleet-sim\.(fleet|molecule)"'; then
    if [ "$(docker network inspect -f '{{len .Containers}}' "$network")" = 0 ] && docker network rm "$network" >/dev/null 2>&1; then
      say "removed network $network"
    else
      say "network $network is still in use by other containers; kept"
    fi
  fi
  say "down (cached images kept: docker images '$ASCENDFLEET_SIM_IMAGE_PREFIX/*'; artefacts in $ASCENDFLEET_SIM_CACHE)"
}

cmd_status() {
  need_docker
  local name profile state ip health
  printf '%-20s %-14s %-9s %-15s %s\n' HOST PROFILE STATE ADDRESS HEALTH
  while read -r name profile; do
    state=$(cstate "$name")
    ip=$(docker inspect -f "{{with index .NetworkSettings.Networks \"$network\"}}{{.IPAddress}}{{end}}" "$name" 2>/dev/null || true)
    health=-
    if [ "$state" = running ]; then
      if docker exec "$name" docker info >/dev/null 2>&1; then
        health="dockerd ok, $(docker exec "$name" docker ps -q | wc -l) container(s)"
        if docker exec "$name" sh -c 'command -v npu-smi' >/dev/null 2>&1; then
          if docker exec "$name" npu-smi info >/dev/null 2>&1; then health+=", npu-smi ok"; else health+=", npu-smi FAILS"; fi
        else
          health+=", no npu-smi"
        fi
      else
        health="dockerd not answering"
      fi
    fi
    printf '%-20s %-14s %-9s %-15s %s\n' "$name" "$profile" "$state" "${ip:--}" "$health"
  done < <(inventory_hosts)
  [ "$with_hub" = 0 ] && return 0
  state=$(cstate "$hub")
  printf '%-20s %-14s %-9s %-15s %s\n' "$hub" "-" "$state" "${hub_port:+127.0.0.1:$hub_port}" "$( [ "$state" = running ] && echo "http://$hub:8080 from the hosts" || echo -)"
}

cmd_endpoints() {
  need_docker
  local name profile ip
  local found=0
  while read -r name profile; do
    running "$name" || continue
    ip=$(docker inspect -f "{{with index .NetworkSettings.Networks \"$network\"}}{{.IPAddress}}{{end}}" "$name")
    if docker exec "$name" sh -c 'ids=$(docker ps -q --filter label=com.docker.compose.project); [ -z "$ids" ] || docker inspect $ids' \
      | python3 "$here/fleet_endpoints.py" --host "$name" --address "$ip"; then
      found=1
    fi
  done < <(inventory_hosts)
  [ "$found" = 1 ] || say "no stand-in vLLM deployments found on the sim hosts (deploy with: make demo)"
}

cmd_gateways() {
  need_docker
  local name port ip
  while read -r name port; do
    running "$name" || { say "gateway $name is not running (make sim-up)"; continue; }
    ip=$(docker inspect -f "{{with index .NetworkSettings.Networks \"$network\"}}{{.IPAddress}}{{end}}" "$name")
    python3 "$here/fleet_endpoints.py" --host "$name" --address "$ip" --gateway-port "$port" </dev/null || true
  done < <(gateway_hosts)
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  endpoints) cmd_endpoints ;;
  gateways) cmd_gateways ;;
  *) echo "usage: $0 up|down|status|endpoints|gateways" >&2; exit 2 ;;
esac
