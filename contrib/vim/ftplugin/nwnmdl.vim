" Filetype plugin for NWN ASCII models and legacyfs text views (docs/vim.md):
" '#' comments and one fold per node (syntax folding, syntax/nwnmdl.vim).
" let g:nwnmdl_no_fold = 1 in your vimrc keeps your own 'foldmethod'.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal comments=:# commentstring=#\ %s
setlocal formatoptions-=t
let b:undo_ftplugin = 'setlocal comments< commentstring< formatoptions<'
" Syntax folding parses the whole file: about 0.7 s for 10 000 lines
" (docs/vim.md). Longer files are not folded (the limit:
" g:nwnmdl_fold_max_lines, default 20000).
if !get(g:, 'nwnmdl_no_fold', 0)
      \ && line('$') <= get(g:, 'nwnmdl_fold_max_lines', 20000)
  " folds per node, newanim ... doneanim, track, material, group, channel;
  " open when the file is opened unless 'foldlevelstart' says otherwise
  setlocal foldmethod=syntax
  if &foldlevelstart < 0
    setlocal foldlevel=99
  endif
  let b:undo_ftplugin .= ' foldmethod< foldlevel<'
endif
