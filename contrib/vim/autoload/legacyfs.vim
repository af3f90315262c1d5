" legacyfs errors in Vim and Neovim (docs/vim.md "Errors"): where a file of
" a legacyfs mount comes from, the quickfix list of a refused save, and
" `legacyfs-convert check` of a buffer.

" The legacyfs mounts: [[mountpoint, SOURCE], ...] from /proc/self/mounts
" (type fuse.legacyfs; the daemon sets fsname=SOURCE), longest mountpoint
" first. [] where there is no /proc.
function! legacyfs#mounts() abort
  if !filereadable('/proc/self/mounts')
    return []
  endif
  let l:res = []
  for l:line in readfile('/proc/self/mounts')
    let l:f = split(l:line, ' ')
    if len(l:f) >= 3 && l:f[2] ==# 'fuse.legacyfs'
      " octal escapes of /proc/mounts: \040 space, \011 tab, \012, \134
      let l:un = map(l:f[0:1], {_, s -> substitute(s, '\\\(\o\o\o\)',
            \ '\=nr2char(str2nr(submatch(1), 8))', 'g')})
      call add(l:res, [l:un[1], l:un[0]])
    endif
  endfor
  return sort(l:res, {a, b -> len(b[0]) - len(a[0])})
endfunction

" Where the file @path of a mount comes from: {'mount', 'source', 'model'
" (the model file in SOURCE), 'folder' (the model folder in the mount),
" 'view' (the view path inside it)}, or {} when @path is not a view of a
" mounted model. The model folder is the first folder of the path that is a
" regular file in SOURCE.
function! legacyfs#locate(path) abort
  let l:p = fnamemodify(a:path, ':p')
  for [l:mnt, l:src] in legacyfs#mounts()
    if l:p[: len(l:mnt)] !=# l:mnt . '/'
      continue
    endif
    let l:parts = split(l:p[len(l:mnt) + 1 :], '/')
    let l:rel = ''
    for l:i in range(len(l:parts) - 1)
      let l:rel .= (l:i ? '/' : '') . l:parts[l:i]
      let l:model = l:src . '/' . l:rel
      if filereadable(l:model) && !isdirectory(l:model)
        return {'mount': l:mnt, 'source': l:src, 'model': l:model,
              \ 'folder': l:mnt . '/' . l:rel, 'view': join(l:parts[l:i + 1 :], '/')}
      endif
    endfor
    return {}
  endfor
  return {}
endfunction

" The errorformat of legacyfs messages (gcc's: FILE:LINE:COL: error: MSG).
let s:efm = '%f:%l:%c: %trror: %m,%f:%l:%c: %tarning: %m,%f:%l:%c: %m,'
      \ . '%f:%l: %trror: %m,%f: %trror: %m,%f: %tote: %m,%-G%.%#'

function! legacyfs#errorformat() abort
  return s:efm
endfunction

" Load @lines (legacyfs messages naming view paths relative to @folder) into
" the quickfix list, the names made absolute; returns the number of errors.
function! s:load_qf(lines, folder, title) abort
  let l:lines = map(copy(a:lines), {_, l -> l =~# '^[^/:][^:]*:'
        \ ? a:folder . '/' . l : l})
  call setqflist([], ' ', {'lines': l:lines, 'efm': s:efm, 'title': a:title})
  return len(filter(getqflist(), {_, e -> e.valid && e.type ==? 'e'}))
endfunction

" Show the first error of the quickfix list and put the cursor on it.
function! s:show_first() abort
  let l:errs = filter(getqflist(), {_, e -> e.valid && e.type ==? 'e'})
  if empty(l:errs)
    return
  endif
  " the buffer's own first (errors.txt also keeps other views' messages)
  let l:mine = filter(copy(l:errs), {_, e -> e.bufnr == bufnr('%')})
  let l:e = empty(l:mine) ? l:errs[0] : l:mine[0]
  if l:e.bufnr == bufnr('%') && l:e.lnum > 0
    call cursor(l:e.lnum, max([l:e.col, 1]))
  endif
  let v:errmsg = 'legacyfs: line ' . l:e.lnum . ' col ' . l:e.col . ': ' . l:e.text
  echohl ErrorMsg | echomsg v:errmsg | echohl None
endfunction

" BufWriteCmd of a view in a mount: the write as Vim does it (with the
" BufWritePre and BufWritePost autocommands); when it fails,
" the model folder's errors.txt into the quickfix list and the first message
" shown, the error raised again (so :w still fails, 'modified' stays).
function! legacyfs#write(bang) abort
  let l:file = expand('<afile>:p')
  let l:cmd = 'noautocmd write' . (a:bang ? '!' : '')
  if l:file !=# expand('%:p')
    let l:cmd .= ' ' . fnameescape(l:file)
  endif
  " the user's BufWritePre/BufWritePost autocommands (formatters, ...) still
  " run around the write, as for any other file
  execute 'doautocmd <nomodeline> BufWritePre ' . fnameescape(l:file)
  try
    execute l:cmd
    execute 'doautocmd <nomodeline> BufWritePost ' . fnameescape(l:file)
  catch /E667\|E212\|E512\|E514\|E513/
    " a write the mount refused (fsync, open, close or write failed):
    " not E45 'readonly' or other refusals by Vim itself
    let l:loc = legacyfs#locate(l:file)
    let l:errs = empty(l:loc) ? '' : l:loc.folder . '/errors.txt'
    if l:errs !=# '' && filereadable(l:errs)
          \ && s:load_qf(readfile(l:errs), l:loc.folder, 'legacyfs: ' . l:loc.view) > 0
      call s:show_first()
      let b:legacyfs_write_error = v:errmsg
      echoerr v:errmsg . ' (' . v:exception . '; :copen lists errors.txt)'
    else
      echoerr v:exception
    endif
  endtry
endfunction

" :LegacyfsCheck: the buffer's text through `legacyfs-convert check MODEL
" VIEW FILE` (nothing written), messages into the quickfix list, the first
" error shown. MODEL and VIEW: b:legacyfs_model / b:legacyfs_view, else
" from the mount the file is in. Returns the number of errors.
function! legacyfs#check() abort
  let l:model = get(b:, 'legacyfs_model', '')
  let l:view = get(b:, 'legacyfs_view', '')
  if l:model ==# '' || l:view ==# ''
    let l:loc = legacyfs#locate(expand('%:p'))
    if empty(l:loc)
      echoerr 'legacyfs: not a view in a legacyfs mount: set b:legacyfs_model and b:legacyfs_view'
      return -1
    endif
    let l:model = l:loc.model
    let l:view = l:loc.view
  endif
  let l:tmp = tempname()
  call writefile(getline(1, '$'), l:tmp)
  let l:out = systemlist(get(g:, 'legacyfs_convert', 'legacyfs-convert') . ' check '
        \ . shellescape(l:model) . ' ' . shellescape(l:view) . ' ' . shellescape(l:tmp))
  call delete(l:tmp)
  let l:name = expand('%:p')
  call map(l:out, {_, l -> stridx(l, l:tmp . ':') == 0 ? l:name . l[len(l:tmp) :] : l})
  call setqflist([], ' ', {'lines': l:out, 'efm': s:efm, 'title': 'legacyfs check ' . l:view})
  let l:n = len(filter(getqflist(), {_, e -> e.valid && e.type ==? 'e'}))
  if l:n
    call s:show_first()
  elseif v:shell_error == 0
    echomsg 'legacyfs: ' . l:view . ': the save would land'
  endif
  return l:n
endfunction
