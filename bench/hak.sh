#!/usr/bin/env bash
# Archives against loose files: the same binary NWN models in one `.hak`
# and as loose files in a folder, each mounted with legacyfs
# (docs/performance.md "Archives (hak vs loose)").
#
#   bench/hak.sh [N] [PATTERN]
#
# N        models (default 1000). The corpus has 216 distinct binary models
#          (../shared/corpus/nwn/binary.txt); they are repeated in list order
#          under distinct ResRefs "m<NNNN>_<first 10 characters of the base
#          name>" (lower case, [a-z0-9_]) until there are N.
# PATTERN  what grep counts (default "orientation")
# Env:     LFS_BUILD       build folder (default build; a release build is meant:
#                          meson setup /tmp/rel --buildtype=release)
#          LFS_BENCH_RUNS  runs per figure (default 5; medians are printed)
#          LFS_BENCH_WORK  where the two source folders are made (default
#                          $LFS_BUILD/hak-bench; kept between runs, remove it yourself)
#          LFS_MOUNT_OPTS  extra legacyfs options (both mounts)
#
# Sources: WORK/loose/models/<resref>.mdl (N files) and WORK/hak/models.hak
# (the same N files packed with `legacyfs-convert pack`, in the same order).
# Each figure is measured in the same run for both, hak first on odd runs and
# loose first on even ones, so both see the same machine load:
#   cold `find` and `ls -R`: a fresh mount of each source for every run (the
#     view cache is empty; as root the page cache is dropped too);
#   warm `grep -r -c PATTERN`: one mount of each, two passes first;
#   memory: VmRSS and VmHWM of each daemon (/proc/PID/status) after the grep.
# Prints the machine state (CPUs, load before and after) and one markdown
# table: median (min–max) ms of each and the ratio of medians hak / loose.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${LFS_BUILD:-$root/build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
lfs=$build/src/legacyfs
conv=$build/src/legacyfs-convert
n=${1:-1000}
pattern=${2:-orientation}
runs=${LFS_BENCH_RUNS:-5}
work=${LFS_BENCH_WORK:-$build/hak-bench}
corpus=${LFS_CORPUS:-$root/../shared/corpus}
{ [ -x "$lfs" ] && [ -x "$conv" ]; } || { echo "hak.sh: build first (meson setup $build --buildtype=release)" >&2; exit 1; }
[ -f "$corpus/nwn/binary.txt" ] || { echo "hak.sh: no corpus at $corpus" >&2; exit 77; }

cold=no
if [ "$(id -u)" -eq 0 ] && sync && (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null; then
	cold=yes
fi
drop() {
	if [ "$cold" = yes ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
}

# ---- the two sources (made once) ----
src_loose=$work/loose-$n src_hak=$work/hak-$n
if [ ! -f "$src_hak/models.hak" ]; then
	rm -rf "$src_loose" "$src_hak"
	mkdir -p "$src_loose/models.part" "$src_hak"
	mapfile -t bins < <(sed "s|^|$corpus/nwn/|" "$corpus/nwn/binary.txt")
	files=()
	for ((i = 0; i < n; i++)); do
		b=${bins[i % ${#bins[@]}]}
		base=$(basename "$b" .mdl | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9_\n' '_')
		ref=$(printf 'm%04d_%.10s' "$i" "$base")
		cp "$b" "$src_loose/models.part/$ref.mdl"
		files+=("$src_loose/models.part/$ref.mdl")
	done
	"$conv" pack "$src_hak/models.hak.part" "${files[@]}"
	mv "$src_hak/models.hak.part" "$src_hak/models.hak"
	mv "$src_loose/models.part" "$src_loose/models"
fi
hak_dir=models.hak loose_dir=models

mnt_h=$(mktemp -d "$work/mnt-hak.XXXXXX")
mnt_l=$(mktemp -d "$work/mnt-loose.XXXXXX")
pid_h="" pid_l=""
unmount() { # MNT PIDVAR
	if mountpoint -q "$1"; then
		fusermount3 -u "$1" 2>/dev/null || fusermount3 -uz "$1" || true
	fi
	local p=${!2}
	if [ -n "$p" ]; then
		wait "$p" 2>/dev/null || true
		printf -v "$2" '%s' ""
	fi
}
cleanup() {
	unmount "$mnt_h" pid_h
	unmount "$mnt_l" pid_l
	rmdir "$mnt_h" "$mnt_l" 2>/dev/null || true
}
trap cleanup EXIT

mount_fresh() { # SRC MNT PIDVAR
	unmount "$2" "$3"
	# shellcheck disable=SC2086  # LFS_MOUNT_OPTS is a list of options
	"$lfs" -f ${LFS_MOUNT_OPTS:-} "$1" "$2" </dev/null >/dev/null 2>&1 &
	printf -v "$3" '%s' "$!"
	for _ in $(seq 400); do
		mountpoint -q "$2" && return 0
		sleep 0.025
	done
	echo "hak.sh: mount of $1 did not appear" >&2
	exit 1
}

ms() { # CMD... -> wall ms of CMD (output discarded)
	local t0 t1
	t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || true
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
}
stats() { # numbers on stdin -> "median min max"
	sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.1f %.1f %.1f", m, v[1], v[NR] }'
}
row() { # LABEL FILE(two columns: hak loose)
	local h l
	h=$(cut -d' ' -f1 "$2" | stats)
	l=$(cut -d' ' -f2 "$2" | stats)
	read -r hm hlo hhi <<<"$h"
	read -r lm llo lhi <<<"$l"
	awk -v t="$1" -v hm="$hm" -v hlo="$hlo" -v hhi="$hhi" -v lm="$lm" -v llo="$llo" -v lhi="$lhi" \
		'BEGIN { printf "| %s | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %.2f× |\n", t, hm, hlo, hhi, lm, llo, lhi, hm / lm }'
}

# cold CMD...: per run, a fresh mount of each source and CMD on its folder
cold() {
	local out=$1
	shift
	: >"$out"
	for ((r = 0; r < runs; r++)); do
		mount_fresh "$src_hak" "$mnt_h" pid_h
		mount_fresh "$src_loose" "$mnt_l" pid_l
		drop
		local a b
		if ((r % 2 == 0)); then
			a=$(ms "$@" "$mnt_h/$hak_dir")
			b=$(ms "$@" "$mnt_l/$loose_dir")
		else
			b=$(ms "$@" "$mnt_l/$loose_dir")
			a=$(ms "$@" "$mnt_h/$hak_dir")
		fi
		echo "$a $b" >>"$out"
	done
}

rss() { # PID -> "VmRSS VmHWM" in MiB
	awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { printf "%.1f %.1f", r / 1024, h / 1024 }' "/proc/$1/status"
}

tmp=$(mktemp -d "$work/t.XXXXXX")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
cold "$tmp/find" find
cold "$tmp/ls" ls -R

# warm grep: one mount each, two passes, then the runs
mount_fresh "$src_hak" "$mnt_h" pid_h
mount_fresh "$src_loose" "$mnt_l" pid_l
for _ in 1 2; do
	grep -r -c "$pattern" "$mnt_h/$hak_dir" >/dev/null || true
	grep -r -c "$pattern" "$mnt_l/$loose_dir" >/dev/null || true
done
hits_h=$(grep -r -c "$pattern" "$mnt_h/$hak_dir" | awk -F: '{ s += $NF } END { print s }')
hits_l=$(grep -r -c "$pattern" "$mnt_l/$loose_dir" | awk -F: '{ s += $NF } END { print s }')
files_h=$(find "$mnt_h/$hak_dir" -type f | wc -l)
files_l=$(find "$mnt_l/$loose_dir" -type f | wc -l)
: >"$tmp/grep"
for ((r = 0; r < runs; r++)); do
	if ((r % 2 == 0)); then
		a=$(ms grep -r -c "$pattern" "$mnt_h/$hak_dir")
		b=$(ms grep -r -c "$pattern" "$mnt_l/$loose_dir")
	else
		b=$(ms grep -r -c "$pattern" "$mnt_l/$loose_dir")
		a=$(ms grep -r -c "$pattern" "$mnt_h/$hak_dir")
	fi
	echo "$a $b" >>"$tmp/grep"
done
read -r rss_h hwm_h <<<"$(rss "$pid_h")"
read -r rss_l hwm_l <<<"$(rss "$pid_l")"
load1=$(cut -d' ' -f1-3 /proc/loadavg)

echo "hak.sh: $(date -u +%FT%H:%MZ), $(basename "$build"), $(nproc) CPUs, load before $load0, after $load1,"
echo "  $n models ($(du -sh "$src_loose/models" | cut -f1) loose, models.hak $(du -h "$src_hak/models.hak" | cut -f1)),"
echo "  $runs runs per figure, cold = fresh mount$([ "$cold" = yes ] && echo ' + drop_caches' || echo ' (not root: page cache warm)'),"
echo "  files seen: hak $files_h, loose $files_l; grep '$pattern' hits: hak $hits_h, loose $hits_l; options '${LFS_MOUNT_OPTS:-}'"
echo
echo "| work | hak ms, median (min–max) | loose ms, median (min–max) | hak / loose |"
echo "|---|---|---|---|"
row "cold \`find\`" "$tmp/find"
row "cold \`ls -R\`" "$tmp/ls"
row "warm \`grep -r -c $pattern\`" "$tmp/grep"
awk -v a="$rss_h" -v b="$rss_l" -v c="$hwm_h" -v d="$hwm_l" 'BEGIN {
	printf "| daemon VmRSS after the grep, MiB | %.1f | %.1f | %.2f× |\n", a, b, a / b
	printf "| daemon VmHWM (peak), MiB | %.1f | %.1f | %.2f× |\n", c, d, c / d }'
rm -rf "$tmp"
