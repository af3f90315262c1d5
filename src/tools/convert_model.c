/**
 * @file convert_model.c
 * The commands of `legacyfs-convert` on one model (docs/mount.md
 * "legacyfs-convert"): loading a model's views as the mount builds them,
 * cat, extract, apply, compile, thumbnail, and the file helpers they share
 * with pack/unpack. Split from convert.c, which parses the command line and
 * runs batches.
 */
#define _GNU_SOURCE
#include "convert.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/restype.h"
#include "fs/replace.h"
#include "fs/source.h"
#include "fs/supermodel.h"
#include "fs/texture.h"
#include "lfs_config.h"
#include "registry/container.h"
#include "registry/names.h"
#include "render/thumb.h"
#include "registry/viewset.h"

/* Build MODEL's views the way the mount does (thumbnail.png at
 * @p thumb_size, 0 = none); @p only (NULL = every view): that view alone
 * (lfs_view_opts.only); @p names_only: every view named, no bytes
 * (lfs_view_opts.names_only). Returns an exit status. */
static int load_q(const char *model, const char *root, size_t max_size, unsigned thumb_size,
		  const char *only, bool names_only, bool quiet, lfs_viewset *vs);

static int load_ex(const char *model, const char *root, size_t max_size, unsigned thumb_size,
		   const char *only, bool names_only, lfs_viewset *vs)
{
	return load_q(model, root, max_size, thumb_size, only, names_only, false, vs);
}

/* cat's guess of the text view's name: the one the last model of this
 * thread had (every format has one text view, of a fixed name: model.mdl,
 * model.txt, anim.txt); "" = none yet. */
static _Thread_local char t_text_view[64];

/* load_ex() that prints no message when @p quiet (cat's guess, redone
 * with messages when it fails) */
static int load_q(const char *model, const char *root, size_t max_size, unsigned thumb_size,
		  const char *only, bool names_only, bool quiet, lfs_viewset *vs)
{
#define QPRINTF(...) do { if (!quiet) eprintf(__VA_ARGS__); } while (0)
	char *mreal = realpath(model, NULL);
	if (!mreal) {
		QPRINTF("%s: error: %s\n", model, strerror(errno));
		return EXIT_ERR;
	}
	char *rreal;
	if (root) {
		rreal = realpath(root, NULL);
	} else {
		rreal = strdup(mreal);
		if (rreal) {
			char *sl = strrchr(rreal, '/');
			if (sl == rreal)
				sl[1] = '\0';
			else if (sl)
				*sl = '\0';
		}
	}
	if (!rreal) {
		QPRINTF("%s: error: %s\n", root ? root : model, strerror(errno));
		free(mreal);
		return EXIT_ERR;
	}
	size_t rl = strlen(rreal);
	while (rl > 1 && rreal[rl - 1] == '/')
		rreal[--rl] = '\0';
	const char *rel = NULL;
	if (strcmp(rreal, "/") == 0)
		rel = mreal + 1;
	else if (strncmp(mreal, rreal, rl) == 0 && mreal[rl] == '/')
		rel = mreal + rl + 1;
	if (!rel || !*rel) {
		QPRINTF("%s: error: is not inside --root %s\n", model, rreal);
		free(mreal);
		free(rreal);
		return EXIT_USAGE;
	}
	int rootfd = open(rreal, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		QPRINTF("%s: error: %s\n", rreal, strerror(errno));
		free(mreal);
		free(rreal);
		return EXIT_ERR;
	}
	lfs_texture_ctx tc;
	lfs_texture_ctx_init(&tc, rootfd, rel);
	/* thumbnail.png exactly as the mount renders it (URI of the real path,
	 * source mtime, g_thumb_size as the mount's -o thumb_size) */
	struct stat pre;
	char *uri = thumb_size ? lfs_thumb_file_uri(mreal) : NULL;
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc,
			     .texture_read = lfs_texture_read, .thumb_size = thumb_size,
			     .thumb_uri = uri,
			     .thumb_mtime = stat(mreal, &pre) == 0 ? (int64_t)pre.st_mtime : 0,
			     .only = only, .names_only = names_only };
	struct stat st;
	lfs_source_kind kind;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_source_opts so = { .max_size = max_size, .views = &vo };
	lfs_err r = lfs_source_load(rootfd, rel, &so, &st, &kind, vs, &err);
	if (r == LFS_OK && kind == LFS_SOURCE_MODEL && lfs_container_of(vs->format))
		r = lfs_source_expand(rootfd, rel, &vo, vs, NULL, &err); /* every member's views */
	else if (r == LFS_OK && kind == LFS_SOURCE_MODEL && !only) {
		/* the mount's supermodel links (docs/mount.md "Supermodels"): found
		 * from --root as the mount finds them from SOURCE; problems are the
		 * mount's /.legacyfs/errors lines, not this command's */
		lfs_sb probs = { 0 };
		if (!lfs_supermodel_add(rootfd, rel, max_size, vs, &probs)) {
			r = LFS_ERR_NOMEM;
			snprintf(err.msg, sizeof(err.msg), "out of memory adding the supermodel links");
		}
		lfs_sb_free(&probs);
	}
	lfs_texture_ctx_free(&tc);
	free(uri);
	close(rootfd);
	int status = 0;
	if (r != LFS_OK) {
		QPRINTF("%s: error: %s\n", model, err.msg);
		status = EXIT_ERR;
	} else if (kind == LFS_SOURCE_FAILED) {
		QPRINTF("%s: error: looks like a model but does not decode "
			"(a mount shows the original file): %s\n", model, err.msg);
		status = EXIT_ERR;
	} else if (kind == LFS_SOURCE_PLAIN) {
		QPRINTF("%s: error: not a model (a mount shows it unchanged)\n", model);
		status = EXIT_NOTMODEL;
	}
	free(mreal);
	free(rreal);
	return status;
#undef QPRINTF
}

bool model_has_view(const char *model, const char *root, size_t max_size, const char *vpath)
{
	lfs_viewset vs;
	if (load_q(model, root, max_size, g_thumb_size, NULL, true, true, &vs) != 0)
		return false;
	bool has = lfs_viewset_find(&vs, vpath) != NULL;
	lfs_viewset_free(&vs);
	return has;
}

/* load_ex() of every view. */
int load(const char *model, const char *root, size_t max_size, unsigned thumb_size,
		lfs_viewset *vs)
{
	return load_ex(model, root, max_size, thumb_size, NULL, false, vs);
}

/* mkdir -p for the folders of @p path below @p destfd. */
static int make_parents(int destfd, const char *path)
{
	char buf[PATH_MAX];
	if (strlen(path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	for (char *p = buf; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdirat(destfd, buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int do_extract(const lfs_viewset *vs, const char *dest)
{
	if (mkdir(dest, 0755) != 0 && errno != EEXIST) {
		eprintf("%s: error: %s\n", dest, strerror(errno));
		return EXIT_ERR;
	}
	int destfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (destfd < 0) {
		eprintf("%s: error: %s\n", dest, strerror(errno));
		return EXIT_ERR;
	}
	int status = 0;
	for (size_t i = 0; i < vs->n_views && !status; i++) {
		const lfs_view *v = &vs->views[i];
		/* View paths come from names.c: no "..", no empty component; check anyway. */
		if (v->path[0] == '/' || strstr(v->path, "../") || strcmp(v->path, "..") == 0) {
			eprintf("error: refusing view path %s\n", v->path);
			status = EXIT_ERR;
			break;
		}
		if (v->kind == LFS_VIEW_LINK) {
			/* a supermodel link, as the mount shows it */
			if (make_parents(destfd, v->path) != 0 ||
			    (symlinkat(v->data, destfd, v->path) != 0 &&
			     (errno != EEXIST || unlinkat(destfd, v->path, 0) != 0 ||
			      symlinkat(v->data, destfd, v->path) != 0))) {
				eprintf("%s/%s: error: %s\n", dest, v->path, strerror(errno));
				status = EXIT_ERR;
			}
			continue;
		}
		int fd = -1;
		if (make_parents(destfd, v->path) == 0)
			fd = openat(destfd, v->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 || write_all(fd, v->data, v->size) != 0) {
			eprintf("%s/%s: error: %s\n", dest, v->path, strerror(errno));
			status = EXIT_ERR;
		}
		if (fd >= 0 && close(fd) != 0 && !status) {
			eprintf("%s/%s: error: %s\n", dest, v->path, strerror(errno));
			status = EXIT_ERR;
		}
	}
	close(destfd);
	return status;
}

uint8_t *slurp(const char *path, size_t max, size_t *n, struct stat *st)
{
	uint8_t *buf = NULL;
	int r = lfs_read_source(AT_FDCWD, path, max, &buf, n, st);
	if (r) {
		eprintf("%s: error: %s\n", path, strerror(r));
		return NULL;
	}
	return buf;
}

/* Write a result to @p out ("-" = stdout) by atomic replace, keeping OUT's
 * mode and owner when it exists, else taking @p like's. 0 or EXIT_ERR. */
int write_result(const char *out, const uint8_t *res, size_t rn, const struct stat *like)
{
	if (strcmp(out, "-") == 0) {
		if (write_all(STDOUT_FILENO, (const char *)res, rn) == 0)
			return 0;
		eprintf("stdout: error: %s\n", strerror(errno));
		return EXIT_ERR;
	}
	struct stat ost;
	if (stat(out, &ost) != 0)
		ost = *like;
	char what[PATH_MAX + 64] = "";
	int r = lfs_replace_file(AT_FDCWD, out, res, rn, &ost, NULL, NULL, what, sizeof(what));
	if (r) {
		eprintf("%s: error: %s: %s\n", out, what, strerror(r));
		return EXIT_ERR;
	}
	return 0;
}

/* @p n bytes of messages @p s to stderr; with @p from / @p to, a line that
 * starts with "FROM:" is written as "TO:" (check names the file it read,
 * not the view, so an editor finds the line). */
static void write_renamed(const char *s, size_t n, const char *from, const char *to)
{
	size_t fl = from ? strlen(from) : 0;
	while (n) {
		const char *nl = memchr(s, '\n', n);
		size_t ll = nl ? (size_t)(nl - s) + 1 : n;
		if (fl && ll > fl && memcmp(s, from, fl) == 0 && s[fl] == ':') {
			err_write(to, strlen(to));
			err_write(s + fl, ll - fl);
		} else {
			err_write(s, ll);
		}
		s += ll;
		n -= ll;
	}
}

/* The warnings of an apply or compile, to stderr in gcc's form (they come
 * before an error, if any, as a compiler prints them); lines naming
 * @p from are written naming @p to (NULL: as they are). */
static void print_warnings_as(const lfs_warnings *w, const char *from, const char *to)
{
	write_renamed(w->text, w->len, from, to);
	size_t shown = 0;
	for (size_t i = 0; i < w->len; i++)
		shown += w->text[i] == '\n';
	if (w->count > shown)
		eprintf("legacyfs-convert: %u more warnings not shown\n", w->count - (unsigned)shown);
}

static void print_warnings(const lfs_warnings *w)
{
	print_warnings_as(w, NULL, NULL);
}

/* The save of EDITED onto view VIEWPATH of MODEL, as the mount does it
 * (lfs_view_apply(): the format's apply, then the round-trip law); a
 * supermodel (NWN) is read from MODEL's folder, as the mount does. Messages
 * to stderr; with @p as_edited, those naming VIEWPATH name EDITED instead.
 * On 0, *res (malloc'd, *rn bytes) is the new model file and *mst MODEL's
 * stat. Returns an exit status. */
static int apply_core(const char *model, const char *vpath, const char *edited, size_t max_size,
		      bool as_edited, uint8_t **res, size_t *rn, struct stat *mst)
{
	struct stat est;
	size_t n, tn;
	*res = NULL;
	*rn = 0;
	uint8_t *orig = slurp(model, max_size, &n, mst);
	if (!orig)
		return EXIT_ERR;
	uint8_t *text = slurp(edited, (size_t)1 << 30, &tn, &est);
	if (!text) {
		free(orig);
		return EXIT_ERR;
	}
	const char *base = strrchr(model, '/');
	base = base ? base + 1 : model;
	if (lfs_format_for(base, orig, n) == NULL) {
		eprintf("%s: error: not a model (a mount shows it unchanged)\n", model);
		free(orig);
		free(text);
		return EXIT_NOTMODEL;
	}
	lfs_error err;
	memset(&err, 0, sizeof(err));
	char *dir = strdup(model);
	if (dir) {
		char *sl = strrchr(dir, '/');
		if (sl)
			*sl = '\0';
		else
			strcpy(dir, ".");
	}
	lfs_sibling_ctx sc = { AT_FDCWD, dir ? dir : ".", max_size };
	/* lfs_views_apply_ex() with a warning sink: the views of MODEL, then the
	 * format's apply of the one named VIEWPATH */
	lfs_warnings warn = { 0 };
	const lfs_siblings sib = { lfs_sibling_model_read, &sc, &warn };
	lfs_viewset vs;
	lfs_view_opts only = { .only = vpath }; /* the edited view alone */
	lfs_err e = lfs_views_build(base, orig, n, &only, &vs, &err);
	if (e == LFS_OK) {
		const lfs_view *v = lfs_viewset_find(&vs, vpath);
		if (!v)
			e = lfs_fail(&err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: no such view", vpath);
		else
			e = lfs_view_apply(vs.format, orig, n, v, (const char *)text, tn, &sib, res, rn,
					   &err);
		lfs_viewset_free(&vs);
	}
	const char *from = as_edited ? vpath : NULL;
	print_warnings_as(&warn, from, edited);
	free(dir);
	free(text);
	free(orig);
	if (e != LFS_OK) {
		/* A bad edit prints exactly the mount's message: VIEWPATH:line:col: ... */
		if (e == LFS_ERR_PARSE) {
			write_renamed(err.msg, strlen(err.msg), from, edited);
			err_write("\n", 1);
		} else {
			eprintf("%s: error: %s\n", model, err.msg);
		}
		free(*res);
		*res = NULL;
		return e == LFS_ERR_UNSUPPORTED ? EXIT_READONLY : EXIT_ERR;
	}
	return 0;
}

/* apply MODEL VIEWPATH EDITED -o OUT */
int do_apply(const char *model, const char *vpath, const char *edited, const char *out,
		    size_t max_size)
{
	uint8_t *res;
	size_t rn;
	struct stat mst;
	int status = apply_core(model, vpath, edited, max_size, false, &res, &rn, &mst);
	if (status == 0)
		status = write_result(out, res, rn, &mst);
	free(res);
	return status;
}

/* check MODEL VIEWPATH EDITED: apply's messages, nothing written */
int do_check(const char *model, const char *vpath, const char *edited, size_t max_size)
{
	uint8_t *res;
	size_t rn;
	struct stat mst;
	int status = apply_core(model, vpath, edited, max_size, true, &res, &rn, &mst);
	free(res);
	return status;
}

/* compile X.mdl -o X.bin.mdl: full compile of the game's own text form of a
 * model (lfs_format.compile; NWN ASCII MDL, docs/nwn-compile.md); siblings
 * (the NWN supermodel) come from X's folder (lfs_sibling_model_read). */
int do_compile(const char *src, const char *out, size_t max_size)
{
	const lfs_format *f = lfs_format_compiler_for(src);
	if (!f) {
		eprintf("%s: error: no format compiles this file\n", src);
		return EXIT_ERR;
	}
	struct stat sst;
	size_t n;
	uint8_t *text = slurp(src, max_size, &n, &sst);
	if (!text)
		return EXIT_ERR;
	char *dir = strdup(src);
	if (!dir) {
		free(text);
		return EXIT_ERR;
	}
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	lfs_error err;
	memset(&err, 0, sizeof(err));
	uint8_t *res = NULL;
	size_t rn = 0;
	lfs_sibling_ctx sc = { AT_FDCWD, dir, max_size };
	lfs_warnings warn = { 0 };
	const lfs_siblings sib = { lfs_sibling_model_read, &sc, &warn };
	lfs_err e = f->compile(src, text, n, &sib, &res, &rn, &err);
	print_warnings(&warn);
	free(text);
	free(dir);
	if (e != LFS_OK) {
		if (e == LFS_ERR_PARSE)
			eprintf("%s\n", err.msg);
		else
			eprintf("%s: error: %s\n", src, err.msg);
		return EXIT_ERR;
	}
	int status = write_result(out, res, rn, &sst);
	free(res);
	return status;
}

/* Render MODEL's thumbnail PNG (@p size px) into @p out ("-" = stdout).
 * Textures are searched from MODEL's folder up to @p root (NULL: MODEL's
 * folder). Exit status: 0 ok, 1 error or no drawable triangles, 2 MODEL not
 * inside root, 3 not a model. */
int thumb_one(const char *model, const char *root, unsigned size, const char *out)
{
	char *mreal = realpath(model, NULL);
	char *rreal = root ? realpath(root, NULL) : (mreal ? strdup(mreal) : NULL);
	if (!mreal || !rreal) {
		eprintf("%s: error: %s\n", mreal ? root : model, strerror(errno));
		free(mreal);
		free(rreal);
		return EXIT_ERR;
	}
	if (!root) {
		char *sl = strrchr(rreal, '/');
		if (sl)
			sl[sl == rreal ? 1 : 0] = '\0';
	}
	size_t rl = strlen(rreal);
	while (rl > 1 && rreal[rl - 1] == '/')
		rreal[--rl] = '\0';
	const char *rel = strcmp(rreal, "/") == 0 ? mreal + 1
			  : (strncmp(mreal, rreal, rl) == 0 && mreal[rl] == '/') ? mreal + rl + 1 : NULL;
	int status = EXIT_ERR;
	uint8_t *data = NULL, *png = NULL;
	size_t n = 0, pngn = 0;
	int rootfd = -1;
	FILE *f = NULL;
	char *uri = NULL;
	struct stat st;
	if (!rel || !*rel) {
		eprintf("%s: error: is not inside --root %s\n", model, rreal);
		status = EXIT_USAGE;
		goto out;
	}
	f = fopen(mreal, "rb");
	if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > ((uint64_t)256 << 20)) {
		eprintf("%s: error: %s\n", model,
			f && S_ISREG(st.st_mode) ? "too large" : strerror(errno ? errno : EINVAL));
		goto out;
	}
	n = (size_t)st.st_size;
	data = malloc(n ? n : 1);
	if (!data || fread(data, 1, n, f) != n) {
		eprintf("%s: error: read failed\n", model);
		goto out;
	}
	uri = lfs_thumb_file_uri(mreal); /* Thumb::URI */
	if (!uri)
		goto out;
	rootfd = open(rreal, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		eprintf("%s: error: %s\n", rreal, strerror(errno));
		goto out;
	}
	lfs_texture_ctx tc;
	lfs_texture_ctx_init(&tc, rootfd, rel);
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc,
			     .texture_read = lfs_texture_read };
	lfs_error err;
	memset(&err, 0, sizeof(err));
	const char *base = strrchr(mreal, '/') ? strrchr(mreal, '/') + 1 : mreal;
	lfs_err e = lfs_views_thumbnail(base, data, n, size, &vo, uri, (int64_t)st.st_mtime, &png,
					&pngn, &err);
	lfs_texture_ctx_free(&tc);
	if (e == LFS_ERR_NOTFORMAT) {
		eprintf("%s: error: not a model\n", model);
		status = EXIT_NOTMODEL;
		goto out;
	}
	if (e != LFS_OK) {
		eprintf("%s: error: %s\n", model, err.msg);
		goto out;
	}
	if (strcmp(out, "-") == 0) {
		status = write_all(STDOUT_FILENO, (const char *)png, pngn) == 0 ? 0 : EXIT_ERR;
	} else {
		FILE *o = fopen(out, "wb");
		bool ok = o && fwrite(png, 1, pngn, o) == pngn;
		if (o && fclose(o) != 0)
			ok = false;
		status = ok ? 0 : EXIT_ERR;
	}
	if (status)
		eprintf("%s: error: %s\n", out, strerror(errno));
out:
	if (f)
		fclose(f);
	if (rootfd >= 0)
		close(rootfd);
	free(data);
	free(png);
	free(uri);
	free(mreal);
	free(rreal);
	return status;
}

/* cat's output of view @p v of @p vs (NULL: none, an error): to stdout, or
 * into the thread's capture (which then owns @p vs). Frees @p vs otherwise.
 * Exit status. */
static int cat_write(const char *model, const char *vpath, lfs_viewset *vs, const lfs_view *v)
{
	int status = 0;
	if (!v) {
		eprintf("%s: error: no view %s (see `legacyfs-convert list`)\n", model, vpath);
		status = EXIT_ERR;
	} else if (capture_view(vs, v)) {
		return 0;
	} else if (write_all(STDOUT_FILENO, v->data, v->size) != 0) {
		eprintf("stdout: error: %s\n", strerror(errno));
		status = EXIT_ERR;
	}
	lfs_viewset_free(vs);
	return status;
}

/* cat of one MODEL: view @p vpath (NULL: the model's first LFS_VIEW_TEXT
 * view, e.g. model.mdl) to stdout. Exit status. */
int cat_one(const char *model, const char *vpath, const char *root, size_t max_size,
		   unsigned thumb_size)
{
	lfs_viewset vs;
	char *text = NULL;
	int status;
	if (!vpath && t_text_view[0]) {
		/* a batch: one build of the view the last model's text view was
		 * called (each format has one text view, of a fixed name); when
		 * that is not this model's text view, or the build fails, the
		 * names-only build below finds the name and prints any message */
		status = load_q(model, root, max_size, 0, t_text_view, false, true, &vs);
		if (!status) {
			const lfs_view *v = lfs_viewset_find(&vs, t_text_view);
			if (v && v->kind == LFS_VIEW_TEXT)
				return cat_write(model, t_text_view, &vs, v);
			lfs_viewset_free(&vs);
		}
	}
	if (!vpath) {
		/* the name of the text view from a names-only build (no view
		 * written), then that view alone */
		status = load_ex(model, root, max_size, 0, NULL, true, &vs);
		if (status)
			return status;
		for (size_t i = 0; i < vs.n_views && !text; i++)
			if (vs.views[i].kind == LFS_VIEW_TEXT && !(text = strdup(vs.views[i].path))) {
				eprintf("%s: error: out of memory\n", model);
				status = EXIT_ERR;
			}
		lfs_viewset_free(&vs);
		if (status)
			return status;
		if (!text) {
			eprintf("%s: error: no view of MDL-style text (see `legacyfs-convert list`)\n",
				model);
			return EXIT_ERR;
		}
		vpath = text;
		if (strlen(text) < sizeof(t_text_view))
			strcpy(t_text_view, text);
	}
	/* only the view printed is built; the thumbnail is rendered only when
	 * it is the view asked for */
	bool thumb = strcmp(vpath, "thumbnail.png") == 0;
	status = load_ex(model, root, max_size, thumb ? thumb_size : 0, vpath, false, &vs);
	if (!status)
		status = cat_write(model, vpath, &vs, lfs_viewset_find(&vs, vpath));
	free(text);
	return status;
}

/* extract of one MODEL into @p dest. Exit status. */
int extract_one(const char *model, const char *dest, const char *root, size_t max_size)
{
	lfs_viewset vs;
	int status = load(model, root, max_size, g_thumb_size, &vs);
	if (status)
		return status;
	status = do_extract(&vs, dest);
	lfs_viewset_free(&vs);
	return status;
}

