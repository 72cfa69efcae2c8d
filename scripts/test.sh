#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: once as shipped (g++), once
# under AddressSanitizer + UBSan (clang), which also runs the fuzzers. Run as
# root (integration tests create /dev/infiniband/uverbs* nodes and run a real
# fabricd). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
rc=0
# Line tables (-g1) are all backtraces and sanitizer reports need; full DWARF
# costs a third of the compile time, and CI has two cores.
lines_only=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
            -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
# Unit tests are in-process and virtual-time: both cores. Integration tests
# each run a real fabricd and real tools: one at a time.
# Each pass's failures are kept in DIR/failed-tests.log for the summary.
# Extra ctest arguments (after DIR) apply to both passes.
run_tests() {
  local dir=$1 ok=0
  shift
  : > "$dir/failed-tests.log"
  for pass in "-j2 -LE integration" "-L integration"; do
    rm -f "$dir/Testing/Temporary/LastTestsFailed.log"
    # shellcheck disable=SC2086  # $pass is two words on purpose
    (cd "$dir" && ctest --output-on-failure --timeout 600 $pass "$@") || ok=1
    cat "$dir/Testing/Temporary/LastTestsFailed.log" >> "$dir/failed-tests.log" 2>/dev/null || true
  done
  return $ok
}

echo "== build (RelWithDebInfo, -Werror)"
scripts/build.sh build "${lines_only[@]}"
echo "== tests"
run_tests build || rc=1
echo "== the systemd unit under a real systemd (systemd-nspawn)"
sd_rc=0
scripts/systemd-nspawn-check.sh build || { rc=1; sd_rc=1; }

if [[ ${VF_SKIP_SANITIZERS:-0} != 1 ]]; then
  # The second compiler, with ASan + UBSan and the libFuzzer targets (their
  # tests fuzz for VF_FUZZ_SECONDS each; see docs/security.md#fuzzing).
  echo "== build (clang: ASan + UBSan + libFuzzer)"
  CC=clang-14 CXX=clang++-14 scripts/build.sh build-asan -DVF_FUZZ=ON -DVF_BENCH=OFF "${lines_only[@]}"
  echo "== tests under ASan + UBSan, and the fuzzers"
  # verify_asan_link_order=0: tests run our own ASan-built probe under
  # fabricctl's LD_PRELOAD of the (uninstrumented) libvhca-preload.so, which
  # comes ahead of the sanitizer runtime; the shim only wraps socket() and the
  # comp-channel verbs, nothing ASan intercepts.
  # it.compare (vfabric-compare --quick, 2.5 min under ASan) runs in the
  # first pass only: its virtual-time scenarios are the fabric unit tests'
  # code, its live part the perftest integration tests', both run here, and
  # its own code (report, plots) has unit tests here too.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_tests build-asan -E '^it\.compare$' || rc=1
fi
# CI shows only the end of this log: name what failed, in either pass, last.
if [[ $rc != 0 ]]; then
  echo "== FAILED"
  [[ $sd_rc == 0 ]] || echo "scripts/systemd-nspawn-check.sh: the unit under a real systemd (its output is above)"
  for dir in build build-asan; do
    log=$dir/failed-tests.log
    if [[ -s $log ]]; then sed "s|^|$dir: |" "$log"; fi
  done
fi
exit $rc
