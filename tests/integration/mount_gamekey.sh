#!/bin/bash
# A game install (issue 13, docs/archives.md "KEY/BIF"): a KEY whose BIFs
# together are larger than -o max_model_size shows every resource. SOURCE
# holds the generated KEY+BIF sets of the corpus (../shared/corpus/archives/
# gen/nwn_key_pack) laid out as installs: nwn/chitin.key + nwn/data/*.bif
# (V1, 4.1 MB of BIFs) and ee/nwn_base.key + ee/data/*.bif (E1/zstd, 2.2 MB).
#  - mounted with max_model_size=2M: both KEYs list all 35 resources, no
#    problem reported; every resource equals the bytes an independent reader
#    of the V1 KEY/BIF (below, from BioWare's "Key and BIF File Formats")
#    takes from the BIFs, which equal the loose inputs (gen/inputs.tsv
#    sha256); a binary model's model.mdl equals `legacyfs-convert cat` of
#    those bytes. The daemon's RSS before and after reading every file is
#    logged (not asserted);
#  - mounted with max_model_size=1M: the one resource larger than that
#    (c_drgshad.mdl, 1251734 bytes) is absent from both KEYs and reported,
#    the 34 others are listed;
#  - replacing a BIF by a cut copy, then writing it back in place, changes
#    the KEY's folder each time (the watcher, docs/archives.md).
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
A="$LFS_CORPUS/archives/gen"
[ -f "$A/inputs.tsv" ] || lfs_skip "archive corpus not found ($A)"
lfs_workdir mount_gamekey
SRC="$WORK/src"
MNT="$WORK/mnt"
REF="$WORK/ref"
mkdir -p "$SRC/nwn" "$SRC/ee" "$REF"
cp "$A/nwn_key_pack/v1/gen_v1.key" "$SRC/nwn/chitin.key"
cp -r "$A/nwn_key_pack/v1/data" "$SRC/nwn/"
cp "$A/nwn_key_pack/e1zstd/gen_e1.key" "$SRC/ee/nwn_base.key"
cp -r "$A/nwn_key_pack/e1zstd/data" "$SRC/ee/"
chmod -R u+w "$SRC"

# The independent reader: BioWare "Key and BIF File Formats", KEY V1 §2
# (header, file table, key table: ResRef[16], ResType u16, ResID u32) and
# BIFF V1 §3 (header, variable table: ID, Offset, FileSize, ResType). Each
# payload whose sha256 is an input's (gen/inputs.tsv) is written as REF/<name>.
python3 - "$SRC/nwn/chitin.key" "$A/inputs.tsv" "$REF" <<'EOF' || lfs_die "independent KEY/BIF reader failed (above)"
import hashlib, os, struct, sys
key, inputs, ref = sys.argv[1:]
k = open(key, 'rb').read()
assert k[:8] == b'KEY V1  '
nb, nk, ofiles, okeys = struct.unpack_from('<4I', k, 8)
bifs = []
for b in range(nb):
    _, noff, nlen, _ = struct.unpack_from('<IIHH', k, ofiles + 12 * b)
    name = k[noff:noff + nlen].split(b'\0')[0].decode().replace('\\', '/')
    bifs.append(open(os.path.join(os.path.dirname(key), name), 'rb').read())
by_sha = {}
for i in range(nk):
    e = okeys + 22 * i
    rr = k[e:e + 16].split(b'\0')[0].decode()
    typ, rid = struct.unpack_from('<HI', k, e + 16)
    d = bifs[rid >> 20]
    assert d[:8] == b'BIFFV1  '
    nv, nf, ot = struct.unpack_from('<3I', d, 8)
    idx = rid & 0xFFFFF
    _, off, size, t2 = struct.unpack_from('<4I', d, ot + 16 * idx)
    assert t2 == typ, (rr, typ, t2)
    p = d[off:off + size]
    by_sha[(rr.lower(), hashlib.sha256(p).hexdigest())] = p
n = 0
for line in open(inputs).read().splitlines()[1:]:
    f = line.split('\t')
    rr, sha = f[1], f[5]
    if 'skipped' in rr:
        continue
    p = by_sha.get((rr.rsplit('.', 1)[0].lower(), sha))
    if p is None:
        sys.exit('%s: no payload of the KEY has the sha256 inputs.tsv gives' % rr)
    open(os.path.join(ref, rr), 'wb').write(p)
    n += 1
sys.exit(0 if n == 35 else 'only %d inputs found' % n)
EOF

# check_key K: every resource of K equals REF (models: their model.mdl)
check_key() {
	local K=$1 n=0
	while IFS=$'\t' read -r _ rr _ _ _ _ _ mdlkind _; do
		case "$rr" in *skipped*|resref.ext_in_archives) continue ;; esac
		if [ "$mdlkind" = binary ]; then
			[ -d "$K/$rr" ] || { lfs_fail "$K/$rr: binary model not a folder"; continue; }
			"$CONVERT" cat "$REF/$rr" model.mdl | cmp -s - "$K/$rr/model.mdl" ||
				lfs_fail "$K/$rr/model.mdl differs from legacyfs-convert cat of its BIF bytes"
		else
			cmp -s "$REF/$rr" "$K/$rr" || lfs_fail "$K/$rr differs from its BIF bytes"
		fi
		n=$((n + 1))
	done <"$A/inputs.tsv"
	[ "$n" = 35 ] || lfs_fail "$K: $n resources checked, 35 expected"
}

# rss FIELD: VmRSS/VmHWM (kB) of the daemon (the child of lfs_mount's `timeout`)
rss() {
	local d
	d=$(cat "/proc/$LFS_PID/task/$LFS_PID/children" 2>/dev/null | awk '{ print $1 }')
	awk -v k="$1:" '$1 == k { print $2 }' "/proc/${d:-$LFS_PID}/status"
}

# 1. BIFs larger than -o max_model_size, together and one by one.
lfs_mount "$SRC" "$MNT" -o max_model_size=2M
for K in nwn/chitin.key ee/nwn_base.key; do
	n=$(find "$MNT/$K" -mindepth 1 -maxdepth 1 | wc -l)
	[ "$n" = 35 ] || lfs_fail "$K: $n names listed, 35 expected"
done
r0=$(rss VmRSS)
check_key "$MNT/nwn/chitin.key"
check_key "$MNT/ee/nwn_base.key"
find "$MNT/nwn/chitin.key" "$MNT/ee/nwn_base.key" -type f -exec cat {} + >/dev/null ||
	lfs_fail "a file of the KEY folders cannot be read"
r1=$(rss VmRSS)
hwm=$(rss VmHWM)
lfs_log "daemon RSS: ${r0} kB after listing, ${r1} kB after reading every file (peak ${hwm} kB);" \
	"BIFs: $(du -cb "$SRC"/*/data/*.bif | tail -1 | cut -f1) bytes"
E=$(cat "$MNT/.legacyfs/errors")
grep -q 'key:' <<<"$E" && lfs_fail "problems reported: $(grep 'key:' <<<"$E")"
lfs_ok "KEYs with 4.1 MB and 2.2 MB of BIFs under max_model_size=2M: every resource equals its BIF bytes"
lfs_umount "$MNT"

# 2. A resource larger than -o max_model_size is left out and reported.
lfs_mount "$SRC" "$MNT" -o max_model_size=1M
for K in nwn/chitin.key ee/nwn_base.key; do
	n=$(find "$MNT/$K" -mindepth 1 -maxdepth 1 | wc -l)
	[ "$n" = 34 ] || lfs_fail "$K: $n names listed, 34 expected"
	[ ! -e "$MNT/$K/c_drgshad.mdl" ] || lfs_fail "$K: c_drgshad.mdl (1251734 bytes) listed"
	[ -d "$MNT/$K/c_aribeth.mdl" ] || lfs_fail "$K: c_aribeth.mdl missing"
done
cmp -s "$REF/black.tga" "$MNT/ee/nwn_base.key/black.tga" || lfs_fail "ee: black.tga differs"
E=$(cat "$MNT/.legacyfs/errors")
for K in nwn/chitin.key ee/nwn_base.key; do
	grep -q "^$K: c_drgshad (type 2002): 1251734 bytes, larger than -o max_model_size: left out$" <<<"$E" ||
		lfs_fail "$K: c_drgshad.mdl not reported: $E"
done
lfs_ok "max_model_size=1M: the one larger resource is left out and reported"
lfs_umount "$MNT"

# 3. A changed BIF changes its KEY's folder (the watcher: the BIF's folder
# is watched once looked up through the mount).
lfs_mount "$SRC" "$MNT"
K="$MNT/nwn/chitin.key"
n=$(ls "$K" | wc -l)
[ "$n" = 35 ] || lfs_fail "chitin.key: $n names before the change, 35 expected"
cmp -s "$REF/c_aribeth.tga" "$K/c_aribeth.tga" || lfs_fail "c_aribeth.tga differs before the change"
ls "$MNT/nwn/data" >/dev/null
head -c 300000 "$SRC/nwn/data/textures.bif" >"$SRC/nwn/data/textures.tmp"
mv "$SRC/nwn/data/textures.tmp" "$SRC/nwn/data/textures.bif" # replaced, as an update does
wait_names() { # wait_names K N: until K lists N names (5 s)
	local i=0
	until [ "$(ls "$1" | wc -l)" = "$2" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(ls "$1" | wc -l)" = "$2" ]
}
# the resources whose bytes are still inside the cut BIF, plus the 9 models
want=$(python3 - "$SRC/nwn/data/textures.bif" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
nv, _, ot = struct.unpack_from('<3I', d, 8)
print(9 + sum(1 for i in range(nv) if sum(struct.unpack_from('<4I', d, ot + 16 * i)[1:3]) <= len(d)))
EOF
)
[ "$want" -lt 35 ] || lfs_die "the cut textures.bif still holds every resource"
wait_names "$K" "$want" || lfs_fail "chitin.key: $(ls "$K" | wc -l) names after its BIF was cut, $want expected"
grep -q '^nwn/chitin.key: data/textures.bif: truncated or damaged' "$MNT/.legacyfs/errors" ||
	lfs_fail "the cut textures.bif is not reported"
cp "$A/nwn_key_pack/v1/data/textures.bif" "$SRC/nwn/data/textures.bif" # written in place
wait_names "$K" 35 || lfs_fail "chitin.key: $(ls "$K" | wc -l) names after its BIF was restored"
cmp -s "$REF/c_aribeth.tga" "$K/c_aribeth.tga" || lfs_fail "c_aribeth.tga differs after the restore"
lfs_ok "a BIF replaced or rewritten changes its KEY's folder ($want names, then 35)"
lfs_umount "$MNT"

[ "$LFS_FAILS" = 0 ] || lfs_die "$LFS_FAILS failures"
lfs_ok "mount_gamekey"
