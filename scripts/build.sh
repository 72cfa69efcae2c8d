#!/usr/bin/env bash
# Configures and builds vfabric. Warnings are errors here, as in CI.
#
# Usage: scripts/build.sh [--no-tests] [BUILD_DIR] [extra cmake args...]
#   --no-tests  build only what runs a lab: fabricd, fabricctl, the provider
#               (libvhca), the preload shim and vfabric-bench. The build
#               directory stays configured for everything, so a later
#               scripts/test.sh (or a plain build) adds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
if [[ ${1:-} == --no-tests ]]; then
  targets=(--target fabricd fabricctl vhca vhca_preload vfabric-bench)
  shift
fi
build=${1:-build}
shift || true
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVF_WERROR=ON "$@" >/dev/null
fi
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
