;;; legacyfs-mode.el --- NWN ASCII models and legacyfs text views -*- lexical-binding: t -*-

;; Part of legacyfs (docs/emacs.md).  Free software, same license as legacyfs.

;;; Commentary:

;; A major mode for the text of models: Neverwinter Nights ASCII MDL (the
;; model.mdl view of a legacyfs mount) and the MDL-style text views legacyfs
;; shows for NOD, SOD, NIL (model.txt) and NAD (anim.txt):
;;
;; - font-lock of keywords, node types, names, numbers and comments;
;; - folding per node (node ... endnode) and animation (newanim ... doneanim)
;;   with hideshow (`hs-minor-mode', on by default) and outline headings;
;; - a flymake backend running `legacyfs-convert check MODEL VIEW FILE' on
;;   the buffer's text (nothing saved): the messages a save would give;
;; - a save that a mount refuses shows the first message of the model
;;   folder's errors.txt in the echo area with point on its line.
;;
;; MODEL and VIEW are found from /proc/self/mounts for a file in a legacyfs
;; mount (type fuse.legacyfs, device = SOURCE), or set `legacyfs-model' and
;; `legacyfs-view' (file-local) for a copy outside a mount.
;;
;; Install: put this file on `load-path' and (require 'legacyfs-mode).

;;; Code:

(require 'hideshow)
(require 'flymake)
(require 'subr-x)

(defgroup legacyfs nil "Model text of legacyfs mounts." :group 'languages)

(defcustom legacyfs-convert-program "legacyfs-convert"
  "The legacyfs-convert program `legacyfs-flymake' runs."
  :type 'string)

(defvar-local legacyfs-model nil
  "The model file the buffer's text is a view of (nil: from the mount).")
(defvar-local legacyfs-view nil
  "The view path of the buffer inside its model folder (nil: from the mount).")
(put 'legacyfs-model 'safe-local-variable #'stringp)
(put 'legacyfs-view 'safe-local-variable #'stringp)

(defconst legacyfs--keywords
  '("newmodel" "donemodel" "setsupermodel" "classification" "setanimationscale"
    "beginmodelgeom" "endmodelgeom" "node" "endnode" "newanim" "doneanim"
    "length" "transtime" "animroot" "event" "eventlist" "endlist" "filedependancy"
    "parent" "verts" "faces" "tverts" "weights" "constraints" "aabb" "colors"
    "model" "anim" "endanim")
  "Structure keywords of NWN ASCII MDL and the legacyfs text views.")

(defconst legacyfs--node-types
  '("dummy" "trimesh" "skin" "danglymesh" "emitter" "light" "aabb" "reference"
    "patch" "animmesh" "camera")
  "Node types of NWN ASCII MDL.")

(defconst legacyfs-font-lock-keywords
  `((,(concat "^\\s-*\\(node\\)\\s-+\\(\\(?:\\sw\\|\\s_\\)+\\)\\s-+\\(\\(?:\\sw\\|\\s_\\)+\\)")
     (1 font-lock-keyword-face) (2 font-lock-type-face) (3 font-lock-function-name-face))
    (,(concat "^\\s-*\\(newanim\\)\\s-+\\(\\(?:\\sw\\|\\s_\\)+\\)")
     (1 font-lock-keyword-face) (2 font-lock-function-name-face))
    (,(concat "^\\s-*" (regexp-opt legacyfs--keywords 'words)) (1 font-lock-keyword-face))
    ("^\\s-*\\([A-Za-z_][A-Za-z0-9_]*\\)" (1 font-lock-variable-name-face))
    ("\\_<[-+]?\\(?:[0-9]+\\.?[0-9]*\\|\\.[0-9]+\\)\\(?:[eE][-+]?[0-9]+\\)?\\_>"
     . font-lock-constant-face))
  "Highlighting of `legacyfs-mode'.")

(defvar legacyfs-mode-syntax-table
  (let ((st (make-syntax-table)))
    (modify-syntax-entry ?# "<" st)
    (modify-syntax-entry ?\n ">" st)
    (modify-syntax-entry ?_ "_" st)
    (modify-syntax-entry ?. "_" st)
    (modify-syntax-entry ?- "_" st)
    st)
  "Syntax table of `legacyfs-mode'.")

(defun legacyfs--forward-block (&optional _arg)
  "Move past the endnode/doneanim that closes the block starting at point."
  (let ((depth 0) (done nil))
    (while (and (not done)
                (re-search-forward "^\\s-*\\(node\\|newanim\\|endnode\\|doneanim\\)\\_>" nil 'move))
      (if (member (match-string 1) '("node" "newanim"))
          (setq depth (1+ depth))
        (setq depth (1- depth))
        (when (<= depth 0) (setq done t) (end-of-line))))))

;;;###autoload
(define-derived-mode legacyfs-mode prog-mode "legacyfs"
  "Major mode for NWN ASCII models and legacyfs text views (docs/emacs.md).
Folding per node with `hs-minor-mode' (C-c @ C-c) or `outline-minor-mode';
flymake through `legacyfs-convert check'."
  :syntax-table legacyfs-mode-syntax-table
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+\\s-*")
  (setq-local font-lock-defaults '(legacyfs-font-lock-keywords))
  (setq-local outline-regexp "\\s-*\\(newmodel\\|beginmodelgeom\\|newanim\\|node\\)\\_>")
  (setq-local outline-level (lambda () (1+ (/ (current-indentation) 2))))
  (hs-minor-mode 1)
  (add-hook 'flymake-diagnostic-functions #'legacyfs-flymake nil t))

(add-to-list 'hs-special-modes-alist
             '(legacyfs-mode "^\\s-*\\(?:node\\|newanim\\)\\_>" "^\\s-*\\(?:endnode\\|doneanim\\)\\_>"
                             "#" legacyfs--forward-block nil))

;;; Where a file of a mount comes from

(defun legacyfs--unescape (s)
  "S with the octal escapes of /proc/self/mounts decoded."
  (replace-regexp-in-string "\\\\\\([0-7]\\{3\\}\\)"
                            (lambda (m) (string (string-to-number (substring m 1) 8))) s t t))

(defun legacyfs-mounts ()
  "The legacyfs mounts: ((MOUNTPOINT . SOURCE) ...), longest mountpoint first."
  (when (file-readable-p "/proc/self/mounts")
    (let (res)
      (with-temp-buffer
        (insert-file-contents "/proc/self/mounts")
        (dolist (line (split-string (buffer-string) "\n" t))
          (let ((f (split-string line " ")))
            (when (and (>= (length f) 3) (equal (nth 2 f) "fuse.legacyfs"))
              (push (cons (legacyfs--unescape (nth 1 f)) (legacyfs--unescape (nth 0 f))) res)))))
      (sort res (lambda (a b) (> (length (car a)) (length (car b))))))))

(defun legacyfs-locate (file)
  "Where FILE of a legacyfs mount comes from, or nil.
A plist (:model FILE-IN-SOURCE :folder MODEL-FOLDER :view VIEW-PATH): the
model folder is the first folder of the path that is a file in SOURCE."
  (let ((p (expand-file-name file)) found)
    (dolist (m (legacyfs-mounts))
      (when (and (not found) (string-prefix-p (concat (car m) "/") p))
        (let* ((parts (split-string (substring p (1+ (length (car m)))) "/" t))
               (rel nil) (i 0))
          (while (and (not found) (< i (1- (length parts))))
            (setq rel (if rel (concat rel "/" (nth i parts)) (nth i parts)))
            (let ((model (concat (cdr m) "/" rel)))
              (when (and (file-regular-p model))
                (setq found (list :model model :folder (concat (car m) "/" rel)
                                  :view (string-join (nthcdr (1+ i) parts) "/")))))
            (setq i (1+ i))))))
    found))

;;; flymake

(defconst legacyfs--message-re
  "^\\([^:\n]+\\):\\([0-9]+\\):\\([0-9]+\\): \\(error\\|warning\\|note\\): \\(.*\\)$"
  "A gcc-style message of legacyfs: FILE:LINE:COL: KIND: TEXT.")

(defvar-local legacyfs--flymake-proc nil)

(defun legacyfs--model-view ()
  "(MODEL . VIEW) of the current buffer, or nil."
  (if (and legacyfs-model legacyfs-view)
      (cons legacyfs-model legacyfs-view)
    (let ((loc (and buffer-file-name (legacyfs-locate buffer-file-name))))
      (and loc (cons (plist-get loc :model) (plist-get loc :view))))))

(defun legacyfs-flymake (report-fn &rest _args)
  "Flymake backend: `legacyfs-convert check MODEL VIEW TEMP' of the buffer.
Calls REPORT-FN with the diagnostics of the messages naming the text."
  (let ((mv (legacyfs--model-view)))
    (if (not mv)
        (funcall report-fn nil)
      (when (process-live-p legacyfs--flymake-proc)
        (kill-process legacyfs--flymake-proc))
      (let* ((source (current-buffer))
             (tmp (make-temp-file "legacyfs-check"))
             (out (generate-new-buffer " *legacyfs-check*")))
        (write-region nil nil tmp nil 'silent)
        (setq legacyfs--flymake-proc
              (make-process
               :name "legacyfs-check" :noquery t :connection-type 'pipe
               :buffer out
               :command (list legacyfs-convert-program "check" (car mv) (cdr mv) tmp)
               :sentinel
               (lambda (proc _event)
                 (when (memq (process-status proc) '(exit signal))
                   (unwind-protect
                       (when (and (buffer-live-p source)
                                  (eq proc (buffer-local-value 'legacyfs--flymake-proc source)))
                         (funcall report-fn (legacyfs--diagnostics source out tmp)))
                     (delete-file tmp)
                     (kill-buffer out))))))))))

(defun legacyfs--diagnostics (source out tmp)
  "Flymake diagnostics of SOURCE from the messages in buffer OUT naming TMP."
  (let (diags)
    (with-current-buffer out
      (goto-char (point-min))
      (while (re-search-forward legacyfs--message-re nil t)
        (when (equal (match-string 1) tmp)
          (let* ((line (string-to-number (match-string 2)))
                 (col (string-to-number (match-string 3)))
                 (kind (match-string 4))
                 (text (match-string 5))
                 (reg (flymake-diag-region source line col)))
            (push (flymake-make-diagnostic
                   source (car reg) (cdr reg)
                   (pcase kind ("error" :error) ("warning" :warning) (_ :note)) text)
                  diags)))))
    (nreverse diags)))

;;; A refused save

(defvar-local legacyfs-last-error nil
  "The first message of errors.txt after the last refused save, or nil.")

(defun legacyfs--show-refusal (loc)
  "After a refused save of a view at LOC: first error of errors.txt, point on it.
Returns the message or nil."
  (let ((errs (concat (plist-get loc :folder) "/errors.txt")) msg)
    (when (file-readable-p errs)
      (with-temp-buffer
        (insert-file-contents errs)
        (goto-char (point-min))
        (while (and (not msg) (re-search-forward legacyfs--message-re nil t))
          (when (equal (match-string 4) "error")
            (setq msg (list (match-string 1) (string-to-number (match-string 2))
                            (string-to-number (match-string 3)) (match-string 5))))))
      (when msg
        (when (equal (nth 0 msg) (plist-get loc :view))
          (goto-char (point-min))
          (forward-line (1- (nth 1 msg)))
          (move-to-column (max 0 (1- (nth 2 msg)))))
        (setq legacyfs-last-error
              (format "%s:%d:%d: error: %s" (nth 0 msg) (nth 1 msg) (nth 2 msg) (nth 3 msg)))))))

(defun legacyfs--save-around (orig &rest args)
  "Around `basic-save-buffer' (ORIG, ARGS): show why a mount refused the save."
  (if (not (and (derived-mode-p 'legacyfs-mode) buffer-file-name))
      (apply orig args)
    (setq legacyfs-last-error nil)
    (condition-case err
        (apply orig args)
      (file-error
       (let* ((loc (legacyfs-locate buffer-file-name))
              (msg (and loc (legacyfs--show-refusal loc))))
         (if msg
             (progn (message "%s" msg)
                    ;; the view on disk is the mount's text of the unchanged
                    ;; model, not a change by someone else: the next save
                    ;; should not ask (the mount itself refuses a stale save)
                    (set-visited-file-modtime 0)
                    (signal (car err) (append (cdr err) (list msg))))
           (signal (car err) (cdr err))))))))

(advice-add 'basic-save-buffer :around #'legacyfs--save-around)

;;; Which files

(defun legacyfs--ascii-model-p ()
  "Non-nil when the buffer starts like NWN ASCII MDL text (no NUL byte)."
  (save-excursion
    (goto-char (point-min))
    (and (not (search-forward "\0" (min (point-max) 4096) t))
         (re-search-forward "^\\s-*\\(#MAXMODEL\\|newmodel\\|beginmodelgeom\\|filedependancy\\|node\\s-+\\sw\\)"
                            (min (point-max) 8192) t))))

;;;###autoload
(add-to-list 'magic-mode-alist '("# legacyfs[: ]" . legacyfs-mode))
;;;###autoload
(add-to-list 'auto-mode-alist '("/\\(?:model\\.mdl\\|model\\.txt\\|anim\\.txt\\)\\'" . legacyfs-mode))
;;;###autoload
(add-to-list 'magic-fallback-mode-alist (cons #'legacyfs--ascii-model-p #'legacyfs-mode))

(provide 'legacyfs-mode)
;;; legacyfs-mode.el ends here
