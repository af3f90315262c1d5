/**
 * @file floatfmt.c
 * Shortest round-trip float32 formatting (see floatfmt.h).
 *
 * Implementations with identical output:
 * - lfs_fmt_float_ref(): binary search over the "%.<p>g" precision, each
 *   candidate checked with strtof (p = 9 always round-trips for binary32).
 * - fmt_fast64(): the same result in 64-bit integers for non-integer
 *   1e-7 <= |f| < 2^23 that are not powers of two (nearly every coordinate,
 *   UV and key in a model): the rounding interval once, the shortest digit
 *   count from it, the correctly rounded digits checked upward; ~20x faster
 *   than the reference (bench/floatfmt_bench).
 * - fmt_fast(): the binary search made with exact 128-bit integer
 *   arithmetic (no 128-bit division, no log10), for the powers of two in
 *   that range.
 * tests/unit/test_floatfmt.c checks that they give the same string for every
 * corpus float, three million random values and a dense sweep of the fast
 * paths' exponent range.
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

/*
 * Write the p-digit significand @p D (10^(p-1) <= D <= 10^p; 10^p when
 * rounding carried into a new digit) with decimal exponent @p X (the value
 * is D * 10^(X - p + 1)) exactly as "%.<p>g" prints it: trailing zeros
 * dropped, fixed notation for -4 <= exponent < p, else d.ddde+XX.
 */
static size_t put_g(char *buf, bool neg, uint64_t D, int p, int X)
{
	if (D == pow10_tab[p]) { /* rounding carried into a new digit */
		D /= 10;
		X++;
	}
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char dig[10];
	uint32_t d32 = (uint32_t)D; /* < 10^9 */
	int left = p;
	for (; left >= 2; left -= 2) {
		memcpy(dig + left - 2, pairs + 2 * (d32 % 100), 2);
		d32 /= 100;
	}
	if (left == 1)
		dig[0] = (char)('0' + d32);
	int nd = p;
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	char *o = buf;
	if (neg)
		*o++ = '-';
	if (X >= -4 && X < p) {
		if (X < 0) {
			*o++ = '0';
			*o++ = '.';
			for (int i = 0; i < -X - 1; i++)
				*o++ = '0';
			for (int i = 0; i < nd; i++)
				*o++ = dig[i];
		} else { /* digits with the point after X + 1 of them (none in an integer) */
			for (int i = 0; i < nd; i++) {
				if (i == X + 1)
					*o++ = '.';
				*o++ = dig[i];
			}
			for (int i = nd; i <= X; i++)
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
		*o++ = X < 0 ? '-' : '+';
		int ax = X < 0 ? -X : X;
		if (ax >= 100)
			*o++ = (char)('0' + ax / 100);
		*o++ = (char)('0' + ax / 10 % 10);
		*o++ = (char)('0' + ax % 10);
	}
	*o = '\0';
	return (size_t)(o - buf);
}

/*
 * Round half to even of v / P where v = q * P + rem + r / 2^s (rem < P,
 * r < 2^s, half = 2^(s-1)): does the quotient q round up? The fraction
 * beyond q is (rem + r / 2^s) / P, compared with 1/2. Both printers'
 * digit choice ("%.<p>g" semantics).
 */
static inline bool round_up(uint32_t q, uint32_t rem, uint32_t P, u128 r, u128 half)
{
	uint64_t x = 2 * (uint64_t)rem;
	if (x > P)
		return true;
	if (x + 1 < P)
		return false;
	if (x == P)
		return r != 0 || (q & 1);
	/* x == P - 1 (P = 1): r / 2^s against 1/2 */
	return r > half || (r == half && (q & 1));
}

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
		uint64_t d = (uint64_t)q + round_up(q, rem, P, r, half);
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
	return put_g(buf, signbit(f), D, p, X);
}

/* 5^0 .. 5^16 (5^15 < 2^35: m * 5^k < 2^59 for k <= 15) */
static const uint64_t pow5_tab[17] = {
	1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull,
	1953125ull, 9765625ull, 48828125ull, 244140625ull, 1220703125ull,
	6103515625ull, 30517578125ull, 152587890625ull,
};

/*
 * The fast path in 64-bit integers, for non-integer normal floats with
 * 1e-7 <= |f| < 2^23 that are not a power of two (fmt_fast() below does
 * those: their rounding interval is narrower below than above, where the
 * "p digits read back" test need not be monotonic in p and the result is
 * what the reference's binary search finds).
 *
 * f = m / 2^s; on the 9-digit scale v9 = |f| * 10^k, k = 8 - X (10^X <=
 * |f| < 10^(X+1)), v9 = m * 5^k / 2^(s-k): N = m * 5^k < 2^59, so V =
 * floor(v9) and the fraction r / 2^(s-k) come from one 64-bit product and
 * a shift. f's rounding interval on that scale, (4N -+ 2 * 5^k) / 2^(s-k+2)
 * (bounds included when m is even: strtof rounds ties to even), is turned
 * once into the integers [lo, hi] it contains. The fewest digits p0 any
 * value in it has is found by dropping decimal digits of lo (rounded up)
 * and hi (rounded down) while a multiple of 10^j is left between them;
 * "%.<p>g" prints the correctly rounded p digits, which read back iff
 * they lie in [lo, hi]; that is checked from p0 on (the interval is
 * symmetric, so the p+1-digit rounding, never farther from v9 than the
 * p-digit one, reads back whenever that does: the first p that works is
 * the reference's). Returns 0 outside the range.
 */
static size_t fmt_fast64(char *buf, float f)
{
	uint32_t u = lfs_f32_bits(f);
	int bexp = (int)((u >> 23) & 0xFF);
	uint32_t frac = u & 0x7FFFFF;
	/* 2^-24 <= |f| < 2^23: X from -8 (rejected below) to 6 */
	if (bexp < 103 || bexp > 149 || frac == 0)
		return 0;
	uint64_t m = frac | 0x800000;
	int s = 150 - bexp; /* |f| = m / 2^s, 1 <= s <= 47 */
	int X = ((bexp - 127) * 1233) >> 12; /* floor(e2 log10 2) for |e2| <= 24 */
	int k, sh;
	uint64_t N, V;
	for (int iter = 0;; iter++) {
		if (X < -7 || X > 7 || iter == 3)
			return 0;
		k = 8 - X;
		N = m * pow5_tab[k];
		sh = s - k;
		V = sh > 0 ? N >> sh : N << -sh;
		if (V >= 1000000000u)
			X++;
		else if (V < 100000000u)
			X--;
		else
			break;
	}
	/* rounding interval [lo, hi] of the integers on the 9-digit scale */
	uint64_t A, W, r, half;
	int shift;
	if (sh > 0) {
		A = 4 * N;
		W = 2 * pow5_tab[k];
		shift = sh + 2;
		r = N & (((uint64_t)1 << sh) - 1);
		half = (uint64_t)1 << (sh - 1);
	} else {
		A = 4 * V;
		W = 2 * (pow5_tab[k] << -sh);
		shift = 2;
		r = 0;
		half = 1;
	}
	uint64_t mask = ((uint64_t)1 << shift) - 1;
	bool odd = m & 1;
	uint64_t hn = A + W, ln = A - W;
	uint64_t hi = hn >> shift, lo = (ln + mask) >> shift;
	if (odd && !(hn & mask))
		hi--;
	if (odd && !(ln & mask))
		lo++;
	/* p0: 9 - the most decimal digits a value in [lo, hi] can end in zeros */
	int p = 9;
	uint32_t V32 = (uint32_t)V, vq = V32; /* vq = V / 10^(9-p) */
	for (uint64_t a = lo, b = hi; p > 1;) {
		uint64_t a2 = (a + 9) / 10, b2 = b / 10;
		if (a2 > b2)
			break;
		a = a2;
		b = b2;
		vq /= 10;
		p--;
	}
	for (int p0 = p; p <= 9; p++) {
		uint32_t P = (uint32_t)pow10_tab[9 - p];
		uint32_t q = p == p0 ? vq : V32 / P, rem = V32 - q * P;
		uint64_t D = (uint64_t)q + round_up(q, rem, P, r, half), c = D * P;
		if (c >= lo && c <= hi)
			return put_g(buf, signbit(f), D, p, X);
	}
	return 0;
}

size_t lfs_fmt_float(char buf[LFS_FLOAT_BUFSZ], float f)
{
	uint32_t u = lfs_f32_bits(f);
	uint32_t bexp = (u >> 23) & 0xFF, frac = u & 0x7FFFFF;
	if (bexp == 0xFF) /* inf, nan */
		return lfs_fmt_float_ref(buf, f);
	/* integers below 2^24 (and +-0) without printf: very common in model
	 * text; |f| = m / 2^(150 - bexp) is one when those low bits of m are 0 */
	if ((bexp == 0 && frac == 0) ||
	    (bexp >= 127 && bexp <= 150 && !(frac & ((1u << (150 - bexp)) - 1)))) {
		uint32_t v = bexp ? (frac | 0x800000) >> (150 - bexp) : 0;
		char rev[12];
		size_t n = 0, o = 0;
		do {
			rev[n++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		if (u >> 31)
			buf[o++] = '-';
		while (n)
			buf[o++] = rev[--n];
		buf[o] = '\0';
		return o;
	}
	size_t n = fmt_fast64(buf, f);
	if (!n)
		n = fmt_fast(buf, f);
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
	if (isinf(v) && lfs_float_has_digit(tmp, len))
		return false; /* a finite number beyond FLT_MAX: it would be stored as inf */
	*out = v;
	return true;
}

bool lfs_float_has_digit(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] >= '0' && s[i] <= '9')
			return true;
	return false;
}

bool lfs_float_overflows(const char *s, size_t len)
{
	char tmp[64];
	if (len == 0 || len >= sizeof(tmp) || !lfs_float_has_digit(s, len))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	char *end = NULL;
	float v = strtof(tmp, &end);
	return end == tmp + len && isinf(v);
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
