#!/usr/bin/env bash
# Runs scripts/systemd-check.sh under a real systemd without a VM: boots
# this machine's own root file system in a systemd-nspawn container with a
# throw-away overlay (nothing it installs or writes reaches the host), the
# checkout bound in, and runs the check there as root. CI runs it after the
# g++ tests; on a lab host whose PID 1 is systemd, systemd-check.sh alone does.
#
#   scripts/systemd-nspawn-check.sh [BUILD_DIR]
#
# Exit status: that of systemd-check.sh (0 every check passed, 1 one failed,
# 2 not runnable), or 1 when the container did not boot.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=${1:-build}
[[ $(id -u) -eq 0 ]] || { echo "systemd-nspawn-check: run as root" >&2; exit 2; }
command -v systemd-nspawn >/dev/null || { echo "systemd-nspawn-check: install systemd-container (scripts/setup.sh)" >&2; exit 2; }

# A bind of / alone (not its submounts): the OS tree the container boots.
root=$(mktemp -d /tmp/vf-nspawn-root.XXXXXX)
log=$(mktemp /tmp/vf-nspawn-boot.XXXXXX)
leader=""
nspawn=""
cleanup() {
  if [[ -n $leader ]]; then nsenter -t "$leader" -a systemctl poweroff >/dev/null 2>&1 || true; fi
  if [[ -n $nspawn ]]; then
    for _ in $(seq 50); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.2; done
    kill "$nspawn" 2>/dev/null || true
    wait "$nspawn" 2>/dev/null || true
  fi
  mountpoint -q "$root" && umount "$root"
  rmdir "$root" 2>/dev/null || true
  rm -f "$log"
}
trap 'status=$?; cleanup; [[ $status == 0 ]] || echo "systemd-nspawn-check: failed (exit $status)" >&2' EXIT
mount --bind / "$root"

# --keep-unit --register=no: no machined or system bus needed on the host.
# CAP_NET_ADMIN: the unit's fabricd creates the vHCAs' tun/tap interfaces
# (nspawn withholds it unless asked; they live, and die, with fabricd).
systemd-nspawn -D "$root" --volatile=overlay --register=no --keep-unit --capability=CAP_NET_ADMIN --bind="$src" -b >"$log" 2>&1 &
nspawn=$!
# The container's PID 1 is the systemd child of that nspawn; wait until it
# reached multi-user (its `systemctl is-system-running` settles).
# (ps finds no child for a moment after the fork: not an error here.)
state=""
for _ in $(seq 300); do
  leader=$(ps -o pid= --ppid "$nspawn" 2>/dev/null | head -1 | tr -d ' ' || true)
  if [[ -n $leader ]]; then
    state=$(nsenter -t "$leader" -a systemctl is-system-running 2>/dev/null || true)
    [[ $state == running || $state == degraded ]] && break
  fi
  sleep 0.2
done
if [[ -z $leader ]] || ! nsenter -t "$leader" -a systemctl --version >/dev/null 2>&1; then
  echo "systemd-nspawn-check: the container did not boot; its console said:" >&2
  tail -20 "$log" >&2
  exit 1
fi
echo "systemd-nspawn-check: booted $(nsenter -t "$leader" -a systemctl --version | head -1) (state ${state:-unknown})"
nsenter -t "$leader" -a /bin/bash -c "cd '$src' && scripts/systemd-check.sh '$build'"
