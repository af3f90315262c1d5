#!/bin/bash
# Bad edits are refused and nothing is lost (issue 4, item 4). For each target
# view (edit_targets), one value becomes the word "bogus" and is saved by:
# write+close (close must fail with EINVAL), write+fsync (fsync: EINVAL),
# cp, sed -i, Python tempfile + os.replace (rename: EINVAL), and vim, neovim,
# emacs when installed (they must report a failure). After each attempt:
#  - SOURCE's model is byte-identical and its mtime/inode unchanged;
#  - the model folder's message file (docs/editing.md) holds exactly the
#    message lfs_views_apply gives for that text: gcc-style
#    `VIEW:LINE:COL: ...` with the edited line and the column of the bad
#    token; the daemon log has it too;
#  - the view shows the generated text again; the rejected text stays
#    readable as VIEW.rejected (write+close case);
#  - reverting the view (writing the generated text back) or deleting it
#    brings back the generated text, still without touching SOURCE;
#  - a later good save clears that view's message, not the others';
#  - an empty file saved onto a mesh view (rename, mv, truncate + fsync) is
#    refused the same way (issue 24).
. "$(dirname "$0")/edit_lib.sh"
edit_setup edit_bad
mapfile -t targets < <(edit_targets)
edit_mount

methods="writeclose fsync cp sed pyreplace"
for m in vim nvim emacs; do
	if (edit_require_method "$m") >/dev/null 2>&1; then
		methods="$methods $m"
	else
		lfs_log "SKIP-PART: $m not installed: its bad-edit case is left out"
	fi
done

# bad_case METHOD TARGET
bad_case() {
	local method=$1 model view regex field sep out n nl msg col what rc=0
	IFS='|' read -r model view regex field sep <<<"$2"
	what="bad edit, $method $model/$view"
	local mf="$SRC/$model" vf="$MNT/$model/$view"
	"$CONVERT" cat --root "$SRC" "$mf" "$view" >"$WORK/cur.txt"
	out=$(edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" bogus "$WORK/bad.txt") || { lfs_fail "$what: no value to break"; return; }
	n=${out%%$'\t'*}
	nl=${out#*$'\t'}
	local prefix=${nl%%bogus*}
	col=$((${#prefix} + 1))
	if edit_apply "$mf" "$view" "$WORK/bad.txt" "$WORK/bad.bin" 2>"$WORK/apply.err"; then
		lfs_fail "$what: precondition: lfs_views_apply accepts the broken text"
		return
	fi
	msg=$(head -n 1 "$WORK/apply.err")
	case $msg in
	"$view:$n:$col: "?*) ;;
	*) lfs_fail "$what: the parser's message does not name $view:$n:$col: '$msg'" ;;
	esac
	cp "$mf" "$WORK/before.bin"
	local st0
	st0=$(stat -c '%y %i %s' "$mf")

	case $method in
	writeclose | fsync)
		local step=close
		[ "$method" = fsync ] && step=fsync
		if [ "$method" = fsync ]; then
			edit_py writeclose "$vf" "$WORK/bad.txt" fsync 2>"$WORK/run.err" || rc=$?
		else
			edit_py writeclose "$vf" "$WORK/bad.txt" 2>"$WORK/run.err" || rc=$?
		fi
		if [ "$rc" = 0 ]; then
			lfs_fail "$what: $step succeeded"
		elif ! grep -q "^$step: .*(EINVAL)" "$WORK/run.err"; then
			lfs_fail "$what: expected $step to fail with EINVAL, got: $(cat "$WORK/run.err")"
		fi
		;;
	pyreplace)
		edit_run pyreplace "$vf" "$n" "$nl" "$WORK/bad.txt" 2>"$WORK/run.err" || rc=$?
		if [ "$rc" = 0 ]; then
			lfs_fail "$what: os.replace succeeded"
		elif ! grep -q "(EINVAL)" "$WORK/run.err"; then
			lfs_fail "$what: expected EINVAL, got: $(cat "$WORK/run.err")"
		fi
		;;
	*)
		edit_run "$method" "$vf" "$n" "$nl" "$WORK/bad.txt" >"$WORK/run.out" 2>"$WORK/run.err" || rc=$?
		if [ "$rc" = 0 ]; then
			lfs_fail "$what: the program reports success"
		else
			lfs_log "   $method says (exit $rc): $(cat "$WORK/run.out" "$WORK/run.err" | grep -i -m1 -e 'invalid' -e 'error' -e 'fail' || true)"
		fi
		;;
	esac

	local ok=1
	# docs/editing.md: after a refusal the view shows the generated text
	# again (editors that renamed the view away restore their backup anyway)
	cmp -s "$vf" "$WORK/cur.txt" || { lfs_fail "$what: after the refusal the view does not show the generated text"; ok=0; }
	cmp -s "$mf" "$WORK/before.bin" || { lfs_fail "$what: SOURCE changed"; ok=0; }
	[ "$(stat -c '%y %i %s' "$mf")" = "$st0" ] || { lfs_fail "$what: SOURCE's mtime/inode changed"; ok=0; }
	if ! grep -q -F -x -e "$msg" "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null; then
		local hint=""
		case $method in
		vim | nvim) hint=" — after the refused close, $method unlinks the new $view and renames its backup back: if that unlink clears the message file, $method users never see the message" ;;
		esac
		lfs_fail "$what: $model/$EDIT_MSGFILE lacks the line '$msg' (has: $(head -c 300 "$MNT/$model/$EDIT_MSGFILE" 2>&1))$hint"
		ok=0
	fi
	if [ "$method" = writeclose ]; then
		if ! cmp -s "$MNT/$model/$view$EDIT_REJECTED_SUFFIX" "$WORK/bad.txt"; then
			lfs_fail "$what: the rejected text is not readable as $model/$view$EDIT_REJECTED_SUFFIX"
			ok=0
		fi
		# delete the view: the generated text comes back
		if rm -f "$vf" 2>"$WORK/rm.err"; then
			local i=0
			while ! cmp -s "$vf" "$WORK/cur.txt" 2>/dev/null; do
				i=$((i + 1))
				[ $i -le 50 ] || break
				sleep 0.1
			done
			cmp -s "$vf" "$WORK/cur.txt" || { lfs_fail "$what: deleting the view does not bring back the generated text (within 5 s)"; ok=0; }
		else
			lfs_fail "$what: rm of the view: $(cat "$WORK/rm.err")"
			ok=0
		fi
	else
		# revert: write the generated text back
		if ! cp "$WORK/cur.txt" "$vf" 2>"$WORK/cp.err"; then
			lfs_fail "$what: reverting the view failed: $(cat "$WORK/cp.err")"
			ok=0
		fi
		cmp -s "$vf" "$WORK/cur.txt" || { lfs_fail "$what: after the revert the view is not the generated text"; ok=0; }
	fi
	cmp -s "$mf" "$WORK/before.bin" && [ "$(stat -c '%y %i %s' "$mf")" = "$st0" ] ||
		{ lfs_fail "$what: SOURCE touched by the revert/delete"; ok=0; }
	if ! edit_src_listing | cmp -s - "$WORK/src.list"; then
		lfs_fail "$what: SOURCE listing changed: $(edit_src_listing | diff "$WORK/src.list" - | grep '^[<>]' | tr '\n' ' ')"
		ok=0
	fi
	if [ "$ok" = 1 ]; then lfs_ok "$what: refused ($msg), SOURCE untouched, message in $EDIT_MSGFILE"; fi
	printf '%s\n' "$msg" >>"$WORK/messages"
}

for t in "${targets[@]}"; do
	for m in $methods; do
		bad_case "$m" "$t"
	done
done

# Empty saves (issue 24 item 3): an empty file renamed onto a mesh view
# (Python os.rename; `mv` inside the mount), and a truncation made a save by
# fsync, are refused with EINVAL (a failing mv), the message
# `VIEW:1:1: error: the view is empty ...` is in errors.txt, the view shows
# the mesh again and SOURCE stays byte-identical (same mtime and inode): an
# empty view would delete the mesh it shows. `mv` of an empty file from
# another filesystem is unlink + create + close without a WRITE, which is no
# save (docs/editing.md "Commit points"): SOURCE stays untouched too.
empty_case() {
	local how=$1 model=$2 view=$3 rc=0
	local mf="$SRC/$model" vf="$MNT/$model/$view" what="empty save, $how onto $model/$view"
	"$CONVERT" cat "$mf" "$view" >"$WORK/cur.txt"
	cp "$mf" "$WORK/before.bin"
	local st0
	st0=$(stat -c '%y %i %s' "$mf")
	case $how in
	rename)
		: >"$MNT/$model/empty.tmp"
		python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$MNT/$model/empty.tmp" "$vf" \
			2>"$WORK/run.err" || rc=$?
		[ "$rc" != 0 ] && grep -q "Errno 22" "$WORK/run.err" ||
			lfs_fail "$what: expected EINVAL, got rc=$rc $(cat "$WORK/run.err")"
		;;
	mv)
		: >"$MNT/$model/empty.tmp"
		mv "$MNT/$model/empty.tmp" "$vf" 2>"$WORK/run.err" || rc=$?
		[ "$rc" != 0 ] || lfs_fail "$what: mv reports success"
		;;
	truncfsync)
		python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC); os.fsync(fd)' "$vf" \
			2>"$WORK/run.err" || rc=$?
		[ "$rc" != 0 ] && grep -q "Errno 22" "$WORK/run.err" ||
			lfs_fail "$what: expected EINVAL from fsync, got rc=$rc $(cat "$WORK/run.err")"
		;;
	mvother)
		: >"$EDIT_OTHER/empty.obj"
		mv "$EDIT_OTHER/empty.obj" "$vf" 2>"$WORK/run.err" || rc=$?
		;;
	esac
	rm -f "$MNT/$model/empty.tmp" "$EDIT_OTHER/empty.obj"
	local ok=1
	cmp -s "$mf" "$WORK/before.bin" || { lfs_fail "$what: SOURCE changed"; ok=0; }
	[ "$(stat -c '%y %i %s' "$mf")" = "$st0" ] || { lfs_fail "$what: SOURCE's mtime/inode changed"; ok=0; }
	if [ "$how" = mvother ]; then
		# no save happened: deleting the unsaved empty view brings the mesh back
		rm -f "$vf"
		local i=0
		while ! cmp -s "$vf" "$WORK/cur.txt" 2>/dev/null && [ $i -le 50 ]; do
			i=$((i + 1))
			sleep 0.1
		done
	else
		grep -q "^$view:1:1: error: the view is empty" "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null ||
			{ lfs_fail "$what: $EDIT_MSGFILE lacks '$view:1:1: error: the view is empty' (has: $(head -c 300 "$MNT/$model/$EDIT_MSGFILE" 2>&1))"; ok=0; }
		printf '%s\n' "$(grep -m1 "^$view:1:1: error: the view is empty" "$MNT/$model/$EDIT_MSGFILE")" >>"$WORK/messages"
	fi
	cmp -s "$vf" "$WORK/cur.txt" || { lfs_fail "$what: the view does not show the mesh afterwards"; ok=0; }
	[ "$ok" = 1 ] && lfs_ok "$what: nothing saved, SOURCE byte-identical"
	return 0
}
mesh=$(edit_first_view "$EDIT_NOD" 'meshes/*.obj')
if [ -n "$mesh" ]; then
	for how in rename mv truncfsync mvother; do
		empty_case "$how" "$EDIT_NOD" "$mesh"
	done
else
	lfs_fail "$EDIT_NOD has no mesh view for the empty-save cases"
fi

# a good save after the refusals still works, and clears that view's
# message (errors.txt keeps the last message of each view until that view
# is saved successfully)
edit_save cp "${targets[0]}"
IFS='|' read -r model view _ <<<"${targets[0]}"
if grep -q "^$view:" "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null; then
	lfs_fail "after a good save of $model/$view, $EDIT_MSGFILE still has its message"
else
	lfs_ok "a good save of $model/$view clears its message"
fi
other=$(printf '%s\n' "${targets[@]}" | grep "^$model|" | sed -n 2p | cut -d'|' -f2)
if [ -n "$other" ]; then
	grep -q "^$other:" "$MNT/$model/$EDIT_MSGFILE" 2>/dev/null &&
		lfs_ok "the message of $model/$other stays" ||
		lfs_fail "the good save of $model/$view also dropped the message of $model/$other"
fi

lfs_umount "$MNT"
missing=0
while IFS= read -r msg; do
	grep -q -F -e "$msg" "$MNT.log" || missing=$((missing + 1))
done < <(sort -u "$WORK/messages")
[ "$missing" = 0 ] && lfs_ok "every refusal message is in the daemon log" || lfs_fail "$missing refusal messages missing from the daemon log"
edit_check_after_umount
lfs_finish
