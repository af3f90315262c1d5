/**
 * @file convert_pack.c
 * `legacyfs-convert pack` and `unpack` (docs/mount.md "Archives: pack and
 * unpack"): a new ERF-family archive from files, and an archive's resources
 * written out as files. Split from convert.c, which parses the command line
 * and runs the other commands.
 */
#define _GNU_SOURCE
#include "convert.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/restype.h"
#include "fs/replace.h"
#include "registry/names.h"

/* The FileType tag ("HAK " …) for --type or OUT's extension @p s (case
 * ignored, a leading '.' skipped); NULL when it is none of the ERF family. */
const char *erf_type_tag(const char *s)
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
int do_pack(const char *out, char **files, size_t nfiles, const char *type_tag,
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
int do_unpack(const char *arch, const char *dest, size_t max_size)
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
