#!/usr/bin/env bash
# contrib/emacs/legacyfs-mode.el with the real Emacs (--batch) on a real
# mount of a corpus NWN binary model (issue 26, docs/emacs.md):
# - the mount's model.mdl opens in legacyfs-mode; font-lock gives the
#   `node' keyword font-lock-keyword-face and the node type
#   font-lock-type-face; hideshow folds a node (node ... endnode hidden);
# - the flymake backend (legacyfs-convert check of the buffer's text) reports
#   one error at the typo's line (a letter O for a zero in a position) and
#   nothing for the good text;
# - a save of the typo is refused by the mount: the save fails, point is on
#   the typo's line, the echo-area message (legacyfs-last-error) names the
#   line and the bad number; the model file is unchanged; a good save lands.
# Skips (77) without emacs, FUSE or the corpus.
. "$(dirname "$0")/lib.sh"
command -v emacs >/dev/null 2>&1 || lfs_skip "emacs not installed (scripts/deps.sh: emacs-nox)"
lfs_require_fuse
lfs_require_corpus
lfs_workdir emacs_mode
export PATH="$(dirname "$CONVERT"):$PATH"
lfs_binary_whose_mdl '^  position ' '^endnode'
m=$(basename "$bin")
mkdir -p "$WORK/src"
cp "$bin" "$WORK/src/$m"
chmod u+w "$WORK/src/$m"
lfs_mount "$WORK/src" "$WORK/mnt"
view="$WORK/mnt/$m/model.mdl"
tline=$(grep -n -m1 '^  position ' "$view" | cut -d: -f1)
cat >"$WORK/t.el" <<EL
(require 'legacyfs-mode)
(setq make-backup-files nil create-lockfiles nil)
(defvar res nil)
(defun out (k v) (push (format "%s=%s" k v) res))
(defun flymake-now ()
  "Diagnostics of one run of the backend, waited for."
  (let (got done)
    (legacyfs-flymake (lambda (diags &rest _) (setq got diags done t)))
    (while (not done) (accept-process-output nil 0.1))
    got))
(find-file "$view")
(out "mode" major-mode)
(font-lock-ensure)
(goto-char (point-min))
(re-search-forward "^node \\\\(\\\\w+\\\\)")
(out "kwface" (get-text-property (match-beginning 0) 'face))
(out "typeface" (get-text-property (match-beginning 1) 'face))
(beginning-of-line)
(hs-hide-block)
(out "folded" (if (seq-some (lambda (o) (eq (overlay-get o 'hs) 'code)) (overlays-in (point-min) (point-max))) 1 0))
(hs-show-all)
(out "goodflymake" (length (flymake-now)))
(goto-char (point-min))
(forward-line (1- $tline))
(re-search-forward "^  position \\\\S-+ \\\\(\\\\S-+\\\\)" (line-end-position))
(replace-match "O.5" t t nil 1)
(let ((d (flymake-now)))
  (out "flymake" (length d))
  (when d
    (out "flyline" (line-number-at-pos (flymake-diagnostic-beg (car d))))
    (out "flytype" (flymake-diagnostic-type (car d)))
    (out "flytext" (flymake-diagnostic-text (car d)))))
(goto-char (point-min))
(out "save" (condition-case e (progn (save-buffer) "ok") (error (format "refused %S" e))))
(out "line" (line-number-at-pos))
(out "msg" legacyfs-last-error)
(out "modified" (if (buffer-modified-p) 1 0))
(out "untouched" (call-process "cmp" nil nil nil "-s" "$bin" "$WORK/src/$m"))
(goto-char (point-min))
(forward-line (1- $tline))
(re-search-forward "O\\\\.5" (line-end-position))
(replace-match "0.5" t t)
(out "goodsave" (condition-case e (progn (save-buffer) "ok") (error (format "refused %S" e))))
(with-temp-file "$WORK/res" (insert (mapconcat #'identity (nreverse res) "\n") "\n"))
EL
timeout 120 emacs --batch -Q -L "$LFS_SOURCE_ROOT/contrib/emacs" -l "$WORK/t.el" >"$WORK/emacs.out" 2>&1 ||
	lfs_fail "emacs exited non-zero: $(tail -5 "$WORK/emacs.out")"
[ -f "$WORK/res" ] || lfs_die "emacs wrote no result: $(tail -5 "$WORK/emacs.out")"
lfs_log "emacs: $(tr '\n' ' ' <"$WORK/res")"
get() { sed -n "s/^$1=//p" "$WORK/res"; }
[ "$(get mode)" = legacyfs-mode ] || lfs_fail "model.mdl of a mount opens in $(get mode)"
[ "$(get kwface)" = font-lock-keyword-face ] && [ "$(get typeface)" = font-lock-type-face ] ||
	lfs_fail "font-lock: node = $(get kwface), its type = $(get typeface)"
[ "$(get folded)" = 1 ] || lfs_fail "hs-hide-block folded no node"
[ "$(get goodflymake)" = 0 ] || lfs_fail "flymake of the good text: $(get goodflymake) diagnostics"
[ "$(get flymake)" = 1 ] && [ "$(get flyline)" = "$tline" ] && [ "$(get flytype)" = :error ] &&
	get flytext | grep -q 'O.5' ||
	lfs_fail "flymake of the typo: $(get flymake) diagnostics, line $(get flyline) $(get flytype) $(get flytext)"
get save | grep -q '^refused' || lfs_fail "the typo's save was not refused: $(get save)"
[ "$(get line)" = "$tline" ] || lfs_fail "point on line $(get line) after the refused save, want $tline"
get msg | grep -q "^model.mdl:$tline:[0-9]*: error: .*O.5" || lfs_fail "echo-area message: $(get msg)"
[ "$(get modified)" = 1 ] || lfs_fail "the refused buffer is not modified"
[ "$(get untouched)" = 0 ] || lfs_fail "the refused save changed the model file"
[ "$(get goodsave)" = ok ] || lfs_fail "the good save: $(get goodsave)"
lfs_umount "$WORK/mnt"
cmp -s "$bin" "$WORK/src/$m" && lfs_fail "the good save did not change the model file"
lfs_ok "emacs: legacyfs-mode, font-lock, hideshow fold, flymake at line $tline, refused save -> point + message, good save lands"
lfs_finish
