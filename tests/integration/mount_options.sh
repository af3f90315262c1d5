#!/bin/bash
# The same tree under each loop / open / readdir / cache configuration must
# look the same: mount $LFS_CORPUS/nwn/tree/rollnw (the large BioWare models)
# with -o mt, -o kernel_open, -o readdirplus=no, a tiny view cache and
# -o nowatch, and diff -r each against one native copy made by
# legacyfs-convert. Also -d (debug output) must not break anything.
# The tiny cache makes every read rebuild its model (by design), so that case
# runs over the project's small samples instead of the large creatures.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_options
SRC="$LFS_CORPUS/nwn/tree/rollnw"
NATIVE="$WORK/native"
lfs_native_copy "$SRC" "$NATIVE"

SAMPLES="$LFS_SOURCE_ROOT/samples"
SNATIVE="$WORK/native-samples"
lfs_native_copy "$SAMPLES" "$SNATIVE"

i=0
for opts in "-o mt" "-o mt,max_threads=4,kernel_open" "-o kernel_open" "-o readdirplus=no" \
	"-o cache_size=1,cache_entries=2" "-o nowatch" "-d -o timeout=0"; do
	i=$((i + 1))
	MNT="$WORK/mnt$i"
	SRC="$LFS_CORPUS/nwn/tree/rollnw"
	NATIVE="$WORK/native"
	case $opts in *cache_size=1*) SRC=$SAMPLES NATIVE=$SNATIVE ;; esac
	# -o ro: SOURCE is shared data (corpus, samples/); this test only reads.
	# shellcheck disable=SC2086
	lfs_mount "$SRC" "$MNT" $opts -o ro
	if diff -r -x .legacyfs "$NATIVE" "$MNT" >"$WORK/diff$i" 2>&1; then
		lfs_ok "diff -r with $opts"
	else
		head "$WORK/diff$i" >&2
		lfs_fail "diff -r with $opts"
	fi
	(cd "$MNT" && find . -type f -exec cksum {} + | awk '{ s=$2; $1=""; $2=""; sub(/^  /, ""); print s, $0 }' | sort -k2) >"$WORK/read$i"
	(cd "$MNT" && find . -type f -exec stat -c '%s %n' {} + | sort -k2) >"$WORK/stat$i"
	cmp -s "$WORK/read$i" "$WORK/stat$i" && lfs_ok "sizes with $opts" || lfs_fail "st_size != bytes read with $opts"
	lfs_umount "$MNT"
done
lfs_finish
