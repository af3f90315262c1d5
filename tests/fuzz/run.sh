#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz (docs/fuzzing.md): set up the clang
# fuzz build, make the seed corpora from the shared corpus, run the targets
# one after the other (one fuzzer process at a time).
#
#   tests/fuzz/run.sh --short            # CI: 20 s a target, fixed seed
#   tests/fuzz/run.sh --long SECONDS     # each target SECONDS (the long run)
#   tests/fuzz/run.sh --runs N           # each target N executions
#   ... [TARGET...]                       # only these (names as in meson.build)
#
# Environment: LFS_FUZZ_BUILD (build dir, default build-fuzz-lf),
# LFS_FUZZ_SEED (libFuzzer -seed, default 1), LFS_FUZZ_JOBS (compile jobs).
# Seeds and the growing corpus live in the build dir (never in the project).
# No corpus (../shared/corpus): exit 0 with a message. Exit 1 when a target
# crashed, leaked or broke a promise; its input is in
# <build>/fuzz-artifacts/<target>/ and its log in <build>/fuzz-logs/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
build=${LFS_FUZZ_BUILD:-build-fuzz-lf}
seed=${LFS_FUZZ_SEED:-1}
corpus=$root/../shared/corpus

all_targets=(decode-nwn-mdl decode-nod decode-nad decode-nil decode-sod
	mdl nwn-ascii text-nod text-nad text-sod text-nil obj csv roundtrip apply gff)

mode=short secs=20 runs=-1
targets=()
while [ $# -gt 0 ]; do
	case $1 in
	--short) mode=short secs=20 ;;
	--long) mode=long secs=${2:?--long SECONDS}; shift ;;
	--runs) mode=runs runs=${2:?--runs N} secs=0; shift ;;
	-h|--help) sed -n '2,18p' "$0"; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) targets+=("$1") ;;
	esac
	shift
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

if [ ! -d "$corpus" ]; then
	echo "run.sh: no corpus at $corpus: fuzzing skipped"
	exit 0
fi
if ! command -v clang >/dev/null; then
	echo "run.sh: clang not found (scripts/deps.sh installs it)" >&2
	exit 1
fi

if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dwerror=true
fi
meson compile -C "$build" ${LFS_FUZZ_JOBS:+-j "$LFS_FUZZ_JOBS"} fuzz_seeds \
	"${targets[@]/#/fuzz-}"

fz=$build/tests/fuzz
seeds=$build/fuzz-seeds
rm -rf "$seeds"
"$fz/fuzz_seeds" "$seeds" 65536 16384 "$corpus/nod" "$corpus/nad" "$corpus/sod" \
	"$corpus/nwn/tree" >"$build/fuzz-seeds.log" 2>&1

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$build/fuzz-logs"
failed=0
printf '%-16s %12s %9s %7s  %s\n' target executions exec/s seconds result
for t in "${targets[@]}"; do
	work=$build/fuzz-corpus/$t art=$build/fuzz-artifacts/$t/
	mkdir -p "$work" "$art" "$seeds/$t"
	dict=()
	d=$t; [ "$t" = nwn-ascii ] && d=mdl
	[ -f "tests/fuzz/$d.dict" ] && dict=(-dict="tests/fuzz/$d.dict")
	# roundtrip and apply build every view of a model several times an
	# execution: smaller models, more executions
	maxlen=65600
	case $t in roundtrip|apply) maxlen=16384 ;; esac
	log=$build/fuzz-logs/$t.log
	start=$(date +%s)
	rc=0
	"$fz/fuzz-$t" -seed="$seed" -max_len=$maxlen -rss_limit_mb=2048 -timeout=30 \
		-max_total_time="$secs" -runs="$runs" -print_final_stats=1 \
		-artifact_prefix="$art" "${dict[@]}" "$work" "$seeds/$t" >"$log" 2>&1 || rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	if [ "$rc" = 0 ]; then
		result=ok
	else
		result="FAILED (rc $rc; $log)"
		failed=1
		grep -m 3 -E 'ERROR|fuzz:|runtime error' "$log" >&2 || true
	fi
	printf '%-16s %12s %9s %7s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$took" "$result"
done
exit "$failed"
