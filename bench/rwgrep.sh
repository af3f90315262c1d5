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
#
# A/B mode: LFS_BENCH_AB='OPTS1;OPTS2;...' mounts SOURCE once per option set
# instead (plus $LFS_MOUNT_OPTS), and every run (2 x LFS_BENCH_RUNS,
# unpinned) times grep on native and on each mount in turn; prints per
# option set the median, min and max of the per-run ratio mount / native.
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
	for m in "$rw" "$ro" "$work"/ab*; do
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

if [ -n "${LFS_BENCH_AB:-}" ]; then
	IFS=';' read -r -a sets <<<"$LFS_BENCH_AB"
	mnts=()
	for i in "${!sets[@]}"; do
		mkdir -p "$work/ab$i"
		# shellcheck disable=SC2086  # an option set is a list of words
		mount_it "$work/ab$i" ${sets[$i]}
		mnts+=("$work/ab$i")
	done
	cp -r "${mnts[0]}/." "$native"
	for d in "$native" "${mnts[@]}" "$native" "${mnts[@]}"; do ms "$d" >/dev/null; done
	echo "rwgrep.sh A/B: $(date -u +%FT%H:%MZ), nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), source $src"
	: >"$work/t"
	for _ in $(seq $((runs * 2))); do
		line=$(ms "$native")
		for m in "${mnts[@]}"; do line="$line $(ms "$m")"; done
		echo "$line" >>"$work/t"
	done
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); native median $(cut -d' ' -f1 "$work/t" | median) ms"
	echo
	echo "| options | runs | mount / native median | min | max |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	for i in "${!sets[@]}"; do
		awk -v c=$((i + 2)) '{ print $c / $1 }' "$work/t" | sort -g |
			awk -v o="${sets[$i]}" '{ a[NR] = $1 } END {
				printf "| `%s` | %d | %.2f x | %.2f x | %.2f x |\n", o, NR, (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[1], a[NR] }'
	done
	for m in "${mnts[@]}"; do fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" || true; done
	exit 0
fi
mount_it "$rw"
mount_it "$ro" -o ro
cp -r "$rw/." "$native"
nfiles=$(find "$native" -type f | wc -l)

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
