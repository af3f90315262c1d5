#!/bin/bash
# Command-line behaviour of legacyfs and legacyfs-convert that needs no mount:
# --help/--version, usage errors, exit codes of legacyfs-convert (0 model,
# 1 error, 2 usage, 3 not a model), list/cat/extract agreeing with each other,
# and the batch forms (many models in one process: cat, extract -d,
# compile -d, thumbnail -d) giving exactly the per-file outputs, a bad file
# reported without stopping the batch, and -j 4 (a batch on 4 threads)
# giving byte for byte what -j 1 gives (all corpus binaries; a batch with
# failures in the middle: the same stderr lines in the same order, exit).
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
diff -r "$WORK/xj1" "$WORK/xj4" >/dev/null && lfs_ok "extract -j 4 of ${#uniqbin[@]} binaries = extract -j 1" ||
	lfs_fail "extract -j 4 differs from -j 1: $(diff -rq "$WORK/xj1" "$WORK/xj4" | head -3)"
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
lfs_finish
