# shellcheck shell=bash disable=SC2207  # compgen output split into words, as bash-completion does
# bash completion for legacyfs(1) and legacyfs-convert(1).
# Installed as .../bash-completion/completions/legacyfs, with
# legacyfs-convert a symbolic link to it (bash-completion loads a file by
# the command's name). Without bash-completion: `source` this file.
#
# legacyfs: options, -o option names (after a comma too), folders.
# legacyfs-convert: subcommands, each one's options, option values, files,
# and VIEWPATHs (after `cat MODEL`, `apply MODEL`, `check MODEL`, `-v`)
# from `legacyfs-convert list MODEL`: after `cat MODEL` only those (a
# second model goes through `cat MODEL...` with -v, or is typed out).

# _lfs_words: cur, prev, words, cword of the word being completed; '=' and
# ':' do not split words (-o uid=1,gid=2; --respath a:b).
_lfs_words() {
	if declare -F _get_comp_words_by_ref >/dev/null; then
		_get_comp_words_by_ref -n =: cur prev words cword
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi
}

_legacyfs() {
	local cur prev words cword
	_lfs_words
	local opts="timeout= nowatch cache_size= cache_entries= max_model_size=
		list_classify= model_memory= mt st kernel_open follow_cpu= poll_us=
		unlink_grace= scratch_ttl= edit_size= thumb_size= thumb_cache= nothumb_cache
		thumb_cache_size= respath= uid= gid= umask= ro rw debug clone_fd
		max_idle_threads= max_threads= allow_other allow_root auto_unmount"
	if [ "$prev" = -o ]; then
		# complete the name after the last comma
		local head="" word=$cur
		case $cur in *,*) head=${cur%,*},; word=${cur##*,} ;; esac
		COMPREPLY=($(compgen -P "$head" -W "$opts" -- "$word"))
		compopt -o nospace 2>/dev/null
		return 0
	fi
	case $cur in
	-*)
		COMPREPLY=($(compgen -W "-o -f -d -s -h --help -V --version" -- "$cur"))
		return 0 ;;
	esac
	COMPREPLY=($(compgen -d -- "$cur"))
	compopt -o filenames 2>/dev/null
	return 0
}

# _lfs_viewpaths MODEL CUR: the views of MODEL starting with CUR.
_lfs_viewpaths() {
	local model=${1/#\~/$HOME}
	[ -f "$model" ] || return 0
	local IFS=$'\n'
	COMPREPLY+=($(compgen -W "$(legacyfs-convert list "$model" 2>/dev/null | cut -f2-)" -- "$2"))
}

_legacyfs_convert() {
	local cur prev words cword
	_lfs_words
	local cmds="list cat extract apply check compile thumbnail pack unpack"
	if [ "$cword" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return 0
	fi
	local cmd=${words[1]}
	case $prev in
	-d|--dest|--root|--respath)
		COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return 0 ;;
	-s|--size|--thumb-size)
		COMPREPLY=($(compgen -W "128 256 512 1024" -- "$cur")); return 0 ;;
	--type)
		COMPREPLY=($(compgen -W "HAK ERF MOD SAV NWM" -- "$cur")); return 0 ;;
	--erf-version)
		COMPREPLY=($(compgen -W "V1.0 E1.0" -- "$cur")); return 0 ;;
	-j|--jobs|--max-size)
		return 0 ;;
	-v|--view)
		# the views of the first MODEL on the line
		local i w
		for ((i = 2; i < ${#words[@]}; i++)); do
			[ "$i" -eq "$cword" ] && continue
			w=${words[i]}
			case ${words[i - 1]} in -v|--view|-d|--dest|--root|--respath|-s|--size|--thumb-size|-j|--jobs|--max-size|-o) continue ;; esac
			case $w in -*) continue ;; esac
			_lfs_viewpaths "$w" "$cur"
			return 0
		done
		return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		local o="--help"
		case $cmd in
		list|unpack) o="--root --max-size" ;;
		cat) o="--root --max-size -v --view -j --jobs -q --quiet --thumb-size --respath" ;;
		extract) o="--root --max-size -d --dest -j --jobs -q --quiet --thumb-size --respath" ;;
		apply) o="--max-size -o" ;;
		check) o="--max-size" ;;
		compile) o="--max-size -o -d --dest -j --jobs -q --quiet" ;;
		thumbnail) o="-s --size --root --respath -d --dest -j --jobs -q --quiet --max-size" ;;
		pack) o="--type --erf-version" ;;
		esac
		COMPREPLY=($(compgen -W "$o" -- "$cur"))
		return 0
	fi
	# operands before the current word (options and their values left out)
	local ops=() i
	for ((i = 2; i < cword; i++)); do
		case ${words[i]} in
		-v|--view|-d|--dest|--root|--respath|-s|--size|--thumb-size|-j|--jobs|--max-size|-o|--type|--erf-version) i=$((i + 1)) ;;
		-*) ;;
		*) ops+=("${words[i]}") ;;
		esac
	done
	# `cat MODEL VIEWPATH`, `apply|check MODEL VIEWPATH ...`: the views of
	# MODEL only (with -v, cat's operands are all models: files)
	COMPREPLY=()
	local views=
	if [ "${#ops[@]}" -eq 1 ]; then
		case $cmd in
		cat)
			views=1
			for ((i = 2; i < cword; i++)); do
				case ${words[i]} in -v|--view|--view=*|-v?*) views= ;; esac
			done ;;
		apply|check) views=1 ;;
		esac
	fi
	if [ -n "$views" ]; then
		_lfs_viewpaths "${ops[0]}" "$cur"
	else
		COMPREPLY+=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
	fi
	return 0
}

complete -F _legacyfs legacyfs
complete -F _legacyfs_convert legacyfs-convert
