" Filetype detection for Neverwinter Nights ASCII models and the text views
" legacyfs shows for models (docs/vim.md).
"
" nwnmdl:   NWN ASCII .mdl (and the walkmeshes .pwk .dwk .wok) whose first
"           lines are text with a model keyword; legacyfs's model.mdl view
"           of a binary MDL is one. A binary .mdl (first dword zero: NUL
"           bytes in the first line) is left alone.
" legacyfs: legacyfs's text views of NOD, SOD and NIL models (model.txt) and
"           NAD animations (anim.txt): a first line "# legacyfs..." (the
"           header legacyfs-convert cat and a mount write).

function! s:LegacyfsDetectModel() abort
  let l:first = getline(1)
  " a NUL reads as a newline in the buffer: a binary file
  if l:first =~# "\n"
    return
  endif
  let l:n = min([line('$'), 40])
  for l:line in getline(1, l:n)
    if l:line =~? '^\s*\%(#MAXMODEL\|newmodel\|beginmodelgeom\|filedependancy\|node\s\+\h\)'
      set filetype=nwnmdl
      return
    endif
  endfor
endfunction

augroup legacyfs_ftdetect
  autocmd!
  autocmd BufNewFile *.mdl,*.MDL setfiletype nwnmdl
  autocmd BufRead *.mdl,*.MDL,*.pwk,*.PWK,*.dwk,*.DWK,*.wok,*.WOK
        \ call s:LegacyfsDetectModel()
  autocmd BufRead *.txt,*.TXT
        \ if getline(1) =~# '^# legacyfs[: ]' | set filetype=legacyfs | endif
  " a view saved under another name (legacyfs-convert cat X.nod >X.text)
  autocmd BufRead *
        \ if !did_filetype() && getline(1) =~# '^# legacyfs[: ]'
        \ | setfiletype legacyfs | endif
augroup END
