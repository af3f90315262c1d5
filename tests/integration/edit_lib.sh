# shellcheck shell=bash
# Shared helpers for the edit_*.sh tests (sourced after nothing else: it
# sources lib.sh itself). They save views of NOD, NAD and SOD models through a
# writable mount with real programs and check the SOURCE binary afterwards.
#
#   . "$(dirname "$0")/edit_lib.sh"
#   edit_setup NAME          fresh $WORK, $HOME, $SRC (corpus copies), $MNT
#   edit_mount               mount $SRC on $MNT (writable)
#   edit_targets             "model|view|regex|field|sep" lines: which value
#                            of which view each test edits
#   edit_save METHOD TARGET  one save of one view by one program, checked
#
# The reference for every save is `legacyfs-convert apply MODEL VIEW EDITED
# -o OUT` (the same lfs_views_apply() the mount calls): the SOURCE file must
# end up byte-identical to it. Work folders are under the build root, never
# /tmp (vim's backupskip=/tmp/* would hide its rename-to-backup save there).

# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

export LC_ALL=C.UTF-8 LANG=C.UTF-8
export TERM=dumb
unset VIMINIT EXINIT MYVIMRC EMACSLOADPATH

EDIT_TOOL="$LFS_SOURCE_ROOT/tests/integration/edit_tool.py"
# Per-command bound: editors that wait for input must not hang the suite.
EDIT_TIMEOUT=${EDIT_TIMEOUT:-60}
# Extra legacyfs options for a writable mount (none today: see docs/editing.md).
EDIT_MOUNT_OPTS=${EDIT_MOUNT_OPTS:-}

# Refused saves (docs/editing.md): the message file in each model folder
# and the suffix of the rejected text kept next to the view.
EDIT_MSGFILE=errors.txt
# shellcheck disable=SC2034  # used by edit_bad.sh and edit_outside.sh
EDIT_REJECTED_SUFFIX=.rejected

# The three models every test edits: small files of each writable format.
EDIT_NOD=PLC_Cndl02.nod
EDIT_NAD=PLC_Cndl02__on.nad
EDIT_SOD=PLC_Cndl02_1.93.sod

edit_py() { python3 "$EDIT_TOOL" "$@"; }

# edit_apply MODEL VIEW EDITED OUT: the reference write-back, same code path
# as the mount. Refusal message on stderr, non-zero exit.
edit_apply() {
	$EDIT_APPLY_CMD "$1" "$2" "$3" -o "$4"
}

edit_pick_apply() {
	"$CONVERT" --help 2>&1 | grep -q 'convert apply' || lfs_die "legacyfs-convert has no 'apply' command"
	EDIT_APPLY_CMD="$CONVERT apply"
}

edit_require_python() {
	command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
}

# edit_setup NAME: skip unless FUSE, python3 and the corpus models are
# there; fresh work folder, $HOME, and a SOURCE folder with copies of the
# three models (writable, mode 0644) and one plain file.
edit_setup() {
	lfs_require_fuse
	edit_require_python
	[ -n "${LFS_CORPUS:-}" ] && [ -f "$LFS_CORPUS/nod/$EDIT_NOD" ] &&
		[ -f "$LFS_CORPUS/nad/$EDIT_NAD" ] || lfs_skip "NOD/NAD corpus not found (LFS_CORPUS=${LFS_CORPUS:-})"
	lfs_workdir "$1"
	edit_pick_apply
	export HOME="$WORK/home"
	mkdir -p "$HOME/.emacs.d" "$HOME/tmp"
	SRC="$WORK/src"
	MNT="$WORK/mnt"
	# `mv` from another filesystem: anything outside the mount is one
	EDIT_OTHER="$WORK/other"
	mkdir -p "$SRC" "$WORK/ref" "$WORK/plain" "$EDIT_OTHER"
	cp "$LFS_CORPUS/nod/$EDIT_NOD" "$LFS_CORPUS/nad/$EDIT_NAD" "$SRC/"
	[ -f "$LFS_CORPUS/sod/$EDIT_SOD" ] && cp "$LFS_CORPUS/sod/$EDIT_SOD" "$SRC/"
	printf 'not a model\n' >"$SRC/readme.txt"
	chmod 0644 "$SRC"/*
	cp -p "$SRC"/* "$WORK/ref/"
	edit_src_listing >"$WORK/src.list"
	EDIT_K=0
}

# Everything in SOURCE with type, mode and size: scratch files that leak
# into SOURCE show up as a difference.
edit_src_listing() {
	(cd "$SRC" && find . -mindepth 1 -printf '%P %y %m\n' | LC_ALL=C sort)
}

edit_mount() {
	# shellcheck disable=SC2086  # options are words
	lfs_mount "$SRC" "$MNT" $EDIT_MOUNT_OPTS
}

# True when the format's views can be written back (SOD arrived later than
# NOD/NAD: without its encoder the SOD targets are left out, and said so).
edit_writable() {
	local model=$1 view=$2
	"$CONVERT" cat "$SRC/$model" "$view" >"$WORK/probe.txt" 2>/dev/null || return 1
	edit_apply "$SRC/$model" "$view" "$WORK/probe.txt" "$WORK/probe.bin" 2>/dev/null
}

# First view of MODEL whose path matches the shell pattern.
edit_first_view() {
	"$CONVERT" list "$SRC/$1" | cut -f2 | while read -r p; do
		# shellcheck disable=SC2053  # pattern match on purpose
		if [[ $p == $2 ]]; then
			printf '%s\n' "$p"
			break
		fi
	done
}

# edit_targets: one line per edited view, "model|view|regex|field|sep":
# the first line matching regex gets its field-th token (or named CSV
# column) changed. NOD: model.txt (a bone's rest translation) and a mesh OBJ
# (a vertex x); NAD: anim.txt (a key's x) and a track CSV (a key's x); SOD:
# model.txt (a material's ambient red) and an animation CSV (position_x).
edit_targets() {
	local v
	printf '%s|model.txt|^  resttranslate |2|space\n' "$EDIT_NOD"
	v=$(edit_first_view "$EDIT_NOD" 'meshes/*.obj')
	[ -n "$v" ] && printf '%s|%s|^v |2|space\n' "$EDIT_NOD" "$v"
	printf '%s|anim.txt|^    [0-9]|3|space\n' "$EDIT_NAD"
	v=$(edit_first_view "$EDIT_NAD" 'tracks/*.csv')
	[ -n "$v" ] && printf '%s|%s|^[0-9]|x|comma\n' "$EDIT_NAD" "$v"
	if [ -f "$SRC/$EDIT_SOD" ]; then
		if edit_writable "$EDIT_SOD" model.txt; then
			printf '%s|model.txt|^  ambient |2|space\n' "$EDIT_SOD"
			v=$(edit_first_view "$EDIT_SOD" 'anims/*.csv')
			[ -n "$v" ] && edit_writable "$EDIT_SOD" "$v" &&
				printf '%s|%s|^[0-9]|position_x|comma\n' "$EDIT_SOD" "$v"
		else
			lfs_log "SKIP-PART: SOD views are not writable yet (legacyfs-convert apply refuses them): SOD targets left out"
		fi
	fi
	return 0
}

# edit_expect_views MODEL: every view the mount shows for MODEL equals what
# legacyfs-convert makes from the SOURCE file now (other views of an edited
# model are regenerated). Retries for up to 3 s: invalidation may come from
# the watcher thread.
edit_views_match() {
	local model=$1 d="$WORK/expect_views" p bad
	rm -rf "$d"
	"$CONVERT" extract --root "$SRC" "$SRC/$model" "$d" || return 1
	bad=""
	while IFS= read -r p; do
		cmp -s "$d/$p" "$MNT/$model/$p" || bad="$bad $p"
	done < <(cd "$d" && find . -type f -printf '%P\n')
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad" >"$WORK/views.bad"
	return 1
}

edit_check_views() {
	local i=0
	while ! edit_views_match "$1"; do
		i=$((i + 1))
		if [ $i -ge 30 ]; then
			lfs_fail "$2: views of $1 differ from legacyfs-convert's:$(cat "$WORK/views.bad")"
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# edit_mount_extras MODEL: names in the mount's model folder that are not
# views (editor backups, locks ... left behind) or the message file,
# space-separated.
edit_mount_extras() {
	(cd "$MNT/$1" && find . -mindepth 1 ! -type d ! -path "./$EDIT_MSGFILE" -printf '%P\n' | LC_ALL=C sort) >"$WORK/mnt.names"
	"$CONVERT" list "$SRC/$1" | cut -f2 | LC_ALL=C sort >"$WORK/gen.names"
	LC_ALL=C comm -23 "$WORK/mnt.names" "$WORK/gen.names" | tr '\n' ' '
}

edit_require_method() {
	case $1 in
	vim | vimcompat) command -v vim >/dev/null 2>&1 || lfs_skip "vim not installed" ;;
	nvim) command -v nvim >/dev/null 2>&1 || lfs_skip "neovim not installed" ;;
	emacs) command -v emacs >/dev/null 2>&1 || lfs_skip "emacs not installed" ;;
	nano) command -v nano >/dev/null 2>&1 || lfs_skip "nano not installed" ;;
	gio | giob) command -v gio >/dev/null 2>&1 || lfs_skip "gio (libglib2.0-bin) not installed" ;;
	sed)
		sed --version 2>/dev/null | grep -q 'GNU sed' || lfs_skip "GNU sed not installed"
		;;
	esac
}

# edit_run METHOD FILE LINE NEWLINE EDITED: save FILE with the program
# METHOD so that it ends up as EDITED (LINE/NEWLINE: the changed line, for
# the editors that make the change themselves). Returns the program's status.
# shellcheck disable=SC2016  # $1.. in the bash -c scripts are the inner shell's
edit_run() {
	local method=$1 f=$2 n=$3 nl=$4 edited=$5 eol='\n' cr=''
	local t=(timeout -k 5 "$EDIT_TIMEOUT")
	# CSV views end lines with CRLF: editors keep it, sed and printf need it
	if grep -q $'\r$' "$edited"; then eol='\r\n' cr='\r'; fi
	case $nl in *\'* | *\"* | *\\* | *\|*) lfs_die "edit_run: awkward characters in '$nl'" ;; esac
	case $f in *\'* | *\"* | *\\*) lfs_die "edit_run: awkward characters in path '$f'" ;; esac
	case $method in
	vim) # defaults.vim: swap file, 4913 probe, rename to backup, new file, fsync
		"${t[@]}" vim -N -u DEFAULTS -i NONE -es -c "call setline($n, '$nl')" -c wq -c cq "$f" </dev/null >/dev/null ;;
	vimcompat) # vi-compatible: backupcopy=yes, written in place
		"${t[@]}" vim -u NONE -i NONE -es --cmd 'set fileformats=unix,dos' -c "call setline($n, '$nl')" -c wq -c cq "$f" </dev/null >/dev/null ;;
	nvim)
		"${t[@]}" nvim --headless -i NONE -c "call setline($n, '$nl')" -c wq -c cq "$f" </dev/null >/dev/null ;;
	emacs) # lock symlink .#X, auto-save #X#, backup X~ (rename), new file;
		# exit 3/4 when the lock symlink / auto-save file was not made.
		# Emacs makes no backup of files under /tmp or temporary-file-
		# directory (normal-backup-enable-predicate): back up everything,
		# so a checkout under /tmp tests what a user's editor does elsewhere.
		"${t[@]}" emacs --batch -Q --eval "(progn (setq vc-handled-backends nil)
			(setq backup-enable-predicate (lambda (_name) t))
			(find-file \"$f\") (auto-save-mode 1)
			(goto-char (point-min)) (forward-line $((n - 1)))
			(delete-region (line-beginning-position) (line-end-position))
			(insert \"$nl\") (do-auto-save t)
			(unless (file-symlink-p (concat (file-name-directory buffer-file-name) \".#\"
				(file-name-nondirectory buffer-file-name))) (kill-emacs 3))
			(unless (file-exists-p buffer-auto-save-file-name) (kill-emacs 4))
			(save-buffer) (kill-emacs 0))" </dev/null ;;
	nano) "${t[@]}" python3 "$EDIT_TOOL" nano "$f" "$n" "$nl" >/dev/null ;;
	sed) "${t[@]}" sed -i "${n}s|.*|$nl$cr|" "$f" ;;
	gio) "${t[@]}" gio save "$f" <"$edited" ;;
	giob) "${t[@]}" gio save -b "$f" <"$edited" ;;
	vscode | jetbrains | pyreplace) "${t[@]}" python3 "$EDIT_TOOL" "$method" "$f" "$edited" ;;
	shell) "${t[@]}" bash -c 'cat "$1" >"$2"' sh "$edited" "$f" ;;
	append) "${t[@]}" bash -c 'printf "%s$3" "$1" >>"$2"' sh "$nl" "$f" "$eol" ;;
	cp) "${t[@]}" cp "$edited" "$f" ;;
	mv)
		cp "$edited" "$EDIT_OTHER/$(basename "$f")"
		"${t[@]}" mv "$EDIT_OTHER/$(basename "$f")" "$f"
		;;
	*) lfs_die "edit_run: unknown method $method" ;;
	esac
}

# edit_save METHOD "model|view|regex|field|sep": one checked save.
#  1. the mount shows legacyfs-convert's text for the view;
#  2. the edit (one value changed; for `append` one line appended) and its
#     reference result from edit_apply;
#  3. the same program on a plain copy in $WORK/plain must produce exactly
#     the edited text (else the test, not the mount, is wrong);
#  4. the program saves through the mount and exits 0;
#  5. SOURCE's model equals the reference (or, for a no-op, is untouched:
#     bytes and mtime), keeps its mode, every view of the model is
#     regenerated, and nothing new appeared in SOURCE.
edit_save() {
	local method=$1 model view regex field sep out n nl value kind=subst
	IFS='|' read -r model view regex field sep <<<"$2"
	local what="$method $model/$view"
	local mf="$SRC/$model" vf="$MNT/$model/$view" plain="$WORK/plain/$model/$view"
	EDIT_K=$((EDIT_K + 1))
	value="$EDIT_K.25"

	cp "$mf" "$WORK/before.bin"
	local before_stat before_mode
	before_stat=$(stat -c '%y %i %a %u %g' "$mf")
	before_mode=$(stat -c '%a %u %g' "$mf")
	"$CONVERT" cat --root "$SRC" "$mf" "$view" >"$WORK/cur.txt" || { lfs_fail "$what: legacyfs-convert cat"; return; }
	if ! cmp -s "$vf" "$WORK/cur.txt"; then
		lfs_fail "$what: the mount does not show the current text before the save"
		return
	fi
	if [ "$method" = append ]; then
		out=$(edit_py append "$WORK/cur.txt" "$WORK/edited.txt") || { lfs_fail "$what: append"; return; }
		kind=${out%%$'\t'*}
		n=0
		nl=${out#*$'\t'}
	else
		out=$(edit_py subst "$WORK/cur.txt" "$regex" "$field" "$sep" "$value" "$WORK/edited.txt") ||
			{ lfs_fail "$what: no value to edit"; return; }
		n=${out%%$'\t'*}
		nl=${out#*$'\t'}
	fi
	if ! edit_apply "$mf" "$view" "$WORK/edited.txt" "$WORK/expect.bin" 2>"$WORK/apply.err"; then
		lfs_fail "$what: the reference refuses the edit: $(cat "$WORK/apply.err")"
		return
	fi
	local noop=0
	if cmp -s "$WORK/expect.bin" "$WORK/before.bin"; then
		[ "$kind" = comment ] || { lfs_fail "$what: precondition: the edit does not change the model"; return; }
		noop=1
	fi

	# the program on a plain file must write exactly the edited text
	mkdir -p "$(dirname "$plain")"
	rm -f "$plain"
	cp "$WORK/cur.txt" "$plain"
	if ! edit_run "$method" "$plain" "$n" "$nl" "$WORK/edited.txt" 2>"$WORK/plain.err" || ! cmp -s "$plain" "$WORK/edited.txt"; then
		lfs_fail "$what: on a plain file the program does not write the edited text (test bug): $(head -c 500 "$WORK/plain.err")"
		return
	fi

	local t0 t1 rc=0
	t0=$(date +%s%N)
	edit_run "$method" "$vf" "$n" "$nl" "$WORK/edited.txt" 2>"$WORK/run.err" || rc=$?
	t1=$(date +%s%N)
	if [ "$rc" != 0 ]; then
		lfs_fail "$what: the save failed (exit $rc): $(head -c 800 "$WORK/run.err")"
		cp "$mf" "$WORK/ref/$model"
		return
	fi
	local ok=1
	if ! cmp -s "$mf" "$WORK/expect.bin"; then
		if cmp -s "$mf" "$WORK/before.bin"; then
			lfs_fail "$what: SOURCE unchanged after the save"
		else
			lfs_fail "$what: SOURCE differs from legacyfs-convert apply's result"
		fi
		ok=0
	fi
	local after_stat after_mode
	after_stat=$(stat -c '%y %i %a %u %g' "$mf")
	after_mode=$(stat -c '%a %u %g' "$mf")
	if [ "$noop" = 1 ]; then
		[ "$after_stat" = "$before_stat" ] || { lfs_fail "$what: no-op save touched SOURCE ($before_stat -> $after_stat)"; ok=0; }
	else
		[ "$after_mode" = "$before_mode" ] || { lfs_fail "$what: mode/owner of SOURCE changed ($before_mode -> $after_mode)"; ok=0; }
	fi
	case $method in
	emacs | giob) # rename(view -> X~) / link(view, X~): the backup holds the text before the save
		if ! cmp -s "$vf~" "$WORK/cur.txt"; then
			lfs_fail "$what: the backup $model/$view~ in the mount does not hold the text before the save"
			ok=0
		fi
		;;
	esac
	edit_check_views "$model" "$what" || ok=0
	if ! edit_src_listing | cmp -s - "$WORK/src.list"; then
		lfs_fail "$what: SOURCE listing changed: $(edit_src_listing | diff "$WORK/src.list" - | grep '^[<>]' | tr '\n' ' ')"
		ok=0
	fi
	cp "$mf" "$WORK/ref/$model"
	if [ "$ok" = 1 ]; then
		if [ "$noop" = 1 ]; then
			lfs_ok "$what: $kind appended, a no-op: SOURCE untouched ($(((t1 - t0) / 1000000)) ms)"
		elif [ "$method" = append ]; then
			lfs_ok "$what: $kind appended, SOURCE re-encoded as expected ($(((t1 - t0) / 1000000)) ms)"
		else
			lfs_ok "$what: line $n value -> $value, SOURCE re-encoded as expected ($(((t1 - t0) / 1000000)) ms)"
		fi
	fi
}

# After unmounting: SOURCE holds exactly the last result of each model
# (copied to $WORK/ref by edit_setup and edit_save) and nothing else
# appeared.
edit_check_after_umount() {
	local f
	for f in "$WORK"/ref/*; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$SRC/$(basename "$f")" || lfs_fail "after unmount: SOURCE/$(basename "$f") is not the last saved result"
	done
	if edit_src_listing | cmp -s - "$WORK/src.list"; then
		lfs_ok "after unmount: no scratch file in SOURCE"
	else
		lfs_fail "after unmount: SOURCE listing changed: $(edit_src_listing | diff "$WORK/src.list" - | grep '^[<>]' | tr '\n' ' ')"
	fi
}
