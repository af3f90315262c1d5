#!/bin/bash
# Crash recovery at mount time (docs/editing.md "After a crash"): a save
# writes `.<model>.legacyfs-<pid>-<n>` beside the model and renames it over
# the model; a daemon killed in between leaves that temporary file behind.
# Planted in SOURCE before the mount:
#  - a temp of a dead writer (a reaped child's pid) beside its model:
#    removed at mount time, named in the log and in /.legacyfs/errors;
#  - the same in a subfolder (the scan walks the tree): removed;
#  - a temp of a live writer (a running `sleep`): kept, not reported;
#  - a temp of a dead writer whose target is gone: kept and reported;
#  - a name that only looks similar (`.x.legacyfs-12a-1`): an ordinary file.
# None of the temporary names is visible in the mount (listing or lookup);
# the look-alike is; the model folder works.
# Log lines escape control bytes as /.legacyfs/errors does: a broken model
# and a stale temp whose names hold a newline and an ESC sequence give one
# log line each, with `\n` and `\x1B`, and no raw control byte.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
[ -n "${LFS_CORPUS:-}" ] && [ -f "$LFS_CORPUS/nod/PLC_Cndl02.nod" ] ||
	lfs_skip "corpus not found (LFS_CORPUS=${LFS_CORPUS:-})"
lfs_workdir recovery
SRC="$WORK/src"
MNT="$WORK/mnt"
NOD=PLC_Cndl02.nod
mkdir -p "$SRC/sub"
cp "$LFS_CORPUS/nod/$NOD" "$SRC/"
cp "$LFS_CORPUS/nod/$NOD" "$SRC/sub/"
chmod 644 "$SRC/$NOD" "$SRC/sub/$NOD"

# A dead pid: a child that has exited and been reaped.
sh -c 'exit 0' &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && lfs_skip "pid $dead reused at once"
# A live pid: a sleeping child, stopped at the end.
sleep 300 &
live=$!
stop_live() {
	st=$?
	set +e
	kill "$live" 2>/dev/null || true
	(exit "$st") # lfs_cleanup takes the exit status from $?
	lfs_cleanup
}
trap stop_live EXIT

head -c 100 "$SRC/$NOD" >"$SRC/.$NOD.legacyfs-$dead-1"       # torn save
: >"$SRC/sub/.$NOD.legacyfs-$dead-7"                          # empty save
cp "$SRC/$NOD" "$SRC/.$NOD.legacyfs-$live-2"                  # in progress
cp "$SRC/$NOD" "$SRC/.gone.nod.legacyfs-$dead-3"              # no target
printf 'mine\n' >"$SRC/.x.legacyfs-12a-1"                      # not ours
ugly=$(printf 'bad\nname\033[31m.mdl')
# an NWN binary header (u32 0, data size, 0) over 88 zero bytes: detected, does not decode
{ printf '\000\000\000\000\130\000\000\000\000\000\000\000'; head -c 88 /dev/zero; } >"$SRC/$ugly"
: >"$SRC/.$ugly.legacyfs-$dead-4"

lfs_mount "$SRC" "$MNT"

[ ! -e "$SRC/.$NOD.legacyfs-$dead-1" ] && lfs_ok "dead writer's temp removed" ||
	lfs_fail "dead writer's temp still in SOURCE"
[ ! -e "$SRC/sub/.$NOD.legacyfs-$dead-7" ] && lfs_ok "dead writer's temp in a subfolder removed" ||
	lfs_fail "dead writer's temp in sub/ still in SOURCE"
[ -f "$SRC/.$NOD.legacyfs-$live-2" ] && lfs_ok "live writer's temp kept" ||
	lfs_fail "live writer's temp was removed"
[ -f "$SRC/.gone.nod.legacyfs-$dead-3" ] && lfs_ok "temp without a target kept" ||
	lfs_fail "temp without a target was removed"
cmp -s "$SRC/$NOD" "$LFS_CORPUS/nod/$NOD" && lfs_ok "model untouched" || lfs_fail "model changed"

grep -q "\.$NOD\.legacyfs-$dead-1: temporary file of a crashed save: writer $dead is not running; .*removed" "$MNT.log" &&
	lfs_ok "removal logged" || lfs_fail "removal not in the log"
grep -q "sub/\.$NOD\.legacyfs-$dead-7: .*removed" "$MNT.log" &&
	lfs_ok "subfolder removal logged" || lfs_fail "subfolder removal not in the log"
grep -q "\.gone\.nod\.legacyfs-$dead-3: .*missing, kept" "$MNT.log" &&
	lfs_ok "kept temp reported in the log" || lfs_fail "kept temp not in the log"
grep -q "legacyfs-$live-" "$MNT.log" && lfs_fail "live writer's temp reported" || lfs_ok "live temp not reported"
errs=$(cat "$MNT/.legacyfs/errors")
case $errs in *".$NOD.legacyfs-$dead-1: writer $dead is not running; "*removed*) lfs_ok "removal in .legacyfs/errors" ;;
*) lfs_fail "removal not in .legacyfs/errors: $errs" ;; esac
case $errs in *".gone.nod.legacyfs-$dead-3: "*kept*) lfs_ok "kept temp in .legacyfs/errors" ;;
*) lfs_fail "kept temp not in .legacyfs/errors: $errs" ;; esac

# Never visible in the mount: listing and lookup.
if ls -a "$MNT" "$MNT/sub" | grep -Eq '\.legacyfs-[0-9]+-[0-9]+$'; then
	lfs_fail "a temporary name is listed: $(ls -a "$MNT")"
else
	lfs_ok "no temporary name listed"
fi
for n in ".$NOD.legacyfs-$live-2" ".gone.nod.legacyfs-$dead-3"; do
	if [ -e "$MNT/$n" ]; then lfs_fail "lookup of $n succeeds"; else lfs_ok "lookup of $n: absent"; fi
done
ls -a "$MNT" | grep -qx '\.x\.legacyfs-12a-1' && [ "$(cat "$MNT/.x.legacyfs-12a-1")" = mine ] &&
	lfs_ok "look-alike name shown" || lfs_fail "look-alike name hidden"
[ -f "$MNT/$NOD/model.txt" ] && [ -f "$MNT/sub/$NOD/model.txt" ] && lfs_ok "model folders work" ||
	lfs_fail "model folder missing"

# Log escaping (the broken model is decoded when its folder is entered:
# docs/mount.md "Listing is cheap").
ls "$MNT" >/dev/null
ls "$MNT/$ugly" >/dev/null 2>&1 || true
grep -qF 'bad\nname\x1B[31m.mdl: looks like a model but does not decode' "$MNT.log" &&
	lfs_ok "broken model's name escaped in the log" || lfs_fail "broken model's log line not escaped"
grep -qF '.bad\nname\x1B[31m.mdl.legacyfs-'"$dead"'-4: temporary file of a crashed save' "$MNT.log" &&
	lfs_ok "temp's name escaped in the log" || lfs_fail "temp's log line not escaped"
if LC_ALL=C grep -q "$(printf '\033')" "$MNT.log" "$MNT/.legacyfs/errors"; then
	lfs_fail "raw ESC in the log or .legacyfs/errors"
else
	lfs_ok "no raw ESC in the log or .legacyfs/errors"
fi
grep -qF 'bad\nname\x1B[31m.mdl: ' "$MNT/.legacyfs/errors" && lfs_ok "escaped in .legacyfs/errors" ||
	lfs_fail "broken model not escaped in .legacyfs/errors"

lfs_umount "$MNT"
# The live writer's file is still there; once its writer is gone the next
# mount removes it.
kill "$live"
wait "$live" 2>/dev/null || true
lfs_mount "$SRC" "$MNT"
[ ! -e "$SRC/.$NOD.legacyfs-$live-2" ] && lfs_ok "second mount: temp of the ended writer removed" ||
	lfs_fail "second mount: temp of the ended writer still there"
lfs_umount "$MNT"
lfs_finish
