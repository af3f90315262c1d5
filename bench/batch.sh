#!/usr/bin/env bash
# Batch conversion, whole process against whole process: legacyfs-convert's
# one-process batch against nwnmdlcomp's one-process batch decompile of the
# same NWN binaries (issue 12, docs/performance.md "Batch conversion").
#
#   bench/batch.sh [RUNS]        (default 7 runs; the median is reported)
#
# Inputs: the 216 binaries of $LFS_CORPUS/nwn/binary.txt (default
# ../shared/corpus relative to the source root), copied flat into a temp
# folder (their file names are unique; nwnmdlcomp writes IN.mdl.ascii beside
# each input). nwnmdlcomp is built from ../shared/tools into the temp folder
# (build-nwnmdlcomp.sh; needs gcc-multilib g++-multilib); without it only
# our side is timed. legacyfs-convert: $LFS_CONVERT or build/src/ (else
# build-*/src/). Each run times, in this order, with the page cache warm
# (J = the online CPUs, legacyfs-convert's default -j):
#   peer     nwnmdlcomp -d -i INC *.mdl          (216 files -> 216 .ascii)
#   cat      legacyfs-convert cat -j 1 / -j J *.mdl >FILE  (each model.mdl text)
#   extract  legacyfs-convert extract -j 1 / -j J --thumb-size 0 -d OUT *.mdl
#            (every view)
#   extract+thumb  -j J with thumbnail.png (the mount's default)
# Wall and CPU (user + system) seconds of each whole process, from bash's
# `time`; the load average before and after is printed (the machine may be
# shared: compare the commands of one run, not runs of different moments).
# Each extract writes a fresh folder (deleting ~10,000 files and creating
# them again at once measured the disk's journal, up to 20 s); `sync`
# before each timed extract. Everything is removed at the end.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-7}
corpus=${LFS_CORPUS:-$root/../shared/corpus}
tools=$root/../shared/tools
conv=${LFS_CONVERT:-}
if [ -z "$conv" ]; then
	for c in "$root"/build/src/legacyfs-convert "$root"/build-*/src/legacyfs-convert; do
		[ -x "$c" ] && conv=$c && break
	done
fi
[ -x "$conv" ] || { echo "no legacyfs-convert built (set LFS_CONVERT)" >&2; exit 77; }
list=$corpus/nwn/binary.txt
[ -f "$list" ] || { echo "no corpus ($list)" >&2; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in" "$tmp/inc" "$tmp/nwndir"
while read -r rel; do cp "$corpus/nwn/$rel" "$tmp/in/"; done <"$list"
n=$(ls "$tmp/in" | wc -l)
[ "$n" = "$(wc -l <"$list")" ] || { echo "file names in $list are not unique" >&2; exit 1; }

peer=""
if [ -f "$tools/build-nwnmdlcomp.sh" ] && sh "$tools/build-nwnmdlcomp.sh" "$tmp/nwnmdlcomp" >"$tmp/build.log" 2>&1; then
	peer=$tmp/nwnmdlcomp
else
	echo "nwnmdlcomp not built (no ../shared/tools or no gcc-multilib): our side only" >&2
fi

# "WALL CPU" seconds of "$@" (CPU = user + system of the process and its
# threads; run in $tmp/in, stdout to $tmp/stdout)
t() {
	local TIMEFORMAT='%R %U %S' out
	out=$( { time (cd "$tmp/in" && "$@" >"$tmp/stdout" 2>"$tmp/stderr"); } 2>&1 ) ||
		{ echo "failed: $*" >&2; cat "$tmp/stderr" >&2; exit 1; }
	echo "$out" | awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }'
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

cd "$tmp/in"
files=(*.mdl)
jobs=$(nproc)
keys=(peer cat1 catj extract1 extractj extract_thumb)
for k in "${keys[@]}"; do : >"$tmp/$k"; done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
	if [ -n "$peer" ]; then
		rm -f ./*.ascii
		NWNDIR=$tmp/nwndir t setarch "$(uname -m)" -R "$peer" -d -i "$tmp/inc" "${files[@]}" >>"$tmp/peer"
		[ "$(ls ./*.ascii | wc -l)" = "$n" ] || { echo "nwnmdlcomp wrote $(ls ./*.ascii | wc -l) of $n files" >&2; exit 1; }
		rm -f ./*.ascii
	fi
	t "$conv" cat -q -j 1 "${files[@]}" >>"$tmp/cat1"
	t "$conv" cat -q -j "$jobs" "${files[@]}" >>"$tmp/catj"
	sync
	t "$conv" extract -q -j 1 --thumb-size 0 -d "$tmp/out$i.a" "${files[@]}" >>"$tmp/extract1"
	sync
	t "$conv" extract -q -j "$jobs" --thumb-size 0 -d "$tmp/out$i.c" "${files[@]}" >>"$tmp/extractj"
	sync
	t "$conv" extract -q -j "$jobs" -d "$tmp/out$i.b" "${files[@]}" >>"$tmp/extract_thumb"
	sync
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
nfiles=$(find "$tmp/out1.a" -type f | wc -l)

echo "$n NWN binaries, $runs runs each, medians of wall and CPU seconds (whole process); extract writes $nfiles files:"
p=""
pc=""
if [ -n "$peer" ]; then
	p=$(cut -d' ' -f1 "$tmp/peer" | median)
	pc=$(cut -d' ' -f2 "$tmp/peer" | median)
	printf '  %-50s wall %s s  CPU %s s\n' "nwnmdlcomp -d (batch decompile)" "$p" "$pc"
fi
for k in "${keys[@]:1}"; do
	m=$(cut -d' ' -f1 "$tmp/$k" | median)
	c=$(cut -d' ' -f2 "$tmp/$k" | median)
	case $k in
	cat1) what="legacyfs-convert cat -j 1 (model.mdl of each)" ;;
	catj) what="legacyfs-convert cat -j $jobs" ;;
	extract1) what="legacyfs-convert extract -j 1 -d, no thumbnail" ;;
	extractj) what="legacyfs-convert extract -j $jobs -d, no thumbnail" ;;
	extract_thumb) what="legacyfs-convert extract -j $jobs -d, with thumbnail" ;;
	esac
	if [ -n "$p" ]; then
		printf '  %-50s wall %s s  CPU %s s   peer / ours = %s x wall, %s x CPU\n' "$what" "$m" "$c" \
			"$(echo "scale=2; $p / $m" | bc)" "$(echo "scale=2; $pc / $c" | bc)"
	else
		printf '  %-50s wall %s s  CPU %s s\n' "$what" "$m" "$c"
	fi
done
