#!/usr/bin/env bash
# Single-threaded loop (-o st) vs multi-threaded (-o mt, the default): which one should be the default.
#
#   bench/mt_bench.sh [BUILD_DIR]        (default: build)
#
# Measures, for each loop mode (fresh mount for every run, median of
# $LFS_BENCH_RUNS, default 5):
#   (a) block:  time of `cat` of a small unrelated file (and of a view of a
#       small unrelated model) while a big model builds: the big model is
#       made here with the project's own tools (legacyfs-convert apply of a
#       generated 120x120 grid OBJ onto samples/box.mdl, then the ASCII
#       model.mdl with that mesh copied 12 times, compiled with
#       legacyfs-convert compile: ~25 MB, ~2 s to build its views);
#   (b) grep:   warm `grep -r -c orientation` over a mount of the corpus's
#       NWN tree (skipped without ../shared/corpus);
#   (c) stress: acknowledged saves per second of tests/integration/stress.py
#       (the concurrency suite's writers and readers) for $LFS_STRESS_SECONDS
#       (default 20) on samples/ models.
# Prints one markdown table; numbers and the decision: docs/performance.md
# "Threads". Needs python3 and /dev/fuse; works in a temporary folder under
# BUILD_DIR (never commits or copies corpus files anywhere else).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
lfs=$build/src/legacyfs
conv=$build/src/legacyfs-convert
runs=${LFS_BENCH_RUNS:-5}
stress_s=${LFS_STRESS_SECONDS:-20}
corpus=$root/../shared/corpus/nwn/tree
[ -x "$lfs" ] && [ -x "$conv" ] || { echo "mt_bench.sh: build first (meson compile -C $build)" >&2; exit 1; }

work=$(mktemp -d "$build/mt-bench.XXXXXX")
mnt=$work/mnt
mkdir -p "$mnt"
pid=
cleanup() {
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" || true
	fi
	[ -n "$pid" ] && wait "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

mount_it() { # SRC OPTS...
	local src=$1
	shift
	"$lfs" -f "$@" "$src" "$mnt" 2>>"$work/daemon.log" &
	pid=$!
	for _ in $(seq 200); do
		mountpoint -q "$mnt" && return 0
		sleep 0.05
	done
	echo "mt_bench.sh: mount did not appear" >&2
	exit 1
}
umount_it() {
	fusermount3 -u "$mnt"
	wait "$pid" || true
	pid=
}
now() { date +%s.%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# ---- the big model ----
python3 - "$work/grid.obj" <<'EOF'
import sys
N = 120
out = ["mtllib ../model.mtl", "o crate", "g crate"]
out += ["v %g %g 0" % (i * 0.25, j * 0.25) for j in range(N) for i in range(N)]
out += ["vt %g %g" % (i / (N - 1), j / (N - 1)) for j in range(N) for i in range(N)]
out += ["vn 0 0 1", "usemtl lfs_crate", "s off"]
for j in range(N - 1):
    for i in range(N - 1):
        a = j * N + i + 1
        b, c, d = a + 1, a + N, a + N + 1
        out.append("f %d/%d/1 %d/%d/1 %d/%d/1" % (a, a, b, b, d, d))
        out.append("f %d/%d/1 %d/%d/1 %d/%d/1" % (a, a, d, d, c, c))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
"$conv" apply "$root/samples/box.mdl" meshes/crate.obj "$work/grid.obj" -o "$work/grid.mdl"
"$conv" cat "$work/grid.mdl" model.mdl >"$work/grid.txt"
python3 - "$work/grid.txt" "$work/big_a.mdl" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("node trimesh crate"))
end = next(i for i in range(start, len(lines)) if lines[i] == "endnode") + 1
node = lines[start:end]
out = lines[:start]
for k in range(12):
    out += [node[0].replace("crate", "crate%d" % k)] + node[1:]
out += lines[end:]
open(sys.argv[2], "w").write("\n".join(out))
EOF
src=$work/src
mkdir -p "$src"
"$conv" compile "$work/big_a.mdl" -o "$src/big.mdl"
cp "$root/samples/skin2bone.mdl" "$src/small.mdl"
printf 'a small plain file\n' >"$src/small.txt"
bigsize=$(stat -c %s "$src/big.mdl")
t0=$(now)
"$conv" list "$src/big.mdl" >/dev/null
buildtime=$(echo "$(now) - $t0" | bc)
echo "big model: $bigsize bytes, legacyfs-convert list: ${buildtime} s" >&2

declare -A res
for mode in st mt; do
	opts=(-o $mode)
	# (a) block
	: >"$work/a_txt" && : >"$work/a_view"
	for _ in $(seq "$runs"); do
		# fresh mount, no listing (a listing would build big.mdl too)
		mount_it "$src" "${opts[@]}"
		stat "$mnt/small.txt" "$mnt/small.mdl/model.mdl" >/dev/null # lookups first (small builds)
		cat "$mnt/big.mdl/model.mdl" >/dev/null &
		bg=$!
		sleep 0.3
		t0=$(now)
		cat "$mnt/small.txt" >/dev/null
		echo "$(now) - $t0" | bc >>"$work/a_txt"
		t0=$(now)
		cat "$mnt/small.mdl/model.mdl" >/dev/null
		echo "$(now) - $t0" | bc >>"$work/a_view"
		wait $bg
		umount_it
	done
	res[$mode.a_txt]=$(median <"$work/a_txt")
	res[$mode.a_view]=$(median <"$work/a_view")
	# (b) grep
	if [ -d "$corpus" ]; then
		: >"$work/b"
		mount_it "$corpus" "${opts[@]}" -o ro # shared data: never a writable mount
		grep -r -c orientation "$mnt" >/dev/null 2>&1 || true # warm up
		for _ in $(seq "$runs"); do
			t0=$(now)
			grep -r -c orientation "$mnt" >/dev/null 2>&1 || true
			echo "$(now) - $t0" | bc >>"$work/b"
		done
		umount_it
		res[$mode.b]=$(median <"$work/b")
	else
		res[$mode.b]=n/a
	fi
	# (c) stress throughput
	ssrc=$work/ssrc-$mode
	mkdir -p "$ssrc"
	cp "$root/samples/box.mdl" "$root/samples/skin18bone.mdl" "$root/samples/skin2bone.mdl" "$ssrc/"
	mount_it "$ssrc" "${opts[@]}"
	python3 "$root/tests/integration/stress.py" run --mnt "$mnt" --src "$ssrc" --convert "$conv" \
		--state "$work/state-$mode.json" --seed 11 --seconds "$stress_s" \
		box.mdl skin18bone.mdl skin2bone.mdl 2>"$work/stress-$mode.log" || true
	umount_it
	res[$mode.c]=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%.0f" % (s["count"].get("saves",0)/s["seconds"]))' "$work/state-$mode.json")
	res[$mode.cbad]=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["count"].get("bad",0))' "$work/state-$mode.json")
done

printf '| measurement | -o st (single thread) | -o mt (default) |\n|---|---|---|\n'
printf '| (a) cat small.txt while big.mdl (%s B) builds, median s | %s | %s |\n' "$bigsize" "${res[st.a_txt]}" "${res[mt.a_txt]}"
printf '| (a) cat small.mdl/model.mdl meanwhile, median s | %s | %s |\n' "${res[st.a_view]}" "${res[mt.a_view]}"
printf '| (b) warm grep -r -c over the NWN corpus mount (-o ro), median s | %s | %s |\n' "${res[st.b]}" "${res[mt.b]}"
printf '| (c) stress.py acknowledged saves/s (%s s; failures) | %s (%s) | %s (%s) |\n' "$stress_s" \
	"${res[st.c]}" "${res[st.cbad]}" "${res[mt.c]}" "${res[mt.cbad]}"
echo "(big model views built by legacyfs-convert list in ${buildtime} s; $runs runs each; $(nproc) CPUs)"
