# shellcheck shell=bash
# Shared helpers for the integration tests (sourced, not run).
#
# Every test: `. "$(dirname "$0")/lib.sh"`, then `lfs_require_fuse`,
# `lfs_workdir NAME`, `lfs_mount SOURCE MNT [options]`. The EXIT trap always
# unmounts (fusermount3 -u, then -uz) and waits for the daemon, each step
# bounded by `timeout`, so a failing test never leaves a mount behind.
# Work folders live under the build root (never /tmp: later tests write
# through the mount and editors treat /tmp specially).
#
# Exit status 77 = skipped (meson: SKIP): no usable /dev/fuse or fusermount3,
# or no corpus.

set -eu
export LC_ALL=C

: "${LFS_BUILD_ROOT:?run through meson test (LFS_BUILD_ROOT unset)}"
: "${LFS_SOURCE_ROOT:?run through meson test (LFS_SOURCE_ROOT unset)}"
LEGACYFS="$LFS_BUILD_ROOT/src/legacyfs"
CONVERT="$LFS_BUILD_ROOT/src/legacyfs-convert"

LFS_MOUNTS=""       # mountpoints to unmount on exit
LFS_PIDS=""         # daemons to wait for on exit
LFS_FAILS=0

lfs_log() { printf '%s\n' "$*" >&2; }
# lfs_skip: the whole test's subject (program, corpus, FUSE) is missing: exit
# 77, meson reports SKIP. A test that can only leave out a part goes on and
# logs "SKIP-PART: what is left out and why" (grep the logs for it); CI
# installs every such program (scripts/deps.sh), so no SKIP-PART shows there.
lfs_skip() { lfs_log "SKIP: $*"; exit 77; }
lfs_fail() { lfs_log "FAIL: $*"; LFS_FAILS=$((LFS_FAILS + 1)); }
lfs_die() { lfs_log "FAIL: $*"; exit 1; }
lfs_ok() { lfs_log "ok: $*"; }

lfs_require_fuse() {
	[ -c /dev/fuse ] || lfs_skip "/dev/fuse missing"
	[ -r /dev/fuse ] && [ -w /dev/fuse ] || lfs_skip "/dev/fuse not readable+writable by $(id -un)"
	command -v fusermount3 >/dev/null 2>&1 || lfs_skip "fusermount3 not installed"
	command -v mountpoint >/dev/null 2>&1 || lfs_skip "mountpoint(1) not installed"
}

lfs_require_corpus() {
	[ -n "${LFS_CORPUS:-}" ] && [ -d "$LFS_CORPUS/nwn/tree" ] || lfs_skip "corpus not found (LFS_CORPUS=${LFS_CORPUS:-})"
}

# lfs_two_binaries: bins, the NWN binaries of the corpus list (paths); A,
# the first, and B, the first that differs from A in size (dies when there
# is none).
lfs_two_binaries() {
	local f
	mapfile -t bins < <(sed 's|^tree/|'"$LFS_CORPUS"'/nwn/tree/|' "$LFS_CORPUS/nwn/binary.txt")
	A=${bins[0]}
	B=""
	for f in "${bins[@]}"; do
		if ! cmp -s "$f" "$A" && [ "$(stat -c %s "$f")" != "$(stat -c %s "$A")" ]; then B=$f; break; fi
	done
	[ -n "$B" ] || lfs_die "no second binary"
}

# lfs_binary_whose_mdl PATTERN...: bin, the first NWN binary of the corpus
# list whose model.mdl (as $CONVERT shows it) has a line matching every
# PATTERN (grep); dies when there is none.
lfs_binary_whose_mdl() {
	local f p ok
	bin=""
	while read -r f; do
		ok=1
		for p in "$@"; do
			"$CONVERT" cat "$LFS_CORPUS/nwn/$f" model.mdl 2>/dev/null | grep -q -- "$p" || { ok=0; break; }
		done
		if [ "$ok" = 1 ]; then
			bin="$LFS_CORPUS/nwn/$f"
			return 0
		fi
	done <"$LFS_CORPUS/nwn/binary.txt"
	lfs_die "no corpus model with a position"
}

# lfs_workdir NAME: fresh $WORK under the build root.
lfs_workdir() {
	WORK="$LFS_BUILD_ROOT/tests/integration/work/$1"
	lfs_unmount_all_in "$WORK"
	rm -rf "$WORK"
	mkdir -p "$WORK"
}

# Unmount anything a previous, killed run left below $1.
lfs_unmount_all_in() {
	[ -d "$1" ] || return 0
	awk -v p="$1/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | while read -r m; do
		timeout 10 fusermount3 -u "$m" 2>/dev/null || timeout 10 fusermount3 -uz "$m" 2>/dev/null || true
	done
}

lfs_cleanup() {
	status=$?
	set +e
	for m in $LFS_MOUNTS; do
		if mountpoint -q "$m"; then
			timeout 10 fusermount3 -u "$m" 2>/dev/null || timeout 10 fusermount3 -uz "$m"
		fi
	done
	for p in $LFS_PIDS; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		if kill -0 "$p" 2>/dev/null; then
			lfs_log "daemon $p did not exit after unmount: killing it"
			kill -9 "$p" 2>/dev/null
			[ "$status" = 0 ] && status=1
		fi
	done
	exit "$status"
}
trap lfs_cleanup EXIT
trap 'exit 130' INT TERM

# lfs_mount SOURCE MNT [legacyfs options...]: start the daemon in the
# foreground (background job), wait until MNT is a mountpoint. Log in MNT.log.
lfs_mount() {
	src=$1
	mnt=$2
	shift 2
	mkdir -p "$mnt"
	timeout 600 "$LEGACYFS" -f "$@" "$src" "$mnt" 2>"$mnt.log" &
	pid=$!
	LFS_PIDS="$LFS_PIDS $pid"
	LFS_MOUNTS="$LFS_MOUNTS $mnt"
	i=0
	while ! mountpoint -q "$mnt"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$mnt.log" >&2
			if grep -q -e "/dev/fuse" -e "fusermount" -e "Operation not permitted" "$mnt.log"; then
				lfs_skip "cannot mount FUSE here"
			fi
			lfs_die "legacyfs exited before mounting $mnt"
		fi
		i=$((i + 1))
		[ $i -le 300 ] || lfs_die "timeout waiting for the mount at $mnt"
		sleep 0.1
	done
	LFS_PID=$pid
}

# lfs_umount MNT: unmount now and wait for the daemon; fails on a non-zero exit.
lfs_umount() {
	timeout 10 fusermount3 -u "$1" || timeout 10 fusermount3 -uz "$1"
	rc=0
	timeout 20 sh -c "while kill -0 $LFS_PID 2>/dev/null; do sleep 0.1; done" || rc=1
	wait "$LFS_PID" || rc=$?
	[ "$rc" = 0 ] || lfs_fail "daemon for $1 exited with $rc"
}

# lfs_native_copy SOURCE DEST: what the mount should show, made without FUSE:
# a copy of SOURCE where every model file is replaced by the folder that
# `legacyfs-convert extract --root SOURCE` writes, and every file that looks
# like a model but does not decode by the folder the mount shows for it
# (docs/mount.md) less its README.txt, whose text is the mount's own: the
# folder holding the original file. Compare with `diff -r -x README.txt`.
lfs_native_copy() {
	src=$1
	dst=$2
	rm -rf "$dst"
	cp -a "$src" "$dst"
	chmod -R u+w "$dst"
	(cd "$src" && find . -type f -print0) | while IFS= read -r -d '' f; do
		set +e
		"$CONVERT" list --root "$src" "$src/$f" >/dev/null 2>&1
		rc=$?
		set -e
		case $rc in
		0)
			rm -f "$dst/$f"
			"$CONVERT" extract --root "$src" "$src/$f" "$dst/$f"
			;;
		1) # looks like a model, fails to decode: FILE/BASENAME is the original
			mv "$dst/$f" "$dst/$f.lfs-orig"
			mkdir "$dst/$f"
			mv "$dst/$f.lfs-orig" "$dst/$f/$(basename "$f")"
			;;
		3) ;; # not a model: stays the original file
		*) lfs_die "legacyfs-convert list $f: exit $rc" ;;
		esac
	done
}

# lfs_wait_for DESCRIPTION COMMAND...: retry COMMAND for up to 10 s (the
# watcher's invalidation arrives asynchronously, within milliseconds).
lfs_wait_for() {
	what=$1
	shift
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 100 ]; then
			lfs_fail "$what"
			return 1
		fi
		sleep 0.1
	done
	lfs_ok "$what"
}

# lfs_wait_until LIMIT COMMAND...: run COMMAND (output discarded) every
# 0.05 s until it succeeds (return 0) or LIMIT seconds (may be fractional)
# have passed (return 1, after one last try). Instead of a fixed sleep before
# a check; the caller reports the failure with its own message:
#   lfs_wait_until 10 cmp -s a b || lfs_fail "b never became a"
lfs_wait_until() {
	local limit=$1 end
	shift
	end=$(awk -v l="$limit" -v n="$(date +%s%N)" 'BEGIN { printf "%.0f", n + l * 1e9 }')
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$end" ] || { "$@" >/dev/null 2>&1; return; }
		sleep 0.05
	done
}

lfs_finish() {
	if [ "$LFS_FAILS" -ne 0 ]; then
		lfs_log "$LFS_FAILS check(s) failed"
		exit 1
	fi
	lfs_log "all checks passed"
}
