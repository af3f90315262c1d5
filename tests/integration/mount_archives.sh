#!/bin/bash
# Archives as read-only folders (issue 13, docs/archives.md). SOURCE: copies
# of the corpus archives (../shared/corpus/archives: real HAK/ERF/MOD V1.0
# and V1.1, the generated HAK V1.0 and E1/zstd, the generated KEY+BIF sets
# V1 and E1, a real KEY without its BIF) plus a KEY+BIF set whose models.bif
# is truncated and whose textures.bif is missing, in a folder spelled `DATA`
# (the KEY says `data\`).
#  - every archive lists exactly its entry count (MANIFEST.tsv), and every
#    entry of the real ERFs, read by an independent reader (below, from
#    BioWare's ERF document), is listed as resref.ext with the same bytes;
#  - every resource of the generated archives (HAK V1/E1, KEY/BIF V1/E1)
#    equals the loose input file gen/inputs.tsv names (its sha256, and the
#    loose copy in the corpus tree when there is one); each binary model is a
#    folder whose model.mdl equals `legacyfs-convert cat` of the loose model
#    and whose model.mtl names the archive's own textures (map_Kd ../x.tga);
#  - writes, creates, deletes, renames and mkdir inside a KEY folder fail
#    (ERFs are writable: mount_archives_write.sh);
#  - the truncated BIF's unreadable resources and the missing BIF's are
#    absent and reported in /.legacyfs/errors, as are the real MOD's broken
#    entries (listed as broken-<index>.res) and the real KEY's missing BIF;
#  - replacing an archive file changes its folder.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
A="$LFS_CORPUS/archives"
[ -f "$A/MANIFEST.tsv" ] || lfs_skip "archive corpus not found ($A)"
ROLLNW="$LFS_CORPUS/nwn/tree/rollnw"
lfs_workdir mount_archives
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC/real" "$SRC/gen"

for f in rollnw/hak_with_description.hak rollnw/test_module.mod nwnrs/acn.hak nwnrs/erf_test.erf \
	nwnrs/test-nwn-rs.mod nwnprc/__morninglord.hak nwnprc/nwangband.hak nwnprc/rashemen.erf \
	nwnprc/Precacher.mod nwnprc/prc_recipe_scroll_temp.mod peps/peps_icons.hak \
	nwn-lib-d/test.hak nwn-lib-d/module.mod; do
	cp "$A/real/$f" "$SRC/real/$(basename "$f")"
done
mkdir -p "$SRC/real/xp3"
cp "$A/real/neverwinter.nim/xp3.key" "$SRC/real/xp3/"
cp "$A/gen/nwn_erf/"*.hak "$A/gen/nwn_erf/small_e1.erf" "$SRC/gen/"
cp -r "$A/gen/nwn_key_pack/v1" "$SRC/gen/kv1"
cp -r "$A/gen/nwn_key_pack/e1zstd" "$SRC/gen/ke1"
mkdir -p "$SRC/gen/kbad/DATA"
cp "$A/gen/nwn_key_pack/v1/gen_v1.key" "$SRC/gen/kbad/"
head -c 300000 "$A/gen/nwn_key_pack/v1/data/models.bif" >"$SRC/gen/kbad/DATA/models.bif"
chmod -R u+w "$SRC"

lfs_mount "$SRC" "$MNT"

# 1. Entry counts (MANIFEST.tsv) and the independent reader on the real ERFs.
while IFS=$'\t' read -r file kind _ _ _ _ _ format entries _; do
	case "$format" in HAK*|MOD*|ERF*) ;; *) continue ;; esac
	case "$file" in real/*) d="$SRC/real/$(basename "$file")" m="$MNT/real/$(basename "$file")" ;;
	gen/nwn_erf/*) d="$SRC/gen/$(basename "$file")" m="$MNT/gen/$(basename "$file")" ;; *) continue ;; esac
	[ -f "$d" ] || continue
	[ -d "$m" ] || { lfs_fail "$file: not a folder in the mount"; continue; }
	n=$(find "$m" -mindepth 1 -maxdepth 1 | wc -l)
	[ "$n" = "$entries" ] || lfs_fail "$file: $n names listed, $entries entries"
done <"$A/MANIFEST.tsv"
lfs_ok "every ERF-family archive lists its entry count"

python3 - "$SRC/real" "$MNT/real" <<'EOF' || lfs_fail "independent ERF reader disagrees (above)"
# BioWare, "Encapsulated Resource File Format": 160-byte header; key list
# {ResRef[16|32], u32 ResID, u16 ResType, u16}; resource list {u32 offset, u32 size}.
import os, struct, sys
src, mnt = sys.argv[1], sys.argv[2]
bad = 0
for f in sorted(os.listdir(src)):
    p = os.path.join(src, f)
    if not os.path.isfile(p) or f.endswith('.key'):
        continue
    d = open(p, 'rb').read()
    n, okey, ores = struct.unpack_from('<I', d, 16)[0], struct.unpack_from('<I', d, 24)[0], struct.unpack_from('<I', d, 28)[0]
    rl = 32 if d[4:8] == b'V1.1' and n and (ores - okey) // n >= 40 else 16
    names = set(os.listdir(os.path.join(mnt, f)))
    used = set()
    for i in range(n):
        k = okey + i * (rl + 8)
        rr = d[k:k + rl].split(b'\0')[0].decode('latin-1')
        typ = struct.unpack_from('<H', d, k + rl + 4)[0]
        off, size = struct.unpack_from('<II', d, ores + i * 8)
        body = d[off:off + size]
        if not rr or typ == 0:
            want = [x for x in names if x.startswith('broken-%d.' % i)]
        else:
            want = [x for x in names if x.rsplit('.', 1)[0] == rr and x not in used]
        hit = None
        for x in want:
            q = os.path.join(mnt, f, x)
            if os.path.isdir(q) or open(q, 'rb').read() == body:
                hit = x
                break
        if hit is None:
            print('%s: entry %d %r type %d: no listed file with its bytes' % (f, i, rr, typ))
            bad += 1
        else:
            used.add(hit)
sys.exit(1 if bad else 0)
EOF
lfs_ok "real ERF/HAK/MOD V1.0/V1.1: every entry listed with its bytes"

# 2. Generated archives against the loose inputs.
checked=0
while IFS=$'\t' read -r input rr _ _ opath sha _ mdlkind inhak bif; do
	case "$rr" in *skipped*|resref.ext_in_archives) continue ;; esac
	for m in gen/models_v1.hak gen/models_e1zstd.hak gen/kv1/gen_v1.key gen/ke1/gen_e1.key; do
		p="$MNT/$m/$rr"
		if [ "$mdlkind" = binary ]; then
			[ -d "$p" ] || { lfs_fail "$m/$rr: binary model not a folder"; continue; }
			if [ -f "$ROLLNW/$opath" ]; then
				"$CONVERT" cat "$ROLLNW/$opath" model.mdl | cmp -s - "$p/model.mdl" ||
					lfs_fail "$m/$rr/model.mdl differs from legacyfs-convert cat of the loose model"
			fi
		else
			[ -f "$p" ] || { lfs_fail "$m/$rr: not listed"; continue; }
			got=$(sha256sum <"$p" | cut -d' ' -f1)
			[ "$got" = "$sha" ] || lfs_fail "$m/$rr: sha256 $got, inputs.tsv says $sha"
			if [ -f "$ROLLNW/$opath" ]; then
				cmp -s "$ROLLNW/$opath" "$p" || lfs_fail "$m/$rr differs from $opath"
			fi
		fi
		checked=$((checked + 1))
	done
done <"$A/gen/inputs.tsv"
[ "$checked" -ge 136 ] || lfs_fail "only $checked generated resources checked"
lfs_ok "generated HAK V1/E1 and KEY/BIF V1/E1: $checked resources equal their inputs"

# Textures of the models inside: map_Kd names the archive's own texture
# resource, relative to the model's folder, and that file exists.
nk=0
for m in gen/models_v1.hak gen/models_e1zstd.hak gen/kv1/gen_v1.key gen/ke1/gen_e1.key; do
	for mtl in "$MNT/$m"/*.mdl/model.mtl; do
		while read -r _ t; do
			[ -f "$(dirname "$mtl")/$t" ] || lfs_fail "$mtl: map_Kd $t: no such file"
			nk=$((nk + 1))
		done < <(grep '^map_Kd ' "$mtl")
	done
done
grep -qx 'map_Kd ../c_aribeth.tga' "$MNT/gen/models_v1.hak/c_aribeth.mdl/model.mtl" ||
	lfs_fail "c_aribeth.mdl/model.mtl does not name ../c_aribeth.tga"
[ "$nk" -ge 32 ] || lfs_fail "only $nk map_Kd lines in the archives' models"
lfs_ok "models inside archives: $nk map_Kd lines, each naming a texture of the archive"

# 3. KEY folders are read-only (ERFs can be written: mount_archives_write.sh).
K1="$MNT/gen/kv1/gen_v1.key"
H="$MNT/gen/models_v1.hak"
expect_fail() { if "$@" 2>/dev/null; then lfs_fail "succeeded: $*"; fi; }
expect_fail sh -c "echo x >'$K1/new.txt'"
expect_fail sh -c "echo x >>'$K1/black.tga'"
expect_fail sh -c "echo x >'$K1/c_aribeth.mdl/model.mdl'"
expect_fail rm "$K1/black.tga"
expect_fail mv "$K1/black.tga" "$K1/white.tga"
expect_fail mkdir "$K1/d"
expect_fail mkdir "$H/d"
err=$(sh -c "echo x >'$K1/new.txt'" 2>&1 || true)
case "$err" in *"Read-only file system"*) ;; *) lfs_fail "create in a KEY: '$err', not EROFS" ;; esac
err=$(rm "$K1/black.tga" 2>&1 || true)
case "$err" in *"Read-only file system"*) ;; *) lfs_fail "rm of a KEY resource: '$err', not EROFS" ;; esac
# (A write into an existing resource fails with EROFS at open, or, once the
# kernel sends no more opens (zero-message open), at write or close, like
# every read-only view: docs/archives.md.)
for f in gen_v1.key data/models.bif data/textures.bif; do
	cmp -s "$SRC/gen/kv1/$f" "$A/gen/nwn_key_pack/v1/$f" || lfs_fail "$f changed"
done
ls -A "$K1" | grep -qx new.txt && lfs_fail "a KEY folder kept a created file"
lfs_ok "writes into a KEY folder fail with EROFS"

# 4. Truncated and missing BIFs, broken entries, a real KEY without its BIF.
K="$MNT/gen/kbad/gen_v1.key"
[ -d "$K/a_ba_casts.mdl" ] || lfs_fail "kbad: a_ba_casts.mdl (inside the truncated BIF) missing"
n=$(find "$K" -mindepth 1 -maxdepth 1 | wc -l)
[ "$n" = 1 ] || lfs_fail "kbad: $n names listed, 1 expected (the only model inside 300000 bytes)"
[ ! -e "$K/c_aribeth.mdl" ] || lfs_fail "kbad: c_aribeth.mdl (past the truncation) listed"
[ ! -e "$K/black.tga" ] || lfs_fail "kbad: black.tga (missing BIF) listed"
ls "$MNT/real/prc_recipe_scroll_temp.mod" >/dev/null
n=$(find "$MNT/real/xp3/xp3.key" -mindepth 1 | wc -l)
[ "$n" = 0 ] || lfs_fail "xp3.key without its BIF lists $n names"
E=$(cat "$MNT/.legacyfs/errors")
grep -q '^gen/kbad/gen_v1.key: data/textures.bif: missing' <<<"$E" || lfs_fail "missing BIF not reported"
grep -q '^gen/kbad/gen_v1.key: data/models.bif: truncated or damaged: 8 of its resources are absent' <<<"$E" ||
	lfs_fail "truncated BIF not reported"
grep -q '^real/xp3/xp3.key: data/xp3.bif: missing' <<<"$E" || lfs_fail "xp3.key's BIF not reported"
b=$(grep -c '^real/prc_recipe_scroll_temp.mod: entry [0-9]*: broken (empty ResRef, type 0): listed as broken-[0-9]*.res$' <<<"$E")
[ "$b" = 10 ] || lfs_fail "$b broken entries reported, 10 expected"
n=$(find "$MNT/real/prc_recipe_scroll_temp.mod" -name 'broken-*.res' | wc -l)
[ "$n" = 10 ] || lfs_fail "$n broken entries listed, 10 expected"
lfs_ok "absent and broken resources reported in /.legacyfs/errors"

# 5. A changed archive shows its new content.
cp "$SRC/gen/small_e1.erf" "$SRC/gen/swap.hak"
ls "$MNT/gen/swap.hak" | grep -qx fxpa_flame00.txi || lfs_fail "swap.hak: small_e1 content not listed"
cp "$SRC/real/hak_with_description.hak" "$SRC/gen/swap.tmp"
mv "$SRC/gen/swap.tmp" "$SRC/gen/swap.hak"
i=0
until [ "$(ls "$MNT/gen/swap.hak")" = build.txt ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(ls "$MNT/gen/swap.hak")" = build.txt ] || lfs_fail "swap.hak: new content not listed: $(ls "$MNT/gen/swap.hak")"
lfs_ok "a replaced archive is listed anew"

lfs_umount "$MNT"
[ "$LFS_FAILS" = 0 ] || lfs_die "$LFS_FAILS failures"
lfs_ok "mount_archives"
