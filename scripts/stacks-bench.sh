#!/usr/bin/env bash
# UCX and Open MPI figures on both fabrics, from unmodified Debian binaries on
# a fabricd this script starts for itself (own runtime dir under /tmp, and
# vHCAs named bib*/broce* on 198.19.0.0/24, so a lab's fabricd on the default
# config keeps its vib*/vroce* interfaces and 198.18.0.x addresses). Not run
# in CI: it takes minutes.
#   sudo scripts/stacks-bench.sh [BUILD_DIR]     (default build/, built first)
# Prints, per fabric: UCX tag-matching latency (8 B) and put bandwidth
# (64 KiB, 1 MiB) between two vHCAs over rc_verbs, and an OSU-style
# MPI_Allreduce table of 8 ranks, each on its own vHCA (Open MPI, UCX PML).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin
mpi_prog=$(find "$build" -name vf_mpi_collectives -type f -perm -u+x | head -1)
for f in "$bin/fabricd" "$bin/fabricctl" "$mpi_prog"; do
  [[ -x $f ]] || { echo "stacks-bench: build first (missing ${f:-vf_mpi_collectives}):" \
    "cmake --build $build --target fabricd fabricctl vhca vhca_preload vf_mpi_collectives" >&2; exit 1; }
done
hcas=8
tls=rc_verbs,ud_verbs:aux   # rc_verbs; ud_verbs only for wire-up, as UCX's "rc_v"

dir=$(mktemp -d /tmp/vf-stacks-bench-XXXXXX)
run=$dir/run
{
  echo "daemon:"
  echo "  runtime_dir: $run"
  echo "  eal_args: [--no-huge, --no-pci, --no-shconf, --no-telemetry, -m, \"1024\"]"
  echo "  metrics_listen: off"
  echo "fabrics:"
  for fab in ib roce; do
    if [[ $fab == ib ]]; then
      pre=bib sw=ibsw0 base=101 ll=infiniband link="width: 4x, speed: EDR, delay: 100ns, mtu: 4096"
    else
      pre=broce sw=ethsw0 base=1 ll=ethernet link="speed: 100G, delay: 100ns, mtu: 1500"
    fi
    echo "  - name: $fab"
    echo "    link_layer: $ll"
    echo "    switches: [{name: $sw, ports: $hcas}]"
    echo "    hcas:"
    for ((i = 0; i < hcas; i++)); do echo "      - {name: $pre$i, ip: 198.19.0.$((base + i))}"; done
    echo "    links:"
    for ((i = 0; i < hcas; i++)); do echo "      - {a: $pre$i, b: $sw/$((i + 1)), $link}"; done
  done
} > "$dir/fabricd.yaml"

"$bin/fabricd" --config "$dir/fabricd.yaml" > "$dir/fabricd.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true; rm -rf "$dir"' EXIT
ctl=("$bin/fabricctl" --runtime-dir "$run")   # an array: timeout runs it too
for _ in $(seq 300); do
  "${ctl[@]}" status > /dev/null 2>&1 && break
  kill -0 $daemon 2>/dev/null || { echo "stacks-bench: fabricd failed:" >&2; cat "$dir/fabricd.log" >&2; exit 1; }
  sleep 0.1
done

# listening PORT: whether some process listens on TCP PORT (ucx_perftest's
# server accepts exactly one connection, so it is not probed by connecting).
listening() { ss -ltnH "sport = :$1" | grep -q .; }

# ucx PREFIX TEST SIZE ITERS: the client's "Final:" line of ucx_perftest
# between PREFIX1 (server) and PREFIX0 (client), as "<usec> <MB/s>".
port=13900
ucx() {
  local pre=$1 test=$2 size=$3 iters=$4
  port=$((port + 1))
  UCX_NET_DEVICES=${pre}1:1 UCX_TLS=$tls timeout 120 "${ctl[@]}" exec -- ucx_perftest -p $port > "$dir/srv.out" 2>&1 &
  local srv=$!
  for _ in $(seq 100); do listening $port && break; sleep 0.1; done
  UCX_NET_DEVICES=${pre}0:1 UCX_TLS=$tls timeout 120 "${ctl[@]}" exec -- \
    ucx_perftest 127.0.0.1 -p $port -t "$test" -s "$size" -n "$iters" -w $((iters / 10)) > "$dir/cli.out" 2>&1 ||
    { echo "stacks-bench: ucx_perftest $test failed:" >&2; cat "$dir/cli.out" "$dir/srv.out" >&2; return 1; }
  wait $srv || true
  awk '/^Final:/ { print $4, $7 }' "$dir/cli.out"
}

mpi_bench() {
  timeout 600 "${ctl[@]}" exec -- mpirun -np 8 --allow-run-as-root --oversubscribe \
    --mca pml ucx --mca pml_ucx_devices any --mca btl self --mca oob_tcp_if_include lo \
    -x UCX_TLS=$tls,self -x VF_HCA_PREFIX="$1" \
    tests/integration/stacks/rank-hca.sh "$mpi_prog" --bench
}

for fab in ib roce; do
  pre=bib; [[ $fab == roce ]] && pre=broce
  echo "== $fab (${pre}0 .. ${pre}$((hcas - 1))), UCX_TLS=$tls"
  read -r lat _ < <(ucx "$pre" tag_lat 8 20000)
  echo "UCX tag_lat      8 B:     $lat us (one way, average)"
  for size in 65536 1048576; do
    read -r _ bw < <(ucx "$pre" ucp_put_bw $size $((size > 65536 ? 500 : 5000)))
    printf 'UCX ucp_put_bw %8d B: %s MB/s\n' $size "$bw"
  done
  mpi_bench "$pre"
  echo
done
