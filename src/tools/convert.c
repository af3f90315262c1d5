/**
 * @file convert.c
 * legacyfs-convert: what the mount shows for one file, without FUSE.
 *
 *   legacyfs-convert list    [--root DIR] MODEL            view paths and sizes
 *   legacyfs-convert cat     [--root DIR] MODEL VIEWPATH   one view to stdout
 *   legacyfs-convert extract [--root DIR] MODEL DESTDIR    every view into DESTDIR
 *
 * It uses the same classification and view building as the mount
 * (src/fs/source.c, src/fs/texture.c), so `extract` reproduces the mount's
 * MODEL folder byte for byte when --root names the mount's SOURCE (texture
 * paths in model.mtl are searched from the model's folder up to the root).
 *
 * Exit status: 0 success; 1 error (unreadable file, decode failure, unknown
 * view); 2 usage; 3 the file is not a model (the mount passes it through).
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

#include "fs/source.h"
#include "fs/texture.h"
#include "lfs_config.h"
#include "views/viewset.h"

enum { EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_NOTMODEL = 3 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: legacyfs-convert list    [--root DIR] [--max-size MIB] MODEL\n"
		"       legacyfs-convert cat     [--root DIR] [--max-size MIB] MODEL VIEWPATH\n"
		"       legacyfs-convert extract [--root DIR] [--max-size MIB] MODEL DESTDIR\n"
		"       legacyfs-convert --help | --version\n\n"
		"Shows what a legacyfs mount shows for MODEL, without mounting:\n"
		"  list     one line per view: size in bytes, a tab, the view path\n"
		"  cat      write the view VIEWPATH (e.g. meshes/Mesh02.obj) to stdout\n"
		"  extract  write every view below DESTDIR (created if missing)\n\n"
		"  --root DIR      the folder a mount would have as SOURCE; textures for\n"
		"                  model.mtl are searched from MODEL's folder up to DIR\n"
		"                  (default: MODEL's own folder)\n"
		"  --max-size MIB  larger files are not decoded (default 256, as the mount)\n\n"
		"Exit status: 0 ok, 1 error (unreadable, does not decode, no such view),\n"
		"2 usage, 3 not a model (a mount shows it as the plain file).\n");
}

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
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc };
	struct stat st;
	lfs_source_kind kind;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_source_load(rootfd, rel, max_size, &vo, &st, &kind, vs, &err);
	lfs_texture_ctx_free(&tc);
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

int main(int argc, char **argv)
{
	const char *root = NULL;
	size_t max_size = (size_t)256 << 20;
	const char *pos[3];
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
		} else if (strcmp(a, "--max-size") == 0 && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);
			if (*end || v == 0 || v > 1UL << 20) {
				fprintf(stderr, "legacyfs-convert: bad --max-size %s\n", argv[i]);
				return EXIT_USAGE;
			}
			max_size = (size_t)v << 20;
		} else if (strcmp(a, "--") == 0) {
			for (i++; i < argc && npos < 3; i++)
				pos[npos++] = argv[i];
			if (i < argc)
				npos = 4;
			break;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "legacyfs-convert: unknown option %s\n", a);
			usage(stderr);
			return EXIT_USAGE;
		} else if (npos < 3) {
			pos[npos++] = a;
		} else {
			npos = 4;
		}
	}
	if (npos < 2 || npos > 3) {
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
