/**
 * @file errlog.c
 * Failure list behind /.legacyfs/errors (see errlog.h).
 */
#include "errlog.h"

#include <string.h>

static void put_escaped(lfs_sb *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			lfs_sb_puts(sb, "\\n");
		else if (*s == '\\')
			lfs_sb_puts(sb, "\\\\");
		else
			lfs_sb_putc(sb, *s);
	}
}

bool lfs_errlog_add(lfs_errlog *l, const char *rel, const char *msg)
{
	lfs_sb line = { 0 };
	put_escaped(&line, rel);
	lfs_sb_puts(&line, ": ");
	put_escaped(&line, msg);
	lfs_sb_putc(&line, '\n');
	if (!lfs_sb_ok(&line)) {
		lfs_sb_free(&line);
		return false;
	}
	/* Already listed? Lines are short and failures rare: a linear scan is fine. */
	const char *p = l->text.data;
	const char *end = p ? p + l->text.len : NULL;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (len == line.len && memcmp(p, line.data, len) == 0) {
			lfs_sb_free(&line);
			return false;
		}
		p += len;
	}
	size_t before = l->text.len;
	lfs_sb_put(&l->text, line.data, line.len);
	lfs_sb_free(&line);
	if (!lfs_sb_ok(&l->text)) {
		/* Keep what we had; the sticky failed state would drop later lines. */
		l->text.failed = 0;
		l->text.len = before;
		return false;
	}
	l->n++;
	clock_gettime(CLOCK_REALTIME, &l->mtime);
	return true;
}

void lfs_errlog_free(lfs_errlog *l)
{
	lfs_sb_free(&l->text);
	memset(l, 0, sizeof(*l));
}
