#!/usr/bin/env bash
# Installs every Debian 12 package vfabric needs to build, run and test.
# Idempotent and quiet when everything is already there. Run as root.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ninja-build
  libdpdk-dev dpdk-dev                        # dataplane
  libibverbs-dev ibverbs-utils rdma-core perftest   # verbs, unmodified test programs
  infiniband-diags                            # ibnetdiscover, perfquery, ...: MADs through umad
  rdmacm-utils                                # rping, ucmatose, udaddy, ...: librdmacm's own clients
  ucx-utils openmpi-bin libopenmpi-dev libfabric-bin   # the stacks clusters run (UCX, MPI, libfabric)
  libboost-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
  libsystemd-dev libbpf-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  clang-14 libclang-rt-14-dev                 # the sanitizer + libFuzzer build
  iproute2 procps
  tshark                                      # capture tests: Wireshark's dissectors read our pcapng
  libxml2-utils                               # xmllint: the comparison report's SVG plots are checked as XML
  systemd-container                           # the unit checked under a real systemd (systemd-nspawn)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "setup: these packages are missing and installing them needs root: ${missing[*]}" >&2
  echo "setup: run 'sudo $0'" >&2
  exit 1
fi
echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
