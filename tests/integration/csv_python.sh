#!/bin/bash
# CSV as other tools write it (issue 10, item 5): corpus CSV views (an NWN
# controller, a NAD track and the NAD tags) are rewritten in place through
# the mount by Python's csv module, once with QUOTE_NONNUMERIC (header names
# and words quoted, numbers bare) and once with QUOTE_ALL, both with the
# module's CRLF line end. Each such rewrite of the unchanged table is a
# no-op save (SOURCE bytes unchanged); a value edited in a QUOTE_ALL rewrite
# lands, giving exactly the bytes `legacyfs-convert apply` gives for the
# same text, and the view then shows the new value. The generated CSVs end
# lines with LF: `grep -c 'VALUE$'` finds a row by its last value and awk's
# last field carries no CR.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
lfs_require_corpus
command -v python3 >/dev/null || lfs_skip "python3 missing"
lfs_workdir csv_python
NWN=$LFS_CORPUS/nwn/tree/nwnprc/nwnprc/others/vim_protmagic_b.mdl
NAD=$LFS_CORPUS/nad/c_a_bat__ca1stab.nad
[ -f "$NWN" ] && [ -f "$NAD" ] || lfs_skip "vim_protmagic_b.mdl / c_a_bat__ca1stab.nad not in the corpus"
SRC="$WORK/src"
MNT="$WORK/mnt"
mkdir -p "$SRC"
cp "$NWN" "$SRC/vim_protmagic_b.mdl"
cp "$NAD" "$SRC/c_a_bat__ca1stab.nad"
chmod 644 "$SRC"/*
lfs_mount "$SRC" "$MNT"

# py_rewrite MODE VIEW [ROW COL VALUE]: read VIEW with csv.reader, write it
# back in place with csv.writer(quoting=MODE) (numbers as floats for
# QUOTE_NONNUMERIC), optionally setting field COL of row ROW (0-based,
# header = row 0) to the number VALUE first.
py_rewrite() {
	timeout 60 python3 -c '
import csv, sys
mode = getattr(csv, sys.argv[1])
path = sys.argv[2]
with open(path, newline="") as f:
    rows = list(csv.reader(f))
if len(sys.argv) > 3:
    rows[int(sys.argv[3])][int(sys.argv[4])] = sys.argv[5]
def conv(x):
    try:
        return float(x)
    except ValueError:
        return x
if mode == csv.QUOTE_NONNUMERIC:
    rows = [rows[0]] + [[conv(x) for x in r] for r in rows[1:]]
with open(path, "w", newline="") as f:
    csv.writer(f, quoting=mode).writerows(rows)
' "$@"
}

for mv in "vim_protmagic_b.mdl|anims/impact/AuroraLight01.color.csv" \
	"c_a_bat__ca1stab.nad|tracks/bone4.rotation.csv" \
	"c_a_bat__ca1stab.nad|tags.csv"; do
	model=${mv%%|*} view=${mv#*|}
	vf="$MNT/$model/$view" mf="$SRC/$model"
	cp "$vf" "$WORK/gen.csv"
	# LF line ends: grep's '$' and awk's last field see the value
	if grep -q $'\r' "$WORK/gen.csv"; then
		lfs_fail "$model/$view: generated CSV holds a CR"
	else
		lfs_ok "$model/$view: LF line ends"
	fi
	# a row's last value, a decimal one where there is one
	last=$(awk -F, 'NR > 1 && $NF ~ /\./ { print $NF; exit }' "$WORK/gen.csv")
	[ -n "$last" ] || last=$(awk -F, 'NR == 2 { print $NF }' "$WORK/gen.csv")
	n=$(grep -c -- "$(printf '%s' "$last" | sed 's/[.[\*^$]/\\&/g')\$" "$WORK/gen.csv" || true)
	[ -n "$last" ] && [ "$n" -ge 1 ] && lfs_ok "$model/$view: grep -c '$last\$' finds $n line(s)" ||
		lfs_fail "$model/$view: grep -c '$last\$' finds nothing"
	# no-op rewrites in both quoting modes
	for mode in QUOTE_NONNUMERIC QUOTE_ALL; do
		cp "$mf" "$WORK/before.bin"
		py_rewrite "$mode" "$vf" || lfs_fail "$model/$view: python $mode rewrite failed"
		if cmp -s "$mf" "$WORK/before.bin"; then
			lfs_ok "$model/$view: $mode rewrite is a no-op save"
		else
			lfs_fail "$model/$view: $mode rewrite changed the model"
		fi
		cmp -s "$vf" "$WORK/gen.csv" && lfs_ok "$model/$view: view unchanged after $mode" ||
			lfs_fail "$model/$view: view differs after $mode rewrite"
	done
done

# an edited value through a QUOTE_ALL rewrite lands (NWN colour, NAD track)
for mv in "vim_protmagic_b.mdl|anims/impact/AuroraLight01.color.csv|2|1|0.5" \
	"c_a_bat__ca1stab.nad|tracks/bone4.rotation.csv|2|2|-100.25"; do
	IFS='|' read -r model view row col val <<<"$mv"
	vf="$MNT/$model/$view" mf="$SRC/$model"
	before="$WORK/before.${model##*.}"
	cp "$mf" "$before"
	cp "$vf" "$WORK/edited.csv"
	py_rewrite QUOTE_ALL "$WORK/edited.csv" "$row" "$col" "$val"
	grep -q "^\"" "$WORK/edited.csv" && grep -q $'\r$' "$WORK/edited.csv" ||
		lfs_fail "$model/$view: python did not write quoted CRLF rows"
	py_rewrite QUOTE_ALL "$vf" "$row" "$col" "$val" || lfs_fail "$model/$view: python edit failed"
	if cmp -s "$mf" "$before"; then
		lfs_fail "$model/$view: the quoted edit did not change the model"
	else
		lfs_ok "$model/$view: the quoted edit changed the model"
	fi
	"$CONVERT" apply "$before" "$view" "$WORK/edited.csv" -o "$WORK/expected.bin" ||
		lfs_fail "$model/$view: legacyfs-convert apply of the quoted edit failed"
	cmp -s "$WORK/expected.bin" "$mf" && lfs_ok "$model/$view: SOURCE equals legacyfs-convert apply" ||
		lfs_fail "$model/$view: SOURCE differs from legacyfs-convert apply"
	got=$(awk -F, -v r="$((row + 1))" -v c="$((col + 1))" 'NR == r { print $c }' "$vf")
	[ "$got" = "$val" ] && lfs_ok "$model/$view: the view shows $val" ||
		lfs_fail "$model/$view: the view shows '$got' at row $row, not $val"
done
lfs_umount "$MNT"
lfs_finish
