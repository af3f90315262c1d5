#!/bin/bash
# A structural edit through the mount takes part numbers from the supermodel
# in SOURCE (docs/nwn-compile.md "Structural edits"): c_aribeth's supermodel
# is a_fa, beside it. Two saves with `sed -i` through model.mdl: remove the
# leaf `Impact`, then add it back as a new node under `torso_g`. The new node
# must take a_fa's part number for `Impact` (the compiler matches by name
# along the tree, [N §3.8], key in src/formats/nwn/nwn_mdl.h); without the supermodel it would get -1. The
# final source equals `legacyfs-convert apply` of the same two texts.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir edit_supermodel
D=$LFS_CORPUS/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl
[ -f "$D/c_aribeth.mdl" ] && [ -f "$D/a_fa.mdl" ] || lfs_skip "c_aribeth/a_fa not in the corpus"
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"
cp "$D/c_aribeth.mdl" "$D/a_fa.mdl" "$SRC/"
chmod 644 "$SRC"/*.mdl
cp "$SRC/c_aribeth.mdl" "$WORK/before.mdl"
want=$("$CONVERT" cat "$SRC/a_fa.mdl" model.mdl | awk '$1 == "node" && $3 == "Impact" { f = 1; next }
	f && $1 == "#part-number" { print $2; exit }')
[ -n "$want" ] || lfs_die "a_fa has no Impact part number"
[ "$want" -ge 0 ] || lfs_die "a_fa's Impact has part number $want"

lfs_mount "$SRC" "$MNT"
V="$MNT/c_aribeth.mdl"
timeout 60 sed -i '/^node dummy Impact$/,/^endnode$/d' "$V/model.mdl" || lfs_fail "sed -i (remove)"
grep -q "^node dummy Impact$" "$V/model.mdl" && lfs_fail "Impact still in model.mdl after removal"
cp "$V/model.mdl" "$WORK/edited1.mdl"
timeout 60 sed -i 's/^endmodelgeom c_aribeth/node dummy Impact\n  parent torso_g\nendnode\n&/' "$V/model.mdl" ||
	lfs_fail "sed -i (add back)"
cp "$V/model.mdl" "$WORK/edited.mdl"
got=$(awk '$1 == "node" && $3 == "Impact" { f = 1; next } f && $1 == "#part-number" { print $2; exit }' "$V/model.mdl")
[ "$got" = "$want" ] && lfs_ok "new node Impact has the supermodel's part number $want" ||
	lfs_fail "new node Impact has part number '$got', supermodel says $want"
[ -f "$V/errors.txt" ] && lfs_fail "errors.txt: $(cat "$V/errors.txt")"
lfs_umount "$MNT"
cp "$SRC/a_fa.mdl" "$WORK/a_fa.mdl"
"$CONVERT" apply "$WORK/before.mdl" model.mdl "$WORK/edited1.mdl" -o "$WORK/step1.mdl" ||
	lfs_fail "legacyfs-convert apply (remove) failed"
sed 's/^endmodelgeom c_aribeth/node dummy Impact\n  parent torso_g\nendnode\n&/' \
	<("$CONVERT" cat --root "$WORK" "$WORK/step1.mdl" model.mdl) >"$WORK/edited2.mdl"
"$CONVERT" apply "$WORK/step1.mdl" model.mdl "$WORK/edited2.mdl" -o "$WORK/expected.mdl" ||
	lfs_fail "legacyfs-convert apply (add back) failed"
cmp -s "$WORK/expected.mdl" "$SRC/c_aribeth.mdl" && lfs_ok "source equals legacyfs-convert apply" ||
	lfs_fail "source differs from legacyfs-convert apply"
lfs_finish
