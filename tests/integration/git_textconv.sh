#!/usr/bin/env bash
# git textconv of binary models (docs/git.md, contrib/git/): a repository
# with contrib/git/gitattributes as .gitattributes and contrib/git/gitconfig
# included by `git config include.path` (the installed form), HOME and the
# git config of the user out of the way. For a binary NWN MDL, a NOD and a
# SOD from the corpus: commit the model, move one vertex with
# `legacyfs-convert apply` on its edited text view, commit again. Then
#  - `git diff HEAD~1 HEAD`, `git log -p -1` and `git show HEAD` print
#    exactly one removed and one added line: the old and the new vertex line;
#  - `git show --textconv HEAD~1:FILE` and `git cat-file --textconv` print
#    the old text (`legacyfs-convert cat` of the first version);
#  - the textconv cache refs/notes/textconv/legacyfs exists and a second
#    `git log -p` prints the same (from the cache);
#  - an NWN ASCII .mdl (not a model to legacyfs-convert) diffs as its own
#    text, a binary .nod that is no model as one line of size and SHA-256,
#    and a .nod that does not decode makes git fail with the message.
# Skips (77) without git or the corpus; needs no FUSE.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null 2>&1 || lfs_skip "git not installed"
lfs_require_corpus
lfs_workdir git_textconv

# git and the driver script see only what this test sets up
export HOME="$WORK/home"
export XDG_CONFIG_HOME="$HOME/.config"
export GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=legacyfs GIT_AUTHOR_EMAIL=test@legacyfs.invalid
export GIT_COMMITTER_NAME=legacyfs GIT_COMMITTER_EMAIL=test@legacyfs.invalid
export GIT_PAGER=cat PAGER=cat
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
mkdir -p "$HOME"
# the installed layout: legacyfs-textconv and legacyfs-convert on PATH
mkdir -p "$WORK/bin"
# legacyfs-textconv: contrib/git's, behind a logger of the paths git passes it
# shellcheck disable=SC2016 # $1 and $@ are for the script written
printf '#!/bin/sh\nprintf "%%s\\n" "$1" >>"%s"\nexec "%s" "$@"\n' \
	"$WORK/textconv.calls" "$LFS_SOURCE_ROOT/contrib/git/legacyfs-textconv" >"$WORK/bin/legacyfs-textconv"
chmod +x "$WORK/bin/legacyfs-textconv"
: >"$WORK/textconv.calls"
ln -s "$CONVERT" "$WORK/bin/legacyfs-convert"
export PATH="$WORK/bin:$PATH"

REPO="$WORK/repo"
git init -q "$REPO"
cd "$REPO" || lfs_die "cd $REPO"
git config include.path "$LFS_SOURCE_ROOT/contrib/git/gitconfig"
cp "$LFS_SOURCE_ROOT/contrib/git/gitattributes" .gitattributes
[ "$(git config diff.legacyfs.textconv)" = legacyfs-textconv ] && lfs_ok "gitconfig included" ||
	lfs_die "include.path of contrib/git/gitconfig does not define diff.legacyfs.textconv"
for f in a.mdl B.MDL c.nod d.nad e.sod f.nil; do
	[ "$(git check-attr diff -- "$f" | sed 's/.*: diff: //')" = legacyfs ] ||
		lfs_fail "gitattributes: $f is not diff=legacyfs"
done
git add .gitattributes
git commit -qm attributes

# pm_lines FILE: the removed and added lines of a patch, without the ---/+++ headers
pm_lines() { grep -E '^[-+]' "$1" | grep -vE '^(\+\+\+|---) ' || true; }

# check_patch WHAT PATCH: PATCH's -/+ lines are exactly -$OLD and +$NEW
check_patch() {
	pm_lines "$2" >"$2.pm"
	printf -- '-%s\n+%s\n' "$OLD" "$NEW" >"$2.want"
	if cmp -s "$2.pm" "$2.want"; then
		lfs_ok "$1: exactly the edited vertex line (-old, +new)"
	else
		lfs_fail "$1: -/+ lines differ from the one edited vertex line ($(wc -l <"$2.pm") lines)"
		diff "$2.want" "$2.pm" | head -20 >&2
	fi
}

# one_model SOURCE NAME: two commits of SOURCE as NAME, one vertex moved
one_model() {
	src=$1
	name=$2
	ext=${name##*.}
	view=$("$CONVERT" list "$src" | awk -F'\t' '$2 == "model.mdl" || $2 == "model.txt" { print $2 }')
	[ -n "$view" ] || lfs_die "$name: no text view in legacyfs-convert list"
	cp "$src" "$name"
	chmod u+w "$name"
	git add "$name"
	git commit -qm "add $name"
	"$CONVERT" cat "$name" "$view" >"$WORK/$name.a"
	# the first vertex line after "verts N": its first coordinate halved
	n=$(awk '/^ *verts [0-9]+$/ { f = 1; next } f && /^ *#/ { next } f { print NR; exit }' "$WORK/$name.a")
	[ -n "$n" ] || lfs_die "$name: no verts list in $view"
	awk -v n="$n" 'NR == n { match($0, /^ */); p = substr($0, 1, RLENGTH); $1 = $1 * 0.5; $0 = p $0 } { print }' \
		"$WORK/$name.a" >"$WORK/$name.b"
	OLD=$(sed -n "${n}p" "$WORK/$name.a")
	NEW=$(sed -n "${n}p" "$WORK/$name.b")
	[ "$OLD" != "$NEW" ] || lfs_die "$name: the edit changes nothing"
	"$CONVERT" apply "$name" "$view" "$WORK/$name.b" -o "$WORK/new.$ext" || lfs_die "$name: apply refuses the edit"
	cp "$WORK/new.$ext" "$name"
	git commit -qam "move a vertex of $name"
	[ "$(tr -d '\000' <"$name" | wc -c)" -lt "$(wc -c <"$name")" ] ||
		lfs_fail "$name: precondition: the committed model has no NUL byte (not binary)"

	# plain git (no driver) calls it binary: the driver is what makes the text
	git diff --no-textconv HEAD~1 HEAD -- "$name" >"$WORK/$name.raw"
	grep -q '^Binary files ' "$WORK/$name.raw" && lfs_ok "$name: without textconv git says Binary files differ" ||
		lfs_fail "$name: without textconv the diff is not 'Binary files differ'"

	git diff HEAD~1 HEAD -- "$name" >"$WORK/$name.diff" || lfs_fail "$name: git diff failed"
	check_patch "$name: git diff HEAD~1 HEAD" "$WORK/$name.diff"
	git log -p -1 -- "$name" >"$WORK/$name.log" || lfs_fail "$name: git log -p failed"
	check_patch "$name: git log -p" "$WORK/$name.log"
	git show HEAD -- "$name" >"$WORK/$name.show" || lfs_fail "$name: git show failed"
	check_patch "$name: git show" "$WORK/$name.show"
	# a blob: git show prints its bytes unless --textconv
	git show --textconv "HEAD~1:$name" >"$WORK/$name.blob" || lfs_fail "$name: git show --textconv failed"
	cmp -s "$WORK/$name.blob" "$WORK/$name.a" && lfs_ok "$name: git show --textconv HEAD~1:$name is the old text" ||
		lfs_fail "$name: git show --textconv HEAD~1:$name is not legacyfs-convert cat of the old model"
	git cat-file --textconv "HEAD:$name" >"$WORK/$name.cat" || lfs_fail "$name: git cat-file --textconv failed"
	cmp -s "$WORK/$name.cat" "$WORK/$name.b" && lfs_ok "$name: git cat-file --textconv HEAD:$name is the new text" ||
		lfs_fail "$name: git cat-file --textconv HEAD:$name is not the edited text"
	# the worktree file against HEAD~1 (git hands the worktree path itself)
	git diff HEAD~1 -- "$name" >"$WORK/$name.wt" || lfs_fail "$name: git diff HEAD~1 (worktree) failed"
	check_patch "$name: git diff HEAD~1 (worktree)" "$WORK/$name.wt"
}

one_model "$LFS_CORPUS/nwn/tree/nwnprc/nwnprc/users/Tenjac/VFX/vdr_eleshield02.mdl" vdr_eleshield02.mdl
one_model "$LFS_CORPUS/nod/PLC_Cndl02.nod" PLC_Cndl02.nod
one_model "$LFS_CORPUS/sod/T_Door21_1.8.sod" T_Door21_1.8.sod

# the textconv cache: notes written by the diffs above, used by later ones
if git show-ref --verify -q refs/notes/textconv/legacyfs; then
	lfs_ok "refs/notes/textconv/legacyfs exists after the diffs"
	nnotes=$(git notes --ref=textconv/legacyfs list | wc -l)
	# 3 models x 2 versions (worktree files are never cached)
	[ "$nnotes" -ge 6 ] && lfs_ok "textconv cache: $nnotes notes" || lfs_fail "textconv cache: $nnotes notes, want >= 6"
	# the cache is read back: the same patch, the driver not run again
	before=$(wc -l <"$WORK/textconv.calls")
	git log -p -1 -- vdr_eleshield02.mdl >"$WORK/cached.log"
	after=$(wc -l <"$WORK/textconv.calls")
	cmp -s "$WORK/cached.log" "$WORK/vdr_eleshield02.mdl.log" && [ "$after" = "$before" ] &&
		lfs_ok "git log -p again: the same patch from the cache, no textconv run" ||
		lfs_fail "git log -p again: not served from the cache ($((after - before)) textconv runs)"
else
	lfs_fail "no refs/notes/textconv/legacyfs after git diff (cachetextconv)"
fi

# blobs reach the driver as temporary files named after the file (the type
# comes from the extension)
# (git 2.39: /tmp/git-blob-XXXXXX/NAME; older: /tmp/XXXXXX_NAME)
tmpname=$(grep -m1 -E '^/.*[/_]T_Door21_1\.8\.sod$' "$WORK/textconv.calls" || true)
[ -n "$tmpname" ] && lfs_ok "a blob's temporary file keeps the name: $tmpname" ||
	lfs_fail "no temporary file named *T_Door21_1.8.sod among the textconv calls"

# an NWN ASCII .mdl is text already: shown as it is
ASC="$LFS_CORPUS/nwn/tree/nwnprc/nwnprc/gfx/WSwGs_b_071.mdl"
cp "$ASC" ascii.mdl
chmod u+w ascii.mdl
git add ascii.mdl
git commit -qm "add ascii.mdl"
sed 's/^\( *\)position \(.*\)$/\1position 0 0 0/' "$ASC" >ascii.mdl
git commit -qam "edit ascii.mdl"
git show --textconv HEAD~1:ascii.mdl >"$WORK/ascii.blob" 2>"$WORK/ascii.err" && cmp -s "$WORK/ascii.blob" "$ASC" &&
	[ ! -s "$WORK/ascii.err" ] && lfs_ok "ascii.mdl: the textconv of an ASCII .mdl is the file itself, no message" ||
	lfs_fail "ascii.mdl: the textconv of an ASCII .mdl is not the file itself (or prints a message)"
git diff HEAD~1 HEAD -- ascii.mdl >"$WORK/ascii.diff"
git diff --no-textconv HEAD~1 HEAD -- ascii.mdl >"$WORK/ascii.plain"
if [ -s "$WORK/ascii.diff" ] && cmp -s "$WORK/ascii.diff" "$WORK/ascii.plain"; then
	lfs_ok "ascii.mdl: git diff equals the plain text diff ($(pm_lines "$WORK/ascii.diff" | wc -l) -/+ lines)"
else
	lfs_fail "ascii.mdl: git diff differs from the plain text diff"
fi

# binary but not a model to legacyfs-convert (exit 3): one line, size and hash
head -c 3000 "$LFS_CORPUS/nod/PLC_Cndl02.nod" >cut.nod
rc=0
"$CONVERT" cat cut.nod >/dev/null 2>&1 || rc=$?
[ "$rc" = 3 ] || lfs_die "precondition: legacyfs-convert cat cut.nod should say not a model (exit 3), got $rc"
git add cut.nod
git commit -qm "add cut.nod"
head -c 2000 "$LFS_CORPUS/nod/PLC_Cndl02.nod" >cut.nod
git commit -qam "shorter cut.nod"
git diff HEAD~1 HEAD -- cut.nod >"$WORK/cut.diff"
printf -- '-legacyfs-textconv: binary, not a model to legacyfs-convert: 3000 bytes, sha256 %s\n+legacyfs-textconv: binary, not a model to legacyfs-convert: 2000 bytes, sha256 %s\n' \
	"$(head -c 3000 "$LFS_CORPUS/nod/PLC_Cndl02.nod" | sha256sum | cut -d' ' -f1)" \
	"$(head -c 2000 "$LFS_CORPUS/nod/PLC_Cndl02.nod" | sha256sum | cut -d' ' -f1)" >"$WORK/cut.want"
pm_lines "$WORK/cut.diff" | cmp -s - "$WORK/cut.want" &&
	lfs_ok "cut.nod (binary, not a model): the diff is one line of size and SHA-256 each side" ||
	{ lfs_fail "cut.nod: the diff is not the size/SHA-256 line"; head -20 "$WORK/cut.diff" >&2; }

# a model that does not decode: git stops and the message names the file
# (tests/integration/mount_lazy.sh's bad.nod: header kept, the rest 0xff)
python3 - "$LFS_CORPUS/nod/PLC_Cndl02.nod" broken.nod <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
h = 8 + struct.unpack_from('<I', d, 4)[0] * 32 + 42
d[h:] = b'\xff' * (len(d) - h)
open(sys.argv[2], 'wb').write(d)
PY
rc=0
"$CONVERT" cat broken.nod >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || lfs_die "precondition: legacyfs-convert cat broken.nod should fail to decode (exit 1), got $rc"
git add broken.nod
git commit -qm "add broken.nod"
if git show --textconv HEAD:broken.nod >"$WORK/broken.out" 2>"$WORK/broken.err"; then
	lfs_fail "broken.nod: git show --textconv succeeds on a truncated NOD"
elif grep -q 'broken\.nod: error: ' "$WORK/broken.err"; then
	lfs_ok "broken.nod: git fails with legacyfs-convert's message: $(grep -m1 'error: ' "$WORK/broken.err")"
else
	lfs_fail "broken.nod: the failure does not show legacyfs-convert's message"
	cat "$WORK/broken.err" >&2
fi

lfs_finish
