#!/usr/bin/env bash
# The shipped unit under a real systemd, as a lab installs it: readiness,
# reload, a watchdog restart after a hang, and a clean stop that leaves no
# stale nodes. Needs a host whose PID 1 is systemd (a VM, or a container
# booted with systemd-nspawn -b from a Debian 12 root), root, and a built
# tree (scripts/build.sh build). It installs into /usr/local and
# /etc/vfabric, so run it on a lab machine, not a workstation you care
# about -- or through scripts/systemd-nspawn-check.sh, which boots this
# machine's root in a throw-away container and runs it there (as CI does).
#
#   scripts/systemd-check.sh [BUILD_DIR]
#
# Exit status: 0 every check passed; 1 a check failed (it says which); 2 not
# runnable here.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

fail() { echo "systemd-check: FAIL: $*" >&2; exit 1; }
say() { echo "systemd-check: $*"; }

[[ $(id -u) -eq 0 ]] || { echo "systemd-check: run as root" >&2; exit 2; }
[[ $(ps -p 1 -o comm=) == systemd ]] || { echo "systemd-check: PID 1 is not systemd here" >&2; exit 2; }
[[ -x $build/bin/fabricd ]] || { echo "systemd-check: build first: scripts/build.sh $build" >&2; exit 2; }

cmake --install "$build" >/dev/null
install -D -m 0644 configs/default.yaml /etc/vfabric/fabricd.yaml
systemctl daemon-reload
trap 'systemctl stop fabricd >/dev/null 2>&1 || true' EXIT

# Readiness: start returns once programs can see the vHCAs (Type=notify).
systemctl start fabricd || { journalctl -u fabricd --no-pager | tail -20 >&2; fail "systemctl start fabricd"; }
[[ $(systemctl is-active fabricd) == active ]] || fail "not active after start"
/usr/local/bin/fabricctl status >/dev/null || fail "fabricctl status"
eval "$(/usr/local/bin/fabricctl env)"
ibv_devices | grep -q vib0 || fail "ibv_devices does not list vib0 right after start"
say "ready: $(systemctl show -p StatusText --value fabricd)"
# The vHCAs' interfaces, created inside the unit's sandbox (CAP_NET_ADMIN).
ip -o -4 addr show dev vroce0 | grep -q ' 198.18.0.1/32 ' || fail "vroce0's interface does not hold 198.18.0.1"
ip -o -4 addr show dev vib0 | grep -q ' 198.18.0.101/32 ' || fail "vib0's interface does not hold 198.18.0.101"

# Reload: a changed delay applies live; a broken file fails the reload and
# changes nothing.
sed -i 's/{a: vib0, b: ibsw0\/1, width: 4x, speed: EDR, delay: 100ns/{a: vib0, b: ibsw0\/1, width: 4x, speed: EDR, delay: 5us/' \
  /etc/vfabric/fabricd.yaml
systemctl reload fabricd
sleep 1
/usr/local/bin/fabricctl --json topology show | grep -q '"delay_ns": 5000' || fail "reload did not apply the delay"
cp /etc/vfabric/fabricd.yaml /tmp/fabricd.yaml.good
echo 'fabrics: [' >/etc/vfabric/fabricd.yaml
if systemctl reload fabricd 2>/dev/null; then fail "a broken config reloaded"; fi
[[ $(systemctl is-active fabricd) == active ]] || fail "a refused reload stopped fabricd"
cp /tmp/fabricd.yaml.good /etc/vfabric/fabricd.yaml
say "reload: applied live; a broken file refused"

# Watchdog: a hung fabricd (stopped) misses its pings and is restarted.
pid=$(systemctl show -p MainPID --value fabricd)
kill -STOP "$pid"
say "fabricd $pid stopped; waiting for the watchdog (WatchdogSec=30s)..."
for _ in $(seq 1 60); do
  sleep 1
  now=$(systemctl show -p MainPID --value fabricd)
  [[ $now != "$pid" && $now != 0 && $(systemctl is-active fabricd) == active ]] && break
done
[[ $now != "$pid" ]] || fail "the watchdog did not restart a hung fabricd"
/usr/local/bin/fabricctl status >/dev/null || fail "no fabricd after the watchdog restart"
ip -o -4 addr show dev vroce0 | grep -q ' 198.18.0.1/32 ' || fail "no vroce0 interface after the watchdog restart"
say "watchdog: $pid replaced by $now"

# Clean stop: the runtime tree and the device nodes go.
systemctl stop fabricd
[[ ! -e /run/vfabric/control.sock ]] || fail "control.sock left behind"
! ip link show dev vroce0 >/dev/null 2>&1 || fail "vroce0's interface left behind"
if ls /dev/infiniband/uverbs* >/dev/null 2>&1 && ! ls /sys/class/infiniband/* >/dev/null 2>&1; then
  fail "uverbs nodes left behind with no kernel RDMA device to own them"
fi
say "clean stop"
trap - EXIT
say "all checks passed"
