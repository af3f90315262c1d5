/**
 * @file nwn_obj_read.h
 * The NWN apply's OBJ text reader and the line tokenizer it shares with the
 * CSV reader (nwn_csv_read.h). Wavefront OBJ subset: v, vt, vn, f (polygons
 * split into fans), o/g/s/usemtl/mtllib ignored. To be replaced by the
 * shared OBJ/CSV reader.
 */
#ifndef LFS_VIEWS_NWN_OBJ_READ_H
#define LFS_VIEWS_NWN_OBJ_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

/** A read OBJ file (arrays owned; free with nwn_obj_free_doc()). */
typedef struct nwn_objdoc {
	float *v, *vt, *vn;
	uint32_t nv, nvt, nvn, cv, cvt, cvn;
	int32_t *f; /* 9 per face: v vt vn per corner, 0-based, -1 absent */
	uint32_t *fline;
	uint32_t nf, cf;
	uint32_t polygons; /* faces with more than 3 corners (split into a fan) */
} nwn_objdoc;

/** Tokens of one text line (at most 16; n = 17 when there were more). */
typedef struct nwn_tline {
	uint32_t n;
	const char *s[16];
	uint32_t len[16], col[16];
} nwn_tline;



/** Free the arrays of @p d. */
void nwn_obj_free_doc(nwn_objdoc *d);
/** Split @p len bytes at @p p into tokens: @p sep ' ' = runs of blanks,
 * otherwise fields separated by @p sep (CR dropped). */
void nwn_split_line(const char *p, size_t len, nwn_tline *t, char sep);
/** A float token (floatfmt's syntax); false when empty or not a number. */
bool nwn_tok_float(const char *s, uint32_t len, float *v);
/** An integer token (mdl_parse's syntax). */
bool nwn_tok_int(const char *s, uint32_t len, int64_t *v);
/** Read OBJ text @p p (@p n bytes) into @p d; errors name `file:line:col`.
 * @p d is always initialised and must be freed. */
lfs_err nwn_obj_read(lfs_error *err, const char *file, const char *p, size_t n, nwn_objdoc *d);

#endif
