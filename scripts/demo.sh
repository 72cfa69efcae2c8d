#!/usr/bin/env bash
# Sets up, builds, starts fabricd on configs/default.yaml and runs unmodified
# ibv_rc_pingpong and perftest over the InfiniBand fabric and over the RoCEv2 fabric, then
# vfabric-bench on each, printing what happened. Run as root (fabricd creates
# /dev/infiniband/uverbs* nodes). fabricd is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo; echo "demo: $*"; }
say "installing the Debian packages vfabric needs (apt-get; nothing else is downloaded)"
scripts/setup.sh
say "building fabricd, fabricctl, the provider, the preload shim and vfabric-bench (no tests; a few minutes on 2 cores)"
scripts/build.sh --no-tests build
bin=build/bin

if "$bin/fabricctl" status >/dev/null 2>&1; then
  echo "demo: a fabricd already serves /run/vfabric; stop it first (systemctl stop fabricd)" >&2
  exit 1
fi
say "starting fabricd on configs/default.yaml (an InfiniBand and a RoCEv2 fabric, two vHCAs each)"
"$bin/fabricd" --config configs/default.yaml &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  "$bin/fabricctl" status >/dev/null 2>&1 && break
  kill -0 $daemon 2>/dev/null || { echo "demo: fabricd failed to start" >&2; exit 1; }
  sleep 0.1
done

echo; echo "== fabricctl status"; "$bin/fabricctl" status
echo; echo "== fabricctl hca list"; "$bin/fabricctl" hca list
echo; echo "== ibv_devices (unmodified, through fabricctl exec)"; "$bin/fabricctl" exec -- ibv_devices

# pair PROGRAM SERVER CLIENT PORT [extra args]: runs an unmodified
# server/client tool (ibv_*_pingpong, perftest); the client retries until the
# server listens, as these tools give up on the first refusal.
pair() {
  local prog=$1 server=$2 client=$3 port=$4
  shift 4
  "$bin/fabricctl" exec -- "$prog" -d "$server" -p "$port" "$@" > /tmp/vfabric-demo-server.$$ 2>&1 &
  local spid=$!
  for _ in $(seq 50); do
    if "$bin/fabricctl" exec -- "$prog" -d "$client" -p "$port" "$@" 127.0.0.1 2>/tmp/vfabric-demo-err.$$; then
      wait $spid
      echo "-- server side:"; cat /tmp/vfabric-demo-server.$$
      rm -f /tmp/vfabric-demo-*.$$
      return 0
    fi
    grep -q "Couldn't connect" /tmp/vfabric-demo-err.$$ || break
    sleep 0.1
  done
  cat /tmp/vfabric-demo-err.$$ >&2
  kill $spid 2>/dev/null || true
  rm -f /tmp/vfabric-demo-*.$$
  return 1
}

echo; echo "== ibv_rc_pingpong over native InfiniBand: vib0 -> ibsw0 -> vib1 (LID routed)"
pair ibv_rc_pingpong vib1 vib0 18515 -s 65536 -n 1000 -c
echo; echo "== ibv_rc_pingpong over RoCEv2: vroce0 -> ethsw0 -> vroce1 (GID index 1, RoCE v2)"
pair ibv_rc_pingpong vroce1 vroce0 18516 -g 1 -s 65536 -n 1000 -c
echo; echo "== ib_write_bw (perftest, unmodified) over InfiniBand and over RoCEv2"
pair ib_write_bw vib1 vib0 18517
pair ib_write_bw vroce1 vroce0 18518 -x 1
echo; echo "== ib_atomic_lat over InfiniBand"
pair ib_atomic_lat vib1 vib0 18519

echo; echo "== vfabric-bench"
"$bin/fabricctl" exec -- "$bin/vfabric-bench" --client vib0 --server vib1
"$bin/fabricctl" exec -- "$bin/vfabric-bench" --client vroce0 --server vroce1 --gid-index 1

echo; echo "== counters after the run (IBA PMA names)"
"$bin/fabricctl" hca list --json | python3 -c '
import json, sys
for h in json.load(sys.stdin):
    c = h["counters"]
    print("%-8s PortXmitPkts=%-8d PortRcvPkts=%-8d PortXmitData=%-10d retransmitted=%d" % (
        h["name"], c["PortXmitPkts"], c["PortRcvPkts"], c["PortXmitData"], c["retransmitted_packets"]))'
echo; echo "demo: done; stopping fabricd"
