#!/bin/bash
# contrib/completion from the source tree, with the built legacyfs-convert
# first in PATH (issue 26): after `legacyfs-convert cat MODEL <Tab>` (and
# apply/check MODEL) the shells offer MODEL's view paths and no file names
# of the current folder; with cat's -v, the operands are models (files).
# bash (legacyfs.bash, with bash-completion's helpers when installed), fish
# (legacyfs.fish, `complete -C`), zsh (_legacyfs, a real interactive zsh on
# a pseudo-terminal through zsh/zpty, the list printed by one Tab). Each
# shell that is not installed is skipped on its own; exit 77 when none is.
# Needs no FUSE.
. "$(dirname "$0")/lib.sh"
lfs_require_corpus
lfs_workdir completion
C="$LFS_SOURCE_ROOT/contrib/completion"
export PATH="$(dirname "$CONVERT"):$PATH"
bin=""
while read -r f; do
	if "$CONVERT" list "$LFS_CORPUS/nwn/$f" 2>/dev/null | cut -f2 >"$WORK/views" &&
		grep -q '^meshes/' "$WORK/views"; then
		bin="$LFS_CORPUS/nwn/$f"
		break
	fi
done <"$LFS_CORPUS/nwn/binary.txt"
[ -n "$bin" ] || lfs_die "no corpus model with meshes"
view=$(grep '^meshes/' "$WORK/views" | tail -1)
# a file in the current folder that must not be offered as a view
cd "$WORK"
touch zz_not_a_view.txt
shells=0

# want_views SHELL WHAT OUTPUT: OUTPUT has $view and model.mdl, no zz_ file
want_views() {
	if printf '%s\n' "$3" | grep -qF -- "$view" && printf '%s\n' "$3" | grep -q 'model\.mdl' &&
		! printf '%s\n' "$3" | grep -q zz_not_a_view; then
		lfs_ok "$1: $2 offers the views only"
	else
		lfs_fail "$1: $2: got $(printf '%s' "$3" | tr '\n' ' ' | cut -c1-400)"
	fi
}

# --- bash ---
bc=/dev/null
[ -f /usr/share/bash-completion/bash_completion ] && bc=/usr/share/bash-completion/bash_completion
bash_complete() {
	bash -c 'source "$1"; source "$2"; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_legacyfs_convert; printf "%s\n" "${COMPREPLY[@]}"' sh "$bc" "$C/legacyfs.bash" "$@"
}
shells=$((shells + 1))
want_views bash "cat MODEL <Tab>" "$(bash_complete legacyfs-convert cat "$bin" "")"
want_views bash "check MODEL <Tab>" "$(bash_complete legacyfs-convert check "$bin" "")"
out=$(bash_complete legacyfs-convert cat -v model.mdl "$bin" "")
printf '%s\n' "$out" | grep -q zz_not_a_view || lfs_fail "bash: cat -v VIEW MODEL <Tab> offers no files: $out"
printf '%s\n' "$(bash_complete legacyfs-convert ch)" | grep -qx check || lfs_fail "bash: no check subcommand"

# --- fish ---
if command -v fish >/dev/null 2>&1; then
	shells=$((shells + 1))
	fc() { fish -N -c "source '$C/legacyfs.fish'; complete -C '$1'" | cut -f1; }
	want_views fish "cat MODEL <Tab>" "$(fc "legacyfs-convert cat $bin ")"
	want_views fish "apply MODEL <Tab>" "$(fc "legacyfs-convert apply $bin ")"
	fc "legacyfs-convert cat -v model.mdl $bin " | grep -q zz_not_a_view ||
		lfs_fail "fish: cat -v VIEW MODEL <Tab> offers no files"
	fc "legacyfs-convert ch" | grep -qx check || lfs_fail "fish: no check subcommand"
	fc "legacyfs -o uid=0,thumb_s" | grep -qx 'uid=0,thumb_size=' || lfs_fail "fish: -o names after a comma"
	lfs_ok "fish: subcommands, -v, -o names"
else
	lfs_log "SKIP-PART: fish not installed"
fi

# --- zsh ---
if command -v zsh >/dev/null 2>&1 && zsh -fc 'zmodload zsh/zpty' 2>/dev/null; then
	shells=$((shells + 1))
	# zc LINE: what one Tab after LINE lists in an interactive zsh with
	# compinit and contrib/completion first in fpath
	zc() {
		# shellcheck disable=SC2016
		timeout 60 zsh -f -c '
			zmodload zsh/zpty
			zpty z zsh -f -i
			zpty -w z "PS1=; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; zstyle \":completion:*\" menu no; print -r READY"
			zpty -r -m z out "*READY*"
			zpty -w -n z "$2"$'"'"'\t'"'"'
			sleep 2
			out=""; while zpty -r -t z chunk; do out+=$chunk; done
			print -r -- "$out"
			zpty -d z' sh "$C" "$1" | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g'
	}
	want_views zsh "cat MODEL <Tab>" "$(zc "legacyfs-convert cat $bin ")"
	want_views zsh "check MODEL <Tab>" "$(zc "legacyfs-convert check $bin ")"
else
	lfs_log "SKIP-PART: zsh (with zsh/zpty) not installed"
fi
[ "$shells" -gt 0 ] || lfs_skip "no shell to complete in"
lfs_finish
