#!/bin/bash
# New models from text (docs/editing.md "New models", issue 26): in a mount,
#  - `cp -r c_bodak.mdl c_bodak2.mdl` makes a new binary c_bodak2.mdl in
#    SOURCE (no plain folder), its model name following the resref (with a
#    warning in errors.txt), its text the original's with the names renamed,
#    its bytes those of `legacyfs-convert compile` of that text;
#  - `mkdir new3.mdl` + writing new3.mdl/model.mdl compiles new3.mdl;
#  - a bad text is refused at close with file:line:col in errors.txt and
#    nothing in SOURCE; `rm -r` of the pending folder removes it;
#  - a name that is not a resref is refused (mkdir and mv);
#  - `mv c_satyrarcher.mdl c_satyr2.mdl` renames the file, the model name
#    following, the bytes those of `legacyfs-convert apply` of the renamed text.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_newmodel
D=$LFS_CORPUS/nwn/tree/rollnw/tests/test_data/user/development
[ -f "$D/c_bodak.mdl" ] && [ -f "$D/c_satyrarcher.mdl" ] || lfs_skip "c_bodak/c_satyrarcher not in the corpus"
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC" "$WORK/t"
cp "$D/c_bodak.mdl" "$D/c_satyrarcher.mdl" "$SRC/"
chmod 644 "$SRC"/*.mdl
cp "$SRC/c_satyrarcher.mdl" "$WORK/satyr_before.mdl"

# rename_text OLD NEW < text: the model-name statements renamed (nwn_rename.h)
rename_text() {
	sed -E "s/^(newmodel|setsupermodel|beginmodelgeom|endmodelgeom|donemodel|animroot) $1( |\r?$)/\1 $2\2/I
		s/^(node [A-Za-z_]+|newanim [^ ]+|doneanim [^ ]+) $1(\r?)$/\1 $2\2/I
		s/^([ \t]*parent) $1(\r?)$/\1 $2\2/I"
}

lfs_mount "$SRC" "$MNT"

# ---- cp -r of a model folder ----
timeout 120 cp -r "$MNT/c_bodak.mdl" "$MNT/c_bodak2.mdl" && lfs_ok "cp -r c_bodak.mdl c_bodak2.mdl" ||
	lfs_fail "cp -r of a model folder failed"
[ -f "$SRC/c_bodak2.mdl" ] && [ ! -d "$SRC/c_bodak2.mdl" ] && lfs_ok "SOURCE has the binary c_bodak2.mdl" ||
	lfs_fail "SOURCE has no binary c_bodak2.mdl ($(ls -la "$SRC"))"
"$CONVERT" cat "$SRC/c_bodak.mdl" model.mdl >"$WORK/bodak.txt" 2>/dev/null
old=$(awk '$1 == "newmodel" { print $2; exit }' "$WORK/bodak.txt")
"$CONVERT" cat "$SRC/c_bodak2.mdl" model.mdl >"$WORK/bodak2.txt" 2>"$WORK/cat.err" ||
	lfs_fail "legacyfs-convert cat c_bodak2.mdl: $(cat "$WORK/cat.err")"
grep -q "^newmodel c_bodak2$" "$WORK/bodak2.txt" && lfs_ok "cat of the new binary shows newmodel c_bodak2" ||
	lfs_fail "new binary's model name: $(grep ^newmodel "$WORK/bodak2.txt")"
rename_text "$old" c_bodak2 <"$WORK/bodak.txt" | sed "s/^# model: $old\$/# model: c_bodak2/" >"$WORK/bodak_renamed.txt"
# Part numbers are the compiler's (from the supermodel a_ba, not in SOURCE
# here: the text's node order, docs/nwn-compile.md): left out of the comparison.
diff <(grep -v '#part-number' "$WORK/bodak_renamed.txt") <(grep -v '#part-number' "$WORK/bodak2.txt") \
	>"$WORK/bodak.diff" && lfs_ok "its text is the original's with the model name renamed" ||
	lfs_fail "its text differs beyond the names: $(head -20 "$WORK/bodak.diff")"
# The text the mount compiled: the copy's model.mdl, renamed; compiled by the CLI beside no supermodel (as SOURCE).
rename_text "$old" c_bodak2 <"$MNT/c_bodak.mdl/model.mdl" >"$WORK/t/c_bodak2.mdl"
"$CONVERT" compile "$WORK/t/c_bodak2.mdl" -o "$WORK/bodak2_cli.mdl" 2>/dev/null || lfs_fail "legacyfs-convert compile failed"
cmp -s "$WORK/bodak2_cli.mdl" "$SRC/c_bodak2.mdl" && lfs_ok "mount and legacyfs-convert compile agree byte for byte" ||
	lfs_fail "mount's c_bodak2.mdl differs from legacyfs-convert compile"
# The kernel's entry of the pending folder expires (a few seconds): then the model's folder.
for _ in $(seq 100); do
	grep -q "^newmodel c_bodak2" "$MNT/c_bodak2.mdl/model.mdl" 2>/dev/null && break
	sleep 0.2
done
grep -q "warning: model name '$old' renamed to 'c_bodak2'" "$MNT/c_bodak2.mdl/errors.txt" 2>/dev/null &&
	lfs_ok "errors.txt warns of the renamed model name" || lfs_fail "no rename warning in c_bodak2.mdl/errors.txt"
grep -q "^newmodel c_bodak2" "$MNT/c_bodak2.mdl/model.mdl" && lfs_ok "the mount shows the new model" ||
	lfs_fail "the mount's c_bodak2.mdl/model.mdl: $(head -4 "$MNT/c_bodak2.mdl/model.mdl")"

# ---- mkdir + save of model.mdl ----
mkdir "$MNT/new3.mdl" && lfs_ok "mkdir new3.mdl" || lfs_fail "mkdir new3.mdl"
[ -e "$SRC/new3.mdl" ] && lfs_fail "mkdir wrote into SOURCE before the save"
ls "$MNT" | grep -qx new3.mdl && lfs_ok "the pending folder is listed" || lfs_fail "new3.mdl not listed"
"$CONVERT" cat "$SRC/c_satyrarcher.mdl" model.mdl >"$WORK/satyr.txt" 2>/dev/null
python3 - "$WORK/satyr.txt" "$MNT/new3.mdl/model.mdl" <<'PY' || lfs_fail "writing new3.mdl/model.mdl failed"
import sys
data = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb") as f:
    f.write(data)
PY
[ -f "$SRC/new3.mdl" ] && lfs_ok "saving model.mdl compiled new3.mdl" || lfs_fail "no new3.mdl in SOURCE"
"$CONVERT" cat "$SRC/new3.mdl" model.mdl 2>/dev/null | grep -q "^newmodel new3$" &&
	lfs_ok "new3.mdl's model name is new3" || lfs_fail "new3.mdl's model name is not new3"
rename_text c_satyrarcher new3 <"$WORK/satyr.txt" >"$WORK/t/new3.mdl"
"$CONVERT" compile "$WORK/t/new3.mdl" -o "$WORK/new3_cli.mdl" 2>/dev/null
cmp -s "$WORK/new3_cli.mdl" "$SRC/new3.mdl" && lfs_ok "new3.mdl equals legacyfs-convert compile" ||
	lfs_fail "new3.mdl differs from legacyfs-convert compile"

# An editor's save: a temporary file renamed onto model.mdl (Python os.replace).
mkdir "$MNT/py4.mdl" || lfs_fail "mkdir py4.mdl"
python3 - "$WORK/satyr.txt" "$MNT/py4.mdl" <<'PY' || lfs_fail "os.replace onto py4.mdl/model.mdl failed"
import os, sys
with open(os.path.join(sys.argv[2], ".model.mdl.tmp"), "wb") as f:
    f.write(open(sys.argv[1], "rb").read())
os.replace(os.path.join(sys.argv[2], ".model.mdl.tmp"), os.path.join(sys.argv[2], "model.mdl"))
PY
"$CONVERT" cat "$SRC/py4.mdl" model.mdl 2>/dev/null | grep -q "^newmodel py4$" &&
	lfs_ok "os.replace onto model.mdl compiled py4.mdl" || lfs_fail "no py4.mdl after os.replace"

# ---- a bad text: refused, nothing written ----
mkdir "$MNT/bad1.mdl" || lfs_fail "mkdir bad1.mdl"
sed '12s/.*/  position O.5 0 0/' "$WORK/satyr.txt" >"$WORK/bad.txt"
if cp "$WORK/bad.txt" "$MNT/bad1.mdl/model.mdl" 2>/dev/null; then
	lfs_fail "a bad text was accepted"
else
	lfs_ok "a bad text is refused at close"
fi
[ -e "$SRC/bad1.mdl" ] && lfs_fail "a refused text wrote bad1.mdl into SOURCE"
grep -Eq "^model.mdl:[0-9]+:[0-9]+: error: " "$MNT/bad1.mdl/errors.txt" 2>/dev/null &&
	lfs_ok "errors.txt: $(grep -m1 error: "$MNT/bad1.mdl/errors.txt")" ||
	lfs_fail "no file:line:col error in bad1.mdl/errors.txt: $(cat "$MNT/bad1.mdl/errors.txt" 2>&1)"
rm -r "$MNT/bad1.mdl" && [ ! -e "$MNT/bad1.mdl" ] && lfs_ok "rm -r removes a pending folder" ||
	lfs_fail "rm -r bad1.mdl"

# ---- names that are not resrefs ----
mkdir "$MNT/a_name_longer_than16.mdl" 2>/dev/null && lfs_fail "mkdir of a 20-character resref accepted" ||
	lfs_ok "mkdir of a name longer than 16 characters refused"
mkdir "$MNT/bad-name.mdl" 2>/dev/null && lfs_fail "mkdir bad-name.mdl accepted" || lfs_ok "mkdir bad-name.mdl refused"
mv "$MNT/c_satyrarcher.mdl" "$MNT/bad-name.mdl" 2>/dev/null && lfs_fail "mv to bad-name.mdl accepted" ||
	lfs_ok "mv to a name that is not a resref refused"
grep -q "not a valid model name" "$MNT.log" && lfs_ok "the log says why" || lfs_fail "no refusal in the log"

# ---- mv of a model folder ----
mv "$MNT/c_satyrarcher.mdl" "$MNT/c_satyr2.mdl" && lfs_ok "mv c_satyrarcher.mdl c_satyr2.mdl" ||
	lfs_fail "mv of a model folder failed"
[ -f "$SRC/c_satyr2.mdl" ] && [ ! -e "$SRC/c_satyrarcher.mdl" ] && lfs_ok "SOURCE's file renamed" ||
	lfs_fail "SOURCE after mv: $(ls "$SRC")"
"$CONVERT" cat "$SRC/c_satyr2.mdl" model.mdl 2>/dev/null | grep -q "^newmodel c_satyr2$" &&
	lfs_ok "c_satyr2.mdl's model name is c_satyr2" || lfs_fail "c_satyr2.mdl's model name did not follow"
grep -q "^newmodel c_satyr2$" "$MNT/c_satyr2.mdl/model.mdl" && lfs_ok "the folder follows" ||
	lfs_fail "the mount's c_satyr2.mdl/model.mdl"
rename_text c_satyrarcher c_satyr2 <"$WORK/satyr.txt" >"$WORK/satyr_renamed.txt"
"$CONVERT" apply "$WORK/satyr_before.mdl" model.mdl "$WORK/satyr_renamed.txt" -o "$WORK/satyr_cli.mdl" 2>/dev/null
cmp -s "$WORK/satyr_cli.mdl" "$SRC/c_satyr2.mdl" && lfs_ok "mv equals legacyfs-convert apply of the renamed text" ||
	lfs_fail "c_satyr2.mdl differs from legacyfs-convert apply"

lfs_umount "$MNT"
stray=$(find "$SRC" -mindepth 1 -type d)
[ -z "$stray" ] && lfs_ok "no plain folder in SOURCE" || lfs_fail "stray folders in SOURCE: $stray"
lfs_finish
