/**
 * @file convert.h
 * What the parts of `legacyfs-convert` share (src/tools/convert.c: the
 * command line and the model commands; convert_pack.c: pack and unpack).
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

/* convert.c: output of batches */
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
