/**
 * @file main.c
 * `legacyfs [options] SOURCE MOUNTPOINT`: options, session setup, the loop.
 *
 * Option handling follows libfuse's passthrough_ll: our own -o options go
 * through a fuse_opt table (lfs_opts), then fuse_parse_cmdline() takes the
 * standard ones (-f, -d, -s, -h, -V, -o clone_fd, -o max_threads=...), then
 * fuse_parse_conn_info_opts() the connection ones (-o max_read=,
 * -o readdirplus=...), and fuse_session_new() the mount options. Every
 * option is documented in docs/mount.md and in --help.
 */
#define _GNU_SOURCE
#include "registry/format.h"
#include "fs/texture.h"
#include "fuse_ll.h"
#include "render/thumb.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "lfs_config.h"

/*
 * Every numeric option is taken as text and checked by num_opts[] below:
 * fuse_opt's %u takes "-5" as 4294967291 and %lf takes "1e999" as inf.
 */
struct lfs_options {
	char *timeout;
	char *cache_mb;
	char *cache_entries;
	char *max_model_mb;
	char *list_classify;   /* candidates a listing classifies by header, at most */
	char *model_memory_mb;
	int nowatch;
	int mt;
	int kernel_open;
	char *follow_cpu_ms;   /* loop/threads: re-read the requester's CPU this often; 0 = off */
	char *slice_us;        /* loop/threads: EEVDF slice of request threads; 0 = kernel's */
	char *poll_us;         /* loop: a thread polls /dev/fuse this long after a request; 0 = off */
	int ro; /* "-o ro" seen (also passed on to the kernel) */
	int ascii_views;          /* -o ascii_views: ASCII NWN .mdl shown as model folders */
	char *unlink_grace;
	char *scratch_ttl;
	char *edit_mb;
	char *thumb_size;
	char *thumb_cache;        /* -o thumb_cache=DIR ("off" = none) */
	int nothumb_cache;
	char *thumb_cache_mb;
	char *respath;            /* -o respath=DIR[:DIR...]: texture folders after SOURCE */
	char *uid;                /* -o uid=N: shown owner of everything */
	char *gid;                /* -o gid=N: shown group of everything */
	char *umask;              /* -o umask=OCTAL: mode bits cleared in what is shown */
	char *max_threads;        /* libfuse's -o max_threads=N, checked only */
	char *max_idle_threads;   /* libfuse's -o max_idle_threads=N (-1 = no bound), checked only */
	char *source;
	const char *mountpoint;   /* the second argument (borrowed from argv), for our checks */
	bool help;                /* -h/--help/-V/--version seen: no checks of the others */
};

#define LFS_OPT(t, p, v) { t, offsetof(struct lfs_options, p), v }

static const struct fuse_opt lfs_opts[] = {
	LFS_OPT("timeout=%s", timeout, 0),
	LFS_OPT("cache_size=%s", cache_mb, 0),
	LFS_OPT("cache_entries=%s", cache_entries, 0),
	LFS_OPT("max_model_size=%s", max_model_mb, 0),
	LFS_OPT("list_classify=%s", list_classify, 0),
	LFS_OPT("model_memory=%s", model_memory_mb, 0),
	LFS_OPT("nowatch", nowatch, 1),
	LFS_OPT("watch", nowatch, 0),
	LFS_OPT("mt", mt, 1),
	LFS_OPT("st", mt, 0),
	LFS_OPT("kernel_open", kernel_open, 1),
	LFS_OPT("zero_open", kernel_open, 0),
	LFS_OPT("follow_cpu=%s", follow_cpu_ms, 0),
	LFS_OPT("request_slice=%s", slice_us, 0),
	LFS_OPT("poll_us=%s", poll_us, 0),
	LFS_OPT("unlink_grace=%s", unlink_grace, 0),
	LFS_OPT("scratch_ttl=%s", scratch_ttl, 0),
	LFS_OPT("edit_size=%s", edit_mb, 0),
	LFS_OPT("thumb_size=%s", thumb_size, 0),
	LFS_OPT("thumb_cache=%s", thumb_cache, 0),
	LFS_OPT("nothumb_cache", nothumb_cache, 1),
	LFS_OPT("thumb_cache_size=%s", thumb_cache_mb, 0),
	LFS_OPT("respath=%s", respath, 0),
	LFS_OPT("uid=%s", uid, 0),
	LFS_OPT("gid=%s", gid, 0),
	LFS_OPT("umask=%s", umask, 0),
	LFS_OPT("ro", ro, 1),
	LFS_OPT("ascii_views", ascii_views, 1),
	FUSE_OPT_KEY("ro", FUSE_OPT_KEY_KEEP),
	/* libfuse's own (fuse_parse_cmdline reads them with %u): checked here too */
	LFS_OPT("max_threads=%s", max_threads, 0),
	FUSE_OPT_KEY("max_threads=", FUSE_OPT_KEY_KEEP),
	LFS_OPT("max_idle_threads=%s", max_idle_threads, 0),
	FUSE_OPT_KEY("max_idle_threads=", FUSE_OPT_KEY_KEEP),
	FUSE_OPT_END
};

/* The largest size option in MiB: 1 TiB, or what a size_t holds in bytes. */
#define MIB_MAX ((unsigned long long)(SIZE_MAX >> 20) < 1048576ULL ? (unsigned long long)(SIZE_MAX >> 20) : 1048576ULL)

/*
 * Strict numbers: decimal digits only for integers (no sign, no space, no
 * "0x"), for reals digits with at most one '.' and an optional exponent
 * (strtod's own syntax otherwise, but never inf/nan/hex); both must lie in
 * [min, max]. Octal for umask. A refused value prints
 * "legacyfs: -o NAME=VALUE: must be ..." and returns false.
 */
static bool bad_opt(const char *name, const char *v, const char *rule)
{
	fprintf(stderr, "legacyfs: -o %s=%s: must be %s\n", name, v, rule);
	return false;
}

static bool opt_uint(const char *name, const char *v, unsigned long long min,
		     unsigned long long max, const char *rule, unsigned long long *out)
{
	if (!v)
		return true; /* not given: *out keeps its default */
	if (!*v || strspn(v, "0123456789") != strlen(v))
		return bad_opt(name, v, rule);
	errno = 0;
	unsigned long long x = strtoull(v, NULL, 10);
	if (errno || x < min || x > max)
		return bad_opt(name, v, rule);
	*out = x;
	return true;
}

/* A size in MiB: digits, then nothing, "M" or "MiB" (MiB) or "G"/"GiB" (x 1024). */
static bool opt_mib(const char *name, const char *v, unsigned long long min, const char *rule,
		    unsigned long long *out)
{
	if (!v)
		return true;
	size_t d = strspn(v, "0123456789");
	const char *u = v + d;
	unsigned long long mul = 1;
	if (!strcmp(u, "G") || !strcmp(u, "GiB"))
		mul = 1024;
	else if (*u && strcmp(u, "M") && strcmp(u, "MiB"))
		return bad_opt(name, v, rule);
	if (!d || d > 12)
		return bad_opt(name, v, rule);
	unsigned long long x = strtoull(v, NULL, 10);
	if (x > MIB_MAX / mul || x * mul < min || x * mul > MIB_MAX)
		return bad_opt(name, v, rule);
	*out = x * mul;
	return true;
}

static bool opt_real(const char *name, const char *v, double min, double max,
		     const char *rule, double *out)
{
	if (!v)
		return true;
	if (!*v || strspn(v, "0123456789.eE+-") != strlen(v) || !strchr("0123456789.", v[0]))
		return bad_opt(name, v, rule);
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || *end || !isfinite(x) || x < min || x > max)
		return bad_opt(name, v, rule);
	*out = x;
	return true;
}

static bool opt_octal(const char *name, const char *v, unsigned max, const char *rule,
		      unsigned *out)
{
	if (!v)
		return true;
	if (!*v || strlen(v) > 4 || strspn(v, "01234567") != strlen(v))
		return bad_opt(name, v, rule);
	unsigned long x = strtoul(v, NULL, 8);
	if (x > max)
		return bad_opt(name, v, rule);
	*out = (unsigned)x;
	return true;
}

/* The checked values of the numeric options (defaults filled in). */
struct lfs_values {
	double timeout; /* < 0: not given */
	unsigned long long cache_mb, cache_entries, max_model_mb, list_classify, model_memory_mb;
	double follow_cpu_ms;
	unsigned long long slice_us, poll_us;
	double unlink_grace, scratch_ttl;
	unsigned long long edit_mb, thumb_size, thumb_cache_mb;
	bool has_uid, has_gid;
	unsigned long long uid, gid;
	unsigned umask;
};

/* Check every numeric option; false after the first refused one (message printed). */
static bool check_values(const struct lfs_options *o, struct lfs_values *v)
{
	char mib[128], mib0[128];
	snprintf(mib, sizeof(mib), "a size in MiB from 1 to %llu (suffix M or G allowed)", MIB_MAX);
	snprintf(mib0, sizeof(mib0), "a size in MiB from 0 to %llu (suffix M or G allowed)", MIB_MAX);
	if (!opt_real("timeout", o->timeout, 0, 1e9, "a number of seconds >= 0 (at most 1000000000)",
		      &v->timeout) ||
	    !opt_mib("cache_size", o->cache_mb, 1, mib, &v->cache_mb) ||
	    !opt_uint("cache_entries", o->cache_entries, 1, UINT_MAX,
		      "a number of files from 1 to 4294967295", &v->cache_entries) ||
	    !opt_mib("max_model_size", o->max_model_mb, 1, mib, &v->max_model_mb) ||
	    !opt_uint("list_classify", o->list_classify, 0, INT_MAX,
		      "a number of files from 0 to 2147483647", &v->list_classify) ||
	    !opt_mib("model_memory", o->model_memory_mb, 0, mib0, &v->model_memory_mb) ||
	    !opt_real("follow_cpu", o->follow_cpu_ms, 0, 60000,
		      "a number of milliseconds from 0 (off) to 60000", &v->follow_cpu_ms) ||
	    !opt_uint("request_slice", o->slice_us, 0, 100000,
		      "a number of microseconds from 0 (the kernel's) to 100000", &v->slice_us) ||
	    !opt_uint("poll_us", o->poll_us, 0, 1000000,
		      "a number of microseconds from 0 (off) to 1000000", &v->poll_us) ||
	    !opt_real("unlink_grace", o->unlink_grace, 0, 86400,
		      "a number of seconds from 0 to 86400", &v->unlink_grace) ||
	    !opt_real("scratch_ttl", o->scratch_ttl, 0, 1e9,
		      "a number of seconds >= 0 (0 = never; at most 1000000000)", &v->scratch_ttl) ||
	    !opt_mib("edit_size", o->edit_mb, 1, mib, &v->edit_mb) ||
	    !opt_uint("thumb_size", o->thumb_size, 0, 1024, "128, 256, 512, 1024 or 0 (none)",
		      &v->thumb_size) ||
	    !opt_mib("thumb_cache_size", o->thumb_cache_mb, 0, mib0, &v->thumb_cache_mb) ||
	    !opt_uint("uid", o->uid, 0, (uid_t)-2, "a numeric user id from 0 to 4294967294",
		      &v->uid) ||
	    !opt_uint("gid", o->gid, 0, (gid_t)-2, "a numeric group id from 0 to 4294967294",
		      &v->gid) ||
	    !opt_octal("umask", o->umask, 0777, "an octal mode from 000 to 777", &v->umask))
		return false;
	unsigned long long threads = 0;
	if (!opt_uint("max_threads", o->max_threads, 1, 100000,
		      "a number of threads from 1 to 100000", &threads) ||
	    (o->max_idle_threads && strcmp(o->max_idle_threads, "-1") &&
	     !opt_uint("max_idle_threads", o->max_idle_threads, 0, 100000,
		       "-1 (no bound) or a number of threads from 0 to 100000", &threads)))
		return false;
	if (v->thumb_size && !lfs_thumb_size_ok((unsigned)v->thumb_size))
		return bad_opt("thumb_size", o->thumb_size, "128, 256, 512, 1024 or 0 (none)");
	v->has_uid = o->uid != NULL;
	v->has_gid = o->gid != NULL;
	return true;
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)outargs;
	struct lfs_options *o = data;
	if (key == FUSE_OPT_KEY_NONOPT && o->source && !o->mountpoint)
		o->mountpoint = arg; /* kept for fuse_parse_cmdline; checked first by us */
	if (key == FUSE_OPT_KEY_NONOPT && !o->source) {
		o->source = strdup(arg);
		return 0; /* consumed: fuse_parse_cmdline sees only MOUNTPOINT */
	}
	return 1;
}

static void usage(const char *prog)
{
	printf("usage: %s [options] SOURCE MOUNTPOINT\n\n"
	       "Mounts SOURCE at MOUNTPOINT. Every binary model X.mdl/.nod/.nad/.nil/.sod\n"
	       "in SOURCE appears as a folder of the same name (X.mdl/, X.nod/, ...)\n"
	       "holding generated text views; saving a view re-encodes the model (NIL\n"
	       "and some views are read-only); every other file passes through\n"
	       "read-write. Files that look like models but do not decode pass\n"
	       "through and are listed in MOUNTPOINT/.legacyfs/errors.\n"
	       "See legacyfs(1) and docs/mount.md. Add -o ro for a read-only mount.\n\n", prog);
	printf("legacyfs options:\n"
	       "    -o timeout=SECONDS     kernel cache time of names and attributes\n"
	       "                           (default 86400 with the watcher, 1 without and\n"
	       "                           below folders on network or FUSE file systems)\n"
	       "    -o nowatch / -o watch  do not watch / watch SOURCE with inotify (default;\n"
	       "                           -o watch also trusts it on network file systems)\n"
	       "    -o cache_size=MIB      bound of the in-memory view cache (default 256)\n"
	       "    -o cache_entries=N     bound of cached files (default 200000)\n"
	       "    -o max_model_size=MIB  never decode larger files (default 256)\n"
	       "    -o list_classify=N     a folder listing reads the headers of at most N\n"
	       "                           candidate model files (default 256); the others\n"
	       "                           show their type when looked up (0 = none)\n"
	       "    -o model_memory=MIB    memory the views of one model may take (default 256;\n"
	       "                           0 = no bound); a model over it shows only README.txt\n"
	       "    -o mt / -o st          multi-threaded loop (default; see -o max_threads,\n"
	       "                           -o clone_fd) / single thread (also -s)\n"
	       "    -o kernel_open / -o zero_open  answer OPEN/OPENDIR / zero-message open\n"
	       "                           (default: zero_open)\n"
	       "    -o follow_cpu=MS       serve each request on the CPU of the process that\n"
	       "                           sent it, re-reading that CPU every MS ms (default 0 =\n"
	       "                           off, the scheduler places the threads; 5 helps on a\n"
	       "                           busy machine, hurts on an idle one)\n"
	       "    -o poll_us=US          after a request, one thread polls /dev/fuse US us\n"
	       "                           before it sleeps, yielding to other work (default\n"
	       "                           200; 0 = libfuse's loop; not with -o st, clone_fd)\n"
	       "    -o request_slice=US    EEVDF time slice of request threads, at most 100000\n"
	       "                           (Linux 6.12+; default 0 = the kernel's)\n"
	       "    -o unlink_grace=SEC    a deleted view stays absent this long (default 1)\n"
	       "    -o scratch_ttl=SEC     an exporter's scratch *.mtl in a model folder, unchanged\n"
	       "                           this long, is dropped (default 300; 0 = never)\n"
	       "    -o edit_size=MIB       bound of in-memory edits and scratch files (default 512);\n"
	       "                           a saved text is at most a sixteenth of it (EFBIG beyond)\n"
	       "    -o thumb_size=N        thumbnail.png edge: 128, 256 (default), 512, 1024; 0 = none\n"
	       "    -o thumb_cache=DIR     disk cache of thumbnails, shared by mounts (default\n"
	       "                           $XDG_CACHE_HOME/legacyfs, else ~/.cache/legacyfs)\n"
	       "    -o nothumb_cache       no disk cache of thumbnails (also thumb_cache=off)\n"
	       "    -o thumb_cache_size=MIB  bound of that folder (default 64; 0 = no bound)\n"
	       "    -o respath=DIR[:DIR...]  folders outside SOURCE where textures are looked for\n"
	       "                           after SOURCE (model.mtl names them by absolute path)\n"
	       "    -o uid=N               show every file and folder as owned by user id N\n"
	       "                           (SOURCE keeps its real owners; chown to another is EPERM)\n"
	       "    -o gid=N               show every file and folder as owned by group id N\n"
	       "    -o umask=OCTAL         clear these mode bits in what is shown (022: others\n"
	       "                           read only; 077: owner only); the kernel checks access\n"
	       "                           against the shown owner and mode (default_permissions)\n"
	       "    -o ro                  read-only mount\n"
	       "    -o ascii_views         show an ASCII NWN X.mdl as a folder X.mdl/ too: its\n"
	       "                           model.mdl is the file (saved as text, must compile),\n"
	       "                           meshes/, anims/, thumbnail.png read-only\n"
	       "Sizes in MiB take an optional M or G suffix (2M, 1G).\n\n");
}

/*
 * "-odefault_permissions,fsname=SOURCE": kernel permission checks on the
 * modes we report, and SOURCE in /proc/mounts (',' and '\\' escaped for
 * fuse_opt). The mount is read-write; "-o ro" from the user still works.
 */
static char *mount_opts(const char *source)
{
	static const char head[] = "-odefault_permissions,fsname=";
	size_t n = strlen(source);
	char *s = malloc(sizeof(head) + 2 * n);
	if (!s)
		return NULL;
	char *p = stpcpy(s, head);
	for (size_t i = 0; i < n; i++) {
		if (source[i] == ',' || source[i] == '\\')
			*p++ = '\\';
		*p++ = source[i];
	}
	*p = '\0';
	return s;
}

/*
 * The folder of the thumbnail disk cache (malloc'd, absolute), or NULL for
 * none: -o thumb_cache=DIR (relative to the current folder), "off" or
 * -o nothumb_cache, else $XDG_CACHE_HOME/legacyfs (an absolute
 * XDG_CACHE_HOME, XDG Base Directory Specification), else
 * $HOME/.cache/legacyfs.
 */
static char *thumb_cache_dir(const struct lfs_options *o)
{
	char *d = NULL;
	if (o->nothumb_cache || (o->thumb_cache && (!*o->thumb_cache || !strcmp(o->thumb_cache, "off"))))
		return NULL;
	if (o->thumb_cache) {
		char cwd[PATH_MAX];
		if (o->thumb_cache[0] == '/')
			return strdup(o->thumb_cache);
		if (!getcwd(cwd, sizeof(cwd)) || asprintf(&d, "%s/%s", cwd, o->thumb_cache) < 0)
			return NULL;
		return d;
	}
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (x && x[0] == '/') {
		if (asprintf(&d, "%s/legacyfs", x) < 0)
			return NULL;
	} else if (h && h[0] == '/') {
		if (asprintf(&d, "%s/.cache/legacyfs", h) < 0)
			return NULL;
	}
	return d;
}

/* Undo the octal escapes (\\040 for ' ', ...) of a /proc/self/mountinfo field, in place. */
static void mountinfo_unescape(char *f)
{
	char *w = f;
	for (char *r = f; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/*
 * The SOURCE (malloc'd) of the legacyfs mount on top of @p path (a realpath)
 * in /proc/self/mountinfo (proc(5): field 5 the mount point, after " - "
 * the type "fuse.legacyfs" and the source), or NULL when the topmost mount
 * there is not ours, or there is none. The latest line for a mount point is
 * the topmost mount.
 */
static char *legacyfs_mount_at(const char *path)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	char *line = NULL, *src = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		char *sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		char *save = NULL, *mp = NULL, *t = strtok_r(line, " ", &save);
		for (int i = 1; t && i < 5; i++) /* field 5: mount point */
			t = strtok_r(NULL, " ", &save);
		mp = t;
		if (!mp)
			continue;
		mountinfo_unescape(mp);
		if (strcmp(mp, path))
			continue;
		char *save2 = NULL, *type = strtok_r(sep + 3, " ", &save2);
		char *from = type ? strtok_r(NULL, " ", &save2) : NULL;
		free(src);
		src = NULL;
		if (type && !strcmp(type, "fuse.legacyfs")) {
			if (from)
				mountinfo_unescape(from);
			src = strdup(from ? from : "?");
		}
	}
	free(line);
	fclose(f);
	return src;
}

static void log_to_fuse(int level, const char *msg)
{
	fuse_log((enum fuse_log_level)level, "legacyfs: %s\n", msg);
}

__attribute__((format(printf, 2, 0)))
static void log_to_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
	vsyslog((int)level, fmt, ap);
}

static void usage_hint(const char *prog)
{
	fprintf(stderr, "usage: %s [options] SOURCE MOUNTPOINT\n"
			"see legacyfs --help or man legacyfs\n", prog);
}

/* A folder argument: exists and is a folder, else a message naming it. */
static bool folder_ok(const char *what, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "legacyfs: %s %s: %s%s\n", what, path, strerror(errno),
			errno == ENOTCONN ? " (a dead mount: fusermount3 -u it first)" : "");
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "legacyfs: %s %s: %s\n", what, path, strerror(ENOTDIR));
		return false;
	}
	return true;
}

/*
 * Whether MOUNTPOINT may take a mount of SOURCE (else false after a message).
 * A mountpoint inside SOURCE would make legacyfs stat its own mount while
 * answering a request for it: a deadlock. Refuse it (SOURCE itself too).
 * A mountpoint that already is a legacyfs mount would stack a second one
 * that needs a second unmount: refuse it too (other FUSE mounts, e.g.
 * sshfs, may be covered, as sshfs and bindfs allow; docs/mount.md).
 */
static bool mountpoint_ok(const char *source, const char *mountpoint)
{
	char *rs = realpath(source, NULL), *rm = realpath(mountpoint, NULL);
	if (!rs || !rm) {
		fprintf(stderr, "legacyfs: %s: %s\n", rs ? mountpoint : source, strerror(errno));
		free(rs);
		free(rm);
		return false;
	}
	size_t l = strlen(rs);
	bool same = !strcmp(rm, rs);
	bool inside = strncmp(rm, rs, l) == 0 && (rm[l] == '/' || rm[l] == '\0' || l == 1);
	char *ours = inside ? NULL : legacyfs_mount_at(rm);
	free(rs);
	free(rm);
	if (inside) {
		fprintf(stderr, same ? "legacyfs: MOUNTPOINT %s must not be SOURCE %s itself\n" :
			"legacyfs: MOUNTPOINT %s must not be inside SOURCE %s\n", mountpoint, source);
		return false;
	}
	if (ours) {
		fprintf(stderr, "legacyfs: %s is already a legacyfs mount of %s (fusermount3 -u %s first)\n",
			mountpoint, ours, mountpoint);
		free(ours);
		return false;
	}
	return true;
}

/* --help (the options, then libfuse's) or --version (ours and libfuse's)
 * on stdout. */
static void help_or_version(const char *prog, bool help)
{
	if (help) {
		usage(prog);
		printf("FUSE options:\n");
		fuse_cmdline_help();
		fuse_lowlevel_help();
		return;
	}
	printf("legacyfs %s\n", LFS_VERSION);
	printf("FUSE library version %s\n", fuse_pkgversion());
	fuse_lowlevel_version();
}

/* The request layer's options from the mount options. */
static void ll_opts(lfs_ll *ll, const struct lfs_options *o, const struct lfs_values *v)
{
	ll->zero_open = !o->kernel_open;
	ll->read_only = o->ro;
	if (v->follow_cpu_ms > 0)
		ll->follow_ns = (uint64_t)(v->follow_cpu_ms * 1e6);
	ll->slice_ns = (uint64_t)v->slice_us * 1000;
	ll->force_uid = v->has_uid;
	ll->uid = (uid_t)v->uid;
	ll->force_gid = v->has_gid;
	ll->gid = (gid_t)v->gid;
	ll->umask = (mode_t)v->umask;
}

/* The fs layer's options from the mount options (@p remote_timeout: the
 * timeout below network and FUSE folders). Returns the thumbnail cache
 * folder it names (malloc'd, the caller frees it after the fs; NULL: none). */
static char *fs_opts(const struct lfs_options *o, const struct lfs_values *v,
		     const struct fuse_cmdline_opts *opts, double remote_timeout, lfs_fs_opts *fo)
{
	*fo = (lfs_fs_opts){
		.timeout = v->timeout,
		.remote_timeout = remote_timeout,
		.cache_bytes = (size_t)v->cache_mb << 20,
		.cache_entries = (size_t)v->cache_entries,
		.max_model_size = (size_t)v->max_model_mb << 20,
		.list_classify = (unsigned)v->list_classify,
		.model_memory = v->model_memory_mb ? (size_t)v->model_memory_mb << 20 : SIZE_MAX,
		.watch = o->nowatch != 1,
		.watch_trusted = o->nowatch == 0,
		.debug = opts->debug,
		.unlink_grace = v->unlink_grace,
		.scratch_ttl = v->scratch_ttl,
		.edit_bytes = (size_t)v->edit_mb << 20,
		.thumb_size = (unsigned)v->thumb_size,
		.keep_owner = v->has_uid || v->has_gid,
		.log = log_to_fuse,
	};
	char *tcache = v->thumb_size ? thumb_cache_dir(o) : NULL;
	fo->thumb_cache = tcache;
	fo->thumb_cache_bytes = (size_t)v->thumb_cache_mb << 20;
	return tcache;
}

/*
 * The session's request loop until unmount or a signal: 0 for a normal
 * end (> 0 from libfuse: stopped by SIGINT/SIGTERM/SIGHUP), 1 for a failure.
 * Multi-threaded by default: a model being built (seconds for a big one)
 * then holds up only the requests that need that model, and concurrent
 * saves of different models overlap; the single-threaded loop is ~20%
 * faster only for warm small-file reads (docs/performance.md "Threads").
 * -s or -o st: single thread. -o poll_us (default 200): our own
 * multi-threaded loop where the latest thread to serve a request polls
 * the fd a while before it sleeps (lfs_ll_loop, docs/performance.md
 * "Read-write grep"); -o poll_us=0 or -o clone_fd: libfuse's loop.
 */
static int session_loop(lfs_ll *ll, struct fuse_session *se, const struct lfs_options *o,
			const struct lfs_values *v, const struct fuse_cmdline_opts *opts)
{
	if (!o->mt || opts->singlethread)
		return fuse_session_loop(se) < 0;
	if (v->poll_us && !opts->clone_fd) {
		/* our own loop: one thread polls after a request (fuse_ll.h lfs_ll_loop) */
		fuse_log(FUSE_LOG_INFO, "legacyfs: multi-threaded loop, at most %u threads, "
			 "polling %u us after a request\n", opts->max_threads, (unsigned)v->poll_us);
		return lfs_ll_loop(ll, opts->max_threads, opts->max_idle_threads, (unsigned)v->poll_us) < 0;
	}
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	if (!cfg)
		return 1;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)opts->clone_fd);
	/* fuse_parse_cmdline() leaves max_idle_threads at UINT_MAX ("not
	 * given"); libfuse 3.14 logs "Ignoring invalid max threads value
	 * 4294967295" when that is passed on, so pass only what was given. */
	if (opts->max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(cfg, opts->max_idle_threads);
	fuse_loop_cfg_set_max_threads(cfg, opts->max_threads);
	fuse_log(FUSE_LOG_INFO, "legacyfs: multi-threaded loop, at most %u threads%s\n",
		 opts->max_threads, opts->clone_fd ? ", one /dev/fuse fd per thread" : "");
	int ret = fuse_session_loop_mt(se, cfg) < 0;
	fuse_loop_cfg_destroy(cfg);
	return ret;
}

/* The option strings fuse_opt_parse() allocated into @p o. */
static void options_free(struct lfs_options *o)
{
	free(o->thumb_cache);
	free(o->respath);
	char **strs[] = { &o->timeout, &o->cache_mb, &o->cache_entries, &o->max_model_mb,
			  &o->list_classify, &o->model_memory_mb, &o->follow_cpu_ms, &o->slice_us,
			  &o->poll_us, &o->unlink_grace, &o->scratch_ttl, &o->edit_mb, &o->thumb_size,
			  &o->thumb_cache_mb, &o->uid, &o->gid, &o->umask, &o->max_threads,
			  &o->max_idle_threads };
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		free(*strs[i]);
	free(o->source);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct lfs_options o = { .mt = 1, .nowatch = -1 }; /* -1: neither -o watch nor -o nowatch */
	struct lfs_values v = { .timeout = -1, .cache_mb = 256, .cache_entries = 200000,
				.max_model_mb = 256, .list_classify = 256, .model_memory_mb = 256,
				.thumb_size = 256, .thumb_cache_mb = 64, .follow_cpu_ms = 0,
				.poll_us = 200, .scratch_ttl = 300 };
	char *tcache = NULL;
	struct fuse_cmdline_opts opts = { 0 };
	struct fuse_session *se = NULL;
	lfs_fs *fs = NULL;
	lfs_ll ll = { 0 };
	int ret = 1;

	if (fuse_opt_parse(&args, &o, lfs_opts, opt_proc) != 0)
		goto out;
	for (int i = 1; i < args.argc; i++)
		if (!strcmp(args.argv[i], "-h") || !strcmp(args.argv[i], "--help") ||
		    !strcmp(args.argv[i], "-V") || !strcmp(args.argv[i], "--version"))
			o.help = true;
	/* Before fuse_parse_cmdline, whose messages about a MOUNTPOINT are terser. */
	if (!o.help) {
		if (!o.source || !o.mountpoint) {
			fprintf(stderr, "legacyfs: missing %s\n",
				o.source ? "MOUNTPOINT" : "SOURCE and MOUNTPOINT");
			usage_hint(argv[0]);
			goto out;
		}
		if (!check_values(&o, &v))
			goto out;
		if (!folder_ok("SOURCE", o.source) || !folder_ok("MOUNTPOINT", o.mountpoint))
			goto out;
	}
	if (fuse_parse_cmdline(&args, &opts) != 0) {
		usage_hint(argv[0]);
		goto out;
	}
	if (opts.show_help || opts.show_version) {
		help_or_version(argv[0], opts.show_help);
		ret = 0;
		goto out;
	}
	if (!o.source || !opts.mountpoint) {
		fprintf(stderr, "legacyfs: missing %s\n", o.source ? "MOUNTPOINT" : "SOURCE and MOUNTPOINT");
		usage_hint(argv[0]);
		goto out;
	}
	if (!mountpoint_ok(o.source, opts.mountpoint))
		goto out;
	if (o.respath) {
		/* made absolute now: the daemon later runs from "/" */
		int e = lfs_texture_set_respath(o.respath);
		if (e) {
			fprintf(stderr, "legacyfs: -o respath=%s: %s\n", o.respath,
				e == ENOTDIR ? "every entry must be a folder" : strerror(e));
			goto out;
		}
	}
	/* Below SOURCE folders on network or FUSE file systems inotify misses
	 * far-side changes (docs/mount.md "Network file systems"): 1 s there,
	 * unless the user chose a timeout or told us to trust the watcher. */
	double remote_timeout = v.timeout >= 0 ? v.timeout : o.nowatch == 0 ? 86400.0 : 1.0;
	if (v.timeout < 0)
		v.timeout = o.nowatch == 1 ? 1.0 : 86400.0;

	ll.conn_opts = fuse_parse_conn_info_opts(&args);
	if (!ll.conn_opts)
		goto out;
	/*
	 * Kernel permission checks on the modes we report (writes included), and
	 * a useful fsname in /proc/mounts.
	 */
	char *oarg = mount_opts(o.source);
	if (!oarg || fuse_opt_add_arg(&args, oarg) != 0) {
		free(oarg);
		goto out;
	}
	free(oarg);

	/*
	 * Objects created through the mount get the caller's mode & ~umask (the
	 * kernel sends the caller's umask with CREATE/MKNOD/MKDIR; src/fs applies
	 * it): the daemon's own umask must not mask them again (docs/posix.md).
	 * The fs layer gives every file it makes for itself an explicit mode.
	 */
	umask(0);

	lfs_fs_opts fo;
	tcache = fs_opts(&o, &v, &opts, remote_timeout, &fo);
	/* before the fs (and its threads) ask for a format */
	lfs_format_ascii_views(o.ascii_views == 1);
	int r = lfs_fs_new(o.source, &fo, &fs);
	if (r)
		goto out;
	ll.fs = fs;
	ll_opts(&ll, &o, &v);

	se = fuse_session_new(&args, lfs_ll_ops(), sizeof(struct fuse_lowlevel_ops), &ll);
	if (!se)
		goto out;
	ll.se = se;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, opts.mountpoint) != 0)
		goto out_signals;
	if (!opts.foreground) {
		/* stderr goes to /dev/null once daemonized: log to syslog instead. */
		openlog("legacyfs", LOG_PID, LOG_DAEMON);
		fuse_set_log_func(log_to_syslog);
	}
	fuse_daemonize(opts.foreground);

	/* After daemonize: fork() would not carry the watcher thread along. */
	lfs_fs_notify nt;
	lfs_ll_notify(&ll, &nt);
	r = lfs_fs_watch_start(fs, &nt);
	if (r)
		fuse_log(FUSE_LOG_WARNING, "legacyfs: watcher not started: %s\n", strerror(r));

	ret = session_loop(&ll, se, &o, &v, &opts);
	lfs_fs_watch_stop(fs);
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out:
	lfs_fs_free(fs);
	free(tcache);
	options_free(&o);
	free(ll.conn_opts);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
