#!/bin/bash
# Memory per model (docs/performance.md "Memory per model"): peak RSS of the
# daemon and the time of `ls` on huge generated NWN models, with several
# -o model_memory values (0 = no bound: the behaviour before the option).
#
#   bench/model_memory.sh [BUILD_DIR] [MESHES] [COPIES]
#
# Defaults: build, 40 meshes (x 30 000 vertices, 29 998 faces each: an
# 89 MB binary), 3 copies for the several-models run. Generates an NWN ASCII
# model with python3, compiles it with legacyfs-convert, mounts with
# build/src/legacyfs under /usr/bin/time -v. Everything is written below
# BUILD_DIR/bench-model-memory and removed at the end; nothing is committed.
set -eu
BUILD=${1:-build}
MESHES=${2:-40}
COPIES=${3:-3}
BUILD=$(cd "$BUILD" && pwd)
W="$BUILD/bench-model-memory"
LEGACYFS="$BUILD/src/legacyfs"
CONVERT="$BUILD/src/legacyfs-convert"
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt package time)" >&2; exit 1; }
rm -rf "$W"
mkdir -p "$W/one" "$W/many" "$W/mnt"
trap 'mountpoint -q "$W/mnt" && fusermount3 -u "$W/mnt"; rm -rf "$W"' EXIT

python3 - "$MESHES" 30000 7 >"$W/big.txt" <<'PY'
import random, sys
meshes, nv, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
o = sys.stdout
o.write("newmodel big\nsetsupermodel big NULL\nclassification character\n"
        "setanimationscale 1\nbeginmodelgeom big\nnode dummy big\n  parent NULL\nendnode\n")
for m in range(meshes):
    o.write(f"node trimesh mesh{m}\n  parent big\n  position 0 0 0\n  orientation 0 0 0 0\n"
            f"  bitmap tex{m}\n  verts {nv}\n")
    for i in range(nv):
        o.write(f"    {r.uniform(-5,5):.5f} {r.uniform(-5,5):.5f} {r.uniform(-5,5):.5f}\n")
    o.write(f"  faces {nv - 2}\n")
    for i in range(nv - 2):
        o.write(f"    {i} {i+1} {i+2} 1 {i} {i+1} {i+2} 0\n")
    o.write(f"  tverts {nv}\n")
    for i in range(nv):
        o.write(f"    {r.random():.5f} {r.random():.5f} 0\n")
    o.write("endnode\n")
o.write("endmodelgeom big\ndonemodel big\n")
PY
"$CONVERT" compile --max-size 4096 "$W/big.txt" -o "$W/one/big.mdl"
rm "$W/big.txt"
for i in $(seq "$COPIES"); do cp "$W/one/big.mdl" "$W/many/b$i.mdl"; done
size=$(stat -c %s "$W/one/big.mdl")
views=$("$CONVERT" list --max-size 4096 --thumb-size 0 "$W/one/big.mdl" | awk '{ s += $1 } END { print s }')
echo "model: $size bytes; its views (no thumbnail): $views bytes"

# run SRC OPTS...: mount, `ls` every model folder, unmount; print time and peak
run() {
	src=$1
	shift
	/usr/bin/time -v "$LEGACYFS" -f "$@" "$src" "$W/mnt" 2>"$W/daemon.log" &
	for _ in $(seq 200); do mountpoint -q "$W/mnt" && break; sleep 0.05; done
	s=$(date +%s%N)
	ls "$W/mnt"/*.mdl >/dev/null
	e=$(date +%s%N)
	fusermount3 -u "$W/mnt"
	wait
	peak=$(awk '/Maximum resident/ { print $NF }' "$W/daemon.log")
	printf '%-22s %-5s ls %8.2f s   peak RSS %7d MB\n' "${*:-default}" "$(basename "$src")" \
		"$(echo "($e - $s) / 1000000000" | bc -l)" "$((peak / 1000))"
}
for o in "-o model_memory=0" "" "-o model_memory=800" "-o model_memory=1200"; do
	# shellcheck disable=SC2086 # one option word or none
	run "$W/one" $o
done
run "$W/many" -o model_memory=0
run "$W/many"
