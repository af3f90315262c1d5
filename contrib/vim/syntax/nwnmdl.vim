" Vim syntax file
" Language:    Neverwinter Nights ASCII model (MDL), and the MDL-style text
"              views legacyfs shows for NOD, NAD, SOD and NIL (docs/vim.md)
" Maintainer:  legacyfs (contrib/vim/)
"
" One line, one field: a keyword, then values (numbers, names). Lists
" (verts, faces, tverts, weights, controller keys, ...) are a keyword with a
" count (legacyfs views, NWN binaries) or closed by endlist (NWN ASCII),
" then one row of numbers per line. Blocks: node ... endnode, newanim ...
" doneanim, beginmodelgeom ... endmodelgeom (NWN), track ... endtrack (NAD),
" material ... endmaterial, group ... endgroup, channel ... endchannel,
" reference ... endreference (SOD). Each block is a fold.
if exists('b:current_syntax')
  finish
endif
let s:cpo_save = &cpo
set cpo&vim

" NWN ASCII is read without regard to case (Parent, #MAXMODEL, ...)
syntax case ignore

" Any field: the first word of a line. The rules below override it for the
" words they know (keywords win over matches at the same place).
syntax match nwnmdlField /^\s*\zs\h[[:alnum:]_.-]*/

" Numbers stand alone between blanks: bone0, Box01 or hex bytes are no
" numbers. inf and nan appear in NAD keys.
syntax match nwnmdlNumber
      \ /\%(^\|\s\)\@1<=[-+]\=\%(\d\+\.\=\d*\|\.\d\+\)\%(e[-+]\=\d\+\)\=\%(\s\|$\)\@=/
syntax match nwnmdlNumber /\%(^\|\s\)\@1<=[-+]\=\%(inf\|nan\)\%(\s\|$\)\@=/

" Quoted names (NIL material names, with backslash escapes)
syntax region nwnmdlString start=/"/ skip=/\\./ end=/"/ oneline

" Comments: '#' at the start of a word, to the end of the line; legacyfs's
" own annotations (#part-number ...) are comments to the game's tools too.
syntax match nwnmdlComment /\%(^\|\s\)\@1<=#.*$/ contains=nwnmdlTodo,@Spell
syntax keyword nwnmdlTodo contained TODO FIXME XXX NOTE

" Node header: node TYPE NAME
syntax match nwnmdlNodeKw /^\s*\zsnode\>/ nextgroup=nwnmdlNodeType skipwhite
syntax match nwnmdlNodeType /\S\+/ contained nextgroup=nwnmdlNodeName skipwhite
syntax match nwnmdlNodeName /\S\+/ contained

" Block keywords (the structure of the file); the words that open a fold
" are highlighted by the fold regions below
syntax keyword nwnmdlStructure endnode newmodel donemodel endmodelgeom
      \ doneanim endlist endtrack endmaterial endgroup endchannel endreference

" Fields whose value names another model, node, texture or material
syntax keyword nwnmdlRefField parent setsupermodel refmodel bitmap texture
      \ texture0 texture1 texture2 texture3 filedependancy filedependency
      \ animroot borgtexture bumptexture texturematerial
      \ nextgroup=nwnmdlResRef skipwhite
syntax match nwnmdlResRef /[^[:space:]#"]\+/ contained

" Model-level fields
syntax keyword nwnmdlModelField classification setanimationscale
      \ nodversion modelflags boundsmin boundsmax magic version layout
      \ duration flags globallight trailer tail

" Lists: a keyword, a count (or endlist), rows of numbers
syntax keyword nwnmdlList verts faces tverts tverts1 tverts2 tverts3
      \ normals colors weights constraints aabb tangents texindices0
      \ texindices1 texindices2 texindices3 animverts animtverts
      \ bones materials meshes groups tracks keys tags events sectors
      \ sectorplanes surfaceplanes bspnodes wedges event

" Controllers: NWN's animatable node properties, and their key lists
syntax keyword nwnmdlController position orientation scale alpha
      \ selfillumcolor color radius multiplier shadowradius verticaldisplacement
      \ wirecolor birthrate lifeexp velocity randvel alphastart alphaend
      \ colorstart colorend sizestart sizeend sizestart_y sizeend_y framestart
      \ frameend xsize ysize spread mass fps drag grav threshold bounce_co
      \ blurlength particlerot lightningdelay lightningradius lightningscale
      \ lightningsubdiv detonate combinetime p2p_bezier2 p2p_bezier3
      \ resttranslate restinverse right up front
syntax match nwnmdlController
      \ /^\s*\zs\h\w\{-}\%(bezier\)\=key\%(\s\|$\)\@=/

" NWN node types (also matched after 'node' as nwnmdlNodeType) and the
" classification values, for a field's value
syntax keyword nwnmdlValue character effect tile door item gui
      \ placeable other NULL

" Folds: one per block. A node's endnode ends blocks left open inside it.
" The node region starts before 'node' so that nwnmdlNodeKw, and through it
" nwnmdlNodeType and nwnmdlNodeName, match its first line.
syntax region nwnmdlNodeFold start=/^\s*node\s/ end=/^\s*endnode\>/
      \ transparent fold keepend
syntax region nwnmdlAnimFold matchgroup=nwnmdlStructure
      \ start=/^\s*\zsnewanim\>/ end=/^\s*\zsdoneanim\>/ transparent fold
syntax region nwnmdlGeomFold matchgroup=nwnmdlStructure
      \ start=/^\s*\zsbeginmodelgeom\>/ end=/^\s*\zsendmodelgeom\>/
      \ transparent fold
syntax region nwnmdlTrackFold matchgroup=nwnmdlStructure
      \ start=/^\s*\zstrack\>/ end=/^\s*\zsendtrack\>/ transparent fold
" material and reference open a block at the left margin (SOD); indented,
" they are fields (NOD meshgroup)
syntax region nwnmdlMaterialFold matchgroup=nwnmdlStructure
      \ start=/^material\>/ end=/^\s*\zsendmaterial\>/ transparent fold
syntax region nwnmdlGroupFold matchgroup=nwnmdlStructure
      \ start=/^\s*\zsgroup\>/ end=/^\s*\zsendgroup\>/ transparent fold
syntax region nwnmdlChannelFold matchgroup=nwnmdlStructure
      \ start=/^\s*\zschannel\>/ end=/^\s*\zsendchannel\>/ transparent fold
syntax region nwnmdlReferenceFold matchgroup=nwnmdlStructure
      \ start=/^reference\>/ end=/^\s*\zsendreference\>/ transparent fold

" Highlighting is line by line; only the folds need the blocks, and those
" span whole files: parse from the top so folds are right anywhere, unless
" the file is too long to fold (ftplugin/nwnmdl.vim: g:nwnmdl_fold_max_lines)
if line('$') <= get(g:, 'nwnmdl_fold_max_lines', 20000)
  syntax sync fromstart
else
  syntax sync minlines=10 maxlines=50
endif

highlight default link nwnmdlComment Comment
highlight default link nwnmdlTodo Todo
highlight default link nwnmdlNumber Number
highlight default link nwnmdlString String
highlight default link nwnmdlResRef String
highlight default link nwnmdlNodeKw Structure
highlight default link nwnmdlStructure Structure
highlight default link nwnmdlNodeType Type
highlight default link nwnmdlNodeName Function
highlight default link nwnmdlList Keyword
highlight default link nwnmdlController Identifier
highlight default link nwnmdlRefField Statement
highlight default link nwnmdlModelField Statement
highlight default link nwnmdlField Statement
highlight default link nwnmdlValue Constant

let b:current_syntax = 'nwnmdl'
let &cpo = s:cpo_save
unlet s:cpo_save
