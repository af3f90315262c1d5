#!/usr/bin/env bash
# SOURCE on a network file system (issue 25): the same work on
#   local   legacyfs on a local SOURCE folder
#   sshfs   legacyfs on the same folder through sshfs (over loopback)
#   native  the generated text tree (a copy of what the mount shows) through
#           sshfs, without legacyfs in between
# whole process against whole process (each command timed from fork to exit).
#
#   bench/netsource.sh [N]     (N models, default 1000, bench/mktree.sh tree)
#
# sshfs runs with its default options (a 20 s cache), to a throwaway sshd on
# 127.0.0.1 (tests/integration/sshfs_lib.sh: own host and user keys in the
# work folder). Steps per row, on fresh mounts (and dropped page caches when
# root): cold `ls -l` of a model folder's parent, `find -type f | wc -l`,
# `grep -r -c orientation` twice (first, warm), and a save (`cp` of an
# edited model.mdl of one NWN model over the view; native: over the text file).
# Rows: $LFS_BENCH_ROWS (default "local sshfs native").
# Work folder: $LFS_BENCH_WORK (default build/bench-netsource); legacyfs:
# $LEGACYFS (default build/src/legacyfs). Numbers: docs/performance.md
# "Network SOURCE".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${1:-1000}
W=${LFS_BENCH_WORK:-$root/build/bench-netsource}
LFS=${LEGACYFS:-$root/build/src/legacyfs}
ROWS=" ${LFS_BENCH_ROWS:-local sshfs native} "
EDIT_TOOL=$root/tests/integration/edit_tool.py
[ -x "$LFS" ] || { echo "$0: no legacyfs at $LFS (set LEGACYFS)" >&2; exit 2; }
. "$root/tests/integration/sshfs_lib.sh"

LPIDS=""
cleanup() {
	for m in "$W/mnt" "$W/nat"; do
		mountpoint -q "$m" 2>/dev/null && { fusermount3 -u "$m" || fusermount3 -uz "$m"; }
	done
	lfs_sshfs_stop
	for p in $LPIDS; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

for m in "$W/mnt" "$W/net" "$W/nat"; do
	mountpoint -q "$m" 2>/dev/null && fusermount3 -uz "$m"
done
rm -rf "$W"
mkdir -p "$W/mnt" "$W/net" "$W/nat"
"$root/bench/mktree.sh" "$W/far" "$N" tree >&2
lfs_sshfs_start "$W/ssh"

lmount() { # SRC: legacyfs at $W/mnt, defaults
	"$LFS" -f "$1" "$W/mnt" 2>>"$W/lfs.log" &
	LPIDS="$LPIDS $!"
	for _ in $(seq 1 300); do mountpoint -q "$W/mnt" && return 0; sleep 0.05; done
	echo "$0: legacyfs did not mount" >&2
	exit 1
}
lumount() { fusermount3 -u "$W/mnt"; for p in $LPIDS; do wait "$p" 2>/dev/null || true; done; LPIDS=""; }
drop() { sync; [ "$(id -u)" != 0 ] || echo 3 >/proc/sys/vm/drop_caches; }
ms() { # COMMAND...: wall time of the whole process, ms
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# The text tree the mount shows, copied once (the native row's far folder).
lmount "$W/far"
cp -r "$W/mnt/." "$W/text"
lumount
# the model saved: the first NWN binary; a node's position moved (model.mdl)
NOD=$(cd "$W/far" && find . -name '*.mdl' | LC_ALL=C sort | awk 'NR == 1')
NOD=${NOD#./}
python3 "$EDIT_TOOL" subst "$W/text/$NOD/model.mdl" '^  position ' 2 space 0.25 "$W/edited.txt" >/dev/null
DIR=$(dirname "$NOD")

row() { # NAME ROOT (the tree as the user sees it)
	local r=$1
	local ls find g1 g2 save
	ls=$(ms ls -l "$r/$DIR")
	find=$(ms sh -c "find '$r' -type f | wc -l")
	g1=$(ms grep -r -c orientation "$r")
	g2=$(ms grep -r -c orientation "$r")
	save=$(ms cp "$W/edited.txt" "$r/$NOD/model.mdl")
	printf '| %s | %s | %s | %s / %s | %s |\n' "$2" "$ls" "$find" "$g1" "$g2" "$save"
}

echo "| $N models | cold ls -l (ms) | find (ms) | grep -r first / warm (ms) | save (ms) |"
echo "|---|---|---|---|---|"
cp "$W/far/$NOD" "$W/orig.bin"
if [[ $ROWS == *" local "* ]]; then
	drop
	lmount "$W/far"
	row "$W/mnt" "legacyfs, local SOURCE"
	lumount
	cmp -s "$W/far/$NOD" "$W/orig.bin" && echo "$0: the local save did not land" >&2
	cp "$W/orig.bin" "$W/far/$NOD" # the next row saves the same change again
fi

if [[ $ROWS == *" sshfs "* ]]; then
	drop
	lfs_sshfs_mount "$W/far" "$W/net"
	lmount "$W/net"
	row "$W/mnt" "legacyfs, SOURCE on sshfs"
	lumount
	cmp -s "$W/far/$NOD" "$W/orig.bin" && echo "$0: the save over sshfs did not land" >&2
	fusermount3 -u "$W/net"
	LFS_SSHFS_MNTS=""
fi

# native: the text tree over sshfs (the model folders are real folders there)
if [[ $ROWS == *" native "* ]]; then
	mv "$W/text" "$W/textfar"
	drop
	lfs_sshfs_mount "$W/textfar" "$W/nat"
	row "$W/nat" "native sshfs (text tree, no legacyfs)"
fi
