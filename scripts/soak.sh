#!/usr/bin/env bash
# Soak: hours of mixed load against one real fabricd, to show that what it
# holds (RSS, fds, threads, engine objects, mbufs) stays flat after warm-up.
# Not part of CI. Run as root from a built tree (scripts/build.sh build):
#
#   scripts/soak.sh [--minutes 60] [--interval 60] [--seed N] [--config FILE]
#
# Two lanes run side by side until the time is up:
#   traffic  unmodified tools over IB and RoCEv2: ibv_rc_pingpong, ibv_ud_pingpong,
#            ibv_srq_pingpong, ib_write_bw, ib_read_lat, ib_send_bw, ib_atomic_bw
#   chaos    clients killed mid-run (SIGKILL of both ends of an ib_write_bw),
#            hostile device-socket and control-socket clients (garbage, bad
#            headers, oversize lines, idle squatters), vHCA port flaps
# Every interval it prints one line per sample; at the end a summary compares
# the first sample after warm-up with the last, and checks that every engine
# object is gone once the clients are. Exit status: 0 flat and clean, 1 a leak
# or a dead fabricd, 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=60 interval=60 seed=$RANDOM config=configs/default.yaml
while [[ $# -gt 0 ]]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
bin=build/bin
[[ -x $bin/fabricd && -x $bin/fabricctl ]] || { echo "soak: build first: scripts/build.sh build" >&2; exit 2; }
for t in ibv_rc_pingpong ibv_ud_pingpong ibv_srq_pingpong ib_write_bw ib_read_lat ib_send_bw ib_atomic_bw python3; do
  command -v "$t" >/dev/null || { echo "soak: $t is missing: scripts/setup.sh installs it" >&2; exit 2; }
done
if "$bin/fabricctl" status >/dev/null 2>&1; then
  echo "soak: a fabricd already serves the runtime dir; stop it first (systemctl stop fabricd)" >&2
  exit 2
fi

work=$(mktemp -d /tmp/vfabric-soak.XXXXXX)
RANDOM=$seed
"$bin/fabricd" --config "$config" > "$work/fabricd.log" 2>&1 &
daemon=$!
lanes=()
cleanup() {
  for p in "${lanes[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  kill -TERM $daemon 2>/dev/null || true
  wait $daemon 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do
  "$bin/fabricctl" status >/dev/null 2>&1 && break
  kill -0 $daemon 2>/dev/null || { echo "soak: fabricd failed to start:" >&2; cat "$work/fabricd.log" >&2; exit 1; }
  sleep 0.1
done
run_dir=$("$bin/fabricctl" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["runtime_dir"])')
end=$(( $(date +%s) + minutes * 60 ))
echo "soak: fabricd pid $daemon, $minutes min, seed $seed, logs in $work"

count() { echo 1 >> "$work/$1"; }  # lanes are subshells: tally through files
tally() { [[ -f $work/$1 ]] && wc -l < "$work/$1" || echo 0; }

# TCP ports for the tools' out-of-band exchange: each lane its own range.
port_base=20000 port=0
next_port() { port=$(( (port + 1) % 900 )); p=$(( port_base + port )); }

# pair TIMEOUT SERVER CLIENT PROG [ARGS...]: one unmodified server/client run.
pair() {
  local limit=$1 server=$2 client=$3 prog=$4 p
  shift 4
  next_port
  timeout "$limit" "$bin/fabricctl" exec -- "$prog" -d "$server" -p "$p" "$@" > "$work/server.out" 2>&1 &
  local spid=$! ok=1
  for _ in $(seq 50); do
    if timeout "$limit" "$bin/fabricctl" exec -- "$prog" -d "$client" -p "$p" "$@" 127.0.0.1 > "$work/client.out" 2>&1; then
      ok=0; break
    fi
    grep -q "Couldn't connect\|Unable to init the socket" "$work/client.out" || break
    sleep 0.1
  done
  wait $spid || ok=1
  return $ok
}

traffic_once() {
  local kind=$(( RANDOM % 9 ))
  case $kind in
    0) pair 60 vib1 vib0 ibv_rc_pingpong -s 4096 -n 2000 ;;
    1) pair 60 vroce1 vroce0 ibv_rc_pingpong -g 1 -s 4096 -n 2000 ;;
    2) pair 60 vib1 vib0 ibv_ud_pingpong -s 1024 -n 2000 ;;
    3) pair 60 vroce1 vroce0 ibv_ud_pingpong -g 1 -s 1024 -n 2000 ;;
    4) pair 60 vib1 vib0 ibv_srq_pingpong -s 2048 -n 500 -q 4 ;;
    5) pair 60 vib1 vib0 ib_write_bw -D 3 -s 65536 ;;
    6) pair 60 vroce1 vroce0 ib_send_bw -x 1 -D 3 -s 8192 ;;
    7) pair 60 vib1 vib0 ib_read_lat -n 2000 ;;
    8) pair 60 vib1 vib0 ib_atomic_bw -n 2000 ;;
  esac
}

traffic_lane() {
  while (( $(date +%s) < end )); do
    if traffic_once; then count traffic_ok; else count traffic_failed; cp "$work/client.out" "$work/last-failed-client.out"; fi
  done
}

# Both ends of a bandwidth test, SIGKILLed at a random point of its run.
killed_clients() {
  local p
  next_port
  "$bin/fabricctl" exec -- ib_write_bw -d vroce1 -x 1 -p "$p" -D 20 > /dev/null 2>&1 &
  local s=$!
  sleep 0.3
  "$bin/fabricctl" exec -- ib_write_bw -d vroce0 -x 1 -p "$p" -D 20 127.0.0.1 > /dev/null 2>&1 &
  local c=$!
  sleep "0.$(( RANDOM % 9 + 1 ))"
  kill -9 $c $s 2>/dev/null || true
  wait $c $s 2>/dev/null || true
  count killed
}

hostile_clients() {
  python3 - "$run_dir" "$RANDOM" <<'EOF' || count hostile_refused_to_run
import os, random, socket, struct, sys, time
run, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
def dev(name, payload, fds=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(f"{run}/hca/{name}.sock")
        if fds:
            s.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i" * len(fds), *fds))])
        else:
            s.send(payload)
        s.settimeout(1.0)
        try: s.recv(4096)
        except OSError: pass
    finally:
        s.close()
hdr = lambda cmd, length, abi=3: struct.pack("<IIII", cmd, 1, length, abi)
for name in ("vib0", "vroce0"):
    dev(name, bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 600))))
    dev(name, hdr(1, 16)[:9])                           # truncated header
    dev(name, hdr(1, 16, abi=99))                       # wrong ABI
    dev(name, hdr(rnd.randrange(20, 1 << 32), 16))      # unknown command
    dev(name, hdr(6, 1 << 31) + b"\0" * 64)             # length lies
    dev(name, hdr(4, 16))                               # ALLOC_PD before OPEN_CONTEXT
    r, w = os.pipe()
    dev(name, hdr(1, 16), [r, r, w])                    # wrong fds for OPEN_CONTEXT
    os.close(r); os.close(w)
def ctl(data, linger=0.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(f"{run}/control.sock")
        s.sendall(data)
        time.sleep(linger)
        s.settimeout(1.0)
        try: s.recv(65536)
        except OSError: pass
    finally:
        s.close()
ctl(b"not json\n")
ctl(b"[" * 5000 + b"\n")
ctl(b'{"cmd":"hca.port.set","args":{"hca":"' + b"x" * 300 + b'","state":"sideways"}}\n')
ctl(b"y" * 70000)                                       # longer than a request line may be
ctl(b'{"cmd":"status"', linger=rnd.random())            # never finishes its line
EOF
  count hostile
}

port_flap() {
  local h
  h=$( (( RANDOM % 2 )) && echo vib0 || echo vroce0)
  "$bin/fabricctl" port set "$h" state down > /dev/null
  sleep "0.$(( RANDOM % 9 + 1 ))"
  "$bin/fabricctl" port set "$h" state up > /dev/null
  count flaps
}

chaos_lane() {
  port_base=21000
  while (( $(date +%s) < end )); do
    case $(( RANDOM % 4 )) in
      0|1) killed_clients ;;
      2) hostile_clients ;;
      3) (( RANDOM % 3 == 0 )) && port_flap ;;
    esac
    sleep 1
  done
}

sample() {
  local rss anon shmem fds threads
  rss=$(awk '/^VmRSS/ {print $2}' /proc/$daemon/status)
  # RssShmem is DPDK's memory (--no-huge maps it shared) and the apps' ring
  # memfds; RssAnon is fabricd's own heap: a leak shows in the latter.
  anon=$(awk '/^RssAnon/ {print $2}' /proc/$daemon/status)
  shmem=$(awk '/^RssShmem/ {print $2}' /proc/$daemon/status)
  fds=$(ls /proc/$daemon/fd | wc -l)
  threads=$(awk '/^Threads/ {print $2}' /proc/$daemon/status)
  "$bin/fabricctl" status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
objs = {k: 0 for k in ("clients", "pds", "mrs", "cqs", "qps", "srqs", "ahs")}
errs = {k: 0 for k in ("PortXmitDiscards", "PortRcvErrors", "retransmitted_packets", "dma_errors",
                       "hostile_ring_events", "port_down_drops")}
for h in s.get("hcas", []):
    for k in objs: objs[k] += h["objects"].get(k, 0)
    for k in errs: errs[k] += h["counters"].get(k, 0)
m = s.get("mbufs") or {}
print("%s mbufs=%s objects=%s errors=%s" % (sys.argv[1], m.get("in_use", "?"),
      ",".join("%s:%d" % kv for kv in objs.items()), ",".join("%s:%d" % kv for kv in errs.items())))
' "$(date +%T) rss_kb=$rss anon_kb=$anon shmem_kb=$shmem fds=$fds threads=$threads ok=$(tally traffic_ok) failed=$(tally traffic_failed) killed=$(tally killed) hostile=$(tally hostile) flaps=$(tally flaps)"
}

set -m  # each lane its own process group, so cleanup takes its children too
traffic_lane & lanes+=($!)
chaos_lane & lanes+=($!)
set +m
while (( $(date +%s) < end )); do
  sleep "$interval"
  kill -0 $daemon 2>/dev/null || { echo "soak: FAILED: fabricd died; see $work/fabricd.log" >&2; exit 1; }
  sample | tee -a "$work/samples"
done
wait "${lanes[@]}" 2>/dev/null || true
lanes=()
sleep 3  # killed clients' contexts are torn down when their sockets close
final=$(sample | tee -a "$work/samples")

python3 - "$work/samples" "$final" <<'EOF'
import re, sys
rows = [l.split() for l in open(sys.argv[1]) if "rss_kb=" in l]
def val(row, key):
    for f in row:
        if f.startswith(key + "="): return f.split("=", 1)[1]
warm = rows[min(len(rows) - 1, max(1, len(rows) // 6))]  # first ~sixth is warm-up
last = rows[-1]
bad = 0
for k in ("rss_kb", "anon_kb", "shmem_kb", "fds", "threads", "mbufs"):
    if val(warm, k) is None: continue
    a, b = int(val(warm, k)), int(val(last, k))
    print(f"soak: {k:8} after warm-up {a:>8}  at the end {b:>8}  ({b - a:+d})")
objs = val(last, "objects")
print(f"soak: objects at the end: {objs}")
if any(int(x.split(":")[1]) for x in objs.split(",")):
    print("soak: FAILED: engine objects left after every client ended"); bad = 1
if int(val(last, "rss_kb")) > int(val(warm, "rss_kb")) * 1.05 + 8192:
    print("soak: FAILED: RSS grew more than 5 % + 8 MiB after warm-up"); bad = 1
if int(val(last, "fds")) > int(val(warm, "fds")):
    print("soak: FAILED: fabricd holds more fds than after warm-up"); bad = 1
print(f"soak: runs ok={val(last, 'ok')} failed={val(last, 'failed')} killed={val(last, 'killed')} "
      f"hostile={val(last, 'hostile')} flaps={val(last, 'flaps')}")
sys.exit(bad)
EOF
