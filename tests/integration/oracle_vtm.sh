#!/bin/bash
# Independent oracle for the NOD, NAD and SOD views (issue 15, deliverables 1
# and 4). Every corpus NOD, NAD and SOD file is extracted with
# `legacyfs-convert extract`, and tests/oracle/check_views.py compares the
# view texts (meshes/*.obj, model.obj, model.txt bones/verts/node matrices,
# tracks/*.csv, tags.csv, anims/*.csv) value by value, float32 bit for bit,
# with what the minimal readers tests/oracle/{nod,nad,sod}_min.py read
# straight from the bytes (written from the format documents; no code shared
# with src/). model.obj is checked against its parts: each vertex equals the
# node's local vertex placed by the node matrices of the minimal reader.
# No FUSE needed. Exit 77 without the corpus or python3.
. "$(dirname "$0")/lib.sh"
lfs_require_corpus
command -v python3 >/dev/null || lfs_skip "python3 missing"
CHECK="$LFS_SOURCE_ROOT/tests/oracle/check_views.py"
lfs_workdir oracle_vtm
n=0
for f in "$LFS_CORPUS"/nod/*.nod "$LFS_CORPUS"/nad/*.nad "$LFS_CORPUS"/sod/*.sod; do
	[ -f "$f" ] || continue
	b=$(basename "$f")
	out="$WORK/$b"
	if ! timeout 120 "$CONVERT" extract "$f" "$out" 2>"$WORK/$b.err"; then
		lfs_fail "$b: legacyfs-convert extract failed: $(head -c 300 "$WORK/$b.err")"
		continue
	fi
	if timeout 120 python3 "$CHECK" "$f" "$out" >"$WORK/$b.log" 2>&1; then
		lfs_log "$(tail -n 1 "$WORK/$b.log")"
	else
		cat "$WORK/$b.log" >&2
		lfs_fail "$b: views differ from the minimal reader"
	fi
	rm -rf "$out"
	n=$((n + 1))
done
[ "$LFS_FAILS" = 0 ] || lfs_die "$LFS_FAILS of $n files failed"
[ "$n" -gt 0 ] || lfs_skip "no NOD/NAD/SOD files in $LFS_CORPUS"
lfs_ok "$n NOD/NAD/SOD files: every view value equals the minimal reader's"
