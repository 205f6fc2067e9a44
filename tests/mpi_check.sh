#!/usr/bin/env bash
# The MPI path: `mpirun -n 2 servesim sweep` must write exactly the files of the serial
# sweep. Usage: mpi_check.sh SERVESIM SRCDIR MPIEXEC
set -u
bin=$1
src=$2
mpiexec=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(sweep "$src/scenarios/quickstart.yaml" --vary workload.rate=4:28:8 --vary engine.max_num_seqs=16,256 --set workload.num_requests=200 --quiet)
"$bin" "${args[@]}" --out "$tmp/serial" || { echo "0 passed, 1 failed (the serial sweep)"; exit 1; }
# Open MPI refuses to run as root and on fewer cores than ranks without these flags.
extra=()
"$mpiexec" --version 2>/dev/null | grep -qiE "open ?-?mpi|openrte" && extra=(--allow-run-as-root --oversubscribe)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$mpiexec" "${extra[@]}" -n 2 "$bin" "${args[@]}" --out "$tmp/mpi" || { echo "0 passed, 1 failed"; exit 1; }
if diff -r "$tmp/serial" "$tmp/mpi" >/dev/null; then
    echo "1 passed, 0 failed"
else
    diff -r "$tmp/serial" "$tmp/mpi" | head -5
    echo "0 passed, 1 failed"
    exit 1
fi
