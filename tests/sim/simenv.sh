# shellcheck shell=bash
# Sourced by every script of the simulated fleet (test infrastructure, never shipped): the one
# place that decides where the sim's artefacts live and what its images are called.
#   ASCENDFLEET_SIM_CACHE         image archives, the modelscope wheelhouse and its venv
#                                 (default /var/cache/ascendfleet-sim; exported, so the sim
#                                 inventory and molecule read the same directory)
#   ASCENDFLEET_SIM_IMAGE_PREFIX  repository prefix of the sim's own images
#                                 (default ascendfleet-sim: ascendfleet-sim/base, …/host)
# The stand-in vllm-ascend images keep their real names (quay.io/ascend/vllm-ascend:<tag>).
export ASCENDFLEET_SIM_CACHE=${ASCENDFLEET_SIM_CACHE:-/var/cache/ascendfleet-sim}
export ASCENDFLEET_SIM_IMAGE_PREFIX=${ASCENDFLEET_SIM_IMAGE_PREFIX:-ascendfleet-sim}
case $ASCENDFLEET_SIM_CACHE in
  /*) ;;
  *) echo "sim: ASCENDFLEET_SIM_CACHE=$ASCENDFLEET_SIM_CACHE is not an absolute path; set it to one" >&2; exit 2 ;;
esac
if ! mkdir -p "$ASCENDFLEET_SIM_CACHE" 2>/dev/null || [ ! -w "$ASCENDFLEET_SIM_CACHE" ]; then
  echo "sim: the sim cache $ASCENDFLEET_SIM_CACHE is not a writable directory; run as root" \
    "or point ASCENDFLEET_SIM_CACHE at a directory you can write" >&2
  exit 2
fi
sim_image() { echo "$ASCENDFLEET_SIM_IMAGE_PREFIX/$1:latest"; }
