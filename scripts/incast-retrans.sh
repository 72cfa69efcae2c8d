#!/usr/bin/env bash
# Every retransmission explained: runs a 4->1 incast of unmodified
# `ib_write_bw -s 65536 -D SECONDS` (perftest's defaults otherwise) through one
# switch with 2 Gb/s links, on InfiniBand (credits) and on RoCEv2 (PFC on
# priority 3, the default QoS), RUNS times each, and prints per run the
# senders' retransmissions beside every counted cause:
#   lost   D+N+R: packets ports discarded (PortXmitDiscards, PortRcvDiscards,
#          rx_discards_phy), packets a RoCE vHCA dropped while it resolved
#          the next hop's MAC (neigh_unresolved_discards), and packets a
#          receiver dropped for another reason (rx_dropped less the QP ones)
#   naks   sequence-error and RNR NAKs the senders received
#   gone   packets that reached a QP already destroyed, or back in
#          RESET/INIT/ERR: a peer tearing down while its data was in flight
#   stalls passes of fabricd's lcore that found due work over 1 ms late
#          (context only: they no longer cause retransmissions)
# Exit status 1 if a run retransmitted with no counted cause, or
# retransmitted at all without a peer tearing down (the fabric is lossless).
#   sudo scripts/incast-retrans.sh [--runs N] [--duration S] [--build DIR]
# It starts its own fabricd (runtime dir under /tmp, vHCAs ib0..ib4 /
# roce0..roce4 on 198.19.1.0/24, no netdevs), so it runs beside a lab's
# service. 30 runs of 4 s take about 12 minutes; CI runs 2 of 2 s.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=30 duration=4 build=build
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "incast-retrans: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ && $duration =~ ^[1-9][0-9]*$ ]] ||
  { echo "incast-retrans: --runs and --duration take positive whole numbers" >&2; exit 2; }
bin=$build/bin
for f in "$bin/fabricd" "$bin/fabricctl"; do
  [[ -x $f ]] || { echo "incast-retrans: build first (missing $f)" >&2; exit 1; }
done

dir=$(mktemp -d /tmp/vf-incast-retrans-XXXXXX)
run=$dir/run
{
  echo "daemon:"
  echo "  runtime_dir: $run"
  echo "  eal_args: [--no-huge, --no-pci, --no-shconf, --no-telemetry, -m, \"1024\"]"
  echo "  metrics_listen: off"
  echo "  netdevs: off"
  echo "fabrics:"
  echo "  - {name: ib, link_layer: infiniband, switches: [{name: ibsw, ports: 6}],"
  echo "     hcas: [$(for i in 0 1 2 3 4; do printf '{name: ib%d}%s' $i "$([[ $i -lt 4 ]] && echo ', ')"; done)],"
  echo "     links: ["
  for i in 0 1 2 3 4; do echo "       {a: ib$i, b: ibsw/$((i + 1)), speed: EDR, rate: 2Gbps, delay: 500ns},"; done
  echo "     ]}"
  echo "  - {name: roce, link_layer: ethernet, switches: [{name: ethsw, ports: 6}],"
  echo "     hcas: [$(for i in 0 1 2 3 4; do printf '{name: roce%d, ip: 198.19.1.%d}%s' $i $((i + 1)) "$([[ $i -lt 4 ]] && echo ', ')"; done)],"
  echo "     links: ["
  for i in 0 1 2 3 4; do echo "       {a: roce$i, b: ethsw/$((i + 1)), speed: 10G, rate: 2Gbps, delay: 500ns},"; done
  echo "     ]}"
} > "$dir/fabricd.yaml"

"$bin/fabricd" --config "$dir/fabricd.yaml" > "$dir/fabricd.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true; rm -rf "$dir"' EXIT
ctl=("$bin/fabricctl" --runtime-dir "$run")
for _ in $(seq 300); do
  "${ctl[@]}" status > /dev/null 2>&1 && break
  kill -0 $daemon 2>/dev/null || { echo "incast-retrans: fabricd failed:" >&2; cat "$dir/fabricd.log" >&2; exit 1; }
  sleep 0.1
done

# counters FABRIC: "retrans timeouts lost naks gone stalls", summed over the
# fabric's vHCAs and ports (Prometheus text from fabricctl metrics).
counters() {
  "${ctl[@]}" metrics | awk -v fab="$1" '
    /^#/ || index($0, "fabric=\"" fab "\"") == 0 && $1 !~ /^vfabric_lcore_/ { next }
    { name = $1; sub(/\{.*/, "", name); v[name] += $2 }
    END {
      qp = v["vfabric_rx_qp_destroyed_total"] + v["vfabric_rx_qp_not_ready_total"]
      discards = v["vfabric_port_xmit_discards_total"] + v["vfabric_port_rcv_discards_total"] \
               + v["vfabric_rx_discards_phy_total"]
      printf "%d %d %d %d %d %d %d %d\n", v["vfabric_retransmitted_packets_total"],
             v["vfabric_retransmit_timeouts_total"], discards, v["vfabric_neigh_unresolved_discards_total"],
             v["vfabric_rx_dropped_total"] - qp, v["vfabric_rcvd_seq_err_total"] + v["vfabric_rcvd_rnr_err_total"],
             qp, v["vfabric_lcore_stalls_total"]
    }'
}

listening() { ss -ltnH "sport = :$1" | grep -q .; }

# incast FABRIC PREFIX EXTRA...: one run; prints its counter deltas.
port=18500
incast() {
  local fab=$1 pre=$2; shift 2
  local before after pids=()
  read -ra before < <(counters "$fab")
  for i in 0 1 2 3; do
    "${ctl[@]}" exec -- ib_write_bw -d "${pre}4" -p $((port + i)) -s 65536 -D "$duration" "$@" \
      > "$dir/srv$i.out" 2>&1 &
    pids+=($!)
  done
  for i in 0 1 2 3; do
    for _ in $(seq 100); do listening $((port + i)) && break; sleep 0.05; done
  done
  for i in 0 1 2 3; do
    "${ctl[@]}" exec -- ib_write_bw -d "$pre$i" -p $((port + i)) -s 65536 -D "$duration" "$@" 127.0.0.1 \
      > "$dir/cli$i.out" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  port=$((port + 4))
  if ((failed)); then
    echo "incast-retrans: an ib_write_bw failed on $fab:" >&2
    tail -n 5 "$dir"/cli*.out "$dir"/srv*.out >&2
    return 1
  fi
  read -ra after < <(counters "$fab")
  for k in 0 1 2 3 4 5 6 7; do printf '%d ' $((after[k] - before[k])); done
  echo
}

bad=0
for fab in ib roce; do
  pre=$fab extra=()
  [[ $fab == roce ]] && extra=(-x 1)
  clean=0 explained=0
  for ((r = 1; r <= runs; r++)); do
    read -r retrans timeouts discards neigh rxdrop naks gone stalls < <(incast "$fab" "$pre" "${extra[@]}")
    verdict=clean
    if ((retrans || timeouts)); then
      causes=()
      ((discards)) && causes+=("$discards discarded by ports")
      ((neigh)) && causes+=("$neigh queued for an unresolved neighbour")
      ((rxdrop)) && causes+=("$rxdrop dropped by receivers")
      ((naks)) && causes+=("$naks NAKs")
      ((gone)) && causes+=("$gone to a torn-down QP")
      if ((${#causes[@]} == 0)); then
        verdict=UNEXPLAINED; bad=1
      else
        verdict="explained: $(IFS=,; echo "${causes[*]}" | sed 's/,/, /g')"; explained=$((explained + 1))
        ((gone)) || bad=1  # lossless: only a teardown may cost a retransmission
      fi
    else
      clean=$((clean + 1))
    fi
    printf '%-4s run %2d: %4d retransmitted, %2d timeouts | lost %d+%d+%d, naks %d, gone %d, lcore stalls %d | %s\n' \
      "$fab" "$r" "$retrans" "$timeouts" "$discards" "$neigh" "$rxdrop" "$naks" "$gone" "$stalls" "$verdict"
  done
  echo "$fab: $clean of $runs runs without a retransmission, $explained explained, $((runs - clean - explained)) unexplained"
done
exit $bad
