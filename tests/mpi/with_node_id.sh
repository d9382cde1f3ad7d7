#!/usr/bin/env bash
# with_node_id.sh <mode> <command...>: sets DEVMESH_NODE_ID for this rank, then runs the
# command (mpirun starts this script once per rank; the command is the test program).
# The rank comes from the launcher's environment (OpenMPI, MPICH/Hydra, Slurm).
#   block        node = rank / 4      (8 ranks: 2 nodes of 4, as mpirun --map-by slot)
#   round_robin  node = rank % 2      (8 ranks: 2 nodes of 4, as mpirun --map-by node)
#   four_nodes   node = rank % 4      (8 ranks: 4 nodes of 2, round-robin)
#   numbering    node = 100 - rank % 2  (ids are renumbered by the lowest rank on each node)
#   mixed        ranks 0-3: node 5; the others: unset (the machine's node)
#   invalid      the last rank: "x1" (not an integer); the others: rank / 4
set -eu
mode=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-${SLURM_NTASKS:-}}}
if [ -z "$rank" ] || [ -z "$size" ]; then
  echo "with_node_id.sh: no rank in the environment (run under mpirun)" >&2
  exit 1
fi
unset DEVMESH_NODE_ID
case "$mode" in
  block) export DEVMESH_NODE_ID=$((rank / 4)) ;;
  round_robin) export DEVMESH_NODE_ID=$((rank % 2)) ;;
  four_nodes) export DEVMESH_NODE_ID=$((rank % 4)) ;;
  numbering) export DEVMESH_NODE_ID=$((100 - rank % 2)) ;;
  mixed) if [ "$rank" -lt 4 ]; then export DEVMESH_NODE_ID=5; fi ;;
  invalid) if [ "$rank" -eq $((size - 1)) ]; then export DEVMESH_NODE_ID=x1; else export DEVMESH_NODE_ID=$((rank / 4)); fi ;;
  none) ;;
  *) echo "with_node_id.sh: unknown mode '$mode'" >&2; exit 1 ;;
esac
exec "$@" "$mode"
