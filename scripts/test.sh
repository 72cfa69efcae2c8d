#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: once as shipped, once under
# AddressSanitizer + UBSan. Run as root (integration tests create
# /dev/infiniband/uverbs* nodes and run a real fabricd). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
rc=0

echo "== build (RelWithDebInfo, -Werror)"
scripts/build.sh build
echo "== tests"
(cd build && ctest --output-on-failure --timeout 600) || rc=1

if [[ ${VF_SKIP_SANITIZERS:-0} != 1 ]]; then
  echo "== build (ASan + UBSan)"
  scripts/build.sh build-asan -DVF_SANITIZE=ON -DVF_BENCH=OFF
  echo "== tests under ASan + UBSan"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure --timeout 600) || rc=1
fi
exit $rc
