# shellcheck shell=bash
# A throwaway sshfs over loopback (sourced after lib.sh, or on its own by
# bench/netsource.sh): `lfs_sshfs_start DIR` runs sshd on 127.0.0.1 at a
# random high port with its own host key, a throwaway user key and a config,
# all in DIR (nothing outside it is read or written), as the current user;
# `lfs_sshfs_mount FAR MNT [sshfs options]` mounts FAR (an absolute path on
# the far side, i.e. on this machine) at MNT through it. `lfs_sshfs_stop`
# (called from the caller's exit trap) unmounts and kills sshd.
# Skips (exit 77, via lfs_skip when defined) when sshd or sshfs is missing.

LFS_SSHD_PID=""
LFS_SSHFS_MNTS=""

lfs_sshfs_skip() {
	if command -v lfs_skip >/dev/null 2>&1; then lfs_skip "$*"; fi
	printf 'SKIP: %s\n' "$*" >&2
	exit 77
}

lfs_sshfs_require() {
	SSHD=$(command -v sshd 2>/dev/null || true)
	[ -n "$SSHD" ] || { [ -x /usr/sbin/sshd ] && SSHD=/usr/sbin/sshd; }
	[ -n "$SSHD" ] || lfs_sshfs_skip "sshd not installed (package openssh-server)"
	command -v sshfs >/dev/null 2>&1 || lfs_sshfs_skip "sshfs not installed (package sshfs)"
	command -v ssh-keygen >/dev/null 2>&1 || lfs_sshfs_skip "ssh-keygen not installed"
	[ -c /dev/fuse ] || lfs_sshfs_skip "/dev/fuse missing"
}

# lfs_sshfs_start DIR: sshd for the current user on 127.0.0.1:random port.
lfs_sshfs_start() {
	lfs_sshfs_require
	d=$1
	mkdir -p "$d"
	chmod 700 "$d"
	rm -f "$d/host_key" "$d/host_key.pub" "$d/user_key" "$d/user_key.pub"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" >/dev/null || lfs_sshfs_skip "ssh-keygen failed"
	ssh-keygen -q -t ed25519 -N '' -f "$d/user_key" >/dev/null || lfs_sshfs_skip "ssh-keygen failed"
	cp "$d/user_key.pub" "$d/authorized_keys"
	chmod 600 "$d/authorized_keys"
	# sshd refuses privilege separation without this folder (Debian makes it at boot)
	[ "$(id -u)" != 0 ] || mkdir -p /run/sshd
	for try in 1 2 3 4 5; do
		LFS_SSH_PORT=$((20000 + (RANDOM % 30000)))
		cat >"$d/sshd_config" <<CFG
Port $LFS_SSH_PORT
ListenAddress 127.0.0.1
HostKey $d/host_key
PidFile $d/sshd.pid
AuthorizedKeysFile $d/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
LogLevel ERROR
CFG
		"$SSHD" -D -e -f "$d/sshd_config" 2>"$d/sshd.log" &
		LFS_SSHD_PID=$!
		i=0
		while [ $i -lt 50 ]; do
			kill -0 "$LFS_SSHD_PID" 2>/dev/null || break
			if ssh -p "$LFS_SSH_PORT" -i "$d/user_key" -o BatchMode=yes \
				-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
				-o LogLevel=ERROR "$(id -un)@127.0.0.1" true 2>/dev/null; then
				LFS_SSH_DIR=$d
				return 0
			fi
			sleep 0.1
			i=$((i + 1))
		done
		alive=no
		if kill -0 "$LFS_SSHD_PID" 2>/dev/null; then
			alive=yes
			ssh -p "$LFS_SSH_PORT" -i "$d/user_key" -o BatchMode=yes -o StrictHostKeyChecking=no \
				-o UserKnownHostsFile=/dev/null "$(id -un)@127.0.0.1" true 2>&1 | tail -n 3 >&2 || true
		fi
		kill "$LFS_SSHD_PID" 2>/dev/null
		wait "$LFS_SSHD_PID" 2>/dev/null || true
		LFS_SSHD_PID=""
		# sshd ran but the login failed (no login shell, a policy): another port will not help
		[ "$alive" = no ] || break
	done
	cat "$d/sshd.log" >&2
	lfs_sshfs_skip "cannot log in as $(id -un) through a throwaway sshd on 127.0.0.1 (see above)"
}

# lfs_sshfs_mount FAR MNT [sshfs -o options...]
lfs_sshfs_mount() {
	far=$1
	mnt=$2
	shift 2
	mkdir -p "$mnt"
	sshfs -p "$LFS_SSH_PORT" -o IdentityFile="$LFS_SSH_DIR/user_key" \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
		-o LogLevel=ERROR "$@" "$(id -un)@127.0.0.1:$far" "$mnt" ||
		lfs_sshfs_skip "sshfs cannot mount over loopback"
	LFS_SSHFS_MNTS="$mnt $LFS_SSHFS_MNTS"
}

lfs_sshfs_stop() {
	for m in $LFS_SSHFS_MNTS; do
		if mountpoint -q "$m" 2>/dev/null; then
			timeout 10 fusermount3 -u "$m" 2>/dev/null || timeout 10 fusermount3 -uz "$m" 2>/dev/null
		fi
	done
	LFS_SSHFS_MNTS=""
	if [ -n "$LFS_SSHD_PID" ]; then
		kill "$LFS_SSHD_PID" 2>/dev/null
		wait "$LFS_SSHD_PID" 2>/dev/null
		LFS_SSHD_PID=""
	fi
	return 0
}
