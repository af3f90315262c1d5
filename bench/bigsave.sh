#!/usr/bin/env bash
# Large in-place saves of a mesh OBJ (issue 24 item 4, docs/performance.md
# "Bounded saves"):
#
#   bench/bigsave.sh [MB...]      (default: 2 7 20 50 200)
#
# For each size, a valid OBJ of about MB megabytes is made from the largest
# mesh OBJ of the NWN model c_drgshad.mdl (meshes/Dragon_head.obj; copies of
# its vertices and faces, each copy moved in z), written in place with cat
# into a fresh mount (default options, $LFS_MOUNT_OPTS for more: e.g.
# "-o edit_size=2048" to let large texts reach the apply), and the script
# reports the wall time of the write + close, its exit status and the
# errno message, the daemon's peak resident size (VmHWM) before and after,
# and the first line of errors.txt. legacyfs: $LFS_LEGACYFS or
# build/src/legacyfs (else build-*/src/legacyfs).
set -euo pipefail

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 7 20 50 200)
rel='' view=''
# shellcheck source=bench/savelib.sh
. "$(dirname "${BASH_SOURCE[0]}")/savelib.sh"
name=$(basename "$rel")
hwm() { awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$pid/status"; }
for mb in "${sizes[@]}"; do
	cp "$corpus/nwn/$rel" "$tmp/src/"
	bench_mount
	python3 - "$tmp/mnt/$name/$view" "$mb" >"$tmp/big.obj" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
want = float(sys.argv[2]) * 1e6
head = [l for l in lines if l and not l.startswith(('v ', 'vt ', 'vn ', 'f ', 'usemtl', 's '))]
v, vt, vn, f = ([l for l in lines if l.startswith(k)] for k in ('v ', 'vt ', 'vn ', 'f '))
out_v, out_t, out_n, out_f, size, k = [], [], [], [], 0, 0
while size < want:
    for l in v:
        p = l.split()
        out_v.append('v %s %s %.6g' % (p[1], p[2], float(p[3]) + k * 0.01))
    out_t += vt
    out_n += vn
    for l in f:
        c = [int(x.split('/')[0]) + k * len(v) for x in l.split()[1:]]
        out_f.append('f ' + ' '.join('%d/%d/%d' % (i, i, i) for i in c))
    size = sum(len(x) + 1 for x in out_v) * 3 + sum(len(x) + 1 for x in out_f)
    k += 1
sys.stdout.write('\n'.join(head + out_v + out_t + out_n + ['s off'] + out_f) + '\n')
sys.stderr.write('%d vertices\n' % (k * len(v)))
PY
	h0=$(hwm)
	a=$(date +%s%N)
	rc=0
	cat "$tmp/big.obj" >"$tmp/mnt/$name/$view" 2>"$tmp/err" || rc=$?
	b=$(date +%s%N)
	h1=$(hwm)
	printf '%s MB (%s bytes): %d.%03d s, exit %d %s; VmHWM %s -> %s MiB; %s\n' "$mb" \
		"$(stat -c %s "$tmp/big.obj")" $(((b - a) / 1000000000)) $((((b - a) / 1000000) % 1000)) \
		"$rc" "$(sort -u "$tmp/err" | tr '\n' ' ')" "$h0" "$h1" \
		"$(head -n1 "$tmp/mnt/$name/errors.txt" 2>/dev/null | cut -c1-160 || echo saved)"
	bench_umount
done
