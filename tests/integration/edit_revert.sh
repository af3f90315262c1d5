#!/bin/bash
# Issue 10 part 2's "done when" through a real mount: for every corpus NWN
# binary with meshes (the game's and the original nwnmdlcomp's), vim (ex mode) moves one vertex of a meshes/<node>.obj
# view and saves, then puts the original OBJ text back and saves; the source
# binary must be byte-identical to its original copy. That needs the
# derived values (face planes, bounds, average, radius, area, AABB boxes) to
# come back bit for bit (docs/derived-values.md; unit test: nwn_derive).
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
command -v vim >/dev/null || lfs_skip "vim missing"
lfs_workdir edit_revert
SRC="$WORK/src"
MNT="$WORK/mnt"
export HOME="$WORK/home" LANG=C.UTF-8
mkdir -p "$SRC" "$HOME" "$WORK/orig"
# the binaries whose geometry has mesh nodes (MANIFEST: path, ..., node types)
awk -F'\t' 'NR > 1 && $7 == "binary" && $9 ~ /(trimesh|skin|dangly|aabb)/ { print $1 }' \
	"$LFS_CORPUS/nwn/MANIFEST.tsv" | sort >"$WORK/rel"
grep -qxFf "$WORK/rel" "$LFS_CORPUS/nwn/binary.txt" || lfs_skip "no binary with meshes in the corpus"
sed "s|^|$LFS_CORPUS/nwn/|" "$WORK/rel" >"$WORK/list"
# and the meshes compiled by the original (Windows) nwnmdlcomp, whose
# arithmetic the apply does not reproduce: the memo of seen derived values
# brings their stored bits back
NMC="$LFS_CORPUS/nwn/nwnmdlcomp-meshes"
[ -f "$NMC/binary.txt" ] && sed "/^$/d; s|^|$NMC/|" "$NMC/binary.txt" >>"$WORK/list"
i=0
while read -r path; do
	i=$((i + 1))
	mkdir -p "$SRC/$i" "$WORK/orig/$i"
	cp "$path" "$SRC/$i/"
	chmod 644 "$SRC/$i"/*
	cp "$SRC/$i"/* "$WORK/orig/$i/"
done <"$WORK/list"
lfs_mount "$SRC" "$MNT"
models=0
same=0
for d in "$SRC"/*/; do
	n=$(basename "$d")
	f=$(ls "$d")
	# the first OBJ view with a vertex (a mesh node may have none)
	obj=
	for o in $(ls "$MNT/$n/$f/meshes/" 2>/dev/null | grep '\.obj$'); do
		grep -q '^v ' "$MNT/$n/$f/meshes/$o" && obj=$o && break
	done
	[ -n "$obj" ] || continue
	models=$((models + 1))
	V="$MNT/$n/$f/meshes/$obj"
	cp "$V" "$WORK/view.obj"
	timeout 60 vim -N -u DEFAULTS -es -c '/^v /s/^v \(\S\+\) /v 0.5 /' -c wq "$V" </dev/null ||
		lfs_fail "$f: vim save of the edited $obj"
	if cmp -s "$WORK/orig/$n/$f" "$SRC/$n/$f"; then
		lfs_fail "$f: moving a vertex of $obj did not change the binary"
	fi
	timeout 60 vim -N -u DEFAULTS -es -c '%d' -c "0r $WORK/view.obj" -c wq "$V" </dev/null ||
		lfs_fail "$f: vim save of the restored $obj"
	if cmp -s "$WORK/orig/$n/$f" "$SRC/$n/$f"; then
		same=$((same + 1))
	else
		lfs_fail "$f: after edit + revert of $obj the binary differs in $(cmp -l "$WORK/orig/$n/$f" "$SRC/$n/$f" | wc -l) bytes"
	fi
done
lfs_umount "$MNT"
[ "$models" -gt 0 ] && lfs_ok "$same of $models models byte-identical after edit + revert" ||
	lfs_fail "no model with a mesh OBJ view"
lfs_finish
