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
