#!/usr/bin/env bash
# Every scale figure of docs/performance.md in one go (issue 12): each one is
# whole process against whole process, in the same run, as a ratio.
#
#   bench/scale.sh [quick|full]        (default full)
#
# Runs, in this order, and writes each script's markdown table below
# $LFS_BENCH_OUT (default build/bench-results/scale-DATE):
#   ls_scale.sh    cold `ls` / `ls -l` of one folder of 100 / 1,000 / 5,000
#                  models and cold `find` of corpus mounts vs native
#   rwgrep.sh      warm `grep -r` on the read-write and the -o ro mount vs
#                  native: unpinned, same CPU, other CPU
#   rss.sh         daemon RSS after `find` + `grep -r` of a 10,000-model tree
#                  at -o cache_size=256 and 64, against the memory formula
#   save.sh        `sed -i` of one vertex of the largest corpus model's mesh
#                  OBJ through the mount vs on a native copy
#   batch.sh       legacyfs-convert's one-process batch vs nwnmdlcomp's
#   thumbnails     cold `cat thumbnail.png` of the largest corpus binary on a
#                  first mount (drawn) and a second one (disk cache)
# `quick` uses fewer runs and a 1,000-model tree for rss.sh (a smoke run,
# minutes); `full` is what docs/performance.md quotes (about an hour on
# 2 vCPUs). Use a release build (meson setup build --buildtype=release) on a
# quiet machine: the figures are wall time. Needs root for drop_caches (the
# cold figures are warm otherwise, and say so) and the corpus
# (../shared/corpus or $LFS_CORPUS; exits 77 without it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-full}
case "$mode" in quick|full) ;; *) echo "usage: $0 [quick|full]" >&2; exit 2;; esac
corpus=${LFS_CORPUS:-$root/../shared/corpus}
[ -d "$corpus/nwn" ] || { echo "$0: no corpus at $corpus" >&2; exit 77; }
export LFS_CORPUS=$corpus
build=${LFS_BUILD:-$root/build}
out=${LFS_BENCH_OUT:-$build/bench-results/scale-$(date +%Y%m%d-%H%M)}
mkdir -p "$out"

if [ "$mode" = quick ]; then
	runs=3 rssn=1000 sizes="100 1000"
else
	runs=7 rssn=10000 sizes="100 1000 5000"
fi

step() {
	local name=$1
	shift
	echo "== $name: $*" >&2
	if "$@" >"$out/$name.md" 2>"$out/$name.log"; then
		cat "$out/$name.md"
	else
		echo "$name failed (exit $?): see $out/$name.log" >&2
	fi
}

# shellcheck disable=SC2086
LFS_BUILD=$build LFS_BENCH_RUNS=$runs step ls_scale bash "$root/bench/ls_scale.sh" $sizes
LFS_BUILD=$build LFS_BENCH_RUNS=$((runs + 4)) step rwgrep bash "$root/bench/rwgrep.sh" "$corpus/nwn/tree"
step rss bash "$root/bench/rss.sh" "$build" "$rssn" 256 64
step save bash "$root/bench/save.sh" $((runs + 4))
step batch bash "$root/bench/batch.sh" "$runs"

# Thumbnails: the largest corpus binary, cold cat on a fresh mount, first with
# an empty disk cache (drawn), then again with a fresh daemon (disk cache).
thumbs() {
	local lfs=$build/src/legacyfs work model dir name
	work=$(mktemp -d)
	model=$(sed "s|^|$corpus/nwn/|" "$corpus/nwn/binary.txt" | xargs ls -S | head -n 1)
	dir=$work/src name=$(basename "$model")
	mkdir -p "$dir" "$work/mnt" "$work/cache"
	cp "$model" "$dir/"
	echo "| model | mount | cat thumbnail.png (s) |"
	echo "| --- | --- | ---: |"
	for pass in "first (drawn)" "second (disk cache)"; do
		[ "$(id -u)" -eq 0 ] && { sync; echo 3 >/proc/sys/vm/drop_caches; }
		"$lfs" -o "thumb_cache=$work/cache" "$dir" "$work/mnt"
		local t0 t1
		t0=$(date +%s.%N)
		cat "$work/mnt/$name/thumbnail.png" >/dev/null
		t1=$(date +%s.%N)
		fusermount3 -u "$work/mnt"
		awk -v n="$name" -v p="$pass" -v a="$t0" -v b="$t1" 'BEGIN { printf "| %s | %s | %.3f |\n", n, p, b - a }'
	done
	rm -rf "$work"
}
step thumbnails thumbs

echo "results in $out" >&2
