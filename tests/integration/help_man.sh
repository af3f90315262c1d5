#!/bin/bash
# The options of `--help` and of the man page are the same set, for both
# programs (issue 14): every option --help names is defined in the OPTIONS
# of docs/man/<program>.1.scd, and every option defined there is in --help.
# An option is `-o NAME` (legacyfs's -o names), `-X` or `--long`; in --help
# any mention counts, in the man source the definition lines (`*-...`) of
# the OPTIONS section. Fails naming what one side lacks.
. "$(dirname "$0")/lib.sh"
lfs_workdir help_man

# options TEXT-FILE PROGRAM: one option per line, sorted, unique; `-o NAME`
# is legacyfs's option NAME, for legacyfs-convert only `-o` (its -o OUT; the
# mount's -o names in its text are references)
options() {
	sed -e 's/[*\\]//g' "$1" |
		grep -oE -- '(^|[][ ,(|/])(-o [a-z_]+|--?[a-zA-Z][a-zA-Z0-9-]*)' |
		sed -E 's/^[][ ,(|/]//; s/^-o /-o:/' |
		if [ "$2" = legacyfs ]; then cat; else sed 's/^-o:.*/-o/'; fi | sort -u
}
# man_defs SCD: the definition lines of its OPTIONS section
man_defs() {
	awk '/^# /{ in_opts = ($0 == "# OPTIONS") } in_opts && /^\*-/' "$1"
}

check() { # PROGRAM SCD
	prog=$1
	"$LFS_BUILD_ROOT/src/$prog" --help >"$WORK/$prog.help" 2>&1 || true
	[ -s "$WORK/$prog.help" ] || lfs_die "$prog --help printed nothing"
	options "$WORK/$prog.help" "$prog" >"$WORK/$prog.help.opts"
	man_defs "$2" >"$WORK/$prog.defs"
	options "$WORK/$prog.defs" "$prog" >"$WORK/$prog.man.opts"
	n=$(wc -l <"$WORK/$prog.help.opts")
	[ "$n" -ge 5 ] || lfs_die "$prog: only $n options parsed from --help"
	only_help=$(comm -23 "$WORK/$prog.help.opts" "$WORK/$prog.man.opts" | tr '\n' ' ')
	only_man=$(comm -13 "$WORK/$prog.help.opts" "$WORK/$prog.man.opts" | tr '\n' ' ')
	[ -z "$only_help" ] || lfs_fail "$prog: in --help, not in $(basename "$2"): $only_help"
	[ -z "$only_man" ] || lfs_fail "$prog: in $(basename "$2"), not in --help: $only_man"
	if [ -z "$only_help$only_man" ]; then
		lfs_ok "$prog: the $n options of --help are those of $(basename "$2")"
	fi
}
check legacyfs "$LFS_SOURCE_ROOT/docs/man/legacyfs.1.scd"
check legacyfs-convert "$LFS_SOURCE_ROOT/docs/man/legacyfs-convert.1.scd"
lfs_finish
