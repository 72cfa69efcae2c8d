#!/bin/sh
# Puts each MPI rank's UCX on a vHCA of its own, as a multi-rail host pins
# rank N to HCA N: node-local rank N gets ${VF_HCA_PREFIX}N port 1 (modulo
# VF_HCA_COUNT when there are more ranks than HCAs). mpirun runs it:
#   mpirun -x VF_HCA_PREFIX=vib ... rank-hca.sh ./app
set -eu
rank=${OMPI_COMM_WORLD_LOCAL_RANK:?rank-hca.sh: not started by Open MPI mpirun}
[ -n "${VF_HCA_COUNT:-}" ] && rank=$((rank % VF_HCA_COUNT))
UCX_NET_DEVICES="${VF_HCA_PREFIX:?rank-hca.sh: set VF_HCA_PREFIX, e.g. vib}${rank}:1"
export UCX_NET_DEVICES
exec "$@"
