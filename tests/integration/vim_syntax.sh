#!/usr/bin/env bash
# contrib/vim loaded headless (docs/vim.md): `vim -N -u NONE -i NONE -n -es`
# with contrib/vim first in 'runtimepath', `syntax on`, `filetype plugin
# on`, on the text of corpus models of every format, made by
# `legacyfs-convert cat` into the work folder as a mount names them (NWN
# X.mdl/model.mdl, NOD and SOD model.txt, NAD anim.txt, NIL model.txt of a
# generated level), and on real NWN ASCII .mdl and .pwk files of the corpus.
# Per file: the filetype (nwnmdl for NWN text, legacyfs for the others, none
# for a binary .mdl), no error message (v:errmsg, :messages, exit status),
# the syntax group at known places (the 'node' keyword, the node type, a
# list keyword, a number in a list row, a comment) and a fold level > 0
# inside a node; a 64 469-line ASCII model (c_orcus.mdl) is highlighted to its
# end but not folded (longer than g:nwnmdl_fold_max_lines). Then the same
# with nvim when it is installed.
# Skips (77) without vim or the corpus; needs no FUSE.
. "$(dirname "$0")/lib.sh"

command -v vim >/dev/null 2>&1 || lfs_skip "vim not installed"
lfs_require_corpus
lfs_workdir vim_syntax
RTP="$LFS_SOURCE_ROOT/contrib/vim"
N="$LFS_CORPUS/nwn/tree"

# --- the files: name kind(ft) path
LIST="$WORK/files.tsv"
: >"$LIST"
# text_of MODEL VIEW OUT: legacyfs-convert cat MODEL VIEW >OUT
text_of() {
	mkdir -p "$(dirname "$3")"
	"$CONVERT" cat "$1" "$2" >"$3" || lfs_die "legacyfs-convert cat $1 $2"
}
for m in nwnprc/nwnprc/users/Tenjac/VFX/vdr_eleshield02.mdl \
	rollnw/tests/test_data/user/development/c_bodak.mdl \
	rollnw/tests/test_data/user/development/c_satyrarcher.mdl \
	rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl/ttd01_a04_03.mdl; do
	b=$(basename "$m")
	text_of "$N/$m" model.mdl "$WORK/text/$b/model.mdl"
	printf '%s\tnwnmdl\t%s\n' "$b" "$WORK/text/$b/model.mdl" >>"$LIST"
done
for m in nod/PLC_Cndl02.nod nod/c_deer.nod nod/c_a_ox.nod sod/T_Door21_1.8.sod sod/PLC_Cndl02_1.93.sod \
	sod/T_Door21_1.93_stau.sod; do
	b=$(basename "$m")
	text_of "$LFS_CORPUS/$m" model.txt "$WORK/text/$b/model.txt"
	printf '%s\tlegacyfs\t%s\n' "$b" "$WORK/text/$b/model.txt" >>"$LIST"
done
for m in nad/c_deer__cconjure1.nad nad/T_Door21__closed.nad nad/a_fa__2hcloseh.nad; do
	b=$(basename "$m")
	text_of "$LFS_CORPUS/$m" anim.txt "$WORK/text/$b/anim.txt"
	printf '%s\tlegacyfs\t%s\n' "$b" "$WORK/text/$b/anim.txt" >>"$LIST"
done
# NIL: no public file; a level of 4 sectors made by tests/integration/nil_gen.py
mkdir -p "$WORK/nil"
python3 "$LFS_SOURCE_ROOT/tests/integration/nil_gen.py" "$WORK/nil/l1_test.nil" 4 27
text_of "$WORK/nil/l1_test.nil" model.txt "$WORK/text/l1_test.nil/model.txt"
printf '%s\tlegacyfs\t%s\n' l1_test.nil "$WORK/text/l1_test.nil/model.txt" >>"$LIST"
# real NWN ASCII models and a walkmesh, opened where they are (read only)
for m in nwnprc/nwnprc/gfx/WSwGs_b_071.mdl krivoj-viewer/Textures/Empty2.pwk \
	$(grep -m1 -E '\.MDL$' "$LFS_CORPUS/nwn/ascii.txt" | sed 's|^tree/||') \
	$(grep -m1 '^tree/rollnw/.*\.mdl$' "$LFS_CORPUS/nwn/ascii.txt" | sed 's|^tree/||') \
	rollnw/tests/test_data/user/development/c_orcus.mdl; do
	[ -f "$N/$m" ] || lfs_die "corpus file $m missing"
	printf '%s\tnwnmdl\t%s\n' "ascii:$(basename "$m")" "$N/$m" >>"$LIST"
done
# a binary .mdl and a text file without the legacyfs header: no filetype of ours
printf '%s\tnone\t%s\n' "binary:vdr_eleshield02.mdl" "$N/nwnprc/nwnprc/users/Tenjac/VFX/vdr_eleshield02.mdl" >>"$LIST"
# a view saved under a name of its own: found by its header line
cp "$WORK/text/c_deer.nod/model.txt" "$WORK/c_deer.view"
printf '%s\tlegacyfs\t%s\n' c_deer.view "$WORK/c_deer.view" >>"$LIST"
printf 'node dummy x\nendnode\n' >"$WORK/plain.txt"
printf '%s\tnone\t%s\n' plain.txt "$WORK/plain.txt" >>"$LIST"

# --- the probe, run inside the editor on the current buffer
cat >"$WORK/probe.vim" <<'EOF'
" writes KEY VALUE lines to g:out: filetype, syntax groups, fold levels, errors
let s:r = ['ft ' . &filetype, 'syntax ' . get(b:, 'current_syntax', '-'), 'fdm ' . &foldmethod]
function! s:Syn(key, pat, sub, ...) abort
  " the group at the first match of pat (the last with a 4th argument), at
  " the start of sub within that line
  if a:0
    call cursor(line('$'), col([line('$'), '$']))
    let l:l = search(a:pat, 'bcW')
  else
    call cursor(1, 1)
    let l:l = search(a:pat, 'cW')
  endif
  if l:l == 0
    call add(s:r, a:key . ' -')
    return 0
  endif
  let l:c = match(getline(l:l), a:sub) + 1
  call add(s:r, a:key . ' ' . synIDattr(synID(l:l, l:c, 1), 'name') . ' ' . l:l . ':' . l:c)
  return l:l
endfunction
let s:n = s:Syn('nodekw', '\c^\s*node\s\+\S\+\s\+\S', '\cnode')
call s:Syn('nodetype', '\c^\s*node\s\+\S\+\s\+\S', '\c^\s*node\s\+\zs\S')
call s:Syn('list', '\c^\s*\%(verts\|faces\|keys\|tverts\|bones\|materials\)\s\+\d\+\s*$', '\S')
call s:Syn('number', '^\s\+-\=\d\+\%(\.\d\+\)\=\%(\s\|$\)', '\S')
call s:Syn('lastnumber', '^\s\+-\=\d\+\%(\.\d\+\)\=\%(\s\|$\)', '\S', 'last')
call s:Syn('comment', '^\s*#', '#')
call s:Syn('endnode', '\c^\s*endnode\>', '\S')
" fold level of the line after the first node header, and the deepest
call add(s:r, 'foldnode ' . (s:n > 0 ? foldlevel(s:n + 1) : -1))
call add(s:r, 'foldmax ' . max(map(range(1, line('$')), 'foldlevel(v:val)')))
call add(s:r, 'errmsg ' . v:errmsg)
for s:m in split(execute('messages'), "\n")
  if s:m =~# '^E\d\+:\|^Error\|^W\d\+:'
    call add(s:r, 'message ' . s:m)
  endif
endfor
call writefile(s:r, g:out)
EOF

# run_editor EDITOR FILE OUT: open FILE headless and write the probe's lines to OUT
run_editor() {
	rm -f "$3"
	timeout 120 "$1" -N -u NONE -i NONE -n -es --cmd "set rtp^=$RTP" \
		+'syntax on' +'filetype plugin on' +"let g:out = '$3'" +"edit $2" \
		+"source $WORK/probe.vim" +'qall!' </dev/null >"$3.stdout" 2>&1
}

# val OUT KEY: the value of KEY in the probe's output
val() { sed -n "s/^$2 //p" "$1" | head -n 1; }
group() { val "$1" "$2" | cut -d' ' -f1; }

check_editor() {
	ed=$1
	nfiles=0
	while IFS=$'\t' read -r name kind path; do
		out="$WORK/$ed.$(echo "$name" | tr '/:' '__').out"
		rc=0
		run_editor "$ed" "$path" "$out" || rc=$?
		[ -s "$out" ] || { lfs_fail "$ed $name: the probe wrote nothing (exit $rc): $(head -c 300 "$out.stdout")"; continue; }
		nfiles=$((nfiles + 1))
		[ "$rc" = 0 ] || lfs_fail "$ed $name: exit status $rc"
		[ -z "$(val "$out" errmsg)" ] || lfs_fail "$ed $name: v:errmsg $(val "$out" errmsg)"
		! grep -q '^message ' "$out" || lfs_fail "$ed $name: $(grep '^message ' "$out" | head -3)"
		ft=$(val "$out" ft)
		if [ "$kind" = none ]; then
			[ "$ft" != nwnmdl ] && [ "$ft" != legacyfs ] && lfs_ok "$ed $name: filetype '$ft' (not ours)" ||
				lfs_fail "$ed $name: filetype $ft, want none of ours"
			continue
		fi
		[ "$ft" = "$kind" ] && [ "$(val "$out" syntax)" = "$kind" ] || lfs_fail "$ed $name: filetype $ft syntax $(val "$out" syntax), want $kind"
		bad=""
		if [ "$kind" = nwnmdl ] && [ "$(wc -l <"$path")" -gt 20000 ]; then
			# too long to fold (g:nwnmdl_fold_max_lines): highlighted, not folded
			[ "$(val "$out" fdm)" != syntax ] || bad="$bad foldmethod=syntax"
			[ "$(group "$out" lastnumber)" = nwnmdlNumber ] || bad="$bad lastnumber=$(val "$out" lastnumber)"
			[ "$(group "$out" nodetype)" = nwnmdlNodeType ] || bad="$bad nodetype=$(val "$out" nodetype)"
			[ -z "$bad" ] && lfs_ok "$ed $name: $(wc -l <"$path") lines: not folded, highlighted to the end" ||
				lfs_fail "$ed $name:$bad"
			continue
		fi
		[ "$(val "$out" fdm)" = syntax ] || lfs_fail "$ed $name: foldmethod $(val "$out" fdm)"
		case $name in
		*.nad) # anim.txt: tracks and keys, no nodes
			[ "$(val "$out" foldmax)" -ge 1 ] || bad="$bad foldmax=$(val "$out" foldmax)"
			;;
		*)
			[ "$(group "$out" nodekw)" = nwnmdlNodeKw ] || bad="$bad nodekw=$(val "$out" nodekw)"
			[ "$(group "$out" nodetype)" = nwnmdlNodeType ] || bad="$bad nodetype=$(val "$out" nodetype)"
			[ "$(group "$out" endnode)" = nwnmdlStructure ] || bad="$bad endnode=$(val "$out" endnode)"
			[ "$(val "$out" foldnode)" -ge 1 ] || bad="$bad foldnode=$(val "$out" foldnode)"
			;;
		esac
		# a list keyword with a count: every view has one; some ASCII files
		# (an emitter-only model, a walkmesh with endlist lists) have none
		if grep -qiE '^[[:space:]]*(verts|faces|keys|tverts|bones|materials)[[:space:]]+[0-9]+[[:space:]]*$' "$path"; then
			[ "$(group "$out" list)" = nwnmdlList ] || bad="$bad list=$(val "$out" list)"
		else
			case $name in ascii:*) ;; *) bad="$bad no-list-line" ;; esac
		fi
		[ "$(group "$out" number)" = nwnmdlNumber ] || bad="$bad number=$(val "$out" number)"
		[ "$(group "$out" lastnumber)" = nwnmdlNumber ] || bad="$bad lastnumber=$(val "$out" lastnumber)"
		case $(val "$out" comment) in
		-|nwnmdlComment*) ;;
		*) bad="$bad comment=$(val "$out" comment)" ;;
		esac
		if [ -z "$bad" ]; then
			lfs_ok "$ed $name: ft $ft; node $(val "$out" nodekw | cut -d' ' -f2), list $(group "$out" list), number, fold levels up to $(val "$out" foldmax)"
		else
			lfs_fail "$ed $name:$bad"
		fi
	done <"$LIST"
	[ "$nfiles" -ge 22 ] || lfs_fail "$ed: only $nfiles files probed"
}

check_editor vim
if command -v nvim >/dev/null 2>&1; then
	check_editor nvim
else
	lfs_log "SKIP-PART: nvim not installed: vim only"
fi
lfs_finish
