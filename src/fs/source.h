/**
 * @file source.h
 * One source file -> "plain file", "model with views" or "model that failed".
 *
 * This is the classification both the mount (src/fs/fs.c) and the companion
 * command (src/tools/convert.c) use, so the two always agree on what a file
 * is and produce byte-identical views.
 *
 * Steps (docs/mount.md "Which files become directories"):
 *  1. Only regular files of at most @p max_size bytes are candidates.
 *  2. The first LFS_SOURCE_HEADER_BYTES bytes are read into a zero-filled
 *     buffer of the file's full size and lfs_format_for() is asked. lfs_format_for()
 *     is documented as header-only, so this costs one small read per file;
 *     the buffer is the real size (calloc: untouched pages cost nothing), so
 *     a detector that looked further would see zeros, never read out of
 *     bounds.
 *     lfs_source_detect() stops here: the mount lists folders with it
 *     (a header verdict, no decode; docs/mount.md "Listing is cheap").
 *  3. Detected files are read completely and lfs_views_build() runs —
 *     except a file too large for vopts->view_budget (lfs_views_may_fit()):
 *     it is not read past its header, and the build gives its README.txt.
 *     LFS_ERR_NOTFORMAT -> plain; any other failure -> LFS_SOURCE_FAILED
 *     with the decoder's message (legacyfs-convert reports it; the mount,
 *     with LFS_SOURCE_KEEP_FAILED, shows README.txt and the original bytes
 *     in the model folder).
 *
 * No FUSE code here.
 */
#ifndef LFS_FS_SOURCE_H
#define LFS_FS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "../common/error.h"
#include "../common/strbuf.h"
#include "registry/viewset.h"

/** Bytes of a candidate read before lfs_format_for() is asked. */
#define LFS_SOURCE_HEADER_BYTES 4096

/** What a source file is. */
typedef enum lfs_source_kind {
	LFS_SOURCE_PLAIN = 0, /**< passes through unchanged */
	LFS_SOURCE_MODEL,     /**< a model: shown as a directory of views */
	LFS_SOURCE_FAILED,    /**< detected as a model but does not decode: passes through */
} lfs_source_kind;


/**
 * Steps 1 and 2 only: is the file @p rel (relative to @p dirfd, final
 * component O_NOFOLLOW) a model by its name and header? Reads at most
 * LFS_SOURCE_HEADER_BYTES, and nothing when no format claims the file's
 * extension (lfs_views_candidate()). Decodes nothing.
 *
 * @param st   out: the stat of the opened file (what the verdict belongs to)
 * @param fmt  out: the format whose detector accepted the header, or NULL
 *             (plain: not a regular file, empty, over @p max_size, not a
 *             model's name or header)
 * @return LFS_OK; LFS_ERR_IO (err->sys_errno) when it cannot be opened or
 *         read; LFS_ERR_NOMEM.
 */
lfs_err lfs_source_detect(int dirfd, const char *rel, size_t max_size, struct stat *st,
			  const lfs_format **fmt, lfs_error *err);

/**
 * lfs_source_opts flag: a file detected as a model that does not decode
 * (any build error but LFS_ERR_NOMEM, LFS_ERR_NOTFORMAT included) still
 * gets views: README.txt (kind LFS_VIEW_NOTICE) whose first line is
 * `NAME: error: MESSAGE`, and the original bytes, read-only, under the
 * file's own base name. *kind is LFS_SOURCE_FAILED, *vs holds those views,
 * *err the decoder's message. The mount's model folders (docs/mount.md).
 */
#define LFS_SOURCE_KEEP_FAILED 1u

/**
 * How lfs_source_load() reads and classifies one source file. `{ .max_size
 * = M, .views = &vo }` (the other members zero) is the plain load of
 * `legacyfs-convert` and the tests; the mount sets every member.
 */
typedef struct lfs_source_opts {
	/** files larger than this are plain without reading them, bytes */
	size_t max_size;
	/** texture lookup for model.mtl, names-only / single-view builds (may be NULL) */
	const lfs_view_opts *views;
	/** LFS_SOURCE_KEEP_FAILED or 0 */
	unsigned flags;
	/** what went wrong inside a file that still loads, one line per problem
	 *  (may be NULL). Only archives have such problems (registry/container.h:
	 *  broken entries, missing or truncated BIFs); the mount adds each line
	 *  to /.legacyfs/errors. */
	lfs_sb *problems;
} lfs_source_opts;

/**
 * Classify and (for models) build the views of the file @p rel, a path
 * relative to the directory @p dirfd (AT_FDCWD works). The final component
 * is opened with O_NOFOLLOW. The one source loader of the mount
 * (fs_entry.c), `legacyfs-convert` and the tests.
 *
 * @param o         how (lfs_source_opts; NULL = no size bound, no options)
 * @param st        out: the stat of the opened file (what the result belongs to)
 * @param kind      out: the classification
 * @param vs        out: the views when *kind == LFS_SOURCE_MODEL (free with
 *                  lfs_viewset_free()); zeroed otherwise
 * @param err       out: for LFS_SOURCE_FAILED the decoder's message
 * @return LFS_OK (look at *kind); LFS_ERR_IO when the file cannot be opened or
 *         read (err->sys_errno holds errno; nothing is classified);
 *         LFS_ERR_NOMEM.
 */
lfs_err lfs_source_load(int dirfd, const char *rel, const lfs_source_opts *o, struct stat *st,
			lfs_source_kind *kind, lfs_viewset *vs, lfs_error *err);

/**
 * Could the file named @p name (base name) be shown as a folder: a model
 * format's extension (lfs_views_candidate()) or an archive's
 * (lfs_container_for_name(), registry/container.h)?
 */
bool lfs_source_candidate(const char *name);

/**
 * lfs_format_for(), then the archive pseudo-format (lfs_archive_detect()):
 * what the mount shows a file as, by its name and header.
 */
const lfs_format *lfs_source_format_for(const char *name, const uint8_t *data, size_t n);

/** Last path component of @p rel (pointer into it). */
const char *lfs_source_basename(const char *rel);

/** Where lfs_sibling_model_read() looks. */
typedef struct lfs_sibling_ctx {
	int dirfd;       /**< base folder fd (SOURCE's root, or AT_FDCWD) */
	const char *dir; /**< the model's folder relative to dirfd ("" = dirfd itself) */
	size_t max;      /**< larger files are not read, bytes */
} lfs_sibling_ctx;

/**
 * lfs_sibling_read_fn (viewset.h) / nwn_supermodel_lookup_fn: read
 * `<name>.mdl` — as written, then lower case — from the model's folder
 * (@p ctx is an lfs_sibling_ctx). The NWN supermodel lookup of the mount's
 * saves, `legacyfs-convert apply` and `compile`. *data is malloc'd.
 */
bool lfs_sibling_model_read(void *ctx, const char *name, uint8_t **data, size_t *n);

/**
 * The whole tree of a container (an archive) in one set, for programs that
 * show it without a mount (legacyfs-convert, tests): @p vs, the container's
 * listing as lfs_source_load() gives it (registry/container.h: resources
 * without bytes, models as LFS_VIEW_MEMBER), is replaced by a set holding
 * every resource with its bytes (none with opts->names_only) and, for each
 * member model "<rel>/<name>", its views under "<name>/" built with @p opts
 * (map_Kd found as the mount finds it for that member; a KEY's read-only).
 * A resource that cannot be read is left out, a member that does not decode
 * is a plain resource; each says so in @p problems (may be NULL).
 * @return LFS_OK or LFS_ERR_NOMEM (then @p vs is unchanged).
 */
lfs_err lfs_source_expand(int rootfd, const char *rel, const lfs_view_opts *opts, lfs_viewset *vs,
			  lfs_sb *problems, lfs_error *err);

#endif
