#!/bin/bash
# A whole game install as SOURCE (issue 23, docs/archives.md "Game
# installs"): synthetic NWN:EE and 1.69 installs written by an independent
# writer (tests/integration/nwninstall.py: KEY V1 / BIF V1 / ERF V1.0 / GFF
# from the BioWare documents; corpus binaries repeated under distinct
# ResRefs, textures beside them; a resource c_dup placed in every kind of
# location with different bytes; MANIFEST.tsv says where each resource is,
# its sha256, and which copy the game picks).
#  - layouts: EE's data/nwn_base.key (BIF names relative to the install root,
#    `data\x.bif`), data/nwn_retail.key, lang/en/data/nwn_base_loc.key
#    (`lang\en\data\x.bif`), and 1.69's chitin.key + xp1/xp2/xp2patch/xp3.key:
#    every KEY folder lists exactly its manifest rows, no BIF reported
#    missing; resources read back with their manifest sha256 (every 7th);
#    a model's model.mdl equals `legacyfs-convert cat` of the same model
#    loose;
#  - precedence: /.legacyfs/resources names, for c_dup.mdl, the copy the
#    manifest says the game picks, first, and every other copy after it;
#  - memory: with -o cache_size=16, after `find` and `grep -r` over the whole
#    EE install, /.legacyfs/status says the view cache holds at most its
#    bound plus one entry's slack (a model's views), and the shared archive
#    tables stay small; the listing of the KEY folder read no payload but
#    the models' headers (cache_bytes after `ls` alone is a few MiB);
#  - big archives: with -o max_model_size below the hak's size but above
#    every resource in it, the hak is still a folder of its resources.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
[ -f "$LFS_CORPUS/nwn/binary.txt" ] || lfs_skip "no NWN corpus"
lfs_workdir mount_install
GEN="$LFS_SOURCE_ROOT/tests/integration/nwninstall.py"
N=${LFS_INSTALL_MODELS:-300} # models in the base KEY (seeded size knob)
python3 "$GEN" ee "$WORK/ee" "$N" --corpus "$LFS_CORPUS" --textures 60 --dup c_dup \
	--loose "$WORK/loose" --quiet || lfs_die "nwninstall.py ee failed"
python3 "$GEN" 169 "$WORK/169" "$N" --corpus "$LFS_CORPUS" --textures 60 --dup c_dup \
	--hak-models 160 --quiet || lfs_die "nwninstall.py 169 failed"
MNT="$WORK/mnt"

# every KEY folder lists exactly its manifest rows; a sample reads back
check_keys() { # check_keys ROOT (mounted on $MNT)
	local root=$1 key want got
	for key in $(awk -F'\t' 'NR > 1 && $3 ~ /\.key$/ { print $3 }' "$root/MANIFEST.tsv" | sort -u); do
		want=$(awk -F'\t' -v k="$key" 'NR > 1 && $3 == k { print $1 "." $2 }' "$root/MANIFEST.tsv" | sort)
		got=$(ls "$MNT/$key" | sort)
		[ "$want" = "$got" ] || lfs_fail "$key: listing differs from the manifest: $(diff <(echo "$want") <(echo "$got") | head -5)"
		grep -q "^$key: .*missing" "$MNT/.legacyfs/errors" && lfs_fail "$key: a BIF reported missing"
	done
	awk -F'\t' 'NR > 1 && $3 ~ /\.key$/ && NR % 7 == 0 { print $3 "\t" $1 "." $2 "\t" $6 }' "$root/MANIFEST.tsv" |
		while IFS=$'\t' read -r key name sum; do
			if [ -d "$MNT/$key/$name" ]; then
				[ -f "$MNT/$key/$name/model.mdl" ] || lfs_fail "$key/$name: a model folder without model.mdl"
				continue
			fi
			[ "$(sha256sum <"$MNT/$key/$name" | cut -d' ' -f1)" = "$sum" ] ||
				lfs_fail "$key/$name: bytes differ from the manifest"
		done
}

# the precedence line of c_dup.mdl: the game's pick first, then the others
check_dup() { # check_dup ROOT
	local root=$1 line want others
	line=$(grep -P '^c_dup\.mdl\t' "$MNT/.legacyfs/resources") || { lfs_fail "no c_dup.mdl line"; return; }
	want=$(awk -F'\t' 'NR > 1 && $1 == "c_dup" && $8 == "yes" { print $3 }' "$root/MANIFEST.tsv")
	case "$(echo "$line" | cut -f2)" in
	"$want/c_dup.mdl") ;;
	*) lfs_fail "c_dup.mdl: winner '$(echo "$line" | cut -f2)', the game picks $want/c_dup.mdl" ;;
	esac
	# every copy appears, in the manifest's rank order
	want=$(awk -F'\t' 'NR > 1 && $1 == "c_dup" { print $7 "\t" $3 "/c_dup.mdl" }' "$root/MANIFEST.tsv" |
		sort -n | cut -f2 | tr '\n' '\t' | sed 's/\t$//')
	others=$(echo "$line" | cut -f2-)
	[ "$others" = "$want" ] || lfs_fail "c_dup.mdl: copies '$others', want '$want'"
}

# 1. NWN:EE layout
lfs_mount "$WORK/ee" "$MNT" -o cache_size=16
ls "$MNT/data/nwn_base.key" >/dev/null
listed=$(awk '$1 == "cache_bytes" { print $2 }' "$MNT/.legacyfs/status")
[ "$listed" -lt $((8 << 20)) ] || lfs_fail "listing the KEY folder cached $listed bytes (payloads read?)"
check_keys "$WORK/ee"
m=$(awk -F'\t' 'NR > 1 && $3 == "data/nwn_base.key" && $2 == "mdl" { print $1; exit }' "$WORK/ee/MANIFEST.tsv")
"$LFS_BUILD_ROOT/src/legacyfs-convert" cat "$WORK/loose/$m.mdl" model.mdl >"$WORK/want.mdl" ||
	lfs_fail "legacyfs-convert cat of the loose $m.mdl"
cmp -s "$WORK/want.mdl" "$MNT/data/nwn_base.key/$m.mdl/model.mdl" ||
	lfs_fail "$m.mdl: model.mdl in the KEY differs from the loose model's"
check_dup "$WORK/ee"
find "$MNT" >/dev/null 2>"$WORK/find.err" || lfs_fail "find over the install: $(head -3 "$WORK/find.err")"
grep -rl c_bodak "$MNT/data" >/dev/null 2>"$WORK/grep.err"
[ -s "$WORK/grep.err" ] && lfs_fail "grep -r over the install: $(head -3 "$WORK/grep.err")"
st="$MNT/.legacyfs/status"
held=$(awk '$1 == "cache_bytes" || $1 == "cache_reserved_bytes" { s += $2 } END { print s }' "$st")
bound=$(awk '$1 == "cache_bound_bytes" { print $2 }' "$st")
tables=$(awk '$1 == "archive_tables_bytes" { print $2 }' "$st")
[ "$bound" = $((16 << 20)) ] || lfs_fail "status: cache bound $bound, want 16 MiB"
# the most recently used entry is never dropped (cache.h): one model's views of slack
[ "$held" -le $((bound + (16 << 20))) ] || lfs_fail "after find + grep -r the cache holds $held bytes (bound $bound)"
[ "$tables" -le $((16 << 20)) ] || lfs_fail "archive tables hold $tables bytes"
lfs_ok "NWN:EE install: every KEY listed from its tables, root-relative BIF names found, the game's copy of c_dup wins; cache $held of $bound bytes after find + grep -r, tables $tables bytes"
lfs_umount "$MNT"

# 2. 1.69 layout
lfs_mount "$WORK/169" "$MNT"
check_keys "$WORK/169"
check_dup "$WORK/169"
lfs_ok "1.69 install: chitin.key and the expansion and patch keys listed; haks listed first win"
lfs_umount "$MNT"

# 3. A hak larger than -o max_model_size is still a folder (its resources
# over the bound are left out and reported, as in any archive)
hak="$WORK/169/hak/test_hak0.hak"
size=$(stat -c %s "$hak")
[ "$size" -gt $((1 << 20)) ] || lfs_die "the hak ($size bytes) is not larger than 1 MiB"
lfs_mount "$WORK/169" "$MNT" -o max_model_size=1
[ -d "$MNT/hak/test_hak0.hak" ] || lfs_fail "a hak of $size bytes under max_model_size=1 (MiB) is not a folder"
want=$(awk -F'\t' -v m=$((1 << 20)) 'NR > 1 && $3 == "hak/test_hak0.hak" && $9 <= m { print $1 "." $2 }' \
	"$WORK/169/MANIFEST.tsv" | sort)
[ "$want" = "$(ls "$MNT/hak/test_hak0.hak" | sort)" ] || lfs_fail "the big hak does not list its resources"
lfs_ok "a hak of $size bytes, larger than -o max_model_size, is a folder of its resources"
lfs_umount "$MNT"
lfs_finish
