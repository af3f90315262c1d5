#!/bin/bash
# Mount hygiene (issue 14, docs/mount.md "Options"): what legacyfs refuses
# before it mounts, and what -o uid=/gid=/umask= show.
#  1. missing and bad SOURCE/MOUNTPOINT arguments: a message naming them;
#  2. every numeric -o option with an out-of-range or malformed value: exit
#     status 1, the option's name in stderr, no mount left;
#  3. a second legacyfs on a mounted MOUNTPOINT (also through a symlink to
#     it) is refused; the first still serves and one unmount removes it;
#  4. -o uid=,gid=,umask= on a view, a model folder, a passthrough file, a
#     source folder, an archive folder and .legacyfs/; chmod goes through.
# The parts that need root (other users reaching the mount through
# allow_other) are in mount_owner.sh. Uses a copy of samples/, no corpus.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_workdir mount_hygiene
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC/sub" "$MNT" "$WORK/pack"
cp "$LFS_SOURCE_ROOT"/samples/box.mdl "$LFS_SOURCE_ROOT"/samples/README.md "$SRC/"
cp "$LFS_SOURCE_ROOT"/samples/box.mdl "$WORK/pack/a_box.mdl"
chmod 644 "$SRC/box.mdl" "$SRC/README.md"
chmod 755 "$SRC/sub"
"$LFS_BUILD_ROOT/tests/integration/lfs-test-erfpack" "$SRC/models.hak" HAK V1.0 "$WORK/pack/a_box.mdl" ||
	lfs_die "erfpack models.hak"
chmod 644 "$SRC/models.hak"

# mounts_at PATH: how many mounts /proc/self/mountinfo lists at PATH.
mounts_at() { awk -v m="$1" '$5 == m' /proc/self/mountinfo | wc -l; }
MOUNTED=0 # mounts expected at $MNT

# refused WHAT STDERR-PATTERN ARGS...: legacyfs exits non-zero, says the
# pattern (fixed string), and leaves $MOUNTED mounts at $MNT.
refused() {
	what=$1
	pat=$2
	shift 2
	set +e
	timeout 20 "$LEGACYFS" -f "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	set -e
	if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
		lfs_fail "$what: exit status $rc"
	elif ! grep -qF -- "$pat" "$WORK/err"; then
		lfs_fail "$what: stderr lacks '$pat': $(cat "$WORK/err")"
	elif [ "$(mounts_at "$MNT")" != "$MOUNTED" ]; then
		lfs_fail "$what: $(mounts_at "$MNT") mounts at $MNT, want $MOUNTED"
	else
		lfs_ok "$what refused: $(head -1 "$WORK/err")"
	fi
}

# 1. arguments
refused "no arguments" "legacyfs: missing SOURCE and MOUNTPOINT"
grep -q "^usage: .* \[options\] SOURCE MOUNTPOINT" "$WORK/err" && grep -qF "see legacyfs --help or man legacyfs" "$WORK/err" ||
	lfs_fail "no arguments: no usage line and pointer to --help/man"
refused "one argument" "legacyfs: missing MOUNTPOINT" "$SRC"
refused "missing SOURCE" "legacyfs: SOURCE $WORK/nosuch: No such file or directory" "$WORK/nosuch" "$MNT"
refused "missing MOUNTPOINT" "legacyfs: MOUNTPOINT $WORK/nosuch: No such file or directory" "$SRC" "$WORK/nosuch"
refused "SOURCE a file" "legacyfs: SOURCE $SRC/README.md: Not a directory" "$SRC/README.md" "$MNT"
refused "MOUNTPOINT a file" "legacyfs: MOUNTPOINT $SRC/README.md: Not a directory" "$SRC" "$SRC/README.md"
refused "MOUNTPOINT = SOURCE" "must not be SOURCE $SRC itself" "$SRC" "$SRC"
refused "MOUNTPOINT inside SOURCE" "must not be inside SOURCE $SRC" "$SRC" "$SRC/sub"

# 2. numeric options: each bad value names its option
for o in timeout=-5 timeout=abc timeout=1e999 timeout=inf timeout=nan timeout=0x10 timeout= \
	cache_size=0 cache_size=-1 cache_size=99999999999999999999 cache_size=2X cache_size=2048G \
	cache_entries=0 cache_entries=-5 cache_entries=4294967296 \
	max_model_size=0 max_model_size=-5 max_model_size=1.5 \
	list_classify=-1 list_classify=abc \
	model_memory=-1 model_memory=17592186044416 \
	follow_cpu=-1 follow_cpu=1e999 follow_cpu=60001 \
	request_slice=-1 request_slice=100001 \
	poll_us=-5 poll_us=1000001 \
	unlink_grace=-1 unlink_grace=abc unlink_grace=86401 \
	edit_size=0 edit_size=-1 \
	thumb_size=300 thumb_size=-5 thumb_size=4294967552 \
	thumb_cache_size=-1 \
	uid=-1 uid=abc uid=4294967295 gid=-1 gid=1.5 \
	umask=999 umask=0x1 umask=-022 umask=8 umask=07777 \
	max_threads=-5 max_threads=0 max_idle_threads=-2; do
	refused "-o $o" "legacyfs: -o $o: must be" -o "$o" "$SRC" "$MNT"
done
# the forms the documentation gives are taken
lfs_mount "$SRC" "$MNT" -o ro,max_model_size=2M,cache_size=1G,timeout=0.5,umask=0022,follow_cpu=0 \
	-o max_threads=4,max_idle_threads=-1
lfs_ok "documented forms (2M, 1G, 0.5, 0022, max_idle_threads=-1) accepted"
# libfuse's options checked by us still reach libfuse
grep -q "at most 4 threads" "$MNT.log" && lfs_ok "max_threads=4 reaches libfuse" ||
	lfs_fail "max_threads=4 lost: $(cat "$MNT.log")"
lfs_umount "$MNT"

# 3. a second mount on a mounted MOUNTPOINT
ln -s "$MNT" "$WORK/link"
lfs_mount "$SRC" "$MNT"
FIRST=$LFS_PID
MOUNTED=1
refused "second mount" "legacyfs: $MNT is already a legacyfs mount of $SRC (fusermount3 -u $MNT first)" "$SRC" "$MNT"
# through a symlink to the mountpoint, and from another SOURCE
refused "second mount through a symlink" "is already a legacyfs mount of $SRC" "$LFS_SOURCE_ROOT/samples" "$WORK/link"
"$CONVERT" cat "$SRC/box.mdl" >"$WORK/box.txt"
cmp -s "$WORK/box.txt" "$MNT/box.mdl/model.mdl" && lfs_ok "the first mount still serves views" ||
	lfs_fail "first mount: model.mdl differs from legacyfs-convert cat"
LFS_PID=$FIRST
lfs_umount "$MNT"
mountpoint -q "$MNT" && lfs_fail "one unmount left a mount at $MNT" || lfs_ok "one unmount removes it"

# 4. -o uid=, gid=, umask=: what stat shows
lfs_mount "$SRC" "$MNT" -o uid=12345,gid=23456,umask=027
mode_of() { stat -c %a "$1"; }
want() { printf '%o' $(( 0$1 & ~027 )); }
check_owner() {
	what=$1
	path=$2
	exp=$3
	got=$(stat -c '%u %g %a' "$path") || { lfs_fail "stat $what"; return; }
	[ "$got" = "12345 23456 $exp" ] && lfs_ok "$what: $got" || lfs_fail "$what: '$got', want '12345 23456 $exp'"
}
# a view shows the model file's mode (writable for a re-encodable format)
check_owner "view box.mdl/model.mdl" "$MNT/box.mdl/model.mdl" "$(want 644)"
check_owner "model folder box.mdl" "$MNT/box.mdl" "$(want 755)"
check_owner "passthrough README.md" "$MNT/README.md" "$(want 644)"
check_owner "source folder sub" "$MNT/sub" "$(want 755)"
check_owner "root" "$MNT" "$(want "$(mode_of "$SRC")")"
check_owner ".legacyfs" "$MNT/.legacyfs" "$(want 555)"
check_owner ".legacyfs/errors" "$MNT/.legacyfs/errors" "$(want 444)"
[ -d "$MNT/models.hak" ] || lfs_fail "models.hak is not an archive folder"
check_owner "archive folder models.hak" "$MNT/models.hak" "$(printf '%o' $(( 0$(stat -c %a "$MNT/models.hak") & ~027 )))"
f=$(find "$MNT/models.hak" -mindepth 1 -maxdepth 1 | head -1)
[ -n "$f" ] && check_owner "in the archive: ${f#"$MNT"/}" "$f" "$(printf '%o' $(( 0$(stat -c %a "$f") & ~027 )))"
# ls -n on a listing (readdirplus) shows the same owner everywhere
bad=$(find "$MNT" -mindepth 1 \( ! -uid 12345 -o ! -gid 23456 -o -perm /027 \) -print | head -3)
[ -z "$bad" ] && lfs_ok "every object: 12345:23456, no umask bit" || lfs_fail "not forced: $bad"
if [ "$(id -u)" = 0 ]; then
	# (the kernel lets only the shown owner or root chmod/chown)
# stat shows no umask bit even for a 0777 SOURCE mode, SOURCE keeps its own
	chmod 777 "$MNT/README.md"
	[ "$(stat -c %a "$SRC/README.md")" = 777 ] && [ "$(mode_of "$MNT/README.md")" = 750 ] &&
		lfs_ok "chmod goes through to SOURCE (777), the mount shows 750" ||
		lfs_fail "chmod 777: SOURCE $(stat -c %a "$SRC/README.md"), mount $(mode_of "$MNT/README.md")"
	[ "$(stat -c %u "$SRC/README.md")" = "$(id -u)" ] || lfs_fail "SOURCE's owner changed"
	# root may chown: to the forced owner it is a no-op, to another EPERM
	chown 12345:23456 "$MNT/README.md" "$MNT/box.mdl" "$MNT/box.mdl/model.mdl" "$MNT/.legacyfs" &&
		[ "$(stat -c %u "$SRC/README.md")" = 0 ] &&
		lfs_ok "chown to the forced owner (passthrough, model folder, view, .legacyfs): no-op" ||
		lfs_fail "chown to the forced owner"
	if chown 1000 "$MNT/README.md" 2>"$WORK/err"; then
		lfs_fail "chown to another owner succeeded"
	else
		grep -q "Operation not permitted" "$WORK/err" && lfs_ok "chown to another owner: EPERM" ||
			lfs_fail "chown: $(cat "$WORK/err")"
	fi
	[ "$(stat -c '%u:%g' "$SRC/README.md")" = 0:0 ] || lfs_fail "SOURCE's owner changed by chown"
else
	lfs_log "SKIP part: chown through the mount needs root (CAP_CHOWN)"
fi
lfs_umount "$MNT"
lfs_finish
