#!/usr/bin/env bash
# A game install's KEY folder against the same models loose and as native
# text (docs/performance.md "Game install (KEY/BIF, issue 23)").
#
#   bench/gameinstall.sh [N] [PATTERN]
#
# N        models in the install's base KEY (default 2000; the issue's sizes
#          are 2,000 and 15,600): the corpus's 216 binary NWN models repeated
#          in list order under distinct ResRefs m<NNNNN>_<9 characters>
#          (tests/integration/nwninstall.py), plus textures.
# PATTERN  what grep -rl looks for (default c_bodak: a model name)
# Env:     LFS_BUILD          build folder (default build; a release build is
#                             meant: meson setup /tmp/rel --buildtype=release)
#          LFS_BENCH_RUNS     runs per figure (default 5; medians are printed)
#          LFS_BENCH_WORK     where the sources are made (default
#                             $LFS_BUILD/gameinstall-bench; kept between runs)
#          LFS_MOUNT_OPTS     extra legacyfs options (both mounts; the bench
#                             always adds -o nothumb_cache, so no run reuses
#                             another's thumbnails)
#          LFS_BENCH_TIMEOUT  seconds one measured command may take (default
#                             900); a run that hits it is reported "> T s"
#          LFS_GI_LAYOUT      ee (default: data/nwn_base.key, BIF names
#                             data\x.bif relative to the install root) or 169
#                             (chitin.key at the root)
#          LFS_GI_TEXTURES    texture resources in the KEY (default 1000)
#
# Sources, made once: WORK/inst-LAYOUT-N (nwninstall.py LAYOUT; the KEY
# folder measured is MNT/data/nwn_base.key or MNT/chitin.key), WORK/loose-N/
# models (the same N model files, loose; no textures) and WORK/native-N/models
# (`legacyfs-convert extract -d` of each loose model: the folders a mount
# shows, as plain files). Every command is a whole process, timed around its
# run; KEY and loose in the same run (KEY first on odd runs), ratio per run:
#   cold `ls` of the folder: a fresh daemon each (and drop_caches as root);
#   cold `cat` of one model's model.mdl (m00000_...): a fresh daemon each;
#   then on fresh daemons: `find` of the folder, `grep -rl PATTERN` of it,
#   `cat thumbnail.png` of one model that has one (warm daemon), and the
#   daemon's VmRSS/VmHWM (/proc/PID/status) after find + grep.
# The native folder gets the same commands without FUSE (page cache dropped
# as root). Prints the machine state and one markdown table.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${LFS_BUILD:-$root/build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
lfs=$build/src/legacyfs
conv=$build/src/legacyfs-convert
n=${1:-2000}
pattern=${2:-c_bodak}
runs=${LFS_BENCH_RUNS:-5}
work=${LFS_BENCH_WORK:-$build/gameinstall-bench}
corpus=${LFS_CORPUS:-$root/../shared/corpus}
limit=${LFS_BENCH_TIMEOUT:-900}
layout=${LFS_GI_LAYOUT:-ee}
ntex=${LFS_GI_TEXTURES:-1000}
opts="-o nothumb_cache ${LFS_MOUNT_OPTS:-}"
{ [ -x "$lfs" ] && [ -x "$conv" ]; } || { echo "gameinstall.sh: build first (meson setup $build --buildtype=release)" >&2; exit 1; }
[ -f "$corpus/nwn/binary.txt" ] || { echo "gameinstall.sh: no corpus at $corpus" >&2; exit 77; }
case $layout in
ee) keydir=data/nwn_base.key ;;
169) keydir=chitin.key ;;
*) echo "gameinstall.sh: LFS_GI_LAYOUT is ee or 169" >&2; exit 2 ;;
esac
mkdir -p "$work"

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

# ---- the sources (made once) ----
inst=$work/inst-$layout-$n loose=$work/loose-$n native=$work/native-$n
gen_s=-
if [ ! -f "$inst/MANIFEST.tsv" ] || [ ! -d "$loose/models" ]; then
	rm -rf "$inst" "$loose" "$native"
	t0=$EPOCHREALTIME
	python3 "$root/tests/integration/nwninstall.py" --quiet --corpus "$corpus" --textures "$ntex" \
		--loose "$loose/models.part" "$layout" "$inst.part" "$n"
	mv "$inst.part" "$inst"
	mv "$loose/models.part" "$loose/models"
	gen_s=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
fi
if [ ! -d "$native/models" ]; then
	rm -rf "$native"
	mkdir -p "$native"
	find "$loose/models" -name '*.mdl' -print0 | sort -z |
		xargs -0 "$conv" extract -d "$native/models.part" >/dev/null 2>&1 || true
	mv "$native/models.part" "$native/models"
fi
one=$(cd "$loose/models" && ls | sed -n 1p) # m00000_<name>.mdl

mnt_k=$(mktemp -d "$work/mnt-key.XXXXXX")
mnt_l=$(mktemp -d "$work/mnt-loose.XXXXXX")
pid_k="" pid_l=""
unmount() { # MNT PIDVAR
	if mountpoint -q "$1"; then
		timeout 10 fusermount3 -u "$1" 2>/dev/null || timeout 10 fusermount3 -uz "$1" || true
	fi
	local p=${!2} i
	if [ -n "$p" ]; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null # a daemon still building
		wait "$p" 2>/dev/null || true
		printf -v "$2" '%s' ""
	fi
}
cleanup() {
	unmount "$mnt_k" pid_k
	unmount "$mnt_l" pid_l
	rmdir "$mnt_k" "$mnt_l" 2>/dev/null || true
	[ -n "${tmp:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount_fresh() { # SRC MNT PIDVAR
	unmount "$2" "$3"
	# shellcheck disable=SC2086  # opts is a list of options
	"$lfs" -f $opts "$1" "$2" </dev/null >/dev/null 2>&1 &
	printf -v "$3" '%s' "$!"
	for _ in $(seq 400); do
		mountpoint -q "$2" && return 0
		sleep 0.025
	done
	echo "gameinstall.sh: mount of $1 did not appear" >&2
	exit 1
}

# ms CMD... -> wall ms of CMD (output discarded), or "T" when it hit the limit
ms() {
	local t0 t1 rc=0
	t0=$EPOCHREALTIME
	timeout -k 5 "$limit" "$@" >/dev/null 2>&1 || rc=$?
	t1=$EPOCHREALTIME
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo T
	else
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
	fi
}
stats() { # numbers or T on stdin -> "median min max" (T = over the limit)
	awk -v L="$limit" '{ print ($1 == "T" ? 1e15 : $1) }' | sort -g |
		awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%s %s %s", m, v[1], v[NR] }'
}
fmt() { # VALUE -> "123.4" or "> LIMIT s"
	awk -v v="$1" -v L="$limit" 'BEGIN { if (v >= 1e15) printf "> %d s", L; else printf "%.1f", v }'
}
cell() { # COLUMN FILE -> "median (min–max)", "–" for a command not run
	local m lo hi
	[ "$(cut -d' ' -f"$1" "$2" | head -1)" = - ] && { echo "–"; return; }
	read -r m lo hi <<<"$(cut -d' ' -f"$1" "$2" | stats)"
	echo "$(fmt "$m") ($(fmt "$lo")–$(fmt "$hi"))"
}
ratio() { # FILE -> median of per-run KEY/loose, "≥ x" when a KEY run hit the limit
	local ge=""
	grep -q '^T ' "$1" && ge="≥ "
	awk -v L="$limit" '{ print ($1 == "T" ? L * 1000 : $1) / $2 }' "$1" | sort -g |
		awk -v ge="$ge" '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%s%.2f×", ge, m }'
}
row() { # LABEL FILE (columns: key loose native)
	echo "| $1 | $(cell 1 "$2") | $(cell 2 "$2") | $(cell 3 "$2") | **$(ratio "$2")** |"
}
count() { # CMD... -> lines it prints (within the limit; 0 when none)
	local c
	c=$(timeout -k 5 "$limit" "$@" 2>/dev/null | wc -l) || true
	echo "${c:-0}"
}
rss() { # PID -> "VmRSS VmHWM" in MiB
	awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { printf "%.1f %.1f", r / 1024, h / 1024 }' "/proc/$1/status"
}

# pair OUT K_CMD... -- L_CMD... -- N_CMD...: one line "key loose native",
# KEY first on even r (0-based), loose first on odd
pair() {
	local out=$1 a b c
	shift
	local -a kc=() lc=() nc=()
	while [ "$1" != -- ]; do kc+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do lc+=("$1"); shift; done
	shift
	nc=("$@")
	if ((r % 2 == 0)); then
		a=$(ms "${kc[@]}")
		b=$(ms "${lc[@]}")
	else
		b=$(ms "${lc[@]}")
		a=$(ms "${kc[@]}")
	fi
	drop
	if [ "${nc[0]}" = - ]; then c=-; else c=$(ms "${nc[@]}"); fi
	echo "$a $b $c" >>"$out"
}

tmp=$(mktemp -d "$work/t.XXXXXX")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
K=$mnt_k/$keydir L=$mnt_l/models N=$native/models
: >"$tmp/ls"
: >"$tmp/cat"
: >"$tmp/find"
: >"$tmp/grep"
: >"$tmp/thumb"
: >"$tmp/mem"
seen_k=- seen_l=- seen_n=- hits="" thumbref="" errk=""
for ((r = 0; r < runs; r++)); do
	mount_fresh "$inst" "$mnt_k" pid_k
	mount_fresh "$loose" "$mnt_l" pid_l
	drop
	pair "$tmp/ls" ls "$K" -- ls "$L" -- ls "$N"

	mount_fresh "$inst" "$mnt_k" pid_k
	mount_fresh "$loose" "$mnt_l" pid_l
	drop
	pair "$tmp/cat" cat "$K/$one/model.mdl" -- cat "$L/$one/model.mdl" -- cat "$N/$one/model.mdl"

	mount_fresh "$inst" "$mnt_k" pid_k
	mount_fresh "$loose" "$mnt_l" pid_l
	drop
	pair "$tmp/find" find "$K" -- find "$L" -- find "$N"
	pair "$tmp/grep" grep -rl "$pattern" "$K" -- grep -rl "$pattern" "$L" -- grep -rl "$pattern" "$N"
	if [ -z "$thumbref" ]; then # a model that has a thumbnail (the loose mount decides)
		thumbref=$( (timeout 60 find "$L" -maxdepth 2 -name thumbnail.png 2>/dev/null || true) | sed -n 1p)
		thumbref=${thumbref#"$L/"}
		seen_k=$(count find "$K" -type f)
		[ "$seen_k" -gt 0 ] || errk=$(head -c 300 "$mnt_k/.legacyfs/errors" 2>/dev/null | sed -n 1p || true)
		seen_l=$(count find "$L" -type f)
		seen_n=$(count find "$N" -type f)
		hits="$(count grep -rl "$pattern" "$K") / $(count grep -rl "$pattern" "$L") / $(count grep -rl "$pattern" "$N")"
	fi
	read -r rk hk <<<"$(rss "$pid_k")"
	read -r rl hl <<<"$(rss "$pid_l")"
	echo "$rk $hk $rl $hl" >>"$tmp/mem"
	if [ -n "$thumbref" ]; then
		pair "$tmp/thumb" cat "$K/$thumbref" -- cat "$L/$thumbref" -- -
	fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

cache=$(printf '%s\n' "$opts" | grep -o 'cache_size=[0-9]*' | tail -1 | cut -d= -f2 || true)
echo "gameinstall.sh: $(date -u +%FT%H:%MZ), $(basename "$build") at $(git -C "$root" rev-parse --short HEAD), $(nproc) CPUs, load before $load0, after $load1,"
echo "  layout $layout, $n models + $ntex textures: BIFs $(du -ch "$inst"/data/*.bif | tail -1 | cut -f1), loose $(du -sh "$loose/models" | cut -f1), native text $(du -sh "$native/models" | cut -f1)$([ "$gen_s" != - ] && echo ", generated in $gen_s s"),"
echo "  $runs run(s) per figure, cold = fresh daemon$([ "$cold" = yes ] && echo ' + drop_caches' || echo ' (not root: page cache not dropped)'), limit $limit s per command,"
echo "  files seen: KEY $seen_k, loose $seen_l, native $seen_n; grep -rl '$pattern' files: $hits (KEY / loose / native);"
[ -z "$errk" ] || echo "  WARNING: the KEY folder shows no file; /.legacyfs/errors: $errk"
echo "  thumbnail: ${thumbref:-none}; options '$opts', cache_size ${cache:-256 (default)} MiB"
echo
echo "| work | KEY ms, median (min–max) | loose ms | native text ms | KEY / loose (median of runs) |"
echo "|---|---|---|---|---|"
row "cold \`ls\` of the folder" "$tmp/ls"
row "cold \`cat\` of one model.mdl" "$tmp/cat"
row "\`find\` of the folder (fresh daemon)" "$tmp/find"
row "\`grep -rl $pattern\` after the find" "$tmp/grep"
[ -s "$tmp/thumb" ] && row "\`cat thumbnail.png\` (warm daemon; native: none)" "$tmp/thumb"
awk '{ a += $1; b += $2; c += $3; d += $4 } END { n = NR;
	printf "| daemon VmRSS after find + grep, MiB (mean) | %.1f | %.1f | – | %.2f× |\n", a / n, c / n, a / c
	printf "| daemon VmHWM (peak), MiB (mean) | %.1f | %.1f | – | %.2f× |\n", b / n, d / n, b / d }' "$tmp/mem"
