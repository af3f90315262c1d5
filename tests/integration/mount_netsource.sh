#!/bin/bash
# SOURCE on a real network file system (issue 25, docs/mount.md "Network file
# systems"): sshfs over loopback to a throwaway sshd (sshfs_lib.sh), with its
# own cache off (-o dir_cache=no), and legacyfs on it with DEFAULT options.
# inotify sees none of the changes made on the far side (written straight
# into the far folder); each must still show (polled, giving up after 30 s:
# the assertions are about the bytes and the types, never about the time):
#  - the mount says the file system is not watched (status, log);
#  - a model rewritten far away: its view has the new text, also through a
#    descriptor held open across the change (new text or ESTALE, never the
#    old text);
#  - a new file is listed, a deleted one goes;
#  - a plain file becomes a model (a folder) and a model a plain file;
#  - a model changed far away just before the mount first looks at it is a
#    folder at once (its header judged with its real size);
#  - a save through the mount lands in the far folder (legacyfs-convert
#    apply's bytes);
#  - a share mounted in a folder of a local SOURCE is found (its st_dev) and
#    revalidated the same way;
#  - a daemon killed during a save leaves no temporary file after the next
#    mounts (a fresh one is kept once: it may be another machine's save),
#    and the model is the old or the new bytes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sshfs_lib.sh"
lfs_require_fuse
lfs_require_corpus
command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
[ -f "$LFS_CORPUS/nod/c_orcus.nod" ] || lfs_skip "corpus lacks nod/c_orcus.nod"
EDIT_TOOL="$LFS_SOURCE_ROOT/tests/integration/edit_tool.py"
lfs_workdir mount_netsource
FAR="$WORK/far"
NET="$WORK/net"
MNT="$WORK/mnt"
mkdir -p "$FAR"
trap 'st=$?; lfs_sshfs_stop; (exit "$st"); lfs_cleanup' EXIT
lfs_sshfs_start "$WORK/ssh"

lfs_two_binaries
"$CONVERT" cat "$A" model.mdl >"$WORK/A.mdl.txt"
"$CONVERT" cat "$B" model.mdl >"$WORK/B.mdl.txt"
cp "$A" "$FAR/m.mdl"
cp "$A" "$FAR/gone.mdl"
cp "$A" "$FAR/toplain.mdl"
printf 'not a model\n' >"$FAR/tomodel.mdl"
printf 'plain text\n' >"$FAR/fresh.mdl"
cp "$LFS_CORPUS/nod/c_orcus.nod" "$FAR/"
chmod 644 "$FAR"/*

# sshfs with its default caches: a file seen through it, then changed far
# away, then looked at by the mount for the first time: sshfs (and the
# kernel) still give the old size, the header read is the new one; the mount
# must judge the header with the size of the bytes it read.
lfs_sshfs_mount "$FAR" "$WORK/net2"
lfs_mount "$WORK/net2" "$WORK/mnt2"
ls -l "$WORK/net2" >/dev/null
cat "$WORK/net2/fresh.mdl" >/dev/null
cp "$A" "$FAR/fresh.mdl"
[ -d "$WORK/mnt2/fresh.mdl" ] && lfs_ok "a model changed just before the first look is a folder at once" ||
	lfs_fail "fresh.mdl (a model now) is shown as: $(stat -c %F "$WORK/mnt2/fresh.mdl" 2>&1)"
lfs_umount "$WORK/mnt2"

lfs_sshfs_mount "$FAR" "$NET" -o dir_cache=no
lfs_mount "$NET" "$MNT"

# poll DESCRIPTION COMMAND...: true as soon as COMMAND succeeds, false after 30 s
poll() {
	what=$1
	shift
	for _ in $(seq 1 150); do
		if "$@" 2>/dev/null; then lfs_ok "$what"; return 0; fi
		sleep 0.2
	done
	lfs_fail "$what (not within 30 s)"
}

grep -q '^source_fs fuse$' "$MNT/.legacyfs/status" && lfs_ok "status names the file system" ||
	lfs_fail "status: $(grep source_fs "$MNT/.legacyfs/status" | tr '\n' ' ')"
grep -q '^source_fs_watched no' "$MNT/.legacyfs/status" && lfs_ok "status: not watched by inotify" ||
	lfs_fail "status does not say SOURCE is unwatched"
grep -q 'is on fuse: inotify does not see' "$MNT.log" && lfs_ok "the log says so" || lfs_fail "no log line about the file system"


# Warm everything the kernel may keep: listings, attributes, a view's pages.
ls -l "$MNT" "$MNT/m.mdl" >/dev/null
cmp -s "$MNT/m.mdl/model.mdl" "$WORK/A.mdl.txt" || lfs_fail "m.mdl/model.mdl is not A's text"
[ -f "$MNT/tomodel.mdl" ] && [ -d "$MNT/toplain.mdl" ] && [ -d "$MNT/gone.mdl" ] || lfs_fail "precondition: types before the changes"
# A descriptor held open across the change.
exec 7<"$MNT/m.mdl/model.mdl"
head -c 100 <&7 >/dev/null

# Far-side changes.
cp "$B" "$FAR/m.mdl.tmp" && mv "$FAR/m.mdl.tmp" "$FAR/m.mdl"
cp "$A" "$FAR/tomodel.mdl"
printf 'plain now\n' >"$FAR/toplain.mdl"
printf 'new\n' >"$FAR/new.txt"
rm "$FAR/gone.mdl"

poll "a model rewritten far away shows its new text" cmp -s "$MNT/m.mdl/model.mdl" "$WORK/B.mdl.txt"
poll "a new far file is listed" sh -c "ls '$MNT' | grep -qx new.txt"
poll "a deleted far file is gone from the listing" sh -c "! ls '$MNT' | grep -qx gone.mdl"
[ ! -e "$MNT/gone.mdl" ] || lfs_fail "gone.mdl still answers a lookup"
poll "a plain file that became a model is a folder" test -d "$MNT/tomodel.mdl"
poll "a model that became a plain file is a file" test -f "$MNT/toplain.mdl"
cmp -s "$MNT/toplain.mdl" "$FAR/toplain.mdl" && lfs_ok "its bytes are the new ones" || lfs_fail "toplain.mdl bytes"
cmp -s "$MNT/tomodel.mdl/model.mdl" "$WORK/A.mdl.txt" && lfs_ok "tomodel.mdl has the model's views" || lfs_fail "tomodel.mdl/model.mdl"
ls -l "$MNT" | grep -q '^d.* tomodel\.mdl$' && ls -l "$MNT" | grep -q '^-.* toplain\.mdl$' &&
	lfs_ok "the listing has the new types" || lfs_fail "listing types: $(ls -l "$MNT" | tr '\n' '|')"
# The held descriptor: the new text from the start, or ESTALE; never A's.
python3 - "$WORK/B.mdl.txt" "$WORK/A.mdl.txt" <<'PY' && lfs_ok "a view held open reads the new text or ESTALE" || lfs_fail "a view held open read stale bytes"
import errno, os, sys
new, old = (open(p, "rb").read() for p in sys.argv[1:3])
try:
    got = b""
    off = 0
    while True:
        b = os.pread(7, 1 << 16, off)
        if not b:
            break
        got += b
        off += len(b)
except OSError as e:
    sys.exit(0 if e.errno == errno.ESTALE else 1)
sys.exit(0 if got == new else 1)
PY
exec 7<&-

# A save through the mount lands in the far folder.
MODEL=c_orcus.nod
"$CONVERT" cat "$FAR/$MODEL" model.txt >"$WORK/O.txt"
python3 "$EDIT_TOOL" subst "$WORK/O.txt" '^  resttranslate ' 2 space 0.25 "$WORK/P.txt" >/dev/null
cmp -s "$WORK/O.txt" "$WORK/P.txt" && lfs_die "precondition: the edit changed nothing"
"$CONVERT" apply "$FAR/$MODEL" model.txt "$WORK/P.txt" -o "$WORK/P.nod" >/dev/null 2>&1 ||
	lfs_die "legacyfs-convert apply refuses the edit"
cp "$WORK/P.txt" "$MNT/$MODEL/model.txt" && lfs_ok "save through the mount" || lfs_fail "save through the mount"
cmp -s "$FAR/$MODEL" "$WORK/P.nod" && lfs_ok "the save landed in the far folder" || lfs_fail "far $MODEL is not the saved bytes"
[ -z "$(find "$FAR" -name '.*.legacyfs-*')" ] || lfs_fail "temporary file left after a save: $(find "$FAR" -name '.*.legacyfs-*')"
lfs_umount "$MNT"

# A share mounted inside a local SOURCE: that folder alone is revalidated.
mkdir -p "$WORK/far2" "$WORK/local/share"
cp "$A" "$WORK/far2/s.mdl"
cp "$A" "$WORK/local/l.mdl"
lfs_sshfs_mount "$WORK/far2" "$WORK/local/share" -o dir_cache=no
lfs_mount "$WORK/local" "$WORK/mnt3"
if grep -q '^source_fs_watched yes' "$WORK/mnt3/.legacyfs/status"; then
	cmp -s "$WORK/mnt3/share/s.mdl/model.mdl" "$WORK/A.mdl.txt" || lfs_fail "share/s.mdl/model.mdl is not A's text"
	grep -q '^remote_file_systems 1$' "$WORK/mnt3/.legacyfs/status" && lfs_ok "status counts the share" ||
		lfs_fail "status: $(grep remote_file_systems "$WORK/mnt3/.legacyfs/status")"
	grep -q 'local/share is on fuse: inotify does not see' "$WORK/mnt3.log" && lfs_ok "the log names the share" ||
		lfs_fail "no log line about the share"
	cp "$B" "$WORK/far2/s.mdl.tmp" && mv "$WORK/far2/s.mdl.tmp" "$WORK/far2/s.mdl"
	poll "a model rewritten far away in a share below SOURCE shows its new text" \
		cmp -s "$WORK/mnt3/share/s.mdl/model.mdl" "$WORK/B.mdl.txt"
else
	lfs_log "SKIP-PART: the build folder is itself on a file system inotify cannot follow"
fi
lfs_umount "$WORK/mnt3"
timeout 10 fusermount3 -u "$WORK/local/share" || lfs_fail "unmount of the share"

# A daemon killed during a save: no temporary file after the next mount.
"$LEGACYFS" -f "$NET" "$MNT" 2>"$WORK/kill.log" &
DPID=$!
for _ in $(seq 1 300); do mountpoint -q "$MNT" && break; sleep 0.1; done
mountpoint -q "$MNT" || lfs_die "second mount"
cp "$FAR/$MODEL" "$WORK/before.nod"
"$CONVERT" apply "$WORK/before.nod" model.txt "$WORK/O.txt" -o "$WORK/exp.nod" >/dev/null 2>&1 ||
	lfs_die "legacyfs-convert apply refuses the text"
python3 -c '
import os, sys
data = open(sys.argv[2], "rb").read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, data)
os.close(fd)
' "$MNT/$MODEL/model.txt" "$WORK/O.txt" 2>/dev/null &
WPID=$!
seen=no
for _ in $(seq 1 3000); do
	if [ -n "$(find "$FAR" -name '.*.legacyfs-*' 2>/dev/null)" ]; then seen=yes; break; fi
	kill -0 "$WPID" 2>/dev/null || break
	sleep 0.001
done
kill -9 "$DPID" 2>/dev/null
wait "$WPID" 2>/dev/null || true
wait "$DPID" 2>/dev/null || true
timeout 10 fusermount3 -u "$MNT" 2>/dev/null || timeout 10 fusermount3 -uz "$MNT" 2>/dev/null || true
lfs_log "kill during the save: temporary file seen before the kill: $seen"
lfs_mount "$NET" "$MNT"
left=$(find "$FAR" -name '.*.legacyfs-*')
if [ -n "$left" ]; then
	# on a share a fresh one may be another machine's save in progress: kept,
	# reported, and removed by a mount once it is old
	grep -q "another machine's save in progress, kept" "$MNT/.legacyfs/errors" ||
		lfs_fail "a fresh temporary file on the share is kept without a report: $(cat "$MNT/.legacyfs/errors")"
	lfs_umount "$MNT"
	find "$NET" -name '.*.legacyfs-*' -exec touch -d '20 minutes ago' {} +
	lfs_mount "$NET" "$MNT"
	left=$(find "$FAR" -name '.*.legacyfs-*')
fi
[ -z "$left" ] && lfs_ok "no temporary file after the kill and the next mounts" || lfs_fail "left on the share: $left"
if cmp -s "$FAR/$MODEL" "$WORK/before.nod" || cmp -s "$FAR/$MODEL" "$WORK/exp.nod"; then
	lfs_ok "the model is the old or the new bytes"
else
	lfs_fail "the model after the kill is neither the old nor the new bytes"
fi
[ -d "$MNT/$MODEL" ] || lfs_fail "$MODEL is no folder after the kill"
lfs_umount "$MNT"

[ "$LFS_FAILS" = 0 ] || lfs_die "$LFS_FAILS check(s) failed"
lfs_log "all ok"
