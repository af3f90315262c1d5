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
 *   legacyfs-convert check   MODEL VIEWPATH EDITED     apply's messages, nothing written
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
 * OUT may be MODEL itself; "-o -" writes to stdout. `check` is apply
 * without OUT: the same messages (those naming VIEWPATH name EDITED, so an
 * editor finds the line) and exit status, nothing written: a linter.
 *
 * Operands: `cat MODEL VIEWPATH` and `cat MODEL...` share a command line.
 * With two operands and no -v, the second is a view path when no file has
 * that name or when MODEL has a view of that path (model_has_view()), so
 * `cat X.mdl model.mdl` inside a mounted model folder (where ./model.mdl is
 * a file) is one view; otherwise both are models.
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

#include "convert.h"
#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/restype.h"
#include "registry/container.h"
#include "fs/replace.h"
#include "fs/source.h"
#include "fs/texture.h"
#include "lfs_config.h"
#include "registry/names.h"
#include "render/thumb.h"
#include "registry/viewset.h"


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

bool capture_view(lfs_viewset *vs, const lfs_view *v)
{
	if (!t_cap)
		return false;
	/* parallel batch: the main thread writes it in order and frees vs */
	t_cap->vs = *vs;
	t_cap->view = v;
	t_cap->has_vs = true;
	return true;
}

/* @p n bytes of a message to stderr, or into the thread's capture. */
void err_write(const char *s, size_t n)
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
void eprintf(const char *fmt, ...)
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
		"       legacyfs-convert check   [--max-size MIB] MODEL VIEWPATH EDITED\n"
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
		"           the model's text, e.g. model.mdl) of each MODEL in turn; a\n"
		"           second operand is VIEWPATH when it is one of MODEL's view\n"
		"           paths or no file of that name exists\n"
		"  extract  write every view below DESTDIR (created if missing); with -d,\n"
		"           each MODEL's views go below OUTDIR/<MODEL's file name>/; an NWN\n"
		"           model's supermodel links too (symbolic links, found from --root)\n"
		"  apply    apply EDITED (a changed copy of view VIEWPATH) to MODEL and\n"
		"           write the new model file to OUT (may be MODEL; - = stdout),\n"
		"           exactly as saving the view through a mount would\n"
		"  check    print the errors and warnings (EDITED:LINE:COL: ...) that\n"
		"           apply would, write nothing; exit status as apply (a linter)\n"
		"  compile  compile an NWN ASCII model into a binary (docs/nwn-compile.md);\n"
		"           with -d, each X.mdl into OUTDIR/<X's file name>\n"
		"  thumbnail render MODEL's thumbnail PNG (SIZE 128/256/512/1024; the\n"
		"           freedesktop thumbnailer in contrib/ calls this; an ASCII NWN\n"
		"           model is compiled in memory); with -d, into\n"
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
unsigned g_thumb_size = 256;

int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && !*end && !errno && *v <= max ? 0 : -1;
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
	eprintf("usage: legacyfs-convert list|cat|extract|apply|check|compile|thumbnail|pack|unpack"
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
	if (strcmp(cmd, "apply") == 0 || strcmp(cmd, "check") == 0) {
		bool check = cmd[0] == 'c';
		if (npos != 3 || !out == !check || r.root || r.dest || r.view) {
			usage(stderr);
			return EXIT_USAGE;
		}
		return check ? do_check(pos[0], pos[1], pos[2], r.max_size)
			     : do_apply(pos[0], pos[1], pos[2], out, r.max_size);
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
			if (vs.views[i].kind != LFS_VIEW_LINK) /* supermodel links: extract makes them */
				printf("%zu\t%s\n", vs.views[i].size, vs.views[i].path);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			eprintf("stdout: error: %s\n", strerror(errno));
			status = EXIT_ERR;
		}
		lfs_viewset_free(&vs);
		return status;
	}
	case CMD_CAT: {
		/* `cat MODEL VIEWPATH`: the second of two operands is a view path
		 * when no such file exists or MODEL has that view (file header
		 * comment "Operands"); otherwise every operand is a model */
		struct stat st;
		if (!r.view && npos == 2 &&
		    (stat(pos[1], &st) != 0 || model_has_view(pos[0], r.root, r.max_size, pos[1])))
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
		/* ASCII NWN models are drawn too, compiled in memory
		 * (docs/thumbnails.md); before any worker thread */
		lfs_format_ascii_views(true);
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
