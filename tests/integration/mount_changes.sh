#!/bin/bash
# A small SOURCE made at test time in the build folder from corpus binaries
# (copies, never committed):
#  - a corrupt NWN-looking binary (truncated copy with its header sizes
#    patched so lfs_format_for still accepts it) is a model folder (listing
#    reads headers only) holding README.txt with the decoder's message and its
#    original bytes under its own name; the reason is in /.legacyfs/errors;
#  - changes to SOURCE (in-place rewrite, rename over, good -> corrupt ->
#    good, new file, deleted file) show on the next access, with the inotify
#    watcher (default) and with -o nowatch,timeout=0;
#  - file names that need care (spaces, '%', UTF-8, newline) work;
#  - model.mtl names textures found case-insensitively in the model's folder
#    or its ancestors, relative to the model folder.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_changes
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC/sub/deeper" "$SRC/sub2"

# Two different corpus binaries, and one whose model.mdl names a texture.
lfs_two_binaries
TEXBIN=""
TEXREF=""
for f in "${bins[@]}"; do
	r=$("$CONVERT" cat "$f" model.mdl | awk 'tolower($1) == "bitmap" && $2 != "NULL" && $2 != "" { print $2; exit }')
	if [ -n "$r" ]; then TEXBIN=$f; TEXREF=$r; break; fi
done

cp "$A" "$SRC/good.mdl"
cp "$A" "$SRC/odd name %2F é.mdl"
printf 'plain text\n' >"$SRC/new
line.txt"
printf 'ascii\n' >"$SRC/percent%41.txt"

# Corrupt: keep the first 60%, then make the header sizes add up again
# (u32[1] = size - 12, u32[2] = 0) so it still looks like an NWN binary.
size=$(stat -c %s "$B")
cut=$((size * 6 / 10))
head -c "$cut" "$B" >"$SRC/bad.mdl"
# shellcheck disable=SC2059 # builds \xNN escapes on purpose
le32() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $((($1 >> 8) & 255)))\\x$(printf %02x $((($1 >> 16) & 255)))\\x$(printf %02x $((($1 >> 24) & 255)))"; }
{ le32 $((cut - 12)); le32 0; } | dd of="$SRC/bad.mdl" bs=1 seek=4 conv=notrunc status=none
set +e
"$CONVERT" list --root "$SRC" "$SRC/bad.mdl" >/dev/null 2>"$WORK/bad.convert"
rc=$?
set -e
[ "$rc" = 1 ] || lfs_die "precondition: legacyfs-convert list bad.mdl should fail to decode (exit 1), got $rc"
cp "$SRC/bad.mdl" "$WORK/bad.copy"

if [ -n "$TEXBIN" ]; then
	UP=$(printf '%s' "$TEXREF" | tr '[:lower:]' '[:upper:]')
	LO=$(printf '%s' "$TEXREF" | tr '[:upper:]' '[:lower:]')
	cp "$TEXBIN" "$SRC/sub/deeper/tex.mdl"
	printf 'x' >"$SRC/$UP.TGA"          # only in the root: ../../../
	cp "$TEXBIN" "$SRC/sub2/tex2.mdl"
	printf 'x' >"$SRC/sub2/$LO.dds"     # next to the model: tga beats dds
	printf 'x' >"$SRC/sub2/$UP.tga"
fi

run_checks() {
	mode=$1
	lfs_log "--- $mode"
	# corrupt file: a folder (by its header) with README.txt and the original bytes
	ls -l "$MNT" | grep -q '^d.* bad\.mdl$' && lfs_ok "readdir shows bad.mdl as a folder" || lfs_fail "readdir type of bad.mdl"
	[ -d "$MNT/bad.mdl" ] && cmp -s "$MNT/bad.mdl/bad.mdl" "$WORK/bad.copy" && lfs_ok "bad.mdl keeps its bytes inside its folder" || lfs_fail "bad.mdl/bad.mdl is not the original"
	grep -q '^bad\.mdl: error: ..*' "$MNT/bad.mdl/README.txt" && lfs_ok "README.txt holds the message" || lfs_fail "README.txt of bad.mdl"
	grep -q '^bad\.mdl: ..*' "$MNT/.legacyfs/errors" && lfs_ok "errors file names bad.mdl" || lfs_fail "errors file lacks bad.mdl"
	[ "$(stat -c %s "$MNT/.legacyfs/errors")" = "$(cat "$MNT/.legacyfs/errors" | wc -c)" ] || lfs_fail "errors file size"

	# names
	[ -f "$MNT/odd name %2F é.mdl/model.mdl" ] && lfs_ok "odd model name" || lfs_fail "odd model name"
	cmp -s "$MNT/new
line.txt" "$SRC/new
line.txt" && lfs_ok "newline in a name" || lfs_fail "newline in a name"
	cmp -s "$MNT/percent%41.txt" "$SRC/percent%41.txt" && lfs_ok "% in a name" || lfs_fail "% in a name"
	# every view path legacyfs-convert lists exists, with its size
	bad_views=0
	while IFS=$'\t' read -r vsize vpath; do
		[ "$(stat -c %s "$MNT/good.mdl/$vpath" 2>/dev/null)" = "$vsize" ] || bad_views=$((bad_views + 1))
	done < <("$CONVERT" list --root "$SRC" "$SRC/good.mdl")
	[ "$bad_views" = 0 ] && lfs_ok "all listed views exist with their sizes" || lfs_fail "$bad_views views missing or of wrong size"

	# textures
	if [ -n "$TEXBIN" ]; then
		grep -q -F "map_Kd ../../../$UP.TGA" "$MNT/sub/deeper/tex.mdl/model.mtl" && lfs_ok "texture in an ancestor" || lfs_fail "texture in an ancestor ($TEXREF)"
		grep -q -F "map_Kd ../$UP.tga" "$MNT/sub2/tex2.mdl/model.mtl" && lfs_ok "tga preferred next to the model" || lfs_fail "tga preferred ($TEXREF)"
	else
		lfs_log "no corpus binary names a texture: texture checks skipped"
	fi

	# in-place rewrite (same inode, new size and mtime)
	cat "$B" >"$SRC/good.mdl"
	"$CONVERT" cat --root "$SRC" "$SRC/good.mdl" model.mdl >"$WORK/expect.mdl"
	lfs_wait_for "$mode: in-place change shows" cmp -s "$MNT/good.mdl/model.mdl" "$WORK/expect.mdl"
	[ "$(stat -c %s "$MNT/good.mdl/model.mdl")" = "$(stat -c %s "$WORK/expect.mdl")" ] || lfs_fail "$mode: size after change"

	# rename over (new inode)
	cp "$A" "$SRC/.tmp"
	mv "$SRC/.tmp" "$SRC/good.mdl"
	"$CONVERT" cat --root "$SRC" "$SRC/good.mdl" model.mdl >"$WORK/expect.mdl"
	lfs_wait_for "$mode: rename over shows" cmp -s "$MNT/good.mdl/model.mdl" "$WORK/expect.mdl"

	# good -> corrupt -> good: the folder stays (its header says model); inside,
	# the original bytes instead of the views, then the views again
	cat "$WORK/bad.copy" >"$SRC/good.mdl"
	lfs_wait_for "$mode: corrupted model shows its bytes" cmp -s "$MNT/good.mdl/good.mdl" "$WORK/bad.copy"
	[ -d "$MNT/good.mdl" ] || lfs_fail "$mode: corrupted model is not a folder"
	grep -q '^good\.mdl: ' "$MNT/.legacyfs/errors" || lfs_fail "$mode: errors file lacks good.mdl"
	cat "$A" >"$SRC/good.mdl"
	lfs_wait_for "$mode: repaired model is a folder again" test -f "$MNT/good.mdl/model.mdl"
	"$CONVERT" cat --root "$SRC" "$SRC/good.mdl" model.mdl >"$WORK/expect.mdl"
	cmp -s "$MNT/good.mdl/model.mdl" "$WORK/expect.mdl" || lfs_fail "$mode: repaired model content"

	# new and deleted files
	cp "$A" "$SRC/new.mdl"
	lfs_wait_for "$mode: new model appears" test -d "$MNT/new.mdl"
	lfs_wait_for "$mode: new model listed" sh -c "ls '$MNT' | grep -qx new.mdl"
	rm "$SRC/new.mdl"
	lfs_wait_for "$mode: deleted model disappears" sh -c "! test -e '$MNT/new.mdl'"
	lfs_wait_for "$mode: deleted model unlisted" sh -c "! ls '$MNT' | grep -qx new.mdl"
}

lfs_mount "$SRC" "$MNT"
run_checks "watcher"
lfs_umount "$MNT"
grep -q 'bad\.mdl' "$MNT.log" && lfs_ok "daemon log names bad.mdl" || lfs_fail "daemon log lacks bad.mdl"

cp "$A" "$SRC/good.mdl"
lfs_mount "$SRC" "$MNT" -o nowatch,timeout=0
run_checks "nowatch,timeout=0"
lfs_umount "$MNT"

lfs_finish
