#!/bin/bash
# ASCII NWN models in the mount (issue 26, docs/mount.md "ASCII models"):
# without an option an ASCII X.mdl is a plain file, byte for byte; with
# -o ascii_views it is a folder X.mdl/ whose model.mdl is the file's own
# bytes, with meshes/*.obj, anims/ CSVs and thumbnail.png derived from the
# compiled model (read-only: EROFS). A save of model.mdl that compiles lands
# in SOURCE as that very text (cp, sed -i); one that does not is refused with
# file:line:col in errors.txt and SOURCE is untouched.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_ascii
ax=$(grep -m1 '/Textures/c_a_ox\.mdl$' "$LFS_CORPUS/nwn/ascii.txt") || lfs_skip "no ASCII c_a_ox.mdl in the corpus"
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"
cp "$LFS_CORPUS/nwn/$ax" "$SRC/c_a_ox.mdl"
chmod 644 "$SRC/c_a_ox.mdl"
cp "$SRC/c_a_ox.mdl" "$WORK/orig.mdl"

# default: a plain file
lfs_mount "$SRC" "$MNT"
[ -f "$MNT/c_a_ox.mdl" ] && cmp -s "$MNT/c_a_ox.mdl" "$WORK/orig.mdl" &&
	lfs_ok "without -o ascii_views: c_a_ox.mdl is the plain file" ||
	lfs_fail "without -o ascii_views: c_a_ox.mdl is not the plain file"
lfs_umount "$MNT"

lfs_mount "$SRC" "$MNT" -o ascii_views
V="$MNT/c_a_ox.mdl"
[ -d "$V" ] && lfs_ok "-o ascii_views: c_a_ox.mdl/ is a folder" || lfs_die "-o ascii_views: c_a_ox.mdl is not a folder"
cmp -s "$V/model.mdl" "$WORK/orig.mdl" && lfs_ok "model.mdl = the file's bytes" ||
	lfs_fail "model.mdl differs from the ASCII file"
[ "$(stat -c %s "$V/model.mdl")" = "$(stat -c %s "$WORK/orig.mdl")" ] || lfs_fail "model.mdl st_size is not the file's"
obj=$(ls "$V/meshes/" | grep -m1 '\.obj$')
[ -n "$obj" ] && grep -q '^f ' "$V/meshes/$obj" && lfs_ok "meshes/$obj has faces" || lfs_fail "no mesh OBJ with faces"
[ "$(stat -c %a "$V/meshes/$obj")" = 444 ] && lfs_ok "meshes/$obj is 0444" || lfs_fail "meshes/$obj mode $(stat -c %a "$V/meshes/$obj")"
csv=$(find "$V/anims" -name '*.csv' | head -1)
[ -n "$csv" ] && [ -s "$csv" ] && lfs_ok "anims/ has CSVs" || lfs_fail "no anims/ CSV"
head -c 4 "$V/thumbnail.png" | od -An -tx1 | tr -d ' \n' | grep -qx 89504e47 && lfs_ok "thumbnail.png is a PNG" ||
	lfs_fail "thumbnail.png is not a PNG"
"$CONVERT" thumbnail -s 256 --root "$SRC" "$SRC/c_a_ox.mdl" "$WORK/cli.png" || lfs_fail "legacyfs-convert thumbnail failed"
cmp -s "$V/thumbnail.png" "$WORK/cli.png" && lfs_ok "thumbnail.png = legacyfs-convert thumbnail" ||
	lfs_fail "thumbnail.png differs from legacyfs-convert thumbnail"
err=$( (printf 'v 0 0 0\n' >"$V/meshes/$obj") 2>&1) && lfs_fail "a write of meshes/$obj was taken" ||
	{ echo "$err" | grep -q "Read-only file system" && lfs_ok "a write of meshes/$obj: EROFS" ||
		lfs_fail "a write of meshes/$obj: $err"; }
cmp -s "$SRC/c_a_ox.mdl" "$WORK/orig.mdl" || lfs_fail "SOURCE changed by a refused mesh write"

# a good save with cp: the text lands as it is
{ printf '# edited through the mount\n'; cat "$WORK/orig.mdl"; } >"$WORK/good.mdl"
timeout 60 cp "$WORK/good.mdl" "$V/model.mdl" || lfs_fail "cp of a good model.mdl refused"
cmp -s "$SRC/c_a_ox.mdl" "$WORK/good.mdl" && lfs_ok "good save (cp): SOURCE holds the text" ||
	lfs_fail "good save (cp): SOURCE is not the saved text"
cmp -s "$V/model.mdl" "$WORK/good.mdl" || lfs_fail "model.mdl after the save is not the saved text"
# and with sed -i (a new file renamed over the view)
timeout 60 sed -i '1s/^# edited through the mount$/# edited again/' "$V/model.mdl" || lfs_fail "sed -i refused"
sed '1s/^# edited through the mount$/# edited again/' "$WORK/good.mdl" >"$WORK/good2.mdl"
cmp -s "$SRC/c_a_ox.mdl" "$WORK/good2.mdl" && lfs_ok "good save (sed -i): SOURCE holds the text" ||
	lfs_fail "good save (sed -i): SOURCE is not the saved text"
head -c 64 "$SRC/c_a_ox.mdl" | grep -q '^# edited again' || lfs_fail "SOURCE is not plain text after the save"
[ -f "$V/errors.txt" ] && lfs_fail "errors.txt after good saves: $(cat "$V/errors.txt")"

# a bad save: a coordinate that is not a number; refused, SOURCE untouched
cp "$SRC/c_a_ox.mdl" "$WORK/before.mdl"
awk 'f == 1 { sub(/[0-9-]/, "O"); f = 2 } $1 == "verts" && !f { f = 1 } { print }' "$WORK/before.mdl" >"$WORK/bad.mdl"
cmp -s "$WORK/bad.mdl" "$WORK/before.mdl" && lfs_die "the bad text is not bad"
timeout 60 cp "$WORK/bad.mdl" "$V/model.mdl" 2>/dev/null && lfs_fail "a bad model.mdl was taken"
cmp -s "$SRC/c_a_ox.mdl" "$WORK/before.mdl" && lfs_ok "bad save refused, SOURCE untouched" ||
	lfs_fail "bad save changed SOURCE"
grep -Eq '^model\.mdl:[0-9]+:[0-9]+: error: ' "$V/errors.txt" 2>/dev/null && lfs_ok "errors.txt: $(head -1 "$V/errors.txt")" ||
	lfs_fail "errors.txt has no model.mdl:line:col error"
lfs_umount "$MNT"
lfs_finish
