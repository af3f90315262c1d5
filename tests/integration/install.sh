#!/bin/bash
# shellcheck disable=SC2016  # in_ns scripts expand in the namespace shell
# `meson install` into a prefix, then use what was installed as a user would
# (issue 14, docs/install.md): a second build of this source tree with
# --prefix=$WORK/prefix (-Dtests=false, buildtype plain: a few seconds), then
# - man -l renders both man pages without a warning, and legacyfs(1) names
#   every option of the installed `legacyfs --help`;
# - the thumbnailer entry's Exec= program is the installed one, and its
#   command line (%s %i %o filled in) draws a PNG of a corpus model;
# - mount(8): `mount -t fuse.legacyfs SRC MNT` and an fstab line through
#   `mount -T FSTAB MNT` start the installed legacyfs (mount(8) runs helpers
#   with no PATH, so mount.fuse3 finds legacyfs only in sh's default path:
#   done in a private mount namespace with PREFIX/bin bound on /usr/local/bin,
#   i.e. a /usr/local install), /proc/mounts says fuse.legacyfs, a view reads;
#   the `legacyfs#SRC` form with the absolute program path; the mount.legacyfs
#   helper called as mount(8) calls it (with an empty environment);
# - bash completion: a subcommand, an option, a -o name, a VIEWPATH of a
#   corpus model from `legacyfs-convert list`;
# - docs, README and the systemd unit are in place; the unit's ExecStart is
#   the installed legacyfs; `systemd-analyze verify` accepts it;
# - git: the installed gitconfig/gitattributes and legacyfs-textconv make
#   `git diff` of two commits of a binary model show the changed line;
# - Vim with the installed vimfiles on 'runtimepath' detects model text.
. "$(dirname "$0")/lib.sh"
lfs_require_corpus
lfs_workdir install
command -v scdoc >/dev/null 2>&1 || lfs_skip "scdoc not installed (scripts/deps.sh): no man pages to check"
command -v man >/dev/null 2>&1 || lfs_skip "man (man-db) not installed (scripts/deps.sh)"

P="$WORK/prefix"
set +e
meson setup "$WORK/build" "$LFS_SOURCE_ROOT" --prefix="$P" -Dtests=false \
	--buildtype=plain -Dman=enabled >"$WORK/setup.log" 2>&1 &&
	meson compile -C "$WORK/build" >"$WORK/compile.log" 2>&1 &&
	meson install -C "$WORK/build" >"$WORK/install.log" 2>&1
rc=$?
set -e
if [ "$rc" != 0 ]; then
	tail -n 30 "$WORK"/*.log >&2
	lfs_die "second build + meson install into $P failed"
fi
lfs_ok "meson install --prefix=$P"

# the first corpus binary model with meshes and a thumbnail
bin=""
while read -r f; do
	if "$P/bin/legacyfs-convert" list "$LFS_CORPUS/nwn/$f" 2>/dev/null | cut -f2 >"$WORK/views" &&
		grep -q '^meshes/' "$WORK/views" && grep -qx thumbnail.png "$WORK/views"; then
		bin="$LFS_CORPUS/nwn/$f"
		break
	fi
done <"$LFS_CORPUS/nwn/binary.txt"
[ -n "$bin" ] || lfs_die "no corpus model with meshes and a thumbnail"
model=$(basename "$bin")
lfs_log "model: $bin"

# --- files in place ---
for f in bin/legacyfs bin/legacyfs-convert sbin/mount.legacyfs \
	share/man/man1/legacyfs.1 share/man/man1/legacyfs-convert.1 \
	share/doc/legacyfs/README.md share/doc/legacyfs/mount.md \
	share/doc/legacyfs/editing.md share/doc/legacyfs/install.md \
	share/doc/legacyfs/formats/nwn-ascii.md \
	share/thumbnailers/legacyfs.thumbnailer share/mime/packages/legacyfs-mime.xml \
	lib/systemd/user/legacyfs@.service \
	share/bash-completion/completions/legacyfs share/bash-completion/completions/legacyfs-convert \
	share/zsh/site-functions/_legacyfs share/fish/vendor_completions.d/legacyfs.fish \
	share/fish/vendor_completions.d/legacyfs-convert.fish share/emacs/site-lisp/legacyfs-mode.el \
	share/vim/vimfiles/plugin/legacyfs.vim share/vim/vimfiles/autoload/legacyfs.vim \
	share/vim/vimfiles/compiler/legacyfs.vim share/doc/legacyfs/emacs.md; do
	if [ -e "$P/$f" ]; then lfs_ok "installed: $f"; else lfs_fail "not installed: $P/$f"; fi
done
[ -x "$P/sbin/mount.legacyfs" ] || lfs_fail "mount.legacyfs is not executable"
if [ -e "$P/share/doc/legacyfs/man" ]; then lfs_fail "docs/man/ (the scdoc sources) installed as docs"; fi

# --- man pages ---
for page in legacyfs legacyfs-convert; do
	MANWIDTH=80 man --warnings -l "$P/share/man/man1/$page.1" >"$WORK/$page.txt" 2>"$WORK/$page.err" ||
		lfs_fail "man -l $page.1 failed"
	if [ -s "$WORK/$page.err" ]; then
		cat "$WORK/$page.err" >&2
		lfs_fail "man --warnings -l $page.1 printed warnings"
	fi
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		grep -q "^$s\$" "$WORK/$page.txt" || lfs_fail "$page(1) has no section $s"
	done
	lfs_ok "man -l $page.1 renders ($(wc -l <"$WORK/$page.txt") lines), no warnings"
done
for s in LAYOUT EDITING ENVIRONMENT FILES; do
	grep -q "^$s\$" "$WORK/legacyfs.txt" || lfs_fail "legacyfs(1) has no section $s"
done
# every -o name and flag of the installed --help is in the rendered page
"$P/bin/legacyfs" --help >"$WORK/help.txt" 2>&1 || true
missing=""
# shellcheck disable=SC2013  # option names have no spaces
for o in $(grep -oE -- '-o [a-z_]+' "$WORK/help.txt" | sed 's/^-o //' | sort -u); do
	grep -qE -- "-o ([a-z_,=A-Z]*,)?$o\\b" "$WORK/legacyfs.txt" || missing="$missing -o$o"
done
# shellcheck disable=SC2013
for o in $(grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' "$WORK/help.txt" | sed 's/^[ ,]//' | grep -v '^-o$' | sort -u); do
	grep -qF -- "$o" "$WORK/legacyfs.txt" || missing="$missing $o"
done
if [ -n "$missing" ]; then lfs_fail "legacyfs(1) does not name:$missing"; else
	lfs_ok "legacyfs(1) names every option of legacyfs --help"
fi

# --- thumbnailer ---
exec_line=$(sed -n 's/^Exec=//p' "$P/share/thumbnailers/legacyfs.thumbnailer")
prog=${exec_line%% *}
[ -x "$P/bin/$prog" ] || lfs_fail "thumbnailer Exec= program $prog is not in $P/bin"
cmd=${exec_line//%s/128}
cmd=${cmd//%i/\'$bin\'}
cmd=${cmd//%o/\'$WORK/thumb.png\'}
PATH="$P/bin:$PATH" sh -c "$cmd" || lfs_fail "thumbnailer command failed: $cmd"
if [ "$(head -c 8 "$WORK/thumb.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
	lfs_ok "thumbnailer: $cmd -> PNG ($(stat -c %s "$WORK/thumb.png") bytes)"
else
	lfs_fail "thumbnailer wrote no PNG"
fi
# an ASCII NWN model (text/x-nwn-mdl) is drawn too, compiled in memory (issue 26)
grep -q '^MimeType=.*text/x-nwn-mdl;' "$P/share/thumbnailers/legacyfs.thumbnailer" ||
	lfs_fail "thumbnailer MimeType does not list text/x-nwn-mdl"
asc=$(grep -m1 '/Textures/c_a_ox\.mdl$' "$LFS_CORPUS/nwn/ascii.txt") && asc=$LFS_CORPUS/nwn/$asc
if [ -n "$asc" ] && [ -f "$asc" ]; then
	cmd=${exec_line//%s/128}
	cmd=${cmd//%i/\'$asc\'}
	cmd=${cmd//%o/\'$WORK/athumb.png\'}
	rm -f "$WORK/athumb.png"
	PATH="$P/bin:$PATH" sh -c "$cmd" || lfs_fail "thumbnailer command failed on an ASCII model: $cmd"
	[ "$(head -c 8 "$WORK/athumb.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		lfs_ok "thumbnailer: ASCII model -> PNG" || lfs_fail "thumbnailer wrote no PNG for an ASCII model"
else
	lfs_log "SKIP-PART: no ASCII c_a_ox.mdl in the corpus"
fi

# --- bash completion ---
if [ -f /usr/share/bash-completion/bash_completion ]; then
	bc=/usr/share/bash-completion/bash_completion
else
	lfs_log "SKIP-PART: bash-completion not installed: completing without its helpers"
	bc=/dev/null
fi
# complete FUNC WORD...: the completions of the last WORD
complete_words() {
	func=$1
	shift
	PATH="$P/bin:$PATH" bash -c '
		source "$1"; source "$2"; func=$3; shift 3
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		"$func"; printf "%s\n" "${COMPREPLY[@]}"' sh "$bc" \
		"$P/share/bash-completion/completions/legacyfs-convert" "$func" "$@"
}
check_completion() {
	want=$1
	shift
	got=$(complete_words "$@")
	if printf '%s\n' "$got" | grep -qxF -- "$want"; then lfs_ok "completion of '${*:2}': $want"; else
		lfs_fail "completion of '${*:2}' lacks $want (got: $(printf '%s' "$got" | tr '\n' ' '))"
	fi
}
check_completion cat _legacyfs_convert legacyfs-convert ca
check_completion thumbnail _legacyfs_convert legacyfs-convert thu
check_completion --respath _legacyfs_convert legacyfs-convert thumbnail --resp
check_completion 512 _legacyfs_convert legacyfs-convert thumbnail -s 5
check_completion uid=0,thumb_size= _legacyfs legacyfs -o uid=0,thumb_s
check_completion --version _legacyfs legacyfs --vers
view=$(grep '^meshes/' "$WORK/views" | tail -1)
check_completion "$view" _legacyfs_convert legacyfs-convert cat "$bin" "${view%%/*}"
check_completion "$view" _legacyfs_convert legacyfs-convert cat "$bin" -v "${view%%/*}"
check_completion "$view" _legacyfs_convert legacyfs-convert apply "$bin" "${view%%/*}"
# the link named for legacyfs-convert is the same file
[ "$(readlink -f "$P/share/bash-completion/completions/legacyfs-convert")" = \
	"$(readlink -f "$P/share/bash-completion/completions/legacyfs")" ] ||
	lfs_fail "completions/legacyfs-convert is not the legacyfs file"

# --- systemd unit ---
unit="$P/lib/systemd/user/legacyfs@.service"
if grep -qxF "ExecStart=$P/bin/legacyfs -f \$OPTIONS \${SOURCE} \${MOUNTPOINT}" "$unit"; then
	lfs_ok "unit ExecStart is the installed legacyfs"
else
	lfs_fail "unit ExecStart: $(grep ExecStart= "$unit")"
fi
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$WORK/units" "$WORK/run"
	chmod 700 "$WORK/run"
	cp "$unit" "$WORK/units/"
	ln -s legacyfs@.service "$WORK/units/legacyfs@demo.service"
	# verify also runs `man legacyfs(1)` for Documentation=man:legacyfs(1)
	if XDG_RUNTIME_DIR="$WORK/run" MANPATH="$P/share/man" PATH="$P/bin:$PATH" \
		systemd-analyze verify --user "$WORK/units/legacyfs@demo.service" >"$WORK/verify.log" 2>&1 &&
		! [ -s "$WORK/verify.log" ]; then
		lfs_ok "systemd-analyze verify legacyfs@demo.service"
	else
		cat "$WORK/verify.log" >&2
		lfs_fail "systemd-analyze verify legacyfs@demo.service"
	fi
else
	lfs_log "SKIP-PART: systemd-analyze not installed: unit not verified"
fi

# --- git diff through the installed driver (docs/git.md) ---
if command -v git >/dev/null 2>&1; then
	g="$WORK/gitrepo"
	rm -rf "$g" "$WORK/githome"
	mkdir -p "$g" "$WORK/githome"
	gitp() { (cd "$g" && HOME="$WORK/githome" GIT_CONFIG_NOSYSTEM=1 PATH="$P/bin:$PATH" \
		git -c user.name=t -c user.email=t@t -c "include.path=$P/share/legacyfs/git/gitconfig" "$@"); }
	gitp init -q .
	cp "$P/share/legacyfs/git/gitattributes" "$g/.gitattributes"
	cp "$bin" "$g/$model"
	gitp add -A && gitp commit -qm one
	"$P/bin/legacyfs-convert" cat "$bin" model.mdl >"$WORK/git.a"
	n=$(grep -n '^ *position ' "$WORK/git.a" | head -n 1 | cut -d: -f1)
	[ -n "$n" ] || lfs_die "no position line in $model's text"
	sed "${n}s/position .*/position 1.5 2.5 3.5/" "$WORK/git.a" >"$WORK/git.b"
	"$P/bin/legacyfs-convert" apply "$bin" model.mdl "$WORK/git.b" -o "$g/$model" ||
		lfs_die "apply refused a new position"
	gitp commit -qam two
	gitp diff HEAD~1 HEAD >"$WORK/git.diff" || lfs_fail "git diff failed"
	grep '^[-+] ' "$WORK/git.diff" >"$WORK/git.changes" || true
	want=$(printf -- '-%s\n+%s' "$(sed -n "${n}p" "$WORK/git.a")" "$(sed -n "${n}p" "$WORK/git.b")")
	if [ "$(cat "$WORK/git.changes")" = "$want" ]; then
		lfs_ok "git diff with the installed textconv driver shows the changed position line only"
	else
		cat "$WORK/git.diff" >&2
		lfs_fail "git diff of $model does not show exactly the changed position line"
	fi
else
	lfs_log "SKIP-PART: git not installed: installed git driver not checked"
fi

# --- Vim finds the installed files (docs/vim.md) ---
if command -v vim >/dev/null 2>&1; then
	"$P/bin/legacyfs-convert" cat "$bin" model.mdl >"$WORK/ascii.mdl"
	rm -f "$WORK/ft"
	HOME="$WORK/githome" vim -N -u NONE -i NONE -es --cmd "set rtp^=$P/share/vim/vimfiles" \
		-c 'filetype on' -c 'syntax on' -c "e $WORK/ascii.mdl" \
		-c "call writefile([&filetype], '$WORK/ft')" -c 'qa!' </dev/null >/dev/null 2>&1
	ft=$(cat "$WORK/ft" 2>/dev/null)
	if [ "$ft" = nwnmdl ]; then lfs_ok "installed Vim files: model text is filetype nwnmdl"; else
		lfs_fail "installed Vim files: model text has filetype '$ft', want nwnmdl"
	fi
else
	lfs_log "SKIP-PART: vim not installed: installed Vim files not checked"
fi

# --- mounts through mount(8) ---
lfs_require_fuse
[ "$(id -u)" = 0 ] || { lfs_finish; lfs_skip "not root: mount(8) of fuse.legacyfs not tried (the rest passed)"; }
command -v mount.fuse3 >/dev/null 2>&1 || [ -x /sbin/mount.fuse3 ] || lfs_skip "mount.fuse3 not installed"
command -v unshare >/dev/null 2>&1 || lfs_skip "unshare not installed"
mkdir -p "$WORK/src" "$WORK/mnt"
cp "$bin" "$WORK/src/"
"$P/bin/legacyfs-convert" cat "$bin" >"$WORK/expect.mdl"
want_view() { # MNT WHAT: the mount is legacyfs's and model.mdl reads as the converter's text
	if awk -v m="$1" '$2 == m && $3 == "fuse.legacyfs" { f = 1 } END { exit !f }' /proc/mounts; then
		lfs_ok "$2: /proc/mounts type fuse.legacyfs"
	else
		grep -F "$1" /proc/mounts >&2 || true
		lfs_fail "$2: no fuse.legacyfs mount at $1"
	fi
	if cmp -s "$1/$model/model.mdl" "$WORK/expect.mdl"; then lfs_ok "$2: model.mdl reads"; else
		lfs_fail "$2: $model/model.mdl differs from legacyfs-convert cat"
	fi
}
# in_ns SCRIPT: run SCRIPT (bash, with want_view) in a private mount
# namespace where $P/bin is /usr/local/bin; unmounts on the way out.
in_ns() {
	printf '%s %s fuse.legacyfs noauto,nofail,ro,thumb_size=128 0 0\n' \
		"$WORK/src" "$WORK/mnt" >"$WORK/fstab"
	timeout 120 unshare --mount --propagation private bash -c '
		set -u
		trap "umount -l \"$WORK/mnt\" 2>/dev/null" EXIT
		mount --bind "$P/bin" /usr/local/bin || exit 99
		'"$(declare -f want_view lfs_ok lfs_fail lfs_log)"'
		LFS_FAILS=0
		'"$1"'
		exit $LFS_FAILS'
}
export WORK P model
set +e
in_ns '
	if mount -t fuse.legacyfs "$WORK/src" "$WORK/mnt"; then
		want_view "$WORK/mnt" "mount -t fuse.legacyfs"
		umount "$WORK/mnt" || lfs_fail "umount after mount -t fuse.legacyfs"
	else
		lfs_fail "mount -t fuse.legacyfs SRC MNT failed"
	fi
	if mount -T "$WORK/fstab" "$WORK/mnt"; then
		want_view "$WORK/mnt" "mount -T FSTAB (fstab line)"
		grep -F " $WORK/mnt " /proc/mounts | grep -q " ro," || lfs_fail "fstab line: mount is not ro"
		umount "$WORK/mnt" || lfs_fail "umount after mount -T"
	else
		lfs_fail "mount -T FSTAB MNT failed"
	fi'
rc=$?
set -e
[ "$rc" = 99 ] && lfs_skip "cannot bind-mount in a private mount namespace here"
[ "$rc" = 0 ] || LFS_FAILS=$((LFS_FAILS + rc))
# any prefix: the program by absolute path in the source (mount.fuse3's TYPE#SOURCE)
set +e
in_ns '
	if mount -t fuse "$P/bin/legacyfs#$WORK/src" "$WORK/mnt" -o ro; then
		want_view "$WORK/mnt" "mount -t fuse PREFIX/bin/legacyfs#SRC"
		umount "$WORK/mnt" || lfs_fail "umount"
	else
		lfs_fail "mount -t fuse PREFIX/bin/legacyfs#SRC MNT failed"
	fi
	# the helper as mount(8) runs it for -t legacyfs: no PATH at all
	if env -i "$P/sbin/mount.legacyfs" "$WORK/src" "$WORK/mnt" -o ro,noauto,nofail; then
		want_view "$WORK/mnt" "mount.legacyfs SRC MNT -o OPTS"
		umount "$WORK/mnt" || lfs_fail "umount"
	else
		lfs_fail "mount.legacyfs SRC MNT failed"
	fi'
rc=$?
set -e
[ "$rc" = 0 ] || LFS_FAILS=$((LFS_FAILS + rc))
lfs_finish
