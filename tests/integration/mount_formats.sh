#!/bin/bash
# Vampire (NOD, NAD) and Armada (SOD) models in the mount: every corpus file
# of these formats is a directory X.nod/, X.nad/, X.sod/ whose views equal
# what legacyfs-convert prints (diff -r against a native copy), st_size equals
# the bytes read, every view listed by `legacyfs-convert list` exists, and the
# disputed SOD files (rejected by every independent reader) are folders (their
# header says SOD) holding their original bytes and README.txt with the
# reason, which is also in /.legacyfs/errors.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
lfs_workdir mount_formats

for fmt in nod nad sod; do
	SRC="$LFS_CORPUS/$fmt"
	[ -d "$SRC" ] || { lfs_fail "$SRC missing"; continue; }
	MNT="$WORK/mnt-$fmt"
	NATIVE="$WORK/native-$fmt"
	lfs_native_copy "$SRC" "$NATIVE"
	lfs_mount "$SRC" "$MNT"

	if diff -r -x .legacyfs -x README.txt "$NATIVE" "$MNT" >"$WORK/diff-$fmt" 2>&1; then
		lfs_ok "$fmt: diff -r mount vs native copy"
	else
		head -20 "$WORK/diff-$fmt" >&2
		lfs_fail "$fmt: diff -r mount vs native copy"
	fi

	dirs=0
	files=0
	while IFS= read -r -d '' f; do
		files=$((files + 1))
		case $f in
		disputed/*)
			b=$(basename "$f")
			if [ -d "$MNT/$f" ] && cmp -s "$SRC/$f" "$MNT/$f/$b"; then
				lfs_ok "$fmt: $f keeps its bytes in its folder"
			else
				lfs_fail "$fmt: disputed $f/$b is not its original bytes"
			fi
			grep -q "^$b: error: " "$MNT/$f/README.txt" ||
				lfs_fail "$fmt: $f/README.txt: $(head -1 "$MNT/$f/README.txt")"
			grep -qF "$f:" "$MNT/.legacyfs/errors" ||
				lfs_fail "$fmt: $f missing from /.legacyfs/errors"
			continue
			;;
		esac
		case $f in *."$fmt") ;; *) continue ;; esac
		if [ -d "$MNT/$f" ]; then
			dirs=$((dirs + 1))
		else
			lfs_fail "$fmt: $f is not a directory"
			continue
		fi
		"$CONVERT" list "$SRC/$f" | while IFS="$(printf '\t')" read -r size path; do
			[ -f "$MNT/$f/$path" ] || { lfs_fail "$fmt: $f/$path missing"; continue; }
			[ "$(stat -c %s "$MNT/$f/$path")" = "$size" ] || lfs_fail "$fmt: $f/$path size"
			[ "$(wc -c <"$MNT/$f/$path")" = "$size" ] || lfs_fail "$fmt: $f/$path bytes read"
		done
	done < <(cd "$SRC" && find . -type f -printf '%P\0')
	[ "$dirs" -gt 0 ] && lfs_ok "$fmt: $dirs of $files files are model directories" ||
		lfs_fail "$fmt: no model directories"

	# grep over the text views finds what the codec wrote
	n=$(grep -rlE --include='*.txt' -e '^(nod)?version ' "$MNT" | wc -l)
	[ "$n" -ge "$dirs" ] && lfs_ok "$fmt: grep -r finds 'version' in $n text views" ||
		lfs_fail "$fmt: grep -r found 'version' in only $n text views"
	lfs_umount "$MNT"
done
lfs_finish
