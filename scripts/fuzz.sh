#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz and runs
# each for a while, printing executions and coverage per target. Not the CI
# budget (the test suite runs each for VF_FUZZ_SECONDS); this is for longer
# local runs:
#
#   scripts/fuzz.sh [--seconds 600] [TARGET...]
#
# Targets: ib_frame roce_frame config control_request device (default: all).
# New interesting inputs go to build-fuzz/tests/fuzz/corpus/TARGET; a crash is
# written to build-fuzz/artifacts/ and the run stops. To keep a crash as a
# regression, copy it into tests/fuzz/corpus/TARGET/ (every build replays
# that directory) and fix the bug.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600 targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(ib_frame roce_frame config control_request device)

scripts/setup.sh
if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVF_WERROR=ON -DVF_FUZZ=ON -DVF_BENCH=OFF > /dev/null
fi
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
mkdir -p build-fuzz/artifacts
rc=0
for t in "${targets[@]}"; do
  work=build-fuzz/tests/fuzz/corpus/$t
  mkdir -p "$work"
  log=build-fuzz/artifacts/$t.log
  echo "== fuzz_$t for ${seconds}s"
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" \
       -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="build-fuzz/artifacts/$t-" "$work" "tests/fuzz/corpus/$t" > "$log" 2>&1; then
    :
  else
    echo "fuzz: fuzz_$t FAILED; see $log and build-fuzz/artifacts/" >&2
    rc=1
  fi
  grep -h "stat::number_of_executed_units\|stat::average_exec_per_sec\|stat::peak_rss_mb" "$log" |
    sed "s/^/  /" || true
  grep -ho "cov: [0-9]* ft: [0-9]*" "$log" | tail -1 | sed "s/^/  /" || true
done
exit $rc
