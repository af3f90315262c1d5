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
#include "../views/thumb.h"
#include "../views/thumb_models.h"
#include "../formats/erf.h"
#include "archive_edit.h"
#include "fs_archive.h"
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
	const struct owntex *own; /* may be NULL */
};

/* Textures of a KEY's own BIFs, for a model inside that KEY (fill_archive). */
struct owntex {
	const lfs_archive_res *v;
	size_t n;
};

/* The best own texture of @p resref (tga, dds, plt; ResRef ignoring case), or NULL. */
static const lfs_archive_res *own_find(const struct owntex *o, const char *resref)
{
	const lfs_archive_res *best = NULL;
	int br = 99;
	for (size_t i = 0; o && i < o->n; i++) {
		uint16_t t = o->v[i].type;
		int rk = t == 3 ? 0 : t == 2033 ? 1 : t == 6 ? 2 : -1;
		if (rk >= 0 && rk < br && strcasecmp(o->v[i].resref, resref) == 0) {
			best = &o->v[i];
			br = rk;
		}
	}
	return best;
}

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

/* The identity line of texture @p resref as the lookup finds it now (an own texture: its size and FNV-1a hash). */
static void tex_identity(lfs_texture_ctx *tc, const struct owntex *own, const char *resref, lfs_sb *sb)
{
	char found[PATH_MAX], rel[PATH_MAX];
	struct stat st;
	lfs_sb_printf(sb, "%s\t", resref);
	const lfs_archive_res *o = own_find(own, resref);
	if (o) {
		uint64_t h = 1469598103934665603ull;
		for (size_t i = 0; i < o->n; i++)
			h = (h ^ o->data[i]) * 1099511628211ull;
		lfs_sb_printf(sb, "own %zu %016llx\n", o->n, (unsigned long long)h);
		return;
	}
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
		tex_identity(&t->tc, t->own, resref, &t->deps);
	const lfs_archive_res *o = own_find(t->own, resref);
	if (o) {
		*data = o->n ? malloc(o->n) : NULL;
		if (!*data)
			return false;
		memcpy(*data, o->data, o->n);
		*n = o->n;
		return true;
	}
	return lfs_texture_read(&t->tc, resref, data, n);
}

/* Do the dependencies @p deps (as recorded by rec_read) hold for the textures now? */
static bool deps_hold(int rootfd, const char *model_rel, const struct owntex *own, const char *deps)
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
		tex_identity(&tc, own, resref, &now);
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
static lfs_err produce(lfs_fs *fs, const lfs_format *f, const char *rel, const struct owntex *own,
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
		if (g == 0 && deps_hold(fs->rootfd, rel, own, deps)) {
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
	struct texrec t = { .own = own };
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
static int draw_thumb(lfs_fs *fs, const lfs_format *f, const char *rel, const struct owntex *own,
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
	lfs_err lr = produce(fs, f, rel, own, data, n, size, uri, (int64_t)st->st_mtime, png, pngn,
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
 * The thumbnail.png view @p vpath ("<resref>.mdl/thumbnail.png") of a model
 * inside archive entry @p ce when it waits for its bytes (listed with size
 * 0 by lfs_archive_build(): fs->mu held), else NULL.
 */
static lfs_view *archive_pending(lfs_centry *ce, const char *vpath)
{
	lfs_view *v = (lfs_view *)lfs_viewset_find(&ce->vs, vpath);
	return v && v->kind == LFS_VIEW_THUMBNAIL && v->size == 0 ? v : NULL;
}

/*
 * fsi_thumb_fill() for a model inside an archive (docs/thumbnails.md
 * "Models inside archives"): the archive file is read again, the model's
 * payload taken from it (lfs_archive_model_bytes()), and drawn as a loose
 * model's (same disk cache, keyed by the payload's bytes), with the texture
 * lookup of a model "<archive>/<resref>.mdl": the archive's own textures
 * (an ERF's through texture.h, entry by entry; a KEY's as its BIFs were
 * read, recorded in the disk cache by size and hash), then loose files
 * beside the archive and above, then the SOURCE-wide index.
 * One inner thumbnail of an archive at a time (ce->thumb_busy).
 */
/*
 * Wait until this thread may draw the pending thumbnail of @p ce: the
 * model's own (@p vpath NULL) or that of the model inside an archive at
 * @p vpath (fs->mu held throughout; one drawer per entry, ce->thumb_busy,
 * also against a thumbnail drawn before the views: fsi_thumb_early).
 * 1: claimed (thumb_busy set); 0: nothing pending; EAGAIN: drawing is
 * deferred (fsi_thumb_defer).
 */
static int thumb_claim(lfs_fs *fs, lfs_centry *ce, const char *vpath)
{
	for (;;) {
		bool pending = vpath ? ce->vs.format == &lfs_archive_format &&
					       archive_pending(ce, vpath) != NULL
				     : lfs_viewset_thumb_pending(&ce->vs) != NULL;
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

static int fill_archive(lfs_fs *fs, lfs_centry *ce, const char *vpath)
{
	size_t vl = strlen(vpath), tl = strlen("/" LFS_VIEWSET_THUMB_NAME);
	if (vl <= tl || strcmp(vpath + vl - tl, "/" LFS_VIEWSET_THUMB_NAME) != 0)
		return 0;
	fs_lock(fs);
	int c = thumb_claim(fs, ce, vpath);
	fs_unlock(fs);
	if (c != 1)
		return c;

	const char *rel = ce->key.rel; /* the entry's own copy; held by the caller */
	char model[PATH_MAX], mrel[PATH_MAX], dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	size_t dl = slash ? (size_t)(slash - rel) : 0, rl = strlen(rel);
	int r = 0;
	if (vl - tl >= sizeof(model) || rl + 1 + (vl - tl) >= sizeof(mrel)) {
		r = ENAMETOOLONG;
	} else {
		memcpy(model, vpath, vl - tl);
		model[vl - tl] = '\0';
		memcpy(mrel, rel, rl);
		mrel[rl] = '/';
		memcpy(mrel + rl + 1, model, vl - tl + 1);
		memcpy(dir, rel, dl); /* dl < rl < PATH_MAX */
		dir[dl] = '\0';
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint8_t *data = NULL, *mb = NULL, *png = NULL;
	size_t n = 0, mn = 0, pngn = 0, nres = 0;
	lfs_archive_res *res = NULL;
	struct owntex own = { NULL, 0 };
	struct stat st;
	bool key = !lfs_texture_archive_name(slash ? slash + 1 : rel);
	if (!r && !key) {
		/* an ERF: its tables and the model's payload alone (erf.h
		 * lfs_erf_decode_fd); its textures are read entry by entry
		 * through texture.h */
		int fd = openat(fs->rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		lfs_erf *a = NULL;
		lfs_error e;
		memset(&e, 0, sizeof(e));
		if (fd < 0 || fstat(fd, &st) != 0)
			r = ESTALE;
		else if (lfs_erf_decode_fd(fd, fs->o.max_model_size, &a, &e) != LFS_OK)
			r = ESTALE; /* changed since it was listed: listed again */
		uint32_t i = a ? lfs_archive_locate(a, model, NULL) : UINT32_MAX;
		if (!r && i == UINT32_MAX - 1)
			r = ENOMEM;
		else if (!r && (i == UINT32_MAX ||
				lfs_erf_read_fd(a, fd, i, fs->o.max_model_size, &mb, &mn, &e) != LFS_OK))
			r = ESTALE;
		lfs_erf_free(a);
		if (fd >= 0)
			close(fd);
	} else if (!r) {
		r = read_model_now(fs, rel, &data, &n, &st);
	}
	bool from_cache = false;
	if (!r) {
		lfs_error e;
		memset(&e, 0, sizeof(e));
		lfs_err lr = key ? lfs_archive_model_bytes(fs->rootfd, dir, slash ? slash + 1 : rel, data,
							   n, fs->o.max_model_size, model, &mb, &mn,
							   &res, &nres, &e)
				 : LFS_OK;
		own.v = res;
		own.n = nres;
		const lfs_format *f = lr == LFS_OK ? lfs_format_for("model.mdl", mb, mn) : NULL;
		if (lr == LFS_ERR_NOMEM)
			r = ENOMEM;
		else if (!f)
			r = ESTALE; /* the archive changed: no such model now */
		else if (draw_thumb(fs, f, mrel, &own, mb, mn, &st, true, &png, &pngn, &from_cache) <= 0)
			r = ENOMEM;
	}
	free(data);
	free(mb);
	lfs_archive_res_free(res, nres);
	/* a KEY's BIFs were read (as its folder's build reads them): give the
	 * freed bytes back, or each request thread's malloc arena keeps a copy
	 * (measured when a hak was read whole this way: 304 against 101 MiB
	 * after grep -r of a 1,000-model hak) */
	if (key)
		malloc_trim(0);
	if (!r)
		fsi_log(fs, LFS_LOG_DEBUG, "%s: thumbnail %s in %.1f ms", mrel,
			from_cache ? "from the disk cache" : "rendered", ms_since(&t0));

	fs_lock(fs);
	ce->thumb_busy = false;
	lfs_view *v = r ? NULL : archive_pending(ce, vpath);
	if (v) {
		size_t before = lfs_centry_held(ce);
		free(v->data);
		v->data = (char *)png;
		v->size = pngn;
		png = NULL;
		size_t grew = lfs_centry_held(ce) - before;
		ce->bytes += grew;
		fs->cache.bytes += grew;
	}
	pthread_cond_broadcast(&fs->cache.built);
	fs_unlock(fs);
	free(png);
	return r;
}

int fsi_thumb_fill(lfs_fs *fs, lfs_centry *ce, const char *vpath)
{
	if (ce && strcmp(vpath, LFS_VIEWSET_THUMB_NAME) != 0)
		return fill_archive(fs, ce, vpath);
	if (!ce)
		return 0;
	fs_lock(fs);
	int c = thumb_claim(fs, ce, NULL);
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
	if (!r && draw_thumb(fs, f, rel, NULL, data, n, &st, true, &png, &pngn, &from_cache) <= 0)
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
		drawn = draw_thumb(fs, f, rel, NULL, data, n, &st, false, &png, &pngn, &from_cache);
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
