" Filetype plugin for legacyfs's NOD/NAD/SOD/NIL text views: the same as
" NWN ASCII models (ftplugin/nwnmdl.vim).
runtime! ftplugin/nwnmdl.vim
