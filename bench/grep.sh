#!/usr/bin/env bash
# Side-by-side benchmark: a legacyfs mount vs a native copy of the same text.
#
#   bench/grep.sh [SOURCE] [PATTERN]
#
# SOURCE  folder of assets to mount (default ../shared/corpus/nwn/tree)
# PATTERN what grep counts (default "orientation")
#
# Steps: mount SOURCE with build/src/legacyfs, `cp -r` the generated tree to a
# native folder on the same disk (and check it with diff -r), then time with
# hyperfine (apt package hyperfine):
#   grep -r -c PATTERN, find -type f, cat of every file
# on the mount and on the native copy, warm (one mount, 2 warm-up runs) and
# cold (fresh mount before every run + drop_caches when root; native: drop_caches).
# Results (markdown + JSON) go to $LFS_BENCH_OUT (default build/bench-results).
# Extra legacyfs options: $LFS_MOUNT_OPTS. Runs: $LFS_BENCH_RUNS (default 10).
# Method and numbers: docs/performance.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lfs=$root/build/src/legacyfs

# Internal: (re)mount for hyperfine --prepare.  grep.sh --remount SRC MNT PIDFILE
if [ "${1:-}" = --remount ]; then
	src=$2 mnt=$3 pidfile=$4
	if mountpoint -q "$mnt"; then
		fusermount3 -u "$mnt"
		pid=$(cat "$pidfile" 2>/dev/null || true)
		# wait for the old daemon to exit (it is not our child here)
		for _ in $(seq 100); do
			if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			sleep 0.05
		done
	fi
	if [ "$(id -u)" -eq 0 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
	# shellcheck disable=SC2086  # LFS_MOUNT_OPTS is a list of options
	setsid "$lfs" -f ${LFS_MOUNT_OPTS:-} "$src" "$mnt" </dev/null >/dev/null 2>&1 &
	echo $! >"$pidfile"
	for _ in $(seq 200); do
		mountpoint -q "$mnt" && exit 0
		sleep 0.05
	done
	echo "grep.sh: mount did not appear" >&2
	exit 1
fi
if [ "${1:-}" = --dropcaches ]; then
	if [ "$(id -u)" -eq 0 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
	exit 0
fi

src=$(cd "${1:-$root/../shared/corpus/nwn/tree}" && pwd)
pattern=${2:-orientation}
runs=${LFS_BENCH_RUNS:-10}
out=${LFS_BENCH_OUT:-$root/build/bench-results}
command -v hyperfine >/dev/null || { echo "grep.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
[ -x "$lfs" ] || { echo "grep.sh: build first: meson setup build && meson compile -C build" >&2; exit 1; }

mkdir -p "$out"
work=$(mktemp -d "$root/build/bench-work.XXXXXX")
mnt=$work/mnt native=$work/native pidfile=$work/pid
mkdir -p "$mnt"
self=$root/bench/grep.sh

cleanup() {
	if mountpoint -q "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" || true
	fi
	sleep 0.2
	rm -rf "$work"
}
trap cleanup EXIT

{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "nproc: $(nproc)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "kernel: $(uname -sr)"
	echo "libfuse: $(pkg-config --modversion fuse3 2>/dev/null || echo '?')"
	echo "hyperfine: $(hyperfine --version)"
	echo "source: $src ($(find "$src" -type f | wc -l) files, $(du -sh "$src" | cut -f1))"
	echo "pattern: $pattern"
	echo "root (cold = drop_caches): $([ "$(id -u)" -eq 0 ] && echo yes || echo 'no: cold runs only remount')"
	echo "mount options: ${LFS_MOUNT_OPTS:-(none)}"
} | tee "$out/machine.txt"

bash "$self" --remount "$src" "$mnt" "$pidfile"
t0=$(date +%s.%N)
cp -r "$mnt/." "$native"
t1=$(date +%s.%N)
echo "first full read (cp -r of the mount, cold daemon): $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s" | tee -a "$out/machine.txt"
echo "generated tree: $(find "$native" -type f | wc -l) files, $(du -sh "$native" | cut -f1)" | tee -a "$out/machine.txt"
diff -r "$mnt" "$native" >/dev/null && echo "diff -r mount native: identical" | tee -a "$out/machine.txt"

hf() { # name, then hyperfine arguments
	local name=$1
	shift
	hyperfine --runs "$runs" -i --export-markdown "$out/$name.md" --export-json "$out/$name.json" "$@"
}

# Warm: the daemon has generated everything, kernel caches are hot.
hf warm --warmup 2 \
	-n "grep mount" "grep -r -c $pattern $mnt" \
	-n "grep native" "grep -r -c $pattern $native" \
	-n "find mount" "find $mnt -type f" \
	-n "find native" "find $native -type f" \
	-n "cat mount" "find $mnt -type f -print0 | xargs -0 cat" \
	-n "cat native" "find $native -type f -print0 | xargs -0 cat"

# Cold: fresh daemon (nothing generated) and, as root, empty page cache.
hf cold-mount --prepare "bash $self --remount $src $mnt $pidfile" \
	-n "grep mount cold" "grep -r -c $pattern $mnt" \
	-n "find mount cold" "find $mnt -type f" \
	-n "cat mount cold" "find $mnt -type f -print0 | xargs -0 cat"
hf cold-native --prepare "bash $self --dropcaches" \
	-n "grep native cold" "grep -r -c $pattern $native" \
	-n "find native cold" "find $native -type f" \
	-n "cat native cold" "find $native -type f -print0 | xargs -0 cat"

echo
cat "$out/warm.md" "$out/cold-mount.md" "$out/cold-native.md"
echo "results in $out"
