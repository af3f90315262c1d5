/**
 * @file convert.c
 * legacyfs-convert: what the mount shows for one file, without FUSE.
 *
 *   legacyfs-convert list    [--root DIR] MODEL            view paths and sizes
 *   legacyfs-convert cat     [--root DIR] MODEL VIEWPATH   one view to stdout
 *   legacyfs-convert extract [--root DIR] MODEL DESTDIR    every view into DESTDIR
 *   legacyfs-convert apply   MODEL VIEWPATH EDITED -o OUT  edited view -> new model file
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
 * view, bad edit); 2 usage; 3 the file is not a model (the mount passes it
 * through); 4 the view is read-only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/replace.h"
#include "fs/source.h"
#include "fs/texture.h"
#include "lfs_config.h"
#include "views/thumb.h"
#include "views/viewset.h"

enum { EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_NOTMODEL = 3, EXIT_READONLY = 4 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: legacyfs-convert list    [--root DIR] [--max-size MIB] MODEL\n"
		"       legacyfs-convert cat     [--root DIR] [--max-size MIB] MODEL VIEWPATH\n"
		"       legacyfs-convert extract [--root DIR] [--max-size MIB] MODEL DESTDIR\n"
		"       legacyfs-convert apply   [--max-size MIB] MODEL VIEWPATH EDITED -o OUT\n"
		"       legacyfs-convert compile [--max-size MIB] X.mdl -o X.bin.mdl (NWN ASCII -> binary)\n"
		"       legacyfs-convert thumbnail [-s SIZE] [--root DIR] MODEL OUT.png\n"
		"       legacyfs-convert --help | --version\n\n"
		"Shows what a legacyfs mount shows for MODEL, without mounting:\n"
		"  list     one line per view: size in bytes, a tab, the view path\n"
		"  cat      write the view VIEWPATH (e.g. meshes/Mesh02.obj) to stdout\n"
		"  extract  write every view below DESTDIR (created if missing)\n"
		"  apply    apply EDITED (a changed copy of view VIEWPATH) to MODEL and\n"
		"           write the new model file to OUT (may be MODEL; - = stdout),\n"
		"           exactly as saving the view through a mount would\n"
		"  compile  compile an NWN ASCII model into a binary (docs/nwn-compile.md)\n"
		"  thumbnail render MODEL's thumbnail PNG (SIZE 128/256/512/1024; the\n"
		"           freedesktop thumbnailer in contrib/ calls this)\n\n"
		"  --thumb-size N  thumbnail.png edge as the mount's -o thumb_size (default 256, 0 = none)\n"
		"  --root DIR      the folder a mount would have as SOURCE; textures for\n"
		"                  model.mtl are searched from MODEL's folder up to DIR\n"
		"                  (default: MODEL's own folder)\n"
		"  --max-size MIB  larger files are not decoded (default 256, as the mount)\n\n"
		"Exit status: 0 ok, 1 error (unreadable, does not decode, no such view,\n"
		"bad edit: message as file:line:col), 2 usage, 3 not a model (a mount\n"
		"shows it as the plain file), 4 read-only view.\n");
}

/* --thumb-size N: as the mount's -o thumb_size (0 = no thumbnail.png). */
static unsigned g_thumb_size = 256;

/* Build MODEL's views the way the mount does. Returns an exit status. */
static int load(const char *model, const char *root, size_t max_size, lfs_viewset *vs)
{
	char *mreal = realpath(model, NULL);
	if (!mreal) {
		fprintf(stderr, "legacyfs-convert: %s: %s\n", model, strerror(errno));
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
		fprintf(stderr, "legacyfs-convert: %s: %s\n", root ? root : model, strerror(errno));
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
		fprintf(stderr, "legacyfs-convert: %s is not inside --root %s\n", model, rreal);
		free(mreal);
		free(rreal);
		return EXIT_USAGE;
	}
	int rootfd = open(rreal, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "legacyfs-convert: %s: %s\n", rreal, strerror(errno));
		free(mreal);
		free(rreal);
		return EXIT_ERR;
	}
	lfs_texture_ctx tc;
	lfs_texture_ctx_init(&tc, rootfd, rel);
	/* thumbnail.png exactly as the mount renders it (URI of the real path,
	 * source mtime, g_thumb_size as the mount's -o thumb_size) */
	struct stat pre;
	char *uri = g_thumb_size ? lfs_thumb_file_uri(mreal) : NULL;
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc,
			     .texture_read = lfs_texture_read, .thumb_size = g_thumb_size,
			     .thumb_uri = uri,
			     .thumb_mtime = stat(mreal, &pre) == 0 ? (int64_t)pre.st_mtime : 0 };
	struct stat st;
	lfs_source_kind kind;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_source_load(rootfd, rel, max_size, &vo, &st, &kind, vs, &err);
	lfs_texture_ctx_free(&tc);
	free(uri);
	close(rootfd);
	int status = 0;
	if (r != LFS_OK) {
		fprintf(stderr, "legacyfs-convert: %s\n", err.msg);
		status = EXIT_ERR;
	} else if (kind == LFS_SOURCE_FAILED) {
		fprintf(stderr, "legacyfs-convert: %s: looks like a model but does not decode "
			"(a mount shows the original file): %s\n", model, err.msg);
		status = EXIT_ERR;
	} else if (kind == LFS_SOURCE_PLAIN) {
		fprintf(stderr, "legacyfs-convert: %s: not a model (a mount shows it unchanged)\n", model);
		status = EXIT_NOTMODEL;
	}
	free(mreal);
	free(rreal);
	return status;
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
		fprintf(stderr, "legacyfs-convert: %s: %s\n", dest, strerror(errno));
		return EXIT_ERR;
	}
	int destfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (destfd < 0) {
		fprintf(stderr, "legacyfs-convert: %s: %s\n", dest, strerror(errno));
		return EXIT_ERR;
	}
	int status = 0;
	for (size_t i = 0; i < vs->n_views && !status; i++) {
		const lfs_view *v = &vs->views[i];
		/* View paths come from names.c: no "..", no empty component; check anyway. */
		if (v->path[0] == '/' || strstr(v->path, "../") || strcmp(v->path, "..") == 0) {
			fprintf(stderr, "legacyfs-convert: refusing view path %s\n", v->path);
			status = EXIT_ERR;
			break;
		}
		int fd = -1;
		if (make_parents(destfd, v->path) == 0)
			fd = openat(destfd, v->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 || write_all(fd, v->data, v->size) != 0) {
			fprintf(stderr, "legacyfs-convert: %s/%s: %s\n", dest, v->path, strerror(errno));
			status = EXIT_ERR;
		}
		if (fd >= 0 && close(fd) != 0 && !status) {
			fprintf(stderr, "legacyfs-convert: %s/%s: %s\n", dest, v->path, strerror(errno));
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
		fprintf(stderr, "legacyfs-convert: %s: %s\n", path, strerror(r));
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
		fprintf(stderr, "legacyfs-convert: stdout: %s\n", strerror(errno));
		return EXIT_ERR;
	}
	struct stat ost;
	if (stat(out, &ost) != 0)
		ost = *like;
	char what[PATH_MAX + 64] = "";
	int r = lfs_replace_file(AT_FDCWD, out, res, rn, &ost, NULL, NULL, what, sizeof(what));
	if (r) {
		fprintf(stderr, "legacyfs-convert: %s: %s: %s\n", out, what, strerror(r));
		return EXIT_ERR;
	}
	return 0;
}

/* The warnings of an apply or compile, to stderr in gcc's form (they come
 * before an error, if any, as a compiler prints them). */
static void print_warnings(const lfs_warnings *w)
{
	if (w->len)
		fwrite(w->text, 1, w->len, stderr);
	size_t shown = 0;
	for (size_t i = 0; i < w->len; i++)
		shown += w->text[i] == '\n';
	if (w->count > shown)
		fprintf(stderr, "legacyfs-convert: %u more warnings not shown\n", w->count - (unsigned)shown);
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
		fprintf(stderr, "legacyfs-convert: %s: not a model (a mount shows it unchanged)\n", model);
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
	lfs_err e = lfs_views_build(base, orig, n, NULL, &vs, &err);
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
			fprintf(stderr, "%s\n", err.msg);
		else
			fprintf(stderr, "legacyfs-convert: %s: %s\n", model, err.msg);
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
		fprintf(stderr, "legacyfs-convert: %s: no format compiles this file\n", src);
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
			fprintf(stderr, "%s\n", err.msg);
		else
			fprintf(stderr, "legacyfs-convert: %s: %s\n", src, err.msg);
		return EXIT_ERR;
	}
	int status = write_result(out, res, rn, &sst);
	free(res);
	return status;
}

/* thumbnail [-s N] [--root DIR] INPUT OUTPUT: render INPUT's thumbnail as a
 * PNG (freedesktop thumbnailer entry contrib/legacyfs.thumbnailer). Textures
 * are searched from INPUT's folder up to --root (default: INPUT's folder).
 * Self-contained: parses its own arguments (main() hands them over). Exit
 * status: 0 ok, 1 error or no drawable triangles, 2 usage, 3 not a model. */
static int do_thumbnail(int argc, char **argv)
{
	unsigned size = 256;
	const char *root = NULL, *pos[2];
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((strcmp(a, "-s") == 0 || strcmp(a, "--size") == 0) && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);
			/* thumbnailers pass the size they want; render the next
			 * standard size at or above it (128, 256, 512, 1024) */
			if (*end || v == 0 || v > 1024) {
				fprintf(stderr, "legacyfs-convert: thumbnail size %s: 1 to 1024\n", argv[i]);
				return EXIT_USAGE;
			}
			size = v <= 128 ? 128 : v <= 256 ? 256 : v <= 512 ? 512 : 1024;
		} else if (strcmp(a, "--root") == 0 && i + 1 < argc) {
			root = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "legacyfs-convert: thumbnail: unknown option %s\n", a);
			return EXIT_USAGE;
		} else if (npos < 2) {
			pos[npos++] = a;
		} else {
			npos = 3;
		}
	}
	if (npos != 2) {
		fprintf(stderr, "usage: legacyfs-convert thumbnail [-s SIZE] [--root DIR] INPUT OUTPUT.png\n");
		return EXIT_USAGE;
	}
	char *mreal = realpath(pos[0], NULL);
	char *rreal = root ? realpath(root, NULL) : (mreal ? strdup(mreal) : NULL);
	if (!mreal || !rreal) {
		fprintf(stderr, "legacyfs-convert: %s: %s\n", mreal ? root : pos[0], strerror(errno));
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
		fprintf(stderr, "legacyfs-convert: %s is not inside --root %s\n", pos[0], rreal);
		status = EXIT_USAGE;
		goto out;
	}
	f = fopen(mreal, "rb");
	if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > ((uint64_t)256 << 20)) {
		fprintf(stderr, "legacyfs-convert: %s: %s\n", pos[0],
			f && S_ISREG(st.st_mode) ? "too large" : strerror(errno ? errno : EINVAL));
		goto out;
	}
	n = (size_t)st.st_size;
	data = malloc(n ? n : 1);
	if (!data || fread(data, 1, n, f) != n) {
		fprintf(stderr, "legacyfs-convert: %s: read failed\n", pos[0]);
		goto out;
	}
	uri = lfs_thumb_file_uri(mreal); /* Thumb::URI */
	if (!uri)
		goto out;
	rootfd = open(rreal, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "legacyfs-convert: %s: %s\n", rreal, strerror(errno));
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
		fprintf(stderr, "legacyfs-convert: %s: not a model\n", pos[0]);
		status = EXIT_NOTMODEL;
		goto out;
	}
	if (e != LFS_OK) {
		fprintf(stderr, "legacyfs-convert: %s: %s\n", pos[0], err.msg);
		goto out;
	}
	if (strcmp(pos[1], "-") == 0) {
		status = write_all(STDOUT_FILENO, (const char *)png, pngn) == 0 ? 0 : EXIT_ERR;
	} else {
		FILE *o = fopen(pos[1], "wb");
		bool ok = o && fwrite(png, 1, pngn, o) == pngn;
		if (o && fclose(o) != 0)
			ok = false;
		status = ok ? 0 : EXIT_ERR;
	}
	if (status)
		fprintf(stderr, "legacyfs-convert: %s: %s\n", pos[1], strerror(errno));
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

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "thumbnail") == 0)
		return do_thumbnail(argc - 1, argv + 1);
	const char *root = NULL;
	const char *out = NULL;
	size_t max_size = (size_t)256 << 20;
	const char *pos[4];
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
			printf("legacyfs-convert %s\n", LFS_VERSION);
			return 0;
		}
		if (strcmp(a, "--root") == 0 && i + 1 < argc) {
			root = argv[++i];
		} else if (strncmp(a, "--root=", 7) == 0) {
			root = a + 7;
		} else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(a, "--thumb-size") == 0 && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);
			if (*end || (v && !lfs_thumb_size_ok((unsigned)v))) {
				fprintf(stderr, "legacyfs-convert: bad --thumb-size %s (128, 256, 512, 1024 or 0)\n",
					argv[i]);
				return EXIT_USAGE;
			}
			g_thumb_size = (unsigned)v;
		} else if (strcmp(a, "--max-size") == 0 && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);
			if (*end || v == 0 || v > 1UL << 20) {
				fprintf(stderr, "legacyfs-convert: bad --max-size %s\n", argv[i]);
				return EXIT_USAGE;
			}
			max_size = (size_t)v << 20;
		} else if (strcmp(a, "--") == 0) {
			for (i++; i < argc && npos < 4; i++)
				pos[npos++] = argv[i];
			if (i < argc)
				npos = 5;
			break;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "legacyfs-convert: unknown option %s\n", a);
			usage(stderr);
			return EXIT_USAGE;
		} else if (npos < 4) {
			pos[npos++] = a;
		} else {
			npos = 5;
		}
	}
	if (npos == 2 && strcmp(pos[0], "compile") == 0 && out && !root)
		return do_compile(pos[1], out, max_size);
	if (npos >= 1 && strcmp(pos[0], "apply") == 0) {
		if (npos != 4 || !out || root) {
			usage(stderr);
			return EXIT_USAGE;
		}
		return do_apply(pos[1], pos[2], pos[3], out, max_size);
	}
	if (npos < 2 || npos > 3 || out) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = pos[0];
	bool is_list = strcmp(cmd, "list") == 0;
	if (!(is_list && npos == 2) && !((strcmp(cmd, "cat") == 0 || strcmp(cmd, "extract") == 0) && npos == 3)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	lfs_viewset vs;
	int status = load(pos[1], root, max_size, &vs);
	if (status)
		return status;
	if (is_list) {
		for (size_t i = 0; i < vs.n_views; i++)
			printf("%zu\t%s\n", vs.views[i].size, vs.views[i].path);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "legacyfs-convert: stdout: %s\n", strerror(errno));
			status = EXIT_ERR;
		}
	} else if (strcmp(cmd, "cat") == 0) {
		const lfs_view *v = lfs_viewset_find(&vs, pos[2]);
		if (!v) {
			fprintf(stderr, "legacyfs-convert: %s: no view %s (see `legacyfs-convert list`)\n",
				pos[1], pos[2]);
			status = EXIT_ERR;
		} else if (write_all(STDOUT_FILENO, v->data, v->size) != 0) {
			fprintf(stderr, "legacyfs-convert: stdout: %s\n", strerror(errno));
			status = EXIT_ERR;
		}
	} else {
		status = do_extract(&vs, pos[2]);
	}
	lfs_viewset_free(&vs);
	return status;
}
