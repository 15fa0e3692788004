#!/usr/bin/env bash
# Runs heatsim on small 1D, 2D and 3D cases and opens each output series with ParaView's own
# Python (pvpython, headless), checking time steps, times, array, bounds and data ranges
# against what `heatsim inspect` reports for the files, with both XDMF readers, and renders
# the last step to a PNG.
#
#   tests/paraview/run.sh HEATSIM_BINARY [PNG_DIR]
#
# Exit 77 (ctest SKIP) when pvpython is not installed (Debian: paraview python3-paraview).
set -euo pipefail

heatsim=$1
png_dir=${2:-}
pvpython=${PVPYTHON:-$(command -v pvpython || true)}
if [[ -z "$pvpython" ]]; then
  echo "pvpython not found: install paraview and python3-paraview to run this test"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/heatsim_paraview.XXXXXX")
xvfb_pid=""
cleanup() {
  [[ -z "$xvfb_pid" ]] || kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Reading needs no X server; rendering with Debian's ParaView (an X11 build) does: use the
# display there is, else start a virtual one (Xvfb, Debian package xvfb) for this script;
# -noreset: a server resetting after its last client refuses the next one for a moment.
if [[ -z "${DISPLAY:-}" ]]; then
  if ! command -v Xvfb >/dev/null; then
    echo "rendering needs an X display or Xvfb: install xvfb (or set DISPLAY)"
    exit 1
  fi
  for n in $(seq 90 189); do
    [[ -e /tmp/.X$n-lock || -e /tmp/.X11-unix/X$n ]] && continue
    Xvfb ":$n" -screen 0 1024x768x24 -nolisten tcp -noreset >"$work/xvfb.log" 2>&1 &
    xvfb_pid=$!
    for _ in $(seq 100); do
      [[ -S /tmp/.X11-unix/X$n ]] && break
      kill -0 "$xvfb_pid" 2>/dev/null || break
      sleep 0.1
    done
    if [[ -S /tmp/.X11-unix/X$n ]]; then
      export DISPLAY=":$n"
      break
    fi
    kill "$xvfb_pid" 2>/dev/null || true
    xvfb_pid=""
  done
  if [[ -z "${DISPLAY:-}" ]]; then
    echo "could not start Xvfb:"
    cat "$work/xvfb.log"
    exit 1
  fi
fi
[[ -n "$png_dir" ]] || png_dir=$work
mkdir -p "$png_dir"
failures=0

# Expected values for one series from `heatsim inspect` of each field file, in step order.
expectations() {
  local out=$1 times="" ranges="" first=""
  for f in "$out"/field_*.h5; do
    local info
    info=$("$heatsim" inspect "$f")
    local t range
    t=$(awk '/^time:/ {print $2}' <<<"$info")
    range=$(awk '/^min\/max:/ {print $2 ":" $4}' <<<"$info")
    times+="${times:+,}$t"
    ranges+="${ranges:+,}$range"
    [[ -n "$first" ]] || first=$f
  done
  local info
  info=$("$heatsim" inspect "$first")
  # grid: "2D, 64 x 48 (3072 points)"; spacing and origin: one value per axis (x y z).
  local n spacing origin points
  n=$(awk '/^grid:/ {sub(/^grid: *[0-9]D, /, ""); sub(/ \(.*/, ""); gsub(/ x /, " "); print}' <<<"$info")
  points=$(awk '/^grid:/ {gsub(/[()]/, ""); print $(NF-1)}' <<<"$info")
  spacing=$(awk '/^spacing:/ {$1=""; print}' <<<"$info")
  origin=$(awk '/^origin:/ {$1=""; print}' <<<"$info")
  local bounds
  bounds=$(awk -v n="$n" -v h="$spacing" -v o="$origin" 'BEGIN {
    split(n, N, " "); split(h, H, " "); split(o, O, " "); s = "";
    for (a = 1; a <= 3; ++a) {
      lo = (a in O) ? O[a] : 0; hi = (a in N) ? lo + (N[a] - 1) * H[a] : lo;
      s = s sprintf("%s%.17g,%.17g", a > 1 ? "," : "", lo, hi) }
    print s }')
  echo "--times $times --ranges $ranges --bounds $bounds --points $points"
}

check() {
  local name=$1 dims=$2 n=$3 precision=$4 center=$5 output=${6:-}
  local dir=$work/$name
  mkdir -p "$dir"
  cat >"$dir/case.yaml" <<YAML
grid: {dims: $dims, n: $n, length: 1.0}
physics: {alpha: 1.0}
scheme: order2
boundary:
  all: {type: dirichlet, value: 0.0}
initial: {type: gaussian, amplitude: 1.0, center: $center, width: 0.1}
time: {dt: auto, steps: 100}
precision: $precision
output: {directory: out, every: 25$output}
YAML
  (cd "$dir" && "$heatsim" run -q case.yaml >/dev/null)
  # The files are what the case asked for.
  local first_info
  first_info=$("$heatsim" inspect "$(ls "$dir"/out/field_*.h5 | head -n 1)")
  if [[ $output == *"precision: fp32"* ]] && ! grep -q '^precision: *fp32' <<<"$first_info"; then
    echo "$name: output not stored as fp32"; failures=$((failures + 1))
  fi
  if [[ $output == *compression* ]] && ! grep -q '^storage: *deflate level' <<<"$first_info"; then
    echo "$name: output not compressed"; failures=$((failures + 1))
  fi
  local expected
  expected=$(expectations "$dir/out")
  # Absolute path with the default (Xdmf3) reader, rendering; the legacy reader and the
  # relative path a user types (`paraview out/field.xmf`) without any X display.
  # shellcheck disable=SC2086
  "$pvpython" --force-offscreen-rendering "$here/check_output.py" --xmf "$dir/out/field.xmf" \
    $expected --reader xdmf3 --png "$png_dir/paraview-$name.png" || failures=$((failures + 1))
  # shellcheck disable=SC2086
  env -u DISPLAY "$pvpython" --force-offscreen-rendering "$here/check_output.py" \
    --xmf "$dir/out/field.xmf" $expected --reader xdmf2 || failures=$((failures + 1))
  # shellcheck disable=SC2086
  (cd "$dir" && env -u DISPLAY "$pvpython" --force-offscreen-rendering "$here/check_output.py" \
    --xmf out/field.xmf $expected --reader xdmf3) || failures=$((failures + 1))
  [[ -s "$png_dir/paraview-$name.png" ]] || { echo "no picture for $name"; failures=$((failures + 1)); }
}

check heat1d 1 "[201]" fp64 "[0.3]"
check heat2d 2 "[96, 64]" fp64 "[0.3, 0.6]"
check heat2d-fp32 2 "[40, 30]" fp32 "[0.5, 0.5]"
check heat3d 3 "[24, 20, 16]" fp64 "[0.3, 0.6, 0.5]"
# Smaller files: an fp64 run's output as floats, and deflate-compressed (shuffle + deflate).
check heat2d-out-fp32 2 "[96, 64]" fp64 "[0.3, 0.6]" ", precision: fp32"
check heat3d-deflate 3 "[24, 20, 16]" fp64 "[0.3, 0.6, 0.5]" ", compression: 6"
check heat2d-fp32-deflate 2 "[40, 30]" fp64 "[0.5, 0.5]" ", precision: fp32, compression: 1"

if ((failures > 0)); then
  echo "$failures ParaView check(s) failed"
  exit 1
fi
echo "ParaView opens every series correctly"
