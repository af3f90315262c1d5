#!/usr/bin/env bash
# Demo: install build dependencies (Debian 12, apt), build legacyfs, mount a
# folder of models (default: the bundled samples/) on a temporary mountpoint,
# show the generated tree and the start of one model's ASCII text, unmount.
#
#   bash scripts/demo.sh [SOURCE]
#
# LFS_SKIP_DEPS=1 skips the apt step. Build directory: build/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
src=${1:-samples}

if [ "${LFS_SKIP_DEPS:-0}" != 1 ]; then
	bash scripts/deps.sh
fi

if [ ! -f build/build.ninja ]; then
	meson setup build
fi
meson compile -C build

mnt=$(mktemp -d "${TMPDIR:-/tmp}/legacyfs-demo.XXXXXX")
pid=
cleanup() {
	if mountpoint -q "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" || true
	fi
	if [ -n "$pid" ]; then
		wait "$pid" 2>/dev/null || true
	fi
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT

build/src/legacyfs -f "$src" "$mnt" &
pid=$!
for _ in $(seq 100); do
	mountpoint -q "$mnt" && break
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "demo: legacyfs exited before mounting (is /dev/fuse usable?)" >&2
		exit 1
	fi
	sleep 0.1
done
mountpoint -q "$mnt" || { echo "demo: mount did not appear" >&2; exit 1; }

echo "== $src mounted on $mnt =="
echo
echo "== ls -R =="
(cd "$mnt" && ls -R)
echo
model=$(find "$mnt" -path '*.mdl/*' -name '*.mdl' -type f | sort | head -n 1)
if [ -n "$model" ]; then
	echo "== head -n 40 ${model#"$mnt"/} =="
	head -n 40 "$model"
fi
