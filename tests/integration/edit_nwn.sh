#!/bin/bash
# Issue 5's "done when" through a real mount: editing one vertex of an NWN
# binary's meshes/<node>.obj with vim (defaults: swap, 4913 probe, rename to
# backup, fsync) rewrites the source binary exactly as `legacyfs-convert
# apply` does with the same edited text — the library path whose unit test
# (test_nwn_apply.c) proves that only that vertex and its derived values
# (face planes, bounds, average, radius, area) change. Also model.mdl: an
# unedited :wq leaves the binary untouched (bytes and mtime).
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
command -v vim >/dev/null || lfs_skip "vim missing"
lfs_workdir edit_nwn
MODEL=$LFS_CORPUS/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl/it_torch_000.mdl
[ -f "$MODEL" ] || lfs_skip "it_torch_000.mdl not in the corpus"
SRC="$WORK/src"
MNT="$WORK/mnt"
export HOME="$WORK/home" LANG=C.UTF-8
mkdir -p "$SRC" "$HOME"
cp "$MODEL" "$SRC/it_torch_000.mdl"
chmod 644 "$SRC/it_torch_000.mdl"
cp "$SRC/it_torch_000.mdl" "$WORK/before.mdl"
lfs_mount "$SRC" "$MNT"
V="$MNT/it_torch_000.mdl"

# no-op save of model.mdl
m0=$(stat -c %Y.%y "$SRC/it_torch_000.mdl")
timeout 60 vim -N -u DEFAULTS -es -c wq "$V/model.mdl" </dev/null || lfs_fail "vim :wq on model.mdl"
cmp -s "$WORK/before.mdl" "$SRC/it_torch_000.mdl" && [ "$(stat -c %Y.%y "$SRC/it_torch_000.mdl")" = "$m0" ] &&
	lfs_ok "unedited model.mdl save leaves the binary untouched" ||
	lfs_fail "unedited model.mdl save changed the binary"

# one vertex through the OBJ
timeout 60 vim -N -u DEFAULTS -es -c '/^v /s/^v \(\S\+\) /v 0.5 /' -c wq "$V/meshes/Mesh02.obj" </dev/null ||
	lfs_fail "vim save of meshes/Mesh02.obj"
cp "$V/meshes/Mesh02.obj" "$WORK/edited.obj"
grep -q '^v 0.5 ' "$WORK/edited.obj" && lfs_ok "the view shows the edited vertex" ||
	lfs_fail "edited vertex not in the view"
lfs_umount "$MNT"
"$CONVERT" apply "$WORK/before.mdl" meshes/Mesh02.obj "$WORK/edited.obj" -o "$WORK/expected.mdl" ||
	lfs_fail "legacyfs-convert apply failed"
cmp -s "$WORK/expected.mdl" "$SRC/it_torch_000.mdl" &&
	lfs_ok "source binary equals legacyfs-convert apply output" ||
	lfs_fail "source binary differs from legacyfs-convert apply output"
n=$(cmp -l "$WORK/before.mdl" "$SRC/it_torch_000.mdl" | wc -l)
[ "$n" -gt 0 ] && [ "$n" -lt 200 ] && lfs_ok "$n bytes changed" || lfs_fail "$n bytes changed"
[ "$(ls "$SRC")" = "it_torch_000.mdl" ] && lfs_ok "no scratch file leaked into SOURCE" ||
	lfs_fail "SOURCE holds: $(ls "$SRC")"
lfs_finish
