#!/bin/bash
# thumbnail.png drawn when asked for, and the disk cache of thumbnails
# (docs/thumbnails.md "In the mount", "Disk cache"):
#  - `ls` of model folders lists thumbnail.png but draws nothing (no cache file);
#  - cat thumbnail.png = legacyfs-convert thumbnail (lfs_views_thumbnail) of
#    the same file, st_size = bytes read, and one cache file per picture;
#  - a second mount of the same SOURCE draws nothing: every picture from the
#    disk cache (debug log; cache files keep their inode), same bytes;
#  - a changed texture gives another picture (and a new cache file);
#  - concurrent readers of a picture not drawn yet: drawn once, same bytes;
#  - the default folder is $XDG_CACHE_HOME/legacyfs; -o nothumb_cache writes
#    nothing; an unusable cache folder only logs one line, reads still work;
#  - corpus: `ls` of every model folder of the NWN tree draws nothing.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_workdir mount_thumbcache
command -v python3 >/dev/null || lfs_skip "python3 missing"

SRC="$WORK/src"
mkdir -p "$SRC"
cp "$LFS_SOURCE_ROOT/samples/box.mdl" "$LFS_SOURCE_ROOT/samples/skin2bone.mdl" \
	"$LFS_SOURCE_ROOT/samples/lfs_crate.tga" "$SRC/"
TC="$WORK/tc"
MNT="$WORK/mnt"
MODELS="box.mdl skin2bone.mdl"

ncache() { find "$TC" -name '*.thumb' 2>/dev/null | wc -l; }
inodes() { find "$TC" -name '*.thumb' -printf '%f %i\n' 2>/dev/null | sort; }

# -- first mount: lazy, then rendered once and stored
lfs_mount "$SRC" "$MNT" -o ro,thumb_cache="$TC"
ls "$MNT" >/dev/null
for m in $MODELS; do
	ls "$MNT/$m" | grep -qx thumbnail.png && lfs_ok "$m: thumbnail.png listed" ||
		lfs_fail "$m: thumbnail.png not listed"
done
ls -R "$MNT/box.mdl" >/dev/null
[ "$(ncache)" = 0 ] && lfs_ok "ls of model folders draws no thumbnail" ||
	lfs_fail "ls drew $(ncache) thumbnails"
for m in $MODELS; do
	t="$MNT/$m/thumbnail.png"
	size=$(stat -c %s "$t")
	cp "$t" "$WORK/$m.1.png"
	[ "$size" = "$(wc -c <"$WORK/$m.1.png")" ] && lfs_ok "$m: st_size = bytes read ($size)" ||
		lfs_fail "$m: st_size $size, read $(wc -c <"$WORK/$m.1.png")"
	"$CONVERT" thumbnail -s 256 --root "$SRC" "$SRC/$m" "$WORK/$m.conv.png" ||
		lfs_fail "$m: legacyfs-convert thumbnail failed"
	cmp -s "$WORK/$m.1.png" "$WORK/$m.conv.png" && lfs_ok "$m: same bytes as lfs_views_thumbnail" ||
		lfs_fail "$m: mount thumbnail differs from legacyfs-convert thumbnail"
done
[ "$(ncache)" = 2 ] && lfs_ok "one cache file per picture" || lfs_fail "$(ncache) cache files, want 2"
lfs_umount "$MNT"
before=$(inodes)

# -- second mount of the same SOURCE: nothing rendered (-d: debug log)
lfs_mount "$SRC" "$MNT" -d -o ro,thumb_cache="$TC"
for m in $MODELS; do
	cmp -s "$MNT/$m/thumbnail.png" "$WORK/$m.1.png" && lfs_ok "$m: second mount, same bytes" ||
		lfs_fail "$m: second mount gives other bytes"
done
lfs_umount "$MNT"
hits=$(grep -c 'thumbnail from the disk cache' "$MNT.log" || true)
renders=$(grep -c 'thumbnail rendered' "$MNT.log" || true)
[ "$hits" = 2 ] && [ "$renders" = 0 ] && lfs_ok "second mount: 2 disk cache hits, 0 renders" ||
	lfs_fail "second mount: $hits hits, $renders renders"
[ "$before" = "$(inodes)" ] && lfs_ok "cache files untouched (same names and inodes)" ||
	lfs_fail "cache files changed: $(inodes)"

# -- a changed texture: another picture, drawn again
python3 - "$SRC/lfs_crate.tga" <<'EOF'
import struct, sys
w = h = 4  # uncompressed 24-bit TGA, one saturated blue
hdr = struct.pack('<BBBHHBHHHHBB', 0, 0, 2, 0, 0, 0, 0, 0, w, h, 24, 0)
open(sys.argv[1], 'wb').write(hdr + bytes([255, 0, 0]) * (w * h))
EOF
lfs_mount "$SRC" "$MNT" -d -o ro,thumb_cache="$TC"
for m in $MODELS; do cp "$MNT/$m/thumbnail.png" "$WORK/$m.2.png"; done
lfs_umount "$MNT"
for m in $MODELS; do # both models use lfs_crate
	cmp -s "$WORK/$m.2.png" "$WORK/$m.1.png" && lfs_fail "$m: changed texture, same thumbnail" ||
		lfs_ok "$m: changed texture gives another thumbnail"
	"$CONVERT" thumbnail -s 256 --root "$SRC" "$SRC/$m" "$WORK/$m.conv2.png"
	cmp -s "$WORK/$m.2.png" "$WORK/$m.conv2.png" && lfs_ok "$m: and it is the picture with the new texture" ||
		lfs_fail "$m: changed texture: differs from legacyfs-convert thumbnail"
	grep -q "$m: thumbnail rendered" "$MNT.log" && lfs_ok "$m: drawn again" ||
		lfs_fail "$m: not drawn again after its texture changed"
done
[ "$(ncache)" = 2 ] && lfs_ok "the cache files replaced (still 2)" || lfs_fail "$(ncache) cache files"

# -- many readers at once on a fresh mount and cache: drawn once, all the same bytes
rm -rf "$TC"
lfs_mount "$SRC" "$MNT" -d -o ro,thumb_cache="$TC"
pids=""
for k in 1 2 3 4 5 6; do cat "$MNT/box.mdl/thumbnail.png" >"$WORK/par.$k.png" & pids="$pids $!"; done
stat -c %s "$MNT/box.mdl/thumbnail.png" >"$WORK/par.size" &
pids="$pids $!"
for p in $pids; do wait "$p"; done # not the daemon
lfs_umount "$MNT"
same=1
for k in 1 2 3 4 5 6; do cmp -s "$WORK/par.$k.png" "$WORK/box.mdl.conv2.png" || same=0; done
[ $same = 1 ] && [ "$(cat "$WORK/par.size")" = "$(wc -c <"$WORK/box.mdl.conv2.png")" ] &&
	lfs_ok "6 readers and a stat at once: same bytes, true size" || lfs_fail "concurrent readers got other bytes"
n=$(grep -c 'box.mdl: thumbnail rendered' "$MNT.log" || true)
[ "$n" = 1 ] && lfs_ok "concurrent readers: drawn once" || lfs_fail "concurrent readers: drawn $n times"

# -- default folder ($XDG_CACHE_HOME/legacyfs), -o nothumb_cache, unusable folder
export XDG_CACHE_HOME="$WORK/xdg"
lfs_mount "$SRC" "$MNT" -o ro,nothumb_cache
cat "$MNT/box.mdl/thumbnail.png" >/dev/null
lfs_umount "$MNT"
[ ! -e "$WORK/xdg/legacyfs" ] && lfs_ok "nothumb_cache writes nothing" || lfs_fail "nothumb_cache wrote $WORK/xdg/legacyfs"
lfs_mount "$SRC" "$MNT" -o ro
cat "$MNT/box.mdl/thumbnail.png" >/dev/null
lfs_umount "$MNT"
[ "$(find "$WORK/xdg/legacyfs" -name '*.thumb' | wc -l)" = 1 ] && lfs_ok "default folder \$XDG_CACHE_HOME/legacyfs" ||
	lfs_fail "no cache file in \$XDG_CACHE_HOME/legacyfs"
: >"$WORK/plainfile"
lfs_mount "$SRC" "$MNT" -o ro,thumb_cache="$WORK/plainfile/tc"
for m in $MODELS; do
	cmp -s "$MNT/$m/thumbnail.png" "$WORK/$m.conv2.png" && lfs_ok "$m: unusable cache folder, right picture" ||
		lfs_fail "$m: unusable cache folder: wrong picture"
done
lfs_umount "$MNT"
n=$(grep -c 'thumbnail cache' "$MNT.log" || true)
[ "$n" = 1 ] && lfs_ok "unusable cache folder: read fine, one log line" ||
	lfs_fail "unusable cache folder: $n log lines: $(cat "$MNT.log")"

# -- corpus: listing every model folder of the NWN tree draws nothing
if [ -d "${LFS_CORPUS:-}/nwn/tree" ]; then
	TC2="$WORK/tc2"
	lfs_mount "$LFS_CORPUS/nwn/tree" "$MNT" -o ro,thumb_cache="$TC2"
	nm=$(find "$MNT" -name thumbnail.png | wc -l)
	find "$MNT" -type d -name '*.mdl' -exec ls {} + >/dev/null
	nc=$(find "$TC2" -name '*.thumb' 2>/dev/null | wc -l)
	[ "$nm" -gt 0 ] && [ "$nc" = 0 ] && lfs_ok "corpus: find + ls of $nm thumbnail folders drew nothing" ||
		lfs_fail "corpus: $nm thumbnails listed, $nc drawn by listing"
	lfs_umount "$MNT"
else
	lfs_log "corpus absent: corpus part skipped"
fi
lfs_finish
