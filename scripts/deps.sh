#!/usr/bin/env bash
# Install everything legacyfs needs to build, test and demo on Debian 12 (apt
# only), and make /dev/fuse usable. Uses sudo when not run as root.
# Extra packages can be passed as arguments or in $LFS_EXTRA_PKGS.
set -euo pipefail

pkgs=(
	build-essential libc6-dev gcc clang meson ninja-build pkg-config
	libfuse3-dev fuse3 libcmocka-dev libpng-dev libstb-dev
	# SHA-256 of the thumbnail disk cache (src/fs/thumbcache.c)
	nettle-dev
	# zstd payloads of E1 archives (src/formats/nwnarchive/xres.c)
	libzstd-dev
	python3 kmod util-linux procps psmisc diffutils findutils
	# programs the edit_* integration tests save views with
	vim neovim emacs-nox nano libglib2.0-bin sed coreutils
	# Blender's OBJ importer/exporter round trips (blender_obj test; runs headless)
	blender
	# the peer compiler nwnmdlcomp (test peer_read) is a 32-bit program
	gcc-multilib g++-multilib
	# pjdfstest (built from ../shared/tools, run with perl's prove; tests/posix)
	# and bindfs, the FUSE file system it is compared with (docs/posix.md)
	autoconf automake libtool perl bindfs
	# libFuzzer and clang's sanitizer runtimes (tests/fuzz, docs/fuzzing.md)
	libclang-rt-14-dev
	# man pages (scdoc sources in docs/man) and what the install test uses:
	# man -l, bash completion, systemd-analyze verify, mount(8) and unshare
	scdoc man-db groff-base bash-completion systemd
	# SOURCE on a network file system (mount_netsource test, bench/netsource.sh):
	# sshfs over loopback to a throwaway sshd
	sshfs openssh-server openssh-client
	# the zsh and fish completion (tests/integration/completion.sh)
	zsh fish
)

if [ "$(id -u)" -eq 0 ]; then
	sudo=()
else
	sudo=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
# shellcheck disable=SC2086  # LFS_EXTRA_PKGS is a space separated list
"${sudo[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}" ${LFS_EXTRA_PKGS:-} "$@"

# FUSE device: load the module if the node is missing, open it up if this user
# cannot use it (CI containers often have it 0600). Failure here is not fatal:
# the FUSE integration tests then skip (exit 77).
if [ ! -e /dev/fuse ]; then
	"${sudo[@]}" modprobe fuse 2>/dev/null || echo "deps: no /dev/fuse and modprobe fuse failed; FUSE tests will skip" >&2
fi
if [ -e /dev/fuse ] && { [ ! -r /dev/fuse ] || [ ! -w /dev/fuse ] || [ "$(stat -c %a /dev/fuse)" != 666 ]; }; then
	"${sudo[@]}" chmod 666 /dev/fuse || echo "deps: cannot chmod /dev/fuse" >&2
fi
