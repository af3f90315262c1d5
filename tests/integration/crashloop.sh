#!/bin/bash
# Crash loop (docs/editing.md "After a crash"): SIGKILL the daemon at
# random moments of a save, KILLS times, and check after every kill that
#  - the model file in SOURCE is the old bytes or the new ones (never a mix:
#    the expected new bytes come from `legacyfs-convert apply` on the old),
#    and it decodes (`legacyfs-convert list`);
#  - a save the writer saw succeed (close(2) returned 0) has landed;
#  - after the next mount no temporary file `.<model>.legacyfs-<pid>-<n>`
#    of a dead daemon is left in SOURCE (mount-time recovery), and none is
#    ever listed in the mount.
#
# Usage: crashloop.sh [KILLS [SEED]]  (defaults: $LFS_CRASH_KILLS or 200,
# $LFS_CRASH_SEED or 11). Half the kills come at a delay uniform in [0, 1.5 x
# the time of one undisturbed save], half just after the save's temporary
# file appears (see killer); delays are drawn from SEED, so a run is
# repeatable up to the machine's timing. The longer run is documented in
# docs/editing.md "After a crash".
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
MODEL=c_orcus.nod
[ -n "${LFS_CORPUS:-}" ] && [ -f "$LFS_CORPUS/nod/$MODEL" ] || lfs_skip "corpus not found (LFS_CORPUS=${LFS_CORPUS:-})"
KILLS=${1:-${LFS_CRASH_KILLS:-200}}
SEED=${2:-${LFS_CRASH_SEED:-11}}
EDIT_TOOL="$LFS_SOURCE_ROOT/tests/integration/edit_tool.py"

lfs_workdir crashloop
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC" "$MNT"
cp "$LFS_CORPUS/nod/$MODEL" "$SRC/"
chmod 644 "$SRC/$MODEL"
LOG="$WORK/daemon.log"

# Two texts to alternate: the generated one and one with a bone moved.
"$CONVERT" cat "$SRC/$MODEL" model.txt >"$WORK/A.txt"
python3 "$EDIT_TOOL" subst "$WORK/A.txt" '^  resttranslate ' 2 space 0.25 "$WORK/B.txt" >/dev/null
cmp -s "$WORK/A.txt" "$WORK/B.txt" && lfs_die "precondition: the edit changed nothing"

DPID=""
# Start the daemon directly (no `timeout` wrapper: its pid is the one killed).
start() {
	"$LEGACYFS" -f "$SRC" "$MNT" 2>>"$LOG" &
	DPID=$!
	i=0
	while ! mountpoint -q "$MNT"; do
		kill -0 "$DPID" 2>/dev/null || { cat "$LOG" >&2; lfs_die "legacyfs exited before mounting"; }
		i=$((i + 1))
		[ $i -le 300 ] || lfs_die "timeout waiting for the mount"
		sleep 0.02
	done
}
stop_dead() {
	timeout 10 fusermount3 -u "$MNT" 2>/dev/null || timeout 10 fusermount3 -uz "$MNT" 2>/dev/null || true
	wait "$DPID" 2>/dev/null || true
	DPID=""
}
crash_cleanup() {
	st=$?
	set +e
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
	mountpoint -q "$MNT" && { timeout 10 fusermount3 -u "$MNT" || timeout 10 fusermount3 -uz "$MNT"; }
	(exit "$st")
	lfs_cleanup
}
trap crash_cleanup EXIT

# writer TEXT: write TEXT into the view in place and close; exit 0 only when
# close(2) (the commit) succeeded.
writer() {
	timeout 30 python3 -c '
import os, sys
data = open(sys.argv[2], "rb").read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, data)
os.close(fd)
' "$MNT/$MODEL/model.txt" "$1" 2>/dev/null
}

# killer K WRITER_PID: SIGKILL the daemon. Odd K: after a delay uniform in
# [0, WIN_US] us from now. Even K: as soon as a temporary file of the save
# appears in SOURCE (polled; or the writer ends), plus a delay uniform in
# [0, 5000] us: the write/fsync/rename steps themselves. Delays come from
# random.Random(SEED * 100003 + K). Prints what it did.
killer() {
	python3 - "$1" "$2" "$DPID" "$SEED" "$WIN_US" "$SRC" <<'PY'
import os, random, sys, time
k, wpid, dpid, seed, win, src = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                 int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
r = random.Random(seed * 100003 + k)
if k % 2:
    d = r.randint(0, win)
    time.sleep(d / 1e6)
    what = "uniform %d us" % d
else:
    d = r.randint(0, 5000)
    end = time.monotonic() + 30
    seen = False
    while time.monotonic() < end:
        if any(".legacyfs-" in n for n in os.listdir(src)):
            seen = True
            break
        try:  # the writer ended (gone, or a zombie its shell has not reaped)
            with open("/proc/%d/stat" % wpid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
    time.sleep(d / 1e6)
    what = "temp %s + %d us" % ("seen" if seen else "not seen", d)
os.kill(dpid, 9)
print(what)
PY
}

temps() { find "$SRC" -name ".*.legacyfs-[0-9]*-[0-9]*" | sort; }

# Window: one undisturbed save, timed (only to spread the kills; never asserted).
start
t0=$(date +%s%N)
writer "$WORK/B.txt" || lfs_die "precondition: an undisturbed save fails"
t1=$(date +%s%N)
writer "$WORK/A.txt" || lfs_die "precondition: an undisturbed save fails"
WIN_US=$(((t1 - t0) / 1000 * 3 / 2))
export SEED
[ "$WIN_US" -ge 1000 ] || WIN_US=1000
lfs_log "save takes $(((t1 - t0) / 1000)) us; kills uniform in [0, $WIN_US] us; $KILLS kills, seed $SEED"

n_old=0 n_new=0 n_same=0 n_acked=0 n_left=0
for ((k = 1; k <= KILLS; k++)); do
	cp "$SRC/$MODEL" "$WORK/cur.nod"
	if ((k % 2)); then text="$WORK/B.txt"; else text="$WORK/A.txt"; fi
	"$CONVERT" apply "$WORK/cur.nod" model.txt "$text" -o "$WORK/exp.nod" >/dev/null 2>&1 ||
		lfs_die "kill $k: legacyfs-convert apply refuses the text"
	writer "$text" &
	wpid=$!
	how=$(killer "$k" "$wpid")
	wrc=0
	wait "$wpid" || wrc=$?
	stop_dead
	if cmp -s "$SRC/$MODEL" "$WORK/exp.nod"; then
		if cmp -s "$WORK/cur.nod" "$WORK/exp.nod"; then n_same=$((n_same + 1)); else n_new=$((n_new + 1)); fi
	elif cmp -s "$SRC/$MODEL" "$WORK/cur.nod"; then
		n_old=$((n_old + 1))
		[ "$wrc" = 0 ] && lfs_fail "kill $k ($how): the save was acknowledged but did not land"
	else
		lfs_fail "kill $k ($how): the model is neither the old nor the new bytes"
		cp "$SRC/$MODEL" "$WORK/torn.$k.nod"
		cp "$WORK/exp.nod" "$SRC/$MODEL"
	fi
	[ "$wrc" = 0 ] && n_acked=$((n_acked + 1))
	"$CONVERT" list "$SRC/$MODEL" >/dev/null 2>&1 || lfs_fail "kill $k: the model does not decode"
	[ -n "$(temps)" ] && n_left=$((n_left + 1))
	# The next mount recovers: no temporary file of a dead daemon stays.
	start
	left=$(temps)
	if [ -n "$left" ]; then
		lfs_fail "kill $k: temporary file(s) left after the next mount: $left"
		rm -f $left
	fi
	ls -a "$MNT" | grep -q 'legacyfs-[0-9]*-[0-9]*$' && lfs_fail "kill $k: a temporary name is listed"
done
lfs_log "$KILLS kills: old bytes $n_old, new bytes $n_new, no-op $n_same; acknowledged $n_acked; temp left by the kill (removed at the next mount) $n_left"
# Every kill checked; the mount still works.
[ -f "$MNT/$MODEL/model.txt" ] && lfs_ok "model folder after $KILLS kills" || lfs_fail "model folder missing"
grep -c "temporary file of a crashed save: .*removed" "$LOG" >/dev/null &&
	lfs_ok "recoveries logged: $(grep -c "temporary file of a crashed save: .*removed" "$LOG")" ||
	{ [ "$n_left" = 0 ] && lfs_ok "no kill left a temporary file" || lfs_fail "recoveries not logged"; }
timeout 10 fusermount3 -u "$MNT"
wait "$DPID" || lfs_fail "daemon exited with $?"
DPID=""
lfs_finish
