#!/usr/bin/env bash
# POSIX basics of the passthrough part of the mount (docs/posix.md), on a
# mount of an empty folder:
#   - the caller's umask, not the daemon's: `umask 002` gives 0664 files and
#     0775 folders (and `umask 077` 0600 / 0700);
#   - an open file keeps its bytes after `rm` (exec 3<f; rm f; cat <&3), and
#     after being replaced by rename (the old open file still reads the old
#     bytes; fstat of the unlinked one shows link count 0);
#   - hard links: `ln a b` gives link count 2 on both names, `rm b` count 1
#     again on a, and a's ctime moves with link and unlink;
#   - folders count their subfolders (st_nlink), except where a file could
#     be a model (then 1, "unknown").
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_workdir posix_basic
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"
lfs_mount "$SRC" "$MNT"

# check WHAT EXPECTED ACTUAL
check() {
	if [ "$2" = "$3" ]; then lfs_ok "$1: $3"; else lfs_fail "$1: expected '$2', got '$3'"; fi
}

# ---- umask ----
(umask 002 && touch "$MNT/f002" && mkdir "$MNT/d002")
check "umask 002 file mode" 664 "$(stat -c %a "$MNT/f002")"
check "umask 002 folder mode" 775 "$(stat -c %a "$MNT/d002")"
check "umask 002 file mode in SOURCE" 664 "$(stat -c %a "$SRC/f002")"
(umask 077 && touch "$MNT/f077" && mkdir "$MNT/d077" && mkfifo "$MNT/p077")
check "umask 077 file mode" 600 "$(stat -c %a "$MNT/f077")"
check "umask 077 folder mode" 700 "$(stat -c %a "$MNT/d077")"
check "umask 077 fifo mode" 600 "$(stat -c %a "$MNT/p077")"
(umask 000 && python3 -c 'import os; os.close(os.open("'"$MNT"'/f000", os.O_CREAT | os.O_WRONLY, 0o666))')
check "umask 000 file mode" 666 "$(stat -c %a "$MNT/f000")"

# ---- open file, then rm ----
printf 'first bytes\n' >"$MNT/open_rm"
exec 3<"$MNT/open_rm"
rm "$MNT/open_rm"
check "read after rm" "first bytes" "$(cat <&3)"
exec 3<&-
[ ! -e "$SRC/open_rm" ] && lfs_ok "rm removed the source file" || lfs_fail "source file still there after rm"

# fstat of an open, unlinked file: link count 0; writes still land
python3 - "$MNT/open_rm2" <<'EOF' || lfs_fail "open-unlink-fstat-write (python)"
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"Hello, World!")
os.unlink(p)
st = os.fstat(fd)
assert st.st_nlink == 0, "nlink after unlink: %d" % st.st_nlink
os.pwrite(fd, b"J", 0)
assert os.pread(fd, 13, 0) == b"Jello, World!", os.pread(fd, 13, 0)
os.ftruncate(fd, 5)
assert os.fstat(fd).st_size == 5
os.close(fd)
print("ok: fstat/pwrite/pread/ftruncate of an unlinked open file")
EOF

# ---- replaced by rename ----
printf 'old text\n' >"$MNT/replaced"
printf 'new text\n' >"$MNT/replaced.tmp"
exec 4<"$MNT/replaced"
mv "$MNT/replaced.tmp" "$MNT/replaced"
check "old open file after replace" "old text" "$(cat <&4)"
exec 4<&-
check "new file after replace" "new text" "$(cat "$MNT/replaced")"

# ---- hard links ----
printf 'linked\n' >"$MNT/a"
check "link count before ln" 1 "$(stat -c %h "$MNT/a")"
c0=$(stat -c %Z "$MNT/a")
sleep 1.1 # ctime has 1 s resolution in stat -c %Z
ln "$MNT/a" "$MNT/b"
check "link count of a after ln" 2 "$(stat -c %h "$MNT/a")"
check "link count of b after ln" 2 "$(stat -c %h "$MNT/b")"
check "same st_ino" "$(stat -c %i "$MNT/a")" "$(stat -c %i "$MNT/b")"
c1=$(stat -c %Z "$MNT/a")
[ "$c1" -gt "$c0" ] && lfs_ok "ctime of a moved with ln" || lfs_fail "ctime of a: $c0 then $c1"
sleep 1.1 # deliberate: ctime has 1 s resolution in stat -c %Z
rm "$MNT/b"
check "link count of a after rm b" 1 "$(stat -c %h "$MNT/a")"
c2=$(stat -c %Z "$MNT/a")
[ "$c2" -gt "$c1" ] && lfs_ok "ctime of a moved with rm b" || lfs_fail "ctime of a: $c1 then $c2"
# a third name replaced by rename: the remaining name sees the lower count
ln "$MNT/a" "$MNT/c"
printf 'other\n' >"$MNT/d"
mv "$MNT/d" "$MNT/c"
check "link count of a after c was replaced" 1 "$(stat -c %h "$MNT/a")"
check "content of c after replace" "other" "$(cat "$MNT/c")"

# the first name removed: the second keeps the file (link() answers with the
# linked inode, so both names share it until the second is looked up anew)
printf 'kept\n' >"$MNT/x"
ln "$MNT/x" "$MNT/y"
rm "$MNT/x"
check "second name after rm of the first" "kept" "$(cat "$MNT/y")"
printf 'more\n' >>"$MNT/y"
check "write through the second name" "kept more" "$(tr '\n' ' ' <"$SRC/y" | sed 's/ $//')"
check "link count of the second name" 1 "$(stat -c %h "$MNT/y")"

# ---- folder link counts ----
mkdir -p "$MNT/dl/s1" "$MNT/dl/s2"
check "folder link count (2 subfolders)" 4 "$(stat -c %h "$MNT/dl")"
mv "$MNT/dl/s2" "$MNT/d002/"
check "folder link count after moving a subfolder out" 3 "$(stat -c %h "$MNT/dl")"
check "link count of the folder it moved into" 3 "$(stat -c %h "$MNT/d002")"
check "root link count (SOURCE's + /.legacyfs)" "$(($(stat -c %h "$SRC") + 1))" "$(stat -c %h "$MNT")"
# a name that may be a model file: its folder may hold more folders than
# SOURCE counts, so the count is "unknown" (1), never too small
touch "$MNT/dl/maybe.mdl"
check "folder link count with a model-file name in it" 1 "$(stat -c %h "$MNT/dl")"

# counting a folder's subfolders must not change its access time in SOURCE
mkdir "$MNT/at"
touch -a -d @1900000000 "$MNT/at"
touch -m -d @1950000000 "$MNT/at" # atime < mtime: a plain read would update it (relatime)
stat "$MNT/at" >/dev/null
check "folder atime after chmod+stat through the mount" 1900000000 "$(stat -c %X "$SRC/at")"

lfs_umount "$MNT"
lfs_finish
