#!/bin/bash
# Vampire NIL levels in the mount. No NIL file is public, so this test
# GENERATES a source folder at run time (python3, from the layout in
# docs/formats/nil.md; nothing is committed): a level with 4 sectors and
# undocumented bytes between them, a level with no sectors, a level whose
# sector 0 is cut short (decode fails), a v35 (StarCraft: Ghost) header and
# a random file named .nil. Checks: the levels are read-only directories
# X.nil/ whose views equal what legacyfs-convert prints (diff -r against a
# native copy) with model.txt, model.mtl, model.obj and one sectors/<k>.obj
# per located sector; st_size equals the bytes read; the cut level is a
# folder (its header says level) holding its original bytes and README.txt;
# the other files pass through as their original bytes; only the cut level
# is in /.legacyfs/errors.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
lfs_workdir mount_nil
SRC="$WORK/src"
MNT="$WORK/mnt"
NATIVE="$WORK/native"
mkdir -p "$SRC/levels"

python3 - "$SRC" <<'EOF'
import os, random, struct, sys
src = sys.argv[1]
rnd = random.Random(27)

def header(materials, nsectors, version=27):
    b = b"NIL\x10" + struct.pack("<I", version) + bytes(rnd.randrange(256) for _ in range(72))
    b += struct.pack("<3f", 0.25, 0.25, 0.3) + struct.pack("<I", len(materials))
    for m in materials:
        b += m.encode("latin-1").ljust(32, b"\0")
    return b + struct.pack("<I", nsectors)

def plane():
    n = [0.0, 0.0, 0.0]
    n[rnd.randrange(3)] = rnd.choice((-1.0, 1.0))
    return struct.pack("<4f", *n, rnd.uniform(-500, 500))

def sector(nmat, tail):
    b = struct.pack("<I3f", rnd.randrange(4), 0.1, 0.1, 0.1)
    np_ = rnd.randrange(5)
    b += struct.pack("<B", np_) + b"".join(plane() for _ in range(np_))
    ns = rnd.randrange(8)
    b += struct.pack("<H", ns) + b"".join(plane() for _ in range(ns))
    nb = rnd.randrange(6)
    b += struct.pack("<H", nb) + b"".join(struct.pack("<4H", *(rnd.randrange(65536) for _ in range(4))) for _ in range(nb))
    nv = 4 + rnd.randrange(20)
    b += struct.pack("<H", nv) + b"".join(struct.pack("<3f", *(rnd.uniform(-100, 100) for _ in range(3))) for _ in range(nv))
    nw = 3 + rnd.randrange(30)
    base = rnd.randrange(nmat)
    b += struct.pack("<H", nw)
    for _ in range(nw):
        b += struct.pack("<HH4B4f", rnd.randrange(nv), base, 200, 190, 180, 255,
                         *(rnd.uniform(-4, 4) for _ in range(4)))
    return b + bytes(rnd.randrange(256) for _ in range(tail))

mats = ["London\\SBIwall1_2_L", "London\\SBIfloor1_L", "New_York\\SWfloor1_2_NY"]
with open(os.path.join(src, "levels", "l1_test.nil"), "wb") as f:
    f.write(header(mats, 4) + b"".join(sector(len(mats), rnd.randrange(300)) for _ in range(4)))
with open(os.path.join(src, "levels", "empty.nil"), "wb") as f:
    f.write(header(mats[:1], 0) + bytes(range(40)))
# NumSectors 1 and 50 bytes after the header: recognised, but sector 0's
# 4 sector planes (64 bytes) run past the end of the file
cut = header(mats, 1) + struct.pack("<I3fB", 0, 0.1, 0.1, 0.1, 4) + b"".join(plane() for _ in range(4))
with open(os.path.join(src, "levels", "cut.nil"), "wb") as f:
    f.write(cut[: len(header(mats, 1)) + 50])
with open(os.path.join(src, "ghost.nil"), "wb") as f:
    f.write(header(mats, 0, version=35) + bytes(64))
with open(os.path.join(src, "random.nil"), "wb") as f:
    f.write(bytes(rnd.randrange(256) for _ in range(5000)))
EOF

lfs_native_copy "$SRC" "$NATIVE"
lfs_mount "$SRC" "$MNT"

if diff -r -x .legacyfs -x README.txt "$NATIVE" "$MNT" >"$WORK/diff.out" 2>&1; then lfs_ok "diff -r"; else
	head -20 "$WORK/diff.out" >&2
	lfs_fail "diff -r mount vs native copy"
fi

L="$MNT/levels/l1_test.nil"
[ -d "$L" ] || lfs_die "levels/l1_test.nil is not a directory"
for v in model.txt model.mtl model.obj sectors/0.obj sectors/1.obj sectors/2.obj sectors/3.obj; do
	[ -f "$L/$v" ] && lfs_ok "l1_test.nil/$v" || lfs_fail "l1_test.nil/$v missing"
done
[ ! -e "$L/sectors/4.obj" ] || lfs_fail "a fifth sector appeared"
[ "$(grep -c '^node sector ' "$L/model.txt")" = 4 ] && lfs_ok "model.txt: 4 sectors" || lfs_fail "model.txt sector count"
[ "$(grep -c '^o sector' "$L/model.obj")" = 4 ] && lfs_ok "model.obj: 4 objects" || lfs_fail "model.obj object count"
grep -q '^newmtl London\\SBIwall1_2_L$' "$L/model.mtl" && lfs_ok "model.mtl names" || lfs_fail "model.mtl lacks a material"
for v in "$L"/model.txt "$L"/model.obj "$L"/sectors/0.obj; do
	case $(stat -c %A "$v") in *w*) lfs_fail "$v is writable" ;; *) lfs_ok "$(basename "$v") read-only" ;; esac
done
[ -f "$MNT/levels/empty.nil/model.txt" ] && grep -q '^trailer 40$' "$MNT/levels/empty.nil/model.txt" &&
	lfs_ok "empty.nil: trailer" || lfs_fail "empty.nil: no trailer in model.txt"
[ ! -e "$MNT/levels/empty.nil/sectors" ] || lfs_fail "empty.nil has a sectors folder"

for f in ghost.nil random.nil; do
	if [ -f "$MNT/$f" ] && cmp -s "$SRC/$f" "$MNT/$f"; then lfs_ok "$f passes through"; else
		lfs_fail "$f is not its original bytes"
	fi
done
# the cut level looks like a level by its header: a folder with its bytes and README.txt
if [ -d "$MNT/levels/cut.nil" ] && cmp -s "$SRC/levels/cut.nil" "$MNT/levels/cut.nil/cut.nil"; then
	lfs_ok "levels/cut.nil keeps its bytes in its folder"
else
	lfs_fail "levels/cut.nil/cut.nil is not its original bytes"
fi
grep -q '^cut\.nil: error: ' "$MNT/levels/cut.nil/README.txt" && lfs_ok "cut.nil/README.txt names the error" ||
	lfs_fail "cut.nil/README.txt: $(head -2 "$MNT/levels/cut.nil/README.txt")"
grep -qF "levels/cut.nil:" "$MNT/.legacyfs/errors" && lfs_ok "cut.nil in errors" || lfs_fail "cut.nil missing from /.legacyfs/errors"
for f in ghost.nil random.nil; do
	! grep -qF "$f:" "$MNT/.legacyfs/errors" && lfs_ok "$f not an error" || lfs_fail "$f listed as an error"
done

(cd "$MNT" && find . -path ./.legacyfs -prune -o -type f -exec stat -c '%s %n' {} + | sort -k2) >"$WORK/size.stat"
(cd "$MNT" && find . -path ./.legacyfs -prune -o -type f -exec cksum {} + | awk '{ s=$2; $1=""; $2=""; sub(/^  /, ""); print s, $0 }' | sort -k2) >"$WORK/size.read"
cmp -s "$WORK/size.stat" "$WORK/size.read" && lfs_ok "st_size equals bytes read" || lfs_fail "st_size differs from bytes read"

lfs_umount "$MNT"
lfs_finish
