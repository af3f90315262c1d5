#!/bin/bash
# Concurrent saves of two views of one model (issue 11; docs/editing.md
# "Concurrent saves: bases and three-way merge"), default mount options, NOD
# model (model.txt holds every vertex of the mesh OBJs too):
#  1. the lost update a tester found: an editor reads model.txt; another
#     program saves a mesh OBJ (sed -i); a third program reads model.txt
#     (cat); the editor saves its edit of another line: accepted, and SOURCE
#     holds BOTH edits (byte-identical to applying the editor's change to the
#     text generated after the mesh save);
#  2. an overlapping edit (both change the same line of model.txt) is
#     refused with EINVAL, errors.txt names the conflicting line of the
#     saved text, and SOURCE keeps the first save;
#  3. the same edit in model.txt's vertex list and in the mesh OBJ (the same
#     vertex, different values): refused;
#  4. real editors on two views, interleaved: vim holds model.txt while
#     emacs saves the mesh OBJ, then vim saves; python os.replace holds the
#     mesh OBJ while vim (in-place, compatible mode) saves model.txt, then
#     python saves. Both edits land each time.
. "$(dirname "$0")/edit_lib.sh"
edit_setup edit_merge
edit_mount

M=$EDIT_NOD
mf="$SRC/$M"
mesh=$(edit_first_view "$M" 'meshes/*.obj')
[ -n "$mesh" ] || lfs_die "precondition: $M has no mesh OBJ"
vt="$MNT/$M/model.txt"
vm="$MNT/$M/$mesh"

# holder FILE REGEX REPL MODE [REGEX2 REPL2]: a process that reads FILE,
# says so (ready), waits for "go", then saves FILE with the first match of
# REGEX (a Python re, multiline) replaced: MODE inplace (open "w", write,
# close) or replace (temporary file in the folder + os.replace). Prints the
# error and exits 3 when the save is refused. With REGEX2, it then edits its
# own text again (without reading the file) and saves a second time.
holder() {
	rm -f "$WORK/ready" "$WORK/go"
	python3 - "$@" "$WORK/ready" "$WORK/go" <<'PY' >"$WORK/holder.out" 2>&1 &
import os, re, sys, tempfile, time
args = sys.argv[1:]
path, pat, rep, mode = args[:4]
edits = [(pat, rep)]
if len(args) == 8:
    edits.append((args[4], args[5]))
ready, go = args[-2:]
with open(path) as f:
    text = f.read()
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.02)
for pat, rep in edits:
    text, n = re.subn(pat, rep, text, count=1, flags=re.M)
    if n != 1:
        print("no match for " + pat)
        sys.exit(2)
    try:
        if mode == "inplace":
            with open(path, "w") as f:
                f.write(text)
        else:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
            with os.fdopen(fd, "w") as f:
                f.write(text)
            try:
                os.replace(tmp, path)
            except OSError:
                os.unlink(tmp)
                raise
    except OSError as e:
        print(e.strerror)
        sys.exit(3)
PY
	HOLDER=$!
	lfs_wait_for "holder read $1" test -e "$WORK/ready"
}
go() { touch "$WORK/go"; }

# field VIEW REGEX FIELD: the FIELD-th token of the first line of VIEW (in
# SOURCE now) matching REGEX.
field() { "$CONVERT" cat --root "$SRC" "$mf" "$1" | awk -v re="$2" -v f="$3" '$0 ~ re { print $f; exit }'; }

# expect_ref TEXTVIEW REGEX REPL: SOURCE equals applying REGEX->REPL (first
# match) to the text SOURCE generated for TEXTVIEW before the last save
# ($WORK/before.bin).
expect_ref() {
	cp "$WORK/before.bin" "$WORK/$M"
	"$CONVERT" cat "$WORK/$M" "$1" >"$WORK/t.txt" || return 1
	python3 -c 'import re,sys; t=open(sys.argv[1]).read(); open(sys.argv[4],"w").write(re.sub(sys.argv[2],sys.argv[3],t,count=1,flags=re.M))' \
		"$WORK/t.txt" "$2" "$3" "$WORK/t2.txt"
	edit_apply "$WORK/$M" "$1" "$WORK/t2.txt" "$WORK/ref.bin" || return 1
	cmp -s "$WORK/ref.bin" "$mf"
}

# ---- 1. the scenario: editor reads, mesh saved, cat, editor saves
holder "$vt" '^(  resttranslate )\S+' '\g<1>0.5' inplace
sed -i '0,/^v /s/^v [^ ]*/v 1.5/' "$vm" || lfs_fail "sed -i of $mesh"
cp "$mf" "$WORK/before.bin"
cat "$vt" >/dev/null
go
rc=0
wait "$HOLDER" || rc=$?
what="editor saves model.txt after a mesh save and a cat"
if [ "$rc" != 0 ]; then
	lfs_fail "$what: refused (rc $rc): $(cat "$MNT/$M/$EDIT_MSGFILE" 2>/dev/null)"
else
	rt=$(field model.txt '^  resttranslate ' 2) vx=$(field "$mesh" '^v ' 2)
	if [ "$rt" = 0.5 ] && [ "$vx" = 1.5 ]; then
		lfs_ok "$what: both edits in SOURCE (resttranslate $rt, $mesh v $vx)"
	else
		lfs_fail "$what: resttranslate '$rt' (want 0.5), $mesh v '$vx' (want 1.5: the mesh edit was undone)"
	fi
	expect_ref model.txt '^(  resttranslate )\S+' '\g<1>0.5' &&
		lfs_ok "$what: SOURCE = the editor's change applied after the mesh save" ||
		lfs_fail "$what: SOURCE differs from the reference apply"
	grep -q 'note: merged with changes saved' "$MNT/$M/$EDIT_MSGFILE" &&
		lfs_ok "$what: errors.txt says the save was merged" ||
		lfs_fail "$what: no merge note in errors.txt"
fi
edit_check_views "$M" "after the merged save"

# ---- 1b. the editor's second save, from its own buffer (which lacks the
# mesh edit merged into its first save): merged again, the mesh edit stays
holder "$vt" '^(  resttranslate )\S+' '\g<1>0.625' inplace '^(  resttranslate \S+ )\S+' '\g<1>0.375'
sed -i '0,/^v /s/^v [^ ]*/v 1.75/' "$vm" || lfs_fail "sed -i of $mesh"
go
rc=0
wait "$HOLDER" || rc=$?
what="an editor's second save after a merged first save"
rt=$(field model.txt '^  resttranslate ' 2) ry=$(field model.txt '^  resttranslate ' 3) vx=$(field "$mesh" '^v ' 2)
if [ "$rc" = 0 ] && [ "$rt" = 0.625 ] && [ "$ry" = 0.375 ] && [ "$vx" = 1.75 ]; then
	lfs_ok "$what: all three edits in SOURCE"
else
	lfs_fail "$what: rc $rc ($(cat "$WORK/holder.out")), resttranslate '$rt $ry' (want 0.625 0.375), v '$vx' (want 1.75)"
fi

# ---- 2. overlapping edits of one line of model.txt
holder "$vt" '^(  resttranslate )\S+' '\g<1>0.75' inplace
n=$(grep -n -m1 '^  resttranslate ' "$vt" | cut -d: -f1)
sed -i '0,/^  resttranslate /s/^\(  resttranslate \)[^ ]*/\10.25/' "$vt" || lfs_fail "sed -i of model.txt"
cp "$mf" "$WORK/first.bin"
cat "$vt" >/dev/null
go
rc=0
wait "$HOLDER" || rc=$?
what="overlapping save of model.txt line $n"
msg=$(cat "$MNT/$M/$EDIT_MSGFILE" 2>/dev/null)
if [ "$rc" = 3 ] && grep -q 'Invalid argument' "$WORK/holder.out"; then
	lfs_ok "$what refused: $(cat "$WORK/holder.out")"
else
	lfs_fail "$what: expected EINVAL, got rc $rc: $(cat "$WORK/holder.out")"
fi
cmp -s "$WORK/first.bin" "$mf" && lfs_ok "$what: SOURCE holds the first save" ||
	lfs_fail "$what: SOURCE changed"
grep -q "^model.txt:$n:1: error: conflicts with a change saved since you read this file (line $n; line $n of the current text)" <<<"$msg" &&
	lfs_ok "$what: errors.txt names the line: $(grep -m1 conflicts <<<"$msg")" ||
	lfs_fail "$what: errors.txt does not name line $n: $msg"
[ "$(field model.txt '^  resttranslate ' 2)" = 0.25 ] || lfs_fail "$what: first save lost"

# ---- 3. the same vertex changed in model.txt and in the mesh OBJ
vx=$(field "$mesh" '^v ' 2)
holder "$vt" "^(\\s*)$(sed 's/[.]/\\./g' <<<"$vx")(\\s)" '\g<1>2.25\g<2>' inplace
sed -i '0,/^v /s/^v [^ ]*/v 2.5/' "$vm" || lfs_fail "sed -i of $mesh"
cp "$mf" "$WORK/first.bin"
go
rc=0
wait "$HOLDER" || rc=$?
what="the same vertex saved in $mesh and in model.txt"
if [ "$rc" = 3 ] && cmp -s "$WORK/first.bin" "$mf"; then
	lfs_ok "$what: refused, SOURCE keeps the OBJ save: $(grep -m1 conflicts "$MNT/$M/$EDIT_MSGFILE")"
else
	lfs_fail "$what: rc $rc ($(cat "$WORK/holder.out")), SOURCE $(cmp -s "$WORK/first.bin" "$mf" && echo kept || echo changed)"
fi

# ---- 4. real editors, interleaved
# vim holds model.txt (reads it at start, then waits in a shell command)
# while emacs saves the mesh; then vim writes. model.txt's mtime changed
# meanwhile (it follows the model file), so vim would ask "The file has been
# changed since reading it!!! Do you really want to write to it (y/n)?"; the
# "y" comes from stdin.
if command -v vim >/dev/null 2>&1 && command -v emacs >/dev/null 2>&1; then
	rm -f "$WORK/ready" "$WORK/go"
	cat >"$WORK/vim.script" <<EOF
/^  resttranslate /s/^\(  resttranslate \)\S\+/\13.5/
call system('touch $WORK/ready; while [ ! -e $WORK/go ]; do sleep 0.05; done')
wq
EOF
	printf 'y\n' | timeout -k 5 "$EDIT_TIMEOUT" vim -N -u DEFAULTS -i NONE -es -S "$WORK/vim.script" "$vt" >"$WORK/vim.out" 2>&1 &
	vp=$!
	lfs_wait_for "vim read model.txt" test -e "$WORK/ready"
	timeout -k 5 "$EDIT_TIMEOUT" emacs --batch -Q "$vm" --eval '(progn (goto-char (point-min)) (re-search-forward "^v \\([^ ]*\\)") (replace-match "3.25" t t nil 1) (save-buffer))' >"$WORK/emacs.out" 2>&1 ||
		lfs_fail "emacs save of $mesh: $(tail -n3 "$WORK/emacs.out")"
	go
	rc=0
	wait "$vp" || rc=$?
	rt=$(field model.txt '^  resttranslate ' 2) vx=$(field "$mesh" '^v ' 2)
	what="vim (model.txt) and emacs ($mesh) interleaved"
	if [ "$rc" = 0 ] && [ "$rt" = 3.5 ] && [ "$vx" = 3.25 ]; then
		lfs_ok "$what: both edits landed"
	else
		lfs_fail "$what: vim rc $rc, resttranslate '$rt' (want 3.5), v '$vx' (want 3.25): $(cat "$WORK/vim.out") $(cat "$MNT/$M/$EDIT_MSGFILE")"
	fi
	edit_check_views "$M" "$what"
else
	lfs_log "SKIP-PART: vim or emacs not installed: interleaved vim/emacs case left out"
fi
# python (os.replace) holds the mesh while vim in compatible mode (in-place
# write) saves model.txt; then python saves.
if command -v vim >/dev/null 2>&1; then
	holder "$vm" '^v \S+' 'v 4.5' replace
	timeout -k 5 "$EDIT_TIMEOUT" vim -es -i NONE -u NONE "$vt" -c '/^  resttranslate /s/^\(  resttranslate \)\S\+/\14.25/' -c 'wq' </dev/null >"$WORK/vim.out" 2>&1 ||
		lfs_fail "vim -es save of model.txt: $(cat "$WORK/vim.out")"
	go
	rc=0
	wait "$HOLDER" || rc=$?
	rt=$(field model.txt '^  resttranslate ' 2) vx=$(field "$mesh" '^v ' 2)
	what="python os.replace ($mesh) after vim -es (model.txt)"
	if [ "$rc" = 0 ] && [ "$rt" = 4.25 ] && [ "$vx" = 4.5 ]; then
		lfs_ok "$what: both edits landed"
	else
		lfs_fail "$what: python rc $rc ($(cat "$WORK/holder.out")), resttranslate '$rt' (want 4.25), v '$vx' (want 4.5)"
	fi
	edit_check_views "$M" "$what"
fi

lfs_finish
