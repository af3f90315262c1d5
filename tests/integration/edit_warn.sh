#!/bin/bash
# Issue 10: a save that lands with compiler warnings. Through a real mount,
# `sed -i` on model.mdl of the project's sample box.mdl changes the crate's
# diffuse colour and adds a degenerate face (zero area: two corners at one
# position; a repeated vertex index is refused since issue 24). The
# save lands (SOURCE changes, the new colour reads back, the face is dropped:
# still 12 faces), and the model's errors.txt and the daemon's log hold the
# warning in gcc's form `model.mdl:LINE:COL: warning: ...`, the same line
# `legacyfs-convert apply` prints to stderr for the same edit.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
S="$LFS_SOURCE_ROOT/samples/box.mdl"
[ -f "$S" ] || lfs_skip "samples/box.mdl missing"
lfs_workdir edit_warn
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"
cp "$S" "$SRC/box.mdl"
chmod 644 "$SRC/box.mdl"
cp "$SRC/box.mdl" "$WORK/before.mdl"
EDIT='s/^  diffuse 0.8 0.8 0.8$/  diffuse 0.5 0.5 0.5/; s/^  faces 12$/  faces 13\n    0 1 8 1 0 0 1 1/'

lfs_mount "$SRC" "$MNT"
V="$MNT/box.mdl"
grep -q '^  faces 12$' "$V/model.mdl" || lfs_die "box.mdl's model.mdl has no 'faces 12'"
grep -q '^  diffuse 0.8 0.8 0.8$' "$V/model.mdl" || lfs_die "box.mdl's model.mdl has no diffuse 0.8"
timeout 60 sed -i "$EDIT" "$V/model.mdl" && lfs_ok "sed -i save accepted" || lfs_fail "sed -i save refused"
cmp -s "$WORK/before.mdl" "$SRC/box.mdl" && lfs_fail "SOURCE unchanged: the save did not land" ||
	lfs_ok "SOURCE rewritten"
grep -q '^  diffuse 0.5 0.5 0.5$' "$V/model.mdl" && lfs_ok "the new diffuse reads back" ||
	lfs_fail "diffuse 0.5 not in model.mdl after the save"
grep -q '^  faces 12$' "$V/model.mdl" && lfs_ok "the degenerate face was dropped" ||
	lfs_fail "model.mdl does not show 12 faces: $(grep faces "$V/model.mdl")"
ls "$V" | grep -q '\.rejected$' && lfs_fail "a .rejected file exists: $(ls "$V")"
if [ -f "$V/errors.txt" ]; then
	cp "$V/errors.txt" "$WORK/errors.txt"
	grep -Eq '^model\.mdl:[0-9]+:[0-9]+: warning: .*has zero area .*: dropped' "$WORK/errors.txt" &&
		lfs_ok "errors.txt holds the warning" || lfs_fail "errors.txt: $(cat "$WORK/errors.txt")"
	grep -q 'note: saved' "$WORK/errors.txt" && lfs_ok "errors.txt says the save landed" ||
		lfs_fail "errors.txt has no 'saved' note"
else
	lfs_fail "no errors.txt after a save with warnings"
fi
lfs_umount "$MNT"
grep -q 'warning: .*has zero area .*: dropped' "$MNT.log" && lfs_ok "the log holds the warning" ||
	lfs_fail "the warning is not in the daemon's log"

# the same edit through legacyfs-convert apply: same bytes, warning on stderr
"$CONVERT" cat "$WORK/before.mdl" model.mdl | sed "$EDIT" >"$WORK/edited.mdl"
"$CONVERT" apply "$WORK/before.mdl" model.mdl "$WORK/edited.mdl" -o "$WORK/expected.mdl" 2>"$WORK/apply.err" ||
	lfs_fail "legacyfs-convert apply failed: $(cat "$WORK/apply.err")"
cmp -s "$WORK/expected.mdl" "$SRC/box.mdl" && lfs_ok "SOURCE equals legacyfs-convert apply" ||
	lfs_fail "SOURCE differs from legacyfs-convert apply"
w=$(grep 'warning:' "$WORK/errors.txt" 2>/dev/null)
[ -n "$w" ] && [ "$w" = "$(grep 'warning:' "$WORK/apply.err")" ] &&
	lfs_ok "legacyfs-convert apply prints the same warning" ||
	lfs_fail "apply's stderr: $(cat "$WORK/apply.err")"
lfs_finish
