#!/bin/bash
# Core paths of the writable mount (docs/editing.md), fast, on a NOD and a
# NAD copied from the corpus into a SOURCE folder below the build root. The
# expected SOURCE bytes always come from `legacyfs-convert apply` (the same
# lfs_views_apply() path) on the bytes before the save:
#  - in-place write + close commits; the view then shows the new text;
#  - rename over a view from a scratch file (sed -i) commits; the scratch
#    file never appears in SOURCE;
#  - a bad edit: close() and fsync() fail with EINVAL, SOURCE untouched
#    (bytes, mtime, inode), the gcc-style message in <model>/errors.txt and
#    in the log, the text in <view>.rejected, the view back to generated;
#  - a no-op save leaves bytes and mtime alone;
#  - a change made to SOURCE by another program regenerates the views;
#  - a save based on a text the source no longer generates is refused;
#  - pass-through create/write/rename/unlink/mkdir/rmdir/symlink/chmod;
#  - model folders cannot be removed; NOD model folders cannot be renamed (EPERM; NWN: mount_newmodel.sh).
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
[ -n "${LFS_CORPUS:-}" ] && [ -f "$LFS_CORPUS/nod/PLC_Cndl02.nod" ] && [ -f "$LFS_CORPUS/nad/PLC_Cndl02__on.nad" ] ||
	lfs_skip "corpus not found (LFS_CORPUS=${LFS_CORPUS:-})"
command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
lfs_workdir write_core
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"
cp "$LFS_CORPUS/nod/PLC_Cndl02.nod" "$LFS_CORPUS/nad/PLC_Cndl02__on.nad" "$SRC/"
chmod 644 "$SRC"/*
NOD=PLC_Cndl02.nod
NAD=PLC_Cndl02__on.nad
lfs_mount "$SRC" "$MNT"

# py_write FILE TEXTFILE [fsync]: open O_WRONLY|O_TRUNC, write, (fsync), close.
# Prints "<step>: <errno name>" and exits 1 on the first failure.
py_write() {
	python3 - "$@" <<'PY'
import errno, os, sys
path, src = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
step = 'open'
try:
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    step = 'write'
    os.write(fd, data)
    if len(sys.argv) > 3:
        step = 'fsync'
        os.fsync(fd)
    step = 'close'
    os.close(fd)
except OSError as e:
    print('%s: %s' % (step, errno.errorcode.get(e.errno, e.errno)), file=sys.stderr)
    sys.exit(1)
PY
}

# expect MODEL VIEW EDITED: the bytes a save of EDITED must produce -> $WORK/expect.bin
expect() {
	"$CONVERT" apply "$SRC/$1" "$2" "$3" -o "$WORK/expect.bin"
}

stamp() { stat -c '%i %s %Y.%y' "$SRC/$1"; }

# 1. in-place write + close
"$CONVERT" cat "$SRC/$NOD" model.txt >"$WORK/v0.txt"
cmp -s "$WORK/v0.txt" "$MNT/$NOD/model.txt" || lfs_fail "model.txt differs from legacyfs-convert cat"
awk 'BEGIN{n=0} /^  resttranslate /{n++; if (n==2) {$2="0.5"; print "  " $0; next}} {print}' "$WORK/v0.txt" >"$WORK/v1.txt"
cmp -s "$WORK/v0.txt" "$WORK/v1.txt" && lfs_die "test edit changed nothing"
expect "$NOD" model.txt "$WORK/v1.txt"
cmp -s "$WORK/expect.bin" "$SRC/$NOD" && lfs_die "test edit does not change the model"
if cat "$WORK/v1.txt" >"$MNT/$NOD/model.txt" && cmp -s "$WORK/expect.bin" "$SRC/$NOD"; then
	lfs_ok "in-place write + close: SOURCE == legacyfs-convert apply"
else
	lfs_fail "in-place write + close did not commit the expected bytes"
fi
"$CONVERT" cat "$SRC/$NOD" model.txt >"$WORK/gen1.txt"
lfs_wait_for "the view shows the text generated from the new bytes" cmp -s "$WORK/gen1.txt" "$MNT/$NOD/model.txt"

# 2. sed -i on a CSV of the NAD (scratch file renamed over the view)
csv=$(cd "$MNT/$NAD" && ls tracks/*.csv | head -1)
cp "$MNT/$NAD/$csv" "$WORK/c0.csv"
awk -F, 'NR==2{OFS=","; $2="0.25"} {print}' "$WORK/c0.csv" >"$WORK/c1.csv"
expect "$NAD" "$csv" "$WORK/c1.csv"
line2=$(sed -n 2p "$WORK/c1.csv")
if sed -i "2s/.*/$line2/" "$MNT/$NAD/$csv" && cmp -s "$WORK/expect.bin" "$SRC/$NAD"; then
	lfs_ok "sed -i ($csv): SOURCE == legacyfs-convert apply"
else
	lfs_fail "sed -i did not commit the expected bytes"
fi
[ "$(ls -A "$SRC")" = "$(printf '%s\n%s' "$NOD" "$NAD")" ] || lfs_fail "scratch files reached SOURCE: $(ls -A "$SRC" | tr '\n' ' ')"

# 3. bad edit: close and fsync fail with EINVAL, nothing lost
"$CONVERT" cat "$SRC/$NOD" model.txt >"$WORK/cur.txt"
awk 'BEGIN{n=0} /^  resttranslate /{n++; if (n==3) {$3="bogus"; print "  " $0; next}} {print}' "$WORK/cur.txt" >"$WORK/bad.txt"
if "$CONVERT" apply "$SRC/$NOD" model.txt "$WORK/bad.txt" -o "$WORK/x.bin" 2>"$WORK/apply.err"; then
	lfs_die "legacyfs-convert apply accepts the bad text"
fi
msg=$(head -1 "$WORK/apply.err")
case $msg in model.txt:*:*:\ *) ;; *) lfs_fail "unexpected message form: $msg" ;; esac
st0=$(stamp "$NOD")
cp "$SRC/$NOD" "$WORK/before.bin"
for how in close fsync; do
	rc=0
	if [ $how = fsync ]; then py_write "$MNT/$NOD/model.txt" "$WORK/bad.txt" fsync 2>"$WORK/py.err" || rc=$?
	else py_write "$MNT/$NOD/model.txt" "$WORK/bad.txt" 2>"$WORK/py.err" || rc=$?; fi
	if [ $rc = 0 ] || ! grep -q "^$how: EINVAL" "$WORK/py.err"; then
		lfs_fail "bad edit: $how did not fail with EINVAL ($(cat "$WORK/py.err"))"
	else
		lfs_ok "bad edit: $how fails with EINVAL"
	fi
	cmp -s "$WORK/before.bin" "$SRC/$NOD" && [ "$(stamp "$NOD")" = "$st0" ] || lfs_fail "bad edit ($how) touched SOURCE"
	grep -q -F -x -e "$msg" "$MNT/$NOD/errors.txt" || lfs_fail "errors.txt lacks '$msg'"
	cmp -s "$WORK/bad.txt" "$MNT/$NOD/model.txt.rejected" || lfs_fail "model.txt.rejected is not the refused text"
	lfs_wait_for "after the refusal ($how) the view is the generated text" cmp -s "$WORK/cur.txt" "$MNT/$NOD/model.txt"
done
rm "$MNT/$NOD/model.txt.rejected" "$MNT/$NOD/errors.txt" || lfs_fail "cannot remove the .rejected/errors.txt files"
[ ! -e "$MNT/$NOD/errors.txt" ] || lfs_fail "errors.txt still there after rm"

# 4. no-op save: the generated text written back
st0=$(stamp "$NOD")
sleep 0.05 # deliberate: let the clock move, so a rewrite would show in the mtime
if cp "$WORK/cur.txt" "$MNT/$NOD/model.txt" && cmp -s "$WORK/before.bin" "$SRC/$NOD" && [ "$(stamp "$NOD")" = "$st0" ]; then
	lfs_ok "no-op save: SOURCE bytes, inode and mtime unchanged"
else
	lfs_fail "no-op save touched SOURCE"
fi

# 5./6. outside change + stale save. The "editor" reads the view; another
# program rewrites the model; the editor saves a text based on what it read,
# changing the same line: refused (a conflict; a change of another line
# would be merged: docs/editing.md "Concurrent saves", edit_merge.sh).
cat "$MNT/$NOD/model.txt" >"$WORK/read.txt"
awk 'BEGIN{n=0} /^  resttranslate /{n++; if (n==4) {$2="0.125"; print "  " $0; next}} {print}' "$WORK/cur.txt" >"$WORK/out.txt"
"$CONVERT" apply "$SRC/$NOD" model.txt "$WORK/out.txt" -o "$SRC/$NOD"
"$CONVERT" cat "$SRC/$NOD" model.txt >"$WORK/gen2.txt"
# the mount has seen the outside change before the stale save comes: the
# view's mtime follows the model file's. Only stat: a read of the view would
# serve the new text and make it the base of the stale save.
view_follows() { [ "$(stat -c %y "$MNT/$NOD/model.txt")" = "$(stat -c %y "$SRC/$NOD")" ]; }
lfs_wait_until 10 view_follows ||
	lfs_fail "outside change: model.txt's mtime $(stat -c %y "$MNT/$NOD/model.txt"), the model's $(stat -c %y "$SRC/$NOD") after 10 s"
awk 'BEGIN{n=0} /^  resttranslate /{n++; if (n==4) {$2="0.375"; print "  " $0; next}} {print}' "$WORK/read.txt" >"$WORK/stale.txt"
cp "$SRC/$NOD" "$WORK/before.bin"
if py_write "$MNT/$NOD/model.txt" "$WORK/stale.txt" 2>"$WORK/py.err"; then
	lfs_fail "stale save accepted"
elif cmp -s "$WORK/before.bin" "$SRC/$NOD" && grep -q "changed in SOURCE" "$MNT/$NOD/errors.txt"; then
	lfs_ok "stale save refused ($(cat "$WORK/py.err")), the newer file kept"
else
	lfs_fail "stale save: SOURCE changed or no message"
fi
lfs_wait_for "outside change: model.txt regenerated" cmp -s "$WORK/gen2.txt" "$MNT/$NOD/model.txt"

# 7. pass-through
(
	set -e
	cd "$MNT"
	mkdir d
	echo one >d/f
	mv d/f d/g
	ln -s g d/l
	chmod 600 d/g
	echo two >>d/g
	[ "$(cat d/l)" = "$(printf 'one\ntwo')" ]
	[ "$(stat -c %a "$SRC/d/g")" = 600 ]
	[ "$(readlink "$SRC/d/l")" = g ]
	rm d/l d/g
	rmdir d
) && [ ! -e "$SRC/d" ] && lfs_ok "pass-through create/write/rename/symlink/chmod/unlink/mkdir/rmdir" ||
	lfs_fail "pass-through operations"

# 8. model folders stay
rmdir "$MNT/$NOD" 2>"$WORK/e1" && lfs_fail "rmdir of a model folder succeeded"
mv "$MNT/$NOD" "$MNT/x.nod" 2>"$WORK/e2" && lfs_fail "rename of a model folder succeeded"
if grep -q "Operation not permitted" "$WORK/e1" && grep -q "Operation not permitted" "$WORK/e2" && [ -f "$SRC/$NOD" ]; then
	lfs_ok "model folders: rmdir and rename refused with EPERM"
else
	lfs_fail "model folder rmdir/rename: $(cat "$WORK/e1" "$WORK/e2")"
fi

lfs_umount "$MNT"
grep -q -F -e "$msg" "$MNT.log" && lfs_ok "refusal message in the daemon log" || lfs_fail "refusal message missing from the log"
lfs_finish
