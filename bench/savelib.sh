# shellcheck shell=bash
# Shared by bench/save.sh and bench/bigsave.sh (sourced, not run): the
# corpus model they save (the largest NWN binary of the corpus by
# triangles, c_drgshad.mdl, and its largest mesh OBJ), the legacyfs binary
# ($LFS_LEGACYFS, else build/src/legacyfs, else build-*/src/legacyfs; exit
# 77 when there is none or no corpus), and one mount of $tmp/src at
# $tmp/mnt (default options, $LFS_MOUNT_OPTS for more) with its unmount.
# Sets root, corpus, lfs, tmp (a fresh folder with src/ and mnt/), pid.
# The caller may set rel and view first (paths below $corpus/nwn and in the
# model's folder).

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus=${LFS_CORPUS:-$root/../shared/corpus}
rel=${rel:-tree/rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl/c_drgshad.mdl}
view=${view:-meshes/Dragon_head.obj}
lfs=${LFS_LEGACYFS:-}
if [ -z "$lfs" ]; then
	for c in "$root"/build/src/legacyfs "$root"/build-*/src/legacyfs; do
		[ -x "$c" ] && lfs=$c && break
	done
fi
[ -x "$lfs" ] || { echo "no legacyfs built (set LFS_LEGACYFS)" >&2; exit 77; }
[ -f "$corpus/nwn/$rel" ] || { echo "no corpus model $corpus/nwn/$rel" >&2; exit 77; }

tmp=$(mktemp -d)
pid=""
mkdir -p "$tmp/src" "$tmp/mnt"

# Mount $tmp/src at $tmp/mnt in the background (pid: the daemon); exit 1
# with its log when the mount does not come up within 30 s.
bench_mount() {
	# shellcheck disable=SC2086
	"$lfs" -f ${LFS_MOUNT_OPTS:-} "$tmp/src" "$tmp/mnt" 2>"$tmp/log" &
	pid=$!
	for _ in $(seq 300); do mountpoint -q "$tmp/mnt" && break; sleep 0.1; done
	mountpoint -q "$tmp/mnt" || { cat "$tmp/log" >&2; echo "mount failed" >&2; exit 1; }
}

# Unmount $tmp/mnt (lazily when busy) and wait for the daemon.
bench_umount() {
	if mountpoint -q "$tmp/mnt" 2>/dev/null; then
		fusermount3 -u "$tmp/mnt" 2>/dev/null || fusermount3 -uz "$tmp/mnt" || true
	fi
	if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
	pid=""
}
trap 'bench_umount; rm -rf "$tmp"' EXIT
