#!/bin/bash
# Mount the project's samples/ (tiny project-made NWN binaries, among them
# names that need escaping) and compare with a native copy made by
# legacyfs-convert: diff -r, ls -R, find, st_size == bytes read, every view
# path legacyfs-convert lists exists, and every line of /.legacyfs/errors is a
# file legacyfs-convert also refuses. Skips when samples/ has no files yet.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
SRC="$LFS_SOURCE_ROOT/samples"
[ -d "$SRC" ] && [ -n "$(find "$SRC" -type f -print -quit)" ] || lfs_skip "no samples in $SRC"
lfs_workdir mount_samples
MNT="$WORK/mnt"
NATIVE="$WORK/native"
lfs_native_copy "$SRC" "$NATIVE"
# -o ro: SOURCE is the repository's samples/; this test only reads.
lfs_mount "$SRC" "$MNT" -o ro

if diff -r -x .legacyfs "$NATIVE" "$MNT" >"$WORK/diff.out" 2>&1; then lfs_ok "diff -r"; else
	head -20 "$WORK/diff.out" >&2
	lfs_fail "diff -r mount vs native copy"
fi
(cd "$MNT" && ls -R .) >"$WORK/ls.mnt" || lfs_fail "ls -R"
(cd "$NATIVE" && ls -R .) >"$WORK/ls.native"
cmp -s "$WORK/ls.mnt" "$WORK/ls.native" && lfs_ok "ls -R" || lfs_fail "ls -R differs"
(cd "$MNT" && find . -path ./.legacyfs -prune -o -print | sort) >"$WORK/find.mnt"
(cd "$NATIVE" && find . | sort) >"$WORK/find.native"
cmp -s "$WORK/find.mnt" "$WORK/find.native" && lfs_ok "find" || lfs_fail "find differs"

(cd "$MNT" && find . -type f -exec stat -c '%s %n' {} + | sort -k2) >"$WORK/size.stat"
(cd "$MNT" && find . -type f -exec cksum {} + | awk '{ s=$2; $1=""; $2=""; sub(/^  /, ""); print s, $0 }' | sort -k2) >"$WORK/size.read"
cmp -s "$WORK/size.stat" "$WORK/size.read" && lfs_ok "st_size equals bytes read" || lfs_fail "st_size differs from bytes read"

models=0
escaped=0
while IFS= read -r -d '' f; do
	set +e
	"$CONVERT" list --root "$SRC" "$SRC/$f" >"$WORK/views" 2>/dev/null
	rc=$?
	set -e
	case $rc in
	0)
		models=$((models + 1))
		[ -d "$MNT/$f" ] || lfs_fail "$f: model is not a folder"
		while IFS=$'\t' read -r vsize vpath; do
			case $vpath in *%*) escaped=$((escaped + 1)) ;; esac
			[ "$(stat -c %s "$MNT/$f/$vpath" 2>/dev/null)" = "$vsize" ] || lfs_fail "$f: view $vpath missing or wrong size"
		done <"$WORK/views"
		;;
	1)
		[ -f "$MNT/$f" ] && cmp -s "$MNT/$f" "$SRC/$f" || lfs_fail "$f: undecodable file does not pass through"
		grep -q -F "${f#./}: " "$MNT/.legacyfs/errors" || lfs_fail "$f: not in the errors file"
		;;
	3) cmp -s "$MNT/$f" "$SRC/$f" || lfs_fail "$f: plain file differs" ;;
	esac
done < <(cd "$SRC" && find . -type f -print0)
lfs_ok "$models models checked view by view ($escaped view paths with % escapes)"
while IFS= read -r line; do
	p=${line%%: *}
	set +e
	"$CONVERT" list --root "$SRC" "$SRC/$p" >/dev/null 2>&1
	rc=$?
	set -e
	[ "$rc" = 1 ] || lfs_fail "errors file lists $p but legacyfs-convert exits $rc"
done <"$MNT/.legacyfs/errors"

lfs_umount "$MNT"
lfs_finish
