/**
 * @file convert.h
 * What the parts of `legacyfs-convert` share (src/tools/convert.c: the
 * command line and the command table; convert_batch.c: batches and
 * messages; convert_model.c: the model commands; convert_pack.c: pack and
 * unpack).
 * Exit statuses and messages are convert.c's (its usage text says them).
 */
#ifndef LFS_TOOLS_CONVERT_H
#define LFS_TOOLS_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "formats/nwnarchive/erf.h"
#include "fs/replace.h"
#include "registry/viewset.h"

/** Exit statuses (convert.c usage). */
enum { EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_NOTMODEL = 3, EXIT_READONLY = 4 };

struct convert_cmd;

/** The settings of one run: the command line's options (convert.c). */
struct run {
	const struct convert_cmd *cmd; /**< the command's table row */
	const char *root, *view, *dest, *out; /**< --root, -v, -d, -o (NULL: not given) */
	size_t max_size;     /**< --max-size, bytes */
	unsigned thumb_px;   /**< thumbnail's -s, pixels */
	size_t jobs;         /**< -j: worker threads of a batch (1 = the main thread alone) */
	bool size_given;     /**< -s given */
	const char *type_tag; /**< pack --type (NULL: OUT's extension) */
	lfs_erf_version erf_version; /**< pack --erf-version */
	bool pack_opt;       /**< --type or --erf-version given */
};

/** One row of the command table (convert.c): a subcommand. */
struct convert_cmd {
	const char *name;  /**< "list", "cat", ... */
	const char *forms; /**< its usage lines without "legacyfs-convert ", '\n' between */
	const char *help;  /**< its paragraph of --help */
	unsigned allow;    /**< CONVERT_OPT_* it accepts (the others: usage, exit 2) */
	int min_ops;       /**< fewest operands (fewer: usage, exit 2) */
	/** The command with its @p npos operands @p pos: exit status. */
	int (*run)(struct run *r, char **pos, int npos);
	/** One MODEL of a batch, the output into @p out (NULL without -d): exit status. */
	int (*one)(const struct run *r, const char *model, const char *out);
	const char *suffix;   /**< appended to a batch output's file name */
	bool views_to_stdout; /**< a batch writes views to stdout (no progress line there) */
};

/** struct convert_cmd.allow: the options a command takes besides the
 *  global ones (--thumb-size, --max-size, --respath, -q, -j). */
enum {
	CONVERT_OPT_ROOT = 1u << 0, /**< --root */
	CONVERT_OPT_DEST = 1u << 1, /**< -d */
	CONVERT_OPT_VIEW = 1u << 2, /**< -v */
	CONVERT_OPT_OUT = 1u << 3,  /**< -o */
	CONVERT_OPT_SIZE = 1u << 4, /**< -s */
	CONVERT_OPT_PACK = 1u << 5, /**< --type, --erf-version */
};

/* convert_batch.c */
/** Many models in one process (convert_batch.c): each by r->cmd->one; a
 *  failure is reported and the batch goes on. Exit status: 0 all done,
 *  1 some failed, 3 the only failures were files that are not models. */
int convert_batch(const struct run *r, char **models, size_t n);
/** A batch shows its progress line (cleared by -q). */
extern bool g_progress;

/** A message on stderr (clearing a batch's progress line first). */
__attribute__((format(printf, 1, 2))) void eprintf(const char *fmt, ...);
/** lfs_write_all() (src/fs/replace.h) of @p n bytes of @p p to @p fd: 0, or
 *  non-zero (the errno). */
static inline int write_all(int fd, const char *p, size_t n)
{
	return lfs_write_all(fd, p, n);
}
/** File @p path whole (at most @p max bytes, malloc'd, *n, *st), or NULL with a message. */
uint8_t *slurp(const char *path, size_t max, size_t *n, struct stat *st);
/** Write @p res (@p rn bytes) to @p out ("-" = stdout) by atomic replace, keeping OUT's mode
 *  and owner when it exists, else taking @p like's: 0 or EXIT_ERR. */
int write_result(const char *out, const uint8_t *res, size_t rn, const struct stat *like);
/** A decimal number @p s up to @p max into *v: 0, or -1 when it is none. */
int parse_uint(const char *s, unsigned long max, unsigned long *v);

/* convert_batch.c: output of batches */
/** @p n bytes of a message to stderr, or into the batch thread's capture. */
void err_write(const char *s, size_t n);
/** In a worker of a parallel batch: hand view @p v of @p vs (owned from now
 *  on) to the main thread, which writes it in order; false elsewhere. */
bool capture_view(lfs_viewset *vs, const lfs_view *v);
/** --thumb-size (the mount's -o thumb_size; 0 = no thumbnail.png). */
extern unsigned g_thumb_size;

/* convert_model.c: the one-model commands (exit statuses) */
/** Build MODEL's views as the mount does (thumbnail.png at @p thumb_size). */
int load(const char *model, const char *root, size_t max_size, unsigned thumb_size,
		lfs_viewset *vs);
/** apply VIEW EDITED [-o OUT]. */
int do_apply(const char *model, const char *vpath, const char *edited, const char *out,
		    size_t max_size);
/** check MODEL VIEWPATH EDITED: the messages a save of EDITED onto the view
 *  would give (those naming VIEWPATH name EDITED), nothing written; the exit
 *  status of apply. */
int do_check(const char *model, const char *vpath, const char *edited, size_t max_size);
/** Has MODEL a view named @p vpath (views named only, no message)? false
 *  when MODEL does not load. */
bool model_has_view(const char *model, const char *root, size_t max_size, const char *vpath);
/** compile ASCII [-o OUT]. */
int do_compile(const char *src, const char *out, size_t max_size);
/** thumbnail MODEL [-o OUT]. */
int thumb_one(const char *model, const char *root, unsigned size, const char *out);
/** cat MODEL [VIEW] (NULL: its first text view). */
int cat_one(const char *model, const char *vpath, const char *root, size_t max_size,
		   unsigned thumb_size);
/** extract MODEL into @p dest. */
int extract_one(const char *model, const char *dest, const char *root, size_t max_size);

/** The FileType tag ("HAK " …) for --type or an extension @p s, or NULL. */
const char *erf_type_tag(const char *s);
/** pack OUT FILE...: exit status (convert_pack.c). */
int do_pack(const char *out, char **files, size_t nfiles, const char *type_tag,
	    lfs_erf_version version, size_t max_size);
/** unpack ARCHIVE DIR: exit status (convert_pack.c). */
int do_unpack(const char *arch, const char *dest, size_t max_size);

#endif
