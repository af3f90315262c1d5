#!/bin/bash
# Outside changes (issue 4, item 6) on a writable mount:
#  - another program rewrites a model in SOURCE (in place, then by rename
#    over it): every view of the model shows the new content (the inotify
#    watcher invalidates the kernel's caches), and a save through the mount
#    afterwards applies to the NEW model (its value lands, the outside
#    change stays);
#  - stale saves that change the value the outside change changed conflict
#    and are refused with EINVAL (docs/editing.md "Concurrent saves"):
#    the view was read, SOURCE changed, then the old text with an edit is
#    saved (cp); and a save whose write straddles the outside change (first
#    half written, SOURCE replaced, rest written, close). SOURCE keeps the
#    outside version — never silently overwritten by text generated from
#    the older model —, errors.txt names the view, the refused text is in
#    VIEW.rejected, and every view shows the outside version.
. "$(dirname "$0")/edit_lib.sh"
edit_setup edit_outside
mapfile -t targets < <(edit_targets)
edit_mount

k=100
for tg in "${targets[@]}"; do
	IFS='|' read -r model view regex field sep <<<"$tg"
	mf="$SRC/$model"
	vf="$MNT/$model/$view"

	# 1. outside change in place, then by rename over
	for how in inplace rename; do
		k=$((k + 1))
		"$CONVERT" cat --root "$SRC" "$mf" "$view" >"$WORK/cur.txt"
		cat "$vf" >/dev/null # the kernel caches the old text now
		edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" "$k.5" "$WORK/out.txt" >/dev/null
		edit_apply "$mf" "$view" "$WORK/out.txt" "$WORK/outside.bin" || lfs_die "reference refuses $model/$view"
		if [ "$how" = inplace ]; then
			cat "$WORK/outside.bin" >"$mf"
		else
			cp "$WORK/outside.bin" "$SRC/.outside.tmp"
			mv "$SRC/.outside.tmp" "$mf"
		fi
		i=0
		while ! edit_views_match "$model"; do
			i=$((i + 1))
			[ $i -le 100 ] || break
			sleep 0.1
		done
		if edit_views_match "$model"; then
			lfs_ok "outside change ($how) of $model shows in all its views (~$((i * 100)) ms)"
		else
			lfs_fail "outside change ($how) of $model: views still differ after 10 s:$(cat "$WORK/views.bad")"
		fi
		cp "$mf" "$WORK/ref/$model"
	done
	# a save through the mount now builds on the outside version
	edit_save cp "$tg"

	# 2. stale saves are refused: (a) the view was read, SOURCE changed,
	# then the edited old text is saved with cp; (b) the outside change
	# happens between the first and the second half of the write
	for how in read-then-cp slowwrite; do
		k=$((k + 1))
		cat "$vf" >"$WORK/cur.txt" # the base the mount knows
		edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" "$k.5" "$WORK/out.txt" >/dev/null
		edit_apply "$mf" "$view" "$WORK/out.txt" "$WORK/outside.bin" || lfs_die "reference refuses $model/$view"
		k=$((k + 1))
		edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" "$k.5" "$WORK/mine.txt" >/dev/null
		what="stale save ($how) of $model/$view"
		rc=0
		if [ "$how" = read-then-cp ]; then
			cp "$WORK/outside.bin" "$mf.tmp" && mv "$mf.tmp" "$mf"
			cp "$WORK/mine.txt" "$vf" 2>"$WORK/run.err" || rc=$?
			if [ "$rc" = 0 ]; then
				lfs_fail "$what: cp succeeded"
			elif grep -q 'Invalid argument' "$WORK/run.err"; then
				lfs_ok "$what refused: $(head -n1 "$WORK/run.err")"
			else
				lfs_fail "$what: expected EINVAL, got: $(head -n1 "$WORK/run.err")"
			fi
		else
			# shellcheck disable=SC2016  # the inner shell's $1 $2
			edit_py slowwrite "$vf" "$WORK/mine.txt" sh -c 'cp "$1" "$2.tmp" && mv "$2.tmp" "$2"' sh "$WORK/outside.bin" "$mf" 2>"$WORK/run.err" || rc=$?
			# refused either by the second write (ESTALE: the model changed
			# under the open file) or at close (EINVAL: stale base)
			if [ "$rc" = 0 ]; then
				lfs_fail "$what: close succeeded"
			elif [ "$rc" = 3 ]; then
				lfs_fail "$what: the outside change itself failed"
			elif grep -q -e '^write: .*(ESTALE)' -e '^close: .*(EINVAL)' "$WORK/run.err"; then
				lfs_ok "$what refused: $(head -n1 "$WORK/run.err")"
			else
				lfs_fail "$what: expected ESTALE from write or EINVAL from close, got: $(head -n1 "$WORK/run.err")"
			fi
		fi
		if cmp -s "$mf" "$WORK/outside.bin"; then
			lfs_ok "$what: SOURCE keeps the outside version"
		else
			lfs_fail "$what: SOURCE is not the outside version"
		fi
		if [ "$how" = read-then-cp ]; then
			if grep -q "^$view: .*changed in SOURCE" "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null; then
				lfs_ok "$what: $EDIT_MSGFILE says why: $(grep -m1 "^$view: " "$MNT/$model/$EDIT_MSGFILE")"
			else
				lfs_fail "$what: no 'changed in SOURCE' message for $view in $model/$EDIT_MSGFILE"
			fi
			if cmp -s "$MNT/$model/$view$EDIT_REJECTED_SUFFIX" "$WORK/mine.txt"; then
				lfs_ok "$what: the refused text is kept in $view$EDIT_REJECTED_SUFFIX"
			else
				lfs_fail "$what: $view$EDIT_REJECTED_SUFFIX does not hold the refused text"
			fi
		else
			# the text was well-formed: a syntax message would mislead the user
			# (e.g. the half written before the refusal parsed at close)
			# (a conflict with the outside change is named by line: not syntax)
			if grep -v 'conflicts with a change saved since you read this file' "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null |
				grep -q -E "^$view:[0-9]+:[0-9]+: "; then
				lfs_fail "$what: $EDIT_MSGFILE blames the syntax of a well-formed text: $(grep -v 'conflicts with a change' "$MNT/$model/$EDIT_MSGFILE" | grep -m1 -E "^$view:[0-9]+:[0-9]+: ")"
			fi
			lfs_log "   $EDIT_MSGFILE: $(grep "^$view:" "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null | tr '\n' '|')"
		fi
		cp "$mf" "$WORK/ref/$model"
		# the views (the saved one too) show the outside version
		edit_check_views "$model" "$what" && lfs_ok "$what: views show the outside version"
	done
done

lfs_umount "$MNT"
edit_check_after_umount
lfs_finish
