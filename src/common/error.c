/**
 * @file error.c
 * Construction of lfs_error values (see error.h).
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

lfs_err lfs_fail(lfs_error *e, lfs_err code, size_t offset, const char *structure,
		 const char *fmt, ...)
{
	if (!e)
		return code;
	memset(e, 0, sizeof(*e));
	e->code = code;
	e->offset = offset;
	e->structure = structure;
	char detail[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (offset != SIZE_MAX && structure)
		snprintf(e->msg, sizeof(e->msg), "offset 0x%zx (%s): %s", offset, structure, detail);
	else if (structure)
		snprintf(e->msg, sizeof(e->msg), "%s: %s", structure, detail);
	else
		snprintf(e->msg, sizeof(e->msg), "%s", detail);
	return code;
}

lfs_err lfs_fail_at(lfs_error *e, const char *file, unsigned line, unsigned col,
		    const char *fmt, ...)
{
	if (!e)
		return LFS_ERR_PARSE;
	memset(e, 0, sizeof(*e));
	e->code = LFS_ERR_PARSE;
	e->offset = SIZE_MAX;
	e->line = line;
	e->col = col;
	char detail[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(e->msg, sizeof(e->msg), "%s:%u:%u: error: %s", file ? file : "<input>", line, col,
		 detail);
	return LFS_ERR_PARSE;
}

void lfs_warn_at(lfs_warnings *w, const char *file, unsigned line, unsigned col,
		 const char *fmt, ...)
{
	if (!w)
		return;
	w->count++;
	char detail[256], one[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	int k = snprintf(one, sizeof(one), "%s:%u:%u: warning: %s\n", file ? file : "<input>", line,
			 col, detail);
	if (k <= 0)
		return;
	size_t m = (size_t)k < sizeof(one) ? (size_t)k : sizeof(one) - 1;
	if (w->len + m + 1 > sizeof(w->text))
		return;
	memcpy(w->text + w->len, one, m);
	w->len += m;
	w->text[w->len] = 0;
}

const char *lfs_err_name(lfs_err code)
{
	switch (code) {
	case LFS_OK: return "ok";
	case LFS_ERR_NOMEM: return "out of memory";
	case LFS_ERR_IO: return "I/O error";
	case LFS_ERR_NOTFORMAT: return "not this format";
	case LFS_ERR_CORRUPT: return "corrupt input";
	case LFS_ERR_UNSUPPORTED: return "unsupported feature";
	case LFS_ERR_PARSE: return "parse error";
	}
	return "unknown error";
}
