#!/usr/bin/env bash
# Warm `grep -r` on the read-write mount vs `-o ro` vs a native copy, unpinned and pinned.
#
#   bench/rwgrep.sh [SOURCE] [PATTERN]
#
# SOURCE  folder of assets to mount (default ../shared/corpus/nwn/tree; a
#         bench/mktree.sh tree works too)
# PATTERN what grep counts (default "orientation")
#
# Mounts SOURCE twice with build/src/legacyfs -f: read-write (default options
# plus $LFS_MOUNT_OPTS) and `-o ro` (plus $LFS_MOUNT_OPTS); `cp -r` of the
# read-write mount makes the native copy (same disk). After 2 warm-up passes
# of each, every run times `grep -r -c PATTERN DIR >/dev/null` (whole process,
# wall clock) on native, rw and ro one after the other, so the three see the
# same machine load; the ratio of a run is mount / native of that same run.
# Placements (taskset):
#   unpinned  nobody pinned (what a user gets)
#   same      grep and every daemon thread on CPU 0: the round-trip floor
#   other     grep on CPU 0, the daemons on CPU 1: the cross-CPU ceiling
# Runs per placement: $LFS_BENCH_RUNS (default 11; unpinned uses 2x that).
# Placements measured: $LFS_BENCH_PLACES (default "unpinned same other").
# Prints one markdown table: median ms and ratio of medians, and the worst
# run's ratio. Work folder under build dir $LFS_BUILD (default build).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${LFS_BUILD:-$root/build}" && pwd)
lfs=$build/src/legacyfs
src=$(cd "${1:-$root/../shared/corpus/nwn/tree}" && pwd)
pattern=${2:-orientation}
runs=${LFS_BENCH_RUNS:-11}
[ -x "$lfs" ] || { echo "rwgrep.sh: build first (meson compile -C $build)" >&2; exit 1; }

work=$(mktemp -d "$build/rwgrep.XXXXXX")
rw=$work/rw ro=$work/ro native=$work/native
mkdir -p "$rw" "$ro"
pids=()
cleanup() {
	for m in "$rw" "$ro"; do
		if mountpoint -q "$m" 2>/dev/null; then
			fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" || true
		fi
	done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

mount_it() { # MNT OPTS...
	local mnt=$1
	shift
	# shellcheck disable=SC2086  # LFS_MOUNT_OPTS is a list of options
	"$lfs" -f ${LFS_MOUNT_OPTS:-} "$@" "$src" "$mnt" 2>>"$work/daemon.log" &
	pids+=($!)
	for _ in $(seq 200); do
		mountpoint -q "$mnt" && return 0
		sleep 0.05
	done
	echo "rwgrep.sh: mount did not appear" >&2
	exit 1
}
mount_it "$rw"
mount_it "$ro" -o ro
cp -r "$rw/." "$native"
nfiles=$(find "$native" -type f | wc -l)

ms() { # DIR [taskset CPU] -> wall ms of one grep
	local t0 t1
	t0=$EPOCHREALTIME
	if [ -n "${2:-}" ]; then
		taskset -c "$2" grep -r -c "$pattern" "$1" >/dev/null || true
	else
		grep -r -c "$pattern" "$1" >/dev/null || true
	fi
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
}
pin_daemons() { # CPU list
	for p in "${pids[@]}"; do taskset -a -p -c "$1" "$p" >/dev/null; done
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for d in "$native" "$rw" "$ro" "$native" "$rw" "$ro"; do ms "$d" >/dev/null; done

allcpus=0-$(($(nproc) - 1))
echo "rwgrep.sh: $(date -u +%FT%H:%MZ), nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), $nfiles files, source $src, options '${LFS_MOUNT_OPTS:-}'"
echo
echo "| placement | runs | native ms | rw ms | rw / native | rw worst | ro ms | ro / native | ro worst |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for place in ${LFS_BENCH_PLACES:-unpinned same other}; do
	n=$runs gcpu=
	case $place in
	unpinned) pin_daemons "$allcpus"; n=$((runs * 2)) ;;
	same) pin_daemons 0; gcpu=0 ;;
	other) pin_daemons 1; gcpu=0 ;;
	esac
	: >"$work/t"
	for _ in $(seq "$n"); do
		a=$(ms "$native" "$gcpu") b=$(ms "$rw" "$gcpu") c=$(ms "$ro" "$gcpu")
		echo "$a $b $c" >>"$work/t"
	done
	mn=$(cut -d' ' -f1 "$work/t" | median)
	mw=$(cut -d' ' -f2 "$work/t" | median)
	mr=$(cut -d' ' -f3 "$work/t" | median)
	ww=$(awk '{ r = $2 / $1; if (r > m) m = r } END { printf "%.2f", m }' "$work/t")
	wr=$(awk '{ r = $3 / $1; if (r > m) m = r } END { printf "%.2f", m }' "$work/t")
	awk -v p="$place" -v n="$n" -v a="$mn" -v b="$mw" -v c="$mr" -v ww="$ww" -v wr="$wr" 'BEGIN {
		printf "| %s | %d | %.0f | %.0f | %.2f x | %s x | %.0f | %.2f x | %s x |\n", p, n, a, b, b / a, ww, c, c / a, wr }'
done
pin_daemons "$allcpus"
