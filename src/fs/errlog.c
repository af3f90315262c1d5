/**
 * @file errlog.c
 * Failure list behind /.legacyfs/errors (see errlog.h).
 */
#include "errlog.h"

#include <stdio.h>
#include <string.h>

/* The escape of the byte at @p p (with p[1] for a 0xC2 C1 pair) into @p out;
 * returns its length and the bytes it takes from the input (*take). */
static size_t escape_one(const unsigned char *p, char out[9], size_t *take)
{
	unsigned char c = p[0];
	*take = 1;
	switch (c) {
	case '\\':
		memcpy(out, "\\\\", 2);
		return 2;
	case '\n':
		memcpy(out, "\\n", 2);
		return 2;
	case '\r':
		memcpy(out, "\\r", 2);
		return 2;
	case '\t':
		memcpy(out, "\\t", 2);
		return 2;
	default:
		break;
	}
	if (c < 0x20 || c == 0x7f)
		return (size_t)snprintf(out, 9, "\\x%02X", c);
	if (c == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
		*take = 2;
		return (size_t)snprintf(out, 9, "\\xC2\\x%02X", p[1]);
	}
	out[0] = (char)c;
	return 1;
}

void lfs_errlog_escape(lfs_sb *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		char e[9];
		size_t take, n = escape_one(p, e, &take);
		lfs_sb_put(sb, e, n);
		p += take;
	}
}

char *lfs_errlog_escape_to(char *dst, size_t dstsz, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	while (*p) {
		char e[9];
		size_t take, n = escape_one(p, e, &take);
		if (o + n >= dstsz)
			break;
		memcpy(dst + o, e, n);
		o += n;
		p += take;
	}
	dst[o] = '\0';
	return dst;
}

bool lfs_errlog_add(lfs_errlog *l, const char *rel, const char *msg)
{
	lfs_sb line = { 0 };
	lfs_errlog_escape(&line, rel);
	lfs_sb_puts(&line, ": ");
	lfs_errlog_escape(&line, msg);
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
