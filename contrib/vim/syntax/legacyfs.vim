" Syntax for legacyfs's text views of NOD, SOD and NIL models (model.txt)
" and NAD animations (anim.txt): the MDL-style rules of syntax/nwnmdl.vim,
" which knows these dialects' keywords too (docs/vim.md).
if exists('b:current_syntax')
  finish
endif
runtime! syntax/nwnmdl.vim
let b:current_syntax = 'legacyfs'
