#!/bin/bash
# Mount the corpus tree ($LFS_CORPUS/nwn/tree: binary and ASCII models,
# textures) and check the mount with ordinary tools against SOURCE and
# against a native copy made with legacyfs-convert:
#  - every binary of nwn/binary.txt is a folder with model.mdl;
#  - every other file passes through byte-identical (cmp with SOURCE);
#  - ls -R, find, grep -r and diff -r agree with the native copy;
#  - st_size of every file equals the bytes a read returns (cksum reads);
#  - /.legacyfs/errors exists and lists no corpus file;
#  - mounted with -o ro (the corpus is shared), every write is refused.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_corpus
SRC="$LFS_CORPUS/nwn/tree"
MNT="$WORK/mnt"
NATIVE="$WORK/native"

lfs_native_copy "$SRC" "$NATIVE"
lfs_mount "$SRC" "$MNT" -o ro

# 1. binaries -> folders
n=0
while IFS= read -r p; do
	[ -n "$p" ] || continue
	rel=${p#tree/}
	if [ -d "$MNT/$rel" ] && [ -f "$MNT/$rel/model.mdl" ] && [ -s "$MNT/$rel/model.mdl" ]; then
		n=$((n + 1))
	else
		lfs_fail "binary $rel is not a folder with model.mdl"
	fi
done <"$LFS_CORPUS/nwn/binary.txt"
want=$(grep -c . "$LFS_CORPUS/nwn/binary.txt")
[ "$n" = "$want" ] && lfs_ok "$n/$want binaries are folders with model.mdl"

# 2. everything else passes through unchanged
plain=0
while IFS= read -r -d '' f; do
	if [ -d "$MNT/$f" ]; then
		continue # a model (checked above and by diff -r below)
	fi
	if cmp -s "$SRC/$f" "$MNT/$f"; then
		plain=$((plain + 1))
	else
		lfs_fail "$f differs from SOURCE"
	fi
done < <(cd "$SRC" && find . -type f -print0)
[ "$plain" -gt 0 ] && lfs_ok "$plain plain files byte-identical to SOURCE"
# ASCII models in particular
while IFS= read -r p; do
	[ -n "$p" ] || continue
	rel=${p#tree/}
	[ -f "$MNT/$rel" ] || lfs_fail "ASCII model $rel is not a plain file"
done <"$LFS_CORPUS/nwn/ascii.txt"
lfs_ok "ASCII models are plain files"

# 3. listings and contents agree with the native copy
# (ls without -a hides /.legacyfs)
(cd "$MNT" && ls -R .) >"$WORK/ls.mnt" || lfs_fail "ls -R failed"
(cd "$NATIVE" && ls -R .) >"$WORK/ls.native"
if cmp -s "$WORK/ls.native" "$WORK/ls.mnt"; then lfs_ok "ls -R"; else lfs_fail "ls -R differs"; fi

(cd "$MNT" && find . -path ./.legacyfs -prune -o -print | sort) >"$WORK/find.mnt"
(cd "$NATIVE" && find . | sort) >"$WORK/find.native"
if cmp -s "$WORK/find.mnt" "$WORK/find.native"; then lfs_ok "find ($(wc -l <"$WORK/find.mnt") entries)"; else
	diff "$WORK/find.native" "$WORK/find.mnt" | head -20 >&2
	lfs_fail "find differs"
fi
(cd "$MNT" && find . -path ./.legacyfs -prune -o -type f -print | sort) >"$WORK/findf.mnt"
(cd "$NATIVE" && find . -type f | sort) >"$WORK/findf.native"
cmp -s "$WORK/findf.mnt" "$WORK/findf.native" && lfs_ok "find -type f" || lfs_fail "find -type f differs"

if diff -r -x .legacyfs "$NATIVE" "$MNT" >"$WORK/diff.out" 2>&1; then lfs_ok "diff -r mount vs native copy"; else
	head -20 "$WORK/diff.out" >&2
	lfs_fail "diff -r mount vs native copy"
fi

(cd "$MNT" && grep -r -a -c --exclude-dir=.legacyfs -e node -e vertex . | sort) >"$WORK/grep.mnt" || true
(cd "$NATIVE" && grep -r -a -c -e node -e vertex . | sort) >"$WORK/grep.native" || true
if [ -s "$WORK/grep.mnt" ] && cmp -s "$WORK/grep.mnt" "$WORK/grep.native"; then lfs_ok "grep -r"; else lfs_fail "grep -r differs"; fi

# 4. st_size == bytes read, for every file (cksum reads the whole file)
(cd "$MNT" && find . -type f -exec stat -c '%s %n' {} + | sort -k2) >"$WORK/size.stat"
(cd "$MNT" && find . -type f -exec cksum {} + | awk '{ s=$2; $1=""; $2=""; sub(/^  /, ""); print s, $0 }' | sort -k2) >"$WORK/size.read"
if [ -s "$WORK/size.stat" ] && cmp -s "$WORK/size.stat" "$WORK/size.read"; then
	lfs_ok "st_size equals bytes read for $(wc -l <"$WORK/size.stat") files"
else
	diff "$WORK/size.stat" "$WORK/size.read" | head >&2
	lfs_fail "st_size differs from bytes read"
fi
# a generated file in particular, through stat(1) and wc -c of a pipe
first=$(head -1 "$LFS_CORPUS/nwn/binary.txt")
v="$MNT/${first#tree/}/model.mdl"
[ "$(stat -c %s "$v")" = "$(cat "$v" | wc -c)" ] && lfs_ok "stat/wc -c of $v" || lfs_fail "stat/wc -c of $v"

# 5. the errors file
[ -f "$MNT/.legacyfs/errors" ] || lfs_fail "no /.legacyfs/errors"
if [ -s "$MNT/.legacyfs/errors" ]; then
	cat "$MNT/.legacyfs/errors" >&2
	lfs_fail "corpus files listed in /.legacyfs/errors"
else
	lfs_ok "errors file empty"
fi

# 6. -o ro: every change is refused by the kernel (the corpus is shared: this
# test mounts it read-only, so nothing here can reach it).
m="$MNT/${first#tree/}"
if echo x 2>/dev/null >>"$m/model.mdl"; then
	lfs_fail "a write to a view succeeded with -o ro"
elif touch "$m/newfile" 2>/dev/null || touch "$MNT/newfile" 2>/dev/null; then
	lfs_fail "a file was created with -o ro"
elif ! cmp -s "$m/model.mdl" <("$CONVERT" cat --root "$SRC" "$SRC/${first#tree/}" model.mdl); then
	lfs_fail "model.mdl changed after a refused write"
else
	lfs_ok "-o ro: writes refused"
fi

lfs_umount "$MNT"
lfs_finish
