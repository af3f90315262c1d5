#!/bin/bash
# Supermodels you can walk (docs/mount.md "Supermodels"): c_bodak and
# c_satyrarcher keep no animation of their own; they play a_ba's, which
# inherits more from its own supermodel a_ba_non_combat. Each model folder
# gets `supermodel` (a symbolic link to the supermodel's folder) and
# `anims/<name>` links for every inherited animation; the model's own
# animation of a name hides the inherited one; grep -r counts nothing twice;
# a missing supermodel and a cycle are reported and end; a save through an
# inherited animation lands in the supermodel's file; the links follow a
# supermodel that goes away. Corpus files are copied into the work dir.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_supermodel
T=$LFS_CORPUS/nwn/tree
DEV=$T/rollnw/tests/test_data/user/development
NC=$T/rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl/a_ba_non_combat.mdl
ABA=$T/krivoj-viewer/Supermodels/a_ba.mdl
for f in "$DEV/c_bodak.mdl" "$DEV/c_satyrarcher.mdl" "$NC" "$ABA"; do
	[ -f "$f" ] || lfs_skip "$f not in the corpus"
done
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC" "$WORK/asc"
cp "$DEV/c_bodak.mdl" "$DEV/c_satyrarcher.mdl" "$NC" "$SRC/"
# a_ba is ASCII in the corpus: compiled beside its own supermodel (part numbers)
cp "$ABA" "$NC" "$WORK/asc/"
"$CONVERT" compile "$WORK/asc/a_ba.mdl" -o "$SRC/a_ba.mdl" || lfs_die "compile a_ba"
# two copies whose supermodels name each other (a cycle), one naming none there
setsuper() { # FILE NAME: the 64-byte supermodel name at file offset 12 + 0xA8
	python3 - "$1" "$2" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[12 + 0xA8:12 + 0xA8 + 64] = sys.argv[2].encode().ljust(64, b'\0')
open(sys.argv[1], 'wb').write(b)
PY
}
cp "$SRC/a_ba.mdl" "$SRC/cyc_a.mdl"
cp "$NC" "$SRC/cyc_b.mdl"
cp "$DEV/c_bodak.mdl" "$SRC/lonely.mdl"
setsuper "$SRC/cyc_a.mdl" cyc_b
setsuper "$SRC/cyc_b.mdl" cyc_a
setsuper "$SRC/lonely.mdl" no_such_super
# a copy of a_ba whose supermodel is a_ba: every animation its own
cp "$SRC/a_ba.mdl" "$SRC/twin.mdl"
setsuper "$SRC/twin.mdl" a_ba
chmod 644 "$SRC"/*.mdl
# the same three models inside an archive: links into the archive's folder
"$CONVERT" pack "$SRC/t.hak" "$SRC/c_bodak.mdl" "$SRC/a_ba.mdl" "$SRC/a_ba_non_combat.mdl" || lfs_die "pack t.hak"
# a model's own animations: listed alone in a folder (no supermodel beside it)
names() {
	rm -rf "$WORK/solo" && mkdir "$WORK/solo" && cp "$1" "$WORK/solo/"
	"$CONVERT" list "$WORK/solo/$(basename "$1")" |
		awk -F'\t' '$2 ~ /^anims\/.*\// { split($2, p, "/"); print p[2] }' | sort -u
}
names "$SRC/a_ba.mdl" >"$WORK/own_aba"
names "$SRC/a_ba_non_combat.mdl" >"$WORK/own_nc"
names "$SRC/c_bodak.mdl" >"$WORK/own_bodak"
[ -s "$WORK/own_aba" ] && [ -s "$WORK/own_nc" ] || lfs_die "a_ba or a_ba_non_combat has no animation"
sort -u "$WORK/own_aba" "$WORK/own_nc" "$WORK/own_bodak" >"$WORK/want_bodak"
cp "$SRC/a_ba.mdl" "$WORK/a_ba.before"

lfs_mount "$SRC" "$MNT"
V="$MNT/c_bodak.mdl"
t=$(readlink "$V/supermodel") || lfs_fail "c_bodak.mdl/supermodel is no symbolic link"
[ "$t" = "../a_ba.mdl" ] && lfs_ok "c_bodak.mdl/supermodel -> $t" || lfs_fail "c_bodak.mdl/supermodel -> '$t'"
t=$(readlink "$MNT/a_ba.mdl/supermodel")
[ "$t" = "../a_ba_non_combat.mdl" ] && lfs_ok "a_ba.mdl/supermodel -> $t" || lfs_fail "a_ba.mdl/supermodel -> '$t'"
[ -d "$V/supermodel/anims" ] || lfs_fail "c_bodak.mdl/supermodel/anims is not a folder"
ls "$V/anims" | sort >"$WORK/got_bodak"
cmp -s "$WORK/got_bodak" "$WORK/want_bodak" &&
	lfs_ok "ls c_bodak.mdl/anims: $(wc -l <"$WORK/got_bodak") animations, a_ba's and a_ba_non_combat's" ||
	lfs_fail "ls c_bodak.mdl/anims differs from a_ba + a_ba_non_combat: $(diff "$WORK/want_bodak" "$WORK/got_bodak" | head -5)"
a=$(head -1 "$WORK/own_aba")
[ "$(readlink "$V/anims/$a")" = "../supermodel/anims/$a" ] || lfs_fail "c_bodak.mdl/anims/$a -> '$(readlink "$V/anims/$a")'"
n=$(comm -23 "$WORK/own_nc" "$WORK/own_aba" | head -1)
[ -n "$n" ] && [ -d "$V/anims/$n" ] && [ -f "$(find "$V/anims/$n/" -name '*.csv' | head -1)" ] &&
	lfs_ok "c_bodak.mdl/anims/$n reaches a_ba_non_combat through a_ba" ||
	lfs_fail "c_bodak.mdl/anims/$n (a_ba_non_combat's) not reachable"
# the model's own animation wins: twin's (all of a_ba's) are folders, never links
[ "$(readlink "$MNT/twin.mdl/supermodel")" = "../a_ba.mdl" ] || lfs_fail "twin.mdl/supermodel"
bad=0
while read -r x; do [ -L "$MNT/twin.mdl/anims/$x" ] && bad=$((bad + 1)); done <"$WORK/own_aba"
own=$(find "$MNT/twin.mdl/anims" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ $bad -eq 0 ] && [ "$own" -eq "$(wc -l <"$WORK/own_aba")" ] &&
	lfs_ok "twin.mdl's own $own animations hide a_ba's of the same names" ||
	lfs_fail "$bad of twin.mdl's own animations shown as links ($own folders)"
[ "$(readlink "$MNT/twin.mdl/anims/$n")" = "../supermodel/anims/$n" ] || lfs_fail "twin.mdl/anims/$n is no inherited link"
[ "$(readlink "$MNT/a_ba.mdl/anims/$n")" = "../supermodel/anims/$n" ] || lfs_fail "a_ba.mdl/anims/$n is no inherited link"
# grep -r follows no symbolic link: each file once
want=$(find -P "$MNT/c_bodak.mdl" -type f | wc -l)
got=$(grep -rl . "$V" | wc -l)
[ "$got" -eq "$want" ] && lfs_ok "grep -r c_bodak.mdl reads its $got own files only" ||
	lfs_fail "grep -r c_bodak.mdl read $got files, it has $want"
t=$(readlink "$MNT/t.hak/c_bodak.mdl/supermodel")
[ "$t" = "../../t.hak/a_ba.mdl" ] && [ "$(ls "$MNT/t.hak/c_bodak.mdl/anims" | wc -l)" -eq "$(wc -l <"$WORK/want_bodak")" ] &&
	[ -d "$MNT/t.hak/c_bodak.mdl/anims/$n/" ] && lfs_ok "t.hak/c_bodak.mdl/supermodel -> $t, same animations" ||
	lfs_fail "t.hak/c_bodak.mdl/supermodel -> '$t'"
t=$(readlink "$MNT/c_satyrarcher.mdl/supermodel")
[ "$t" = "../a_ba.mdl" ] || lfs_fail "c_satyrarcher.mdl/supermodel -> '$t'"
# missing supermodel: no link, a warning naming where it looked
[ -e "$MNT/lonely.mdl/supermodel" ] || [ -L "$MNT/lonely.mdl/supermodel" ] &&
	lfs_fail "lonely.mdl has a supermodel link"
ls "$MNT/lonely.mdl" >/dev/null
grep -q "^lonely.mdl: supermodel no_such_super of lonely.mdl not found: looked for no_such_super.mdl" \
	"$MNT/.legacyfs/errors" && lfs_ok "missing supermodel reported" ||
	lfs_fail "no warning for lonely.mdl: $(cat "$MNT/.legacyfs/errors")"
# a cycle ends and is reported
[ "$(timeout 20 readlink "$MNT/cyc_a.mdl/supermodel")" = "../cyc_b.mdl" ] || lfs_fail "cyc_a.mdl/supermodel"
[ "$(timeout 20 readlink "$MNT/cyc_b.mdl/supermodel")" = "../cyc_a.mdl" ] || lfs_fail "cyc_b.mdl/supermodel"
timeout 20 ls "$MNT/cyc_a.mdl/anims" | sort >"$WORK/got_cyc"
cmp -s "$WORK/got_cyc" <(sort -u "$WORK/own_aba" "$WORK/own_nc") &&
	lfs_ok "cyc_a.mdl/anims: its own and cyc_b's" || lfs_fail "cyc_a.mdl/anims: $(head -3 "$WORK/got_cyc")"
[ -d "$MNT/cyc_b.mdl/anims/$a/" ] || lfs_fail "cyc_b.mdl/anims/$a (cyc_a's) does not resolve"
grep -q "^cyc_a.mdl: supermodel chain of cyc_a.mdl comes back to cyc_a.mdl (a cycle)" "$MNT/.legacyfs/errors" &&
	lfs_ok "cycle cyc_a -> cyc_b -> cyc_a reported" || lfs_fail "cycle not reported: $(cat "$MNT/.legacyfs/errors")"
# a save through an inherited animation changes the supermodel's file
f=$(cd "$V/anims/$a" && ls *.position.csv 2>/dev/null | head -1)
[ -n "$f" ] || f=$(cd "$V/anims/$a" && ls | head -1)
awk -F, 'NR == 2 { $NF = $NF + 0.5 } 1' OFS=, "$V/anims/$a/$f" >"$WORK/edited.csv"
cat "$WORK/edited.csv" >"$V/anims/$a/$f" || lfs_fail "write through c_bodak.mdl/anims/$a/$f"
cmp -s "$SRC/a_ba.mdl" "$WORK/a_ba.before" && lfs_fail "a_ba.mdl unchanged after the save"
cmp -s "$SRC/c_bodak.mdl" "$DEV/c_bodak.mdl" || lfs_fail "c_bodak.mdl changed"
"$CONVERT" cat "$SRC/a_ba.mdl" "anims/$a/$f" >"$WORK/after.csv"
cmp -s "$WORK/after.csv" "$WORK/edited.csv" && lfs_ok "save through c_bodak.mdl/anims/$a/$f landed in a_ba.mdl" ||
	lfs_fail "a_ba.mdl's anims/$a/$f is not the edited text"
# the links follow the supermodel: loose a_ba gone, the archive's copy wins
# (docs/archives.md "Resources by ResRef"); the archive gone too, no link
mv "$SRC/a_ba.mdl" "$WORK/a_ba.away"
lfs_wait_until 20 bash -c "[ \"\$(readlink '$V/supermodel')\" = ../t.hak/a_ba.mdl ]" &&
	lfs_ok "a_ba.mdl gone: c_bodak.mdl/supermodel -> ../t.hak/a_ba.mdl" ||
	lfs_fail "c_bodak.mdl/supermodel -> '$(readlink "$V/supermodel")' after a_ba.mdl went"
mv "$SRC/t.hak" "$WORK/t.away"
lfs_wait_until 20 bash -c "! [ -L '$V/supermodel' ]" && lfs_ok "t.hak gone: c_bodak.mdl/supermodel gone" ||
	lfs_fail "c_bodak.mdl/supermodel still there after a_ba.mdl and t.hak went"
lfs_umount "$MNT"
lfs_finish
