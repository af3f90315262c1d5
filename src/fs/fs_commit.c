/**
 * @file fs_commit.c
 * Commit of an edited view back into SOURCE (docs/editing.md "Commit"):
 * the stale-save check against the text the editor read, the parse through
 * the views layer (commit_apply, the one call site), the atomic replace of
 * the model file (replace.h), the outcome (overlay dropped or kept, the
 * message in errors.txt and the log, the refused text in <view>.rejected,
 * invalidations queued), on FLUSH/FSYNC of a view and on rename of a
 * scratch file onto a view. A commit holds its model's commit_mu, never
 * fs->mu while it reads or writes SOURCE.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry/container.h"
#include "merge.h"
#include "replace.h"
#include "source.h"

/*
 * Bound of the edit distance (lines, per side) a merge searches (merge.h
 * max_d): the search keeps (D+1)^2 positions, 8 MB at 1000. Beyond it each
 * side's changed middle is one change (a conflict when both sides changed).
 */
#define MERGE_MAX_D 1000
/* Candidate bases of a merge at most (gather_bases): the base and the
 * versions served since, which the history holds SERVED_HIST of. */
#define MERGE_BASES (SERVED_HIST + 1)
/* Conflicts listed one per line in a refusal; the rest are counted. */
#define MERGE_LISTED 6

/*
 * After a save of @p vpath: take the new generated text of the view as the
 * version served (the kernel's caches are invalidated), and record for the
 * saving process @p t->saver that it holds the text it saved (@p t): its
 * next save is based on it, and merges with what others save meanwhile
 * (docs/editing.md "Concurrent saves"). That text stands for the new
 * generated version unless it was @p merged with other changes (then the
 * writer's buffer lacks them, and its next save must merge again).
 *
 * The new generated text is @p reread (@p rn bytes), the view as the
 * round-trip law read it back from the new bytes (lfs_view_apply_keep):
 * no other view of the new file is built here; the view cache builds them
 * when something reads them. Only when @p reread is NULL (a view kind the
 * law compares no text for) are the new file's views built for it (through
 * the view cache, as a read would). Unlocked.
 */
static void served_after_commit(lfs_fs *fs, const char *rel, const char *vpath, const struct stat *st,
				const struct ctext *t, bool merged, const char *reread, size_t rn)
{
	lfs_centry *ce = NULL;
	const lfs_view *v = NULL;
	lfs_cache_key key;
	if (reread) {
		key = lfs_cache_key_of(st, rel);
	} else {
		ce = fsi_entry_for(fs, rel, st);
		if (!ce)
			return;
		v = ce->kind == LFS_SOURCE_MODEL ? lfs_viewset_find(&ce->vs, vpath) : NULL;
		if (v) {
			key = ce->key;
			reread = v->data;
			rn = v->size;
		}
	}
	uint64_t h = reread ? fsi_text_hash(reread, rn) : 0;
	uint64_t mine = t ? fsi_text_hash(t->data, t->n) : 0;
	fs_lock(fs);
	if (reread) {
		/* A merged save: its text goes into the history before the new
		 * version, so that the saver's next save (based on it) has the
		 * versions served since as candidate bases (gather_bases). */
		if (t && t->saver && merged && mine != h)
			fsi_served_saved(fs, rel, vpath, mine, &key);
		fsi_served_set(fs, rel, vpath, h, &key);
		fsi_vtext_put(fs, h, reread, rn);
		if (t && t->saver) {
			fsi_vtext_put(fs, mine, t->data, t->n);
			fsi_rdrec_set(fs, t->saver, rel, vpath, mine, merged ? mine : h);
		}
	}
	if (ce)
		lfs_cache_release(&fs->cache, ce);
	fs_unlock(fs);
}

/*
 * Append printf-style text to the message @p msg (@p msgsz bytes; cut at
 * the end of the buffer).
 */
static void msg_add(char *msg, size_t msgsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msg_add(char *msg, size_t msgsz, const char *fmt, ...)
{
	size_t l = strlen(msg);
	if (l + 1 >= msgsz)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + l, msgsz - l, fmt, ap);
	va_end(ap);
}

/* "lines A-B" / "line A" of a range of @p count lines from @p first, into @p buf. */
static const char *lines_of(char *buf, size_t bufsz, size_t first, size_t count)
{
	if (count <= 1)
		snprintf(buf, bufsz, "line %zu", first);
	else
		snprintf(buf, bufsz, "lines %zu-%zu", first, first + count - 1);
	return buf;
}

/*
 * The candidate bases of save @p t of view @p vpath of model @p rel, oldest
 * first, for lfs_merge3_bases(): the text of its base (what its process
 * last read or saved), then the versions served since (fsi_served_since:
 * the process may have read any of them from the kernel's page cache, which
 * another reader filled), as long as their texts are kept (the list stops
 * at the first one that is not: every version it may have read must be in
 * it). @p owned[i]: the malloc'd copy behind @p bases[i]. 0, ENOENT (the
 * base's own text is no longer kept) or ENOMEM. Takes fs->mu.
 */
static int gather_bases(lfs_fs *fs, const char *rel, const char *vpath, const struct ctext *t,
			lfs_merge_text *bases, char **owned, size_t *nbases)
{
	uint64_t since[MERGE_BASES];
	*nbases = 0;
	fs_lock(fs);
	size_t ns = fsi_served_since(fs, rel, vpath, t->base_gen ? t->base_gen : t->base_hash, since,
				     MERGE_BASES - 1);
	int r = 0;
	uint64_t prev = t->base_hash;
	for (size_t i = 0; i <= ns && !r; i++) {
		uint64_t h = i ? since[i - 1] : t->base_hash;
		if (i && h == prev)
			continue; /* the base itself (a read record: base == gen) */
		size_t n = 0;
		r = fsi_vtext_copy(fs, h, &owned[*nbases], &n);
		if (r == ENOENT && i)
			break; /* not kept: the versions after it cannot be checked */
		if (!r) {
			bases[*nbases] = (lfs_merge_text){ owned[*nbases], n };
			(*nbases)++;
			prev = h;
		}
	}
	fs_unlock(fs);
	if (r == ENOENT && *nbases)
		r = 0;
	if (r)
		for (size_t i = 0; i < *nbases; i++)
			free(owned[i]);
	return r;
}

/*
 * The save @p t of view @p vpath is based on a version that is not the
 * current text @p cur (@p curn bytes): merge its changes onto the current
 * text (merge.h). 0 with *out a malloc'd merged text (and a note in @p msg),
 * EINVAL (conflicts, or the base text is no longer kept: @p msg says which
 * lines), ENOMEM. Unlocked (takes fs->mu to copy the base text).
 */
static int merge_onto(lfs_fs *fs, const char *rel, const char *vpath, const struct ctext *t,
		      const char *cur, size_t curn, struct ctext *out, char *msg, size_t msgsz)
{
	if (fsi_text_hash(t->data, t->n) == t->base_hash) {
		/* The writer changed nothing (an editor putting its copy back): the current text. */
		*out = *t;
		out->data = malloc(curn ? curn : 1);
		if (!out->data)
			return ENOMEM;
		memcpy(out->data, cur, curn);
		out->n = curn;
		return 0;
	}
	char *owned[MERGE_BASES];
	lfs_merge_text bases[MERGE_BASES];
	size_t nbases = 0;
	int r = gather_bases(fs, rel, vpath, t, bases, owned, &nbases);
	if (r == ENOENT) {
		snprintf(msg, msgsz,
			 "%s: error: not saved: %s changed in SOURCE after this view was read, and the text "
			 "read then is no longer kept (the mount keeps the last %zu MiB of texts), so the "
			 "changes cannot be merged; read the view again and redo the edit\n",
			 vpath, rel, (size_t)(VTEXT_MAX_BYTES >> 20));
		return EINVAL;
	}
	if (r) {
		snprintf(msg, msgsz, "%s: error: not saved: out of memory\n", vpath);
		return r;
	}
	lfs_merge_result m;
	size_t chosen = 0;
	r = lfs_merge3_bases(bases, nbases, t->data, t->n, cur, curn, MERGE_MAX_D, &m, &chosen);
	for (size_t i = 0; i < nbases; i++)
		free(owned[i]);
	if (r) {
		snprintf(msg, msgsz, "%s: error: not saved: out of memory\n", vpath);
		return r;
	}
	if (m.nconflicts) {
		msg[0] = '\0';
		char a[64], b[96], lb[48];
		for (size_t i = 0; i < m.nconflicts && i < MERGE_LISTED; i++) {
			const lfs_merge_conflict *c = &m.conflicts[i];
			if (c->mine_count)
				lines_of(a, sizeof(a), c->mine_first, c->mine_count);
			else
				snprintf(a, sizeof(a), "the lines you deleted before line %zu", c->mine_first);
			if (c->theirs_count)
				snprintf(b, sizeof(b), "%s of the current text",
					 lines_of(lb, sizeof(lb), c->theirs_first, c->theirs_count));
			else
				snprintf(b, sizeof(b), "deleted in the current text");
			msg_add(msg, msgsz,
				"%s:%zu:1: error: conflicts with a change saved since you read this file "
				"(%s; %s)\n", vpath, c->mine_first, a, b);
		}
		if (m.nconflicts > MERGE_LISTED)
			msg_add(msg, msgsz, "%s: error: ... and %zu more conflicting places\n", vpath,
				m.nconflicts - MERGE_LISTED);
		msg_add(msg, msgsz,
			"%s: note: %s changed in SOURCE after this view was read and the changes overlap; "
			"read the view again (it shows the current text) and redo the edit\n",
			vpath, rel);
		lfs_merge_result_free(&m);
		return EINVAL;
	}
	/* The saved text already holds every change of the other side (the base
	 * guessed for it was older than what the writer read): nothing to tell. */
	bool same = m.len == t->n && (m.len == 0 || memcmp(m.text, t->data, m.len) == 0);
	*out = *t;
	out->data = m.text; /* malloc'd: freed by the caller */
	out->n = m.len;
	m.text = NULL;
	lfs_merge_result_free(&m);
	if (same)
		return 0;
	snprintf(msg, msgsz,
		 "%s: note: merged with changes saved since this file was read (by another program or "
		 "view); read %s again to see the merged text\n", vpath, vpath);
	return 0;
}

/*
 * The one apply entry of the mount: view @p vpath of model file @p rel
 * (@p n bytes at @p orig, read with stat @p st) gets the new text @p t,
 * siblings (an NWN supermodel) read beside the model. The view is found
 * once: the one of the view set built from these very bytes (the cache
 * entry of @p st), else (the file changed again since) the edited view
 * alone built from @p orig. An archive's member goes through its
 * container's apply (which applies the member's view the same way), a
 * model's view through lfs_view_apply_keep (the format's apply and the
 * round-trip law). *out: malloc'd new model bytes; *reread the view as the
 * law read it back. Unlocked.
 */
static lfs_err commit_apply(lfs_fs *fs, const char *rel, const struct stat *st,
			    const uint8_t *orig, size_t n, const char *vpath,
			    const struct ctext *t, lfs_warnings *warn, uint8_t **out, size_t *outn,
			    char **reread, size_t *rn, lfs_error *err)
{
	*reread = NULL;
	*rn = 0;
	char *dir = strdup(rel);
	if (dir) {
		char *sl = strrchr(dir, '/');
		*(sl ? sl : dir) = '\0';
	}
	lfs_sibling_ctx sc = { fs->rootfd, dir ? dir : "", fs->o.max_model_size };
	lfs_siblings sib = { lfs_sibling_model_read, &sc, warn };
	lfs_centry *ce = fsi_entry_for(fs, rel, st);
	const lfs_view *v =
		ce && ce->kind == LFS_SOURCE_MODEL ? lfs_viewset_find(&ce->vs, vpath) : NULL;
	const lfs_format *vf = v ? ce->vs.format : NULL;
	const lfs_container *c = lfs_container_of(lfs_source_format_for(lfs_source_basename(rel), orig, n));
	lfs_viewset own = { 0 };
	lfs_err e = LFS_OK;
	if (!c && !v) {
		e = lfs_views_edited(lfs_source_basename(rel), orig, n, vpath, &own, &v, err);
		vf = own.format;
	}
	if (c)
		e = c->apply(orig, n, vpath, v, t->data, t->n, &sib, out, outn, reread, rn, err);
	else if (!e)
		e = lfs_view_apply_keep(vf, orig, n, v, t->data, t->n, &sib, out, outn, reread, rn,
					err);
	lfs_viewset_free(&own);
	if (ce) {
		fs_lock(fs);
		lfs_cache_release(&fs->cache, ce);
		fs_unlock(fs);
	}
	free(dir);
	return e;
}

/* Is @p rel a file of SOURCE itself (not a member "<archive>/<name>")? */
bool fsi_is_plain_file(lfs_fs *fs, const char *rel)
{
	struct stat st;
	return fstatat(fs->rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/*
 * Replace source file @p rel (read with stat @p st) of folder @p model with
 * @p out (@p outn bytes), atomically (replace.h); the folder then shows the
 * new file (same node, new inode: *nst). A failure, or a folder fsync that
 * failed after the file was in place (the save still succeeds), is added to
 * @p msg as a line of @p name ("the <noun> is unchanged"). Unlocked.
 * Returns 0 or the errno of the write.
 */
static int write_source(lfs_fs *fs, struct node *model, const char *rel, const uint8_t *out,
			size_t outn, const struct stat *st, struct stat *nst, const char *name,
			const char *noun, char *msg, size_t msgsz)
{
	int kept = 1, dsync = 0;
	char what[PATH_MAX + 64];
	what[0] = '\0';
	char arch[PATH_MAX];
	const char *member;
	const lfs_container *c = NULL;
	int r = lfs_container_member(rel, arch, sizeof(arch), &member, &c) &&
			 !(S_ISREG(st->st_mode) && fsi_is_plain_file(fs, rel))
		 ? fsi_write_member(fs, c, arch, member, out, outn, st, nst, &kept, &dsync, what,
				sizeof(what))
		 : lfs_replace_file_ex(fs->rootfd, rel, out, outn, st, nst, &kept, &dsync, what,
				       sizeof(what));
	if (r) {
		snprintf(msg, msgsz, "%s: error: not saved: writing %s failed (%s): %s; the %s is "
			 "unchanged\n", name, rel, what, strerror(r), noun);
		return r;
	}
	if (dsync)
		msg_add(msg, msgsz, "%s: warning: saved, but not confirmed durable: fsync of the folder "
			"failed: %s (errno %d)\n", name, strerror(dsync), dsync);
	if (!kept)
		fsi_log(fs, LFS_LOG_WARNING, "%s: saved, but the new file belongs to the daemon's user "
		       "(cannot give it back to %u:%u)", rel, (unsigned)st->st_uid, (unsigned)st->st_gid);
	fs_lock(fs);
	model->src_dev = (uint64_t)nst->st_dev;
	model->src_ino = (uint64_t)nst->st_ino;
	model->self_commit = fs->ifd >= 0;
	fs_unlock(fs);
	return 0;
}

/*
 * Save @p t of view @p vpath of model file @p rel (read with stat @p st)
 * is based on a version (fsi_save_base): when that is no longer the
 * current text, its changes are merged onto the current text into
 * @p merged (its text malloc'd, a note in @p note; *@p use then points at
 * it), or the save is refused (docs/editing.md "Concurrent saves"). 0
 * (*@p use unchanged: @p t applies as it is), EINVAL (@p msg says why: the file changed and no
 * longer has the view, or the changes conflict), ENOMEM. Unlocked.
 */
static int merge_if_stale(lfs_fs *fs, const char *rel, const struct stat *st, const char *vpath,
			  const struct ctext *t, struct ctext *merged, const struct ctext **use,
			  char *note, size_t notesz, char *msg, size_t msgsz)
{
	lfs_centry *ce = fsi_entry_for(fs, rel, st);
	bool decodes = ce && ce->kind == LFS_SOURCE_MODEL;
	const lfs_view *v = decodes ? lfs_viewset_find(&ce->vs, vpath) : NULL;
	if (fsi_view_lazy(v)) {
		/* an archive's resource: its bytes from their own entry */
		int re = 0;
		lfs_centry *rce = fsi_resource_entry(fs, ce, vpath, &re);
		fs_lock(fs);
		lfs_cache_release(&fs->cache, ce);
		fs_unlock(fs);
		ce = rce;
		v = rce ? &rce->vs.views[0] : NULL;
	}
	uint64_t cur = v ? fsi_text_hash(v->data, v->size) : 0;
	uint64_t bgen = t->base_gen ? t->base_gen : t->base_hash;
	int r = 0;
	if (!v) {
		snprintf(msg, msgsz,
			 "%s: error: not saved: %s changed in SOURCE after this view was read%s; "
			 "read the view again and redo the edit\n",
			 vpath, rel, !decodes ? " (it no longer decodes)" : " (this view no longer exists)");
		r = EINVAL;
	} else if (cur != bgen && cur != fsi_text_hash(t->data, t->n)) {
		r = merge_onto(fs, rel, vpath, t, v->data, v->size, merged, note, notesz);
		if (!r) {
			*use = merged;
		} else {
			snprintf(msg, msgsz, "%s", note);
			note[0] = '\0';
		}
	}
	if (ce) {
		fs_lock(fs);
		lfs_cache_release(&fs->cache, ce);
		fs_unlock(fs);
	}
	return r;
}

/*
 * Parse @p t as the new text of view @p vpath of the model file @p rel and
 * write the result into SOURCE. The caller holds the model's commit_mu, not
 * fs->mu. Returns 0 (*noop: the text encodes to the bytes already there, the
 * file is left alone), EINVAL (bad edit or stale base; @p msg holds the
 * gcc-style lines), or the errno of reading/writing SOURCE (@p msg says so).
 */
static int do_commit(lfs_fs *fs, struct node *model, const char *rel, const char *vpath,
		     const struct ctext *t, bool *noop, char *msg, size_t msgsz)
{
	*noop = false;
	msg[0] = '\0';
	if (t->cut == ENOSPC) {
		/* A write that did not fit: the text lacks it (docs/editing.md "Too large"). */
		snprintf(msg, msgsz,
			 "%s: error: not saved: a write to this text failed (ENOSPC: the edit memory, "
			 "-o edit_size=%zuM, is full), so the text lacks part of what was written; "
			 "nothing of it was applied; remove scratch files or mount with a larger "
			 "-o edit_size\n", vpath, fs->edit_max >> 20);
		return ENOSPC;
	}
	if (t->cut || t->n > fs->save_max) {
		/* Refused before anything parses it (docs/editing.md "Too large"). */
		snprintf(msg, msgsz,
			 "%s: error: not saved: the text is larger than a save may be (%zu KiB, a "
			 "sixteenth of -o edit_size=%zuM; %s), nothing of it was applied; save a smaller "
			 "text or mount with a larger -o edit_size\n",
			 vpath, fs->save_max >> 10, fs->edit_max >> 20,
			 t->cut ? "writing past it failed with EFBIG" : "the text saved is larger");
		return EFBIG;
	}
	uint8_t *orig = NULL;
	size_t n = 0;
	struct stat st;
	int r = lfs_read_source(fs->rootfd, rel, fs->o.max_model_size, &orig, &n, &st);
	if (r) {
		snprintf(msg, msgsz, "%s: error: not saved: cannot read the model file %s: %s\n", vpath,
			 rel, strerror(r));
		return r;
	}
	/* The text the format applies: @p t, or @p t merged onto the current text. */
	struct ctext merged = { 0 };
	const struct ctext *use = t;
	char note[512];
	note[0] = '\0';
	if (t->base_valid && (r = merge_if_stale(fs, rel, &st, vpath, t, &merged, &use, note,
						 sizeof(note), msg, msgsz)) != 0) {
		free(orig);
		return r;
	}
	lfs_error err;
	memset(&err, 0, sizeof(err));
	uint8_t *out = NULL;
	size_t outn = 0;
	lfs_warnings warn = { 0 };
	char *reread = NULL; /* the view as the new bytes read back (the law's) */
	size_t rn = 0;
	lfs_err e = commit_apply(fs, rel, &st, orig, n, vpath, use, &warn, &out, &outn, &reread, &rn,
				 &err);
	free(merged.data);
	if (e != LFS_OK) {
		free(orig);
		free(out);
		switch (e) {
		case LFS_ERR_PARSE:
			snprintf(msg, msgsz, "%s\n", err.msg);
			if (note[0])
				msg_add(msg, msgsz, "%s: note: this is the text merged with changes saved "
					"since this file was read (its line numbers)\n", vpath);
			return EINVAL;
		case LFS_ERR_NOMEM:
			snprintf(msg, msgsz, "%s: error: not saved: out of memory\n", vpath);
			return ENOMEM;
		case LFS_ERR_UNSUPPORTED:
			snprintf(msg, msgsz, "%s: error: not saved: %s\n", vpath, err.msg);
			return EROFS;
		case LFS_ERR_IO:
			snprintf(msg, msgsz, "%s: error: not saved: %s\n", vpath, err.msg);
			return EIO;
		default:
			snprintf(msg, msgsz, "%s: error: not saved: %s\n", vpath, err.msg);
			return EINVAL;
		}
	}
	if (warn.len) /* a save that lands with warnings: commit_done/commit_log show them */
		snprintf(msg, msgsz, "%.*s", (int)warn.len, warn.text);
	msg_add(msg, msgsz, "%s", note);
	if (outn == n && (n == 0 || memcmp(out, orig, n) == 0)) {
		/* Same model: SOURCE keeps its bytes and its mtime. */
		*noop = true;
		free(orig);
		free(out);
		served_after_commit(fs, rel, vpath, &st, t, use != t, reread, rn);
		free(reread);
		return 0;
	}
	struct stat nst;
	r = write_source(fs, model, rel, out, outn, &st, &nst, vpath, "model file", msg, msgsz);
	free(orig);
	free(out);
	if (r) {
		free(reread);
		return r;
	}
	served_after_commit(fs, rel, vpath, &nst, t, use != t, reread, rn);
	free(reread);
	return 0;
}

/* After a commit attempt of view @p vpath (fs->mu held). */
static void commit_done(lfs_fs *fs, struct mstate *ms, struct node *model, const char *vpath,
			const struct ctext *t, int r, bool noop, const char *msg, bool from_overlay)
{
	char rej[PATH_MAX];
	snprintf(rej, sizeof(rej), "%s%s", vpath, LFS_FS_REJECTED_SUFFIX);
	struct overlay *o = from_overlay ? fsi_ovl_find(ms, vpath) : NULL;
	if (!r) {
		if (o && o->gen == t->gen)
			fsi_ovl_drop(fs, ms, vpath); /* the view shows the (re)generated text */
		else if (o)
			o->written = o->modified = false; /* newer writes arrived meanwhile */
		/* A real save answers the last refusal; a no-op (e.g. vim putting
		 * its backup back after a refusal) does not. */
		if (!noop)
			fsi_merr_clear(ms, vpath);
		if (msg[0]) {
			/* saved with warnings (lfs_warnings of the apply) */
			size_t need = strlen(msg) + strlen(vpath) + strlen(model->rel) + 80;
			char *full = malloc(need);
			if (full) {
				snprintf(full, need, "%s%s: note: saved; the model file %s %s\n", msg, vpath,
					 model->rel, noop ? "already held these bytes" : "was written");
				fsi_merr_set(ms, vpath, full);
				free(full);
			}
		}
		uint64_t h;
		fsi_pbase_take(ms, vpath, &h);
		if (noop)
			fs->commit_noops++;
		else
			fs->commits++;
	} else {
		/* The view shows the generated text again; the refused text is
		 * kept in <view>.rejected (and in the editor's buffer). */
		if (o && o->gen == t->gen)
			fsi_ovl_drop(fs, ms, vpath);
		else if (o)
			o->written = o->modified = false;
		if (r == EINVAL)
			fs->commit_refused++;
		size_t need = strlen(msg) + strlen(vpath) + strlen(model->rel) + strlen(rej) + 160;
		char *full = malloc(need);
		/* A text over the save bound is not kept (it is large, and lacks
		 * what its writer could not write): the editor's buffer has it. */
		bool keep = r != EFBIG && !t->cut;
		if (full) {
			snprintf(full, need, "%s%s: note: the model file %s was not changed; the refused "
				 "text is %s%s\n", msg, vpath, model->rel,
				 keep ? "kept in " : "not kept (too large)", keep ? rej : "");
			fsi_merr_set(ms, vpath, full);
			free(full);
		}
		if (keep)
			fsi_scratch_put(fs, ms, rej, t->data, t->n, 0644, fs->uid, fs->gid);
	}
	/* Every view of the model (sizes, pages) and the listings (errors.txt,
	 * *.rejected): sent by the notification thread. */
	fsi_inval_subtree(&fs->pending, model);
	fsi_served_after_queue(fs, model->rel, vpath);
	fsi_kick(fs);
}

/* Log the outcome of a commit (unlocked). */
static void commit_log(lfs_fs *fs, const char *rel, const char *vpath, int r, bool noop,
		       const char *msg)
{
	if (!r) {
		fsi_log(fs, LFS_LOG_INFO, "%s: %s %s", rel, noop ? "unchanged by the save of" :
		       "saved from", vpath);
	}
	/* One log line per message line. */
	const char *p = msg;
	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		fsi_log(fs, LFS_LOG_WARNING, "%s: %.*s", rel, len, p);
		p += len + (nl ? 1 : 0);
	}
}

/* The text of @p b into @p t (a malloc'd copy). 0 or ENOMEM. */
static int ctext_copy(struct ctext *t, const lfs_membuf *b)
{
	t->data = malloc(b->len ? b->len : 1);
	if (!t->data)
		return ENOMEM;
	if (b->len)
		memcpy(t->data, b->data, b->len);
	t->n = b->len;
	return 0;
}

/* The outcome of one commit attempt besides its errno. */
struct commit_out {
	bool noop;      /* the text encoded to the bytes already in SOURCE */
	char msg[2048]; /* gcc-style lines of a refusal */
};

/*
 * Commit @p t as view @p vpath of model folder @p model (model file @p rel)
 * and record the outcome (commit_done). The caller holds ms->commit_mu and
 * not fs->mu; returns with fs->mu HELD, so that the caller can change the
 * namespace with the outcome; it then unlocks and calls commit_log().
 */
static int commit_text(lfs_fs *fs, struct mstate *ms, struct node *model, const char *rel,
		       const char *vpath, const struct ctext *t, bool from_overlay,
		       struct commit_out *out)
{
	out->noop = false;
	out->msg[0] = '\0';
	int r = do_commit(fs, model, rel, vpath, t, &out->noop, out->msg, sizeof(out->msg));
	fs_lock(fs);
	commit_done(fs, ms, model, vpath, t, r, out->noop, out->msg, from_overlay);
	return r;
}

/*
 * Commit the overlay of view node @p nd when it needs it: FSYNC (@p fsync),
 * or FLUSH by process @p closer (0 = any) when it wrote last.
 */
int fsi_commit_overlay(lfs_fs *fs, struct node *nd, bool fsync, pid_t closer)
{
	fs_lock(fs);
	struct node *model = model_of(nd);
	struct mstate *ms = fsi_ms_find(fs, model->rel);
	struct overlay *o = fsi_ovl_find(ms, nd->rel);
	bool need = o && (fsync ? (o->written || o->modified) :
			  (o->written && (!closer || !o->writer || o->writer == closer)));
	char *rel = need ? strdup(model->rel) : NULL;
	char *vpath = need ? strdup(nd->rel) : NULL;
	fs_unlock(fs);
	if (!need)
		return 0;
	if (!rel || !vpath) {
		free(rel);
		free(vpath);
		return ENOMEM;
	}
	int r = 0;
	struct commit_out out;
	pthread_mutex_lock(&ms->commit_mu);
	fs_lock(fs);
	o = fsi_ovl_find(ms, vpath);
	struct ctext t = { 0 };
	if (o && (o->written || (fsync && o->modified))) {
		r = ctext_copy(&t, &o->text);
		if (!r) {
			t.base_valid = o->base_valid;
			t.base_hash = o->base_hash;
			t.base_gen = o->base_gen;
			t.gen = o->gen;
			t.saver = closer ? closer : o->writer;
			t.cut = o->cut;
		}
	}
	fs_unlock(fs);
	if (t.data) {
		r = commit_text(fs, ms, model, rel, vpath, &t, true, &out);
		fs_unlock(fs);
		commit_log(fs, rel, vpath, r, out.noop, out.msg);
	}
	pthread_mutex_unlock(&ms->commit_mu);
	free(t.data);
	free(rel);
	free(vpath);
	return r;
}

/* rename(scratch a -> view b): the commit (unlocked), then the namespace change. */
int fsi_rename_commit(lfs_fs *fs, struct mstate *ms, struct mloc *a, struct mloc *b, struct node *p,
		  const char *name, struct node *np, const char *newname)
{
	if (!b->vwritable)
		return EROFS;
	pid_t saver = fsi_tgid_cached(fs, fsi_req_pid);
	int r = 0;
	struct commit_out out;
	pthread_mutex_lock(&ms->commit_mu);
	fs_lock(fs);
	struct sname *sa = fsi_sname_find(ms, a->vpath);
	struct ctext t = { 0 };
	char *rel = strdup(a->model->rel);
	if (!sa)
		r = ENOENT;
	else if (!S_ISREG(sa->obj->mode))
		r = EINVAL;
	else if (!rel || ctext_copy(&t, &sa->obj->data) != 0)
		r = ENOMEM;
	if (!r) {
		/* Base: fsi_save_base (the scratch file's own when it is a copy
		 * of a view, else what the renaming process read, ...). */
		struct sobj *o = sa->obj;
		struct fsi_save_q q = { .rel = a->model->rel, .vpath = b->vpath, .saver = saver,
					.copy = { o->base_valid, o->base_hash, o->base_gen } };
		struct fsi_base base;
		t.saver = saver;
		fsi_save_base(fs, ms, &q, &base);
		t.base_valid = base.valid;
		t.base_hash = base.hash;
		t.base_gen = base.gen;
	}
	fs_unlock(fs);
	if (!r) {
		r = commit_text(fs, ms, a->model, rel, b->vpath, &t, false, &out);
		if (!r) {
			/* The scratch file becomes the view (the kernel moved its inode there). */
			fsi_ovl_drop(fs, ms, b->vpath);
			fsi_hidden_clear(fs, ms, b->vpath);
			struct node *tn = fsi_find_child(fs, np, newname);
			struct node *sn = fsi_find_child(fs, p, name);
			if (tn && tn != sn)
				fsi_nh_remove(fs, tn);
			sa = fsi_sname_find(ms, a->vpath);
			if (sa)
				fsi_sname_remove(fs, ms, sa);
			if (sn && sn->kind == K_SCRATCH) {
				fsi_sobj_unref(fs, sn->sobj);
				sn->sobj = NULL;
				sn->kind = K_VFILE;
				fsi_node_move(fs, sn, np, newname, b->vpath);
			}
		}
		fs_unlock(fs);
		commit_log(fs, rel, b->vpath, r, out.noop, out.msg);
	}
	pthread_mutex_unlock(&ms->commit_mu);
	free(t.data);
	free(rel);
	return r;
}

/*
 * One edit of an archive's resources (add, remove, rename: archive_edit.h)
 * committed to the archive file @p model->rel: read, edit, check, replace
 * atomically (as a view's commit), record the outcome in the archive
 * folder's errors.txt under @p name and in the log, invalidate the folder.
 * Takes @p ms->commit_mu; called without fs->mu. *@p listed (≥ 256 bytes,
 * may be NULL) receives an added resource's listed name. Returns 0,
 * EINVAL (refused: the message says why), EEXIST, or the errno of reading
 * or writing SOURCE.
 */
int fsi_archive_op(lfs_fs *fs, struct mstate *ms, struct node *model, const struct fsi_aop *op,
		   char *listed)
{
	pthread_mutex_lock(&ms->commit_mu);
	fs_lock(fs);
	char *rel = strdup(model->rel);
	fs_unlock(fs);
	char msg[1024];
	msg[0] = '\0';
	int r = rel ? 0 : ENOMEM;
	uint8_t *orig = NULL, *out = NULL;
	size_t n = 0, outn = 0;
	struct stat st;
	const lfs_container *c = rel ? lfs_container_for_name(lfs_source_basename(rel)) : NULL;
	if (!r && !c)
		r = EINVAL;
	/* the whole archive is rewritten: read whatever its size (its folder is
	 * listed whatever its size too, docs/archives.md) */
	if (!r && (r = lfs_read_source(fs->rootfd, rel, SIZE_MAX, &orig, &n, &st)) != 0)
		snprintf(msg, sizeof(msg), "%s: error: not saved: cannot read the archive %s: %s\n",
			 op->name, rel, strerror(r));
	if (!r) {
		lfs_error err;
		memset(&err, 0, sizeof(err));
		lfs_err e = op->what == FSI_AOP_ADD
				    ? c->add(orig, n, op->name, op->data, op->dn, &out, &outn, listed, &err)
			    : op->what == FSI_AOP_REMOVE
				    ? c->remove(orig, n, op->name, &out, &outn, &err)
				    : c->rename(orig, n, op->name, op->to, op->replace, &out, &outn, &err);
		if (e != LFS_OK) {
			r = e == LFS_ERR_NOMEM ? ENOMEM : e == LFS_ERR_CORRUPT ? EIO : EINVAL;
			snprintf(msg, sizeof(msg), "%s: error: not saved: %s\n", op->name, err.msg);
		}
	}
	bool noop = !r && outn == n && memcmp(out, orig, n) == 0;
	struct stat nst;
	if (!r && !noop) {
		r = write_source(fs, model, rel, out, outn, &st, &nst, op->name, "archive", msg,
				 sizeof(msg));
	}
	free(orig);
	free(out);
	fs_lock(fs);
	if (!r && !noop)
		fs->commits++;
	if (r)
		fs->commit_refused += r == EINVAL;
	if (msg[0]) {
		size_t need = strlen(msg) + (rel ? strlen(rel) : 0) + 64;
		char *full = malloc(need);
		if (full) {
			snprintf(full, need, "%s%s: note: the archive %s %s\n", msg, op->name,
				 rel ? rel : "", r ? "was not changed" : "was written");
			fsi_merr_set(ms, op->name, full);
			free(full);
		}
	} else {
		fsi_merr_clear(ms, op->name);
	}
	fsi_inval_subtree(&fs->pending, model);
	fsi_kick(fs);
	fs_unlock(fs);
	if (rel) {
		static const char *const verbs[] = { "added", "removed", "renamed" };
		if (!r)
			fsi_log(fs, LFS_LOG_INFO, "%s: %s %s%s%s", rel, verbs[op->what], op->name,
				op->what == FSI_AOP_RENAME ? " to " : "",
				op->what == FSI_AOP_RENAME ? op->to : "");
		commit_log(fs, rel, op->name, 1, false, msg);
	}
	free(rel);
	pthread_mutex_unlock(&ms->commit_mu);
	return r;
}
