#!/usr/bin/env bash
# Simulator build: the stand-in vllm-ascend images (test infrastructure only).
#
#   tests/sim/vllm/build.sh [--list] [TAG...]
#
# Builds FROM $ASCENDFLEET_SIM_IMAGE_PREFIX/base:latest one image per TAG (default: every tag in TAGS below),
# named like the real ones (quay.io/ascend/vllm-ascend:TAG), and saves each as an image archive
# under $ASCENDFLEET_SIM_CACHE/images/ for air-gapped delivery (tests/sim/simenv.sh decides
# the cache; tests/sim/assets.sh calls this).
# Images and archives are reused while the inputs (this directory's files + the base image ID +
# the tag) are unchanged. Knobs (env): SIMVLLM_BASE_IMAGE, SIMVLLM_REPO, SIMVLLM_SAVE=0.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tests/sim/simenv.sh
. "$here/../simenv.sh"
base="${SIMVLLM_BASE_IMAGE:-$(sim_image base)}"
repo="${SIMVLLM_REPO:-quay.io/ascend/vllm-ascend}"
save="${SIMVLLM_SAVE:-1}"

# vllm-ascend's naming: vX (ubuntu), vX-openeuler, vX-a3, vX-a3-openeuler, vX-310p, vX-310p-openeuler.
# v0.18.0rc1 is the rollout target; the -broken tags start but never become healthy (rollback tests);
# the -crash tag's engine dies while loading, exit 1 with vLLM's traceback (crash-loop tests).
TAGS=(
  v0.17.0rc1 v0.17.0rc1-openeuler v0.17.0rc1-a3 v0.17.0rc1-a3-openeuler v0.17.0rc1-310p v0.17.0rc1-310p-openeuler
  v0.18.0rc1 v0.18.0rc1-openeuler v0.18.0rc1-a3 v0.18.0rc1-a3-openeuler v0.18.0rc1-310p v0.18.0rc1-310p-openeuler
  v0.18.0rc1-broken-openeuler v0.18.0rc1-broken v0.18.0rc1-crash
)
# Every other release the stand-in has lists for (cli_lists.json, one per vllm-ascend release): its 910B
# images, vX and vX-openeuler (the default image OS), so `ascendfleet_image_version` set to any release
# deploys on the sim with that release's flag and parser lists. They differ from each other only in
# their last image config (ENV, LABEL: see the Dockerfile), so each costs a metadata-only build and its
# archive; the other variants of these releases are not built (an -a3 host on them finds no archive).
releases() { sed -n 's/^ "\([0-9][0-9A-Za-z.]*\)": {$/\1/p' "$here/cli_lists.json" | sort -V; }
while read -r release; do
  [[ " ${TAGS[*]} " == *" v$release "* ]] || TAGS+=("v$release" "v$release-openeuler")
done < <(releases)

die() { echo "build.sh: $*" >&2; exit 1; }

if [[ "${1:-}" == "--list" ]]; then
  printf "$repo:%s\n" "${TAGS[@]}"
  exit 0
fi
if [[ "${1:-}" == -* ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  [[ "$1" == "-h" || "$1" == "--help" ]] && exit 0 || exit 2
fi
(($#)) && tags=("$@") || tags=("${TAGS[@]}")

tag_re='^v([0-9][0-9A-Za-z.]*)(-broken|-crash)?(-a3|-310p)?(-openeuler)?$'
for tag in "${tags[@]}"; do
  [[ "$tag" =~ $tag_re ]] || die "tag '$tag' is not of the form vX[-broken|-crash][-a3|-310p][-openeuler] (see --list)."
  # A release newer than the data (an ops team's tag the collection warns about) still gets its image.
  releases | grep -qxF "${BASH_REMATCH[1]}" ||
    echo "build.sh: note: tag '$tag': no flag lists for release v${BASH_REMATCH[1]} (cli_lists.json); its stand-in checks only the flags it models." >&2
done

docker info >/dev/null 2>&1 || die "Docker is not reachable (docker info failed); start it with 'make docker'."
base_id="$(docker image inspect -f '{{.Id}}' "$base" 2>/dev/null)" ||
  die "base image $base is missing; build it first with tests/sim/build-images.sh (or set SIMVLLM_BASE_IMAGE)."

cache_dir="$ASCENDFLEET_SIM_CACHE/images"
mkdir -p "$cache_dir"

inputs="$(cd "$here" && cat Dockerfile vllm_sim.py cli_lists.json build.sh | sha256sum | cut -c1-16)-${base_id#sha256:}"

for tag in "${tags[@]}"; do
  [[ "$tag" =~ $tag_re ]]
  version="${BASH_REMATCH[1]}"
  never_healthy=0; [[ "${BASH_REMATCH[2]}" == -broken ]] && never_healthy=1
  crash=0; [[ "${BASH_REMATCH[2]}" == -crash ]] && crash=1
  variant="${BASH_REMATCH[3]#-}"; variant="${variant:-910b}"
  flavour=ubuntu; [[ -n "${BASH_REMATCH[4]}" ]] && flavour=openeuler
  ref="$repo:$tag"
  key="$(printf '%s %s' "$inputs" "$tag" | sha256sum | cut -c1-24)"

  old_id="$(docker image inspect -f '{{.Id}}' "$ref" 2>/dev/null || true)"
  have="$(docker image inspect -f '{{ index .Config.Labels "ascendfleet.sim.inputs" }}' "$ref" 2>/dev/null || true)"
  if [[ "$have" == "$key" ]]; then
    action=reused
  else
    out="$(docker build -q -f "$here/Dockerfile" \
      --build-arg BASE_IMAGE="$base" --build-arg VLLM_VERSION="$version" --build-arg VARIANT="$variant" \
      --build-arg OS_FLAVOUR="$flavour" --build-arg NEVER_HEALTHY="$never_healthy" --build-arg CRASH_AT_START="$crash" --build-arg INPUTS="$key" \
      -t "$ref" "$here" 2>&1)" || { echo "$out" >&2; die "docker build of $ref failed."; }
    action=built
    # The previous build of this tag is now untagged: drop it unless something still uses it.
    if [[ -n "$old_id" && -z "$(docker image inspect -f '{{join .RepoTags ""}}' "$old_id" 2>/dev/null)" ]]; then
      docker image rm "$old_id" >/dev/null 2>&1 || true
    fi
  fi
  id="$(docker image inspect -f '{{.Id}}' "$ref")"
  size="$(docker image inspect -f '{{.Size}}' "$ref")"
  printf 'image   %-7s %s  %s  %s MB  (vllm %s, variant %s, %s%s)\n' "$action" "$ref" "${id:7:12}" "$((size / 1000000))" \
    "$version" "$variant" "$flavour" "$([[ $never_healthy == 1 ]] && echo ', never healthy')$([[ $crash == 1 ]] && echo ', crashes at start-up')"

  if [[ "$save" == 1 ]]; then
    archive="$cache_dir/${ref//[\/:]/_}.tar"
    if [[ -f "$archive" && "$(cat "$archive.id" 2>/dev/null)" == "$id" ]]; then
      printf 'archive reused  %s\n' "$archive"
    else
      docker save -o "$archive.part" "$ref"
      mv -f "$archive.part" "$archive"
      echo "$id" >"$archive.id"
      printf 'archive saved   %s (%s MB)\n' "$archive" "$(($(stat -c %s "$archive") / 1000000))"
    fi
  fi
done
