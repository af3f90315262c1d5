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
 * The commands are the rows of one table (cmds[]: name, usage forms,
 * --help paragraph, the options it takes, its operand count, its handler
 * and its per-model batch handler); a new command is one row and its two
 * handlers. Batches and messages are in convert_batch.c, the model
 * commands in convert_model.c, pack and unpack in convert_pack.c.
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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"
#include "formats/nwnarchive/erf.h"
#include "fs/texture.h"
#include "lfs_config.h"
#include "render/thumb.h"
#include "registry/viewset.h"
#include "formats/nwnarchive/restype.h"
#include "registry/container.h"
#include "fs/replace.h"
#include "fs/source.h"
#include "registry/names.h"

static void usage(FILE *f);
static void usage_line(void);

/* --thumb-size N: as the mount's -o thumb_size (0 = no thumbnail.png). */
unsigned g_thumb_size = 256;

int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && !*end && !errno && *v <= max ? 0 : -1;
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

/* ---- the commands ---------------------------------------------------------- */

/* The full usage on stderr, exit status 2. */
static int bad_usage(void)
{
	usage(stderr);
	return EXIT_USAGE;
}

/* list MODEL: one line per view (size, tab, path). */
static int cmd_list(struct run *r, char **pos, int npos)
{
	if (npos != 1)
		return bad_usage();
	lfs_viewset vs;
	int status = load(pos[0], r->root, r->max_size, g_thumb_size, &vs);
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

static int one_cat(const struct run *r, const char *model, const char *out)
{
	return cat_one(model, r->view, r->root, r->max_size, g_thumb_size);
}

/* cat MODEL VIEWPATH | cat [-v VIEWPATH] MODEL...: the second of two
 * operands is a view path when no such file exists or MODEL has that view
 * (file header comment "Operands"); otherwise every operand is a model. */
static int cmd_cat(struct run *r, char **pos, int npos)
{
	struct stat st;
	if (!r->view && npos == 2 &&
	    (stat(pos[1], &st) != 0 || model_has_view(pos[0], r->root, r->max_size, pos[1])))
		return cat_one(pos[0], pos[1], r->root, r->max_size, g_thumb_size);
	return convert_batch(r, pos, (size_t)npos);
}

static int one_extract(const struct run *r, const char *model, const char *out)
{
	return extract_one(model, out, r->root, r->max_size);
}

/* extract MODEL DESTDIR | extract -d OUT MODEL... */
static int cmd_extract(struct run *r, char **pos, int npos)
{
	if (r->dest)
		return convert_batch(r, pos, (size_t)npos);
	if (npos != 2)
		return bad_usage();
	return extract_one(pos[0], pos[1], r->root, r->max_size);
}

/* apply MODEL VIEWPATH EDITED -o OUT */
static int cmd_apply(struct run *r, char **pos, int npos)
{
	if (npos != 3 || !r->out)
		return bad_usage();
	return do_apply(pos[0], pos[1], pos[2], r->out, r->max_size);
}

/* check MODEL VIEWPATH EDITED */
static int cmd_check(struct run *r, char **pos, int npos)
{
	if (npos != 3)
		return bad_usage();
	return do_check(pos[0], pos[1], pos[2], r->max_size);
}

/* compile into a batch's output: never over its own input (-d naming the
 * input's folder). */
static int one_compile(const struct run *r, const char *model, const char *out)
{
	struct stat a, b;
	if (stat(model, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		eprintf("%s: error: the output %s is the input itself (choose another -d)\n", model, out);
		return EXIT_ERR;
	}
	return do_compile(model, out, r->max_size);
}

/* compile X.mdl -o OUT | compile -d OUT X.mdl... */
static int cmd_compile(struct run *r, char **pos, int npos)
{
	if ((r->out && r->dest) || (!r->dest && (!r->out || npos != 1)))
		return bad_usage();
	if (!r->dest)
		return do_compile(pos[0], r->out, r->max_size);
	return convert_batch(r, pos, (size_t)npos);
}

static int one_thumb(const struct run *r, const char *model, const char *out)
{
	return thumb_one(model, r->root, r->thumb_px, out);
}

/* thumbnail MODEL OUT.png | thumbnail -d OUT MODEL... */
static int cmd_thumb(struct run *r, char **pos, int npos)
{
	/* ASCII NWN models are drawn too, compiled in memory
	 * (docs/thumbnails.md); before any worker thread */
	lfs_format_ascii_views(true);
	if (r->dest)
		return convert_batch(r, pos, (size_t)npos);
	if (npos != 2) {
		eprintf("usage: legacyfs-convert thumbnail [-s SIZE] [--root DIR] INPUT OUTPUT.png\n");
		return EXIT_USAGE;
	}
	return thumb_one(pos[0], r->root, r->thumb_px, pos[1]);
}

/* pack OUT FILE... */
static int cmd_pack(struct run *r, char **pos, int npos)
{
	return do_pack(pos[0], pos + 1, (size_t)npos - 1, r->type_tag, r->erf_version, r->max_size);
}

/* unpack ARCHIVE DESTDIR */
static int cmd_unpack(struct run *r, char **pos, int npos)
{
	if (npos != 2)
		return bad_usage();
	return do_unpack(pos[0], pos[1], r->max_size);
}

/* The commands, in the order --help lists them. */
static const struct convert_cmd cmds[] = {
	{ "list", "list    [--root DIR] [--max-size MIB] MODEL",
	  "  list     one line per view: size in bytes, a tab, the view path\n",
	  CONVERT_OPT_ROOT, 1, cmd_list, NULL, "", false },
	{ "cat",
	  "cat     [--root DIR] [--max-size MIB] MODEL VIEWPATH\n"
	  "cat     [--root DIR] [-v VIEWPATH] MODEL...",
	  "  cat      write the view VIEWPATH (e.g. meshes/Mesh02.obj) to stdout;\n"
	  "           with -v, or with MODEL operands only, write that view (default:\n"
	  "           the model's text, e.g. model.mdl) of each MODEL in turn; a\n"
	  "           second operand is VIEWPATH when it is one of MODEL's view\n"
	  "           paths or no file of that name exists\n",
	  CONVERT_OPT_ROOT | CONVERT_OPT_VIEW, 1, cmd_cat, one_cat, "", true },
	{ "extract",
	  "extract [--root DIR] [--max-size MIB] MODEL DESTDIR\n"
	  "extract [--root DIR] -d OUTDIR MODEL...",
	  "  extract  write every view below DESTDIR (created if missing); with -d,\n"
	  "           each MODEL's views go below OUTDIR/<MODEL's file name>/; an NWN\n"
	  "           model's supermodel links too (symbolic links, found from --root)\n",
	  CONVERT_OPT_ROOT | CONVERT_OPT_DEST, 1, cmd_extract, one_extract, "", false },
	{ "apply", "apply   [--max-size MIB] MODEL VIEWPATH EDITED -o OUT",
	  "  apply    apply EDITED (a changed copy of view VIEWPATH) to MODEL and\n"
	  "           write the new model file to OUT (may be MODEL; - = stdout),\n"
	  "           exactly as saving the view through a mount would\n",
	  CONVERT_OPT_OUT | CONVERT_OPT_SIZE, 3, cmd_apply, NULL, "", false },
	{ "check", "check   [--max-size MIB] MODEL VIEWPATH EDITED",
	  "  check    print the errors and warnings (EDITED:LINE:COL: ...) that\n"
	  "           apply would, write nothing; exit status as apply (a linter)\n",
	  CONVERT_OPT_SIZE, 3, cmd_check, NULL, "", false },
	{ "compile",
	  "compile [--max-size MIB] X.mdl -o X.bin.mdl (NWN ASCII -> binary)\n"
	  "compile -d OUTDIR X.mdl...",
	  "  compile  compile an NWN ASCII model into a binary (docs/nwn-compile.md);\n"
	  "           with -d, each X.mdl into OUTDIR/<X's file name>\n",
	  CONVERT_OPT_DEST | CONVERT_OPT_OUT, 1, cmd_compile, one_compile, "", false },
	{ "thumbnail",
	  "thumbnail [-s SIZE] [--root DIR] [--respath DIRS] MODEL OUT.png\n"
	  "thumbnail [-s SIZE] [--root DIR] -d OUTDIR MODEL...",
	  "  thumbnail render MODEL's thumbnail PNG (SIZE 128/256/512/1024; the\n"
	  "           freedesktop thumbnailer in contrib/ calls this; an ASCII NWN\n"
	  "           model is compiled in memory); with -d, into\n"
	  "           OUTDIR/<MODEL's file name>.png\n",
	  CONVERT_OPT_ROOT | CONVERT_OPT_DEST | CONVERT_OPT_SIZE, 1, cmd_thumb, one_thumb, ".png",
	  false },
	{ "pack", "pack    [--type HAK|ERF|MOD|SAV|NWM] [--erf-version V1.0|E1.0] OUT FILE...",
	  "  pack     write the NWN archive OUT (.hak/.erf/.mod: its type, default HAK)\n"
	  "           holding one resource per FILE, in order: ResRef = file name\n"
	  "           without extension (1-16 letters, digits, _), type = extension;\n"
	  "           nothing is written when any FILE is refused (bad name, unknown\n"
	  "           extension, duplicate); OUT is replaced atomically\n",
	  CONVERT_OPT_PACK, 2, cmd_pack, NULL, "", false },
	{ "unpack", "unpack  [--max-size MIB] ARCHIVE DESTDIR",
	  "  unpack   write every resource of ARCHIVE (.hak/.erf/.mod/...) as a file in\n"
	  "           DESTDIR, named as the mount names it; models as their own bytes\n",
	  0, 2, cmd_unpack, NULL, "", false },
};
enum { N_CMDS = sizeof(cmds) / sizeof(cmds[0]) };

/* --help (stdout) or the usage after a bad command line (stderr): the
 * forms and paragraphs of the command table, then the options. */
static void usage(FILE *f)
{
	for (size_t i = 0; i < N_CMDS; i++) {
		for (const char *p = cmds[i].forms; *p;) {
			size_t n = strcspn(p, "\n");
			fprintf(f, "%slegacyfs-convert %.*s\n", i == 0 && p == cmds[i].forms ? "usage: " : "       ", (int)n, p);
			p += n + (p[n] == '\n');
		}
	}
	fputs("       legacyfs-convert --help | --version\n\n"
	      "Shows what a legacyfs mount shows for MODEL, without mounting:\n",
	      f);
	for (size_t i = 0; i < N_CMDS; i++)
		fputs(cmds[i].help, f);
	fputs("\n"
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
	      "(nothing done).\n",
	      f);
}

/* One line after an option error: what a call looks like, where the rest is. */
static void usage_line(void)
{
	char names[128] = "";
	for (size_t i = 0; i < N_CMDS; i++) {
		if (i)
			strcat(names, "|");
		strcat(names, cmds[i].name);
	}
	eprintf("usage: legacyfs-convert %s [OPTION]... ARG... (legacyfs-convert --help: all forms)\n",
		names);
}

enum { OPT_ROOT = 256, OPT_THUMB_SIZE, OPT_MAX_SIZE, OPT_RESPATH, OPT_TYPE, OPT_ERFVER };

/* An option with a long name only (OPT_*) and its argument into @p r:
 * 0, or EXIT_USAGE after its message. */
static int long_opt(int c, const char *arg, struct run *r)
{
	unsigned long v;
	switch (c) {
	case OPT_ROOT:
		r->root = arg;
		break;
	case OPT_RESPATH: {
		int e = lfs_texture_set_respath(arg);
		if (e) {
			eprintf("legacyfs-convert: --respath=%s: %s\n", arg,
				e == ENOTDIR ? "every entry must be a folder" : strerror(e));
			return EXIT_USAGE;
		}
		break;
	}
	case OPT_THUMB_SIZE:
		if (parse_uint(arg, 1024, &v) || (v && !lfs_thumb_size_ok((unsigned)v))) {
			eprintf("legacyfs-convert: --thumb-size=%s: must be 128, 256, 512, 1024 or 0\n", arg);
			return EXIT_USAGE;
		}
		g_thumb_size = (unsigned)v;
		break;
	case OPT_MAX_SIZE:
		if (number_opt("max-size", arg, 1, 1UL << 20, &v))
			return EXIT_USAGE;
		r->max_size = (size_t)v << 20;
		break;
	case OPT_TYPE:
		if (!(r->type_tag = erf_type_tag(arg))) {
			eprintf("legacyfs-convert: --type=%s: must be HAK, ERF, MOD, SAV or NWM\n", arg);
			return EXIT_USAGE;
		}
		r->pack_opt = true;
		break;
	case OPT_ERFVER:
		if (strcasecmp(arg, "V1.0") == 0)
			r->erf_version = LFS_ERF_V10;
		else if (strcasecmp(arg, "E1.0") == 0)
			r->erf_version = LFS_ERF_E10;
		else {
			eprintf("legacyfs-convert: --erf-version=%s: must be V1.0 or E1.0\n", arg);
			return EXIT_USAGE;
		}
		r->pack_opt = true;
		break;
	}
	return 0;
}

/* The options into @p r and the operands in order into @p pos (room for
 * argc pointers), their count into *npos. Returns -1 to go on, else the
 * exit status (0 after --help or --version). */
static int parse_options(int argc, char **argv, struct run *r, char **pos, int *npos)
{
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
	int c;
	unsigned long v;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		switch (c) {
		case 1:
			pos[(*npos)++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("legacyfs-convert %s\n", LFS_VERSION);
			return 0;
		case 'o':
			r->out = optarg;
			break;
		case 'd':
			r->dest = optarg;
			break;
		case 'v':
			r->view = optarg;
			break;
		case 'q':
			g_progress = false;
			break;
		case 'j':
			if (number_opt("jobs", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			r->jobs = v;
			break;
		case 's':
			/* thumbnailers pass the size they want; render the next
			 * standard size at or above it (128, 256, 512, 1024) */
			if (number_opt("size", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			r->thumb_px = v <= 128 ? 128 : v <= 256 ? 256 : v <= 512 ? 512 : 1024;
			r->size_given = true;
			break;
		case '?':
		case ':':
			return option_error(longopts, shorts + 2, c, optopt, argv[optind - 1]);
		default:
			if (long_opt(c, optarg, r))
				return EXIT_USAGE;
		}
	}
	while (optind < argc) /* the operands after "--" */
		pos[(*npos)++] = argv[optind++];
	return -1;
}

/* The command line: options, then the subcommand's row of cmds[], which
 * must take every option given and has at least its operands. @p pos has
 * room for argc operand pointers (owned by main). */
static int convert_main(int argc, char **argv, char **pos)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct run r = { .max_size = (size_t)256 << 20, .thumb_px = 256,
			 .jobs = ncpu > 1 ? (size_t)ncpu : 1, .erf_version = LFS_ERF_V10 };
	g_progress = true;
	int npos = 0;
	int rc = parse_options(argc, argv, &r, pos, &npos);
	if (rc >= 0)
		return rc;
	if (npos < 1)
		return bad_usage();
	for (size_t i = 0; i < N_CMDS; i++)
		if (strcmp(pos[0], cmds[i].name) == 0)
			r.cmd = &cmds[i];
	unsigned given = (r.root ? CONVERT_OPT_ROOT : 0) | (r.dest ? CONVERT_OPT_DEST : 0) |
			 (r.view ? CONVERT_OPT_VIEW : 0) | (r.out ? CONVERT_OPT_OUT : 0) |
			 (r.size_given ? CONVERT_OPT_SIZE : 0) | (r.pack_opt ? CONVERT_OPT_PACK : 0);
	if (!r.cmd || (given & ~r.cmd->allow) || npos - 1 < r.cmd->min_ops)
		return bad_usage();
	return r.cmd->run(&r, pos + 1, npos - 1);
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
