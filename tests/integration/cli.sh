#!/bin/bash
# Command-line behaviour of legacyfs and legacyfs-convert that needs no mount:
# --help/--version, usage errors, exit codes of legacyfs-convert (0 model,
# 1 error, 2 usage, 3 not a model), list/cat/extract agreeing with each other,
# and the batch forms (many models in one process: cat, extract -d,
# compile -d, thumbnail -d) giving exactly the per-file outputs, a bad file
# reported without stopping the batch, and -j 4 (a batch on 4 threads)
# giving byte for byte what -j 1 gives (all corpus binaries; a batch with
# failures in the middle: the same stderr lines in the same order, exit).
# pack/unpack: corpus models packed into a hak list as model folders and
# unpack to their own bytes; bad ResRefs, unknown types and duplicates are
# refused by name with nothing written; corpus archives unpacked and packed
# again keep every payload.
# Option forms (getopt_long): -s256, -s 256, --size=256, --size 256, an
# abbreviation, bundles (-qs256, -qv VIEW), options after the operands (also
# with POSIXLY_CORRECT set) or before the subcommand, -dOUT, --dest=OUT,
# apply's -o OUT anywhere give the canonical form's bytes; -- lets a model
# named -dash.mdl through; an unknown, ambiguous or argument-less option and
# an out-of-range number: exit 2, the option named, one usage line.
. "$(dirname "$0")/lib.sh"
lfs_require_corpus
lfs_workdir cli

expect_rc() {
	want=$1
	shift
	set +e
	"$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	set -e
	if [ "$rc" = "$want" ]; then lfs_ok "exit $want: $*"; else
		cat "$WORK/err" >&2
		lfs_fail "exit $rc (want $want): $*"
	fi
}

expect_rc 0 "$LEGACYFS" --help
grep -q 'timeout=' "$WORK/out" && grep -q -- '-o mt' "$WORK/out" || lfs_fail "legacyfs --help lacks our options"
# a model X.mdl appears as the folder X.mdl/ (the same name), not X/
grep -q 'folder of the same name (X.mdl/' "$WORK/out" && ! grep -q 'folder X/' "$WORK/out" ||
	lfs_fail "legacyfs --help does not say a model appears as X.mdl/"
expect_rc 0 "$LEGACYFS" --version
grep -q '^legacyfs ' "$WORK/out" || lfs_fail "legacyfs --version"
expect_rc 1 "$LEGACYFS"
expect_rc 1 "$LEGACYFS" "$WORK/does-not-exist" "$WORK"
grep -q 'does-not-exist' "$WORK/err" || lfs_fail "missing SOURCE not named"
mkdir -p "$WORK/src/inner"
expect_rc 1 "$LEGACYFS" "$WORK/src" "$WORK/src/inner"
grep -q 'inside SOURCE' "$WORK/err" || lfs_fail "mountpoint inside SOURCE not refused clearly"
expect_rc 1 "$LEGACYFS" -o no_such_option "$WORK/src" "$WORK"

expect_rc 0 "$CONVERT" --help
expect_rc 0 "$CONVERT" --version
expect_rc 2 "$CONVERT"
expect_rc 2 "$CONVERT" frobnicate x
expect_rc 2 "$CONVERT" list
expect_rc 1 "$CONVERT" list "$WORK/does-not-exist.mdl"

bin="$LFS_CORPUS/nwn/$(head -1 "$LFS_CORPUS/nwn/binary.txt")"
ascii="$LFS_CORPUS/nwn/$(head -1 "$LFS_CORPUS/nwn/ascii.txt")"
expect_rc 3 "$CONVERT" list "$ascii"
expect_rc 0 "$CONVERT" list --root "$LFS_CORPUS/nwn/tree" "$bin"
cp "$WORK/out" "$WORK/list"
grep -q "	model.mdl$" "$WORK/list" || lfs_fail "list lacks model.mdl"
expect_rc 1 "$CONVERT" cat "$bin" no/such/view.obj
expect_rc 2 "$CONVERT" list --root "$WORK" "$bin"
expect_rc 0 "$CONVERT" extract --root "$LFS_CORPUS/nwn/tree" "$bin" "$WORK/x"
# list, cat and extract agree
while IFS=$'\t' read -r size path; do
	"$CONVERT" cat --root "$LFS_CORPUS/nwn/tree" "$bin" "$path" >"$WORK/one"
	[ "$(wc -c <"$WORK/one")" = "$size" ] || lfs_fail "cat $path: size differs from list"
	cmp -s "$WORK/one" "$WORK/x/$path" || lfs_fail "cat $path differs from extract"
done <"$WORK/list"
[ "$(find "$WORK/x" -type f | wc -l)" = "$(wc -l <"$WORK/list")" ] || lfs_fail "extract wrote another number of files than list"
lfs_ok "list/cat/extract agree"

# ---- batch: many models in one process equal one process per model ----
# inputs: the samples, NWN binaries from two folders, NOD/SOD/NAD files
mapfile -t models < <(ls "$LFS_SOURCE_ROOT"/samples/*.mdl; sed -n '1,6p;200,205p' "$LFS_CORPUS/nwn/binary.txt" | sed "s|^|$LFS_CORPUS/nwn/|";
	ls "$LFS_CORPUS"/nod/*.nod | head -3; ls "$LFS_CORPUS"/sod/*.sod | head -3; ls "$LFS_CORPUS"/nad/*.nad | head -2)
[ "${#models[@]}" -ge 15 ] || lfs_fail "batch inputs: only ${#models[@]} models"

# cat: each model's text view (list's first LFS_VIEW_TEXT view), in order
expect_rc 0 "$CONVERT" cat "${models[@]}"
mv "$WORK/out" "$WORK/cat.batch"
: >"$WORK/cat.each"
for m in "${models[@]}"; do
	"$CONVERT" list "$m" >"$WORK/l" || lfs_fail "list $m"
	case $m in *.mdl) v=model.mdl ;; *.nod | *.sod) v=model.txt ;; *.nad) v=anim.txt ;; esac
	grep -q "	$v$" "$WORK/l" || lfs_fail "$m: no view $v"
	"$CONVERT" cat "$m" "$v" >>"$WORK/cat.each" || lfs_fail "cat $m $v"
done
cmp -s "$WORK/cat.batch" "$WORK/cat.each" && lfs_ok "cat of ${#models[@]} models = the per-file cats" ||
	lfs_fail "batch cat differs from the per-file cats"
[ -s "$WORK/err" ] && lfs_fail "batch cat wrote to stderr (not a terminal: no progress line): $(head -c 200 "$WORK/err")"
expect_rc 0 "$CONVERT" cat -v model.mtl "${models[1]}" "${models[3]}"
{ "$CONVERT" cat "${models[1]}" model.mtl; "$CONVERT" cat "${models[3]}" model.mtl; } | cmp -s - "$WORK/out" ||
	lfs_fail "cat -v model.mtl differs from the per-file cats"

# extract -d: OUT/<file name>/ = the one-model extract
expect_rc 0 "$CONVERT" extract -d "$WORK/xb" "${models[@]}"
mkdir -p "$WORK/xe"
for m in "${models[@]}"; do
	b=$(basename "$m")
	"$CONVERT" extract "$m" "$WORK/xe/$b" || lfs_fail "extract $m"
done
diff -r "$WORK/xb" "$WORK/xe" >/dev/null && lfs_ok "extract -d of ${#models[@]} models = the per-file extracts" ||
	lfs_fail "extract -d differs from the per-file extracts: $(diff -rq "$WORK/xb" "$WORK/xe" | head -3)"

# thumbnail -d: OUT/<file name>.png; -s256 as -s 256; models without
# triangles fail (exit 1) without stopping the others
thumbs=("$LFS_SOURCE_ROOT/samples/box.mdl" "$LFS_SOURCE_ROOT/samples/skin2bone.mdl" "$LFS_CORPUS"/nod/PLC_C04.nod)
expect_rc 0 "$CONVERT" thumbnail -s200 -d "$WORK/tb" "${thumbs[@]}"
for m in "${thumbs[@]}"; do
	"$CONVERT" thumbnail -s 256 "$m" "$WORK/one.png" || lfs_fail "thumbnail $m"
	cmp -s "$WORK/one.png" "$WORK/tb/$(basename "$m").png" || lfs_fail "thumbnail -d of $m differs from the one-file thumbnail"
done
lfs_ok "thumbnail -d = the per-file thumbnails"
# thumbnail of an ASCII NWN model (issue 26): compiled in memory and drawn
# (list/cat still say "not a model": only the thumbnail compiles it)
ax=$(grep -m1 '/Textures/c_a_ox\.mdl$' "$LFS_CORPUS/nwn/ascii.txt") || lfs_die "no ASCII c_a_ox.mdl in ascii.txt"
ax=$LFS_CORPUS/nwn/$ax
rm -f "$WORK/ascii.png"
expect_rc 0 "$CONVERT" thumbnail -s 128 "$ax" "$WORK/ascii.png"
[ "$(head -c 4 "$WORK/ascii.png" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e47 ] &&
	lfs_ok "thumbnail of ASCII c_a_ox.mdl: a PNG" || lfs_fail "thumbnail of ASCII $ax wrote no PNG"
expect_rc 0 "$CONVERT" thumbnail -s 128 -d "$WORK/atb" "$ax"
cmp -s "$WORK/ascii.png" "$WORK/atb/c_a_ox.mdl.png" || lfs_fail "thumbnail -d of ASCII c_a_ox.mdl differs from the one-file thumbnail"
expect_rc 3 "$CONVERT" cat "$ax" model.mdl
# an ASCII text that does not compile: exit 1, the compiler's line and column
printf 'newmodel brk\nbeginmodelgeom brk\nnode trimesh a\n parent brk\n verts 1\n  1 2\nendnode\nendmodelgeom brk\ndonemodel brk\n' >"$WORK/brk.mdl"
expect_rc 1 "$CONVERT" thumbnail "$WORK/brk.mdl" "$WORK/brk.png"
grep -q 'brk.mdl: error: line 6, column 3: ' "$WORK/err" && lfs_ok "thumbnail of a broken ASCII model names line and column" ||
	lfs_fail "thumbnail of a broken ASCII model: $(cat "$WORK/err")"

# compile -d: OUT/<file name> = compile -o; refusing to write over its input
mapfile -t asc < <(sed -n '1,4p' "$LFS_CORPUS/nwn/ascii.txt" | sed "s|^|$LFS_CORPUS/nwn/|")
expect_rc 0 "$CONVERT" compile -d "$WORK/cb" "${asc[@]}"
for a in "${asc[@]}"; do
	"$CONVERT" compile "$a" -o "$WORK/one.bin" 2>/dev/null || lfs_fail "compile $a"
	cmp -s "$WORK/one.bin" "$WORK/cb/$(basename "$a")" || lfs_fail "compile -d of $a differs from compile -o"
done
lfs_ok "compile -d = the per-file compiles"
cp "${asc[0]}" "$WORK/self.mdl"
expect_rc 1 "$CONVERT" compile -d "$WORK" "$WORK/self.mdl"
grep -q 'self.mdl: error: .*input itself' "$WORK/err" || lfs_fail "compile -d over its own input not refused clearly"
cmp -s "${asc[0]}" "$WORK/self.mdl" || lfs_fail "compile -d wrote over its own input"

# one bad file among good ones: its error in compiler style, the rest done, exit 1
# (a binary whose geometry header is overwritten: it looks like a model, does not decode)
good="$LFS_CORPUS/nwn/$(head -1 "$LFS_CORPUS/nwn/binary.txt")"
{ head -c 100 "$good"; head -c 400 /dev/zero | tr '\0' '\377'; tail -c +501 "$good"; } >"$WORK/broken.mdl"
mix=("${models[0]}" "$WORK/broken.mdl" "${models[4]}" "$WORK/does-not-exist.mdl" "${models[8]}")
expect_rc 1 "$CONVERT" extract -d "$WORK/xm" "${mix[@]}"
grep -q "^$WORK/broken.mdl: error: " "$WORK/err" || lfs_fail "no compiler-style error for the broken model: $(cat "$WORK/err")"
grep -q "^$WORK/does-not-exist.mdl: error: " "$WORK/err" || lfs_fail "no error for the missing file"
grep -q "2 of 5 files failed" "$WORK/err" || lfs_fail "no summary of the failures"
for m in "${models[0]}" "${models[4]}" "${models[8]}"; do
	diff -r "$WORK/xm/$(basename "$m")" "$WORK/xe/$(basename "$m")" >/dev/null || lfs_fail "$m not extracted after a failure before it"
done
[ -e "$WORK/xm/broken.mdl" ] && [ -n "$(ls -A "$WORK/xm/broken.mdl")" ] && lfs_fail "broken model left views"
lfs_ok "a bad file is reported, the rest of the batch done"
expect_rc 1 "$CONVERT" cat "${models[0]}" "$WORK/broken.mdl" "${models[4]}"
{ "$CONVERT" cat "${models[0]}" model.mdl; "$CONVERT" cat "${models[4]}" model.mdl; } | cmp -s - "$WORK/out" ||
	lfs_fail "batch cat with a bad file: the good ones differ"
expect_rc 3 "$CONVERT" cat "${models[0]}" "$LFS_CORPUS/nwn/ascii.txt"
expect_rc 1 "$CONVERT" extract -d "$WORK/xd" "${models[0]}" "${models[0]}"
grep -q 'same file name' "$WORK/err" || lfs_fail "two inputs of one name not refused"

# ---- -j N: the models of a batch on N threads, output as with -j 1 ----
# every corpus binary: cat's stdout and extract's folders byte for byte
mapfile -t allbin < <(sed "s|^|$LFS_CORPUS/nwn/|" "$LFS_CORPUS/nwn/binary.txt")
for j in 1 4; do
	expect_rc 0 "$CONVERT" cat -j "$j" "${allbin[@]}"
	mv "$WORK/out" "$WORK/cat.j$j"
	[ -s "$WORK/err" ] && lfs_fail "cat -j $j wrote to stderr: $(head -c 200 "$WORK/err")"
done
[ "$(wc -c <"$WORK/cat.j1")" -gt 1000000 ] || lfs_fail "cat of ${#allbin[@]} binaries: only $(wc -c <"$WORK/cat.j1") bytes"
cmp -s "$WORK/cat.j1" "$WORK/cat.j4" && lfs_ok "cat -j 4 of ${#allbin[@]} binaries = cat -j 1" ||
	lfs_fail "cat -j 4 differs from cat -j 1"
mapfile -t uniqbin < <(printf '%s\n' "${allbin[@]}" | awk -F/ '!seen[$NF]++')
expect_rc 0 "$CONVERT" extract -j 1 --thumb-size 0 -d "$WORK/xj1" "${uniqbin[@]}"
expect_rc 0 "$CONVERT" extract --jobs=4 --thumb-size 0 -d "$WORK/xj4" "${uniqbin[@]}"
[ "$(ls "$WORK/xj4" | wc -l)" = "${#uniqbin[@]}" ] || lfs_fail "extract -j 4 wrote $(ls "$WORK/xj4" | wc -l) folders of ${#uniqbin[@]}"
diff -r --no-dereference "$WORK/xj1" "$WORK/xj4" >/dev/null && lfs_ok "extract -j 4 of ${#uniqbin[@]} binaries = extract -j 1" ||
	lfs_fail "extract -j 4 differs from -j 1: $(diff -rq --no-dereference "$WORK/xj1" "$WORK/xj4" | head -3)"
rm -rf "$WORK/xj1" "$WORK/xj4" "$WORK/cat.j1" "$WORK/cat.j4"
# a batch with failures in the middle (broken, missing, not a model, a
# repeated file name): the same stdout, stderr lines in the same order, exit
bad=("${models[0]}" "$WORK/broken.mdl" "${models[4]}" "$WORK/does-not-exist.mdl" "${models[8]}"
	"$LFS_CORPUS/nwn/ascii.txt" "${models[1]}" "${models[0]}" "${models[9]}")
for j in 1 4; do
	expect_rc 1 "$CONVERT" cat -j "$j" "${bad[@]}"
	mv "$WORK/out" "$WORK/bcat.out.j$j"
	mv "$WORK/err" "$WORK/bcat.err.j$j"
	expect_rc 1 "$CONVERT" extract -j "$j" --thumb-size 0 -d "$WORK/bx$j" "${bad[@]}"
	mv "$WORK/err" "$WORK/bx.err.j$j"
	expect_rc 1 "$CONVERT" thumbnail -j "$j" -d "$WORK/bt$j" "${bad[@]}"
	mv "$WORK/err" "$WORK/bt.err.j$j"
	expect_rc 1 "$CONVERT" compile -j "$j" -d "$WORK/bc$j" "${asc[@]}" "$WORK/broken.mdl" "${asc[0]}"
	mv "$WORK/err" "$WORK/bc.err.j$j"
done
grep -q "^$WORK/broken.mdl: error: " "$WORK/bcat.err.j4" && grep -q "3 of 9 files failed" "$WORK/bcat.err.j4" ||
	lfs_fail "cat -j 4 with failures: $(cat "$WORK/bcat.err.j4")"
grep -q 'same file name' "$WORK/bx.err.j4" || lfs_fail "extract -j 4: repeated name not refused"
for k in bcat.out bcat.err bx.err bt.err bc.err; do
	cmp -s "$WORK/$k.j1" "$WORK/$k.j4" || lfs_fail "-j 4 with failures: $k differs from -j 1: $(diff "$WORK/$k.j1" "$WORK/$k.j4" | head -4)"
done
for d in bx bt bc; do
	diff -r "$WORK/${d}1" "$WORK/${d}4" >/dev/null || lfs_fail "-j 4 with failures: $d folders differ"
done
lfs_ok "-j 4 with failures in the middle = -j 1 (stdout, stderr in order, files, exit 1)"
expect_rc 2 "$CONVERT" cat -j 0 "${models[0]}"
expect_rc 2 "$CONVERT" cat -j x "${models[0]}"
expect_rc 2 "$CONVERT" cat -d "$WORK/x2" "${models[0]}"
expect_rc 2 "$CONVERT" list -s 256 "${models[0]}"
expect_rc 2 "$CONVERT" --no-such-option list "${models[0]}"
# ---- option forms (getopt_long): each equals the canonical form byte for byte ----
# same_as REF COMMAND...: COMMAND exits 0 and its stdout is the file REF
# (written by the canonical form before)
same_as() {
	ref=$1
	shift
	expect_rc 0 "$@"
	cmp -s "$WORK/out" "$ref" || lfs_fail "$* differs from the canonical form"
}
# thumbnail -s SIZE: the PNG files of a corpus model with triangles (BioWare's c_aribeth)
tm=$(grep -m1 '/c_aribeth\.mdl$' "$LFS_CORPUS/nwn/binary.txt") || lfs_die "no c_aribeth.mdl in binary.txt"
tm=$LFS_CORPUS/nwn/$tm
"$CONVERT" thumbnail -s 256 "$tm" "$WORK/canon.png" || lfs_fail "thumbnail -s 256 $tm"
[ -s "$WORK/canon.png" ] || lfs_fail "thumbnail -s 256: no PNG"
"$CONVERT" thumbnail -s 1024 "$tm" "$WORK/big.png" || lfs_fail "thumbnail -s 1024 $tm"
cmp -s "$WORK/canon.png" "$WORK/big.png" && lfs_fail "thumbnail -s 1024 = -s 256: the size option is not read"
for form in "-s256" "-s 256" "--size=256" "--size 256" "--si=256" "-qs256" "-qs 256" "-s 200"; do
	# shellcheck disable=SC2086 # the form is split into its words on purpose
	expect_rc 0 "$CONVERT" thumbnail $form "$tm" "$WORK/form.png"
	cmp -s "$WORK/form.png" "$WORK/canon.png" || lfs_fail "thumbnail $form differs from -s 256"
	# shellcheck disable=SC2086
	expect_rc 0 "$CONVERT" thumbnail "$tm" "$WORK/form.png" $form # options after the operands
	cmp -s "$WORK/form.png" "$WORK/canon.png" || lfs_fail "thumbnail MODEL OUT $form differs from -s 256"
done
# options after the operands even when POSIXLY_CORRECT is set, and before the subcommand
expect_rc 0 env POSIXLY_CORRECT=1 "$CONVERT" thumbnail "$tm" "$WORK/form.png" -s 256
cmp -s "$WORK/form.png" "$WORK/canon.png" || lfs_fail "POSIXLY_CORRECT=1 thumbnail MODEL OUT -s 256 differs"
expect_rc 0 "$CONVERT" --size=256 thumbnail "$tm" "$WORK/form.png"
cmp -s "$WORK/form.png" "$WORK/canon.png" || lfs_fail "--size=256 thumbnail MODEL OUT differs"
lfs_ok "thumbnail: -s256, -s 256, --size=256, --size 256, --si=256, -qs256, after the operands, POSIXLY_CORRECT = -s 256"
# cat -v VIEW (batch), -q bundled with -v, -j N
"$CONVERT" cat -v model.mtl -j 1 "${models[1]}" "${models[3]}" >"$WORK/canon.cat" || lfs_fail "cat -v model.mtl"
[ -s "$WORK/canon.cat" ] || lfs_fail "cat -v model.mtl: empty"
same_as "$WORK/canon.cat" "$CONVERT" cat --view=model.mtl -j1 "${models[1]}" "${models[3]}"
same_as "$WORK/canon.cat" "$CONVERT" cat --view model.mtl --jobs=4 "${models[1]}" "${models[3]}"
same_as "$WORK/canon.cat" "$CONVERT" cat -qv model.mtl -j4 "${models[1]}" "${models[3]}"
same_as "$WORK/canon.cat" "$CONVERT" cat -qvmodel.mtl "${models[1]}" "${models[3]}"
same_as "$WORK/canon.cat" "$CONVERT" cat "${models[1]}" -v model.mtl "${models[3]}" -q
same_as "$WORK/canon.cat" env POSIXLY_CORRECT=1 "$CONVERT" cat "${models[1]}" "${models[3]}" -v model.mtl
same_as "$WORK/canon.cat" "$CONVERT" -v model.mtl cat "${models[1]}" "${models[3]}"
lfs_ok "cat: --view=V, --view V, -qv V, -qvV, -j4, --jobs=4, options between and after the operands = cat -v V -j 1"
# extract -d OUT = --dest=OUT = --dest OUT = -dOUT
"$CONVERT" extract --thumb-size 0 -d "$WORK/fd0" "${models[1]}" "${models[3]}" || lfs_fail "extract -d"
[ -n "$(ls -A "$WORK/fd0/$(basename "${models[1]}")")" ] || lfs_fail "extract -d wrote no views"
expect_rc 0 "$CONVERT" extract --thumb-size=0 --dest="$WORK/fd1" "${models[1]}" "${models[3]}"
expect_rc 0 "$CONVERT" extract "${models[1]}" --dest "$WORK/fd2" "${models[3]}" --thumb-size 0
expect_rc 0 "$CONVERT" extract -d"$WORK/fd3" --thumb-s=0 "${models[1]}" "${models[3]}"
for d in fd1 fd2 fd3; do
	diff -r "$WORK/fd0" "$WORK/$d" >/dev/null || lfs_fail "extract form $d differs from extract -d OUT"
done
lfs_ok "extract: --dest=OUT, --dest OUT after an operand, -dOUT, --thumb-s=0 = -d OUT --thumb-size 0"
# apply ... -o OUT in each order today's callers use
"$CONVERT" cat "$bin" model.mdl >"$WORK/edit.mdl" || lfs_fail "cat model.mdl"
sed -i '0,/^  position /s/^  position .*/  position 0.25 0.5 0.75/' "$WORK/edit.mdl"
grep -q '^  position 0.25 0.5 0.75$' "$WORK/edit.mdl" || lfs_fail "the edit of model.mdl did not land"
"$CONVERT" apply "$bin" model.mdl "$WORK/edit.mdl" -o "$WORK/ap0.mdl" || lfs_fail "apply ... -o OUT"
cmp -s "$bin" "$WORK/ap0.mdl" && lfs_fail "apply of an edited position wrote the input's bytes"
expect_rc 0 "$CONVERT" apply -o "$WORK/ap1.mdl" "$bin" model.mdl "$WORK/edit.mdl"
expect_rc 0 "$CONVERT" apply "$bin" --output="$WORK/ap2.mdl" model.mdl "$WORK/edit.mdl"
expect_rc 0 "$CONVERT" -o "$WORK/ap3.mdl" apply "$bin" model.mdl "$WORK/edit.mdl"
same_as "$WORK/ap0.mdl" "$CONVERT" apply "$bin" model.mdl "$WORK/edit.mdl" -o -
for k in 1 2 3; do cmp -s "$WORK/ap0.mdl" "$WORK/ap$k.mdl" || lfs_fail "apply form $k differs from apply ... -o OUT"; done
lfs_ok "apply: -o OUT first, --output=OUT between, -o before the subcommand, -o - = apply ... -o OUT"
# check MODEL VIEWPATH EDITED: apply's messages naming EDITED, nothing written
cp "$bin" "$WORK/chk.mdl"
expect_rc 0 "$CONVERT" check "$WORK/chk.mdl" model.mdl "$WORK/edit.mdl"
[ -s "$WORK/err" ] && lfs_fail "check of a good edit printed: $(head -3 "$WORK/err")"
sed '0,/^  position /s/^  position .*/  position 0.25 O.5 0.75/' "$WORK/edit.mdl" >"$WORK/typo.mdl"
tline=$(grep -n '^  position 0.25 O.5 0.75$' "$WORK/typo.mdl" | cut -d: -f1)
[ -n "$tline" ] || lfs_fail "the typo did not land"
expect_rc 1 "$CONVERT" check "$WORK/chk.mdl" model.mdl "$WORK/typo.mdl"
grep -q "^$WORK/typo.mdl:$tline:[0-9]*: error: .*O.5" "$WORK/err" ||
	lfs_fail "check of a typo: want $WORK/typo.mdl:$tline:COL: error naming O.5, got: $(cat "$WORK/err")"
[ "$(wc -l <"$WORK/out")" = 0 ] || lfs_fail "check wrote to stdout"
# the problem matcher of contrib/vscode/tasks.json reads that line (file, line, column, severity)
python3 - "$LFS_SOURCE_ROOT/contrib/vscode/tasks.json" "$WORK/err" "$WORK/typo.mdl" "$tline" <<'PY' ||
import json, re, sys
pat = json.load(open(sys.argv[1]))["tasks"][0]["problemMatcher"]["pattern"]
m = re.match(pat["regexp"], open(sys.argv[2]).readline().rstrip("\n"))
assert m, "no match"
assert m.group(pat["file"]) == sys.argv[3], m.group(pat["file"])
assert m.group(pat["line"]) == sys.argv[4], m.group(pat["line"])
assert m.group(pat["severity"]) == "error" and "O.5" in m.group(pat["message"])
PY
	lfs_fail "contrib/vscode/tasks.json's problem matcher does not read check's message"
cmp -s "$bin" "$WORK/chk.mdl" || lfs_fail "check changed the model's bytes"
# the same error as apply's (which names the view, as the mount's errors.txt)
expect_rc 1 "$CONVERT" apply "$WORK/chk.mdl" model.mdl "$WORK/typo.mdl" -o "$WORK/never.mdl"
grep -q "^model.mdl:$tline:" "$WORK/err" || lfs_fail "apply's message of the typo: $(cat "$WORK/err")"
[ -e "$WORK/never.mdl" ] && lfs_fail "a refused apply wrote OUT"
expect_rc 2 "$CONVERT" check "$WORK/chk.mdl" model.mdl "$WORK/typo.mdl" -o "$WORK/never.mdl"
expect_rc 2 "$CONVERT" check "$WORK/chk.mdl" model.mdl
lfs_ok "check: a good edit exits 0 silently, a typo exits 1 with EDITED:LINE:COL: error, the model untouched"
# cat MODEL VIEWPATH where ./VIEWPATH exists (inside a mounted model folder):
# the second operand is a view unless it is a binary model file
mkdir -p "$WORK/inmount"
cp "$WORK/edit.mdl" "$WORK/inmount/model.mdl"
"$CONVERT" cat "$bin" model.mdl >"$WORK/cat-view.mdl" || lfs_fail "cat MODEL model.mdl"
(cd "$WORK/inmount" && "$CONVERT" cat "$bin" model.mdl) >"$WORK/cat-here.mdl" 2>"$WORK/err" ||
	lfs_fail "cat MODEL model.mdl with ./model.mdl present: $(cat "$WORK/err")"
cmp -s "$WORK/cat-view.mdl" "$WORK/cat-here.mdl" || lfs_fail "cat MODEL model.mdl read ./model.mdl as a model"
cp "$bin" "$WORK/inmount/other.mdl"
(cd "$WORK/inmount" && "$CONVERT" cat "$bin" other.mdl) >"$WORK/cat-two" 2>"$WORK/err" ||
	lfs_fail "cat MODEL MODEL2: $(cat "$WORK/err")"
[ "$(wc -c <"$WORK/cat-two")" = $((2 * $(wc -c <"$WORK/cat-view.mdl"))) ] ||
	lfs_fail "cat MODEL MODEL2 (a binary model) is no longer a batch of two"
lfs_ok "cat MODEL VIEWPATH: a text file named like the view is the view, a binary model a second model"
# -- ends the options: a model named -dash.mdl
cp "$bin" "$WORK/-dash.mdl"
"$CONVERT" cat "$bin" >"$WORK/canon.text" || lfs_fail "cat $bin"
here=$PWD
cd "$WORK" # the operand must start with '-': a name relative to $WORK
expect_rc 0 "$CONVERT" cat -- -dash.mdl
cmp -s "$WORK/out" "$WORK/canon.text" || lfs_fail "cat -- -dash.mdl differs from the corpus model's cat"
expect_rc 0 "$CONVERT" cat -q -- -dash.mdl model.mdl
cmp -s "$WORK/out" "$WORK/canon.text" || lfs_fail "cat -- -dash.mdl model.mdl differs"
expect_rc 0 "$CONVERT" extract --thumb-size 0 -d dashx -- -dash.mdl
[ -s "$WORK/dashx/-dash.mdl/model.mdl" ] || lfs_fail "extract -d dashx -- -dash.mdl: no model.mdl"
cmp -s "$WORK/dashx/-dash.mdl/model.mdl" "$WORK/canon.text" || lfs_fail "extract -- -dash.mdl: model.mdl differs"
expect_rc 2 "$CONVERT" cat -dash.mdl # without --: -d ash.mdl, a usage error
cd "$here"
lfs_ok "-- ends the options: cat and extract of a model named -dash.mdl"
# refused options: the message names the option, one usage line, exit 2
expect_err() { # expect_err MESSAGE ARGS...: exit 2, MESSAGE on stderr's first line, then one usage line
	msg=$1
	shift
	expect_rc 2 "$CONVERT" "$@"
	[ "$(head -1 "$WORK/err")" = "legacyfs-convert: $msg" ] || lfs_fail "$*: stderr $(head -c 300 "$WORK/err"), want: $msg"
	[ "$(wc -l <"$WORK/err")" = 2 ] && grep -q '^usage: legacyfs-convert ' "$WORK/err" ||
		lfs_fail "$*: not one usage line after the message: $(head -c 300 "$WORK/err")"
	[ -s "$WORK/out" ] && lfs_fail "$*: wrote to stdout"
	return 0
}
expect_err "unknown option '--x'" cat --x "$bin"
expect_err "unknown option '--x'" cat "$bin" --x=3
expect_err "unknown option '-x'" cat -x "$bin"
expect_err "unknown option '-x'" cat -qx "$bin"
expect_err "option '--t' is ambiguous: --thumb-size --type" extract --t 0 "$bin" "$WORK/amb"
expect_err "option '-s' needs an argument" thumbnail "$bin" "$WORK/m.png" -s
expect_err "option '-s' needs an argument" thumbnail "$bin" "$WORK/m.png" -qs
expect_err "option '--size' needs an argument" thumbnail "$bin" "$WORK/m.png" --size
expect_err "option '--root' needs an argument" list "$bin" --root
expect_err "option '--output' needs an argument" apply "$bin" model.mdl "$WORK/edit.mdl" --output
expect_err "option '--quiet' takes no argument" cat --quiet=1 "$bin"
[ ! -e "$WORK/m.png" ] || lfs_fail "a refused thumbnail wrote its output"
expect_rc 2 "$CONVERT" thumbnail -s 0 "$bin" "$WORK/m.png"
grep -qx 'legacyfs-convert: --size=0: must be 1 to 1024' "$WORK/err" || lfs_fail "-s 0: $(cat "$WORK/err")"
expect_rc 2 "$CONVERT" thumbnail --size=2000 "$bin" "$WORK/m.png"
grep -qx 'legacyfs-convert: --size=2000: must be 1 to 1024' "$WORK/err" || lfs_fail "--size=2000: $(cat "$WORK/err")"
expect_rc 2 "$CONVERT" cat --jobs=0 "$bin"
grep -qx 'legacyfs-convert: --jobs=0: must be 1 to 1024' "$WORK/err" || lfs_fail "--jobs=0: $(cat "$WORK/err")"
expect_rc 2 "$CONVERT" cat -j 4x "$bin"
grep -qx 'legacyfs-convert: --jobs=4x: must be 1 to 1024' "$WORK/err" || lfs_fail "-j 4x: $(cat "$WORK/err")"
expect_rc 2 "$CONVERT" list --max-size=-1 "$bin"
grep -qx 'legacyfs-convert: --max-size=-1: must be 1 to 1048576' "$WORK/err" || lfs_fail "--max-size=-1: $(cat "$WORK/err")"
expect_rc 2 "$CONVERT" list --thumb-size=100 "$bin"
grep -qx 'legacyfs-convert: --thumb-size=100: must be 128, 256, 512, 1024 or 0' "$WORK/err" || lfs_fail "--thumb-size=100: $(cat "$WORK/err")"
lfs_ok "unknown, ambiguous, argument-less and out-of-range options: named, exit 2"
# ---- pack / unpack: NWN archives from files and back ----
# 20 corpus binaries with distinct base names that are valid ResRefs
mapfile -t pk < <(sed "s|^|$LFS_CORPUS/nwn/|" "$LFS_CORPUS/nwn/binary.txt" |
	awk -F/ '{ b = $NF; sub(/\.mdl$/, "", b); k = tolower(b) }
		b ~ /^[A-Za-z0-9_]+$/ && length(b) <= 16 && !seen[k]++' | head -20)
[ "${#pk[@]}" = 20 ] || lfs_fail "pack inputs: only ${#pk[@]} models"
expect_rc 0 "$CONVERT" pack "$WORK/p.hak" "${pk[@]}"
[ "$(head -c 8 "$WORK/p.hak")" = "HAK V1.0" ] || lfs_fail "pack: header $(head -c 8 "$WORK/p.hak")"
expect_rc 0 "$CONVERT" list "$WORK/p.hak"
[ "$(grep -c '	[^/]*\.mdl/model\.mdl$' "$WORK/out")" = 20 ] ||
	lfs_fail "list of the packed hak: $(grep -c 'model\.mdl$' "$WORK/out") model folders, want 20"
for m in "${pk[@]:0:3}"; do # a model in the hak shows the loose model's text
	b=$(basename "$m")
	"$CONVERT" cat "$WORK/p.hak" "$b/model.mdl" >"$WORK/h.txt" || lfs_fail "cat $b/model.mdl of the hak"
	"$CONVERT" cat "$m" model.mdl >"$WORK/l.txt"
	cmp -s "$WORK/h.txt" "$WORK/l.txt" || lfs_fail "$b: model.mdl in the hak differs from the loose file's"
done
expect_rc 0 "$CONVERT" unpack "$WORK/p.hak" "$WORK/pu"
[ "$(ls "$WORK/pu" | wc -l)" = 20 ] || lfs_fail "unpack wrote $(ls "$WORK/pu" | wc -l) files, want 20"
for m in "${pk[@]}"; do
	cmp -s "$m" "$WORK/pu/$(basename "$m")" || lfs_fail "unpack: $(basename "$m") differs from its input"
done
lfs_ok "pack of 20 corpus models: list shows 20 model folders, every entry's bytes = its input"
expect_rc 0 "$CONVERT" pack --type MOD --erf-version E1.0 "$WORK/p.hak" "${pk[@]}"
[ "$(head -c 8 "$WORK/p.hak")" = "MOD E1.0" ] || lfs_fail "pack --type MOD --erf-version E1.0: header $(head -c 8 "$WORK/p.hak")"
expect_rc 0 "$CONVERT" unpack "$WORK/p.hak" "$WORK/pe"
diff -r "$WORK/pu" "$WORK/pe" >/dev/null || lfs_fail "E1.0 pack: payloads differ from V1.0's"
lfs_ok "pack --type MOD --erf-version E1.0: same payloads"
# refused: a bad ResRef, a name too long, an unknown extension, a duplicate
# (ignoring case): each named, nothing written (no OUT, no temporary file)
cp "${pk[0]}" "$WORK/bad-name.mdl"
cp "${pk[0]}" "$WORK/a_name_of_17_char.mdl"
cp "${pk[0]}" "$WORK/model.xyz"
mkdir -p "$WORK/dup"
cp "${pk[1]}" "$WORK/dup/$(basename "${pk[1]}" .mdl | tr '[:lower:]' '[:upper:]').mdl"
expect_rc 1 "$CONVERT" pack "$WORK/bad.hak" "${pk[0]}" "$WORK/bad-name.mdl" "${pk[1]}"
grep -q "^$WORK/bad-name.mdl: error: .*\"bad-name\".*not a letter, digit or '_'" "$WORK/err" ||
	lfs_fail "bad ResRef: message $(cat "$WORK/err")"
grep -q "bad.hak: error: not written" "$WORK/err" || lfs_fail "bad ResRef: no 'not written'"
expect_rc 1 "$CONVERT" pack "$WORK/bad.hak" "$WORK/a_name_of_17_char.mdl"
grep -q "a_name_of_17_char.mdl: error: .*17 characters, the limit is 16" "$WORK/err" || lfs_fail "long ResRef: $(cat "$WORK/err")"
expect_rc 1 "$CONVERT" pack "$WORK/bad.hak" "$WORK/model.xyz"
grep -q "model.xyz: error: .xyz is not the extension of an NWN resource type" "$WORK/err" || lfs_fail "bad extension: $(cat "$WORK/err")"
expect_rc 1 "$CONVERT" pack "$WORK/bad.hak" "${pk[1]}" "$WORK/dup/"*.mdl
grep -q "dup/.*: error: resource .* is already packed from ${pk[1]}" "$WORK/err" || lfs_fail "duplicate: $(cat "$WORK/err")"
[ ! -e "$WORK/bad.hak" ] || lfs_fail "a refused pack wrote its output"
! ls -a "$WORK" | grep -q 'legacyfs-' || lfs_fail "a refused pack left a temporary file"
expect_rc 2 "$CONVERT" pack "$WORK/bad.hak"
expect_rc 2 "$CONVERT" pack --type ZIP "$WORK/bad.hak" "${pk[0]}"
expect_rc 2 "$CONVERT" list --type HAK "${pk[0]}"
expect_rc 3 "$CONVERT" unpack "${pk[0]}" "$WORK/nope"
lfs_ok "pack refuses bad ResRefs, long names, unknown types, duplicates: named, nothing written"
# a corpus archive unpacked and packed again: the same payloads under the same names
for h in gen/nwn_erf/models_v1.hak gen/nwn_erf/models_e1zstd.hak real/peps/peps_icons.hak real/nwnrs/acn.hak; do
	a=$LFS_CORPUS/archives/$h
	[ -f "$a" ] || lfs_fail "no corpus archive $h"
	d=$WORK/rt/$(basename "$h")
	mkdir -p "$WORK/rt"
	expect_rc 0 "$CONVERT" unpack "$a" "$d.orig"
	n=$(ls "$d.orig" | wc -l)
	[ "$n" -gt 0 ] || lfs_fail "$h: unpack wrote nothing"
	"$CONVERT" pack "$d" "$d.orig"/* 2>"$WORK/err" || lfs_fail "$h: pack of its $n unpacked files: $(cat "$WORK/err")"
	expect_rc 0 "$CONVERT" unpack "$d" "$d.again"
	diff -r "$d.orig" "$d.again" >/dev/null || lfs_fail "$h: repacked payloads differ: $(diff -rq "$d.orig" "$d.again" | head -3)"
	# a plain resource of the unpack = the same name read as the mount shows it
	f=$(ls "$d.orig" | grep -v '\.mdl$' | head -1)
	"$CONVERT" cat "$a" "$f" | cmp -s - "$d.orig/$f" || lfs_fail "$h: unpacked $f differs from cat"
	lfs_ok "$h: unpack, pack, unpack: $n payloads byte-identical"
done
lfs_finish
