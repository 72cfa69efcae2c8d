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
  # verify_asan_link_order=0: tests run our own ASan-built probe under
  # fabricctl's LD_PRELOAD of the (uninstrumented) libvhca-preload.so, which
  # puts the shim ahead of libasan; the shim only wraps socket() and the
  # comp-channel verbs, nothing ASan intercepts.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure --timeout 600) || rc=1
fi
exit $rc
