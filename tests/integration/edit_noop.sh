#!/bin/bash
# No-op saves leave SOURCE untouched, bytes and mtime (issue 4, item 5).
# For each target view (edit_targets): vim `:wq` and neovim `:wq` without a
# change, emacs saving an unmodified-but-marked buffer (when installed),
# `touch`, `cp` of the same text, `sed -i` with a substitution that matches
# nothing, shell `>` of the same text, Python tempfile + os.replace of the
# same text, and an edit that parses to the same model (a number respelled,
# e.g. 0.5 -> 0.50; left out where the reference says it is not a no-op).
# After each: SOURCE's bytes, mtime and inode are unchanged, the view shows
# the generated text, nothing new appeared in SOURCE.
. "$(dirname "$0")/edit_lib.sh"
edit_setup edit_noop
mapfile -t targets < <(edit_targets)
edit_mount

have() { (edit_require_method "$1") >/dev/null 2>&1; }

# noop_case WHAT MODEL VIEW COMMAND...: COMMAND must succeed and change nothing
noop_case() {
	local what=$1 model=$2 view=$3 rc=0
	shift 3
	local mf="$SRC/$model" vf="$MNT/$model/$view"
	local st0
	cp "$mf" "$WORK/before.bin"
	st0=$(stat -c '%y %i %s %a' "$mf")
	"$CONVERT" cat --root "$SRC" "$mf" "$view" >"$WORK/cur.txt"
	"$@" </dev/null >"$WORK/run.out" 2>"$WORK/run.err" || rc=$?
	local ok=1
	[ "$rc" = 0 ] || { lfs_fail "$what $model/$view: exit $rc: $(head -c 500 "$WORK/run.err")"; ok=0; }
	cmp -s "$mf" "$WORK/before.bin" || { lfs_fail "$what $model/$view: SOURCE bytes changed"; ok=0; }
	[ "$(stat -c '%y %i %s %a' "$mf")" = "$st0" ] || { lfs_fail "$what $model/$view: SOURCE mtime/inode changed ($st0 -> $(stat -c '%y %i %s %a' "$mf"))"; ok=0; }
	cmp -s "$vf" "$WORK/cur.txt" || { lfs_fail "$what $model/$view: the view is not the generated text afterwards"; ok=0; }
	if ! edit_src_listing | cmp -s - "$WORK/src.list"; then
		lfs_fail "$what $model/$view: SOURCE listing changed: $(edit_src_listing | diff "$WORK/src.list" - | grep '^[<>]' | tr '\n' ' ')"
		ok=0
	fi
	if [ "$ok" = 1 ]; then lfs_ok "$what $model/$view: SOURCE untouched"; fi
}

t=(timeout -k 5 "$EDIT_TIMEOUT")
for tg in "${targets[@]}"; do
	IFS='|' read -r model view regex field sep <<<"$tg"
	vf="$MNT/$model/$view"
	if have vim; then
		noop_case "vim :wq unchanged" "$model" "$view" "${t[@]}" vim -N -u DEFAULTS -i NONE -es -c wq -c cq "$vf"
	fi
	if have nvim; then
		noop_case "nvim :wq unchanged" "$model" "$view" "${t[@]}" nvim --headless -i NONE -c wq -c cq "$vf"
	fi
	if have emacs; then
		noop_case "emacs save unchanged" "$model" "$view" "${t[@]}" emacs --batch -Q --eval "(progn (setq vc-handled-backends nil)
			(find-file \"$vf\") (set-buffer-modified-p t) (save-buffer) (kill-emacs 0))"
	fi
	noop_case "touch" "$model" "$view" touch "$vf"
	"$CONVERT" cat --root "$SRC" "$SRC/$model" "$view" >"$WORK/same.txt"
	noop_case "cp same text" "$model" "$view" cp "$WORK/same.txt" "$vf"
	noop_case "sed -i no match" "$model" "$view" sed -i 's/^NO SUCH LINE$/x/' "$vf"
	# shellcheck disable=SC2016  # expanded by the inner shell
	noop_case "shell > same text" "$model" "$view" bash -c 'cat "$1" >"$2"' sh "$WORK/same.txt" "$vf"
	noop_case "os.replace same text" "$model" "$view" python3 "$EDIT_TOOL" pyreplace "$vf" "$WORK/same.txt"

	# a number spelled differently: the same model
	tok=$(edit_py get "$WORK/same.txt" "$regex" "$field" "$sep") || tok=""
	case $tok in
	"" | *e* | *E* | *n* | *N*) alt="" ;;
	*.*) alt="${tok}0" ;;
	*) alt="${tok}.0" ;;
	esac
	if [ -n "$alt" ]; then
		edit_py subst "$WORK/same.txt" "$regex" "$field" "$sep" "$alt" "$WORK/alt.txt" >/dev/null
		if edit_apply "$SRC/$model" "$view" "$WORK/alt.txt" "$WORK/alt.bin" 2>/dev/null && cmp -s "$WORK/alt.bin" "$SRC/$model"; then
			noop_case "respelled number ($tok -> $alt) via cp" "$model" "$view" cp "$WORK/alt.txt" "$vf"
		else
			lfs_log "NOTE: $model/$view: '$tok' -> '$alt' is not a no-op for the reference: case left out"
		fi
	fi
done

lfs_umount "$MNT"
edit_check_after_umount
lfs_finish
