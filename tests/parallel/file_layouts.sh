#!/usr/bin/env bash
# Decomposed runs write the files a run on one process writes, whichever HDF5 layout the build
# has (parallel HDF5: collective writes; serial HDF5: gathered to rank 0 in slabs), compared
# with h5diff (datasets and attributes):
#   1. 3D fp64 on 3 ranks to step 2, restarted on 2 from that checkpoint (read by rank 0 in
#      slabs and scattered), against the uninterrupted run on one process: compressed output
#      of many chunks, a slab each (HEATSIM_FILE_SLAB_BYTES), checkpoints of two chunks;
#   2. the same for 2D with fp32 output, 4 ranks then 3, slabs shorter than a row;
#   3. with a PEER heatsim (built with the other layout), its files of run 1 against these.
# usage: file_layouts.sh HEATSIM MPIEXEC H5DIFF [PEER]
set -euo pipefail
heatsim=$1 mpiexec=$2 h5diff=$3 peer=${4:-}
if [[ ! -x $h5diff ]]; then
  echo "h5diff not found (Debian: hdf5-tools): skipped"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# mpirun's session directory of its own: two started at once (ctest -j) race to create the
# shared /tmp/ompi.HOST.UID, and one fails in orte_init.
mkdir -p "$dir/ompi"
export OMPI_MCA_orte_tmpdir_base="$dir/ompi"
ranks() {
  local n=$1
  shift
  timeout 300 "$mpiexec" --oversubscribe --allow-run-as-root -np "$n" "$@"
}
# Every .h5 of directory $1 equals its namesake in $2 (h5diff exits 1 on a difference), and
# so do the index and the probe rows.
same() {
  local want=$1 got=$2 f count=0
  for f in "$want"/*.h5; do
    "$h5diff" "$f" "$got/$(basename "$f")"
    count=$((count + 1))
  done
  [[ $count -gt 0 ]]
  if ls "$got"/*.tmp >/dev/null 2>&1; then
    echo "temporaries left in $got" >&2
    return 1
  fi
  cmp "$want/field.xmf" "$got/field.xmf"
  if [[ -f $want/probes.csv ]]; then cmp "$want/probes.csv" "$got/probes.csv"; fi
  echo "same files: $got ($count HDF5 files)"
}

# Case $1 on one process into $2_one; on $3 ranks to step $4 and on $5 ranks from that
# checkpoint on into $2_split, in slabs of $6 bytes; then the two directories compared.
one_and_split() {
  local yaml=$1 out=$2 first=$3 step=$4 rest=$5
  export HEATSIM_FILE_SLAB_BYTES=$6
  "$heatsim" run "$yaml" -q -o "${out}_one"
  ranks "$first" "$heatsim" run "$yaml" -q -n "$step" -o "${out}_split"
  ranks "$rest" "$heatsim" run "$yaml" -q -o "${out}_split" \
    --restart "${out}_split/$(printf 'checkpoint_%08d.h5' "$step")"
  unset HEATSIM_FILE_SLAB_BYTES
  same "${out}_one" "${out}_split"
}

"$heatsim" info | grep '^MPI: '

cat >"$dir/big.yaml" <<'YAML'
grid: {dims: 3, n: [131, 127, 129], length: 1.0}
physics: {alpha: 1.0, source: 1.0}
boundary:
  all: {type: neumann, flux: 0.0}
  z+: {type: dirichlet, value: 0.5}
initial: {type: gaussian, amplitude: 1.0, center: [0.3, 0.6, 0.5], width: 0.2}
time: {dt: auto, steps: 4}
output: {every: 2, compression: 4}
checkpoint: {every: 2}
probes:
  every: 1
  points:
    a: [0.3, 0.6, 0.5]
YAML
one_and_split "$dir/big.yaml" "$dir/big" 3 2 2 200000

cat >"$dir/small.yaml" <<'YAML'
grid: {dims: 2, n: [37, 29], length: 1.0}
physics: {alpha: 1.0}
scheme: order4
boundary:
  all: {type: dirichlet, value: 0.0}
  y+: {type: neumann, flux: 0.5}
initial: {type: expression, value: "sin(2*pi*x) * y + x"}
time: {dt: auto, steps: 40}
output: {every: 10, precision: fp32}
checkpoint: {every: 20}
YAML
one_and_split "$dir/small.yaml" "$dir/small" 4 20 3 100

if [[ -n $peer ]]; then
  "$peer" info | grep '^MPI: '
  ranks 3 "$peer" run "$dir/big.yaml" -q -o "$dir/big_peer"
  same "$dir/big_split" "$dir/big_peer"
fi
