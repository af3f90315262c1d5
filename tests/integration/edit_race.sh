#!/bin/bash
# Two writers racing on one model (issue 4, items 6 and 9). For the NOD
# model two mesh OBJs, for the NAD model two track CSVs (views whose content
# does not overlap) are saved concurrently by two background loops, each
# making EDIT_RACE_SAVES in-place saves in a row (read the view, change one
# value to "<i>.25" / "<i>.75", write, close; retried when refused), while a
# third loop keeps decoding SOURCE's files (`legacyfs-convert list`) and
# reading the views through the mount.
# Checks: every save lands; SOURCE never fails to decode; afterwards SOURCE
# is byte-identical to applying both final edits one after the other to the
# original model (neither writer's last edit was lost), and the views show it.
. "$(dirname "$0")/edit_lib.sh"
edit_setup edit_race
SAVES=${EDIT_RACE_SAVES:-40}
edit_mount

pairs=()
for model in "$EDIT_NOD" "$EDIT_NAD"; do
	case $model in
	*.nod) pat='meshes/*.obj' regex='^v ' field=2 sep=space ;;
	*.nad) pat='tracks/*.csv' regex='^[0-9]' field=x sep=comma ;;
	esac
	mapfile -t vs < <("$CONVERT" list "$SRC/$model" | cut -f2 | while read -r p; do
		# shellcheck disable=SC2053
		[[ $p == $pat ]] && printf '%s\n' "$p"
	done | head -n 2)
	[ "${#vs[@]}" = 2 ] || lfs_die "precondition: $model has fewer than two views matching $pat"
	pairs+=("$model|${vs[0]}|${vs[1]}|$regex|$field|$sep")
done

# reader: SOURCE always decodes, views always readable
(
	bad=0 n=0
	while [ ! -e "$WORK/stop" ]; do
		for p in "${pairs[@]}"; do
			IFS='|' read -r model v1 v2 _ <<<"$p"
			"$CONVERT" list "$SRC/$model" >/dev/null 2>>"$WORK/reader.err" || bad=$((bad + 1))
			cat "$MNT/$model/$v1" "$MNT/$model/$v2" "$MNT/$model/model.obj" >/dev/null 2>>"$WORK/reader.err" || true
			n=$((n + 1))
		done
	done
	echo "$n $bad" >"$WORK/reader.out"
) &
reader=$!

t0=$(date +%s%N)
pids=()
i=0
for p in "${pairs[@]}"; do
	IFS='|' read -r model v1 v2 regex field sep <<<"$p"
	timeout -k 5 240 python3 "$EDIT_TOOL" racer "$MNT/$model/$v1" "$regex" "$field" "$sep" .25 "$SAVES" >"$WORK/racer$i.out" 2>&1 &
	pids+=($!)
	i=$((i + 1))
	timeout -k 5 240 python3 "$EDIT_TOOL" racer "$MNT/$model/$v2" "$regex" "$field" "$sep" .75 "$SAVES" >"$WORK/racer$i.out" 2>&1 &
	pids+=($!)
	i=$((i + 1))
done
i=0
for pid in "${pids[@]}"; do
	if wait "$pid"; then
		lfs_ok "writer $i: $(cat "$WORK/racer$i.out")"
	else
		lfs_fail "writer $i: $(cat "$WORK/racer$i.out")"
	fi
	i=$((i + 1))
done
t1=$(date +%s%N)
touch "$WORK/stop"
wait "$reader"
read -r reads bad <"$WORK/reader.out"
lfs_log "$((${#pids[@]} * SAVES)) saves by ${#pids[@]} writers in $(((t1 - t0) / 1000000)) ms; $reads reader rounds"
[ "$bad" = 0 ] && lfs_ok "SOURCE decoded every time ($reads reads)" || lfs_fail "SOURCE failed to decode $bad times: $(head -c 500 "$WORK/reader.err")"

# expected: both final edits applied to the original, one after the other
for p in "${pairs[@]}"; do
	IFS='|' read -r model v1 v2 regex field sep <<<"$p"
	orig="$LFS_CORPUS/$( [ "${model##*.}" = nod ] && echo nod || echo nad)/$model"
	cp "$orig" "$WORK/step0.$model"
	"$CONVERT" cat "$WORK/step0.$model" "$v1" >"$WORK/t1.txt"
	edit_py subst "$WORK/t1.txt" "$regex" "$field" "$sep" "$SAVES.25" "$WORK/e1.txt" >/dev/null
	edit_apply "$WORK/step0.$model" "$v1" "$WORK/e1.txt" "$WORK/step1.$model" || lfs_die "reference refuses $v1"
	"$CONVERT" cat "$WORK/step1.$model" "$v2" >"$WORK/t2.txt"
	edit_py subst "$WORK/t2.txt" "$regex" "$field" "$sep" "$SAVES.75" "$WORK/e2.txt" >/dev/null
	edit_apply "$WORK/step1.$model" "$v2" "$WORK/e2.txt" "$WORK/step2.$model" || lfs_die "reference refuses $v2"
	if cmp -s "$SRC/$model" "$WORK/step2.$model"; then
		lfs_ok "$model: both writers' last edits landed ($v1, $v2)"
	else
		for v in "$v1" "$v2"; do
			got=$(edit_py get "$MNT/$model/$v" "$regex" "$field" "$sep")
			lfs_log "   $model/$v now has $got"
		done
		lfs_fail "$model: SOURCE is not both final edits applied to the original"
	fi
	edit_check_views "$model" "after the race" && lfs_ok "$model: views match SOURCE after the race"
	cp "$SRC/$model" "$WORK/ref/$model"
done

lfs_umount "$MNT"
edit_check_after_umount
lfs_finish
