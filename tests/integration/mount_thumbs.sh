#!/bin/bash
# thumbnail.png in the mount (docs/thumbnails.md): present in model folders
# with drawable triangles, byte-identical to `legacyfs-convert thumbnail` of
# the same file (same renderer, URI and mtime), sized by -o thumb_size, absent
# with -o thumb_size=0, absent for NAD (no geometry), read-only.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_workdir mount_thumbs
SRC="$LFS_SOURCE_ROOT/samples"
command -v file >/dev/null || lfs_skip "file(1) missing"

MNT="$WORK/mnt"
lfs_mount "$SRC" "$MNT" -o ro
for m in box.mdl skin2bone.mdl; do
	t="$MNT/$m/thumbnail.png"
	if [ -f "$t" ]; then lfs_ok "$m/thumbnail.png exists"; else lfs_fail "$m/thumbnail.png missing"; continue; fi
	file "$t" | grep -q "PNG image data, 256 x 256, 8-bit/color RGBA, non-interlaced" &&
		lfs_ok "$m: 256x256 RGBA PNG" || lfs_fail "$m: $(file "$t")"
	"$CONVERT" thumbnail -s 256 --root "$SRC" "$SRC/$m" "$WORK/$m.png" ||
		lfs_fail "$m: legacyfs-convert thumbnail failed"
	cmp -s "$t" "$WORK/$m.png" && lfs_ok "$m: same bytes as legacyfs-convert thumbnail" ||
		lfs_fail "$m: mount thumbnail differs from legacyfs-convert thumbnail"
	[ "$(stat -c %s "$t")" = "$(wc -c <"$t")" ] && lfs_ok "$m: st_size = bytes read" ||
		lfs_fail "$m: st_size differs from bytes read"
done
lfs_umount "$MNT"

lfs_mount "$SRC" "$MNT" -o ro,thumb_size=512
file "$MNT/box.mdl/thumbnail.png" | grep -q "512 x 512" && lfs_ok "thumb_size=512" ||
	lfs_fail "thumb_size=512: $(file "$MNT/box.mdl/thumbnail.png")"
lfs_umount "$MNT"

lfs_mount "$SRC" "$MNT" -o ro,thumb_size=0
[ ! -e "$MNT/box.mdl/thumbnail.png" ] && lfs_ok "thumb_size=0: no thumbnail" ||
	lfs_fail "thumb_size=0 still shows thumbnail.png"
lfs_umount "$MNT"

if [ -d "$LFS_CORPUS/nad" ]; then
	lfs_mount "$LFS_CORPUS/nad" "$MNT" -o ro
	n=$(find "$MNT" -name thumbnail.png | wc -l)
	[ "$n" = 0 ] && lfs_ok "NAD folders have no thumbnail" || lfs_fail "$n NAD thumbnails"
	lfs_umount "$MNT"
fi
lfs_finish
