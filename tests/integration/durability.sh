#!/bin/bash
# Durability of a commit (issue 15; docs/editing.md "How a save reaches
# SOURCE", step 5, and "After a crash"). The LD_PRELOAD shim
# syscall_shim.c (built for the tests only; its path is $1, the build's
# b_sanitize $2) records every call the daemon (or legacyfs-convert) makes on
# a path below SOURCE, fails the Nth call of a kind (SHIM_FAIL) or kills the
# process at it (SHIM_KILL).
#  a. the calls of one save, for a model saved through the mount (sed -i,
#     model owned by another user), for `legacyfs-convert apply -o OUT` (mode
#     0640) and for a model inside a hak: the folder opened O_DIRECTORY, a
#     temporary file `.<name>.legacyfs-<pid>-<n>` created O_EXCL beside the
#     target, all the new bytes written to it, its owner (fchown, when it
#     differs) and mode (fchmod) set, fsync of it, close, rename over the
#     target, fsync of the folder, in that order; nothing opens the target
#     for writing, writes, truncates or unlinks it;
#  b. one failure injected at each step (the temporary file's write ENOSPC,
#     its fsync EIO, the rename EIO, the folder's fsync EIO): the model is
#     exactly the old or the new bytes, no temporary file is left, the
#     writer's close(2) fails with that errno and errors.txt says which step
#     failed; a failing folder fsync is a save with a warning (documented);
#  c. the daemon killed (SIGKILL) at each step: the model is exactly old
#     (kill before the rename) or new (after it); the next mount removes the
#     temporary file left behind and lists it in /.legacyfs/errors.
. "$(dirname "$0")/edit_lib.sh"
SHIM=${1:-}
SAN=${2:-none}
[ -n "$SHIM" ] && [ -f "$SHIM" ] || lfs_die "usage: durability.sh SHIM.so [b_sanitize] (run through meson test)"
edit_setup durability
HAK=models_v1.hak
AHAK="$LFS_CORPUS/archives/gen/nwn_erf/$HAK"
if [ -f "$AHAK" ]; then
	# shellcheck disable=SC2153  # SRC: set by edit_setup
	cp "$AHAK" "$SRC/"
	chmod 0644 "$SRC/$HAK"
else
	lfs_log "NOTE: $AHAK not found: the save inside a hak is left out"
fi
RSRC=$(realpath "$SRC")
LOG="$WORK/shim.log"
M=$EDIT_NOD

# The shim must come after the sanitizer runtime (ASan, TSan), which wants to
# be first in the list of libraries: LD_PRELOAD=libasan.so:shim.so.
PRELOAD=$SHIM
case $SAN in
*address* | *thread*)
	rt=$(ldd "$LEGACYFS" | awk '/lib[at]san/ { print $3; exit }')
	[ -n "$rt" ] && [ -f "$rt" ] || lfs_skip "b_sanitize=$SAN: no sanitizer runtime in ldd of legacyfs to preload before the shim"
	PRELOAD="$rt:$SHIM"
	;;
esac

# A probe: the shim loads and records in this build (with its sanitizer).
mkdir -p "$WORK/probe"
: >"$WORK/probe.log"
if ! LD_PRELOAD=$PRELOAD SHIM_ROOT="$(realpath "$WORK/probe")" SHIM_LOG="$WORK/probe.log" \
	python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY|os.O_CREAT, 0o644); os.write(fd, b"x"); os.fsync(fd); os.close(fd)' \
	"$WORK/probe/f" 2>"$WORK/probe.err" || ! grep -q '^fsync ' "$WORK/probe.log"; then
	[ "$SAN" != none ] && lfs_skip "the LD_PRELOAD shim does not work with b_sanitize=$SAN: $(head -c 300 "$WORK/probe.err")"
	lfs_die "the LD_PRELOAD shim records nothing: $(head -c 300 "$WORK/probe.err")"
fi

# shim_mount: mount SOURCE with the shim in the daemon only (SHIM_FAIL /
# SHIM_KILL from the caller's environment).
shim_mount() {
	: >"$LOG"
	# shellcheck disable=SC2034  # exported to lfs_mount's daemon
	LD_PRELOAD=$PRELOAD SHIM_EXE=legacyfs SHIM_ROOT=$RSRC SHIM_LOG=$LOG \
		SHIM_FAIL=${SHIM_FAIL:-} SHIM_KILL=${SHIM_KILL:-} lfs_mount "$SRC" "$MNT"
}

# seq_check LOG TARGET MODE [UID GID]: the calls of exactly one atomic
# replace of TARGET in LOG, in the documented order (see the header).
seq_check() {
	python3 - "$@" <<'EOF'
import os, re, sys
log, target, mode = sys.argv[1], sys.argv[2], sys.argv[3]
owner = (sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else None
d, base = os.path.split(target)
tmp_re = re.compile(re.escape(d + '/.' + base + '.legacyfs-') + r'[0-9]+-[0-9]+$')
ev = []
for line in open(log, errors='replace'):
    w = line.split()
    if len(w) < 2:
        continue
    ev.append((w[0], w[1:], line.strip()))
fails = []
def fail(m):
    fails.append(m)
def find(pred, start=0):
    for i in range(start, len(ev)):
        if pred(*ev[i][:2]):
            return i
    return -1
# nothing touches TARGET in place
for c, a, l in ev:
    if a[0] == target and (c in ('write', 'pwrite', 'writev', 'ftruncate', 'truncate', 'unlink', 'unlinkat')
                           or (c in ('open', 'openat', 'creat') and re.search(r'O_WRONLY|O_RDWR|O_TRUNC|O_CREAT', l))):
        fail('the target is written in place: ' + l)
    if c.startswith('rename') and len(a) > 1 and a[1] == target and not tmp_re.match(a[0]):
        fail('something other than the temporary file is renamed over the target: ' + l)
creates = [i for i, (c, a, l) in enumerate(ev) if c in ('open', 'openat') and tmp_re.match(a[0]) and 'O_CREAT' in l]
if len(creates) != 1:
    print('FAIL: %d temporary files created for %s (want 1)' % (len(creates), target))
    sys.exit(1)
ic = creates[0]
tmp = ev[ic][1][0]
if 'O_EXCL' not in ev[ic][2]:
    fail('the temporary file is not created with O_EXCL: ' + ev[ic][2])
idir = -1
for i in range(ic - 1, -1, -1):
    c, a, l = ev[i]
    if c in ('open', 'openat') and a[0].rstrip('/.').rstrip('/') == d and 'O_DIRECTORY' in l:
        idir = i
        break
if idir < 0:
    fail('missing step: the folder is not opened O_DIRECTORY before the temporary file is created')
on_tmp = lambda names: (lambda c, a: c in names and a[0] == tmp)
writes = [i for i in range(len(ev)) if on_tmp(('write', 'pwrite', 'writev'))(*ev[i][:2])]
size = os.path.getsize(target)
nw = sum(int(ev[i][2].rsplit('= ', 1)[1]) for i in writes if not ev[i][2].endswith('INJECTED') and '= -' not in ev[i][2])
if not writes:
    fail('missing step: no write to the temporary file')
elif nw != size:
    fail('the writes to the temporary file total %d bytes, the new target has %d' % (nw, size))
elif writes[0] < ic:
    fail('a write to the temporary file before its creation')
lastw = writes[-1] if writes else ic
isync = find(on_tmp(('fsync', 'fdatasync')), lastw)
irn = find(lambda c, a: c.startswith('rename') and a[0] == tmp and len(a) > 1 and a[1] == target)
if isync < 0:
    fail('missing step: fsync of the temporary file after its last write (%s)' % tmp)
if irn < 0:
    fail('missing step: rename of the temporary file over the target')
icl = find(on_tmp(('close',)), lastw)
if icl < 0 or (irn >= 0 and icl > irn):
    fail('the temporary file is not closed before the rename')
if isync >= 0 and irn >= 0 and isync > irn:
    fail('the temporary file is fsynced after the rename')
if isync >= 0 and icl >= 0 and icl < isync:
    fail('the temporary file is closed before its fsync')
ich = find(lambda c, a: c == 'fchmod' and a[0] == tmp, ic)
if ich < 0:
    fail('missing step: fchmod of the temporary file to the original mode %s' % mode)
else:
    if 'mode=%04o' % int(mode, 8) not in ev[ich][2]:
        fail('fchmod to the wrong mode: %s (want %s)' % (ev[ich][2], mode))
    if isync >= 0 and ich > isync:
        fail('fchmod after the fsync of the temporary file')
ico = find(lambda c, a: c == 'fchown' and a[0] == tmp, ic)
if owner:
    if ico < 0:
        fail('missing step: fchown of the temporary file to the original owner %s:%s' % owner)
    elif 'uid=%s gid=%s' % owner not in ev[ico][2] or (isync >= 0 and ico > isync):
        fail('fchown wrong or after the fsync: ' + ev[ico][2])
elif ico >= 0:
    fail('fchown although the owner is the same: ' + ev[ico][2])
idsync = find(lambda c, a: c in ('fsync', 'fdatasync') and a[0] == d and ' dir' in ' ' + ' '.join(a[1:]),
              irn if irn >= 0 else 0)
if idsync < 0 or irn < 0:
    fail('missing step: fsync of the folder %s after the rename' % d)
if find(lambda c, a: c == 'unlinkat' and a[0] == tmp) >= 0:
    fail('the temporary file is unlinked in a save that succeeded')
for m in fails:
    print('FAIL: ' + m)
if fails:
    sys.exit(1)
print('O_DIRECTORY %s, create %s O_EXCL, %d write(s) of %d bytes, %sfchmod %s, fsync, close, rename, fsync of the folder'
      % (d, os.path.basename(tmp), len(writes), nw, 'fchown %s:%s, ' % owner if owner else '', mode))
EOF
}

# check_seq WHAT TARGET MODE [UID GID]
check_seq() {
	local what=$1 out
	shift
	if out=$(seq_check "$LOG" "$@"); then
		lfs_ok "$what: $out"
	else
		lfs_fail "$what: $(tr '\n' ' ' <<<"$out")"
		lfs_log "calls recorded:"
		grep -F -e "$(dirname "$1")" "$LOG" | grep -v -e '^close .* dir = ' | head -60 >&2
	fi
}

no_temps() { ! find "$SRC" -name '.*legacyfs-*' | grep -q .; }

# new_text OUT.txt OUT.bin VALUE: an edit of the NOD's model.txt and the
# bytes `legacyfs-convert apply` makes of it.
new_text() {
	"$CONVERT" cat --root "$SRC" "$SRC/$M" model.txt >"$WORK/cur.txt"
	edit_py subst "$WORK/cur.txt" '^  resttranslate ' 2 space "$3" "$1" >/dev/null ||
		lfs_die "no value to edit in $M"
	edit_apply "$SRC/$M" model.txt "$1" "$2" || lfs_die "the reference refuses the edit"
	cmp -s "$2" "$SRC/$M" && lfs_die "the edit does not change $M"
	return 0
}

# writer FILE TEXT: write TEXT over FILE in place and close it, as an editor
# saving in place does; prints OK or the errno's name of the failing call.
writer() {
	timeout -k 5 60 python3 -c '
import errno, os, sys
data = open(sys.argv[2], "rb").read()
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
except OSError as e:
    print("open:" + errno.errorcode.get(e.errno, str(e.errno))); sys.exit(0)
try:
    os.write(fd, data)
except OSError as e:
    print("write:" + errno.errorcode.get(e.errno, str(e.errno))); sys.exit(0)
try:
    os.close(fd)
except OSError as e:
    print("close:" + errno.errorcode.get(e.errno, str(e.errno))); sys.exit(0)
print("OK")' "$1" "$2"
}

# ---- a. the calls of a save ----------------------------------------------
chown 4321:4321 "$SRC/$M" 2>/dev/null && owner=(4321 4321) || owner=()
shim_mount
cp "$SRC/$M" "$WORK/old.bin"
new_text "$WORK/new.txt" "$WORK/new.bin" 1.5
n=$(grep -n '^  resttranslate ' "$WORK/cur.txt" | head -1 | cut -d: -f1)
nl=$(sed -n "${n}p" "$WORK/new.txt")
: >"$LOG"
sed -i "${n}s|.*|$nl|" "$MNT/$M/model.txt" || lfs_fail "sed -i through the mount failed"
cmp -s "$SRC/$M" "$WORK/new.bin" || lfs_fail "sed -i: the model is not legacyfs-convert apply's result"
check_seq "save through the mount (sed -i $M/model.txt)" "$RSRC/$M" 644 "${owner[@]}"
if [ ${#owner[@]} = 2 ]; then
	[ "$(stat -c %u:%g "$SRC/$M")" = 4321:4321 ] && lfs_ok "the model keeps its owner 4321:4321" ||
		lfs_fail "the model's owner is $(stat -c %u:%g "$SRC/$M") after the save (want 4321:4321)"
	chown 0:0 "$SRC/$M"
fi
[ "$(stat -c %a "$SRC/$M")" = 644 ] || lfs_fail "the model's mode is $(stat -c %a "$SRC/$M") after the save"

if [ -f "$SRC/$HAK" ]; then
	E="$MNT/$HAK/c_aribeth.mdl/model.mdl"
	cp "$SRC/$HAK" "$WORK/hak.old"
	hn=$(grep -n '^  position ' "$E" | head -1 | cut -d: -f1)
	hl=$(sed -n "${hn}p" "$E" | awk '{ $2 = "0.75"; print "  " $0 }')
	: >"$LOG"
	sed -i "${hn}s|.*|$hl|" "$E" || lfs_fail "sed -i inside the hak failed"
	cmp -s "$SRC/$HAK" "$WORK/hak.old" && lfs_fail "the save inside the hak did not change $HAK"
	check_seq "save inside a hak (sed -i $HAK/c_aribeth.mdl/model.mdl)" "$RSRC/$HAK" 644
fi
lfs_umount "$MNT"

OUTD="$WORK/out"
mkdir -p "$OUTD"
OUT="$(realpath "$OUTD")/out.nod"
cp "$WORK/old.bin" "$OUT"
chmod 0640 "$OUT"
new_text "$WORK/c.txt" "$WORK/c.bin" 2.5
: >"$LOG"
LD_PRELOAD=$PRELOAD SHIM_EXE=legacyfs-convert SHIM_ROOT=$(realpath "$OUTD") SHIM_LOG=$LOG \
	"$CONVERT" apply "$SRC/$M" model.txt "$WORK/c.txt" -o "$OUT" || lfs_fail "legacyfs-convert apply -o failed"
cmp -s "$OUT" "$WORK/c.bin" || lfs_fail "legacyfs-convert apply -o OUT: OUT is not the result"
check_seq "legacyfs-convert apply -o OUT" "$OUT" 640
# apply -o with a failing step: OUT untouched, no temporary file, the step named
for spec in write:1:ENOSPC fsync:1:EIO renameat:1:EIO; do
	cp "$WORK/old.bin" "$OUT"
	: >"$LOG"
	rc=0
	LD_PRELOAD=$PRELOAD SHIM_EXE=legacyfs-convert SHIM_ROOT=$(realpath "$OUTD") SHIM_LOG=$LOG SHIM_FAIL=$spec \
		"$CONVERT" apply "$SRC/$M" model.txt "$WORK/c.txt" -o "$OUT" 2>"$WORK/apply.err" || rc=$?
	step=${spec%%:*}
	step=${step%at}
	e=${spec##*:}
	want=$([ "$e" = ENOSPC ] && echo 'No space left on device' || echo 'Input/output error')
	if [ "$rc" != 0 ] && cmp -s "$OUT" "$WORK/old.bin" && ! find "$OUTD" -name '.*legacyfs-*' | grep -q . &&
		grep -q "out.nod: error: $step .*: $want" "$WORK/apply.err"; then
		lfs_ok "apply -o with $spec: exit $rc, OUT untouched, no temporary file: $(cat "$WORK/apply.err")"
	else
		lfs_fail "apply -o with $spec: exit $rc, OUT $(cmp -s "$OUT" "$WORK/old.bin" && echo old || echo changed), temps: $(find "$OUTD" -name '.*legacyfs-*' | tr '\n' ' '), stderr: $(cat "$WORK/apply.err")"
	fi
done
# the folder's fsync failing after the rename: OUT is new, but apply says the
# folder fsync failed and exits 1 (lfs_replace_file() returns its errno, replace.h)
cp "$WORK/old.bin" "$OUT"
: >"$LOG"
rc=0
LD_PRELOAD=$PRELOAD SHIM_EXE=legacyfs-convert SHIM_ROOT=$(realpath "$OUTD") SHIM_LOG=$LOG SHIM_FAIL=fsync:2:EIO \
	"$CONVERT" apply "$SRC/$M" model.txt "$WORK/c.txt" -o "$OUT" 2>"$WORK/apply.err" || rc=$?
if [ "$rc" = 1 ] && cmp -s "$OUT" "$WORK/c.bin" && grep -q "^fsync $(realpath "$OUTD") dir = -EIO INJECTED" "$LOG" &&
	grep -q "out.nod: error: fsync folder .*: Input/output error" "$WORK/apply.err"; then
	lfs_ok "apply -o with the folder's fsync failing: exit 1, OUT new: $(cat "$WORK/apply.err")"
else
	lfs_fail "apply -o with the folder's fsync failing: exit $rc, OUT $(cmp -s "$OUT" "$WORK/c.bin" && echo new || echo not new), stderr: $(cat "$WORK/apply.err"), injected: $(grep INJECTED "$LOG")"
fi

# ---- b. a failure at each step -------------------------------------------
# SPEC|the call it must hit|the writer's close|errors.txt
cases=(
	"write:1:ENOSPC|write $RSRC/.$M.legacyfs-|close:ENOSPC|$M failed (write .$M.legacyfs-[0-9]*-[0-9]*): No space left on device; the model file is unchanged"
	"fsync:1:EIO|fsync $RSRC/.$M.legacyfs-|close:EIO|$M failed (fsync .$M.legacyfs-[0-9]*-[0-9]*): Input/output error; the model file is unchanged"
	"renameat:1:EIO|renameat $RSRC/.$M.legacyfs-|close:EIO|$M failed (rename .$M.legacyfs-[0-9]*-[0-9]*): Input/output error; the model file is unchanged"
	# a share that refuses to replace an open file (SMB): said plainly (issue 25)
	"renameat:1:EACCES|renameat $RSRC/.$M.legacyfs-|close:EACCES|$M failed (rename .$M.legacyfs-[0-9]*-[0-9]*: the file system refuses to replace $M by renaming (needed for an atomic save; it is untouched)): Permission denied; the model file is unchanged"
	"fsync:2:EIO|fsync $RSRC dir|OK|model.txt: warning: saved, but not confirmed durable: fsync of the folder failed: Input/output error (errno 5)"
)
v=3
for c in "${cases[@]}"; do
	IFS='|' read -r spec hit wantw wantmsg <<<"$c"
	v=$((v + 1))
	what="failure $spec"
	SHIM_FAIL=$spec shim_mount
	cp "$SRC/$M" "$WORK/old.bin"
	new_text "$WORK/new.txt" "$WORK/new.bin" "$v.5"
	got=$(writer "$MNT/$M/model.txt" "$WORK/new.txt")
	inj=$(grep ' INJECTED$' "$LOG" || true)
	if [ -z "$inj" ] || [ "${inj#"$hit"}" = "$inj" ]; then
		lfs_fail "$what: the injected failure hit '$inj', not '$hit...' (the step is missing or moved)"
	fi
	if cmp -s "$SRC/$M" "$WORK/old.bin"; then state=old
	elif cmp -s "$SRC/$M" "$WORK/new.bin"; then state=new
	else state=mixed; fi
	want_state=old
	[ "$wantw" = OK ] && want_state=new
	[ "$state" = "$want_state" ] || lfs_fail "$what: the model is $state bytes (want exactly $want_state)"
	[ "$got" = "$wantw" ] || lfs_fail "$what: the writer saw $got (want $wantw)"
	no_temps || lfs_fail "$what: temporary file left: $(find "$SRC" -name '.*legacyfs-*' | tr '\n' ' ')"
	msg=$(cat "$MNT/$M/$EDIT_MSGFILE" 2>/dev/null || true)
	grep -q -e "$wantmsg" <<<"$msg" || lfs_fail "$what: errors.txt says '$msg' (want '$wantmsg')"
	if [ "$wantw" = OK ]; then
		grep -q 'not saved' <<<"$msg" && lfs_fail "$what: errors.txt says 'not saved' for a save that landed"
		edit_check_views "$M" "$what"
	else
		grep -q -e "not saved" <<<"$msg" || lfs_fail "$what: errors.txt does not say 'not saved'"
		"$CONVERT" cat --root "$SRC" "$SRC/$M" model.txt | cmp -s - "$MNT/$M/model.txt" ||
			lfs_fail "$what: the view does not show the model file's text again"
	fi
	lfs_ok "$what: model $state, writer $got, no temporary file, errors.txt: $(grep -m1 -e "$wantmsg" <<<"$msg")"
	lfs_umount "$MNT"
done

# ---- c. the daemon killed at each step ----------------------------------
# SPEC|the call it must hit|model after the kill|temporary file after the kill (empty|new)
kills=(
	"write:1|write $RSRC/.$M.legacyfs-|old|empty"
	"fsync:1|fsync $RSRC/.$M.legacyfs-|old|new"
	"renameat:1|renameat $RSRC/.$M.legacyfs-|old|new"
	"fsync:2|fsync $RSRC dir|new|none"
)
for c in "${kills[@]}"; do
	IFS='|' read -r spec hit wantm wantt <<<"$c"
	v=$((v + 1))
	what="kill at $spec"
	SHIM_KILL=$spec shim_mount
	pid=$LFS_PID
	cp "$SRC/$M" "$WORK/old.bin"
	new_text "$WORK/new.txt" "$WORK/new.bin" "$v.5"
	got=$(writer "$MNT/$M/model.txt" "$WORK/new.txt")
	k=$(grep '^KILL ' "$LOG" || true)
	if [ -z "$k" ]; then # the call never came: the daemon lives on
		lfs_fail "$what: the save never reached '$hit...' (the step is missing)"
		lfs_umount "$MNT"
		continue
	fi
	wait "$pid" 2>/dev/null || true
	timeout 10 fusermount3 -u "$MNT" 2>/dev/null || timeout 10 fusermount3 -uz "$MNT" 2>/dev/null || true
	if [ "${k#"KILL $hit"}" = "$k" ]; then
		lfs_fail "$what: the kill hit '$k', not '$hit...' (the step is missing or moved)"
	fi
	if cmp -s "$SRC/$M" "$WORK/old.bin"; then state=old
	elif cmp -s "$SRC/$M" "$WORK/new.bin"; then state=new
	else state=mixed; fi
	[ "$state" = "$wantm" ] || lfs_fail "$what: after the kill the model is $state bytes (want exactly $wantm)"
	mapfile -t temps < <(find "$SRC" -name '.*legacyfs-*')
	case $wantt in
	none) [ ${#temps[@]} = 0 ] || lfs_fail "$what: temporary files left after the rename: ${temps[*]}" ;;
	empty) [ ${#temps[@]} = 1 ] && [ ! -s "${temps[0]}" ] || lfs_fail "$what: want one empty temporary file, found: ${temps[*]}" ;;
	new) [ ${#temps[@]} = 1 ] && cmp -s "${temps[0]}" "$WORK/new.bin" || lfs_fail "$what: want one temporary file with the new bytes, found: ${temps[*]}" ;;
	esac
	lfs_mount "$SRC" "$MNT"
	no_temps || lfs_fail "$what: the next mount left the temporary file: $(find "$SRC" -name '.*legacyfs-*' | tr '\n' ' ')"
	if [ "$wantt" != none ]; then
		tb=$(basename "${temps[0]}")
		wpid=${tb##*legacyfs-}
		wpid=${wpid%-*}
		grep -F "$tb: writer $wpid is not running; " "$MNT/.legacyfs/errors" | grep -q 'removed$' ||
			lfs_fail "$what: /.legacyfs/errors does not list $tb as removed: $(cat "$MNT/.legacyfs/errors")"
	fi
	"$CONVERT" cat --root "$SRC" "$SRC/$M" model.txt | cmp -s - "$MNT/$M/model.txt" ||
		lfs_fail "$what: after the remount model.txt is not the model file's text"
	lfs_ok "$what: writer saw $got; model $state; temporary file: $wantt; after the remount none is left${tb:+, /.legacyfs/errors lists $tb}"
	tb=
	lfs_umount "$MNT"
done
lfs_finish
