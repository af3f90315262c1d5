#!/bin/bash
# Lazy views (docs/mount.md "Listing is cheap"): a SOURCE made at test time
# from corpus binaries, two of them broken after a valid header (an NWN
# binary cut short with its header sizes patched to add up, a NOD whose body
# after the header is 0xff):
#  - listing the folder (`ls -l`, `find -maxdepth 1`) decodes nothing: every
#    model and both broken files are folders, /.legacyfs/errors stays empty;
#  - a model folder reports st_nlink 1, and GNU find still walks every view:
#    `find MNT | wc -l` equals the count of a `cp -r` copy of the mount;
#  - `cp -r` of the mount keeps the broken files' bytes: BROKEN/BROKEN is the
#    original file (read-only), BROKEN/README.txt starts with
#    "BROKEN: error: <decoder message>", and /.legacyfs/errors names both;
#  - a good model's views are built on the first lookup inside its folder and
#    equal legacyfs-convert's.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_lazy
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"

mapfile -t bins < <(sed 's|^tree/|'"$LFS_CORPUS"'/nwn/tree/|' "$LFS_CORPUS/nwn/binary.txt")
for i in 0 1 2 3; do cp "${bins[$i]}" "$SRC/m$i.mdl"; done
NOD=$(find "$LFS_CORPUS/nod" -type f -iname '*.nod' | LC_ALL=C sort | head -1)
[ -n "$NOD" ] || lfs_skip "no .nod in the corpus"
cp "$NOD" "$SRC/good.nod"
ascii=$(sed 's|^tree/|'"$LFS_CORPUS"'/nwn/tree/|' "$LFS_CORPUS/nwn/ascii.txt" | head -1)
cp "$ascii" "$SRC/ascii.mdl"

# NWN: first 60%, header sizes made to add up again (u32[1] = size - 12, u32[2] = 0)
B=${bins[5]}
size=$(stat -c %s "$B")
cut=$((size * 6 / 10))
head -c "$cut" "$B" >"$SRC/bad.mdl"
python3 - "$SRC/bad.mdl" "$cut" <<'PY'
import struct, sys
p, cut = sys.argv[1], int(sys.argv[2])
d = bytearray(open(p, 'rb').read())
struct.pack_into('<II', d, 4, cut - 12, 0)
open(p, 'wb').write(d)
PY
# NOD: header kept (version, material names, counts), the rest 0xff
python3 - "$NOD" "$SRC/bad.nod" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
h = 8 + struct.unpack_from('<I', d, 4)[0] * 32 + 42
d[h:] = b'\xff' * (len(d) - h)
open(sys.argv[2], 'wb').write(d)
PY
for f in bad.mdl bad.nod; do
	set +e
	"$CONVERT" list "$SRC/$f" >/dev/null 2>&1
	rc=$?
	set -e
	[ "$rc" = 1 ] || lfs_die "precondition: legacyfs-convert list $f should fail to decode (exit 1), got $rc"
	cp "$SRC/$f" "$WORK/$f.orig"
done

lfs_mount "$SRC" "$MNT"

# 1. listing decodes nothing
ls -l "$MNT" >"$WORK/ls"
for f in m0.mdl m1.mdl m2.mdl m3.mdl good.nod bad.mdl bad.nod; do
	grep -q "^d.* $f\$" "$WORK/ls" && lfs_ok "ls -l: $f is a folder" || lfs_fail "ls -l: $f is not a folder: $(grep " $f\$" "$WORK/ls")"
done
grep -q '^-.* ascii\.mdl$' "$WORK/ls" && lfs_ok "ls -l: the ASCII model is a file" || lfs_fail "ls -l: ascii.mdl"
find "$MNT" -maxdepth 1 -type d >/dev/null
[ ! -s "$MNT/.legacyfs/errors" ] && lfs_ok "listing decoded nothing (errors empty)" ||
	lfs_fail "listing decoded: errors: $(cat "$MNT/.legacyfs/errors")"
[ "$(stat -c %h "$MNT/bad.mdl")" = 1 ] && [ "$(stat -c %h "$MNT/m0.mdl")" = 1 ] &&
	lfs_ok "model folders report st_nlink 1" || lfs_fail "model folder nlink: $(stat -c %h "$MNT/m0.mdl")"

# 2. views on the first lookup inside, equal to legacyfs-convert's
"$CONVERT" cat --root "$SRC" "$SRC/m0.mdl" model.mdl >"$WORK/m0.expect"
cmp -s "$MNT/m0.mdl/model.mdl" "$WORK/m0.expect" && lfs_ok "m0.mdl/model.mdl as legacyfs-convert" || lfs_fail "m0.mdl/model.mdl differs"

# 3. cp -r keeps every byte; find walks what cp copies
cp -r "$MNT" "$WORK/copy"
for f in bad.mdl bad.nod; do
	cmp -s "$WORK/copy/$f/$f" "$WORK/$f.orig" && lfs_ok "cp -r: $f/$f is the original file" || lfs_fail "cp -r: $f/$f lost bytes"
	head -1 "$WORK/copy/$f/README.txt" | grep -q "^$f: error: ..*" && lfs_ok "$f/README.txt: $(head -1 "$WORK/copy/$f/README.txt" | cut -c1-100)" ||
		lfs_fail "$f/README.txt: $(head -3 "$WORK/copy/$f/README.txt")"
	grep -q "^$f: ..*" "$MNT/.legacyfs/errors" && lfs_ok "errors names $f" || lfs_fail "errors lacks $f"
	[ "$(ls "$MNT/$f" | tr '\n' ' ')" = "README.txt $f " ] || lfs_fail "$f folder holds: $(ls "$MNT/$f")"
	[ "$(stat -c %a "$MNT/$f/$f")" = "$(stat -c %a "$SRC/$f" | tr 2367 0145)" ] ||
		lfs_fail "$f/$f mode $(stat -c %a "$MNT/$f/$f"): not the source's read bits"
done
cmp -s "$WORK/copy/ascii.mdl" "$SRC/ascii.mdl" || lfs_fail "cp -r: ascii.mdl"
nm=$(find "$MNT" | wc -l)
nc=$(find "$WORK/copy" | wc -l)
# the copy has no /.legacyfs (cp -r copies it: count it on both sides)
[ "$nm" = "$nc" ] && lfs_ok "find walks the mount: $nm entries, as the copy" || lfs_fail "find: $nm entries in the mount, $nc in the copy"
[ "$(find "$MNT" -type d | wc -l)" = "$(find "$WORK/copy" -type d | wc -l)" ] || lfs_fail "find -type d counts differ"

lfs_umount "$MNT"
lfs_finish
