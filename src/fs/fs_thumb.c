/**
 * @file fs_thumb.c
 * thumbnail.png of a model folder, drawn when it is asked for (fs_thumb.h):
 * once per model version, from the disk cache (thumbcache.h) when it holds
 * the picture, else rendered and stored there.
 */
#define _GNU_SOURCE
#include "fs_thumb.h"

#include "../common/mem.h"
#include "../common/strbuf.h"
#include "render/thumb.h"
#include "render/thumb_models.h"
#include "replace.h"
#include "texture.h"
#include "thumbcache.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

_Thread_local bool fsi_thumb_defer;

/* One log line per process for a cache folder we cannot write. */
static atomic_bool put_warned;

/*
 * Texture reads of one render, recorded as the dependencies of its cache
 * file: one line "resref<TAB>identity" per resref the scene asked for, the
 * identity being "path size mtime_ns ino" of the file the lookup found
 * (path relative to SOURCE) or "-".
 */
struct texrec {
	lfs_texture_ctx tc;
	lfs_sb deps;
};

/* "a/b/m.mdl" + "../../x.tga" (relative to the model folder) -> "a/x.tga"; false when it leaves the root. */
static bool join_norm(const char *model_rel, const char *found, char *out, size_t outsz)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s/%s", model_rel, found) >= (int)sizeof(buf))
		return false;
	size_t on = 0;
	out[0] = '\0';
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (!on)
				return false;
			while (on && out[on - 1] != '/')
				on--;
			if (on)
				on--;
			out[on] = '\0';
			continue;
		}
		size_t cl = strlen(c);
		if (on + 1 + cl + 1 > outsz)
			return false;
		if (on)
			out[on++] = '/';
		memcpy(out + on, c, cl + 1);
		on += cl;
	}
	return on > 0;
}

/* The identity line of texture @p resref as the lookup finds it now. */
static void tex_identity(lfs_texture_ctx *tc, const char *resref, lfs_sb *sb)
{
	char found[PATH_MAX], rel[PATH_MAX];
	struct stat st;
	lfs_sb_printf(sb, "%s\t", resref);
	/* an absolute answer (a respath folder) is stat'ed as it is */
	if (lfs_texture_lookup(tc, resref, found, sizeof(found)) &&
	    (found[0] == '/' ? snprintf(rel, sizeof(rel), "%s", found) < (int)sizeof(rel)
			     : join_norm(tc->model_rel, found, rel, sizeof(rel))) &&
	    lfs_texture_stat(tc->rootfd, rel, &st))
		lfs_sb_printf(sb, "%s %lld %lld %llu\n", rel, (long long)st.st_size,
			      (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
			      (unsigned long long)st.st_ino);
	else
		lfs_sb_puts(sb, "-\n");
}

static bool rec_read(void *ctx, const char *resref, uint8_t **data, size_t *n)
{
	struct texrec *t = ctx;
	/* identity first: a texture changed between this and the read makes the
	 * stored identity the older one, so the next check misses (safe) */
	if (!strchr(resref, '\t') && !strchr(resref, '\n'))
		tex_identity(&t->tc, resref, &t->deps);
	return lfs_texture_read(&t->tc, resref, data, n);
}

/* Do the dependencies @p deps (as recorded by rec_read) hold for the textures now? */
static bool deps_hold(int rootfd, const char *model_rel, const char *deps)
{
	lfs_texture_ctx tc;
	lfs_texture_ctx_init(&tc, rootfd, model_rel);
	bool ok = true;
	for (const char *p = deps; *p && ok;) {
		const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
		if (!tab || !nl || tab > nl || (size_t)(tab - p) >= 256) {
			ok = false;
			break;
		}
		char resref[256];
		memcpy(resref, p, (size_t)(tab - p));
		resref[tab - p] = '\0';
		lfs_sb now = { 0 };
		tex_identity(&tc, resref, &now);
		size_t ln = (size_t)(nl + 1 - p);
		ok = lfs_sb_ok(&now) && now.len == ln && memcmp(now.data, p, ln) == 0;
		lfs_sb_free(&now);
		p = nl + 1;
	}
	lfs_texture_ctx_free(&tc);
	return ok;
}

/*
 * The PNG of model @p data (format @p f) at edge @p size with tEXt @p uri /
 * @p mtime: from the disk cache or rendered (and stored). LFS errors as
 * lfs_thumb_model(); *from_cache says which.
 */
static lfs_err produce(lfs_fs *fs, const lfs_format *f, const char *rel,
		       const uint8_t *data, size_t n, unsigned size, const char *uri, int64_t mtime, uint8_t **png,
		       size_t *pngn, bool *from_cache, lfs_error *err)
{
	*from_cache = false;
	const char *dir = fs->o.thumb_cache;
	lfs_thumbcache_key k;
	if (dir) {
		lfs_thumbcache_key_of(data, n, LFS_THUMB_VERSION, size, &k);
		char *deps = NULL;
		uint8_t *cpng = NULL;
		size_t cn = 0;
		int g = lfs_thumbcache_get(dir, &k, size, &deps, &cpng, &cn);
		if (g == 0 && deps_hold(fs->rootfd, rel, deps)) {
			lfs_err r = lfs_thumb_png_retext(cpng, cn, uri, mtime, png, pngn, err);
			free(deps);
			free(cpng);
			if (r == LFS_OK) {
				*from_cache = true;
				return r;
			}
		} else {
			free(deps);
			free(cpng);
			if (g == EBADMSG)
				fsi_log(fs, LFS_LOG_INFO, "%s: invalid thumbnail cache file in %s removed", rel, dir);
		}
	}
	struct texrec t = { 0 };
	lfs_texture_ctx_init(&t.tc, fs->rootfd, rel);
	lfs_view_opts vo = { .texture_read = rec_read, .texture_ctx = &t };
	uint8_t *bare = NULL;
	size_t bn = 0;
	lfs_err r = lfs_thumb_model(f, data, n, size, &vo, NULL, -1, &bare, &bn, err);
	lfs_texture_ctx_free(&t.tc);
	if (r == LFS_OK && dir && lfs_sb_ok(&t.deps)) {
		int e = lfs_thumbcache_put(dir, fs->o.thumb_cache_bytes, &k, t.deps.data ? t.deps.data : "",
					   bare, bn);
		if (e && !atomic_exchange(&put_warned, true))
			fsi_log(fs, LFS_LOG_WARNING, "thumbnail cache %s: %s: thumbnails are not kept on "
				"disk (this is logged once)", dir, strerror(e));
	}
	lfs_sb_free(&t.deps);
	if (r == LFS_OK)
		r = lfs_thumb_png_retext(bare, bn, uri, mtime, png, pngn, err);
	free(bare);
	return r;
}

/*
 * The model file @p rel as it is now (lfs_read_source, retried while it
 * changes under the read): 0, ESTALE when it is gone or no longer a model
 * we decode (too big), or another errno.
 */
static int read_model_now(lfs_fs *fs, const char *rel, uint8_t **data, size_t *n, struct stat *st)
{
	int r = EAGAIN;
	for (int tries = 0; r == EAGAIN && tries < 4; tries++) /* EAGAIN: changed while read */
		r = lfs_read_source(fs->rootfd, rel, fs->o.max_model_size, data, n, st);
	return r == EFBIG || r == ENOENT || r == EAGAIN ? ESTALE : r;
}

/* A transparent picture of edge @p size: the documented stand-in when the renderer draws nothing. */
static lfs_err placeholder(unsigned size, const char *uri, int64_t mtime, uint8_t **png, size_t *pngn,
			   lfs_error *err)
{
	uint8_t *rgba = calloc((size_t)size * size, 4);
	if (!rgba)
		return lfs_nomem(err, "thumbnail");
	lfs_err r = lfs_thumb_png(rgba, size, size, uri, mtime, png, pngn, err);
	free(rgba);
	return r;
}

/*
 * The thumbnail of model @p f's bytes @p data: *png (malloc'd) and 1 when
 * drawn (disk cache or renderer; a drawable model the renderer fails on is
 * the transparent stand-in), -1 when the model has nothing to draw (the
 * full build would not list thumbnail.png: no triangles, or it does not
 * decode), 0 out of memory. @p listed: the views list thumbnail.png (it is
 * drawable: a failed render is always the stand-in, never -1).
 */
static int draw_thumb(lfs_fs *fs, const lfs_format *f, const char *rel,
		      const uint8_t *data,
		      size_t n, const struct stat *st, bool listed, uint8_t **png, size_t *pngn,
		      bool *from_cache)
{
	unsigned size = fs->o.thumb_size;
	char *abs = NULL, *uri = NULL;
	if (asprintf(&abs, "%s/%s", fs->source, rel) >= 0)
		uri = lfs_thumb_file_uri(abs);
	free(abs);
	if (!uri)
		return 0;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	int got = 1;
	lfs_err lr = produce(fs, f, rel, data, n, size, uri, (int64_t)st->st_mtime, png, pngn,
			     from_cache, &e);
	if (lr != LFS_OK && lr != LFS_ERR_NOMEM) {
		if (listed || lfs_views_thumb_drawable(f, data, n)) {
			fsi_log(fs, LFS_LOG_WARNING, "%s: thumbnail not drawn (%s): shown transparent", rel,
				e.msg[0] ? e.msg : lfs_err_name(lr));
			lr = placeholder(size, uri, (int64_t)st->st_mtime, png, pngn, &e);
		} else {
			got = -1;
		}
	}
	free(uri);
	return got < 0 ? -1 : lr == LFS_OK ? 1 : 0;
}

static double ms_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/*
 * Wait until this thread may draw the pending thumbnail of @p ce (fs->mu
 * held throughout; one drawer per entry, ce->thumb_busy,
 * also against a thumbnail drawn before the views: fsi_thumb_early).
 * 1: claimed (thumb_busy set); 0: nothing pending; EAGAIN: drawing is
 * deferred (fsi_thumb_defer).
 */
static int thumb_claim(lfs_fs *fs, lfs_centry *ce)
{
	for (;;) {
		bool pending = lfs_viewset_thumb_pending(&ce->vs) != NULL;
		if (!pending)
			return 0;
		if (fsi_thumb_defer)
			return EAGAIN;
		if (!ce->thumb_busy)
			break;
		pthread_cond_wait(&fs->cache.built, &fs->mu);
	}
	ce->thumb_busy = true;
	return 1;
}

int fsi_thumb_fill(lfs_fs *fs, lfs_centry *ce, const char *vpath)
{
	if (!ce || strcmp(vpath, LFS_VIEWSET_THUMB_NAME) != 0)
		return 0; /* (a model inside an archive is a model folder of its own) */
	fs_lock(fs);
	int c = thumb_claim(fs, ce);
	const lfs_format *f = ce->vs.format;
	fs_unlock(fs);
	if (c != 1)
		return c;

	/* ce->key.rel is the entry's own copy; the entry is held by the caller */
	const char *rel = ce->key.rel;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint8_t *data = NULL, *png = NULL;
	size_t n = 0, pngn = 0;
	struct stat st;
	int r = read_model_now(fs, rel, &data, &n, &st);
	/* A file replaced since the views were built (a save racing with this
	 * request) is drawn as it is now: the picture is of a newer version than
	 * the entry's text views, which the next request rebuilds anyway;
	 * answering ESTALE instead failed readers such as `grep -r` (the views
	 * do not keep the model's bytes). */
	if (!r && ((uint64_t)st.st_dev != ce->key.dev || (uint64_t)st.st_ino != ce->key.ino ||
		   (int64_t)st.st_size != ce->key.size ||
		   (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != ce->key.mtime_ns))
		fsi_log(fs, LFS_LOG_DEBUG, "%s: changed since its views were built: thumbnail of the new bytes",
			rel);
	bool from_cache = false;
	if (!r && draw_thumb(fs, f, rel, data, n, &st, true, &png, &pngn, &from_cache) <= 0)
		r = ENOMEM;
	free(data);
	if (!r)
		fsi_log(fs, LFS_LOG_DEBUG, "%s: thumbnail %s in %.1f ms", rel,
			from_cache ? "from the disk cache" : "rendered", ms_since(&t0));

	fs_lock(fs);
	ce->thumb_busy = false;
	if (!r) {
		/* the entry's accounted size grows by what malloc holds for the
		 * picture (lfs_centry_held, cache.h bound) */
		size_t before = lfs_centry_held(ce);
		lfs_viewset_thumb_set(&ce->vs, png, pngn);
		size_t grew = lfs_centry_held(ce) - before;
		ce->bytes += grew;
		fs->cache.bytes += grew;
	}
	pthread_cond_broadcast(&fs->cache.built);
	fs_unlock(fs);
	if (r)
		free(png);
	return r;
}

int fsi_thumb_early(lfs_fs *fs, lfs_centry *ce)
{
	const lfs_format *f = ce->format;
	if (!fs->o.thumb_size || !f || !f->thumb_scene || ce->kind != LFS_SOURCE_MODEL)
		return ENOENT; /* no build would list one */
	fs_lock(fs);
	for (;;) {
		if (ce->thumb_early) {
			int was = ce->thumb_early;
			fs_unlock(fs);
			return was > 0 ? 0 : ENOENT;
		}
		if (fsi_thumb_defer) {
			fs_unlock(fs);
			return EAGAIN;
		}
		if (!ce->thumb_busy)
			break;
		pthread_cond_wait(&fs->cache.built, &fs->mu);
	}
	if (ce->built && !lfs_viewset_thumb_pending(&ce->vs)) {
		/* built meanwhile, its thumbnail drawn or absent: the views answer */
		bool listed = lfs_viewset_find(&ce->vs, LFS_VIEWSET_THUMB_NAME) != NULL;
		fs_unlock(fs);
		return listed ? 0 : ENOENT;
	}
	ce->thumb_busy = true;
	fs_unlock(fs);

	const char *rel = ce->key.rel; /* the entry's own copy; held by the caller */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint8_t *data = NULL, *png = NULL;
	size_t n = 0, pngn = 0;
	struct stat st;
	int r = read_model_now(fs, rel, &data, &n, &st);
	int drawn = 0;
	bool from_cache = false;
	if (!r) {
		/* drawn from the bytes as they are now (as fsi_thumb_fill) */
		drawn = draw_thumb(fs, f, rel, data, n, &st, false, &png, &pngn, &from_cache);
		if (!drawn)
			r = ENOMEM;
	}
	free(data);
	if (drawn)
		fsi_log(fs, LFS_LOG_DEBUG, "%s: thumbnail %s in %.1f ms (views not built)", rel,
			drawn < 0 ? "none to draw" : from_cache ? "from the disk cache" : "rendered",
			ms_since(&t0));

	fs_lock(fs);
	ce->thumb_busy = false;
	if (drawn) {
		ce->thumb_early = (signed char)drawn;
		if (drawn > 0)
			lfs_cache_set_thumb(&fs->cache, ce, png, pngn); /* the views take it when built */
		png = NULL;
	}
	pthread_cond_broadcast(&fs->cache.built);
	fs_unlock(fs);
	free(png);
	if (r)
		return r;
	return drawn > 0 ? 0 : ENOENT;
}
