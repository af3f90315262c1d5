#!/usr/bin/env bash
# Cold listing benchmark: `ls` and `ls -l` of one folder of N models, and
# `find` of a corpus tree, through a fresh legacyfs mount vs the same command
# on the native folder (docs/performance.md "Listing (lazy views)").
#
#   bench/ls_scale.sh [N ...]
#
# N       folder sizes (default: 100 1000 5000), each made once with
#         bench/mktree.sh DIR N flat under $LFS_BENCH_WORK
# Env:    LFS_BUILD    build folder (default build; a release build is meant)
#         LFS_BENCH_RUNS  runs per figure (default 7; the median is printed)
#         LFS_BENCH_WORK  where the trees are made (default $LFS_BUILD/ls-scale-work;
#                         kept between runs, remove it yourself)
#         LFS_FIND_TREES  trees for the find figure (default: the corpus's
#                         nwn/tree and the whole corpus)
#         LFS_MOUNT_OPTS  extra legacyfs options
#
# Every run is cold: sync + drop_caches (needs root; without root the runs are
# warm and the table says so), and a fresh mount for every legacyfs run (so
# the view cache is empty too). The time is the whole process (`ls` started to
# exited), median of the runs. Prints a markdown table: the median times
# and the ratio legacyfs / native. The machine's other load shows as noise:
# compare the min-max spread columns.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${LFS_BUILD:-$root/build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
lfs=$build/src/legacyfs
runs=${LFS_BENCH_RUNS:-7}
work=${LFS_BENCH_WORK:-$build/ls-scale-work}
corpus=${LFS_CORPUS:-$root/../shared/corpus}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000 5000)
[ -x "$lfs" ] || { echo "ls_scale.sh: build first (meson setup $build --buildtype=release)" >&2; exit 1; }
[ -d "$corpus" ] || { echo "ls_scale.sh: no corpus at $corpus" >&2; exit 77; }
if [ -n "${LFS_FIND_TREES:-}" ]; then
	read -r -a finds <<<"$LFS_FIND_TREES"
else
	finds=("$(cd "$corpus/nwn/tree" && pwd)" "$(cd "$corpus" && pwd)")
fi

cold=yes
[ "$(id -u)" -eq 0 ] || cold=no
mkdir -p "$work"
mnt=$(mktemp -d "$work/mnt.XXXXXX")
pid=""

unmount() {
	if mountpoint -q "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" || true
	fi
	if [ -n "$pid" ]; then
		wait "$pid" 2>/dev/null || true
		pid=""
	fi
}
trap 'unmount; rmdir "$mnt" 2>/dev/null || true' EXIT

drop() {
	if [ "$cold" = yes ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
}

mount_fresh() { # SRC
	unmount
	drop
	# shellcheck disable=SC2086  # LFS_MOUNT_OPTS is a list of options
	"$lfs" -f ${LFS_MOUNT_OPTS:-} "$1" "$mnt" </dev/null >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 400); do
		mountpoint -q "$mnt" && { drop; return 0; }
		sleep 0.025
	done
	echo "ls_scale.sh: mount of $1 did not appear" >&2
	exit 1
}

now_ns() { date +%s%N; }

# time_cmd CMD...: whole-process wall time of CMD in ms (3 decimals), output discarded
time_cmd() {
	local t0 t1
	t0=$(now_ns)
	"$@" >/dev/null 2>&1 || true
	t1=$(now_ns)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'
}

# stats of numbers on stdin: "median min max"
stats() {
	sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.1f %.1f %.1f", m, v[1], v[NR] }'
}

# measure KIND SRC CMD...: runs times; KIND native (CMD on SRC) or mount (CMD on a fresh mount of SRC)
measure() {
	local kind=$1 src=$2
	shift 2
	local i ts=()
	for ((i = 0; i < runs; i++)); do
		if [ "$kind" = mount ]; then
			mount_fresh "$src"
			ts+=("$(time_cmd "$@" "$mnt")")
			unmount
		else
			drop
			ts+=("$(time_cmd "$@" "$src")")
		fi
	done
	printf '%s\n' "${ts[@]}" | stats
}

row() { # LABEL NATIVE_DIR MOUNTED_SOURCE CMD...: CMD on NATIVE_DIR vs CMD on a fresh mount
	local label=$1 src=$2 msrc=$3
	shift 3
	local n m
	n=$(measure native "$src" "$@")
	m=$(measure mount "$msrc" "$@")
	read -r nm nlo nhi <<<"$n"
	read -r mm mlo mhi <<<"$m"
	awk -v l="$label" -v nm="$nm" -v nlo="$nlo" -v nhi="$nhi" -v mm="$mm" -v mlo="$mlo" -v mhi="$mhi" \
		'BEGIN { printf "| %s | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %.1f× |\n", l, nm, nlo, nhi, mm, mlo, mhi, mm / nm }'
}

for n in "${sizes[@]}"; do
	if [ ! -d "$work/flat$n" ]; then
		"$root/bench/mktree.sh" "$work/flat$n.tmp" "$n" flat >/dev/null
		mv "$work/flat$n.tmp" "$work/flat$n"
	fi
done

echo "legacyfs $(basename "$build"), $runs runs per figure, cold: $cold ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| work | native ms, median (min–max) | legacyfs ms, median (min–max) | ratio |"
echo "|---|---|---|---|"
for n in "${sizes[@]}"; do
	row "\`ls\` of $n models" "$work/flat$n" "$work/flat$n" ls
	row "\`ls -l\` of $n models" "$work/flat$n" "$work/flat$n" ls -l
done
for t in "${finds[@]}"; do
	name=${t#"$(dirname "$(dirname "$t")")"/}
	copy=$work/copy-$(printf '%s' "$name" | tr / _)
	if [ ! -d "$copy" ]; then
		# the same tree as native files: a copy of the mount (views included)
		mount_fresh "$t"
		cp -r "$mnt" "$copy.tmp"
		unmount
		mv "$copy.tmp" "$copy"
	fi
	row "\`find\` of $name ($(find "$copy" | wc -l) entries) vs a native copy of the mount" "$copy" "$t" find
	# the mount against find of SOURCE itself (fewer entries: no views)
	row "\`find\` of $name vs find of SOURCE" "$t" "$t" find
done
