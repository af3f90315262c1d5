#!/usr/bin/env bash
# contrib/vim's errors where the user is (issue 26, docs/vim.md "Errors"),
# with the real Vim (and Neovim when installed) on a real mount of a corpus
# NWN binary model:
# - `:w` of model.mdl with a typo (a letter O for a zero in a position) is
#   refused by the mount; the plugin loads the model folder's errors.txt into
#   the quickfix list: the first entry is the buffer's file at the typo's
#   line, the cursor is on that line, v:errmsg has the message, the buffer
#   stays modified; the model file is unchanged;
# - :LegacyfsCheck of the unsaved buffer (through `legacyfs-convert check`,
#   the model file found from /proc/self/mounts): the same line in the
#   quickfix list; no error after undoing the typo;
# - `:compiler legacyfs` + `:make` on a copy of the text outside the mount
#   (b:legacyfs_model, b:legacyfs_view): the typo's line;
# - a good `:w` lands (the model file changes) and leaves no quickfix error.
# Skips (77) without vim, FUSE or the corpus.
. "$(dirname "$0")/lib.sh"
command -v vim >/dev/null 2>&1 || lfs_skip "vim not installed"
lfs_require_fuse
lfs_require_corpus
lfs_workdir vim_errors
export PATH="$(dirname "$CONVERT"):$PATH"
RTP="$LFS_SOURCE_ROOT/contrib/vim"
lfs_binary_whose_mdl '^  position '
m=$(basename "$bin")

# run_editor PROG SCRIPT: PROG headless with contrib/vim on 'runtimepath'
# running the Ex commands of SCRIPT; its output file is $WORK/res
run_editor() {
	rm -f "$WORK/res"
	case $1 in
	vim) timeout 120 vim -N -u NONE -i NONE -n -es -S "$2" </dev/null >"$WORK/vim.out" 2>&1 ;;
	nvim) timeout 120 nvim --headless -u NONE -i NONE -n -S "$2" </dev/null >"$WORK/vim.out" 2>&1 ;;
	esac
	[ -f "$WORK/res" ] || lfs_fail "$1: the script wrote no result: $(tail -5 "$WORK/vim.out")"
}

for prog in vim nvim; do
	command -v "$prog" >/dev/null 2>&1 || { lfs_log "SKIP-PART: $prog not installed"; continue; }
	rm -rf "$WORK/src" "$WORK/mnt"
	mkdir -p "$WORK/src"
	cp "$bin" "$WORK/src/$m"
	chmod u+w "$WORK/src/$m"
	lfs_mount "$WORK/src" "$WORK/mnt"
	view="$WORK/mnt/$m/model.mdl"
	tline=$(grep -n -m1 '^  position ' "$view" | cut -d: -f1)
	cat >"$WORK/s1.vim" <<VIM
set nocompatible
set rtp^=$RTP
filetype plugin on
runtime plugin/legacyfs.vim
let g:pre = 0
let g:log = []
let g:post = 0
autocmd BufWritePre * let g:pre += 1 | call add(g:log, 'pre ' . expand('<afile>'))
autocmd BufWritePost * let g:post += 1 | call add(g:log, 'post ' . expand('<afile>'))
edit $view
call cursor(1, 1)
execute '$tline' . 's/^  position \\(\\S*\\) \\S*\\ze /  position \\1 O.5/'
try
  write
catch
endtry
let s:qf = filter(getqflist(), {_, e -> e.valid && e.type ==? 'e'})
let s:r = ['qf=' . len(s:qf)]
if len(s:qf)
  call add(s:r, 'file=' . fnamemodify(bufname(s:qf[0].bufnr), ':p'))
  call add(s:r, 'lnum=' . s:qf[0].lnum)
  call add(s:r, 'text=' . s:qf[0].text)
endif
call add(s:r, 'cursor=' . line('.'))
call add(s:r, 'modified=' . &modified)
call add(s:r, 'errmsg=' . v:errmsg)
call setqflist([])
call add(s:r, 'check=' . legacyfs#check())
let s:qf = filter(getqflist(), {_, e -> e.valid && e.type ==? 'e'})
call add(s:r, 'checklnum=' . (len(s:qf) ? s:qf[0].lnum : 0))
call add(s:r, 'checkfile=' . (len(s:qf) ? fnamemodify(bufname(s:qf[0].bufnr), ':p') : ''))
" :make outside the mount
call writefile(getline(1, '\$'), '$WORK/copy.mdl')
edit! $WORK/copy.mdl
let b:legacyfs_model = '$WORK/src/$m'
let b:legacyfs_view = 'model.mdl'
compiler legacyfs
silent make
let s:qf = filter(getqflist(), {_, e -> e.valid && e.type ==? 'e'})
call add(s:r, 'makelnum=' . (len(s:qf) ? s:qf[0].lnum : 0))
call add(s:r, 'makefile=' . (len(s:qf) ? fnamemodify(bufname(s:qf[0].bufnr), ':p') : ''))
" a good save through the mount
edit! $view
execute '$tline' . 's/^  position \\(\\S*\\) \\S*\\ze /  position \\1 0.5/'
call setqflist([])
try
  write
  call add(s:r, 'goodwrite=ok')
catch
  call add(s:r, 'goodwrite=' . v:exception)
endtry
call add(s:r, 'prepost=' . g:pre . ',' . g:post)
call add(s:r, 'log=' . join(g:log, ';'))
call add(s:r, 'goodqf=' . len(filter(getqflist(), {_, e -> e.valid && e.type ==? 'e'})))
call add(s:r, 'goodcheck=' . legacyfs#check())
call writefile(s:r, '$WORK/res')
qa!
VIM
	run_editor "$prog" "$WORK/s1.vim"
	lfs_log "$prog: $(tr '\n' ' ' <"$WORK/res" 2>/dev/null)"
	get() { sed -n "s/^$1=//p" "$WORK/res"; }
	[ "$(get qf)" -ge 1 ] 2>/dev/null || lfs_fail "$prog: a refused :w loaded no error into the quickfix list"
	[ "$(get file)" = "$view" ] || lfs_fail "$prog: quickfix file $(get file), want $view"
	[ "$(get lnum)" = "$tline" ] || lfs_fail "$prog: quickfix line $(get lnum), want $tline"
	get text | grep -q 'O.5' || lfs_fail "$prog: quickfix text does not name O.5: $(get text)"
	[ "$(get cursor)" = "$tline" ] || lfs_fail "$prog: cursor on line $(get cursor), want $tline"
	[ "$(get modified)" = 1 ] || lfs_fail "$prog: the refused buffer is not 'modified'"
	get errmsg | grep -q "line $tline .*O.5" || lfs_fail "$prog: v:errmsg: $(get errmsg)"
	[ "$(get check)" -ge 1 ] 2>/dev/null && [ "$(get checklnum)" = "$tline" ] &&
		[ "$(get checkfile)" = "$view" ] ||
		lfs_fail "$prog: :LegacyfsCheck: $(get check) errors, line $(get checklnum) of $(get checkfile)"
	[ "$(get makelnum)" = "$tline" ] && [ "$(get makefile)" = "$WORK/copy.mdl" ] ||
		lfs_fail "$prog: :make: line $(get makelnum) of $(get makefile), want $tline of $WORK/copy.mdl"
	# BufWritePre ran for both writes, BufWritePost for the good one only
	[ "$(get prepost)" = 2,1 ] || lfs_fail "$prog: BufWritePre,BufWritePost ran $(get prepost) times, want 2,1"
	[ "$(get goodwrite)" = ok ] && [ "$(get goodqf)" = 0 ] && [ "$(get goodcheck)" = 0 ] ||
		lfs_fail "$prog: good :w: $(get goodwrite), $(get goodqf) quickfix errors, check $(get goodcheck)"
	lfs_umount "$WORK/mnt"
	cmp -s "$bin" "$WORK/src/$m" && lfs_fail "$prog: the good :w did not change the model file"
	lfs_ok "$prog: refused :w -> quickfix at line $tline + message; :LegacyfsCheck; :make; a good :w lands"
done
lfs_finish
