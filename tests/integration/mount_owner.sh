#!/bin/bash
# -o uid=,gid=,umask= with allow_other, as other users see them (issue 14,
# docs/mount.md "Owner and modes"). Needs root: the daemon runs as root over
# a root-owned SOURCE, and other users (setpriv) reach the mount through
# allow_other. The kernel checks the SHOWN owner and mode
# (default_permissions):
#  1. uid=65534,gid=65534 (umask 000): user 65534 reads a view and appends
#     to a passthrough file; the file in SOURCE keeps its owner root; a file
#     65534 creates belongs in SOURCE to root (the daemon's user);
#  2. umask=022: the shown owner writes, another user reads but gets EACCES
#     on a write;
#  3. umask=077: another user gets EACCES even reading a view; the shown
#     owner still reads it.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
[ "$(id -u)" = 0 ] || lfs_skip "needs root (allow_other with other users through setpriv)"
command -v setpriv >/dev/null 2>&1 || lfs_skip "setpriv (util-linux) not installed"
lfs_workdir mount_owner
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC" "$MNT"
cp "$LFS_SOURCE_ROOT"/samples/box.mdl "$LFS_SOURCE_ROOT"/samples/README.md "$SRC/"
chmod 644 "$SRC/box.mdl" "$SRC/README.md"
chmod 755 "$SRC" "$MNT"
chown -R 0:0 "$SRC"
VIEW="$MNT/box.mdl/model.mdl"
OWNER=65534
OTHER=54321

# as USER (numeric, its group the same number, no supplementary groups)
as() {
	u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --clear-groups "$@"
}
# Other users must reach $MNT at all: every folder above it searchable.
as $OTHER test -x "$WORK" || lfs_skip "user $OTHER cannot search $WORK (a folder above it is not world-searchable)"

# expect_eacces WHAT COMMAND...: the command fails with "Permission denied".
expect_eacces() {
	what=$1
	shift
	if "$@" >/dev/null 2>"$WORK/err"; then
		lfs_fail "$what: succeeded"
	elif grep -q "Permission denied" "$WORK/err"; then
		lfs_ok "$what: EACCES"
	else
		lfs_fail "$what: $(cat "$WORK/err")"
	fi
}

"$CONVERT" cat "$SRC/box.mdl" >"$WORK/box.txt"

# 1. uid/gid forced, no umask
lfs_mount "$SRC" "$MNT" -o allow_other,uid=$OWNER,gid=$OWNER
[ "$(stat -c '%u:%g %a' "$VIEW")" = "$OWNER:$OWNER 644" ] || lfs_fail "view shows $(stat -c '%u:%g %a' "$VIEW")"
as $OWNER cat "$VIEW" >"$WORK/read" && cmp -s "$WORK/read" "$WORK/box.txt" &&
	lfs_ok "user $OWNER reads the view" || lfs_fail "user $OWNER cannot read the view"
as $OWNER sh -c "echo appended >>'$MNT/README.md'" && tail -1 "$SRC/README.md" | grep -qx appended &&
	lfs_ok "user $OWNER appends to a passthrough file owned by root in SOURCE" ||
	lfs_fail "user $OWNER cannot append to README.md"
[ "$(stat -c %u:%g "$SRC/README.md")" = 0:0 ] || lfs_fail "README.md changed owner in SOURCE"
as $OWNER sh -c "echo new >'$MNT/new.txt'" && [ "$(stat -c %u:%g "$SRC/new.txt")" = 0:0 ] &&
	[ "$(stat -c %u:%g "$MNT/new.txt")" = "$OWNER:$OWNER" ] &&
	lfs_ok "a file user $OWNER creates belongs in SOURCE to the daemon's user, shown as $OWNER" ||
	lfs_fail "new.txt: SOURCE $(stat -c %u:%g "$SRC/new.txt" 2>&1), mount $(stat -c %u:%g "$MNT/new.txt" 2>&1)"
# the view's own owner in SOURCE is root: without uid= user 65534 could not write it
expect_eacces "user $OTHER appends to README.md (shown 644, owner $OWNER)" \
	as $OTHER sh -c "echo x >>'$MNT/README.md'"
lfs_umount "$MNT"

# 2. umask=022: writes follow the shown mode
chmod 666 "$SRC/README.md"
lfs_mount "$SRC" "$MNT" -o allow_other,uid=$OWNER,gid=$OWNER,umask=022
[ "$(stat -c %a "$MNT/README.md")" = 644 ] || lfs_fail "umask=022: README.md shows $(stat -c %a "$MNT/README.md")"
as $OTHER cat "$VIEW" >/dev/null && lfs_ok "umask=022: user $OTHER reads the view" ||
	lfs_fail "umask=022: user $OTHER cannot read the view"
expect_eacces "umask=022: user $OTHER writes README.md (666 in SOURCE)" \
	as $OTHER sh -c "echo x >>'$MNT/README.md'"
as $OWNER sh -c "echo owner >>'$MNT/README.md'" && lfs_ok "umask=022: user $OWNER writes README.md" ||
	lfs_fail "umask=022: the shown owner cannot write"
lfs_umount "$MNT"

# 3. umask=077: only the shown owner
lfs_mount "$SRC" "$MNT" -o allow_other,uid=$OWNER,gid=$OWNER,umask=077
expect_eacces "umask=077: user $OTHER reads the view" as $OTHER cat "$VIEW"
expect_eacces "umask=077: user $OTHER lists a model folder" as $OTHER ls "$MNT/box.mdl"
as $OWNER cat "$VIEW" >"$WORK/read" && cmp -s "$WORK/read" "$WORK/box.txt" &&
	lfs_ok "umask=077: user $OWNER still reads the view" || lfs_fail "umask=077: the shown owner cannot read"
lfs_umount "$MNT"
lfs_finish
