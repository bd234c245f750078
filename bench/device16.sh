#!/usr/bin/env bash
# The 16-core checks of issues 39 and 40 in one call on a lent many-core machine with no network,
# from this checkout (the working tree travels) and the pack of ../shared/tools/scale16/prepare.sh
# (MPICH and msgspec wheels, OMB 7.4 built against that MPICH at /tmp/mp):
#   here:  OSU_SRC=$PWD/bench/work/osu-src PYVER=3.12 ../shared/tools/scale16/prepare.sh $PWD/.scale16
#   there: OUT=<folder> bash bench/device16.sh        (carry .scale16)
# Writes OUT/log.txt and OUT/results.tgz (the benches' tables and stores); each step has a time
# limit (seconds: STEP_S_* below), so a slow step costs its own figures and not the others'.
# Locally, for a dry run: PY=.venv/bin/python NO_INSTALL=1 RANKS=2 SCALE_RANKS=2 KPROCS=1,2 OUT=/tmp/d \
#   bash bench/device16.sh
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:?set OUT to a folder for the results}
PACK=${PACK:-.scale16}
PY=${PY:-python3}
RANKS=${RANKS:-16}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
if [ -z "${NO_INSTALL:-}" ]; then
  "$PY" -m pip install -q --no-index --no-deps --prefix /tmp/mp "$PACK"/whl/*.whl || exit 1
  pyv=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  export PYTHONPATH=/tmp/mp/lib/python$pyv/site-packages
fi
export PATH=/tmp/mp/bin:$PATH MPICC=/tmp/mp/bin/mpicc
# OMB's programs, laid out as an install's mpi folder (what bench/clock_sweep.py reads)
osu=/tmp/osu-pack
rm -rf "$osu" && mkdir -p "$osu" && tar xzf "$PACK/osu.tar.gz" -C "$osu"
export OSU_MPI=/tmp/osu-mpi
rm -rf "$OSU_MPI" && mkdir -p "$OSU_MPI/collective" "$OSU_MPI/pt2pt"
for f in "$osu"/c/mpi/collective/blocking/osu_* "$osu"/c/mpi/pt2pt/*/osu_*; do
  case $f in */collective/*) ln -sf "$f" "$OSU_MPI/collective/" ;; *) ln -sf "$f" "$OSU_MPI/pt2pt/" ;; esac
done
res=/tmp/device16-results
rm -rf "$res" && mkdir -p "$res"
export BENCH_WORK=/tmp/device16-work BENCH_RESULTS=$res
mkdir -p "$BENCH_WORK"
pack() { tar czf "$OUT/results.tgz" -C "$res" . ; }
step() {  # step NAME SECONDS COMMAND...: run, time, keep its tables under a name of its own
  local name=$1 limit=$2
  shift 2
  echo "=== $name (limit ${limit} s): $*"
  local t0=$SECONDS
  timeout "$limit" "$@"
  echo "=== $name: exit $?, $((SECONDS - t0)) s"
  for f in "$res"/*.md "$res"/*.json; do
    [ -e "$f" ] || continue
    case $(basename "$f") in *@*) ;; *) mv "$f" "${f%.*}@$name.${f##*.}" ;; esac
  done
  pack
}
echo "machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo); $(free -g | awk '/Mem/{print $2}') GiB"
lscpu | grep -Ei 'cache|socket|numa|thread|core' | head -12
timeout 60 "$PY" -m scope --db "$BENCH_WORK/doctor.db" doctor -n "$RANKS" | tail -15
step clock_sweep_$RANKS "${STEP_S_SWEEP:-90}" "$PY" bench/clock_sweep.py --ranks "$RANKS" --rounds 3
step clock_sweep_2 "${STEP_S_SWEEP2:-45}" "$PY" bench/clock_sweep.py --ranks 2 --rounds 3
step clock_scale "${STEP_S_SCALE:-120}" "$PY" bench/clock_scale.py --ranks "${SCALE_RANKS:-2,4,8,$RANKS}" --rounds 2 --no-testbed
step kernels "${STEP_S_KERNELS:-200}" "$PY" bench/kernels.py --budget 1 --procs "${KPROCS:-1,4,$RANKS}" --over ''
cp "$BENCH_WORK"/kernels.db "$res"/ 2>/dev/null
pack
ls -la "$res"
