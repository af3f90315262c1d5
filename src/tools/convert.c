/**
 * @file convert.c
 * legacyfs-convert: what the mount shows for one file or many, without FUSE.
 *
 *   legacyfs-convert list    [--root DIR] MODEL            view paths and sizes
 *   legacyfs-convert cat     [--root DIR] MODEL VIEWPATH   one view to stdout
 *   legacyfs-convert cat     [-v VIEWPATH] MODEL...        that view (default: the
 *                                                          model's text) of each
 *   legacyfs-convert extract [--root DIR] MODEL DESTDIR    every view into DESTDIR
 *   legacyfs-convert extract -d OUT MODEL...               into OUT/<MODEL's name>/
 *   legacyfs-convert apply   MODEL VIEWPATH EDITED -o OUT  edited view -> new model file
 *   legacyfs-convert compile X.mdl -o OUT | -d OUT X.mdl...
 *   legacyfs-convert thumbnail MODEL OUT.png | -d OUT MODEL...
 *   legacyfs-convert pack    [--type T] [--erf-version V] OUT.hak FILE...
 *   legacyfs-convert unpack  ARCHIVE DESTDIR              raw resources
 *
 * Options (getopt_long: -s256, -s 256, --size=256, --size 256, bundles
 * such as -qv VIEW, unique abbreviations) may stand before the subcommand,
 * between or after the operands, with or without POSIXLY_CORRECT; "--"
 * ends them (a MODEL named -x.mdl). A refused option is named with one
 * usage line, exit 2.
 *
 * A batch (several MODELs, or -d) does each file on its own in one process:
 * a failing file gets its message (`FILE: error: ...`, `FILE:LINE:COL:
 * error: ...` for a bad text) and the batch goes on; a progress line
 * ("[i/n] MODEL", rewritten with "\r") is shown when stderr is a terminal.
 * `-j N` does N models at a time on N threads (default: the online CPUs);
 * each worker keeps its model's messages and cat's view (struct capture)
 * and the main thread writes them in argument order, so stdout, stderr,
 * the files and the exit status are those of `-j 1`.
 *
 * It uses the same classification and view building as the mount
 * (src/fs/source.c, src/fs/texture.c), so `extract` reproduces the mount's
 * MODEL folder byte for byte when --root names the mount's SOURCE (texture
 * paths in model.mtl are searched from the model's folder up to the root).
 *
 * `apply` is the mount's save without FUSE: the same lfs_views_apply() call
 * (decode MODEL, apply the edited text of VIEWPATH, encode), the same
 * gcc-style message for a bad edit, and OUT written the way the mount writes
 * SOURCE (temporary file in OUT's folder, fsync, rename; lfs_replace_file()).
 * OUT may be MODEL itself; "-o -" writes to stdout.
 *
 * Exit status: 0 success; 1 error (unreadable file, decode failure, unknown
 * view, bad edit, a FILE that pack refuses); 2 usage; 3 the file is not a
 * model (the mount passes it through; unpack: not an ERF-family archive);
 * 4 the view is read-only. A batch: 0 every file done, 1 some
 * failed, 3 the only failures were files that are not models, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/erf.h"
#include "formats/restype.h"
#include "views/container.h"
#include "fs/replace.h"
#include "fs/source.h"
#include "fs/texture.h"
#include "lfs_config.h"
#include "views/names.h"
#include "views/thumb.h"
#include "views/viewset.h"

enum { EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_NOTMODEL = 3, EXIT_READONLY = 4 };

/* The progress line of a batch (stderr is a terminal, more than one model,
 * no -q): "[i/n] MODEL", rewritten in place with "\r", cleared before any
 * message and at the end. */
static bool g_progress;       /* a batch shows progress */
static bool g_progress_shown; /* the line is on the terminal now */

static void progress_clear(void)
{
	if (g_progress_shown) {
		fputs("\r\033[K", stderr);
		g_progress_shown = false;
	}
}

static void progress(size_t i, size_t n, const char *model)
{
	if (!g_progress)
		return;
	fprintf(stderr, "\r\033[K[%zu/%zu] %.60s", i + 1, n, model);
	fflush(stderr);
	g_progress_shown = true;
}

/* A growing byte buffer (owned; NULL p = empty). */
struct obuf {
	char *p;
	size_t len, cap;
	bool oom; /* an append failed: the text is cut short */
};

static void obuf_add(struct obuf *b, const char *s, size_t n)
{
	if (b->oom || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* What one model of a parallel batch (-j N, N > 1) produced, kept until the
 * main thread writes it in argument order: its stderr text, the view cat
 * writes to stdout (the viewset it lives in is freed after writing), the
 * exit status. */
struct capture {
	struct obuf err;
	lfs_viewset vs;   /* cat: the built views (has_vs) */
	const lfs_view *view; /* cat: the one to write, in vs */
	bool has_vs;
	int status;
	bool done; /* set by the worker under batch_pool.mu */
};

/* The capture of the model this thread is doing (NULL: write directly, the
 * sequential batch and the one-model commands). */
static _Thread_local struct capture *t_cap;

/* @p n bytes of a message to stderr, or into the thread's capture. */
static void err_write(const char *s, size_t n)
{
	if (t_cap) {
		obuf_add(&t_cap->err, s, n);
		return;
	}
	progress_clear();
	fwrite(s, 1, n, stderr);
}

/* A message on stderr, below the progress line (which it clears first); in
 * a worker of a parallel batch, into its capture (written in order later). */
__attribute__((format(printf, 1, 2))) static void eprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (t_cap) {
		char *s = NULL;
		int n = vasprintf(&s, fmt, ap);
		if (n > 0)
			obuf_add(&t_cap->err, s, (size_t)n);
		else
			t_cap->err.oom = true;
		free(s);
	} else {
		progress_clear();
		vfprintf(stderr, fmt, ap);
	}
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: legacyfs-convert list    [--root DIR] [--max-size MIB] MODEL\n"
		"       legacyfs-convert cat     [--root DIR] [--max-size MIB] MODEL VIEWPATH\n"
		"       legacyfs-convert cat     [--root DIR] [-v VIEWPATH] MODEL...\n"
		"       legacyfs-convert extract [--root DIR] [--max-size MIB] MODEL DESTDIR\n"
		"       legacyfs-convert extract [--root DIR] -d OUTDIR MODEL...\n"
		"       legacyfs-convert apply   [--max-size MIB] MODEL VIEWPATH EDITED -o OUT\n"
		"       legacyfs-convert compile [--max-size MIB] X.mdl -o X.bin.mdl (NWN ASCII -> binary)\n"
		"       legacyfs-convert compile -d OUTDIR X.mdl...\n"
		"       legacyfs-convert thumbnail [-s SIZE] [--root DIR] [--respath DIRS] MODEL OUT.png\n"
		"       legacyfs-convert thumbnail [-s SIZE] [--root DIR] -d OUTDIR MODEL...\n"
		"       legacyfs-convert pack    [--type HAK|ERF|MOD|SAV|NWM] [--erf-version V1.0|E1.0] OUT FILE...\n"
		"       legacyfs-convert unpack  [--max-size MIB] ARCHIVE DESTDIR\n"
		"       legacyfs-convert --help | --version\n\n"
		"Shows what a legacyfs mount shows for MODEL, without mounting:\n"
		"  list     one line per view: size in bytes, a tab, the view path\n"
		"  cat      write the view VIEWPATH (e.g. meshes/Mesh02.obj) to stdout;\n"
		"           with -v, or with MODEL operands only, write that view (default:\n"
		"           the model's text, e.g. model.mdl) of each MODEL in turn\n"
		"  extract  write every view below DESTDIR (created if missing); with -d,\n"
		"           each MODEL's views go below OUTDIR/<MODEL's file name>/\n"
		"  apply    apply EDITED (a changed copy of view VIEWPATH) to MODEL and\n"
		"           write the new model file to OUT (may be MODEL; - = stdout),\n"
		"           exactly as saving the view through a mount would\n"
		"  compile  compile an NWN ASCII model into a binary (docs/nwn-compile.md);\n"
		"           with -d, each X.mdl into OUTDIR/<X's file name>\n"
		"  thumbnail render MODEL's thumbnail PNG (SIZE 128/256/512/1024; the\n"
		"           freedesktop thumbnailer in contrib/ calls this); with -d, into\n"
		"           OUTDIR/<MODEL's file name>.png\n"
		"  pack     write the NWN archive OUT (.hak/.erf/.mod: its type, default HAK)\n"
		"           holding one resource per FILE, in order: ResRef = file name\n"
		"           without extension (1-16 letters, digits, _), type = extension;\n"
		"           nothing is written when any FILE is refused (bad name, unknown\n"
		"           extension, duplicate); OUT is replaced atomically\n"
		"  unpack   write every resource of ARCHIVE (.hak/.erf/.mod/...) as a file in\n"
		"           DESTDIR, named as the mount names it; models as their own bytes\n\n"
		"  -d, --dest OUTDIR  batch: many models in one process (created if missing);\n"
		"                  a failing file is reported (FILE: error: ...) and the\n"
		"                  batch goes on; a progress line is shown on a terminal\n"
		"  -v, --view VIEWPATH  the view `cat` writes for each MODEL\n"
		"  -j, --jobs N    batch: do N models at a time on N threads (default: the\n"
		"                  number of online CPUs; 1 = one after the other); the\n"
		"                  output, messages and exit status are the same for any N\n"
		"  -q, --quiet     no progress line\n"
		"  -s, --size N    thumbnail edge (next of 128/256/512/1024 at or above N)\n"
		"  --thumb-size N  thumbnail.png edge as the mount's -o thumb_size (default 256, 0 = none)\n"
		"  --root DIR      the folder a mount would have as SOURCE; textures for\n"
		"                  model.mtl are searched from MODEL's folder up to DIR\n"
		"                  (default: MODEL's own folder), then in every folder\n"
		"                  below DIR (docs/mount.md \"Textures\")\n"
		"  --respath DIR[:DIR...]  folders searched for textures after DIR, as the\n"
		"                  mount's -o respath (model.mtl names them by absolute path)\n"
		"  --max-size MIB  larger files are not decoded (default 256, as the mount)\n"
		"  --type T        pack: the archive's FileType (default: OUT's extension)\n"
		"  --erf-version V pack: V1.0 (default) or E1.0 (NWN:EE; stored uncompressed)\n\n"
		"Exit status: 0 ok, 1 error (unreadable, does not decode, no such view,\n"
		"bad edit: message as file:line:col), 2 usage, 3 not a model (a mount\n"
		"shows it as the plain file), 4 read-only view. A batch (several MODELs\n"
		"or -d) exits 0 when every file was done, 1 when any file failed, 3 when\n"
		"the only failures were files that are not models; 2 for bad usage\n"
		"(nothing done).\n");
}

/* --thumb-size N: as the mount's -o thumb_size (0 = no thumbnail.png). */
static unsigned g_thumb_size = 256;

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
	lfs_err r = lfs_source_load(rootfd, rel, max_size, &vo, &st, &kind, vs, &err);
	if (r == LFS_OK && kind == LFS_SOURCE_MODEL && lfs_container_of(vs->format))
		r = lfs_source_expand(rootfd, rel, &vo, vs, NULL, &err); /* every member's views */
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

/* load_ex() of every view. */
static int load(const char *model, const char *root, size_t max_size, unsigned thumb_size,
		lfs_viewset *vs)
{
	return load_ex(model, root, max_size, thumb_size, NULL, false, vs);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
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

static uint8_t *slurp(const char *path, size_t max, size_t *n, struct stat *st)
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
static int write_result(const char *out, const uint8_t *res, size_t rn, const struct stat *like)
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

/* The warnings of an apply or compile, to stderr in gcc's form (they come
 * before an error, if any, as a compiler prints them). */
static void print_warnings(const lfs_warnings *w)
{
	if (w->len)
		err_write(w->text, w->len);
	size_t shown = 0;
	for (size_t i = 0; i < w->len; i++)
		shown += w->text[i] == '\n';
	if (w->count > shown)
		eprintf("legacyfs-convert: %u more warnings not shown\n", w->count - (unsigned)shown);
}

/* apply MODEL VIEWPATH EDITED -o OUT; a supermodel (NWN) is read from MODEL's
 * folder, as the mount does */
static int do_apply(const char *model, const char *vpath, const char *edited, const char *out,
		    size_t max_size)
{
	struct stat mst, est;
	size_t n, tn;
	uint8_t *orig = slurp(model, max_size, &n, &mst);
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
	uint8_t *res = NULL;
	size_t rn = 0;
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
			e = lfs_view_apply(vs.format, orig, n, v, (const char *)text, tn, &sib, &res, &rn,
					   &err);
		lfs_viewset_free(&vs);
	}
	print_warnings(&warn);
	free(dir);
	free(text);
	if (e != LFS_OK) {
		/* A bad edit prints exactly the mount's message: VIEWPATH:line:col: ... */
		if (e == LFS_ERR_PARSE)
			eprintf("%s\n", err.msg);
		else
			eprintf("%s: error: %s\n", model, err.msg);
		free(orig);
		free(res);
		return e == LFS_ERR_UNSUPPORTED ? EXIT_READONLY : EXIT_ERR;
	}
	int status = write_result(out, res, rn, &mst);
	free(orig);
	free(res);
	return status;
}

/* compile X.mdl -o X.bin.mdl: full compile of the game's own text form of a
 * model (lfs_format.compile; NWN ASCII MDL, docs/nwn-compile.md); siblings
 * (the NWN supermodel) come from X's folder (lfs_sibling_model_read). */
static int do_compile(const char *src, const char *out, size_t max_size)
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
static int thumb_one(const char *model, const char *root, unsigned size, const char *out)
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
	} else if (t_cap) {
		/* parallel batch: the main thread writes it in order and frees vs */
		t_cap->vs = *vs;
		t_cap->view = v;
		t_cap->has_vs = true;
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
static int cat_one(const char *model, const char *vpath, const char *root, size_t max_size,
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
static int extract_one(const char *model, const char *dest, const char *root, size_t max_size)
{
	lfs_viewset vs;
	int status = load(model, root, max_size, g_thumb_size, &vs);
	if (status)
		return status;
	status = do_extract(&vs, dest);
	lfs_viewset_free(&vs);
	return status;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && !*end && !errno && *v <= max ? 0 : -1;
}

/* The FileType tag ("HAK " …) for --type or OUT's extension @p s (case
 * ignored, a leading '.' skipped); NULL when it is none of the ERF family. */
static const char *erf_type_tag(const char *s)
{
	static const char *const tags[] = { "HAK ", "ERF ", "MOD ", "SAV ", "NWM " };
	if (*s == '.')
		s++;
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (strlen(s) == 3 && strncasecmp(s, tags[i], 3) == 0)
			return tags[i];
	return NULL;
}

/* The header's BuildYear (years since 1900) and BuildDay (day of the year
 * from 0, as BioWare's toolset writes it) of today, UTC, or of
 * $SOURCE_DATE_EPOCH when set (reproducible archives). */
static void erf_stamp(lfs_erf *a)
{
	time_t t = time(NULL);
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	unsigned long v;
	if (sde && parse_uint(sde, ULONG_MAX, &v) == 0)
		t = (time_t)v;
	struct tm tm;
	if (!gmtime_r(&t, &tm))
		return;
	uint32_t f[2] = { (uint32_t)tm.tm_year, (uint32_t)tm.tm_yday };
	for (int k = 0; k < 2; k++)
		for (int b = 0; b < 4; b++)
			a->header[32 + 4 * k + b] = (uint8_t)(f[k] >> (8 * b));
}

/*
 * pack OUT FILE...: a new archive of type @p type_tag (NULL: from OUT's
 * extension, else "HAK ") and @p version holding one resource per FILE, in
 * argument order: ResRef = the file's base name without its extension
 * (lfs_resref_check: 1-16 letters, digits, '_'), type = its extension
 * (restype.h). Every FILE is checked before anything is written: a bad
 * name, an unknown extension, a duplicate (same ResRef ignoring case and
 * same type) or an unreadable file is reported (FILE: error: ...) and OUT
 * is then not written. OUT is written atomically (lfs_replace_file(): temp
 * file in OUT's folder, fsync, rename). Exit status.
 */
static int do_pack(const char *out, char **files, size_t nfiles, const char *type_tag,
		   lfs_erf_version version, size_t max_size)
{
	if (!type_tag) {
		const char *dot = strrchr(out, '.');
		const char *sl = strrchr(out, '/');
		type_tag = dot && (!sl || dot > sl) ? erf_type_tag(dot) : NULL;
		if (!type_tag)
			type_tag = "HAK ";
	}
	lfs_erf *a = lfs_erf_new(type_tag, version);
	if (!a) {
		eprintf("%s: error: out of memory\n", out);
		return EXIT_ERR;
	}
	erf_stamp(a);
	/* from[i]: the FILE of entry i (for a duplicate's message) */
	const char **from = calloc(nfiles, sizeof(*from));
	if (!from) {
		lfs_erf_free(a);
		eprintf("%s: error: out of memory\n", out);
		return EXIT_ERR;
	}
	size_t bad = 0;
	for (size_t i = 0; i < nfiles; i++) {
		const char *f = files[i];
		const char *base = strrchr(f, '/');
		base = base ? base + 1 : f;
		const char *dot = strrchr(base, '.');
		uint16_t type;
		if (!dot || dot == base || !lfs_restype_from_ext(dot + 1, &type) || type == 0 ||
		    type == LFS_RESTYPE_INVALID) {
			eprintf("%s: error: %s%s is not the extension of an NWN resource type "
				"(e.g. .mdl, .tga, .2da; docs/archives.md)\n", f,
				dot && dot != base ? "." : "(no extension)", dot && dot != base ? dot + 1 : "");
			bad++;
			continue;
		}
		char resref[64];
		size_t rl = (size_t)(dot - base);
		if (rl >= sizeof(resref))
			rl = sizeof(resref) - 1;
		memcpy(resref, base, rl);
		resref[rl] = '\0';
		struct stat st;
		size_t n = 0;
		uint8_t *data = NULL;
		lfs_error err;
		memset(&err, 0, sizeof(err));
		/* the name first: no read of a file that cannot go in */
		uint32_t dup = lfs_erf_find(a, resref, type);
		if (dup != UINT32_MAX) {
			eprintf("%s: error: resource %s.%s is already packed from %s (ResRefs "
				"are compared ignoring case)\n", f, resref, dot + 1, from[dup]);
			bad++;
			continue;
		}
		lfs_err e = lfs_erf_check_name(a, resref, type, UINT32_MAX, &err);
		if (e == LFS_OK) {
			int r = lfs_read_source(AT_FDCWD, f, max_size, &data, &n, &st);
			if (r) {
				eprintf("%s: error: %s\n", f, r == EFBIG ? "larger than --max-size" : strerror(r));
				bad++;
				continue;
			}
			e = lfs_erf_add(a, resref, type, data, n, &err);
			free(data);
			if (e == LFS_OK)
				from[a->n - 1] = f;
		}
		if (e != LFS_OK) {
			eprintf("%s: error: %s\n", f, err.msg);
			bad++;
		}
	}
	free(from);
	if (bad) {
		eprintf("%s: error: not written (%zu of %zu files refused)\n", out, bad, nfiles);
		lfs_erf_free(a);
		return EXIT_ERR;
	}
	uint8_t *res = NULL;
	size_t rn = 0;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err e = lfs_erf_encode(a, &res, &rn, &err);
	lfs_erf_free(a);
	if (e != LFS_OK) {
		eprintf("%s: error: %s\n", out, err.msg);
		return EXIT_ERR;
	}
	/* a new OUT gets the mode a new file would (0666 less the umask) */
	struct stat like;
	memset(&like, 0, sizeof(like));
	mode_t um = umask(0);
	umask(um);
	like.st_mode = S_IFREG | (0666 & ~um);
	like.st_uid = getuid();
	like.st_gid = getgid();
	int status = write_result(out, res, rn, &like);
	free(res);
	return status;
}

/*
 * unpack ARCHIVE DESTDIR: every resource of an ERF-family ARCHIVE as a file
 * DESTDIR/<name> holding its bytes (E1: decompressed, SHA-1 checked), the
 * name as the mount names it (docs/archives.md: "resref.ext", a broken entry
 * "broken-<index>.<ext>", unsafe bytes escaped, a repeated name "~2").
 * Unlike `extract`, a model is its own bytes, not the folder of its views.
 * An entry that cannot be read is reported and the rest still written.
 * Exit status.
 */
static int do_unpack(const char *arch, const char *dest, size_t max_size)
{
	struct stat st;
	size_t n;
	uint8_t *data = slurp(arch, max_size, &n, &st);
	if (!data)
		return EXIT_ERR;
	lfs_erf *a = NULL;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err e = lfs_erf_decode(data, n, &a, &err);
	if (e != LFS_OK) {
		eprintf("%s: error: %s\n", arch, err.msg);
		free(data);
		return e == LFS_ERR_NOTFORMAT ? EXIT_NOTMODEL : EXIT_ERR;
	}
	int status = 0;
	int destfd = -1;
	if ((mkdir(dest, 0755) != 0 && errno != EEXIST) ||
	    (destfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		eprintf("%s: error: %s\n", dest, strerror(errno));
		status = EXIT_ERR;
	}
	lfs_nameset names;
	lfs_nameset_init(&names);
	for (uint32_t i = 0; destfd >= 0 && i < a->n; i++) {
		const lfs_erf_entry *en = &a->e[i];
		char ext[16], raw[96];
		lfs_restype_name(en->type, ext, sizeof(ext));
		if (!en->resref[0] || en->type == 0)
			snprintf(raw, sizeof(raw), "broken-%u.%s", i, ext);
		else
			snprintf(raw, sizeof(raw), "%s.%s", en->resref, ext);
		const char *name = lfs_nameset_add(&names, raw);
		if (!name) {
			eprintf("%s: error: out of memory\n", arch);
			status = EXIT_ERR;
			break;
		}
		uint8_t *p = NULL;
		size_t pn = 0;
		memset(&err, 0, sizeof(err));
		if (lfs_erf_read(a, i, &p, &pn, &err) != LFS_OK) {
			eprintf("%s: error: entry %u (%s): %s\n", arch, i, name, err.msg);
			status = EXIT_ERR;
			continue;
		}
		int fd = openat(destfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		bool ok = fd >= 0 && write_all(fd, (const char *)p, pn) == 0;
		int saved = errno;
		if (fd >= 0 && close(fd) != 0 && ok) {
			ok = false;
			saved = errno;
		}
		if (!ok) {
			eprintf("%s/%s: error: %s\n", dest, name, strerror(saved));
			status = EXIT_ERR;
		}
		free(p);
	}
	lfs_nameset_free(&names);
	if (destfd >= 0)
		close(destfd);
	lfs_erf_free(a);
	free(data);
	return status;
}

enum cmd { CMD_LIST, CMD_CAT, CMD_EXTRACT, CMD_COMPILE, CMD_THUMB };

/* The settings of one run (the command line). */
struct run {
	enum cmd cmd;
	const char *root, *view, *dest;
	size_t max_size;
	unsigned thumb_px; /* thumbnail's -s */
	size_t jobs;       /* -j: worker threads of a batch (1 = the main thread alone) */
};

/* One file of a batch: the output path below r->dest is
 * dest/<base><suffix>. Exit status. */
static int batch_one(const struct run *r, const char *model)
{
	if (r->cmd == CMD_CAT)
		return cat_one(model, r->view, r->root, r->max_size, g_thumb_size);
	const char *base = strrchr(model, '/');
	base = base ? base + 1 : model;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		eprintf("%s: error: no file name to write the output under\n", model);
		return EXIT_ERR;
	}
	char out[PATH_MAX];
	int len = snprintf(out, sizeof(out), "%s/%s%s", r->dest, base,
			   r->cmd == CMD_THUMB ? ".png" : "");
	if (len < 0 || (size_t)len >= sizeof(out)) {
		eprintf("%s: error: output path too long\n", model);
		return EXIT_ERR;
	}
	if (r->cmd == CMD_EXTRACT)
		return extract_one(model, out, r->root, r->max_size);
	if (r->cmd == CMD_THUMB)
		return thumb_one(model, r->root, r->thumb_px, out);
	/* compile: never over its own input (-d naming the input's folder) */
	struct stat a, b;
	if (stat(model, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		eprintf("%s: error: the output %s is the input itself (choose another -d)\n", model, out);
		return EXIT_ERR;
	}
	return do_compile(model, out, r->max_size);
}

/* Model @p i of a batch: refused when an earlier input has its file name
 * (with -d both would write the same output), else batch_one(). */
static int batch_model(const struct run *r, char **models, size_t i)
{
	if (r->dest) {
		const char *bi = strrchr(models[i], '/');
		bi = bi ? bi + 1 : models[i];
		for (size_t j = 0; j < i; j++) {
			const char *bj = strrchr(models[j], '/');
			if (strcmp(bi, bj ? bj + 1 : models[j]) == 0) {
				eprintf("%s: error: same file name as %s: its output would "
					"replace that one's (not done)\n", models[i], models[j]);
				return EXIT_ERR;
			}
		}
	}
	return batch_one(r, models[i]);
}

/* The workers of a parallel batch: each takes the next model index, does it
 * into caps[i] and marks it done; the main thread writes the captures in
 * argument order. A worker stays at most `window` models ahead of the
 * writer (the captured views of cat are held until written). */
struct batch_pool {
	const struct run *r;
	char **models;
	size_t n, next, written, window;
	struct capture *caps;
	pthread_mutex_t mu;
	pthread_cond_t done_cv; /* a capture is done */
	pthread_cond_t room_cv; /* the writer moved on */
};

static void *batch_worker(void *arg)
{
	struct batch_pool *bp = arg;
	pthread_mutex_lock(&bp->mu);
	for (;;) {
		while (bp->next < bp->n && bp->next >= bp->written + bp->window)
			pthread_cond_wait(&bp->room_cv, &bp->mu);
		if (bp->next >= bp->n)
			break;
		size_t i = bp->next++;
		pthread_mutex_unlock(&bp->mu);
		t_cap = &bp->caps[i];
		int st = batch_model(bp->r, bp->models, i);
		t_cap = NULL;
		pthread_mutex_lock(&bp->mu);
		bp->caps[i].status = st;
		bp->caps[i].done = true;
		pthread_cond_broadcast(&bp->done_cv);
	}
	pthread_mutex_unlock(&bp->mu);
	return NULL;
}

/* Write capture @p c of @p model (messages, then cat's view) and free it.
 * Returns the model's exit status. */
static int batch_emit(struct capture *c, const char *model)
{
	int st = c->status;
	if (c->err.len)
		err_write(c->err.p, c->err.len);
	if (c->err.oom)
		eprintf("%s: error: out of memory for its messages\n", model);
	if (c->has_vs) {
		if (write_all(STDOUT_FILENO, c->view->data, c->view->size) != 0) {
			eprintf("stdout: error: %s\n", strerror(errno));
			st = EXIT_ERR;
		}
		lfs_viewset_free(&c->vs);
	}
	free(c->err.p);
	return st;
}

/* Many models in one process: each is done on its own; a failure is
 * reported and the batch goes on. Two inputs with the same file name would
 * write the same output: the later one fails. With r->jobs > 1 the models
 * are done on that many threads and everything is written in argument
 * order, as with one (the same stdout, messages, files, exit status).
 * Exit status: 0 all done, 1 some failed, 3 the only failures were files
 * that are not models. */
static int batch(const struct run *r, char **models, size_t n)
{
	if (r->dest && mkdir(r->dest, 0755) != 0 && errno != EEXIST) {
		eprintf("%s: error: %s\n", r->dest, strerror(errno));
		return EXIT_ERR;
	}
#ifdef __GLIBC__
	/* Many models: keep freed memory in the heap for the next model. By
	 * default glibc gives each buffer over 128 KiB (a model file, its views'
	 * text) its own mmap and unmaps it when freed, so every model paid page
	 * faults for fresh zeroed pages again (a fifth of a batch `cat`). */
	if (n > 1) {
		mallopt(M_MMAP_THRESHOLD, 64 << 20);
		mallopt(M_TRIM_THRESHOLD, 256 << 20);
	}
#endif
	/* no progress line between views that cat writes to the same terminal */
	g_progress = g_progress && n > 1 && isatty(STDERR_FILENO) &&
		     !(r->cmd == CMD_CAT && isatty(STDOUT_FILENO));
	size_t failed = 0, notmodel = 0;
	size_t jobs = r->jobs < n ? r->jobs : n;
	struct batch_pool bp = { .r = r, .models = models, .n = n, .window = 4 * jobs };
	pthread_t *th = NULL;
	size_t started = 0;
	if (jobs > 1) {
		bp.caps = calloc(n, sizeof(*bp.caps));
		th = calloc(jobs, sizeof(*th));
		if (bp.caps && th) {
			pthread_mutex_init(&bp.mu, NULL);
			pthread_cond_init(&bp.done_cv, NULL);
			pthread_cond_init(&bp.room_cv, NULL);
			while (started < jobs &&
			       pthread_create(&th[started], NULL, batch_worker, &bp) == 0)
				started++;
		}
		if (!started) { /* no memory or no thread: one at a time */
			free(bp.caps);
			bp.caps = NULL;
		}
	}
	for (size_t i = 0; i < n; i++) {
		progress(i, n, models[i]);
		int st;
		if (started) {
			pthread_mutex_lock(&bp.mu);
			while (!bp.caps[i].done)
				pthread_cond_wait(&bp.done_cv, &bp.mu);
			pthread_mutex_unlock(&bp.mu);
			st = batch_emit(&bp.caps[i], models[i]);
			pthread_mutex_lock(&bp.mu);
			bp.written = i + 1;
			pthread_cond_broadcast(&bp.room_cv);
			pthread_mutex_unlock(&bp.mu);
		} else {
			st = batch_model(r, models, i);
		}
		if (st) {
			failed++;
			notmodel += st == EXIT_NOTMODEL;
		}
	}
	if (started) {
		for (size_t k = 0; k < started; k++)
			pthread_join(th[k], NULL);
		pthread_cond_destroy(&bp.room_cv);
		pthread_cond_destroy(&bp.done_cv);
		pthread_mutex_destroy(&bp.mu);
	}
	free(bp.caps);
	free(th);
	progress_clear();
	if (failed && n > 1)
		eprintf("legacyfs-convert: %zu of %zu files failed\n", failed, n);
	return !failed ? 0 : failed == notmodel ? EXIT_NOTMODEL : EXIT_ERR;
}

/* One line after an option error: what a call looks like, where the rest is. */
static void usage_line(void)
{
	eprintf("usage: legacyfs-convert list|cat|extract|apply|compile|thumbnail|pack|unpack"
		" [OPTION]... ARG... (legacyfs-convert --help: all forms)\n");
}

/* The long name of the option whose getopt value is @p val ("size" for
 * 's'); NULL when none. */
static const char *long_name(const struct option *lo, int val)
{
	for (; lo->name; lo++)
		if (lo->val == val)
			return lo->name;
	return NULL;
}

/* Reports an option getopt_long refused (it returned '?' or ':' with
 * @p optopt; @p word = the argument it was reading, argv[optind - 1]) as
 * "legacyfs-convert: unknown option '--x'" (or: '--t' is ambiguous,
 * '--quiet' takes no argument, '--size' needs an argument) and one usage
 * line. Returns EXIT_USAGE. */
static int option_error(const struct option *lo, const char *shorts, int c, int opt,
			const char *word)
{
	bool is_long = strncmp(word, "--", 2) == 0;
	const char *name = long_name(lo, opt);
	if (c == ':') { /* a missing argument */
		if (is_long && name)
			eprintf("legacyfs-convert: option '--%s' needs an argument\n", name);
		else
			eprintf("legacyfs-convert: option '-%c' needs an argument\n", opt);
	} else if (opt > 0 && opt < 128 && strchr(shorts, opt) && is_long && name) {
		eprintf("legacyfs-convert: option '--%s' takes no argument\n", name);
	} else if (opt) {
		eprintf("legacyfs-convert: unknown option '-%c'\n", opt);
	} else {
		/* an unknown or ambiguous long option: its name as typed */
		size_t n = strcspn(word + 2, "=");
		int matches = 0;
		for (const struct option *o = lo; o->name; o++)
			matches += strncmp(o->name, word + 2, n) == 0;
		if (matches > 1 && n > 0) {
			eprintf("legacyfs-convert: option '--%.*s' is ambiguous:", (int)n, word + 2);
			for (const struct option *o = lo; o->name; o++)
				if (strncmp(o->name, word + 2, n) == 0)
					eprintf(" --%s", o->name);
			eprintf("\n");
		} else {
			eprintf("legacyfs-convert: unknown option '%.*s'\n", (int)n + 2, word);
		}
	}
	usage_line();
	return EXIT_USAGE;
}

/* A number option's value: @p arg as a decimal integer from @p min to
 * @p max, else the message "legacyfs-convert: --NAME=ARG: must be MIN to
 * MAX" and -1. */
static int number_opt(const char *name, const char *arg, unsigned long min, unsigned long max,
		      unsigned long *v)
{
	if (parse_uint(arg, max, v) == 0 && *v >= min)
		return 0;
	eprintf("legacyfs-convert: --%s=%s: must be %lu to %lu\n", name, arg, min, max);
	return -1;
}

/* The command line: options, then the subcommand. @p pos has room for argc
 * operand pointers (owned by main). */
static int convert_main(int argc, char **argv, char **pos)
{
	enum { OPT_ROOT = 256, OPT_THUMB_SIZE, OPT_MAX_SIZE, OPT_RESPATH, OPT_TYPE, OPT_ERFVER };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "output", required_argument, NULL, 'o' },
		{ "dest", required_argument, NULL, 'd' },
		{ "view", required_argument, NULL, 'v' },
		{ "size", required_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "respath", required_argument, NULL, OPT_RESPATH },
		{ "thumb-size", required_argument, NULL, OPT_THUMB_SIZE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "erf-version", required_argument, NULL, OPT_ERFVER },
		{ NULL, 0, NULL, 0 },
	};
	/* '-': every operand comes back in order as option 1, so options may
	 * stand before, between or after the operands whatever
	 * POSIXLY_CORRECT says; ':': a missing argument returns ':' and
	 * getopt_long prints nothing (option_error() does) */
	static const char shorts[] = "-:hVo:d:v:s:qj:";
	struct run r = { .max_size = (size_t)256 << 20, .thumb_px = 256,
			 .jobs = ncpu > 1 ? (size_t)ncpu : 1 };
	const char *out = NULL;
	bool size_given = false;
	const char *type_tag = NULL;     /* pack --type */
	lfs_erf_version erf_version = LFS_ERF_V10;
	bool pack_opt = false;           /* --type or --erf-version given */
	g_progress = true;
	int c;
	unsigned long v;
	/* the operands in order: the subcommand, then its arguments */
	int npos = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		switch (c) {
		case 1:
			pos[npos++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("legacyfs-convert %s\n", LFS_VERSION);
			return 0;
		case 'o':
			out = optarg;
			break;
		case 'd':
			r.dest = optarg;
			break;
		case 'v':
			r.view = optarg;
			break;
		case 'q':
			g_progress = false;
			break;
		case 'j':
			if (number_opt("jobs", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			r.jobs = v;
			break;
		case 's':
			/* thumbnailers pass the size they want; render the next
			 * standard size at or above it (128, 256, 512, 1024) */
			if (number_opt("size", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			r.thumb_px = v <= 128 ? 128 : v <= 256 ? 256 : v <= 512 ? 512 : 1024;
			size_given = true;
			break;
		case OPT_ROOT:
			r.root = optarg;
			break;
		case OPT_RESPATH: {
			int e = lfs_texture_set_respath(optarg);
			if (e) {
				eprintf("legacyfs-convert: --respath=%s: %s\n", optarg,
					e == ENOTDIR ? "every entry must be a folder" : strerror(e));
				return EXIT_USAGE;
			}
			break;
		}
		case OPT_THUMB_SIZE:
			if (parse_uint(optarg, 1024, &v) || (v && !lfs_thumb_size_ok((unsigned)v))) {
				eprintf("legacyfs-convert: --thumb-size=%s: must be 128, 256, 512, 1024 or 0\n",
					optarg);
				return EXIT_USAGE;
			}
			g_thumb_size = (unsigned)v;
			break;
		case OPT_MAX_SIZE:
			if (number_opt("max-size", optarg, 1, 1UL << 20, &v))
				return EXIT_USAGE;
			r.max_size = (size_t)v << 20;
			break;
		case OPT_TYPE:
			if (!(type_tag = erf_type_tag(optarg))) {
				eprintf("legacyfs-convert: --type=%s: must be HAK, ERF, MOD, SAV or NWM\n",
					optarg);
				return EXIT_USAGE;
			}
			pack_opt = true;
			break;
		case OPT_ERFVER:
			if (strcasecmp(optarg, "V1.0") == 0)
				erf_version = LFS_ERF_V10;
			else if (strcasecmp(optarg, "E1.0") == 0)
				erf_version = LFS_ERF_E10;
			else {
				eprintf("legacyfs-convert: --erf-version=%s: must be V1.0 or E1.0\n", optarg);
				return EXIT_USAGE;
			}
			pack_opt = true;
			break;
		default: /* '?' or ':' */
			return option_error(longopts, shorts + 2, c, optopt, argv[optind - 1]);
		}
	}
	while (optind < argc) /* the operands after "--" */
		pos[npos++] = argv[optind++];
	if (npos < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = pos[0];
	pos++;
	npos--;
	static const char *const names[] = { "list", "cat", "extract", "compile", "thumbnail" };
	int k = -1;
	for (int i = 0; i < 5; i++)
		if (strcmp(cmd, names[i]) == 0)
			k = i;
	if (strcmp(cmd, "pack") == 0 || strcmp(cmd, "unpack") == 0) {
		bool pack = cmd[0] == 'p';
		if (r.root || r.dest || r.view || out || size_given || (pack_opt && !pack) ||
		    (pack ? npos < 2 : npos != 2)) {
			usage(stderr);
			return EXIT_USAGE;
		}
		return pack ? do_pack(pos[0], pos + 1, (size_t)npos - 1, type_tag, erf_version,
				      r.max_size)
			    : do_unpack(pos[0], pos[1], r.max_size);
	}
	if (pack_opt) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(cmd, "apply") == 0) {
		if (npos != 3 || !out || r.root || r.dest || r.view) {
			usage(stderr);
			return EXIT_USAGE;
		}
		return do_apply(pos[0], pos[1], pos[2], out, r.max_size);
	}
	if (k < 0 || npos < 1 || (size_given && k != CMD_THUMB) || (r.view && k != CMD_CAT) ||
	    (r.dest && (k == CMD_LIST || k == CMD_CAT)) || (out && k != CMD_COMPILE) ||
	    (out && r.dest)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	r.cmd = (enum cmd)k;
	switch (r.cmd) {
	case CMD_LIST: {
		if (npos != 1) {
			usage(stderr);
			return EXIT_USAGE;
		}
		lfs_viewset vs;
		int status = load(pos[0], r.root, r.max_size, g_thumb_size, &vs);
		if (status)
			return status;
		for (size_t i = 0; i < vs.n_views; i++)
			printf("%zu\t%s\n", vs.views[i].size, vs.views[i].path);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			eprintf("stdout: error: %s\n", strerror(errno));
			status = EXIT_ERR;
		}
		lfs_viewset_free(&vs);
		return status;
	}
	case CMD_CAT: {
		/* `cat MODEL VIEWPATH` (the second operand is no file) stays the
		 * one-view form; otherwise every operand is a model */
		struct stat st;
		if (!r.view && npos == 2 && stat(pos[1], &st) != 0)
			return cat_one(pos[0], pos[1], r.root, r.max_size, g_thumb_size);
		break;
	}
	case CMD_EXTRACT:
		if (!r.dest) {
			if (npos != 2) {
				usage(stderr);
				return EXIT_USAGE;
			}
			return extract_one(pos[0], pos[1], r.root, r.max_size);
		}
		break;
	case CMD_COMPILE:
		if (r.root || (!r.dest && (!out || npos != 1))) {
			usage(stderr);
			return EXIT_USAGE;
		}
		if (!r.dest)
			return do_compile(pos[0], out, r.max_size);
		break;
	case CMD_THUMB:
		if (!r.dest) {
			if (npos != 2) {
				eprintf("usage: legacyfs-convert thumbnail [-s SIZE] [--root DIR] INPUT OUTPUT.png\n");
				return EXIT_USAGE;
			}
			return thumb_one(pos[0], r.root, r.thumb_px, pos[1]);
		}
		break;
	}
	return batch(&r, pos, (size_t)npos);
}

int main(int argc, char **argv)
{
	char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	if (!pos) {
		eprintf("legacyfs-convert: error: %s\n", strerror(ENOMEM));
		return EXIT_ERR;
	}
	int rc = convert_main(argc, argv, pos);
	free(pos);
	return rc;
}
