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
# build-*/src/). Each run times, in this order, with the page cache warm:
#   peer     nwnmdlcomp -d -i INC *.mdl          (216 files -> 216 .ascii)
#   cat      legacyfs-convert cat *.mdl >FILE     (each model.mdl text)
#   extract  legacyfs-convert extract --thumb-size 0 -d OUT *.mdl  (every view)
#   extract+thumb  the same with thumbnail.png (the mount's default)
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

# wall seconds of "$@" (run in $tmp/in, stdout to $tmp/stdout)
t() {
	local a b
	a=$(date +%s%N)
	(cd "$tmp/in" && "$@" >"$tmp/stdout" 2>"$tmp/stderr") || { echo "failed: $*" >&2; cat "$tmp/stderr" >&2; exit 1; }
	b=$(date +%s%N)
	echo "scale=4; ($b - $a) / 1000000000" | bc
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

cd "$tmp/in"
files=(*.mdl)
: >"$tmp/peer" >"$tmp/cat" >"$tmp/extract" >"$tmp/extract_thumb"
for i in $(seq "$runs"); do
	if [ -n "$peer" ]; then
		rm -f ./*.ascii
		NWNDIR=$tmp/nwndir t setarch "$(uname -m)" -R "$peer" -d -i "$tmp/inc" "${files[@]}" >>"$tmp/peer"
		[ "$(ls ./*.ascii | wc -l)" = "$n" ] || { echo "nwnmdlcomp wrote $(ls ./*.ascii | wc -l) of $n files" >&2; exit 1; }
		rm -f ./*.ascii
	fi
	t "$conv" cat -q "${files[@]}" >>"$tmp/cat"
	sync
	t "$conv" extract -q --thumb-size 0 -d "$tmp/out$i.a" "${files[@]}" >>"$tmp/extract"
	sync
	t "$conv" extract -q -d "$tmp/out$i.b" "${files[@]}" >>"$tmp/extract_thumb"
	sync
done
nfiles=$(find "$tmp/out1.a" -type f | wc -l)

echo "$n NWN binaries, $runs runs each, median wall seconds (whole process); extract writes $nfiles files:"
p=""
[ -n "$peer" ] && p=$(median <"$tmp/peer") && printf '  %-44s %s s\n' "nwnmdlcomp -d (batch decompile)" "$p"
for k in cat extract extract_thumb; do
	m=$(median <"$tmp/$k")
	case $k in
	cat) what="legacyfs-convert cat (model.mdl of each)" ;;
	extract) what="legacyfs-convert extract -d, no thumbnail" ;;
	extract_thumb) what="legacyfs-convert extract -d, with thumbnail" ;;
	esac
	if [ -n "$p" ]; then
		printf '  %-44s %s s   peer / ours = %s x\n' "$what" "$m" "$(echo "scale=2; $p / $m" | bc)"
	else
		printf '  %-44s %s s\n' "$what" "$m"
	fi
done
