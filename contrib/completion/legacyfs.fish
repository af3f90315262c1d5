# fish completion for legacyfs(1) and legacyfs-convert(1), the same as the
# bash one (legacyfs.bash): options, -o names, subcommands, and after
# `cat MODEL`, `apply MODEL`, `check MODEL` or `-v` only the view paths of
# MODEL from `legacyfs-convert list MODEL`. Installed into fish's
# vendor_completions.d as legacyfs.fish and legacyfs-convert.fish (fish
# loads a file by the command's name); from a checkout: `source` it.

# --- legacyfs ---
complete -c legacyfs -s o -x -d 'mount options' -a '(
    set -l tok (commandline -ct); set -l head (string replace -r "[^,]*\$" "" -- $tok)
    for o in timeout= nowatch cache_size= cache_entries= max_model_size= list_classify= \
        model_memory= mt st kernel_open follow_cpu= poll_us= unlink_grace= scratch_ttl= edit_size= \
        thumb_size= thumb_cache= nothumb_cache thumb_cache_size= respath= uid= gid= umask= \
        ro rw debug clone_fd max_idle_threads= max_threads= allow_other allow_root auto_unmount
        echo $head$o
    end)'
complete -c legacyfs -s f -d 'stay in the foreground'
complete -c legacyfs -s d -d 'debug output'
complete -c legacyfs -s s -d 'one thread'
complete -c legacyfs -s h -l help -d help
complete -c legacyfs -s V -l version -d version
complete -c legacyfs -a '(__fish_complete_directories)'

# --- legacyfs-convert ---
# The operands of the command line before the current token (options and
# their values left out), the subcommand first.
function __lfs_operands
    set -l toks (commandline -opc)
    set -e toks[1]
    set -l skip 0
    for t in $toks
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case -v --view -d --dest --root --respath -s --size --thumb-size -j --jobs --max-size -o --type --erf-version
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end

# Is cat's -v on the line?
function __lfs_has_view_opt
    for t in (commandline -opc)
        switch $t
            case -v --view '--view=*' '-v?*'
                return 0
        end
    end
    return 1
end

# True when the current token is a VIEWPATH: `cat MODEL _` (no -v),
# `apply|check MODEL _`.
function __lfs_wants_view
    set -l ops (__lfs_operands)
    test (count $ops) -eq 2; or return 1
    switch $ops[1]
        case apply check
            return 0
        case cat
            not __lfs_has_view_opt
            return
    end
    return 1
end

# The view paths of the command line's MODEL.
function __lfs_views
    set -l ops (__lfs_operands)
    set -l model $ops[2]
    test -f "$model"; or return
    legacyfs-convert list $model 2>/dev/null | cut -f2-
end

# The views of the first MODEL, for -v.
function __lfs_views_v
    set -l ops (__lfs_operands)
    test (count $ops) -ge 2; or return
    test -f "$ops[2]"; or return
    legacyfs-convert list $ops[2] 2>/dev/null | cut -f2-
end

set -l lfs_cmds list cat extract apply check compile thumbnail pack unpack
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a list -d 'one line per view'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a cat -d 'a view to stdout'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a extract -d 'every view to a folder'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a apply -d 'edited view -> new model file'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a check -d 'messages of a save, nothing written'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a compile -d 'NWN ASCII -> binary'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a thumbnail -d 'the thumbnail PNG'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a pack -d 'write an NWN archive'
complete -c legacyfs-convert -f -n "not __fish_seen_subcommand_from $lfs_cmds" -a unpack -d 'resources of an archive'
complete -c legacyfs-convert -l help -d help
complete -c legacyfs-convert -l version -d version
# VIEWPATH after MODEL: the views only, no file names
complete -c legacyfs-convert -f -n __lfs_wants_view -a '(__lfs_views)' -d view
# anything else past the subcommand: files
complete -c legacyfs-convert -F -n "__fish_seen_subcommand_from $lfs_cmds; and not __lfs_wants_view"
complete -c legacyfs-convert -s v -l view -x -a '(__lfs_views_v)' -d 'the view cat writes for each MODEL'
complete -c legacyfs-convert -s d -l dest -x -a '(__fish_complete_directories)' -d 'batch: output folder'
complete -c legacyfs-convert -l root -x -a '(__fish_complete_directories)' -d 'the mount SOURCE folder'
complete -c legacyfs-convert -l respath -x -a '(__fish_complete_directories)' -d 'texture folders'
complete -c legacyfs-convert -s s -l size -x -a '128 256 512 1024' -d 'thumbnail edge'
complete -c legacyfs-convert -l thumb-size -x -a '0 128 256 512 1024' -d 'thumbnail.png edge'
complete -c legacyfs-convert -l type -x -a 'HAK ERF MOD SAV NWM' -d 'pack: archive type'
complete -c legacyfs-convert -l erf-version -x -a 'V1.0 E1.0' -d 'pack: ERF version'
complete -c legacyfs-convert -s j -l jobs -x -d 'models at a time'
complete -c legacyfs-convert -l max-size -x -d 'MiB; larger files are not decoded'
complete -c legacyfs-convert -s o -l output -r -d 'the file to write'
complete -c legacyfs-convert -s q -l quiet -d 'no progress line'
