#!/usr/bin/env bash
# Configures and builds vfabric. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Warnings are errors here, as in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVF_WERROR=ON "$@" >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
