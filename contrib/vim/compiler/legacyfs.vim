" :compiler legacyfs — :make runs `legacyfs-convert check MODEL VIEW %`
" (docs/vim.md "Errors"): MODEL and VIEW are b:legacyfs_model and
" b:legacyfs_view, else found from the legacyfs mount the file is in.
" :make checks the file as saved; :LegacyfsCheck checks the buffer.
if exists('current_compiler')
  finish
endif
let current_compiler = 'legacyfs'
if exists(':CompilerSet') != 2
  command -nargs=* CompilerSet setlocal <args>
endif
let s:loc = legacyfs#locate(expand('%:p'))
let s:model = get(b:, 'legacyfs_model', get(s:loc, 'model', 'MODEL'))
let s:view = get(b:, 'legacyfs_view', get(s:loc, 'view', expand('%:t')))
execute 'CompilerSet makeprg=' . escape(get(g:, 'legacyfs_convert', 'legacyfs-convert')
      \ . ' check ' . shellescape(s:model) . ' ' . shellescape(s:view) . ' %:S', ' \|"')
execute 'CompilerSet errorformat=' . escape(legacyfs#errorformat(), ' \|"')
unlet s:loc s:model s:view
