#!/bin/bash
# Names-only listing and the thumbnail without the views (docs/mount.md
# "Listing is cheap"). The daemon runs with -d: it logs "<model>: views
# built in ..." once per full build of a model's views, "<model>: view names
# listed in ..." per names-only build and "<model>: thumbnail ... (views not
# built)" per thumbnail drawn without the views; the checks count those lines.
#  - `find MNT` of the corpus NWN tree fully builds no model, and lists
#    exactly what a native copy made by legacyfs-convert holds;
#  - after it, `ls -l` inside a model folder gives the true sizes
#    (== legacyfs-convert list) and builds that one model;
#  - `cat thumbnail.png` of a never-listed model folder equals
#    `legacyfs-convert thumbnail` and builds no view; a later full build of
#    the model does not draw it again; a model with nothing to draw has no
#    thumbnail.png (ENOENT) and its listing shows none;
#  - a view of a model listed from names only is saved with `sed -i`.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_names
TREE="$LFS_CORPUS/nwn/tree"
MNT="$WORK/mnt"
TC="$WORK/thumbcache"

builds() { grep -c ': views built in ' "$MNT.log" || true; }

# -- 1. find of the corpus tree: names only, no build; same names as a native copy
lfs_mount "$TREE" "$MNT" -d -o ro,thumb_cache="$TC"
find "$MNT" -path "$MNT/.legacyfs" -prune -o -print | sed "s|^$MNT||" | sort >"$WORK/find.mnt"
n=$(builds)
[ "$n" = 0 ] && lfs_ok "find MNT built no model's views" || lfs_fail "find MNT built $n models"
named=$(grep -c ': view names listed in ' "$MNT.log" || true)
[ "$named" -gt 100 ] && lfs_ok "find listed $named models from their names" ||
	lfs_fail "only $named names-only listings"

lfs_native_copy "$TREE" "$WORK/copy"
find "$WORK/copy" | sed "s|^$WORK/copy||" | sort >"$WORK/find.copy"
if cmp -s "$WORK/find.mnt" "$WORK/find.copy"; then
	lfs_ok "find MNT | sort == find of the native copy ($(wc -l <"$WORK/find.mnt") names)"
else
	lfs_fail "find MNT differs from the native copy: $(diff "$WORK/find.mnt" "$WORK/find.copy" | head -5)"
fi

# -- 2. ls -l inside a model folder after find: the true sizes, one build
m=$(sed -n 's|^tree/||p' "$LFS_CORPUS/nwn/binary.txt" | grep c_aribeth | head -1)
[ -n "$m" ] || m=$(sed -n '1s|^tree/||p' "$LFS_CORPUS/nwn/binary.txt")
ls -lR "$MNT/$m" >/dev/null
(cd "$MNT/$m" && find . -type f -printf '%s\t%P\n' | sort) >"$WORK/sizes.mnt"
"$CONVERT" list --root "$TREE" "$TREE/$m" | sort >"$WORK/sizes.convert"
cmp -s "$WORK/sizes.mnt" "$WORK/sizes.convert" && lfs_ok "$m: sizes after find as legacyfs-convert list" ||
	lfs_fail "$m: sizes differ: $(diff "$WORK/sizes.mnt" "$WORK/sizes.convert" | head -4)"
n=$(builds)
[ "$n" = 1 ] && lfs_ok "ls -l of one model folder built that model" || lfs_fail "$n builds after ls -l of $m"
lfs_umount "$MNT"

# -- 3. thumbnail.png of never-listed model folders: drawn without the views
mv "$MNT.log" "$WORK/find.log"
rm -rf "$TC"
lfs_mount "$TREE" "$MNT" -d -o ro,thumb_cache="$TC"
t=$m
"$CONVERT" thumbnail -s 256 --root "$TREE" "$TREE/$t" "$WORK/t.png" || lfs_die "legacyfs-convert thumbnail $t"
cmp -s "$MNT/$t/thumbnail.png" "$WORK/t.png" && lfs_ok "$t/thumbnail.png (never listed) as legacyfs-convert thumbnail" ||
	lfs_fail "$t/thumbnail.png differs from legacyfs-convert thumbnail"
n=$(builds)
[ "$n" = 0 ] && lfs_ok "cat thumbnail.png built no view" || lfs_fail "cat thumbnail.png built $n models"
grep -q "$t: thumbnail rendered in .* (views not built)" "$MNT.log" && lfs_ok "drawn without the views" ||
	lfs_fail "no 'thumbnail rendered (views not built)' line for $t"
# the full build afterwards takes that picture: no second render
(cd "$MNT/$t" && find . -type f -printf '%s\t%P\n' | sort) >"$WORK/t.sizes"
"$CONVERT" list --root "$TREE" "$TREE/$t" | sort >"$WORK/t.convert"
cmp -s "$WORK/t.sizes" "$WORK/t.convert" && lfs_ok "$t: sizes as legacyfs-convert list" ||
	lfs_fail "$t: sizes differ: $(diff "$WORK/t.sizes" "$WORK/t.convert" | head -4)"
cmp -s "$MNT/$t/thumbnail.png" "$WORK/t.png" || lfs_fail "$t/thumbnail.png changed after the build"
r=$(grep -c "$t: thumbnail rendered" "$MNT.log" || true)
[ "$r" = 1 ] && lfs_ok "the full build did not draw it again" || lfs_fail "$t: $r renders"
[ "$(builds)" = 1 ] || lfs_fail "$(builds) builds after listing $t"

# a model with nothing to draw: no thumbnail.png, before and after its listing
e=""
for f in $(sed -n 's|^tree/||p' "$LFS_CORPUS/nwn/binary.txt" | head -60); do
	if ! "$CONVERT" thumbnail --root "$TREE" "$TREE/$f" "$WORK/none.png" >/dev/null 2>&1; then
		e=$f
		break
	fi
done
if [ -n "$e" ]; then
	if cat "$MNT/$e/thumbnail.png" >/dev/null 2>"$WORK/cat.err"; then
		lfs_fail "$e/thumbnail.png readable, legacyfs-convert draws none"
	else
		grep -q "No such file" "$WORK/cat.err" && lfs_ok "$e: no thumbnail.png (ENOENT)" ||
			lfs_fail "$e/thumbnail.png: $(cat "$WORK/cat.err")"
	fi
	ls "$MNT/$e" | grep -qx thumbnail.png && lfs_fail "$e: thumbnail.png listed" ||
		lfs_ok "$e: listing shows no thumbnail.png"
	[ "$(builds)" = 1 ] || lfs_fail "$(builds) builds after $e"
else
	lfs_log "SKIP-PART: no model without a thumbnail among the first 60 binaries: that case left out"
fi
lfs_umount "$MNT"

# -- 4. editing after a names-only listing (samples/box.mdl, writable copy)
SRC="$WORK/src"
mkdir -p "$SRC"
cp "$LFS_SOURCE_ROOT/samples/box.mdl" "$LFS_SOURCE_ROOT/samples/lfs_crate.tga" "$SRC/"
mv "$MNT.log" "$WORK/thumb.log"
lfs_mount "$SRC" "$MNT" -d -o nothumb_cache
ls "$MNT/box.mdl" >/dev/null
mesh=$(ls "$MNT/box.mdl/meshes" | grep '\.obj$' | head -1)
[ -n "$mesh" ] || lfs_die "box.mdl/meshes lists no OBJ"
[ "$(builds)" = 0 ] && lfs_ok "box.mdl and box.mdl/meshes listed from names" || lfs_fail "listing built box.mdl"
cp "$SRC/box.mdl" "$WORK/box.orig"
sed -i '0,/^v /s/^v [^ ]*/v 1.5/' "$MNT/box.mdl/meshes/$mesh" || lfs_fail "sed -i of meshes/$mesh"
grep -q '^v 1.5 ' "$MNT/box.mdl/meshes/$mesh" && lfs_ok "sed -i saved meshes/$mesh" ||
	lfs_fail "meshes/$mesh: $(grep -m1 '^v ' "$MNT/box.mdl/meshes/$mesh")"
cmp -s "$SRC/box.mdl" "$WORK/box.orig" && lfs_fail "box.mdl unchanged in SOURCE" || lfs_ok "box.mdl rewritten"
ls "$MNT/box.mdl/meshes" | grep -q '^sed' && lfs_fail "sed's temp file left in the listing: $(ls "$MNT/box.mdl/meshes")"
lfs_umount "$MNT"
lfs_finish
