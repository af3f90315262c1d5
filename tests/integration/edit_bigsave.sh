#!/bin/bash
# Bounded saves (issue 24 item 4, docs/editing.md "Refused saves", "Too
# large"): a save takes a text of at most edit_size/16. With
# -o edit_size=8 (a 512 KiB save bound), a 30 MB in-place write of a valid
# mesh OBJ (the view's text and 30 MB of more vertices) must fail at the
# write and at close() with EFBIG, leave the model file untouched, say so in
# errors.txt naming -o edit_size, and the daemon's peak resident size
# (VmHWM) must grow by at most the documented 2 x edit_size during the save
# (a memory bound, not a timing). A scratch file over the bound renamed onto
# the view (sed -i, os.replace) is refused the same way; a write that the
# full edit memory refused (ENOSPC) is not committed as the cut text. A save
# under the bound still lands.
. "$(dirname "$0")/edit_lib.sh"
edit_setup edit_bigsave
# shellcheck disable=SC2034  # read by edit_mount (edit_lib.sh)
EDIT_MOUNT_OPTS="-o edit_size=8"
edit_mount
model=$EDIT_NOD
view=$(edit_first_view "$model" 'meshes/*.obj')
[ -n "$view" ] || lfs_die "no mesh OBJ view in $model"
# shellcheck disable=SC2154  # pid: set by lfs_mount (lib.sh), the timeout wrapping the daemon
daemon=$(ps -o pid= --ppid "$pid" | tr -d ' ' | head -n1)
[ -n "$daemon" ] && [ -r "/proc/$daemon/status" ] || lfs_die "cannot find the daemon under pid $pid"
hwm() { awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$daemon/status"; }
# the model's views built, the view read: what the daemon holds before the save
cat "$MNT/$model/$view" >"$WORK/view.obj"
cat "$MNT/$model/model.txt" >/dev/null
before=$(hwm)

python3 - "$MNT/$model/$view" "$WORK/view.obj" <<'PY' || lfs_die "in-place write over the bound"
import errno, os, sys
path, orig = sys.argv[1], open(sys.argv[2], 'rb').read()
chunk = b'v 0.125 0.25 0.5\n' * 4096
fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
written, werr = 0, None
os.write(fd, orig)
try:
    while written < 30 * 1000 * 1000:
        written += os.write(fd, chunk)
except OSError as e:
    werr = e.errno
try:
    os.close(fd)
    cerr = None
except OSError as e:
    cerr = e.errno
print('written %d before the error, write: %s, close: %s' % (written, werr and errno.errorcode[werr], cerr and errno.errorcode[cerr]))
sys.exit(0 if werr == errno.EFBIG and cerr == errno.EFBIG else 1)
PY
after=$(hwm)
lfs_log "daemon VmHWM before $before, after $after bytes"
cmp -s "$SRC/$model" "$WORK/ref/$model" || lfs_die "$model changed by a refused save"
grep -q "^$view: error: not saved: the text is larger than a save may be.*-o edit_size" "$MNT/$model/$EDIT_MSGFILE" ||
	lfs_die "errors.txt does not name the bound: $(cat "$MNT/$model/$EDIT_MSGFILE" 2>&1)"
cmp -s "$MNT/$model/$view" "$WORK/view.obj" || lfs_die "$view does not show the generated text again"
if grep -q -e libasan -e libtsan "/proc/$daemon/maps"; then
	lfs_log "sanitizer build: peak memory not checked"
else
	[ $((after - before)) -le $((2 * 8 * 1024 * 1024)) ] ||
		lfs_die "a refused save raised the daemon's peak by $((after - before)) bytes, over 2 x edit_size"
fi

# a scratch file over the bound (but within edit_size) renamed onto the view
python3 - "$MNT/$model/$view" "$WORK/view.obj" <<'PY' || lfs_die "rename of a large scratch file"
import errno, os, sys
path, orig = sys.argv[1], open(sys.argv[2], 'rb').read()
tmp = os.path.join(os.path.dirname(path), 'big.tmp')
with open(tmp, 'wb') as f:
    f.write(orig + b'v 0.125 0.25 0.5\n' * 40000)
try:
    os.replace(tmp, path)
    sys.exit('rename of a %d-byte text over the save bound succeeded' % os.path.getsize(tmp))
except OSError as e:
    if e.errno != errno.EFBIG:
        raise
    os.unlink(tmp)
PY
cmp -s "$SRC/$model" "$WORK/ref/$model" || lfs_die "$model changed by a refused rename"

# the edit memory full (a 7.9 MiB scratch file): a write under the save
# bound that does not fit fails with ENOSPC, and the close must not save the
# text cut where the write failed
python3 - "$MNT/$model/$view" "$WORK/view.obj" <<'PY' || lfs_die "write into a full edit memory"
import errno, os, sys
path, orig = sys.argv[1], open(sys.argv[2], 'rb').read()
filler = os.path.join(os.path.dirname(path), 'filler.tmp')
with open(filler, 'wb') as f:
    f.write(b'x' * (8 * 1024 * 1024 - 100 * 1024))
fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
werr = cerr = None
try:
    os.write(fd, orig)
    for _ in range(20):
        os.write(fd, b'v 0.125 0.25 0.5\n' * 1024)
except OSError as e:
    werr = e.errno
try:
    os.close(fd)
except OSError as e:
    cerr = e.errno
os.unlink(filler)
print('write: %s, close: %s' % (werr and errno.errorcode[werr], cerr and errno.errorcode[cerr]))
sys.exit(0 if werr == errno.ENOSPC and cerr == errno.ENOSPC else 1)
PY
cmp -s "$SRC/$model" "$WORK/ref/$model" || lfs_die "$model changed by a cut text"
grep -q "^$view: error: not saved: a write to this text failed (ENOSPC" "$MNT/$model/$EDIT_MSGFILE" ||
	lfs_die "errors.txt does not say the text was cut: $(cat "$MNT/$model/$EDIT_MSGFILE" 2>&1)"

# under the bound: a real edit lands
python3 - "$MNT/$model/$view" "$WORK/view.obj" <<'PY' || lfs_die "save under the bound"
import sys
path, orig = sys.argv[1], open(sys.argv[2]).read().split('\n')
for i, l in enumerate(orig):
    if l.startswith('v '):
        p = l.split()
        orig[i] = 'v %s %s %s' % (float(p[1]) + 0.25, p[2], p[3])
        break
open(path, 'w').write('\n'.join(orig))
PY
cmp -s "$SRC/$model" "$WORK/ref/$model" && lfs_die "a save under the bound did not change $model"
lfs_log "ok"
