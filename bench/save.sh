#!/usr/bin/env bash
# A save through the mount against the same save on a native copy (issue 12,
# docs/performance.md "Saves"):
#
#   bench/save.sh [RUNS]        (default 11; the median is reported)
#
# The model: the largest NWN binary of the corpus by triangles
# (c_drgshad.mdl, 1,983 triangles, 2,366 views; $LFS_SAVE_MODEL = another
# path relative to $LFS_CORPUS/nwn). Its largest mesh OBJ
# (meshes/Dragon_head.obj; $LFS_SAVE_VIEW) is edited with
#   sed -i 's/^v X /v Y /' FILE       (the x of the first vertex line)
# alternately to a changed value and back, so every save changes the model:
# through a legacyfs mount (default options, $LFS_MOUNT_OPTS for more) of a
# copy of the model's folder, and on a native copy of the OBJ on the same
# disk. Each timed sed is a whole process (fork, exec, read, write, rename);
# the runs interleave mount and native. After each sed a grep reads the
# file back (the edit must have landed); that first read after a save is
# timed apart: on the mount it builds the new version's views (a save builds
# only the saved view's text, for the round-trip law), so the save's cost is
# save + first read; both are reported, and the daemon's CPU time (user +
# system, all threads, /proc/PID/stat) per save + first read, which load on
# the machine disturbs less than wall time. legacyfs: $LFS_LEGACYFS or
# build/src/legacyfs (else build-*/src/legacyfs).
set -euo pipefail

runs=${1:-11}
rel=${LFS_SAVE_MODEL:-}
view=${LFS_SAVE_VIEW:-}
# shellcheck source=bench/savelib.sh
. "$(dirname "${BASH_SOURCE[0]}")/savelib.sh"
name=$(basename "$rel")
mkdir -p "$tmp/native"
cp "$corpus/nwn/$rel" "$tmp/src/"
bench_mount

m=$tmp/mnt/$name/$view
n=$tmp/native/$(basename "$view")
cp "$m" "$n"
x=$(grep -m1 '^v ' "$m" | cut -d' ' -f2)
y=$(awk -v x="$x" 'BEGIN { printf "%.4f", x + 0.125 }')
echo "model $name ($(wc -c <"$tmp/src/$name") bytes), view $view ($(wc -c <"$n") bytes), vertex x $x <-> $y"

ns() { date +%s%N; }
: >"$tmp/t.mount" >"$tmp/t.native" >"$tmp/r.mount" >"$tmp/r.native"
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
c0=""
for i in $(seq 0 "$runs"); do
	[ "$i" = 1 ] && c0=$(cpu) # after the warm-up
	if [ $((i % 2)) = 0 ]; then from=$x to=$y; else from=$y to=$x; fi
	for side in mount native; do
		f=$m
		[ $side = native ] && f=$n
		a=$(ns)
		sed -i "s/^v $from /v $to /" "$f"
		b=$(ns)
		# the first read after the save (builds the new version's views
		# on the mount), timed apart from the save
		grep -q "^v $to " "$f" || { echo "$side: the edit did not land (run $i)" >&2; cat "$tmp/mnt/$name/errors.txt" >&2 2>/dev/null; exit 1; }
		c=$(ns)
		[ "$i" = 0 ] || echo $(((b - a) / 1000)) >>"$tmp/t.$side" # run 0: warm-up
		[ "$i" = 0 ] || echo $(((c - b) / 1000)) >>"$tmp/r.$side"
	done
done
c1=$(cpu)
med() { sort -n "$1" | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : int((v[NR/2] + v[NR/2+1]) / 2)}'; }
mm=$(med "$tmp/t.mount")
nm=$(med "$tmp/t.native")
echo "sed -i of one vertex, median of $runs (µs): mount $mm, native $nm, ratio $(awk -v a="$mm" -v b="$nm" 'BEGIN { printf "%.1f", a / b }') x"
echo "first read after the save (grep -q of the saved file, median µs): mount $(med "$tmp/r.mount"), native $(med "$tmp/r.native")"
echo "daemon CPU per save + first read (ms): $(awk -v c=$((c1 - c0)) -v n="$runs" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", c * 1000 / hz / n }')"
echo "mount runs (µs): $(sort -n "$tmp/t.mount" | tr '\n' ' ')"
echo "native runs (µs): $(sort -n "$tmp/t.native" | tr '\n' ' ')"
