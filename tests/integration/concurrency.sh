#!/bin/bash
# Concurrency suite (issue 11): N writers (sed -i, os.replace, the shell's
# `>`, a truncating writer) and readers (grep -r, find+cat) on views of a
# shared model, a shared view and separate models, in the default loop and
# with -o mt (tests/integration/stress.py has the plan and the checks).
# Bounded and seeded: CONCURRENCY_SECONDS (default 30) per mode,
# CONCURRENCY_SEED (default 11), CONCURRENCY_MODES (default "st mt").
# After each run the mount ends and SOURCE must decode and hold every
# writer's last acknowledged edit. Meanwhile a folder holding a model is
# renamed back and forth through the mount (stress.py --mover). Models: the project's samples/ (always)
# plus a NOD and a NAD of the corpus when it is there. bench/stress.sh runs
# the same driver for longer.
. "$(dirname "$0")/lib.sh"
lfs_require_fuse
command -v python3 >/dev/null 2>&1 || lfs_skip "python3 not installed"
command -v sed >/dev/null 2>&1 || lfs_skip "sed not installed"
[ -f "$LFS_SOURCE_ROOT/samples/box.mdl" ] || lfs_skip "no samples in $LFS_SOURCE_ROOT/samples"
lfs_workdir concurrency
SECONDS_PER_MODE=${CONCURRENCY_SECONDS:-30}
SEED=${CONCURRENCY_SEED:-11}
MODES=${CONCURRENCY_MODES:-st mt}
# 1 (default): also fail on lost updates between writers sharing a view or a
# model with a whole-model writer (stress.py --strict): every save is merged
# onto the text its own process read (docs/editing.md "Concurrent saves").
STRICT=()
[ "${CONCURRENCY_STRICT:-1}" = 1 ] && STRICT=(--strict)
STRESS="$LFS_SOURCE_ROOT/tests/integration/stress.py"

for mode in $MODES; do
	SRC="$WORK/src-$mode"
	MNT="$WORK/mnt-$mode"
	mkdir -p "$SRC"
	# the shared model first, the shared view second (stress.py's plan)
	cp "$LFS_SOURCE_ROOT/samples/box.mdl" "$LFS_SOURCE_ROOT/samples/skin18bone.mdl" \
		"$LFS_SOURCE_ROOT/samples/skin2bone.mdl" "$SRC/"
	models=(box.mdl skin18bone.mdl skin2bone.mdl)
	if [ -n "${LFS_CORPUS:-}" ] && [ -f "$LFS_CORPUS/nod/PLC_Cndl02.nod" ] && [ -f "$LFS_CORPUS/nad/PLC_Cndl02__on.nad" ]; then
		cp "$LFS_CORPUS/nod/PLC_Cndl02.nod" "$LFS_CORPUS/nad/PLC_Cndl02__on.nad" "$SRC/"
		models+=(PLC_Cndl02.nod PLC_Cndl02__on.nad)
	fi
	chmod 0644 "$SRC"/*
	# a folder with a model in it that a mover renames back and forth
	mkdir -p "$SRC/moving/sub"
	cp "$LFS_SOURCE_ROOT/samples/skin2bone.mdl" "$SRC/moving/sub/m.mdl"
	printf 'plain\n' >"$SRC/moving/sub/plain.txt"
	opts=(-o "$mode") # -o st / -o mt: either way, whatever the default is
	lfs_mount "$SRC" "$MNT" "${opts[@]}"
	rc=0
	timeout -k 10 $((SECONDS_PER_MODE * 3 + 120)) python3 "$STRESS" run --mnt "$MNT" --src "$SRC" \
		--convert "$CONVERT" --state "$WORK/state-$mode.json" --seed "$SEED" \
		--seconds "$SECONDS_PER_MODE" --mover moving "${STRICT[@]}" "${models[@]}" || rc=$?
	if [ "$rc" = 0 ]; then lfs_ok "$mode: no errors under concurrent writers and readers"; else
		lfs_fail "$mode: errors under concurrent writers and readers (stress.py run exit $rc)"
	fi
	lfs_umount "$MNT"
	if grep -q -i -e "invalid max threads" -e "ERROR: .*Sanitizer" -e "WARNING: ThreadSanitizer" "$MNT.log"; then
		grep -i -e "invalid max threads" -e "Sanitizer" "$MNT.log" | head -n 5 >&2
		lfs_fail "$mode: the daemon's log has sanitizer reports or the max-threads message"
	else
		lfs_ok "$mode: daemon log clean"
	fi
	[ -f "$WORK/state-$mode.json" ] || { lfs_fail "$mode: no state written"; continue; }
	if python3 "$STRESS" check --src "$SRC" --convert "$CONVERT" --state "$WORK/state-$mode.json" "${STRICT[@]}"; then
		lfs_ok "$mode: SOURCE decodes and holds every writer's last acknowledged edit"
	else
		lfs_fail "$mode: SOURCE lost an acknowledged edit (or does not decode)"
	fi
done
lfs_finish
