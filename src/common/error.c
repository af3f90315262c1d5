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
	snprintf(e->msg, sizeof(e->msg), "%s:%u:%u: %s", file ? file : "<input>", line, col, detail);
	return LFS_ERR_PARSE;
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
