#!/bin/bash
# A failing fsync of the model's folder after the rename (issue 11, item 8):
# the new model file is in place, so the save succeeds (close returns 0,
# SOURCE holds the new bytes) and errors.txt says "saved, but not confirmed
# durable: fsync of the folder failed: <strerror> (errno N)". The failure is
# injected with the test hook LFS_TEST_FAIL_DIRSYNC=<errno> of
# src/fs/replace.c (replace.h), set in the daemon's environment only.
. "$(dirname "$0")/edit_lib.sh"
edit_setup edit_merge_fsync
LFS_TEST_FAIL_DIRSYNC=5 edit_mount

M=$EDIT_NOD
vt="$MNT/$M/model.txt"
cat "$vt" >"$WORK/cur.txt"
edit_py subst "$WORK/cur.txt" '^  resttranslate ' 2 space 0.5 "$WORK/out.txt" >/dev/null
edit_apply "$SRC/$M" model.txt "$WORK/out.txt" "$WORK/ref.bin" || lfs_die "reference refuses the edit"
what="save with a failing folder fsync"
if cp "$WORK/out.txt" "$vt" 2>"$WORK/cp.err"; then
	lfs_ok "$what: close succeeded"
else
	lfs_fail "$what: cp failed: $(cat "$WORK/cp.err")"
fi
cmp -s "$WORK/ref.bin" "$SRC/$M" && lfs_ok "$what: SOURCE holds the new model" ||
	lfs_fail "$what: SOURCE does not hold the saved model"
msg=$(cat "$MNT/$M/$EDIT_MSGFILE" 2>/dev/null)
want='model.txt: warning: saved, but not confirmed durable: fsync of the folder failed: Input/output error (errno 5)'
if grep -qF "$want" <<<"$msg" && ! grep -q 'not saved' <<<"$msg"; then
	lfs_ok "$what: errors.txt: $want"
else
	lfs_fail "$what: errors.txt says: $msg"
fi
edit_check_views "$M" "$what"
lfs_finish
