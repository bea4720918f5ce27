# ascendfleet.llm — one entry point for everything a developer or CI runs.
#   make demo   deploy to the simulated Ascend fleet and print the endpoints
#   make test   everything CI checks (lint, sanity, unit, build round-trip, molecule)
#   make fleet-test INVENTORY=path/hosts.yml [ROLL_TO=tag]   test your inventory on the sim
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
export PATH := $(BIN):$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_FORCE_COLOR ?= 0
export PY_COLORS ?= 0

.PHONY: help setup venv docker fleet-test sim-assets sim-images lint sanity unit build-check molecule newcomer test \
        demo demo-down sim-up sim-down bench clean releases releases-record releases-argparse

help: ## Show the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | sort

setup: venv ## Python toolchain in .venv (pinned in requirements-dev.txt)

venv: $(VENV)/.installed
$(VENV)/.installed: requirements-dev.txt
	scripts/setup-venv.sh "$(VENV)"
	@touch $@

docker: venv ## Docker Engine + Compose v2 (installs and starts them if missing)
	scripts/ensure-docker.sh "$(VENV)"

sim-assets: venv docker ## build (or reuse) everything the simulated fleet needs: images, archives, wheelhouse
	tests/sim/assets.sh

sim-images: sim-assets

lint: venv ## yamllint, ansible-lint (production profile), changelog lint, generated docs, EE definition
	yamllint --strict .
	ansible-lint --offline
	antsibull-changelog lint
	check-jsonschema --builtin-schema vendor.github-workflows examples/fleet-ci/github-actions.yml
	check-jsonschema --builtin-schema vendor.gitlab-ci examples/fleet-ci/gitlab-ci.yml
	$(BIN)/python scripts/check-argument-specs.py
	$(BIN)/python scripts/gen-role-docs.py --check
	$(BIN)/python scripts/gen-input-docs.py --check
	scripts/check-ee.sh "$(VENV)"

sanity: venv ## ansible-test sanity on a copy under .build/ansible_collections/ascendfleet/llm
	scripts/sanity.sh

unit: venv ## pytest unit tests (installs Chromium for the status page test, promtool for the rule tests)
	scripts/ensure-chromium.sh
	scripts/ensure-promtool.sh "$(VENV)"
	ASCENDFLEET_REQUIRE_PROMTOOL=1 $(BIN)/python -m pytest $(if $(PYTEST_MARKERS),-m "$(PYTEST_MARKERS)")

build-check: venv ## ansible-galaxy collection build + install round-trip
	scripts/build-check.sh

molecule: venv docker ## every molecule scenario
	scripts/molecule-all.sh

newcomer: venv docker ## make demo from a fresh clone, an empty sim cache and no sim images; again; down
	scripts/newcomer-test.sh

# Sim assets first, so the unit tests that run simulators in Docker run rather than skip. The
# end-to-end fleet tests (pytest marker `fleet`, ~8 min plus the four-host model revisions test's
# ~15 min, mostly waiting on containers) run as two more jobs beside the molecule scenarios
# instead of alone in the pytest run.
test: lint sanity build-check sim-assets ## everything CI checks
	$(MAKE) unit PYTEST_MARKERS="not fleet"
	ASCENDFLEET_MOLECULE_PYTEST_FLEET=1 scripts/molecule-all.sh
	$(MAKE) newcomer
	@echo "make test: all checks passed"

# An ops team's inventory on the simulated fleet (docs/testing-your-fleet.md): converge,
# idempotence, verify, roll-forward to ROLL_TO. VAULT_PASSWORD_FILE is passed to ansible.
INVENTORY ?=
ROLL_TO ?=
VAULT_PASSWORD_FILE ?=
fleet-test: venv docker ## test INVENTORY=path/hosts.yml on the simulated fleet [ROLL_TO=tag] [VAULT_PASSWORD_FILE=f]
	scripts/fleet-test.sh -i "$(INVENTORY)" $(if $(ROLL_TO),--roll-to "$(ROLL_TO)") \
	  $(if $(VAULT_PASSWORD_FILE),--vault-password-file "$(VAULT_PASSWORD_FILE)")

demo: venv docker ## bring up the simulated fleet and deploy Qwen to it
	scripts/demo.sh

demo-down: sim-down ## tear the demo down

sim-up: venv docker ## start the simulated Ascend fleet
	scripts/sim.sh up

sim-down: ## remove the simulated Ascend fleet
	scripts/sim.sh down

# Release data (docs/adding-a-release.md): `releases` writes plugins/module_utils/_vllm_cli_data.py from the
# recorded inputs under scripts/releases/inputs/ (offline) and prints what changed; `releases-record`
# reads the releases not recorded yet (RELEASE=tag to re-read one) from vllm-ascend and the vLLM wheels, then
# builds the parser of each new vLLM version (releases-argparse).
RELEASE ?=
releases: venv ## regenerate the release data from scripts/releases/inputs/ and print what changed
	$(BIN)/python scripts/gen-vllm-cli-data.py render

releases-record: venv ## record a new release's facts from the sources, then its vLLM's argparse (network) [RELEASE=tag]
	$(BIN)/python scripts/gen-vllm-cli-data.py record $(RELEASE)
	$(BIN)/python scripts/releases/record-argparse.py

# `releases-argparse` builds `vllm serve`'s parser in a throwaway virtualenv under /var/tmp (removed after) and
# records its options under scripts/releases/inputs/argparse/; VLLM=0.26.0 re-records one version.
VLLM ?=
releases-argparse: venv ## record vllm serve's argparse options of the releases' vLLM (network, heavy) [VLLM=version]
	$(BIN)/python scripts/releases/record-argparse.py $(VLLM)

bench: venv docker ## benchmarks against a floor measured in the same run
	scripts/bench.sh

clean: ## remove build artefacts (keeps .venv and cached images)
	rm -rf .build reports tests/output *.tar.gz
