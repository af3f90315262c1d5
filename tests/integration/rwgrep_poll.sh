#!/bin/bash
# The session loop with an adaptive poll (-o poll_us, docs/mount.md) keeps the
# read-write mount's semantics (issue 12 item 4). For the default, poll_us=0
# (libfuse's own loop) and poll_us=1000 (a long poll: the spinner is busy when
# the requests below arrive):
#  - `grep -r` through the mount prints exactly what it prints over a native
#    copy (lfs_native_copy: legacyfs-convert extract of every model), for a
#    count per file and for matching lines with numbers (the mount's own
#    .legacyfs folder left out), cold and warm;
#  - a bad save still fails at close(2) with EINVAL (the FLUSH reply carries
#    it) and leaves SOURCE's model byte-identical;
#  - a good save of the original text lands (close succeeds, SOURCE equals
#    legacyfs-convert apply's output), and the daemon ends cleanly at unmount;
#  - with poll_us set, the daemon says it uses its own loop.
. "$(dirname "$0")/edit_lib.sh"
edit_setup rwgrep_poll
mapfile -t targets < <(edit_targets)
IFS='|' read -r model view regex field sep <<<"${targets[0]}"
mf="$SRC/$model"

lfs_native_copy "$SRC" "$WORK/native"
(cd "$WORK/native" && grep -r -c --exclude-dir=.legacyfs node . | sort) >"$WORK/native.count"
(cd "$WORK/native" && grep -r -n --exclude-dir=.legacyfs -e orientation -e bogus -e position . | sort) >"$WORK/native.lines"
[ -s "$WORK/native.lines" ] || lfs_die "precondition: grep finds no line in the native copy"

"$CONVERT" cat --root "$SRC" "$mf" "$view" >"$WORK/cur.txt"
edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" bogus "$WORK/bad.txt" >/dev/null ||
	lfs_die "precondition: no value to break in $model/$view"
cp "$mf" "$WORK/before.bin"

for opts in "" "-o poll_us=0" "-o poll_us=1000"; do
	what="${opts:-default options}"
	# shellcheck disable=SC2086  # options are words
	lfs_mount "$SRC" "$MNT" $opts
	for pass in 1 2 3; do # cold, then warm (page cache kept: FLUSH only)
		(cd "$MNT" && grep -r -c --exclude-dir=.legacyfs node . | sort) >"$WORK/mnt.count"
		(cd "$MNT" && grep -r -n --exclude-dir=.legacyfs -e orientation -e bogus -e position . | sort) >"$WORK/mnt.lines"
		if cmp -s "$WORK/mnt.count" "$WORK/native.count" && cmp -s "$WORK/mnt.lines" "$WORK/native.lines"; then
			lfs_ok "$what: grep -r pass $pass equals grep of the native copy"
		else
			lfs_fail "$what: grep -r pass $pass differs: $(diff "$WORK/native.count" "$WORK/mnt.count" | head -5) $(diff "$WORK/native.lines" "$WORK/mnt.lines" | head -5)"
		fi
	done

	rc=0
	edit_py writeclose "$MNT/$model/$view" "$WORK/bad.txt" 2>"$WORK/run.err" || rc=$?
	if [ "$rc" != 0 ] && grep -q "^close: .*(EINVAL)" "$WORK/run.err"; then
		lfs_ok "$what: a bad save of $model/$view fails at close with EINVAL"
	else
		lfs_fail "$what: a bad save of $model/$view: expected close to fail with EINVAL, got exit $rc: $(cat "$WORK/run.err")"
	fi
	cmp -s "$mf" "$WORK/before.bin" && lfs_ok "$what: SOURCE untouched by the refused save" ||
		lfs_fail "$what: SOURCE changed by a refused save"
	cmp -s "$MNT/$model/$view" "$WORK/cur.txt" && lfs_ok "$what: after the refusal the view shows the generated text" ||
		lfs_fail "$what: after the refusal the view does not show the generated text"

	# a good save: one value changed, SOURCE must equal the reference encoder's output
	edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" 0.5 "$WORK/good.txt" >/dev/null ||
		lfs_die "precondition: no value to change in $model/$view"
	edit_apply "$mf" "$view" "$WORK/good.txt" "$WORK/good.bin" || lfs_die "precondition: apply refuses the good text"
	rc=0
	edit_py writeclose "$MNT/$model/$view" "$WORK/good.txt" 2>"$WORK/run.err" || rc=$?
	if [ "$rc" = 0 ] && cmp -s "$mf" "$WORK/good.bin"; then
		lfs_ok "$what: a good save of $model/$view lands at close"
	else
		lfs_fail "$what: a good save of $model/$view: exit $rc ($(cat "$WORK/run.err")), SOURCE $(cmp -s "$mf" "$WORK/good.bin" && echo equals || echo differs from) the reference"
	fi
	lfs_umount "$MNT"
	cp "$WORK/before.bin" "$mf" # back to the original for the next round
	case $opts in
	*poll_us=[1-9]*)
		grep -q "polling 1000 us after a request" "$MNT.log" &&
			lfs_ok "$what: the daemon used its own polling loop" ||
			lfs_fail "$what: the daemon log does not name the polling loop: $(head -c 300 "$MNT.log")"
		;;
	esac
done
lfs_finish
