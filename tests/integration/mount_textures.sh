#!/bin/bash
# Textures found the way the game finds them (docs/mount.md "Textures"):
# a model in folder A and its texture in a sibling folder B — model.mtl names
# it relative to the model folder, the path opens through the mount, the
# thumbnail is textured (colour pixels counted, where the untextured one is
# grey); the same texture in a folder outside SOURCE given by -o respath
# (absolute path; `legacyfs-convert --respath` draws the same thumbnail);
# bad respath refused. Archives (haks written by the project's ERF writer,
# lfs-test-erfpack): a loose model whose texture is in a hak names it inside
# the hak's folder and its thumbnail is textured (pixels compared with the
# untextured one); a model inside a hak gets a valid thumbnail.png textured
# from another hak; deleting the texture hak takes map_Kd away (watcher).
# Corpus (skipped without it): the rollnw tree keeps
# textures in sibling tga/ and dds/ folders; its models now name them and
# their thumbnails are textured (c_aribeth through a BioWare DDS).
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_workdir mount_textures
command -v python3 >/dev/null || lfs_skip "python3 missing"

# colour_px PNG: pixels with alpha > 0 whose channels differ by more than 24
# (8-bit RGBA non-interlaced PNG, as the thumbnails are)
colour_px() {
	python3 - "$1" <<'EOF'
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n'
p, idat, w, h = 8, b'', 0, 0
while p < len(d):
    n, t = struct.unpack('>I4s', d[p:p + 8])
    c = d[p + 8:p + 8 + n]
    if t == b'IHDR':
        w, h, bd, ct = struct.unpack('>IIBB', c[:10])
        assert bd == 8 and ct == 6
    elif t == b'IDAT':
        idat += c
    p += 12 + n
raw, bpp, stride = zlib.decompress(idat), 4, w * 4
prev, out, i = bytearray(stride), 0, 0
for y in range(h):
    f = raw[i]; row = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = row[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: row[x] = (row[x] + a) & 255
        elif f == 2: row[x] = (row[x] + b) & 255
        elif f == 3: row[x] = (row[x] + (a + b) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, 4):
        r, g, bl, al = row[x:x + 4]
        if al and max(r, g, bl) - min(r, g, bl) > 24:
            out += 1
    prev = row
print(out)
EOF
}

SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC/A" "$SRC/B" "$WORK/res"
cp "$LFS_SOURCE_ROOT/samples/box.mdl" "$SRC/A/box.mdl"

# no texture anywhere: no map_Kd, a grey thumbnail
lfs_mount "$SRC" "$MNT" -o ro,nothumb_cache
grep -q map_Kd "$MNT/A/box.mdl/model.mtl" && lfs_fail "map_Kd without a texture" ||
	lfs_ok "no texture: no map_Kd"
grey=$(colour_px "$MNT/A/box.mdl/thumbnail.png")
[ "$grey" -lt 50 ] && lfs_ok "no texture: grey thumbnail ($grey colour pixels)" ||
	lfs_fail "no texture: $grey colour pixels"
lfs_umount "$MNT"

# the texture in a sibling folder, with a different case
cp "$LFS_SOURCE_ROOT/samples/lfs_crate.tga" "$SRC/B/LFS_Crate.tga"
lfs_mount "$SRC" "$MNT" -o ro,nothumb_cache
kd=$(sed -n 's/^map_Kd //p' "$MNT/A/box.mdl/model.mtl")
[ "$kd" = "../../B/LFS_Crate.tga" ] && lfs_ok "sibling folder: map_Kd $kd" ||
	lfs_fail "sibling folder: map_Kd '$kd'"
cmp -s "$MNT/A/box.mdl/$kd" "$SRC/B/LFS_Crate.tga" && lfs_ok "map_Kd path opens through the mount" ||
	lfs_fail "map_Kd path $kd does not open the texture"
n=$(colour_px "$MNT/A/box.mdl/thumbnail.png")
[ "$n" -gt 2000 ] && lfs_ok "sibling folder: textured thumbnail ($n colour pixels)" ||
	lfs_fail "sibling folder: thumbnail has $n colour pixels"
lfs_umount "$MNT"

# the watcher keeps the index current: a texture that arrives in a watched
# sibling folder is named once the model is rebuilt (here: touched)
mv "$SRC/B/LFS_Crate.tga" "$WORK/crate.tga"
lfs_mount "$SRC" "$MNT" -o nothumb_cache
ls "$MNT/B" >/dev/null
grep -q map_Kd "$MNT/A/box.mdl/model.mtl" && lfs_fail "watch: map_Kd before the texture came"
cp "$WORK/crate.tga" "$SRC/B/late.tga.part" && mv "$SRC/B/late.tga.part" "$SRC/B/lfs_crate.tga"
touch "$SRC/A/box.mdl"
ok=0
for i in $(seq 50); do
	grep -q '^map_Kd ../../B/lfs_crate.tga$' "$MNT/A/box.mdl/model.mtl" 2>/dev/null && { ok=1; break; }
	sleep 0.1
done
[ "$ok" = 1 ] && lfs_ok "watch: a texture added to a sibling folder is named after the rebuild" ||
	lfs_fail "watch: model.mtl: $(grep map_Kd "$MNT/A/box.mdl/model.mtl")"
lfs_umount "$MNT"
mv "$SRC/B/lfs_crate.tga" "$SRC/B/LFS_Crate.tga"

# the texture outside SOURCE: -o respath, absolute path; convert --respath agrees
mv "$SRC/B/LFS_Crate.tga" "$WORK/res/lfs_crate.tga"
if timeout 10 "$LEGACYFS" -f -o respath="$WORK/nonexistent" "$SRC" "$MNT" 2>"$WORK/bad.log"; then
	lfs_fail "a missing respath folder was accepted"
else
	grep -q "respath" "$WORK/bad.log" && lfs_ok "a missing respath folder is refused: $(cat "$WORK/bad.log")" ||
		lfs_fail "no message for a missing respath folder"
fi
lfs_mount "$SRC" "$MNT" -o ro,nothumb_cache,respath="$WORK/res"
kd=$(sed -n 's/^map_Kd //p' "$MNT/A/box.mdl/model.mtl")
[ "$kd" = "$(realpath "$WORK/res")/lfs_crate.tga" ] && lfs_ok "respath: map_Kd $kd" ||
	lfs_fail "respath: map_Kd '$kd'"
n=$(colour_px "$MNT/A/box.mdl/thumbnail.png")
[ "$n" -gt 2000 ] && lfs_ok "respath: textured thumbnail ($n colour pixels)" ||
	lfs_fail "respath: thumbnail has $n colour pixels"
"$CONVERT" thumbnail -s 256 --root "$SRC" --respath "$WORK/res" "$SRC/A/box.mdl" "$WORK/conv.png" ||
	lfs_fail "legacyfs-convert --respath failed"
cmp -s "$MNT/A/box.mdl/thumbnail.png" "$WORK/conv.png" &&
	lfs_ok "respath: same thumbnail as legacyfs-convert --respath" ||
	lfs_fail "respath: mount and legacyfs-convert thumbnails differ"
lfs_umount "$MNT"

# archives: the texture in a hak (no loose copy anywhere), a model in another hak
ERFPACK="$LFS_BUILD_ROOT/tests/integration/lfs-test-erfpack"
mkdir -p "$SRC/H" "$WORK/pack"
mv "$WORK/res/lfs_crate.tga" "$WORK/pack/lfs_crate.tga"
cp "$LFS_SOURCE_ROOT/samples/box.mdl" "$WORK/pack/box.mdl"
"$ERFPACK" "$SRC/H/tex.hak" HAK V1.0 "$WORK/pack/lfs_crate.tga" || lfs_fail "erfpack tex.hak"
"$ERFPACK" "$SRC/H/models.hak" HAK V1.0 "$WORK/pack/box.mdl" || lfs_fail "erfpack models.hak"
lfs_mount "$SRC" "$MNT" -o nothumb_cache
kd=$(sed -n 's/^map_Kd //p' "$MNT/A/box.mdl/model.mtl")
[ "$kd" = "../../H/tex.hak/lfs_crate.tga" ] && lfs_ok "hak: loose model's map_Kd $kd" ||
	lfs_fail "hak: loose model's map_Kd '$kd'"
cmp -s "$MNT/A/box.mdl/$kd" "$WORK/pack/lfs_crate.tga" && lfs_ok "hak: map_Kd opens the resource through the mount" ||
	lfs_fail "hak: map_Kd path $kd does not open the texture"
n=$(colour_px "$MNT/A/box.mdl/thumbnail.png")
[ "$n" -gt 2000 ] && [ "$grey" -lt 50 ] &&
	lfs_ok "hak: loose model's thumbnail textured ($n colour pixels, untextured $grey)" ||
	lfs_fail "hak: loose model's thumbnail has $n colour pixels (untextured $grey)"
inner="$MNT/H/models.hak/box.mdl"
kd=$(sed -n 's/^map_Kd //p' "$inner/model.mtl")
[ "$kd" = "../../../H/tex.hak/lfs_crate.tga" ] && cmp -s "$inner/$kd" "$WORK/pack/lfs_crate.tga" &&
	lfs_ok "hak: inner model's map_Kd $kd opens the other hak's texture" ||
	lfs_fail "hak: inner model's map_Kd '$kd'"
ls "$inner" | grep -qx thumbnail.png && lfs_ok "hak: inner model lists thumbnail.png" ||
	lfs_fail "hak: inner model lists no thumbnail.png: $(ls "$inner" | tr '\n' ' ')"
sz=$(stat -c %s "$inner/thumbnail.png")
n=$(colour_px "$inner/thumbnail.png") || lfs_fail "hak: inner thumbnail.png is not a valid PNG"
[ "$sz" -gt 0 ] && [ "$n" -gt 2000 ] &&
	lfs_ok "hak: inner model's thumbnail.png ($sz bytes) textured from the other hak ($n colour pixels)" ||
	lfs_fail "hak: inner thumbnail.png $sz bytes, $n colour pixels"
[ "$(wc -c <"$inner/thumbnail.png")" = "$sz" ] && lfs_ok "hak: inner thumbnail size matches its bytes" ||
	lfs_fail "hak: inner thumbnail stat size $sz, read $(wc -c <"$inner/thumbnail.png")"
# the watcher: the texture hak deleted, map_Kd goes once the model is rebuilt
rm "$SRC/H/tex.hak"
touch "$SRC/A/box.mdl"
ok=0
for i in $(seq 50); do
	[ -f "$MNT/A/box.mdl/model.mtl" ] && ! grep -q map_Kd "$MNT/A/box.mdl/model.mtl" && { ok=1; break; }
	sleep 0.1
done
[ "$ok" = 1 ] && lfs_ok "watch: a deleted hak leaves the index" ||
	lfs_fail "watch: model.mtl still names $(grep map_Kd "$MNT/A/box.mdl/model.mtl")"
lfs_umount "$MNT"

# corpus: generated haks holding models and their textures (archives/gen)
G="$LFS_CORPUS/archives/gen/nwn_erf"
if [ -f "$G/models_v1.hak" ]; then
	rm -rf "$SRC"/* && cp "$G/models_v1.hak" "$G/models_e1zstd.hak" "$SRC/"
	K="$LFS_CORPUS/archives/gen/nwn_key_pack/v1"
	[ -f "$K/gen_v1.key" ] && cp -r "$K" "$SRC/k"
	lfs_mount "$SRC" "$MNT" -o ro,nothumb_cache
	for h in models_v1.hak models_e1zstd.hak k/gen_v1.key; do
		[ -e "$MNT/$h" ] || continue
		n=$(colour_px "$MNT/$h/c_aribeth.mdl/thumbnail.png")
		[ "$n" -gt 500 ] && lfs_ok "corpus $h: c_aribeth thumbnail textured ($n colour pixels)" ||
			lfs_fail "corpus $h: c_aribeth thumbnail has $n colour pixels"
	done
	lfs_umount "$MNT"
fi

# supermodel by ResRef: c_aribeth's supermodel a_fa only inside a hak; a
# structural save through the mount takes its part numbers from there
# (as edit_supermodel.sh does with a_fa beside the model)
D="$LFS_CORPUS/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl"
if [ -f "$D/c_aribeth.mdl" ] && [ -f "$D/a_fa.mdl" ]; then
	S2="$WORK/src2"
	mkdir -p "$S2/models" "$S2/haks"
	cp "$D/c_aribeth.mdl" "$S2/models/" && chmod 644 "$S2/models/c_aribeth.mdl"
	cp "$D/a_fa.mdl" "$WORK/pack/a_fa.mdl"
	"$ERFPACK" "$S2/haks/super.hak" HAK V1.0 "$WORK/pack/a_fa.mdl" || lfs_fail "erfpack super.hak"
	want=$("$CONVERT" cat "$D/a_fa.mdl" model.mdl | awk '$1 == "node" && $3 == "Impact" { f = 1; next }
		f && $1 == "#part-number" { print $2; exit }')
	lfs_mount "$S2" "$MNT" -o nothumb_cache
	V="$MNT/models/c_aribeth.mdl"
	timeout 60 sed -i '/^node dummy Impact$/,/^endnode$/d' "$V/model.mdl" || lfs_fail "supermodel: sed -i (remove)"
	timeout 60 sed -i 's/^endmodelgeom c_aribeth/node dummy Impact\n  parent torso_g\nendnode\n&/' "$V/model.mdl" ||
		lfs_fail "supermodel: sed -i (add back)"
	got=$(awk '$1 == "node" && $3 == "Impact" { f = 1; next } f && $1 == "#part-number" { print $2; exit }' "$V/model.mdl")
	[ -n "$want" ] && [ "$got" = "$want" ] &&
		lfs_ok "supermodel in a hak: new node Impact has a_fa's part number $want" ||
		lfs_fail "supermodel in a hak: Impact has part number '$got', a_fa says '$want'"
	[ -f "$V/errors.txt" ] && lfs_fail "supermodel in a hak: errors.txt: $(cat "$V/errors.txt")"
	lfs_umount "$MNT"
fi

# corpus: the rollnw tree, textures in sibling folders tga/ and dds/
R="$LFS_CORPUS/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user"
if [ -d "$R/development/mdl" ]; then
	lfs_mount "$R" "$MNT" -o ro,nothumb_cache
	named=0
	total=0
	for m in "$MNT"/development/mdl/*.mdl; do
		[ -f "$m/model.mtl" ] || continue
		total=$((total + 1))
		grep -q '^map_Kd' "$m/model.mtl" || continue
		named=$((named + 1))
		while read -r k; do
			[ -f "$m/$k" ] || lfs_fail "$(basename "$m"): map_Kd $k does not open"
		done < <(sed -n 's/^map_Kd //p' "$m/model.mtl")
	done
	[ "$named" -ge 4 ] && lfs_ok "rollnw: $named of $total model.mtl name a texture" ||
		lfs_fail "rollnw: $named of $total model.mtl name a texture"
	grep -q '^map_Kd ../../../development/dds/c_aribeth.dds$' "$MNT/development/mdl/c_aribeth.mdl/model.mtl" &&
		lfs_ok "rollnw: c_aribeth names dds/c_aribeth.dds (dds/ sorts before tga/)" ||
		lfs_fail "rollnw: c_aribeth: $(grep map_Kd "$MNT/development/mdl/c_aribeth.mdl/model.mtl")"
	for m in c_aribeth c_drgshad ttd01_a04_03; do
		n=$(colour_px "$MNT/development/mdl/$m.mdl/thumbnail.png")
		[ "$n" -gt 500 ] && lfs_ok "rollnw: $m thumbnail textured ($n colour pixels)" ||
			lfs_fail "rollnw: $m thumbnail has $n colour pixels"
	done
	lfs_umount "$MNT"
fi
lfs_finish
