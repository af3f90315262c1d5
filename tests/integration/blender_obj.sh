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
#    model (other meshes, animations) is identical.
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
[ -f "$SATYR" ] && [ -f "$TILE" ] || lfs_skip "corpus models not found"

lfs_workdir blender_obj
SRC="$WORK/src"
MNT="$WORK/mnt"
export HOME="$WORK/home"
mkdir -p "$SRC" "$HOME" "$WORK/ref"
cp "$SATYR" "$TILE" "$SRC/"
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

noop c_satyrarcher.mdl meshes/head_g.obj
moved c_satyrarcher.mdl meshes/head_g.obj head_g 0 head_g
noop c_satyrarcher.mdl meshes/head_g.obj cp
noop ttd01_a04_03.mdl model.obj
moved ttd01_a04_03.mdl model.obj rockSH07 5 rockSH07

lfs_umount "$MNT"
lfs_finish
