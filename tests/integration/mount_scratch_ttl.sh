#!/bin/bash
# -o scratch_ttl=S (docs/editing.md "Scratch files", issue 26): a scratch
# material library an exporter writes into a model folder (Blender's
# meshes/*.mtl beside its OBJ) is dropped once unchanged for S seconds,
# the kernel's entries with it (it leaves `ls`); other scratch files (notes,
# editor backups, *.rejected texts) stay until unmount.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_scratch_ttl
D=$LFS_CORPUS/nwn/tree/rollnw/tests/test_data/user/development
[ -f "$D/c_bodak.mdl" ] || lfs_skip "c_bodak not in the corpus"
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"
cp "$D/c_bodak.mdl" "$SRC/"
chmod 644 "$SRC/c_bodak.mdl"
lfs_mount "$SRC" "$MNT" -o scratch_ttl=1
M="$MNT/c_bodak.mdl"
printf 'newmtl skin\nKd 0.8 0.8 0.8\n' >"$M/meshes/head_g.mtl" || lfs_fail "write meshes/head_g.mtl"
printf 'newmtl skin\n' >"$M/export.mtl" || lfs_fail "write export.mtl"
echo "my notes" >"$M/notes.txt" || lfs_fail "write notes.txt"
ls "$M/meshes" | grep -qx head_g.mtl && lfs_ok "the scratch .mtl is listed after the write" ||
	lfs_fail "meshes/head_g.mtl not listed after the write"
gone=0
for _ in $(seq 150); do
	if ! ls "$M/meshes" | grep -qx head_g.mtl && ! ls "$M" | grep -qx export.mtl; then
		gone=1
		break
	fi
	sleep 0.2
done
[ $gone = 1 ] && lfs_ok "scratch .mtl files left the listing" ||
	lfs_fail "scratch .mtl still listed: $(ls "$M" "$M/meshes" | grep mtl)"
[ -e "$M/meshes/head_g.mtl" ] && lfs_fail "meshes/head_g.mtl still reachable by name"
[ "$(cat "$M/notes.txt" 2>/dev/null)" = "my notes" ] && lfs_ok "other scratch files stay" ||
	lfs_fail "notes.txt went"
ls "$M" | grep -qx model.mtl && lfs_ok "the model.mtl view stays" || lfs_fail "model.mtl view gone"
grep -q "head_g.mtl: scratch file unchanged for 1 s: dropped" "$MNT.log" && lfs_ok "the log says so" ||
	lfs_fail "no drop in the log"
lfs_umount "$MNT"
[ -z "$(find "$SRC" -name '*.mtl')" ] || lfs_fail "a scratch file reached SOURCE"
lfs_finish
