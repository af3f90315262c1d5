#!/bin/bash
# Command-line behaviour of legacyfs and legacyfs-convert that needs no mount:
# --help/--version, usage errors, exit codes of legacyfs-convert (0 model,
# 1 error, 2 usage, 3 not a model), list/cat/extract agreeing with each other.
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
lfs_finish
