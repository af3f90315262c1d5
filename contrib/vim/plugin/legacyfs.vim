" legacyfs errors where you edit (docs/vim.md "Errors"): a :w of a view in a
" legacyfs mount that the mount refuses loads the model folder's errors.txt
" into the quickfix list and shows the first message, with the cursor on its
" line; :LegacyfsCheck lints the buffer through `legacyfs-convert check`.
if exists('g:loaded_legacyfs') || &compatible
  finish
endif
let g:loaded_legacyfs = 1

command! -bar LegacyfsCheck call legacyfs#check()

" Is the file of buffer @buf a view in a legacyfs mount? (decided once)
function! s:in_mount(buf) abort
  let l:v = getbufvar(a:buf, 'legacyfs_loc', 0)
  if type(l:v) != v:t_dict
    let l:v = legacyfs#locate(fnamemodify(bufname(a:buf), ':p'))
    call setbufvar(a:buf, 'legacyfs_loc', l:v)
  endif
  return !empty(l:v)
endfunction

" The write of buffer @buf through legacyfs#write() when it is a view in a
" mount (once per buffer: re-reading the file does not add a second one).
function! s:arm(buf) abort
  execute 'autocmd! legacyfs_write BufWriteCmd <buffer=' . a:buf . '>'
  call setbufvar(a:buf, 'legacyfs_loc', 0)
  if s:in_mount(a:buf)
    execute 'autocmd legacyfs_write BufWriteCmd <buffer=' . a:buf
          \ . '> call legacyfs#write(v:cmdbang)'
  endif
endfunction

augroup legacyfs_write
  autocmd!
  " only files in a mount: everything else is written by Vim as always
  autocmd BufReadPost,BufNewFile * call s:arm(+expand('<abuf>'))
augroup END
