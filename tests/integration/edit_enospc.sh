#!/bin/bash
# A full filesystem (issue 4, item 4 and 9): SOURCE is a small tmpfs that a
# filler file leaves with less free space than one model file, so writing
# the re-encoded model (a temporary file next to it, then rename) cannot
# succeed. Saves that grow the model (a key appended to a NAD track CSV) and
# that change a value (NOD model.txt) must fail with ENOSPC — from close()
# for an in-place write, from cp — and leave SOURCE intact (bytes, mtime, no
# temporary file left), with the reason in the model's errors.txt. After the
# filler is removed the same saves work.
# Needs root (mount -t tmpfs); skips otherwise.
. "$(dirname "$0")/edit_lib.sh"
[ "$(id -u)" = 0 ] || lfs_skip "needs root to mount a size-limited tmpfs"
edit_setup edit_enospc
SMALL="$WORK/small"
mkdir -p "$SMALL"
mount -t tmpfs -o size=512k,mode=0755 lfs-edit-enospc "$SMALL" 2>"$WORK/mount.err" ||
	lfs_skip "cannot mount a tmpfs here: $(cat "$WORK/mount.err")"
# shellcheck disable=SC2154  # st is set inside the trap
trap 'st=$?; lfs_cleanup_tmpfs; (exit $st); lfs_cleanup' EXIT
lfs_cleanup_tmpfs() {
	for m in $LFS_MOUNTS; do
		mountpoint -q "$m" && { timeout 10 fusermount3 -u "$m" 2>/dev/null || timeout 10 fusermount3 -uz "$m"; }
	done
	LFS_MOUNTS=""
	for p in $LFS_PIDS; do timeout 10 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done"; done
	mountpoint -q "$SMALL" && umount "$SMALL"
}

cp -p "$SRC"/* "$SMALL/"
SRC="$SMALL"
edit_src_listing >"$WORK/src.list"
# fill: leave less free space than the smallest model
dd if=/dev/zero of="$SMALL/filler" bs=4k 2>/dev/null || true
avail=$(df -B1 --output=avail "$SMALL" | tail -n1 | tr -d ' ')
lfs_log "tmpfs free after the filler: $avail bytes"
edit_src_listing >"$WORK/src.list"

mapfile -t targets < <(edit_targets)
edit_mount

nodt=$(printf '%s\n' "${targets[@]}" | grep -m1 "^$EDIT_NOD|model.txt|")
nadt=$(printf '%s\n' "${targets[@]}" | grep -m1 "^$EDIT_NAD|tracks/")

# enospc_case HOW TARGET KIND(subst|append)
enospc_case() {
	local how=$1 tg=$2 kind=$3 model view regex field sep rc=0
	IFS='|' read -r model view regex field sep <<<"$tg"
	local mf="$SRC/$model" vf="$MNT/$model/$view" what="ENOSPC: $how $kind $model/$view"
	"$CONVERT" cat --root "$SRC" "$mf" "$view" >"$WORK/cur.txt"
	if [ "$kind" = append ]; then
		edit_py append "$WORK/cur.txt" "$WORK/edited.txt" >/dev/null
	else
		edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" 7.25 "$WORK/edited.txt" >/dev/null
	fi
	edit_apply "$mf" "$view" "$WORK/edited.txt" "$WORK/expect.bin" || lfs_die "reference refuses $model/$view"
	cmp -s "$WORK/expect.bin" "$mf" && lfs_die "precondition: $what is a no-op"
	[ "$avail" -lt "$(stat -c %s "$WORK/expect.bin")" ] || lfs_die "precondition: $avail bytes free is enough for the new $model"
	cp "$mf" "$WORK/before.bin"
	local st0
	st0=$(stat -c '%y %i %s' "$mf")
	if [ "$how" = close ]; then
		edit_py writeclose "$vf" "$WORK/edited.txt" 2>"$WORK/run.err" || rc=$?
		if [ "$rc" = 0 ]; then
			lfs_fail "$what: the save succeeded on a full filesystem"
		elif grep -q '(ENOSPC)' "$WORK/run.err"; then
			lfs_ok "$what: $(cat "$WORK/run.err")"
		else
			lfs_fail "$what: expected ENOSPC, got: $(cat "$WORK/run.err")"
		fi
	else
		cp "$WORK/edited.txt" "$vf" 2>"$WORK/run.err" || rc=$?
		if [ "$rc" = 0 ]; then
			lfs_fail "$what: cp succeeded on a full filesystem"
		elif grep -q 'No space left on device' "$WORK/run.err"; then
			lfs_ok "$what: $(cat "$WORK/run.err")"
		else
			lfs_fail "$what: expected 'No space left on device', got: $(cat "$WORK/run.err")"
		fi
	fi
	if grep -q -i "^$view: .*no space left" "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null; then
		lfs_ok "$what: $EDIT_MSGFILE says: $(grep -m1 -i "^$view: .*no space left" "$MNT/$model/$EDIT_MSGFILE")"
	else
		lfs_fail "$what: $model/$EDIT_MSGFILE has no 'No space left' message for $view"
	fi
	cmp -s "$mf" "$WORK/before.bin" && [ "$(stat -c '%y %i %s' "$mf")" = "$st0" ] &&
		lfs_ok "$what: SOURCE intact" || lfs_fail "$what: SOURCE changed"
	if edit_src_listing | cmp -s - "$WORK/src.list"; then
		lfs_ok "$what: no temporary file left in SOURCE"
	else
		lfs_fail "$what: SOURCE listing changed: $(edit_src_listing | diff "$WORK/src.list" - | grep '^[<>]' | tr '\n' ' ')"
	fi
}

enospc_case close "$nodt" subst
enospc_case cp "$nodt" subst
enospc_case close "$nadt" append
enospc_case cp "$nadt" append

# space again: the same kinds of save work (views reverted first: write the
# generated text back, a no-op)
rm -f "$SMALL/filler"
edit_src_listing >"$WORK/src.list"
for tg in "$nodt" "$nadt"; do
	IFS='|' read -r model view _ <<<"$tg"
	"$CONVERT" cat --root "$SRC" "$SRC/$model" "$view" | cmp -s - "$MNT/$model/$view" ||
		"$CONVERT" cat --root "$SRC" "$SRC/$model" "$view" >"$MNT/$model/$view" ||
		lfs_fail "reverting $model/$view after ENOSPC failed"
done
edit_save cp "$nodt"
edit_save append "$nadt"

lfs_umount "$MNT"
edit_check_after_umount
lfs_finish
