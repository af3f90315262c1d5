#!/usr/bin/env bash
# pjdfstest (POSIX conformance of file system calls) on a mount of an empty
# folder; docs/posix.md explains the results.
#
#   pjdfstest.sh [legacyfs]   run on legacyfs; fail on any failed subtest not
#                             listed in expected-failures.txt (listed ones that
#                             pass are reported as a note)
#   pjdfstest.sh bindfs       the same run on bindfs (Debian package), for
#                             comparison; prints its failed subtests
#   pjdfstest.sh compare      both runs, then checks that legacyfs's failed
#                             subtests are a subset of bindfs's and prints the
#                             table of docs/posix.md
#
# Run through meson (env LFS_BUILD_ROOT, LFS_SOURCE_ROOT), as root (pjdfstest
# changes owners; FUSE mounts get allow_other). Exit 77 (skip) without root,
# /dev/fuse, ../shared/tools/pjdfstest-*.tar.gz, autoreconf, make or prove, or
# (bindfs/compare) bindfs. With a second argument --if-enabled (how meson
# runs it) it also skips unless LFS_PJDFSTEST=1: a full run takes about 3.5
# minutes, so only .ci/run's pjdfstest stage sets it.
#
# pjdfstest is built from ../shared/tools into the build tree (once per
# tarball), never into the source tree.
. "$(dirname "$0")/../integration/lib.sh" || exit 1

MODE=${1:-legacyfs}
case $MODE in legacyfs | bindfs | compare) ;; *) lfs_die "usage: $0 [legacyfs|bindfs|compare]" ;; esac
if [ "${2:-}" = --if-enabled ] && [ "${LFS_PJDFSTEST:-0}" != 1 ]; then
	lfs_skip "set LFS_PJDFSTEST=1 to run pjdfstest (about 3.5 minutes)"
fi
[ "$(id -u)" = 0 ] || lfs_skip "pjdfstest needs root"
lfs_require_fuse
TOOLS="$LFS_SOURCE_ROOT/../shared/tools"
TARBALL=$(ls "$TOOLS"/pjdfstest-*.tar.gz 2>/dev/null | head -n 1 || true)
[ -n "$TARBALL" ] || lfs_skip "no pjdfstest tarball in $TOOLS"
for t in autoreconf make prove cc; do
	command -v "$t" >/dev/null 2>&1 || lfs_skip "$t not installed (scripts/deps.sh)"
done
if [ "$MODE" != legacyfs ]; then
	command -v bindfs >/dev/null 2>&1 || lfs_skip "bindfs not installed"
fi
EXPECTED="$LFS_SOURCE_ROOT/tests/posix/expected-failures.txt"
[ -f "$EXPECTED" ] || lfs_die "missing $EXPECTED"

# ---- build (cached per tarball) ----
PJD_BUILD="$LFS_BUILD_ROOT/tests/posix/pjdfstest-build"
PJD_NAME=$(basename "$TARBALL" .tar.gz)
PJD="$PJD_BUILD/$PJD_NAME"
if [ ! -x "$PJD/pjdfstest" ] || [ "$TARBALL" -nt "$PJD/pjdfstest" ]; then
	rm -rf "$PJD_BUILD"
	mkdir -p "$PJD_BUILD"
	tar xzf "$TARBALL" -C "$PJD_BUILD"
	lfs_log "building $PJD_NAME"
	(cd "$PJD" && autoreconf -ifs && ./configure && make pjdfstest) >"$PJD_BUILD/build.log" 2>&1 ||
		{ tail -n 30 "$PJD_BUILD/build.log" >&2; lfs_die "pjdfstest build failed"; }
fi

# failed_subtests PROVE_OUTPUT: one "FILE N" line per failed subtest (FILE =
# tests/ relative path without .t, e.g. "link/00 5"), "FILE died" for a file
# whose script did not finish (bad plan, non-zero exit).
failed_subtests() {
	awk '
	function flush_nums(s,   n, parts, i, a, b, k) {
		gsub(/[ \t]/, "", s)
		n = split(s, parts, ",")
		for (i = 1; i <= n; i++) {
			if (parts[i] == "") continue
			if (index(parts[i], "-")) {
				split(parts[i], ab, "-"); a = ab[1] + 0; b = ab[2] + 0
				for (k = a; k <= b; k++) print file, k
			} else print file, parts[i] + 0
		}
	}
	/^Test Summary Report/ { summary = 1; next }
	!summary { next }
	/^Files=/ { summary = 0; next }
	/\.t +\(Wstat:/ {
		file = $1; sub(/.*\/tests\//, "", file); sub(/\.t$/, "", file)
		infail = 0
		if ($0 !~ /Wstat: 0 /) print file, "died"
		next
	}
	/^  Failed tests?:/ { infail = 1; s = $0; sub(/^  Failed tests?:/, "", s); flush_nums(s); next }
	/^  (TODO passed|Parse errors|Non-zero exit|Bad plan|No plan)/ {
		infail = 0
		if ($0 ~ /Parse errors|Bad plan|No plan/) print file, "died"
		next
	}
	infail && /^ +[0-9]/ { flush_nums($0); next }
	{ infail = 0 }
	' "$1" | sort -u
}

# expected_subtests: the same form from expected-failures.txt ("FILE NUMS  # reason").
expected_subtests() {
	sed -e 's/#.*//' "$EXPECTED" | awk 'NF >= 2 {
		n = split($2, parts, ",")
		for (i = 1; i <= n; i++) {
			if (index(parts[i], "-")) { split(parts[i], ab, "-"); for (k = ab[1] + 0; k <= ab[2] + 0; k++) print $1, k }
			else print $1, parts[i]
		}
	}' | sort -u
}

# run_on FS: mount an empty folder with FS, run prove -r inside it, write
# $WORK/FS.prove (prove's output) and $WORK/FS.failed (failed_subtests).
run_on() {
	fs=$1
	src="$WORK/$fs-src"
	mnt="$WORK/$fs-mnt"
	mkdir -p "$src" "$mnt"
	chmod 0755 "$src" "$mnt"
	if [ "$fs" = legacyfs ]; then
		lfs_mount "$src" "$mnt" -o allow_other
	else
		timeout 1200 bindfs -f -o allow_other "$src" "$mnt" 2>"$mnt.log" &
		LFS_PID=$!
		LFS_PIDS="$LFS_PIDS $LFS_PID"
		LFS_MOUNTS="$LFS_MOUNTS $mnt"
		i=0
		while ! mountpoint -q "$mnt"; do
			kill -0 "$LFS_PID" 2>/dev/null || { cat "$mnt.log" >&2; lfs_die "bindfs did not mount"; }
			i=$((i + 1)); [ $i -le 300 ] || lfs_die "timeout waiting for bindfs"
			sleep 0.1
		done
	fi
	t0=$(date +%s)
	(cd "$mnt" && prove -r "$PJD/tests") >"$WORK/$fs.prove" 2>&1 || true
	t1=$(date +%s)
	lfs_umount "$mnt"
	failed_subtests "$WORK/$fs.prove" >"$WORK/$fs.failed"
	nfail=$(wc -l <"$WORK/$fs.failed")
	nfiles=$(cut -d' ' -f1 "$WORK/$fs.failed" | sort -u | wc -l)
	summary=$(grep -E '^(Files=|Result:)' "$WORK/$fs.prove" | tr '\n' ' ')
	lfs_log "$fs: $nfail failed subtests in $nfiles files, $((t1 - t0)) s ($summary)"
	grep -q '^Result:' "$WORK/$fs.prove" || lfs_fail "$fs: prove did not finish (see $WORK/$fs.prove)"
}

# by_file LIST: "FILE n1,n2,..." per file (for the logs and docs/posix.md).
by_file() {
	sort -k1,1 -k2,2n "$1" | awk '{ if ($1 != f) { if (f != "") print f, s; f = $1; s = $2 } else s = s "," $2 } END { if (f != "") print f, s }'
}

lfs_workdir "pjdfstest-$MODE"
[ -n "${WORK:-}" ] || lfs_die "no work folder"

if [ "$MODE" = bindfs ] || [ "$MODE" = compare ]; then
	run_on bindfs
	lfs_log "bindfs failed subtests:"
	by_file "$WORK/bindfs.failed" >&2
fi

if [ "$MODE" = legacyfs ] || [ "$MODE" = compare ]; then
	run_on legacyfs
	expected_subtests >"$WORK/expected"
	comm -23 "$WORK/legacyfs.failed" "$WORK/expected" >"$WORK/unexpected"
	comm -13 "$WORK/legacyfs.failed" "$WORK/expected" >"$WORK/fixed"
	if [ -s "$WORK/unexpected" ]; then
		lfs_fail "failed subtests not in tests/posix/expected-failures.txt:"
		by_file "$WORK/unexpected" >&2
		lfs_log "(prove's output: $WORK/legacyfs.prove; run one file verbosely with"
		lfs_log " cd MOUNT && prove -v $PJD/tests/FILE.t)"
	else
		lfs_ok "every failed subtest is listed in expected-failures.txt"
	fi
	if [ -s "$WORK/fixed" ]; then
		lfs_log "note: listed as expected failures but passed now (remove them from the list):"
		by_file "$WORK/fixed" >&2
	fi
fi

if [ "$MODE" = compare ]; then
	comm -23 "$WORK/legacyfs.failed" "$WORK/bindfs.failed" >"$WORK/ours-only"
	if [ -s "$WORK/ours-only" ]; then
		lfs_fail "legacyfs fails subtests that bindfs passes:"
		by_file "$WORK/ours-only" >&2
	else
		lfs_ok "legacyfs's failed subtests are a subset of bindfs's"
	fi
	{
		echo "| file | legacyfs | bindfs |"
		echo "|---|---|---|"
		join -a 1 -a 2 -e - -o 0,1.2,2.2 <(by_file "$WORK/legacyfs.failed") <(by_file "$WORK/bindfs.failed") |
			awk '{ printf "| %s | %s | %s |\n", $1, $2, $3 }'
	} | tee "$WORK/table.md" >&2
fi

lfs_finish
