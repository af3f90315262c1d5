#!/bin/bash
# Writing into archives through the mount (issue 13, docs/archives.md
# "Writing into an archive"). SOURCE: copies of the corpus' generated haks
# (V1.0 and E1/zstd, models written by neverwinter.nim's tools) and of real
# V1.0 archives (a hak with a description, a module with broken entries).
# The oracle for every archive is an independent ERF reader
# (erf_tool.py, from BioWare's ERF document), for every model the loose
# model file and `legacyfs-convert apply` (the mount's own save without FUSE).
#  1. each real program saves one value of c_aribeth.mdl/model.mdl inside a
#     hak: the hak's c_aribeth.mdl equals `legacyfs-convert apply` of the
#     same edit on the loose model, and no other entry, string or header
#     field changed;
#  2. no-op saves (vim :w, the same bytes copied back) leave the archive's
#     bytes and mtime alone;
#  3. a resource written and then written back gives the original archive
#     byte for byte (a real hak with a description and localized strings);
#  4. an E1/zstd hak: a save lands, other entries keep their stored bytes;
#  5. a bad edit is refused at close with file:line:col, the hak unchanged;
#  6. resources: cp adds, mv renames, rm removes, rmdir removes a model,
#     a bad ResRef is refused with a message; add + rm gives back the
#     original bytes; a broken entry renamed to a valid name is repaired;
#  7. after a remount the edits are there.
. "$(dirname "$0")/edit_lib.sh"
lfs_require_fuse
edit_require_python
lfs_require_corpus
A="$LFS_CORPUS/archives"
[ -f "$A/gen/inputs.tsv" ] || lfs_skip "archive corpus not found ($A)"
ROLLNW="$LFS_CORPUS/nwn/tree/rollnw"
lfs_workdir mount_archives_write
edit_pick_apply
export HOME="$WORK/home"
mkdir -p "$HOME/.emacs.d" "$HOME/tmp"
EDIT_OTHER="$WORK/other"
SRC="$WORK/src"
MNT="$WORK/mnt"
ET="python3 $LFS_SOURCE_ROOT/tests/integration/erf_tool.py"
mkdir -p "$SRC" "$EDIT_OTHER" "$WORK/plain" "$WORK/orig"
cp "$A/gen/nwn_erf/models_v1.hak" "$A/gen/nwn_erf/models_e1zstd.hak" "$SRC/"
cp "$A/real/rollnw/hak_with_description.hak" "$A/real/nwnrs/acn.hak" \
	"$A/real/nwnprc/prc_recipe_scroll_temp.mod" "$SRC/"
chmod 0644 "$SRC"/*
cp -p "$SRC"/* "$WORK/orig/"
opath=$(awk -F'\t' '$1 == "c_aribeth.mdl" { print $5 }' "$A/gen/inputs.tsv")
LOOSE="$ROLLNW/$opath"
[ -f "$LOOSE" ] || lfs_skip "loose c_aribeth.mdl not found ($LOOSE)"
cp "$LOOSE" "$WORK/ref.mdl"
$ET get "$SRC/models_v1.hak" c_aribeth.mdl | cmp -s - "$LOOSE" ||
	lfs_die "models_v1.hak's c_aribeth.mdl is not the loose file (corpus changed?)"

lfs_mount "$SRC" "$MNT"
H="$MNT/models_v1.hak"
V="$H/c_aribeth.mdl/model.mdl"

# The line number of the first "position" line of the model text, and that
# line with its first value replaced by $1.
pos_line() { grep -n '^  position ' "$1" | head -1 | cut -d: -f1; }
pos_edit() { grep '^  position ' "$2" | head -1 | awk -v v="$1" '{ $2 = v; print "  " $0 }' | sed 's/^   */  /'; }

# 1. Real programs save a view of a model inside the hak.
k=0
saved=0
for method in vim vimcompat nvim emacs nano sed gio pyreplace vscode jetbrains shell cp mv; do
	case $method in
	vim | vimcompat) command -v vim >/dev/null || { lfs_log "SKIP-PART: vim not installed: $method left out"; continue; } ;;
	nvim | emacs | nano | gio) command -v "$method" >/dev/null || { lfs_log "SKIP-PART: $method not installed: left out"; continue; } ;;
	esac
	k=$((k + 1))
	cp "$V" "$WORK/cur.mdl"
	n=$(pos_line "$WORK/cur.mdl")
	nl=$(pos_edit "$k.25" "$WORK/cur.mdl")
	awk -v n="$n" -v l="$nl" 'NR == n { print l; next } { print }' "$WORK/cur.mdl" >"$WORK/edited.mdl"
	# the program on a plain copy must make exactly this text (else the test is wrong)
	mkdir -p "$WORK/plain/p"
	cp "$WORK/cur.mdl" "$WORK/plain/p/model.mdl"
	edit_run "$method" "$WORK/plain/p/model.mdl" "$n" "$nl" "$WORK/edited.mdl" >/dev/null 2>&1
	cmp -s "$WORK/plain/p/model.mdl" "$WORK/edited.mdl" || { lfs_fail "$method: plain copy differs (test setup)"; continue; }
	edit_apply "$WORK/ref.mdl" model.mdl "$WORK/edited.mdl" "$WORK/ref.new" || { lfs_fail "$method: reference apply refused"; continue; }
	cp "$SRC/models_v1.hak" "$WORK/before.hak"
	edit_run "$method" "$V" "$n" "$nl" "$WORK/edited.mdl" || lfs_fail "$method: save through the mount failed ($?)"
	$ET get "$SRC/models_v1.hak" c_aribeth.mdl >"$WORK/got.mdl"
	cmp -s "$WORK/got.mdl" "$WORK/ref.new" || { lfs_fail "$method: the hak's c_aribeth.mdl is not the reference"; continue; }
	d=$($ET diff "$WORK/before.hak" "$SRC/models_v1.hak")
	[ "$(wc -l <<<"$d")" = 1 ] && grep -q '^entry [0-9]* c_aribeth.mdl: bytes$' <<<"$d" ||
		lfs_fail "$method: other changes in the hak: $d"
	cmp -s "$V" "$WORK/edited.mdl" || lfs_fail "$method: the view does not read back as saved"
	cp "$WORK/ref.new" "$WORK/ref.mdl"
	saved=$((saved + 1))
done
[ "$saved" -ge 8 ] || lfs_fail "only $saved programs saved into the hak"
ls -A "$H" | grep -v '\.\(mdl\|tga\|dds\|plt\|txi\|mtr\)$' | grep . && lfs_fail "editor files left in the hak folder"
$ET diff "$WORK/orig/models_v1.hak" "$SRC/models_v1.hak" | grep -v '^entry [0-9]* c_aribeth.mdl: bytes$' &&
	lfs_fail "entries other than c_aribeth.mdl changed"
lfs_ok "$saved programs saved a model inside a hak; nothing else in it changed"

# 2. No-op saves leave the archive alone (bytes and mtime).
for f in models_v1.hak models_e1zstd.hak; do
	m0=$(stat -c %Y.%y "$SRC/$f")
	cp "$SRC/$f" "$WORK/before.hak"
	vim -N -u DEFAULTS -i NONE -es -c wq "$MNT/$f/c_aribeth.mdl/model.mdl" </dev/null >/dev/null 2>&1 ||
		lfs_fail "$f: vim :wq failed"
	cp "$MNT/$f/black.tga" "$WORK/t.tga" && cp "$WORK/t.tga" "$MNT/$f/black.tga" || lfs_fail "$f: copy back failed"
	cmp -s "$SRC/$f" "$WORK/before.hak" || lfs_fail "$f: a no-op save changed the archive"
	[ "$(stat -c %Y.%y "$SRC/$f")" = "$m0" ] || lfs_fail "$f: a no-op save touched the archive's mtime"
done
lfs_ok "no-op saves leave the archive's bytes and mtime"

# 3. Written and written back: the original archive, byte for byte.
for f in hak_with_description.hak acn.hak; do
	r=$(ls "$MNT/$f" | grep -v '\.mdl$' | head -1)
	cp "$MNT/$f/$r" "$WORK/res.orig"
	printf 'changed\n' >"$MNT/$f/$r" || lfs_fail "$f/$r: write failed"
	d=$($ET diff "$WORK/orig/$f" "$SRC/$f")
	[ "$(wc -l <<<"$d")" = 1 ] && grep -q "^entry [0-9]* $r: bytes\$" <<<"$d" ||
		lfs_fail "$f: writing $r changed more: $d"
	$ET get "$SRC/$f" "$r" | cmp -s - <(printf 'changed\n') || lfs_fail "$f/$r: new bytes not in the archive"
	cat "$WORK/res.orig" >"$MNT/$f/$r"
	cmp -s "$SRC/$f" "$WORK/orig/$f" || lfs_fail "$f: written back, the archive is not the original"
done
lfs_ok "a resource written and written back gives the original archive (description, strings kept)"

# 4. E1/zstd: a save lands, the other entries keep their stored (compressed) bytes.
E="$MNT/models_e1zstd.hak/c_aribeth.mdl/model.mdl"
cp "$E" "$WORK/cur.mdl"
n=$(pos_line "$WORK/cur.mdl")
sed -i "${n}s|.*|$(pos_edit 0.75 "$WORK/cur.mdl")|" "$E" || lfs_fail "e1: sed -i failed"
grep -q '^  position 0.75 ' "$E" || lfs_fail "e1: the edit does not read back"
d=$($ET diff "$WORK/orig/models_e1zstd.hak" "$SRC/models_e1zstd.hak")
[ "$(wc -l <<<"$d")" = 1 ] && grep -q '^entry [0-9]* c_aribeth.mdl: bytes$' <<<"$d" ||
	lfs_fail "e1: the save changed more than c_aribeth.mdl: $d"
lfs_ok "E1/zstd hak: the save lands, every other entry keeps its stored bytes"

# 5. A bad edit is refused at close, the hak unchanged, the message compiler-style.
cp "$SRC/models_v1.hak" "$WORK/before.hak"
n=$(pos_line "$V")
if sed -i "${n}s|.*|  position 1 2 banana|" "$V" 2>/dev/null; then lfs_fail "bad edit: sed -i succeeded"; fi
cmp -s "$SRC/models_v1.hak" "$WORK/before.hak" || lfs_fail "bad edit: the hak changed"
grep -q "model.mdl:$n:[0-9]*: " "$MNT/models_v1.hak/c_aribeth.mdl/errors.txt" ||
	lfs_fail "bad edit: no model.mdl:$n:col message in errors.txt"
lfs_ok "a bad edit inside a hak is refused with file:line:col, the hak unchanged"

# 6. Resources: add, rename, remove; bad names; a broken entry repaired.
G="$MNT/acn.hak"
cp "$SRC/acn.hak" "$WORK/before.hak"
printf 'a,b\n1,2\n' >"$WORK/new.2da"
cp "$WORK/new.2da" "$G/newtable.2da" || lfs_fail "cp of a new resource failed"
[ "$($ET diff "$WORK/before.hak" "$SRC/acn.hak")" = "added $(( $(ls "$G" | wc -l) - 1 )) newtable.2da" ] ||
	lfs_fail "add: $($ET diff "$WORK/before.hak" "$SRC/acn.hak")"
$ET get "$SRC/acn.hak" newtable.2da | cmp -s - "$WORK/new.2da" || lfs_fail "add: bytes differ"
mv "$G/newtable.2da" "$G/renamed.2da" || lfs_fail "mv of a resource failed"
$ET get "$SRC/acn.hak" renamed.2da | cmp -s - "$WORK/new.2da" || lfs_fail "rename: not in the archive"
[ -e "$G/newtable.2da" ] && lfs_fail "rename: old name still listed"
rm "$G/renamed.2da" || lfs_fail "rm of a resource failed"
cmp -s "$SRC/acn.hak" "$WORK/before.hak" || lfs_fail "add + rename + rm: not the original archive"
if sh -c "echo x >'$G/a_name_longer_than16.2da'" 2>/dev/null; then lfs_fail "a 20-character ResRef was accepted"; fi
grep -q 'a_name_longer_than16.2da: error: not created: .*at most 16' "$G/errors.txt" ||
	lfs_fail "no message for the long ResRef"
if sh -c "echo x >'$G/bad-name.2da'" 2>/dev/null; then lfs_fail "a ResRef with '-' was accepted"; fi
cmp -s "$SRC/acn.hak" "$WORK/before.hak" || lfs_fail "refused names changed the archive"
nm=$(ls "$H" | grep -c '\.mdl$')
rmdir "$H/a_ba_casts.mdl" || lfs_fail "rmdir of a model inside a hak failed"
[ "$(ls "$H" | grep -c '\.mdl$')" = $((nm - 1)) ] || lfs_fail "rmdir: the model is still listed"
$ET get "$SRC/models_v1.hak" a_ba_casts.mdl >/dev/null 2>&1 && lfs_fail "rmdir: the model is still in the hak"
P="$MNT/prc_recipe_scroll_temp.mod"
b=$(ls "$P" | grep '^broken-' | head -1)
i=${b#broken-}
i=${i%%.*}
# (type 0 is itself broken: the new name gives a type too)
mv "$P/$b" "$P/fixed$i.txt" || lfs_fail "renaming broken entry $b failed"
d=$($ET diff "$WORK/orig/prc_recipe_scroll_temp.mod" "$SRC/prc_recipe_scroll_temp.mod")
[ "$d" = "entry $i .type0: key" ] || lfs_fail "broken entry repair changed: $d"
ls "$P" | grep -qx "fixed$i.txt" || lfs_fail "repaired entry not listed as fixed$i.txt"
lfs_ok "resources added, renamed, removed; bad ResRefs refused; a broken entry repaired"

# 7. After a remount the edits are there.
cp "$V" "$WORK/last.mdl"
lfs_umount "$MNT"
lfs_mount "$SRC" "$MNT"
cmp -s "$V" "$WORK/last.mdl" || lfs_fail "after a remount c_aribeth.mdl/model.mdl differs"
[ -e "$H/a_ba_casts.mdl" ] && lfs_fail "after a remount the removed model is back"
lfs_umount "$MNT"
[ "$LFS_FAILS" = 0 ] || lfs_die "$LFS_FAILS failures"
lfs_ok "mount_archives_write"
