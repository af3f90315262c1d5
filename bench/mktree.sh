#!/usr/bin/env bash
# Build a benchmark asset tree of N binary models from the corpus.
#
#   bench/mktree.sh DEST N [flat|tree]
#
# DEST  folder to fill (made; must be empty or absent)
# N     number of models (for example 100, 1000, 5000, 10000)
# flat  (default) every model directly in DEST: an extracted hak or override folder
# tree  100 models per subfolder (DEST/d000/, DEST/d001/, ...): a game-sized model set
#
# The models are the corpus's binary models (the 216 NWN binaries of
# nwn/binary.txt and every .nod, .nad and .sod), cycled in a fixed order and
# copied (cp --reflink=auto) under unique names `NNNNN_<original name>`, so
# every file has its own inode and its own page-cache pages, as in a real
# folder. Reads ../shared/corpus (or $LFS_CORPUS); exits 77 when it is absent.
# Used by bench/scale.sh and the other scale benchmarks (docs/performance.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus=${LFS_CORPUS:-$root/../shared/corpus}
[ $# -ge 2 ] || { echo "usage: $0 DEST N [flat|tree]" >&2; exit 2; }
dest=$1 n=$2 shape=${3:-flat}
case "$shape" in flat|tree) ;; *) echo "$0: shape must be flat or tree" >&2; exit 2;; esac
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ] || { echo "$0: N must be a positive number" >&2; exit 2; }
if [ ! -f "$corpus/nwn/binary.txt" ]; then
	echo "$0: no corpus at $corpus" >&2
	exit 77
fi
mkdir -p "$dest"
if [ -n "$(ls -A "$dest")" ]; then
	echo "$0: $dest is not empty" >&2
	exit 2
fi

mapfile -t models < <(
	sed "s|^|$corpus/nwn/|" "$corpus/nwn/binary.txt"
	find "$corpus/nod" "$corpus/nad" "$corpus/sod" -type f \
		\( -iname '*.nod' -o -iname '*.nad' -o -iname '*.sod' \) 2>/dev/null | LC_ALL=C sort
)
[ "${#models[@]}" -gt 0 ] || { echo "$0: no models found in $corpus" >&2; exit 77; }

for ((i = 0; i < n; i++)); do
	src=${models[i % ${#models[@]}]}
	name=$(printf '%05d_%s' "$i" "$(basename "$src")")
	if [ "$shape" = tree ]; then
		sub=$(printf '%s/d%03d' "$dest" $((i / 100)))
		[ -d "$sub" ] || mkdir "$sub"
		cp --reflink=auto "$src" "$sub/$name"
	else
		cp --reflink=auto "$src" "$dest/$name"
	fi
done
echo "$0: $n models ($shape) in $dest from ${#models[@]} distinct corpus models"
