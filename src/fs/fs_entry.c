/**
 * @file fs_entry.c
 * The classification of source objects through the view cache (cache.h):
 * what a path of SOURCE is (folder, file, link, model folder; a model
 * inside an archive by its member path), the cache entry of a model file's
 * version with its header verdict, its view names or its views, each built
 * once per version by one request while others wait (fsi_classify,
 * fsi_entry_for, fsi_srcinfo_views, fsi_srcinfo_names).
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "source.h"
#include "supermodel.h"
#include "texture.h"
#include "registry/container.h"
#include "render/thumb.h"

void fsi_srcinfo_release(lfs_fs *fs, struct srcinfo *si)
{
	if (si->ce) {
		fs_lock(fs);
		lfs_cache_release(&fs->cache, si->ce);
		fs_unlock(fs);
		si->ce = NULL;
	}
}

/* Is entry @p e final for a caller that needs the views (fs->mu held)? */
static bool entry_ready(const lfs_centry *e)
{
	return e->kind != LFS_SOURCE_MODEL || e->built;
}

/*
 * The header verdict of the file of key @p k (fs->mu not held): from the
 * cache, or lfs_source_detect() now (unlocked) and inserted as a "model,
 * views not built" or plain entry. Never waits for a build: a build of the
 * key in progress is for the views, the verdict is a header read away.
 * NULL when the file cannot be read.
 */
static lfs_centry *entry_verdict(lfs_fs *fs, const lfs_cache_key *k)
{
	fs_lock(fs);
	lfs_centry *e = lfs_cache_get(&fs->cache, k);
	fs_unlock(fs);
	if (e)
		return e;
	struct stat fst;
	const lfs_format *f = NULL;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_source_detect(fs->rootfd, k->rel, fs->o.max_model_size, &fst, &f, &err);
	if (r != LFS_OK) {
		fsi_log(fs, r == LFS_ERR_NOMEM ? LFS_LOG_ERR : LFS_LOG_DEBUG, "%s", err.msg);
		return NULL;
	}
	fsi_log(fs, LFS_LOG_DEBUG, "%s: header read (%s)", k->rel, f ? f->name : "plain");
	lfs_cache_key fk = lfs_cache_key_of(&fst, k->rel);
	e = lfs_centry_new(&fk, f ? LFS_SOURCE_MODEL : LFS_SOURCE_PLAIN, NULL, NULL);
	if (!e) {
		fsi_log(fs, LFS_LOG_ERR, "%s: out of memory caching its verdict", k->rel);
		return NULL;
	}
	e->format = f;
	fs_lock(fs);
	lfs_centry *got = lfs_cache_put(&fs->cache, e);
	fs_unlock(fs);
	return got;
}

static double ms_since(const struct timespec *a)
{
	struct timespec b = fsi_now_mono();
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/*
 * fs->mu held. The entry of key @p k, held, when it is usable: built (or,
 * with @p names, at least named). Otherwise NULL, and *token registers the
 * caller's own build of it (a names-only one with @p names), to end with
 * lfs_cache_build_end(). A build of the same version under way (with
 * @p names, a names build too) is waited for rather than done twice;
 * other models are not held up.
 */
static lfs_centry *entry_wait(lfs_fs *fs, const lfs_cache_key *k, bool names, lfs_cbuild **token)
{
	*token = NULL;
	for (;;) {
		lfs_centry *e = lfs_cache_get(&fs->cache, k);
		if (e && (entry_ready(e) || (names && e->names)))
			return e;
		if (e)
			lfs_cache_release(&fs->cache, e);
		if (!lfs_cache_is_building(&fs->cache, k) && !(names && lfs_cache_is_naming(&fs->cache, k)))
			break;
		fs->cache.build_waits++;
		pthread_cond_wait(&fs->cache.built, &fs->mu);
	}
	*token = names ? lfs_cache_names_begin(&fs->cache, k) : lfs_cache_build_begin(&fs->cache, k);
	return NULL;
}

/*
 * Add each line of @p probs (problems inside a file that still loads: an
 * archive's broken entries and missing BIFs, registry/container.h) to
 * /.legacyfs/errors as "<rel>: <line>" (once: the list drops repeats), log
 * the new ones, and free @p probs. fs->mu not held.
 */
static void add_problems(lfs_fs *fs, const char *rel, lfs_sb *probs)
{
	if (!probs->len || !lfs_sb_ok(probs)) {
		lfs_sb_free(probs);
		return;
	}
	lfs_sb_putc(probs, '\0');
	for (char *p = probs->data; p && *p;) {
		char *e = strchr(p, '\n');
		if (e)
			*e = '\0';
		fs_lock(fs);
		bool added = lfs_errlog_add(&fs->errors, rel, p);
		fs_unlock(fs);
		if (added)
			fsi_log(fs, LFS_LOG_WARNING, "%s: %s", rel, p);
		p = e ? e + 1 : NULL;
	}
	lfs_sb_free(probs);
}

/*
 * The built entry of the file of key @p k (fs->mu not held): from the cache,
 * or built now (unlocked) and inserted — into the key's verdict entry when
 * there is one. One build per key: a request for a key being built waits
 * for it. Failures are logged and listed in /.legacyfs/errors the first time
 * they are seen. NULL when the file cannot be read.
 */
static lfs_centry *entry_built(lfs_fs *fs, const lfs_cache_key *k)
{
	lfs_cbuild *token;
	fs_lock(fs);
	lfs_centry *e = entry_wait(fs, k, false, &token);
	fs_unlock(fs);
	if (e)
		return e;
	char *rel = strdup(k->rel);
	if (!rel) {
		fs_lock(fs);
		lfs_cache_build_end(&fs->cache, token);
		fs_unlock(fs);
		return NULL;
	}
	struct timespec t0 = fsi_now_mono();

	lfs_texture_ctx tc;
	lfs_texture_ctx_init(&tc, fs->rootfd, rel);
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc,
			     .texture_read = lfs_texture_read, .thumb_size = fs->o.thumb_size,
			     .thumb_lazy = true, /* drawn when looked up: fs_thumb.h */
			     .thumb_mtime = (int64_t)(k->mtime_ns / 1000000000),
			     .view_budget = fs->o.model_memory == SIZE_MAX ? 0 : fs->o.model_memory };
	char *abs = NULL, *uri = NULL;
	if (fs->o.thumb_size && asprintf(&abs, "%s/%s", fs->source, rel) >= 0) {
		uri = lfs_thumb_file_uri(abs);
		vo.thumb_uri = uri;
	}
	free(abs);
	struct stat fst;
	lfs_source_kind kind;
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_sb probs = { 0 };
	lfs_source_opts so = { fs->o.max_model_size, &vo, LFS_SOURCE_KEEP_FAILED, &probs };
	lfs_err r = lfs_source_load(fs->rootfd, rel, &so, &fst, &kind, &vs, &err);
	lfs_texture_ctx_free(&tc);
	if (r == LFS_OK && kind == LFS_SOURCE_MODEL &&
	    !lfs_supermodel_add(fs->rootfd, rel, fs->o.max_model_size, &vs, &probs))
		fsi_log(fs, LFS_LOG_ERR, "%s: out of memory adding the supermodel links", rel);
	add_problems(fs, rel, &probs);
	free(uri);
	if (r != LFS_OK) {
		fs_lock(fs);
		lfs_cache_build_end(&fs->cache, token);
		fs_unlock(fs);
		fsi_log(fs, r == LFS_ERR_NOMEM ? LFS_LOG_ERR : LFS_LOG_DEBUG, "%s", err.msg);
		free(rel);
		return NULL;
	}
	/* A file that looked like a model and does not decode is still a model
	 * folder: README.txt and its original bytes (docs/mount.md). */
	bool failed = kind == LFS_SOURCE_FAILED;
	lfs_cache_key fk = lfs_cache_key_of(&fst, rel);
	e = lfs_centry_new(&fk, failed ? LFS_SOURCE_MODEL : kind, &vs, failed ? err.msg : NULL);
	if (!e) {
		fs_lock(fs);
		lfs_cache_build_end(&fs->cache, token);
		fs_unlock(fs);
		fsi_log(fs, LFS_LOG_ERR, "%s: out of memory caching the views", rel);
		free(rel);
		return NULL;
	}
	e->format = e->vs.format;
	fs_lock(fs);
	lfs_centry *got = lfs_cache_get(&fs->cache, &fk);
	bool fresh = false;
	if (got && !entry_ready(got) && e->kind == LFS_SOURCE_MODEL) {
		lfs_cache_fill(&fs->cache, got, e); /* the verdict gets its views */
		fresh = true;
	} else if (got && !entry_ready(got)) {
		/* Built as plain, verdict a model: cannot be for the same bytes. */
		lfs_cache_release(&fs->cache, got);
		lfs_centry_free(e);
		got = NULL;
	} else if (got) {
		lfs_centry_free(e);
	} else {
		got = lfs_cache_put(&fs->cache, e);
		fresh = got == e;
	}
	/* Waiters of @p k find the entry now (or, when the file changed while
	 * it was read, find no entry and build their version themselves). */
	lfs_cache_build_end(&fs->cache, token);
	bool newline = false, over = false;
	if (fresh && kind != LFS_SOURCE_PLAIN)
		fs->builds++;
	if (fresh && failed) {
		fs->build_failures++;
		newline = lfs_errlog_add(&fs->errors, rel, got->errmsg ? got->errmsg : "decode failed");
	}
	/* over -o model_memory: the folder shows only README.txt (viewset.h) */
	if (fresh && !failed && kind == LFS_SOURCE_MODEL && got->vs.over_budget)
		over = lfs_errlog_add(&fs->errors, rel, "views over -o model_memory, not built: see README.txt in its folder");
	fs_unlock(fs);
	if (fresh && kind != LFS_SOURCE_PLAIN)
		fsi_log(fs, LFS_LOG_DEBUG, "%s: views built in %.1f ms", rel, ms_since(&t0));
	if (over)
		fsi_log(fs, LFS_LOG_WARNING, "%s: its views need more than -o model_memory=%zu MiB: "
			"shown as a folder with only README.txt", rel, fs->o.model_memory >> 20);
	if (newline)
		fsi_log(fs, LFS_LOG_WARNING, "%s: looks like a model but does not decode, shown as a "
		       "folder with README.txt and the original file: %s", rel,
		       got->errmsg ? got->errmsg : "");
	free(rel);
	return got;
}

/*
 * The built cache entry of regular file @p rel whose stat is @p st (views
 * of a model, or its failure views; see entry_built()). NULL when the file
 * cannot be read (it is then treated as plain and nothing is cached).
 */
lfs_centry *fsi_entry_for(lfs_fs *fs, const char *rel, const struct stat *st)
{
	lfs_cache_key k = lfs_cache_key_of(st, rel);
	return entry_built(fs, &k);
}

/*
 * May the model file of key @p k (its size) be listed from its view names
 * alone? An archive always may (each model inside is named within its own
 * budget).
 * Only when its views surely fit -o model_memory (the file's bytes times
 * LFS_VIEWSET_SUGGEST_PER_BYTE, the most the corpus measured, plus margin):
 * a names-only build need not find out that the views would pass the bound
 * (then the folder shows README.txt alone), so a larger model is listed
 * from its built views, as before.
 */
bool fsi_names_fit(const lfs_fs *fs, const lfs_cache_key *k)
{
	/* An archive's names are built model by model, each within
	 * -o model_memory (registry/container.h): its own size says nothing. */
	if (lfs_container_for_name(lfs_source_basename(k->rel)))
		return true;
	size_t budget = fs->o.model_memory == SIZE_MAX ? 0 : fs->o.model_memory;
	return !budget || (k->size >= 0 && (uint64_t)k->size <= budget / LFS_VIEWSET_SUGGEST_PER_BYTE);
}

/*
 * The entry of the file of key @p k with the names of its views (fs->mu not
 * held): a built entry when there is one, else the key's verdict entry
 * given a names-only set (lfs_view_opts.names_only: no text is kept), built
 * now unlocked, once per key (a request for a key being named or built
 * waits for it). A model that fails to decode, passes -o model_memory or
 * is too large for fsi_names_fit() gets the full build (entry_built()),
 * whose views tell what the folder holds. NULL when the file cannot be read.
 */
static lfs_centry *entry_named(lfs_fs *fs, const lfs_cache_key *k)
{
	if (!fsi_names_fit(fs, k))
		return entry_built(fs, k);
	lfs_cbuild *token;
	fs_lock(fs);
	lfs_centry *e = entry_wait(fs, k, true, &token);
	fs_unlock(fs);
	if (e)
		return e;
	char *rel = strdup(k->rel);
	lfs_viewset *nv = calloc(1, sizeof(*nv));
	if (!rel || !nv) {
		free(rel);
		free(nv);
		fs_lock(fs);
		lfs_cache_build_end(&fs->cache, token);
		fs_unlock(fs);
		return NULL;
	}
	struct timespec t0 = fsi_now_mono();
	lfs_view_opts vo = { .thumb_size = fs->o.thumb_size, .thumb_lazy = true, .names_only = true,
			     .view_budget = fs->o.model_memory == SIZE_MAX ? 0 : fs->o.model_memory };
	struct stat fst;
	lfs_source_kind kind;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_sb probs = { 0 };
	lfs_source_opts so = { fs->o.max_model_size, &vo, LFS_SOURCE_KEEP_FAILED, &probs };
	lfs_err r = lfs_source_load(fs->rootfd, rel, &so, &fst, &kind, nv, &err);
	if (r == LFS_OK && kind == LFS_SOURCE_MODEL &&
	    !lfs_supermodel_add(fs->rootfd, rel, fs->o.max_model_size, nv, &probs))
		fsi_log(fs, LFS_LOG_ERR, "%s: out of memory adding the supermodel links", rel);
	add_problems(fs, rel, &probs);
	bool fallback = r == LFS_OK && (kind != LFS_SOURCE_MODEL || nv->over_budget);
	if (r == LFS_OK && fallback)
		lfs_viewset_free(nv);
	lfs_centry *got = NULL;
	if (r == LFS_OK && !fallback) {
		lfs_cache_key fk = lfs_cache_key_of(&fst, rel);
		fs_lock(fs);
		got = lfs_cache_get(&fs->cache, &fk);
		if (got && got->kind != LFS_SOURCE_MODEL) {
			lfs_cache_release(&fs->cache, got); /* plain now: not these bytes */
			got = NULL;
			fallback = true;
		} else if (got && !entry_ready(got) && !got->names) {
			lfs_cache_set_names(&fs->cache, got, nv);
			nv = NULL;
		} else if (!got) {
			lfs_centry *ne = lfs_centry_new(&fk, LFS_SOURCE_MODEL, NULL, NULL);
			if (ne) {
				ne->format = nv->format;
				got = lfs_cache_put(&fs->cache, ne);
				if (got && !entry_ready(got) && !got->names) {
					lfs_cache_set_names(&fs->cache, got, nv);
					nv = NULL;
				}
			}
		}
		lfs_cache_build_end(&fs->cache, token);
		token = NULL;
		fs_unlock(fs);
	} else {
		fs_lock(fs);
		lfs_cache_build_end(&fs->cache, token);
		token = NULL;
		fs_unlock(fs);
	}
	if (nv) {
		lfs_viewset_free(nv);
		free(nv);
	}
	if (r != LFS_OK) {
		fsi_log(fs, r == LFS_ERR_NOMEM ? LFS_LOG_ERR : LFS_LOG_DEBUG, "%s", err.msg);
		free(rel);
		return NULL;
	}
	if (got)
		fsi_log(fs, LFS_LOG_DEBUG, "%s: view names listed in %.1f ms", rel, ms_since(&t0));
	free(rel);
	return fallback || !got ? entry_built(fs, k) : got;
}

/*
 * Stat and classify source path @p rel by its header (no views are built:
 * si->ce of a model may be a verdict; fsi_srcinfo_views() builds them).
 * Returns 0 or errno.
 */
int fsi_classify(lfs_fs *fs, const char *rel, struct srcinfo *si)
{
	si->ce = NULL;
	si->names = NULL;
	bool member = false;
	if (fstatat(fs->rootfd, rel, &si->st, AT_SYMLINK_NOFOLLOW) != 0) {
		/* "<archive>/<name>": a model inside an archive (a member folder,
		 * registry/container.h) has its archive's stat: its version is the archive's */
		int e = errno;
		if (e != ENOTDIR || lfs_container_member_stat(fs->rootfd, rel, &si->st, NULL) != 0)
			return e == ENOTDIR ? ENOENT : e;
		member = true;
	}
	switch (si->st.st_mode & S_IFMT) {
	case S_IFDIR:
		si->kind = K_DIR;
		return 0;
	case S_IFLNK:
		si->kind = K_LINK;
		return 0;
	case S_IFREG:
		break;
	default:
		si->kind = K_OTHER;
		return 0;
	}
	si->kind = K_FILE;
	const char *base = lfs_source_basename(rel);
	/* an archive is read by its tables, a member by its payload: neither by
	 * the file's size (its resources are bounded one by one) */
	bool any_size = member || lfs_container_for_name(base);
	if (si->st.st_size <= 0 || ((uint64_t)si->st.st_size > fs->o.max_model_size && !any_size) ||
	    !lfs_source_candidate(base))
		return 0;
	lfs_cache_key k = lfs_cache_key_of(&si->st, rel);
	si->ce = entry_verdict(fs, &k);
	if (si->ce && si->ce->kind == LFS_SOURCE_MODEL) {
		si->kind = K_MODEL;
		/* Report what was classified (the file may have changed since our stat). */
		si->st.st_size = si->ce->key.size;
	}
	return 0;
}

/*
 * Replace si->ce by entry @p b of the same file (entry_built() or
 * entry_named(); NULL = not readable: EIO, or ESTALE when the file is gone
 * from its path since it was classified: its folder was renamed or it was
 * deleted, which a reader racing the rename must see as a stale handle,
 * never as an I/O error). A file that is no model any more gives ESTALE and
 * si->kind K_FILE; else si->st's size is b's.
 */
static int take_entry(lfs_fs *fs, struct srcinfo *si, lfs_centry *b)
{
	bool gone = false;
	if (!b) {
		struct stat now;
		gone = fstatat(fs->rootfd, si->ce->key.rel, &now, AT_SYMLINK_NOFOLLOW) != 0 &&
		       (errno == ENOENT || errno == ENOTDIR);
	}
	fsi_srcinfo_release(fs, si);
	if (!b)
		return gone ? ESTALE : EIO;
	si->ce = b;
	if (b->kind != LFS_SOURCE_MODEL) {
		fsi_srcinfo_release(fs, si);
		si->kind = K_FILE;
		return ESTALE;
	}
	si->st.st_size = b->key.size;
	return 0;
}

/*
 * Make si->ce (a model, from fsi_classify()) an entry with views: built now
 * (once per model version) when it is a header verdict. Returns 0, ESTALE
 * when the file is no longer a model (it changed since), EIO when it cannot
 * be read.
 */
int fsi_srcinfo_views(lfs_fs *fs, struct srcinfo *si)
{
	if (si->kind != K_MODEL || !si->ce)
		return ESTALE;
	si->names = NULL;
	fs_lock(fs);
	bool ready = entry_ready(si->ce);
	fs_unlock(fs);
	if (ready)
		return 0;
	return take_entry(fs, si, entry_built(fs, &si->ce->key));
}

/*
 * Make si->ce (a model, from fsi_classify()) an entry a listing can walk:
 * built, or given the names of its views (entry_named(); once per model
 * version). si->names is then the names-only set to walk, NULL when the
 * views are built (fsi_si_vs()). Returns as fsi_srcinfo_views().
 */
int fsi_srcinfo_names(lfs_fs *fs, struct srcinfo *si)
{
	si->names = NULL;
	if (si->kind != K_MODEL || !si->ce)
		return ESTALE;
	fs_lock(fs);
	bool ready = entry_ready(si->ce);
	si->names = ready ? NULL : si->ce->names;
	fs_unlock(fs);
	if (ready || si->names)
		return 0;
	int r = take_entry(fs, si, entry_named(fs, &si->ce->key));
	if (r)
		return r;
	lfs_centry *b = si->ce;
	fs_lock(fs);
	bool named = !entry_ready(b) && b->names;
	si->names = named ? b->names : NULL;
	fs_unlock(fs);
	return named ? 0 : fsi_srcinfo_views(fs, si); /* (a no-op when built) */
}

