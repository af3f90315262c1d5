#!/bin/bash
# edit_save.sh METHOD...: each METHOD (a program or a save sequence, see
# edit_run in edit_lib.sh) saves one changed value in each target view
# (edit_targets: NOD model.txt + a mesh OBJ, NAD anim.txt + a track CSV,
# SOD model.txt + an animation CSV) through a writable mount. After each save
# SOURCE's model is byte-identical to `legacyfs-convert apply`'s result for
# the same edited text, keeps its mode, every view of the model shows the
# new content, and no scratch file (swap, backup, lock, temp) reached
# SOURCE. After unmounting, SOURCE holds the last results and nothing else,
# and a fresh mount shows exactly legacyfs-convert's views.
# Skips (77) when FUSE, the corpus or one of the programs is missing.
. "$(dirname "$0")/edit_lib.sh"
[ $# -ge 1 ] || lfs_die "usage: edit_save.sh METHOD..."
for m in "$@"; do edit_require_method "$m"; done
edit_setup "edit_save_$(printf '%s_' "$@" | sed 's/_$//')"

mapfile -t targets < <(edit_targets)
edit_mount
for m in "$@"; do
	for t in "${targets[@]}"; do
		edit_save "$m" "$t"
	done
	# what the program left in the model folders (editor backups etc.):
	# allowed in the mount, never in SOURCE
	for model in $(printf '%s\n' "${targets[@]}" | cut -d'|' -f1 | sort -u); do
		extra=$(edit_mount_extras "$model")
		[ -z "$extra" ] || lfs_log "note: after $m, $model/ in the mount also holds: $extra"
	done
done
lfs_umount "$MNT"
edit_check_after_umount

# a fresh mount shows the saved models' views and no scratch file
edit_mount
for model in $(printf '%s\n' "${targets[@]}" | cut -d'|' -f1 | sort -u); do
	edit_check_views "$model" "remount" && lfs_ok "remount: views of $model match SOURCE"
	extra=$(edit_mount_extras "$model")
	[ -z "$extra" ] || lfs_fail "remount: $model/ holds more than its views: $extra"
done
lfs_umount "$MNT"
lfs_finish
