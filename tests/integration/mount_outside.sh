#!/bin/bash
# Outside changes to model files (issue 15, deliverable 3), for every format
# (NWN binary MDL, NOD, NAD, SOD from the corpus; NIL generated at run time
# from the layout in docs/formats/nil.md, as mount_nil.sh does: no NIL file
# is public). While the model's views are cached (every view read and
# stat'ed) and some are held open, another program
#   1. rewrites the model file in place (another model, same inode),
#   2. replaces it (writes a temporary file, renames it over the model),
#   3. truncates it to half its size (NWN, NOD: the header's sizes no longer
#      match, not a model any more, a plain file; NAD, SOD: still a model by
#      its header, does not decode; NIL: still decodes, fewer sectors),
#   4. replaces it with a good model again,
#   5. rewrites it in place with a corrupt copy that still looks like a model
#      by its header (found at run time: legacyfs-convert list exits 1),
#   6. truncates it to 0 bytes (not a model: a plain empty file),
#   7. rewrites it in place with a model again,
#   8. deletes it.
# After each step EVERY view of the model must show the new state, polled
# with a limit (never a fixed sleep): the list of views (find), their types,
# sizes from stat and from ls -lR, their bytes, their mtimes (the model
# file's: docs/mount.md "Layout"), the model folder's type in its parent's
# listing; paths of the old views that are gone give ENOENT. The expected
# state is made without FUSE from the new file: `legacyfs-convert extract`
# (list exit 0); a folder with README.txt ('NAME: error: ...') and the
# original bytes, named in /.legacyfs/errors (exit 1, docs/errors.md,
# docs/mount.md "A file that looks like a model but does not decode"); the
# file itself (exit 3); after the delete, ENOENT. Run with the watcher
# (default; docs/mount.md "Caching and consistency": the delay is the
# watcher thread's, milliseconds; limit 10 s) and with -o nowatch,timeout=1
# (the kernel asks again once the 1 s timeout has passed; limit 11 s).
#
# Descriptors opened on views before the change and never read (pread at
# offset 0 afterwards): a view keeps its inode when the model file is
# rewritten or replaced by another model (docs/mount.md "Layout": st_ino of
# (model path, view path); "Threads": requests on its views never fail with
# ESTALE because of it), so the held descriptor reads the view's NEW bytes
# when that view exists in the new model, and gets ESTALE when it does not
# (docs/errors.md ESTALE: a view that no longer exists after the model
# changed, a model that no longer decodes, is no longer a model, or was
# deleted) — never the old bytes. Without the watcher the kernel may keep
# the held view's attributes and pages for the timeout, so it is polled with
# the same limit. Asserted for the model text, one mesh/sector OBJ or
# track/controller CSV, and thumbnail.png.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
lfs_workdir mount_outside
SRC="$WORK/src"
MNT="$WORK/mnt"
GEN="$WORK/gen"
mkdir -p "$SRC" "$GEN"
: >"$WORK/latency.tsv"

NT="$LFS_CORPUS/nwn/tree"
declare -A A B EXT
A[nwn]="$NT/nwnprc/nwnprc/users/Tenjac/VFX/vdr_eleshield02.mdl"
B[nwn]="$NT/rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl/it_torch_000.mdl"
EXT[nwn]=mdl
A[nod]="$LFS_CORPUS/nod/T_Door21.nod"
B[nod]="$LFS_CORPUS/nod/c_a_chicken.nod"
EXT[nod]=nod
A[nad]="$LFS_CORPUS/nad/T_Door21__closed.nad"
B[nad]="$LFS_CORPUS/nad/tds_udoor_04__opening1.nad"
EXT[nad]=nad
A[sod]="$LFS_CORPUS/sod/T_Door21_1.8.sod"
B[sod]="$LFS_CORPUS/sod/TCN01_A20_02_1.6.sod"
EXT[sod]=sod
A[nil]="$GEN/a.nil"
B[nil]="$GEN/b.nil"
EXT[nil]=nil
FORMATS="nwn nod nad sod nil"

# Two NIL levels (2 and 3 sectors), layout of docs/formats/nil.md.
python3 "$LFS_SOURCE_ROOT/tests/integration/nil_gen.py" "$GEN/a.nil" 2 15
python3 "$LFS_SOURCE_ROOT/tests/integration/nil_gen.py" "$GEN/b.nil" 3 16

for fmt in $FORMATS; do
	for f in "${A[$fmt]}" "${B[$fmt]}"; do
		[ -f "$f" ] || lfs_skip "corpus file missing: $f"
	done
	cmp -s "${A[$fmt]}" "${B[$fmt]}" && lfs_die "precondition: $fmt: A and B are the same bytes"
done

# A copy of B that still looks like a model by its header but does not
# decode (legacyfs-convert list exits 1): 4 bytes 0xff at the first offset
# that does it, else a u16 1 near the end (NOD: a group count, whose file
# stays the same size). $GEN/broken.EXT
T="$GEN/try"
mkdir -p "$T"
for fmt in $FORMATS; do
	e=${EXT[$fmt]}
	s=$(stat -c %s "${B[$fmt]}")
	found=""
	for spec in $(seq 4 4 600 | sed 's/^/ff:/') $(seq $((s > 300 ? s - 300 : 4)) 1 $((s - 2)) | sed 's/^/01:/'); do
		o=${spec#*:}
		[ "$o" -lt $((s - 4)) ] || continue
		cp "${B[$fmt]}" "$T/m.$e"
		if [ "${spec%%:*}" = ff ]; then printf '\xff\xff\xff\xff'; else printf '\x01\x00'; fi |
			dd of="$T/m.$e" bs=1 seek="$o" conv=notrunc status=none
		rc=0
		"$CONVERT" list --root "$T" "$T/m.$e" >/dev/null 2>&1 || rc=$?
		if [ "$rc" = 1 ]; then found=$spec; break; fi
	done
	[ -n "$found" ] || lfs_die "precondition: no corrupt copy of ${B[$fmt]} that still looks like a model"
	cp "$T/m.$e" "$GEN/broken.$e"
	lfs_log "$fmt: corrupt copy: ${found%%:*} at offset ${found#*:}"
done

# expect_state FMT: what the mount must show for SRC/FMT/m.EXT now, made
# without FUSE: $WORK/exp/FMT/m.EXT (views by `legacyfs-convert extract`;
# a folder holding the original file for a model that does not decode;
# the file itself when it is not a model) and KIND (views|broken|plain|absent).
expect_state() {
	fmt=$1
	mf="$SRC/$fmt/m.${EXT[$fmt]}"
	ex="$WORK/exp/$fmt/m.${EXT[$fmt]}"
	rm -rf "$WORK/exp/$fmt"
	mkdir -p "$WORK/exp/$fmt"
	if [ ! -e "$mf" ]; then
		KIND=absent
		return 0
	fi
	set +e
	"$CONVERT" list --root "$SRC" "$mf" >/dev/null 2>&1
	rc=$?
	set -e
	case $rc in
	0) KIND=views; "$CONVERT" extract --root "$SRC" "$mf" "$ex" ;;
	1) KIND=broken; mkdir "$ex"; cp "$mf" "$ex/m.${EXT[$fmt]}" ;;
	3) KIND=plain; cp "$mf" "$ex" ;;
	*) lfs_die "legacyfs-convert list $mf: exit $rc" ;;
	esac
}

# The entries below DIR (relative), one line each: type|path|size|mtime, sizes
# of folders left out; with MTIME given, every mtime is printed as MTIME
# (expected side).
tree_stat() {
	(cd "$1" && find . -mindepth 1 -exec stat -c '%F|%n|%s|%.9Y' {} +) |
		awk -F'|' -v mt="${2:-}" 'BEGIN { OFS = "|" } { if ($1 == "directory") $3 = "-"; if (mt != "") $4 = mt; print }' | sort
}
# The same from ls -lnR: type, size, name per entry, per folder.
tree_ls() {
	(cd "$1" && ls -lnR .) | awk '/^total / { next } NF >= 9 { t = substr($1, 1, 1); print t, (t == "d" ? "-" : $5), $NF; next } { print }'
}

# state_ok FMT: 0 when every view of the model shows the expected state
# (made by expect_state); else 1 with the first difference in $WORK/why.
state_ok() {
	fmt=$1
	name="m.${EXT[$fmt]}"
	mf="$SRC/$fmt/$name"
	mm="$MNT/$fmt/$name"
	ex="$WORK/exp/$fmt/$name"
	: >"$WORK/why"
	# the parent's listing: type of the entry
	# shellcheck disable=SC2012 # the listing is what is tested; the names are plain
	line=$(ls -ln "$MNT/$fmt" | awk -v n="$name" '$NF == n')
	case $KIND in
	absent)
		[ -z "$line" ] || { echo "listing still shows $name: $line" >"$WORK/why"; return 1; }
		err=$(stat "$mm" 2>&1 >/dev/null) && { echo "stat $name succeeds" >"$WORK/why"; return 1; }
		case $err in *"No such file"*) ;; *) echo "stat $name: $err" >"$WORK/why"; return 1 ;; esac
		for p in $OLD_PATHS; do
			err=$(stat "$mm/$p" 2>&1 >/dev/null) && { echo "stat $name/$p succeeds" >"$WORK/why"; return 1; }
			case $err in *"No such file"* | *"Not a directory"*) ;; *) echo "stat $name/$p: $err" >"$WORK/why"; return 1 ;; esac
		done
		return 0
		;;
	plain)
		case $line in -*) ;; *) echo "listing: $name is not a plain file: $line" >"$WORK/why"; return 1 ;; esac
		[ -f "$mm" ] || { echo "$name is not a file" >"$WORK/why"; return 1; }
		cmp -s "$mm" "$mf" || { echo "$name: bytes differ from SOURCE" >"$WORK/why"; return 1; }
		[ "$(stat -c '%s %.9Y' "$mm")" = "$(stat -c '%s %.9Y' "$mf")" ] || { echo "$name: size/mtime $(stat -c '%s %.9Y' "$mm") != SOURCE's $(stat -c '%s %.9Y' "$mf")" >"$WORK/why"; return 1; }
		for p in $OLD_PATHS; do
			err=$(stat "$mm/$p" 2>&1 >/dev/null) && { echo "stat $name/$p succeeds" >"$WORK/why"; return 1; }
		done
		return 0
		;;
	esac
	case $line in d*) ;; *) echo "listing: $name is not a folder: $line" >"$WORK/why"; return 1 ;; esac
	[ -d "$mm" ] || { echo "$name is not a folder" >"$WORK/why"; return 1; }
	mt=$(stat -c %.9Y "$mf")
	[ "$(stat -c %.9Y "$mm")" = "$mt" ] || { echo "$name (folder): mtime $(stat -c %.9Y "$mm") != SOURCE's $mt" >"$WORK/why"; return 1; }
	# list, types, sizes (stat), mtimes
	tree_stat "$mm" >"$WORK/got.stat" 2>"$WORK/got.err" || { echo "find/stat in $name: $(head -n1 "$WORK/got.err")" >"$WORK/why"; return 1; }
	if [ "$KIND" = broken ]; then
		# README.txt is the mount's own text: its size is what reading gives
		printf '%s|./README.txt|%s|%s\n' "regular file" "$(wc -c <"$mm/README.txt")" "$mt" >"$WORK/exp.stat"
		tree_stat "$ex" "$mt" >>"$WORK/exp.stat"
		sort -o "$WORK/exp.stat" "$WORK/exp.stat"
	else
		tree_stat "$ex" "$mt" >"$WORK/exp.stat"
	fi
	if ! cmp -s "$WORK/got.stat" "$WORK/exp.stat"; then
		echo "stat of the views (type|path|size|mtime), mount vs expected: $(diff "$WORK/got.stat" "$WORK/exp.stat" | grep '^[<>]' | head -n 4 | tr '\n' ' ')" >"$WORK/why"
		return 1
	fi
	# sizes and names from ls -l
	tree_ls "$mm" >"$WORK/got.ls"
	tree_ls "$ex" >"$WORK/exp.ls"
	if [ "$KIND" = broken ]; then
		grep -v ' README\.txt$' "$WORK/got.ls" >"$WORK/got.ls2"
		mv "$WORK/got.ls2" "$WORK/got.ls"
	fi
	if ! cmp -s "$WORK/got.ls" "$WORK/exp.ls"; then
		echo "ls -lR of the views (type size name), mount vs expected: $(diff "$WORK/got.ls" "$WORK/exp.ls" | grep '^[<>]' | head -n 4 | tr '\n' ' ')" >"$WORK/why"
		return 1
	fi
	# bytes
	if [ "$KIND" = broken ]; then
		grep -q "^$name: error: ..*" "$mm/README.txt" || { echo "$name/README.txt does not start with '$name: error: ': $(head -c 200 "$mm/README.txt")" >"$WORK/why"; return 1; }
		grep -qF "$fmt/$name: " "$MNT/.legacyfs/errors" || { echo "/.legacyfs/errors lacks $fmt/$name" >"$WORK/why"; return 1; }
	fi
	if ! diff -r -x README.txt "$ex" "$mm" >"$WORK/got.diff" 2>&1; then
		echo "bytes of the views: $(head -n 3 "$WORK/got.diff" | cut -c1-200 | tr '\n' ' ')" >"$WORK/why"
		return 1
	fi
	# views of the previous state that are gone: ENOENT
	for p in $OLD_PATHS; do
		[ -e "$ex/$p" ] && continue
		[ "$KIND" = broken ] && [ "$p" = README.txt ] && continue
		err=$(stat "$mm/$p" 2>&1 >/dev/null) && { echo "stat $name/$p succeeds: a view of the old model" >"$WORK/why"; return 1; }
		case $err in *"No such file"*) ;; *) echo "stat $name/$p: $err (expected ENOENT)" >"$WORK/why"; return 1 ;; esac
	done
	return 0
}

# warm FMT: read and stat every view (the daemon's cache, the kernel's
# dentries, attributes and pages hold them now); OLD_PATHS = their paths.
warm() {
	mm="$MNT/$1/m.${EXT[$1]}"
	OLD_PATHS=""
	[ -d "$mm" ] || return 0
	OLD_PATHS=$(cd "$mm" && find . -mindepth 1 -type f -printf '%P\n' | sort)
	find "$mm" -type f -exec cat {} + >/dev/null
	find "$mm" -exec stat {} + >/dev/null
	ls -lR "$mm" >/dev/null
}

# hold FMT: open descriptors 3, 4, 5 on the model text, one mesh OBJ or
# track CSV, and thumbnail.png (those that exist); HELD = their paths.
hold() {
	mm="$MNT/$1/m.${EXT[$1]}"
	HELD=""
	[ -d "$mm" ] || return 0
	t=$(printf '%s\n' "$OLD_PATHS" | grep -m1 -E '^(model\.mdl|model\.txt|anim\.txt)$' || true)
	o=$(printf '%s\n' "$OLD_PATHS" | grep -m1 -E '^(meshes|tracks|anims|sectors)/' || true)
	h=$(printf '%s\n' "$OLD_PATHS" | grep -m1 -x 'thumbnail\.png' || true)
	[ -n "$t" ] && exec 3<"$mm/$t" && HELD="$HELD 3:$t"
	[ -n "$o" ] && exec 4<"$mm/$o" && HELD="$HELD 4:$o"
	[ -n "$h" ] && exec 5<"$mm/$h" && HELD="$HELD 5:$h"
	return 0
}

# held_read FD: the bytes at offset 0 of descriptor FD (pread: the offset
# stays), or "errno NAME" on stderr and exit 1.
held_read() {
	python3 -c '
import errno, os, sys
fd = int(sys.argv[1])
out = bytearray()
try:
    while True:
        b = os.pread(fd, 65536, len(out))
        if not b:
            break
        out += b
except OSError as e:
    sys.stderr.write("errno %s\n" % errno.errorcode.get(e.errno, e.errno))
    sys.exit(1)
sys.stdout.buffer.write(out)
' "$1"
}

# held_ok FD PATH: the held descriptor shows the new state: the new view's
# bytes when PATH is a view of the new state, else ESTALE (docs/errors.md).
held_ok() {
	: >"$WORK/why"
	rc=0
	held_read "$1" >"$WORK/held.out" 2>"$WORK/held.err" || rc=$?
	if [ "$KIND" = views ] && [ -f "$EX/$2" ]; then
		[ "$rc" = 0 ] && cmp -s "$WORK/held.out" "$EX/$2" && return 0
		echo "rc $rc $(cat "$WORK/held.err"), $(wc -c <"$WORK/held.out") bytes, expected the new view's $(wc -c <"$EX/$2")" >"$WORK/why"
		return 1
	fi
	[ "$rc" != 0 ] && grep -qx 'errno ESTALE' "$WORK/held.err" && return 0
	echo "rc $rc $(cat "$WORK/held.err"), $(wc -c <"$WORK/held.out") bytes, expected ESTALE" >"$WORK/why"
	return 1
}

# check_held FMT WHAT: poll each held descriptor (never read before) until it
# shows the new state (limit: $DEADLINE), then close it. The kernel keeps a
# held view's attributes and pages for -o timeout without the watcher, so
# without it the descriptor can show the old bytes until then.
check_held() {
	fmt=$1
	what=$2
	EX="$WORK/exp/$fmt/m.${EXT[$fmt]}"
	for h in $HELD; do
		fd=${h%%:*}
		p=${h#*:}
		while ! held_ok "$fd" "$p"; do
			if [ "$(date +%s%N)" -gt "$DEADLINE" ]; then
				lfs_fail "$what: $p held open since before the change, after ${LIMIT} s: $(cat "$WORK/why")"
				break
			fi
			sleep 0.05
		done
		if [ -s "$WORK/why" ]; then :; elif [ "$KIND" = views ] && [ -f "$EX/$p" ]; then
			lfs_ok "$what: $p held open reads the new view"
		else
			lfs_ok "$what: $p held open gives ESTALE (no such view now)"
		fi
		eval "exec $fd<&-"
	done
}

# step FMT WHAT COMMAND...: warm, hold, run COMMAND (the outside program),
# poll until every view shows the new state (limit $LIMIT s), check the
# held descriptors.
step() {
	fmt=$1
	what="$MODE: $fmt: $2"
	shift 2
	warm "$fmt"
	hold "$fmt"
	"$@" || { lfs_fail "$what: the outside change itself failed"; return 1; }
	t0=$(date +%s%N)
	expect_state "$fmt"
	DEADLINE=$((t0 + LIMIT * 1000000000))
	while ! state_ok "$fmt"; do
		if [ "$(date +%s%N)" -gt "$DEADLINE" ]; then
			lfs_fail "$what: after ${LIMIT} s still stale: $(cat "$WORK/why")"
			check_held "$fmt" "$what"
			return 1 # the later steps of this format start from a wrong state
		fi
		sleep 0.05
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	lfs_ok "$what: every view shows the new state ($KIND) after ${ms} ms"
	printf '%s\t%s\n' "$what" "$ms" >>"$WORK/latency.tsv"
	check_held "$fmt" "$what"
}

inplace() { cat "$2" >"$1"; }
replace() { cp "$2" "$(dirname "$1")/.outside.tmp" && mv "$(dirname "$1")/.outside.tmp" "$1"; }
half() { truncate -s $(($(stat -c %s "$1") / 2)) "$1"; }
zero() { truncate -s 0 "$1"; }

run_mode() {
	MODE=$1
	shift
	for fmt in $FORMATS; do
		rm -rf "${SRC:?}/$fmt"
		mkdir -p "$SRC/$fmt"
		cp "${A[$fmt]}" "$SRC/$fmt/m.${EXT[$fmt]}"
	done
	lfs_mount "$SRC" "$MNT" "$@"
	for fmt in $FORMATS; do
		mf="$SRC/$fmt/m.${EXT[$fmt]}"
		expect_state "$fmt"
		[ "$KIND" = views ] || lfs_die "precondition: $fmt A does not decode"
		OLD_PATHS=""
		state_ok "$fmt" || lfs_die "$MODE: $fmt: the mount differs from extract before any change: $(cat "$WORK/why")"
		step "$fmt" "in-place rewrite A -> B" inplace "$mf" "${B[$fmt]}" &&
			step "$fmt" "replace (rename over) B -> A" replace "$mf" "${A[$fmt]}" &&
			step "$fmt" "truncate to half" half "$mf" &&
			step "$fmt" "replace half -> B" replace "$mf" "${B[$fmt]}" &&
			step "$fmt" "in-place rewrite B -> corrupt B" inplace "$mf" "$GEN/broken.${EXT[$fmt]}" &&
			step "$fmt" "truncate to 0" zero "$mf" &&
			step "$fmt" "in-place rewrite empty -> A" inplace "$mf" "${A[$fmt]}" &&
			step "$fmt" "delete" rm "$mf" ||
			lfs_log "$MODE: $fmt: later steps left out"
	done
	lfs_umount "$MNT"
}

LIMIT=10
run_mode watcher
LIMIT=11 # the timeout (1 s) + the same margin
run_mode "nowatch,timeout=1" -o nowatch,timeout=1

# measured: the slowest step of each mode (the limit is $LIMIT s)
for m in watcher nowatch; do
	awk -F'\t' -v m="$m" 'index($1, m) == 1 { n++; if ($2 > max) { max = $2; w = $1 } }
		END { if (n) printf "%s: %d steps, slowest %d ms (%s)\n", m, n, max, w }' "$WORK/latency.tsv" >&2
done
lfs_finish
