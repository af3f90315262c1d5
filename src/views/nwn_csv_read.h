/**
 * @file nwn_csv_read.h
 * The NWN apply's CSV text reader: a header row, then rows of exactly
 * ncols numbers. To be replaced by the shared OBJ/CSV reader.
 */
#ifndef LFS_VIEWS_NWN_CSV_READ_H
#define LFS_VIEWS_NWN_CSV_READ_H

#include <stdint.h>

#include "../common/error.h"
#include "nwn_obj_read.h" /* nwn_split_line */

/** A read CSV track (val and line owned by the caller: free both). */
typedef struct nwn_csvdoc {
	char header[512];
	uint32_t header_line;
	uint32_t ncols;
	float *val; /* rows * ncols */
	uint32_t *line;
	uint32_t rows, cap;
} nwn_csvdoc;


/** Read CSV text @p p (@p n bytes) of @p ncols columns into @p d; errors
 * name `file:line:col`. @p d is always initialised. */
lfs_err nwn_csv_read(lfs_error *err, const char *file, const char *p, size_t n, uint32_t ncols,
		     nwn_csvdoc *d);

#endif
