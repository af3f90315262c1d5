/**
 * @file nwn_csv_read.c
 * The NWN apply's CSV text reader (one controller track: a header row and
 * rows of numbers). To be replaced by the shared OBJ/CSV reader.
 */

#include "nwn_csv_read.h"

#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"

lfs_err nwn_csv_read(lfs_error *err, const char *file, const char *p, size_t n, uint32_t ncols,
			 nwn_csvdoc *d)
{
	memset(d, 0, sizeof(*d));
	d->ncols = ncols;
	uint32_t ln = 0;
	size_t pos = 0;
	bool have_header = false;
	while (pos < n) {
		size_t s = pos;
		while (pos < n && p[pos] != '\n')
			pos++;
		size_t len = pos - s;
		if (pos < n)
			pos++;
		ln++;
		while (len && (p[s + len - 1] == '\r' || p[s + len - 1] == ' ' || p[s + len - 1] == '\t'))
			len--;
		if (!len)
			continue;
		if (memchr(p + s, '\0', len))
			return lfs_fail_at(err, file, ln, 1, "NUL byte in CSV text");
		if (!have_header) {
			size_t k = 0;
			for (size_t i = 0; i < len && k + 1 < sizeof(d->header); i++)
				if (p[s + i] != ' ' && p[s + i] != '\t')
					d->header[k++] = p[s + i];
			d->header[k] = 0;
			d->header_line = ln;
			have_header = true;
			continue;
		}
		nwn_tline t;
		nwn_split_line(p + s, len, &t, ',');
		if (t.n != ncols)
			return lfs_fail_at(err, file, ln, t.n > ncols && t.n <= 16 ? t.col[ncols] : (unsigned)len + 1,
					   "expected %u fields, found %s%u", ncols, t.n > 16 ? "more than " : "",
					   t.n > 16 ? 16 : t.n);
		if (!lfs_grow32((void **)&d->val, &d->cap, d->rows + 1, (size_t)ncols * sizeof(float)))
			return lfs_nomem(err, "apply view");
		uint32_t *nl = realloc(d->line, (size_t)d->cap * sizeof(uint32_t));
		if (!nl)
			return lfs_nomem(err, "apply view");
		d->line = nl;
		for (uint32_t k = 0; k < ncols; k++)
			if (!nwn_tok_float(t.s[k], t.len[k], &d->val[(size_t)d->rows * ncols + k]))
				return lfs_fail_at(err, file, ln, t.col[k], "'%.*s' is not a number",
						   (int)(t.len[k] > 40 ? 40 : t.len[k]), t.s[k]);
		d->line[d->rows++] = ln;
	}
	if (!have_header)
		return lfs_fail_at(err, file, 1, 1, "missing header row");
	return LFS_OK;
}

