/**
 * @file strbuf.c
 * Growable byte buffer (see strbuf.h).
 */
#include "strbuf.h"
#include "floatfmt.h"
#include "mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local size_t sb_limit;
static _Thread_local bool sb_limit_hit;

size_t lfs_sb_set_limit(size_t max)
{
	size_t old = sb_limit;
	sb_limit = max;
	sb_limit_hit = false;
	return old;
}

bool lfs_sb_limit_hit(void)
{
	return sb_limit_hit;
}

static bool reserve(lfs_sb *sb, size_t extra)
{
	if (sb->failed)
		return false;
	if (extra > SIZE_MAX - 1 - sb->len) {
		sb->failed = 1;
		return false;
	}
	size_t need = sb->len + extra + 1;
	if (need <= sb->cap)
		return true;
	if (sb_limit && need > sb_limit) {
		sb->failed = 1;
		sb_limit_hit = true;
		return false;
	}
	if (sb_limit && sb->cap > sb_limit / 2) {
		/* doubling would pass the bound: grow to the bound exactly */
		void *q = realloc(sb->data, sb_limit);
		if (!q) {
			sb->failed = 1;
			return false;
		}
		sb->data = q;
		sb->cap = sb_limit;
		return true;
	}
	void *d = sb->data;
	/* at least 256 bytes: the capacity stays 256 times a power of two */
	if (!lfs_grow(&d, &sb->cap, need < 256 ? 256 : need, 1)) {
		sb->failed = 1;
		return false;
	}
	sb->data = d;
	return true;
}

void lfs_sb_put(lfs_sb *sb, const void *p, size_t n)
{
	if (!reserve(sb, n))
		return;
	if (n)
		memcpy(sb->data + sb->len, p, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

void lfs_sb_puts(lfs_sb *sb, const char *s)
{
	lfs_sb_put(sb, s, strlen(s));
}

void lfs_sb_putc(lfs_sb *sb, char c)
{
	lfs_sb_put(sb, &c, 1);
}

void lfs_sb_printf(lfs_sb *sb, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->failed = 1;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		lfs_sb_put(sb, small, (size_t)n);
		return;
	}
	if (!reserve(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void lfs_sb_float(lfs_sb *sb, float f)
{
	if (!sb->failed && sb->cap - sb->len >= LFS_FLOAT_BUFSZ) {
		/* room for any float and its NUL: format in place (no copy) */
		sb->len += lfs_fmt_float(sb->data + sb->len, f);
		return;
	}
	char buf[LFS_FLOAT_BUFSZ];
	size_t n = lfs_fmt_float(buf, f);
	lfs_sb_put(sb, buf, n);
}

void lfs_sb_floats(lfs_sb *sb, const float *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i) {
			if (!sb->failed && sb->cap - sb->len > LFS_FLOAT_BUFSZ)
				sb->data[sb->len++] = ' '; /* the float's NUL follows */
			else
				lfs_sb_putc(sb, ' ');
		}
		lfs_sb_float(sb, f[i]);
	}
}

void lfs_sb_float_bits(lfs_sb *sb, float f)
{
	char buf[LFS_FLOAT_BUFSZ];
	size_t n = lfs_fmt_float_bits(buf, f);
	lfs_sb_put(sb, buf, n);
}

void lfs_sb_floats_bits(lfs_sb *sb, const float *f, size_t n, char sep)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			lfs_sb_putc(sb, sep);
		lfs_sb_float_bits(sb, f[i]);
	}
}

bool lfs_sb_ok(const lfs_sb *sb)
{
	return !sb->failed;
}

char *lfs_sb_take(lfs_sb *sb, size_t *len)
{
	char *d = sb->data;
	if (len)
		*len = sb->len;
	if (!d)
		d = calloc(1, 1);
	sb->data = NULL;
	sb->len = sb->cap = 0;
	sb->failed = 0;
	return d;
}

void lfs_sb_free(lfs_sb *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
	sb->failed = 0;
}
