#!/bin/bash
# Blender round trips through a writable mount (issue 10, part 3): Debian's
# `blender`, run headless, imports an OBJ view with its File-menu importer
# (bpy.ops.wm.obj_import) and exports it straight back into the mount with
# the exporter (bpy.ops.wm.obj_export), default settings both ways
# (tests/integration/blender_obj.py). Checks, for meshes/head_g.obj of
# c_satyrarcher and model.obj of the tile ttd01_a04_03:
#  - no edit: SOURCE is byte-identical and untouched (bytes, mtime, inode);
#  - one vertex moved: the two binaries, decoded to model.mdl, differ in
#    that vertex's line only, in its x value only; every other view of the
#    model (other meshes, animations) is identical;
#  - one face deleted (meshes/head_g.obj; twice, the second leaving a vertex
#    without a face): every other face keeps its corners' bits, and the
#    result is the binary of the same deletion in model.mdl.
# And for meshes/Chicken_body.0.obj of the NOD c_a_chicken and
# meshes/Bat_Lbasewing.obj of the SOD c_a_bat_1.93: no edit leaves SOURCE
# untouched; one vertex moved changes that vertex's line of model.txt only,
# in its x value only, and no other view.
# Rule that makes it work: docs/formats/obj-csv.md, "Saving OBJ from other
# programs". Exit 77 when FUSE, blender or the corpus is missing.
. "$(dirname "$0")/lib.sh"

lfs_require_fuse
lfs_require_corpus
command -v blender >/dev/null 2>&1 || lfs_skip "blender not installed"
command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
DEV="$LFS_CORPUS/nwn/tree/rollnw/tests/test_data"
SATYR="$DEV/user/development/c_satyrarcher.mdl"
TILE="$DEV/renderer/nwn_dump_user/development/mdl/ttd01_a04_03.mdl"
NOD="$LFS_CORPUS/nod/c_a_chicken.nod"
SOD="$LFS_CORPUS/sod/c_a_bat_1.93.sod"
[ -f "$SATYR" ] && [ -f "$TILE" ] && [ -f "$NOD" ] && [ -f "$SOD" ] || lfs_skip "corpus models not found"

lfs_workdir blender_obj
SRC="$WORK/src"
MNT="$WORK/mnt"
export HOME="$WORK/home"
mkdir -p "$SRC" "$HOME" "$WORK/ref"
cp "$SATYR" "$TILE" "$NOD" "$SOD" "$SRC/"
chmod 0644 "$SRC"/*
cp -p "$SRC"/* "$WORK/ref/"
BLPY="$LFS_SOURCE_ROOT/tests/integration/blender_obj.py"

# blender_rt SRC DST [OBJECT VERTEX DX]: one Blender import + export.
blender_rt() {
	timeout -k 5 120 blender -b --factory-startup --python-exit-code 1 --python "$BLPY" -- "$@" \
		>"$WORK/blender.log" 2>&1 || {
		cat "$WORK/blender.log" >&2
		return 1
	}
}

lfs_mount "$SRC" "$MNT"

# noop MODEL VIEW [cp]: export without an edit straight over the view (with
# cp: to a scratch file outside the mount, then `cp` over the view).
noop() {
	local model=$1 view=$2 f="$SRC/$1" st0
	st0=$(stat -c '%y %i %s' "$f")
	if [ "${3:-}" = cp ]; then
		blender_rt "$MNT/$model/$view" "$WORK/scratch.obj" && cp "$WORK/scratch.obj" "$MNT/$model/$view" ||
			{ lfs_fail "$model/$view: blender or cp failed"; return; }
	else
		blender_rt "$MNT/$model/$view" "$MNT/$model/$view" || { lfs_fail "$model/$view: blender failed"; return; }
	fi
	if cmp -s "$f" "$WORK/ref/$model" && [ "$(stat -c '%y %i %s' "$f")" = "$st0" ]; then
		lfs_ok "$model/$view: Blender round trip without an edit leaves SOURCE untouched"
	else
		lfs_fail "$model/$view: no-op Blender save changed SOURCE ($(cmp -l "$f" "$WORK/ref/$model" | wc -l) bytes; $st0 -> $(stat -c '%y %i %s' "$f"))"
	fi
	[ ! -e "$MNT/$model/errors.txt" ] || lfs_fail "$model: errors.txt: $(head -c 400 "$MNT/$model/errors.txt")"
}

# moved MODEL VIEW OBJECT VERTEX NODE: move vertex VERTEX of OBJECT by 0.01
# in x; export to a scratch file, then also straight into the mount, and
# compare the decoded binaries view by view.
moved() {
	local model=$1 view=$2 obj=$3 vert=$4 node=$5 f="$SRC/$1"
	blender_rt "$MNT/$model/$view" "$MNT/$model/$view" "$obj" "$vert" 0.01 ||
		{ lfs_fail "$model/$view: blender failed"; return; }
	if [ -e "$MNT/$model/errors.txt" ]; then
		lfs_fail "$model/$view: save refused: $(head -c 400 "$MNT/$model/errors.txt")"
		return
	fi
	rm -rf "$WORK/x0" "$WORK/x1"
	"$CONVERT" extract "$WORK/ref/$model" "$WORK/x0"
	"$CONVERT" extract "$f" "$WORK/x1"
	rm -f "$WORK"/x[01]/thumbnail.png "$WORK"/x[01]/model.obj "$WORK"/x[01]/meshes/"$node".obj
	# every view but model.mdl (and the edited mesh, model.obj, thumbnail)
	local other
	other=$(diff -rq -x model.mdl "$WORK/x0" "$WORK/x1" || true)
	[ -z "$other" ] || lfs_fail "$model/$view: other views changed: $other"
	# model.mdl: one line, the vertex's, with only its x value changed
	python3 - "$WORK/x0/model.mdl" "$WORK/x1/model.mdl" "$node" "$vert" <<'PY' || lfs_fail "$model/$view: model.mdl differs beyond vertex $vert of $node"
import sys
a = open(sys.argv[1]).read().split("\n")
b = open(sys.argv[2]).read().split("\n")
node, vert = sys.argv[3], int(sys.argv[4])
if len(a) != len(b):
    sys.exit("line counts differ: %d %d" % (len(a), len(b)))
diff = [i for i in range(len(a)) if a[i] != b[i]]
# the line of vertex VERT in NODE's verts list
cur, want = None, None
for i, l in enumerate(a):
    t = l.split()
    if t[:1] == ["node"]:
        cur = t[2] if len(t) > 2 else None
    elif cur == node and t[:1] == ["verts"]:
        want = i + 1 + vert
        break
if diff != [want]:
    sys.exit("changed lines %s, expected only %s (vertex %d of %s)" % (diff[:10], want, vert, node))
x0, x1 = a[want].split(), b[want].split()
if x0[1:] != x1[1:] or abs(float(x1[0]) - float(x0[0]) - 0.01) > 2e-6:
    sys.exit("vertex line %r -> %r: expected x + 0.01 only" % (a[want], b[want]))
print("vertex %d of %s: %s -> %s" % (vert, node, a[want].strip(), b[want].strip()))
PY
	lfs_ok "$model/$view: moving vertex $vert of $obj changed only that vertex"
	cp -p "$f" "$WORK/ref/$model"
}

# deleted MODEL VIEW OBJECT FACE NODE LOOSE: delete face FACE of OBJECT in Blender
# (Delete > Faces: a vertex left without a face goes too, so later OBJ
# vertex indices shift) and export straight into the mount. The save lands
# (a structural edit, compiled); model.mdl of the result shows one face
# less, and every other face's corners with the bits they had (position,
# uv, normal: the stored vertices, not Blender's 6 and 4 decimals); its
# vertices are the old ones the kept faces use (values; the compiler drops
# unused vertices and may split a vertex whose faces no longer share an
# edge into copies); and the binary is the one the same deletion made in
# model.mdl gives (the face line and the rows of the vertices only it used:
# LOOSE of them).
deleted() {
	local model=$1 view=$2 obj=$3 face=$4 node=$5 loose=$6 f="$SRC/$1"
	blender_rt "$MNT/$model/$view" "$MNT/$model/$view" --delete-face "$obj" "$face" ||
		{ lfs_fail "$model/$view: blender failed"; return; }
	grep "faces," "$WORK/blender.log" || true
	if [ -e "$MNT/$model/errors.txt" ]; then
		lfs_fail "$model/$view: save refused: $(head -c 400 "$MNT/$model/errors.txt")"
		return
	fi
	cmp -s "$f" "$WORK/ref/$model" && { lfs_fail "$model/$view: the deletion did not land"; return; }
	"$CONVERT" cat "$WORK/ref/$model" model.mdl >"$WORK/d0.mdl"
	"$CONVERT" cat "$f" model.mdl >"$WORK/d1.mdl"
	python3 - "$WORK/d0.mdl" "$WORK/d1.mdl" "$node" "$face" "$WORK/dx.mdl" "$loose" <<'PY' ||
import sys
from collections import Counter

def mesh(lines, node):
    cur, out, at = None, {}, {}
    i = 0
    while i < len(lines):
        t = lines[i].split()
        if t[:1] == ["newanim"]:
            break
        if t[:1] == ["node"]:
            cur = t[2]
        elif cur == node and len(t) == 2 and t[0] in ("verts", "tverts", "normals", "colors", "faces"):
            n = int(t[1])
            out[t[0]] = [lines[i + 1 + k].split() for k in range(n)]
            at[t[0]] = i
            i += n
        i += 1
    return out, at

def corners(m, faces):
    return [tuple((tuple(m["verts"][int(f[k])]), tuple(m["tverts"][int(f[4 + k])]),
                   tuple(m["normals"][int(f[k])])) for k in range(3)) for f in faces]

a_lines = open(sys.argv[1]).read().split("\n")
b_lines = open(sys.argv[2]).read().split("\n")
node, face = sys.argv[3], int(sys.argv[4])
a, at = mesh(a_lines, node)
b, _ = mesh(b_lines, node)
kept = a["faces"][:face] + a["faces"][face + 1:]
if len(b["faces"]) != len(kept):
    sys.exit("faces %d -> %d, expected %d" % (len(a["faces"]), len(b["faces"]), len(kept)))
ca, cb = corners(a, kept), corners(b, b["faces"])
bad = [i for i in range(len(ca)) if ca[i] != cb[i]]
if bad:
    sys.exit("%d kept faces changed, first %d: %s -> %s" % (len(bad), bad[0], ca[bad[0]], cb[bad[0]]))
used = sorted({int(f[k]) for f in kept for k in range(3)})
tup = lambda m, v: (tuple(m["verts"][v]), tuple(m["tverts"][v]), tuple(m["normals"][v]))
old_set = {tup(a, v) for v in used}
new_set = {tup(b, v) for v in range(len(b["verts"]))}
if old_set != new_set:
    sys.exit("vertex values differ: %d new, %d gone" % (len(new_set - old_set), len(old_set - new_set)))
gone = sorted(set(range(len(a["verts"]))) - set(used))
if len(gone) != int(sys.argv[6]):
    sys.exit("%d vertices left without a face (%s), expected %s" % (len(gone), gone, sys.argv[6]))
print("faces %d -> %d; vertices %d -> %d: %d left without a face (%s), %+d by the compiler's vertex split"
      % (len(a["faces"]), len(b["faces"]), len(a["verts"]), len(b["verts"]), len(gone), gone,
         len(b["verts"]) - len(used)))
# the same deletion in model.mdl: face row, rows of the vertices only it used
if any(f[0:3] != f[4:7] for f in a["faces"]):
    sys.exit("the test expects tvert index = vertex index")
drop = set()
for key in ("verts", "tverts", "normals", "colors"):
    if key in at:
        drop |= {at[key] + 1 + v for v in gone}
        a_lines[at[key]] = "  %s %d" % (key, len(a[key]) - len(gone))
a_lines[at["faces"]] = "  faces %d" % len(kept)
drop.add(at["faces"] + 1 + face)
keep_v = [v for v in range(len(a["verts"])) if v not in gone]
remap = {v: i for i, v in enumerate(keep_v)}
for k, f in enumerate(a["faces"]):
    if k != face:
        g = list(f)
        for c in (0, 1, 2, 4, 5, 6):
            g[c] = str(remap[int(f[c])])
        a_lines[at["faces"] + 1 + k] = "    " + " ".join(g)
open(sys.argv[5], "w").write("\n".join(l for i, l in enumerate(a_lines) if i not in drop))
PY
		{ lfs_fail "$model/$view: deleting face $face: model.mdl shows more than that face gone"; return; }
	# The same deletion typed into model.mdl is refused by the round-trip law
	# when the compiler re-splits the mesh's vertices (verts N reads back
	# otherwise: docs/editing.md, "The round-trip law", limits); the oracle
	# is then checked by test_nwn_obj_weld with the format's own apply.
	if ! "$CONVERT" apply "$WORK/ref/$model" model.mdl "$WORK/dx.mdl" -o "$WORK/dx.bin" 2>"$WORK/dx.err"; then
		if grep -q "does not survive the save: reading the view back gives 'verts " "$WORK/dx.err"; then
			lfs_ok "$model/$view: deleting face $face of $obj in Blender kept every other face (the model.mdl deletion is refused by the law: the compiler re-splits vertices)"
		else
			lfs_fail "$model: the model.mdl deletion failed: $(head -c 300 "$WORK/dx.err")"
		fi
		cp -p "$f" "$WORK/ref/$model"
		return
	fi
	if cmp -s "$WORK/dx.bin" "$f"; then
		lfs_ok "$model/$view: deleting face $face of $obj in Blender changed only that face (the binary of the same deletion in model.mdl)"
	else
		lfs_fail "$model/$view: deleting face $face in Blender differs from the same deletion in model.mdl ($(cmp -l "$WORK/dx.bin" "$f" | wc -l) bytes)"
	fi
	cp -p "$f" "$WORK/ref/$model"
}

# moved_txt MODEL VIEW OBJECT VERTEX ANCHOR [verts]: move vertex VERTEX of
# OBJECT by 0.01 in x (NOD, SOD): model.txt changes in one line, the
# vertex's (ANCHOR: the line its list follows; with "verts": the first
# `verts` line after ANCHOR), in its first number (x) only; every other view
# but that mesh's OBJ, model.obj and the thumbnail is identical.
moved_txt() {
	local model=$1 view=$2 obj=$3 vert=$4 anchor=$5 after=${6:-} f="$SRC/$1"
	blender_rt "$MNT/$model/$view" "$MNT/$model/$view" "$obj" "$vert" 0.01 ||
		{ lfs_fail "$model/$view: blender failed"; return; }
	if [ -e "$MNT/$model/errors.txt" ]; then
		lfs_fail "$model/$view: save refused: $(head -c 400 "$MNT/$model/errors.txt")"
		return
	fi
	rm -rf "$WORK/x0" "$WORK/x1"
	"$CONVERT" extract "$WORK/ref/$model" "$WORK/x0"
	"$CONVERT" extract "$f" "$WORK/x1"
	rm -f "$WORK"/x[01]/thumbnail.png "$WORK"/x[01]/model.obj "$WORK"/x[01]/"$view"
	local other
	other=$(diff -rq -x model.txt "$WORK/x0" "$WORK/x1" || true)
	[ -z "$other" ] || lfs_fail "$model/$view: other views changed: $other"
	python3 - "$WORK/x0/model.txt" "$WORK/x1/model.txt" "$anchor" "$vert" "$after" <<'PY' || lfs_fail "$model/$view: model.txt differs beyond vertex $vert"
import sys
a = open(sys.argv[1]).read().split("\n")
b = open(sys.argv[2]).read().split("\n")
anchor, vert, after = sys.argv[3], int(sys.argv[4]), sys.argv[5]
if len(a) != len(b):
    sys.exit("line counts differ: %d %d" % (len(a), len(b)))
at = [i for i, l in enumerate(a) if l.strip() == anchor]
if not at:
    sys.exit("no line %r" % anchor)
i = at[0]
if after:
    i = next(j for j in range(i, len(a)) if a[j].split()[:1] == [after])
want = i + 1 + vert
diff = [k for k in range(len(a)) if a[k] != b[k]]
if diff != [want]:
    sys.exit("changed lines %s, expected only %s (vertex %d)" % ([d + 1 for d in diff[:10]], want + 1, vert))
x0, x1 = a[want].split(), b[want].split()
if x0[1:] != x1[1:] or abs(float(x1[0]) - float(x0[0]) - 0.01) > 2e-6:
    sys.exit("vertex line %r -> %r: expected x + 0.01 only" % (a[want], b[want]))
print("vertex %d: %s -> %s" % (vert, a[want].strip(), b[want].strip()))
PY
	lfs_ok "$model/$view: moving vertex $vert of $obj changed only that vertex"
	cp -p "$f" "$WORK/ref/$model"
}

noop c_satyrarcher.mdl meshes/head_g.obj
moved c_satyrarcher.mdl meshes/head_g.obj head_g 0 head_g
noop c_satyrarcher.mdl meshes/head_g.obj cp
# face 0: other faces still use its vertices (one of them, left on faces
# that no longer share an edge, is split by the compiler); then face 2
# (stored face 3) leaves a vertex without a face, so Blender drops it and
# renumbers the later ones
deleted c_satyrarcher.mdl meshes/head_g.obj head_g 0 head_g 0
deleted c_satyrarcher.mdl meshes/head_g.obj head_g 2 head_g 1
noop ttd01_a04_03.mdl model.obj
moved ttd01_a04_03.mdl model.obj rockSH07 5 rockSH07
# NOD (c_a_chicken) and SOD (c_a_bat, version 1.93): docs/formats/nod.md,
# sod.md "Saving OBJ from Blender"
noop c_a_chicken.nod meshes/Chicken_body.0.obj
moved_txt c_a_chicken.nod meshes/Chicken_body.0.obj Chicken_body.0 3 \
	"# group 0 (meshes/Chicken_body.0.obj): 21 vertices"
noop c_a_bat_1.93.sod meshes/Bat_Lbasewing.obj
moved_txt c_a_bat_1.93.sod meshes/Bat_Lbasewing.obj Bat_Lbasewing 2 "node mesh Bat_Lbasewing" verts

lfs_umount "$MNT"
lfs_finish
