#!/bin/bash
# A plain listing reads no model file beyond its classification budget
# (-o list_classify, docs/mount.md "Listing is cheap"). Parts 1-4 mount
# with -o list_classify=0 (no header read at listing); part 5 checks the
# budget: the default (256) lists the 41 candidates typed, list_classify=10
# types exactly 10 of them and leaves 31 to their lookup.
# The daemon runs with -d: it logs "<file>: header read (<format>|plain)"
# once per header classification (fs_nodes.c entry_verdict); the checks
# count those lines. SOURCE: 40 corpus NWN binaries, one ASCII MDL (a
# candidate by name, plain by its header), a text file, a sub-folder.
#  - getdents only (os.listdir) of the folder reads no header, and lists
#    every name;
#  - d_ino of every entry (os.scandir .inode(), no stat) equals the st_ino
#    a later stat reports (`ls -i` and `stat` agree);
#  - d_type of a model file before its lookup is DT_UNKNOWN, of the plain
#    file and the sub-folder SOURCE's;
#  - `ls -l` afterwards shows each model as a folder, the ASCII MDL as a
#    file, reading each candidate's header once; its first lookup started
#    the background prefetch of the 41 headers; a second listing after it
#    reads none again, and its d_types are the real ones (the kernel holds
#    the looked-up names).
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_ls
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC/sub"

mapfile -t bins < <(sed 's|^tree/|'"$LFS_CORPUS"'/nwn/tree/|' "$LFS_CORPUS/nwn/binary.txt" | head -40)
[ ${#bins[@]} = 40 ] || lfs_skip "fewer than 40 NWN binaries in the corpus"
for i in "${!bins[@]}"; do cp "${bins[$i]}" "$SRC/m$i.mdl"; done
ascii=$(sed 's|^tree/|'"$LFS_CORPUS"'/nwn/tree/|' "$LFS_CORPUS/nwn/ascii.txt" | head -1)
cp "$ascii" "$SRC/ascii.mdl"
echo notes >"$SRC/notes.txt"

reads() { grep -c ': header read (' "$MNT.log" || true; }

lfs_mount "$SRC" "$MNT" -d -o list_classify=0

# -- 1. getdents only: every name, no header read
names=$(python3 -c 'import os, sys; print(" ".join(sorted(os.listdir(sys.argv[1]))))' "$MNT")
want=$(cd "$SRC" && printf '%s\n' * .legacyfs | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
want=$(python3 -c 'import sys; print(" ".join(sorted(sys.argv[1:])))' $want)
[ "$names" = "$want" ] && lfs_ok "os.listdir lists all $(wc -w <<<"$names") names" ||
	lfs_fail "os.listdir: '$names' != '$want'"
n=$(reads)
[ "$n" = 0 ] && lfs_ok "a plain listing read no header" || lfs_fail "a plain listing read $n headers"

# -- 2. d_ino and d_type before any lookup; then d_ino == st_ino
# dents DIR: "name d_ino d_type" per entry, from readdir(3) alone (no stat)
cat >"$WORK/dents.py" <<'PY'
import ctypes, ctypes.util, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
class Dirent(ctypes.Structure):  # glibc's struct dirent on 64-bit Linux
    _fields_ = [("d_ino", ctypes.c_uint64), ("d_off", ctypes.c_int64),
                ("d_reclen", ctypes.c_ushort), ("d_type", ctypes.c_ubyte),
                ("d_name", ctypes.c_char * 256)]
libc.opendir.restype = ctypes.c_void_p
libc.opendir.argtypes = [ctypes.c_char_p]
libc.readdir.restype = ctypes.POINTER(Dirent)
libc.readdir.argtypes = [ctypes.c_void_p]
libc.closedir.argtypes = [ctypes.c_void_p]
d = libc.opendir(sys.argv[1].encode())
if not d:
    sys.exit("opendir failed")
while True:
    e = libc.readdir(d)
    if not e:
        break
    name = e.contents.d_name.decode()
    if name not in (".", ".."):
        print(name, e.contents.d_ino, e.contents.d_type)
libc.closedir(d)
PY
dents() { python3 "$WORK/dents.py" "$1"; }
dents "$MNT" >"$WORK/dents"
n=$(reads)
[ "$n" = 0 ] && lfs_ok "readdir of d_ino and d_type read no header" || lfs_fail "readdir read $n headers"
bad=$(awk '$1 ~ /^m[0-9]+\.mdl$|^ascii\.mdl$/ && $3 != 0' "$WORK/dents")
[ -z "$bad" ] && lfs_ok "model files listed as DT_UNKNOWN before their lookup" ||
	lfs_fail "typed before lookup: $bad"
awk '$1 == "notes.txt" && $3 == 8 { f = 1 } $1 == "sub" && $3 == 4 { d = 1 } END { exit !(f && d) }' "$WORK/dents" &&
	lfs_ok "plain file DT_REG, folder DT_DIR (SOURCE's d_type)" || lfs_fail "plain/folder d_type: $(grep -e notes -e sub "$WORK/dents")"
mism=$(while read -r name ino _; do
	s=$(stat -c %i "$MNT/$name")
	[ "$s" = "$ino" ] || echo "$name: d_ino $ino, st_ino $s"
done <"$WORK/dents")
[ -z "$mism" ] && lfs_ok "d_ino == st_ino for all $(wc -l <"$WORK/dents") entries" || lfs_fail "$mism"

# -- 3. ls -l: models are folders, the ASCII MDL a file; each candidate's header read once
ls -l "$MNT" >"$WORK/ls-l"
dirs=$(grep -c '^d.* m[0-9]*\.mdl$' "$WORK/ls-l" || true)
[ "$dirs" = 40 ] && lfs_ok "ls -l: all 40 models are folders" || lfs_fail "ls -l: $dirs model folders: $(head -5 "$WORK/ls-l")"
grep -q '^-.* ascii\.mdl$' "$WORK/ls-l" && grep -q '^-.* notes\.txt$' "$WORK/ls-l" &&
	lfs_ok "ls -l: ascii.mdl and notes.txt are files" || lfs_fail "ls -l: $(grep -e ascii -e notes "$WORK/ls-l")"
n=$(reads)
[ "$n" = 41 ] && lfs_ok "stat read each of the 41 candidates' headers once" || lfs_fail "$n header reads after ls -l"
grep -q ': header prefetch of 41 files started' "$MNT.log" && lfs_ok "the first lookup started the prefetch of the 41 headers" ||
	lfs_fail "no prefetch of the 41 headers: $(grep 'header prefetch' "$MNT.log")"
models=$(grep -c ': header read (nwn' "$MNT.log" || true)
[ "$models" = 40 ] || lfs_fail "$models headers read as NWN models"

# -- 4. after the lookups: a new listing is typed and reads nothing
touch "$SRC/new.txt" # the folder changed: the next listing is read anew
lfs_wait_until 10 sh -c "python3 '$WORK/dents.py' '$MNT' | grep -q '^new.txt '" ||
	lfs_fail "new.txt not listed within 10 s"
dents "$MNT" >"$WORK/dents2"
grep -q '^new.txt ' "$WORK/dents2" && lfs_ok "the new listing shows new.txt" || lfs_fail "new.txt not listed"
n=$(reads)
[ "$n" = 41 ] && lfs_ok "the second listing read no header" || lfs_fail "$n header reads after the second listing"
bad=$(awk '($1 ~ /^m[0-9]+\.mdl$/ && $3 != 4) || ($1 == "ascii.mdl" && $3 != 8)' "$WORK/dents2")
[ -z "$bad" ] && lfs_ok "after their lookups, models are listed DT_DIR, ascii.mdl DT_REG" ||
	lfs_fail "d_type after lookups: $(head -3 <<<"$bad")"
lfs_umount "$MNT"

# -- 5. the listing's budget: default 256 classifies all 41 candidates at
#    listing (typed, one header read each); list_classify=10 exactly 10
budget() { # OPTS... : mount, list with readdir(3) only, print "typed untyped reads"
	rm -f "$MNT.log"
	lfs_mount "$SRC" "$MNT" -d "$@"
	dents "$MNT" >"$WORK/dents3"
	local typed untyped
	typed=$(awk '$1 ~ /^m[0-9]+\.mdl$|^ascii\.mdl$/ && $3 != 0' "$WORK/dents3" | wc -l)
	untyped=$(awk '$1 ~ /^m[0-9]+\.mdl$|^ascii\.mdl$/ && $3 == 0' "$WORK/dents3" | wc -l)
	echo "$typed $untyped $(reads)"
	bad=$(awk '($1 ~ /^m[0-9]+\.mdl$/ && $3 != 4 && $3 != 0) || ($1 == "ascii.mdl" && $3 != 8 && $3 != 0)' "$WORK/dents3")
	[ -z "$bad" ] || lfs_fail "wrong d_type at listing ($*): $bad"
	lfs_umount "$MNT"
}
got=$(budget)
[ "$got" = "41 0 41" ] && lfs_ok "default budget: all 41 candidates typed at listing, 41 header reads" ||
	lfs_fail "default budget: typed/untyped/reads = $got"
got=$(budget -o list_classify=10)
[ "$got" = "10 31 10" ] && lfs_ok "list_classify=10: 10 typed, 31 untyped, 10 header reads" ||
	lfs_fail "list_classify=10: typed/untyped/reads = $got"
lfs_finish
