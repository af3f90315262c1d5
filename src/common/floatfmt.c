/**
 * @file floatfmt.c
 * Shortest round-trip float32 formatting (see floatfmt.h).
 *
 * Two implementations with identical output:
 * - lfs_fmt_float_ref(): binary search over the "%.<p>g" precision, each
 *   candidate checked with strtof (p = 9 always round-trips for binary32).
 * - fmt_fast(): the same decision made with exact integer arithmetic (no
 *   128-bit division, no log10)
 *   for 1e-7 <= |f| < 2^24 (nearly every coordinate, UV and key in a model),
 *   about 10x faster; glibc's printf/strtof dominated view generation.
 * tests/unit/test_floatfmt.c checks that both give the same string for every
 * corpus float and a million random bit patterns.
 */
#include "floatfmt.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reads_back(const char *buf, float f)
{
	float g = strtof(buf, NULL);
	return lfs_f32_bits(g) == lfs_f32_bits(f);
}

size_t lfs_fmt_float_ref(char buf[LFS_FLOAT_BUFSZ], float f)
{
	if (isnan(f))
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, "nan");
	if (isinf(f))
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, f < 0 ? "-inf" : "inf");
	if (f == 0.0f)
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, signbit(f) ? "-0" : "0");
	if (fabsf(f) < 16777216.0f && f == (float)(int32_t)f)
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, "%d", (int)(int32_t)f);

	int lo = 1, hi = 9;
	char tmp[320]; /* %g of a float32 is at most ~16 chars; sized for -Wformat-truncation */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		snprintf(tmp, sizeof(tmp), "%.*g", mid, (double)f);
		if (reads_back(tmp, f))
			hi = mid;
		else
			lo = mid + 1;
	}
	int len = snprintf(tmp, sizeof(tmp), "%.*g", lo, (double)f);
	if (len < 0 || len >= LFS_FLOAT_BUFSZ)
		len = 0;
	memcpy(buf, tmp, (size_t)len);
	buf[len] = '\0';
	return (size_t)len;
}

typedef unsigned __int128 u128;

/* 10^0 .. 10^19; the fast path needs at most 10^17 */
static const uint64_t pow10_tab[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

static u128 pow10_128(int n)
{
	return pow10_tab[n];
}

/*
 * Exact fast path for non-integer normal floats with 1e-7 <= |f| < 2^24.
 * f = m / 2^s exactly (m: 24-bit significand, s >= 1), 10^X <= |f| <
 * 10^(X+1), so -7 <= X <= 7. Everything is done on the 9-digit scale
 * v9 = |f| * 10^(8-X) = m * t / 2^s, t = 10^(8-X) <= 10^15: its integer part
 * V (< 10^9) and the remainder r of the shift (r / 2^s is the fraction).
 * For precision p the candidate is D = round-half-even(v9 / 10^(9-p)) (what
 * "%.<p>g" prints), from V's 32-bit quotient and remainder and r; it reads
 * back as f iff D * 10^(9-p) lies in f's rounding interval on the same
 * scale, [(4m - 2) t, (4m + 2) t] / 2^(s+2) ((4m - 1) below a power of two;
 * bounds included when m is even: strtof rounds ties to even). The products
 * stay below 2^120: multiplications and shifts of 128-bit integers, no
 * 128-bit division. Returns 0 when f is outside the range (the caller uses
 * the snprintf reference).
 */
static size_t fmt_fast(char *buf, float f)
{
	uint32_t u = lfs_f32_bits(f);
	int bexp = (int)((u >> 23) & 0xFF);
	if (bexp == 0 || bexp == 0xFF)
		return 0;
	uint64_t m = (u & 0x7FFFFF) | 0x800000;
	int s = 150 - bexp; /* |f| = m / 2^s */
	if (s < 1 || s > 60)
		return 0;
	/* X = floor(log10 |f|): floor(e2 log10 2) from the binary exponent
	 * (1233 / 4096 ~ log10 2), then corrected exactly (|f| < 2^(e2+1)) */
	int e2 = bexp - 127;
	int X = (e2 * 1233) >> 12; /* arithmetic shift: floor */
	for (int iter = 0; iter < 3; iter++) {
		u128 lhs, rhs;
		if (X >= 0) {
			lhs = (u128)m;
			rhs = pow10_128(X) << s;
		} else {
			lhs = (u128)m * pow10_128(-X);
			rhs = (u128)1 << s;
		}
		if (lhs < rhs) {
			X--;
			continue;
		}
		if (X + 1 >= 0) {
			lhs = (u128)m;
			rhs = pow10_128(X + 1) << s;
		} else {
			lhs = (u128)m * pow10_128(-(X + 1));
			rhs = (u128)1 << s;
		}
		if (lhs >= rhs) {
			X++;
			continue;
		}
		break;
	}
	if (X < -7 || X > 7)
		return 0;
	uint64_t t = pow10_tab[8 - X];
	u128 N = (u128)m * t;
	uint64_t V = (uint64_t)(N >> s); /* < 10^9 */
	u128 r = N & (((u128)1 << s) - 1), half = (u128)1 << (s - 1);
	bool even = (m & 1) == 0;
	u128 hi = (u128)(4 * m + 2) * t;
	u128 lo = (u128)(m == 0x800000 ? 4 * m - 1 : 4 * m - 2) * t;
	/* shortest p: "p digits read back" is monotonic in p and p = 9 always
	 * works for binary32: binary search, keeping D of the smallest success */
	uint32_t V32 = (uint32_t)V;
	int lo_p = 1, hi_p = 9, p = 9;
	uint64_t D = 0;
	bool have = false;
	while (lo_p <= hi_p) {
		int mid = (lo_p + hi_p) / 2;
		uint32_t P = (uint32_t)pow10_tab[9 - mid];
		uint32_t q = V32 / P, rem = V32 % P;
		/* fraction of v9 / P beyond q: (rem + r / 2^s) / P, against 1/2 */
		uint64_t x = 2 * (uint64_t)rem;
		bool up;
		if (x > P)
			up = true;
		else if (x + 1 < P)
			up = false;
		else if (x == P)
			up = r != 0 || (q & 1);
		else /* x == P - 1 (P = 1): r / 2^s against 1/2 */
			up = r > half || (r == half && (q & 1));
		uint64_t d = (uint64_t)q + up;
		u128 c = ((u128)(d * P)) << (s + 2);
		if (even ? (c >= lo && c <= hi) : (c > lo && c < hi)) {
			D = d;
			p = mid;
			have = true;
			hi_p = mid - 1;
		} else {
			lo_p = mid + 1;
		}
	}
	if (!have)
		return 0;
	{
		/* format like "%.<p>g" */
		int x = X;
		if (D == pow10_128(p)) { /* rounding carried into a new digit */
			D /= 10;
			x++;
		}
		char dig[16];
		int nd = 0;
		uint64_t dv = (uint64_t)D;
		char rev[16];
		do {
			rev[nd++] = (char)('0' + dv % 10);
			dv /= 10;
		} while (dv);
		while (nd < p) /* D has exactly p digits unless leading zeros (impossible) */
			rev[nd++] = '0';
		for (int i = 0; i < nd; i++)
			dig[i] = rev[nd - 1 - i];
		while (nd > 1 && dig[nd - 1] == '0')
			nd--;
		char *o = buf;
		if (signbit(f))
			*o++ = '-';
		if (x >= -4 && x < p) {
			if (x < 0) {
				*o++ = '0';
				*o++ = '.';
				for (int i = 0; i < -x - 1; i++)
					*o++ = '0';
				for (int i = 0; i < nd; i++)
					*o++ = dig[i];
			} else {
				for (int i = 0; i < nd; i++) {
					if (i == x + 1)
						*o++ = '.';
					*o++ = dig[i];
				}
				for (int i = nd; i <= x; i++)
					*o++ = '0';
			}
		} else {
			*o++ = dig[0];
			if (nd > 1) {
				*o++ = '.';
				for (int i = 1; i < nd; i++)
					*o++ = dig[i];
			}
			*o++ = 'e';
			*o++ = x < 0 ? '-' : '+';
			int ax = x < 0 ? -x : x;
			if (ax >= 100)
				*o++ = (char)('0' + ax / 100);
			*o++ = (char)('0' + ax / 10 % 10);
			*o++ = (char)('0' + ax % 10);
		}
		*o = '\0';
		return (size_t)(o - buf);
	}
}

size_t lfs_fmt_float(char buf[LFS_FLOAT_BUFSZ], float f)
{
	if (isnan(f) || isinf(f))
		return lfs_fmt_float_ref(buf, f);
	if (fabsf(f) < 16777216.0f && f == (float)(int32_t)f) {
		/* integers (and +-0) without printf: very common in model text */
		char rev[12];
		size_t n = 0, o = 0;
		uint32_t v = (uint32_t)fabsf(f);
		do {
			rev[n++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		if (signbit(f))
			buf[o++] = '-';
		while (n)
			buf[o++] = rev[--n];
		buf[o] = '\0';
		return o;
	}
	size_t n = fmt_fast(buf, f);
	return n ? n : lfs_fmt_float_ref(buf, f);
}

bool lfs_parse_float(const char *s, size_t len, float *out)
{
	char tmp[64];
	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	char *end = NULL;
	float v = strtof(tmp, &end);
	if (end != tmp + len)
		return false;
	*out = v;
	return true;
}

size_t lfs_fmt_float_bits(char buf[LFS_FLOAT_BUFSZ], float f)
{
	if (isnan(f))
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, "nan:%08" PRIx32, lfs_f32_bits(f));
	return lfs_fmt_float(buf, f);
}

bool lfs_parse_nan_bits(const char *s, size_t len, uint32_t *bits)
{
	if (len != 12 || strncmp(s, "nan:", 4))
		return false;
	uint32_t u = 0;
	for (size_t i = 4; i < 12; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return false;
		u = u << 4 | (uint32_t)d;
	}
	*bits = u;
	return true;
}

bool lfs_parse_float_bits(const char *s, size_t len, float *out)
{
	uint32_t u;
	if (lfs_parse_nan_bits(s, len, &u)) {
		float f;
		memcpy(&f, &u, 4);
		if (!isnan(f))
			return false;
		*out = f;
		return true;
	}
	return lfs_parse_float(s, len, out);
}
