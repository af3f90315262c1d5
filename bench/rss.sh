#!/usr/bin/env bash
# Memory of the daemon against the issue's goal and the formula it keeps
# (docs/performance.md "Memory"):
#
#   goal: RSS <= cache_size + 32 MiB + 64 bytes x live inodes
#   kept: RSS <= 1.2 x cache_size + 64 MiB + 150 bytes x live inodes
#         (150: a generated file's node, its path and its share of the node
#         tables, 132-140 bytes measured by tests/unit test_node_mem)
#
#   bench/rss.sh [BUILD_DIR] [N] [CACHE_MIB...]
#
# BUILD_DIR  build folder with src/legacyfs (default build)
# N          models in the tree (default 10000; bench/mktree.sh DEST N tree)
# CACHE_MIB  the -o cache_size values to run (default 256 64)
# Extra mount options: $LFS_MOUNT_OPTS (for example "-o ro").
#
# For each cache_size: mount the tree (fresh daemon, default options
# otherwise: thumbnails on, read-write), run `find MNT >/dev/null` and then
# `grep -r -c orientation MNT >/dev/null`, and read VmRSS and VmHWM of the
# daemon (/proc/PID/status). Live inodes: the names find listed (every one
# was looked up and is held by the kernel: the daemon holds one node for
# each, plus the root and /.legacyfs; fewer if the kernel forgot some under
# memory pressure, which only makes the formula looser). Prints a markdown
# table against the formula. The tree is made once below
# BUILD_DIR/bench-rss/tree and kept (delete it to rebuild); the mount point
# is removed at the end.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$root/build}" && pwd)
N=${2:-10000}
shift $(($# > 2 ? 2 : $#))
CACHES=("$@")
[ ${#CACHES[@]} -gt 0 ] || CACHES=(256 64)
lfs=$BUILD/src/legacyfs
[ -x "$lfs" ] || { echo "$0: no $lfs (build first)" >&2; exit 1; }
W=$BUILD/bench-rss
tree=$W/tree-$N
mnt=$W/mnt
mkdir -p "$W" "$mnt"
if [ ! -d "$tree" ]; then
	"$root/bench/mktree.sh" "$tree.part" "$N" tree
	mv "$tree.part" "$tree"
fi

pid=
cleanup() {
	if mountpoint -q "$mnt"; then fusermount3 -u "$mnt" || true; fi
	if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT

kib() { awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$pid/status"; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

echo "| cache_size | live inodes | VmRSS | VmHWM | formula: cache + 32 MiB + 64 B x inodes | VmRSS within | kept: 1.2 x cache + 64 MiB + 150 B x inodes | VmRSS, VmHWM within | (RSS - cache) / inode | find | grep -r |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for c in "${CACHES[@]}"; do
	# shellcheck disable=SC2086 # options split into words
	"$lfs" -f -o "cache_size=$c" ${LFS_MOUNT_OPTS:-} "$tree" "$mnt" 2>"$W/daemon-$c.log" &
	pid=$!
	for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done
	mountpoint -q "$mnt" || { echo "$0: mount failed (see $W/daemon-$c.log)" >&2; exit 1; }
	t0=$(date +%s.%N)
	inodes=$(find "$mnt" | wc -l)
	t1=$(date +%s.%N)
	grep -r -c orientation "$mnt" >/dev/null || true
	t2=$(date +%s.%N)
	rss=$(($(kib VmRSS) * 1024))
	hwm=$(($(kib VmHWM) * 1024))
	bound=$((c * 1048576 + 32 * 1048576 + 64 * inodes))
	within=no
	if [ "$rss" -le "$bound" ]; then
		within=yes
		[ "$hwm" -le "$bound" ] || within="yes (peak over)"
	fi
	kept=$(awk -v c="$c" -v n="$inodes" 'BEGIN { printf "%.0f", 1.2 * c * 1048576 + 64 * 1048576 + 150 * n }')
	kwithin=no
	if [ "$rss" -le "$kept" ]; then
		kwithin=yes
		[ "$hwm" -le "$kept" ] || kwithin="yes (peak over)"
	fi
	per=$(awk -v r="$rss" -v c="$c" -v n="$inodes" 'BEGIN { printf "%.0f", (r - c * 1048576) / n }')
	printf '| %s MiB%s | %d | %s MiB | %s MiB | %s MiB | %s | %s MiB | %s | %s B | %.1f s | %.1f s |\n' \
		"$c" "${LFS_MOUNT_OPTS:+ $LFS_MOUNT_OPTS}" "$inodes" "$(mib "$rss")" "$(mib "$hwm")" "$(mib "$bound")" "$within" \
		"$(mib "$kept")" "$kwithin" "$per" \
		"$(echo "$t1 - $t0" | bc -l)" "$(echo "$t2 - $t1" | bc -l)"
	fusermount3 -u "$mnt"
	wait "$pid" || true
	pid=
done
