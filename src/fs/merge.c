/**
 * @file merge.c
 * Three-way merge of texts by line (see merge.h).
 */
#include "merge.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One line of a text: its bytes with the terminator, and the length without "\r\n"/"\n". */
struct line {
	const char *p;
	size_t n, cn;
	uint64_t h;
};

/* A change: base lines [bs, be) become side lines [ss, se). */
struct hunk {
	size_t bs, be, ss, se;
};

static uint64_t line_hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Split @p s into lines (*out malloc'd; NULL when there are none). 0 or ENOMEM. */
static int split_lines(const char *s, size_t n, struct line **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n')
			k++;
	if (n && s[n - 1] != '\n')
		k++;
	if (!k)
		return 0;
	struct line *v = malloc(k * sizeof(*v));
	if (!v)
		return ENOMEM;
	size_t at = 0, j = 0;
	while (at < n) {
		const char *nl = memchr(s + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (s + at)) + 1 : n - at;
		size_t cn = len;
		if (cn && s[at + cn - 1] == '\n') {
			cn--;
			if (cn && s[at + cn - 1] == '\r')
				cn--;
		}
		v[j].p = s + at;
		v[j].n = len;
		v[j].cn = cn;
		v[j].h = line_hash(s + at, cn);
		j++;
		at += len;
	}
	*out = v;
	*count = j;
	return 0;
}

static bool line_eq(const struct line *a, const struct line *b)
{
	return a->h == b->h && a->cn == b->cn && memcmp(a->p, b->p, a->cn) == 0;
}

/*
 * Myers' greedy forward search between a[0..na) and b[0..nb); marks the
 * lines of a that are deleted (dela) and of b that are inserted (insb).
 * Returns 0, ENOMEM, or ERANGE when the distance exceeds @p max_d (0: none).
 */
static int myers(const struct line *a, size_t na, const struct line *b, size_t nb, size_t max_d,
		 bool *dela, bool *insb)
{
	long N = (long)na, M = (long)nb;
	long dmax = N + M;
	if (max_d && (long)max_d < dmax)
		dmax = (long)max_d;
	/* V of every step d (2d+1 entries, k = -d..d at index k+d), for the way back. */
	long **vs = calloc((size_t)dmax + 1, sizeof(*vs));
	if (!vs)
		return ENOMEM;
	long found = -1;
	int r = 0;
	for (long d = 0; d <= dmax && found < 0; d++) {
		long *v = malloc((size_t)(2 * d + 1) * sizeof(*v));
		if (!v) {
			r = ENOMEM;
			break;
		}
		vs[d] = v;
		const long *pv = d ? vs[d - 1] : NULL; /* index k + (d-1) */
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (d == 0)
				x = 0;
			else if (k == -d || (k != d && pv[k - 1 + d - 1] < pv[k + 1 + d - 1]))
				x = pv[k + 1 + d - 1]; /* down: b[y] inserted */
			else
				x = pv[k - 1 + d - 1] + 1; /* right: a[x] deleted */
			long y = x - k;
			while (x < N && y < M && line_eq(&a[x], &b[y])) {
				x++;
				y++;
			}
			v[k + d] = x;
			if (x >= N && y >= M) {
				found = d;
				break;
			}
		}
	}
	if (!r && found < 0)
		r = ERANGE;
	if (!r) {
		long x = N, y = M;
		for (long d = found; d > 0; d--) {
			const long *pv = vs[d - 1];
			long k = x - y;
			bool down = k == -d || (k != d && pv[k - 1 + d - 1] < pv[k + 1 + d - 1]);
			long pk = down ? k + 1 : k - 1;
			long px = pv[pk + d - 1], py = px - pk;
			if (down)
				insb[py] = true;
			else
				dela[px] = true;
			x = px;
			y = py;
		}
	}
	for (long d = 0; d <= dmax; d++)
		free(vs[d]);
	free(vs);
	return r;
}

/*
 * The changes from a[0..na) to b[0..nb) as hunks (*out malloc'd, possibly
 * NULL with *nh 0). Common head and tail are taken first; beyond @p max_d
 * the middle is one hunk. 0 or ENOMEM.
 */
static int diff_lines(const struct line *a, size_t na, const struct line *b, size_t nb, size_t max_d,
		      struct hunk **out, size_t *nh)
{
	*out = NULL;
	*nh = 0;
	size_t pre = 0;
	while (pre < na && pre < nb && line_eq(&a[pre], &b[pre]))
		pre++;
	size_t suf = 0;
	while (suf < na - pre && suf < nb - pre && line_eq(&a[na - 1 - suf], &b[nb - 1 - suf]))
		suf++;
	size_t N = na - pre - suf, M = nb - pre - suf;
	if (!N && !M)
		return 0;
	bool *dela = calloc(N + 1, 1), *insb = calloc(M + 1, 1);
	struct hunk *h = malloc((N + M + 1) * sizeof(*h));
	if (!dela || !insb || !h) {
		free(dela);
		free(insb);
		free(h);
		return ENOMEM;
	}
	int r = N && M ? myers(a + pre, N, b + pre, M, max_d, dela, insb) : ERANGE;
	if (r == ERANGE) {
		/* One change of the whole middle (also: one side empty there). */
		memset(dela, 1, N);
		memset(insb, 1, M);
		r = 0;
	}
	if (r) {
		free(dela);
		free(insb);
		free(h);
		return r;
	}
	size_t i = 0, j = 0, k = 0;
	while (i < N || j < M) {
		if (i < N && j < M && !dela[i] && !insb[j]) {
			i++;
			j++;
			continue;
		}
		size_t hi = i, hj = j;
		while ((i < N && dela[i]) || (j < M && insb[j])) {
			while (i < N && dela[i])
				i++;
			while (j < M && insb[j])
				j++;
		}
		h[k++] = (struct hunk){ pre + hi, pre + i, pre + hj, pre + j };
	}
	free(dela);
	free(insb);
	*out = h;
	*nh = k;
	return 0;
}

/* Do hunk @p h and the group base range [gs, ge) overlap (merge.h)? */
static bool overlaps(const struct hunk *h, size_t gs, size_t ge)
{
	if (h->bs < h->be && gs < ge)
		return h->bs < ge && gs < h->be;
	if (h->bs == h->be) /* h inserts */
		return h->bs == gs || (gs < h->bs && h->bs < ge);
	return h->bs == gs || (h->bs < gs && gs < h->be); /* the group inserts */
}

struct obuf {
	char *p;
	size_t n, cap;
};

static int out_line(struct obuf *o, const struct line *l)
{
	size_t need = o->n + l->n + 2;
	if (need > o->cap) {
		size_t c = o->cap ? o->cap : 256;
		while (c < need)
			c *= 2;
		char *q = realloc(o->p, c);
		if (!q)
			return ENOMEM;
		o->p = q;
		o->cap = c;
	}
	if (o->n && o->p[o->n - 1] != '\n')
		o->p[o->n++] = '\n';
	memcpy(o->p + o->n, l->p, l->n);
	o->n += l->n;
	return 0;
}

static int out_lines(struct obuf *o, const struct line *v, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (out_line(o, &v[i]))
			return ENOMEM;
	return 0;
}

static bool lines_eq(const struct line *a, size_t an, const struct line *b, size_t bn)
{
	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (!line_eq(&a[i], &b[i]))
			return false;
	return true;
}

void lfs_merge_result_free(lfs_merge_result *r)
{
	if (!r)
		return;
	free(r->text);
	free(r->conflicts);
	memset(r, 0, sizeof(*r));
}

int lfs_merge3(const char *base, size_t bn, const char *mine, size_t mn, const char *theirs,
	       size_t tn, size_t max_d, lfs_merge_result *out)
{
	memset(out, 0, sizeof(*out));
	struct line *B = NULL, *A = NULL, *T = NULL;
	size_t nb = 0, na = 0, nt = 0, nha = 0, nht = 0, ncf = 0;
	struct hunk *ha = NULL, *ht = NULL;
	lfs_merge_conflict *cf = NULL;
	struct obuf o = { 0 };
	int r = split_lines(base, bn, &B, &nb);
	if (!r)
		r = split_lines(mine, mn, &A, &na);
	if (!r)
		r = split_lines(theirs, tn, &T, &nt);
	if (!r)
		r = diff_lines(B, nb, A, na, max_d, &ha, &nha);
	if (!r)
		r = diff_lines(B, nb, T, nt, max_d, &ht, &nht);
	if (!r && nha + nht && !(cf = malloc((nha + nht) * sizeof(*cf))))
		r = ENOMEM;
	size_t i = 0, j = 0, bpos = 0, mpos = 0, tpos = 0;
	while (!r && (i < nha || j < nht)) {
		size_t gs = i < nha && (j >= nht || ha[i].bs <= ht[j].bs) ? ha[i].bs : ht[j].bs;
		/* Unchanged base lines before the group: mine's bytes. */
		r = out_lines(&o, A, mpos, mpos + (gs - bpos));
		mpos += gs - bpos;
		tpos += gs - bpos;
		size_t ge = gs;
		long dm = 0, dt = 0;
		bool in_a = false, in_t = false, grew = true, first = true;
		while (grew) {
			grew = false;
			if (i < nha && (first ? ha[i].bs == gs : overlaps(&ha[i], gs, ge))) {
				if (ha[i].be > ge)
					ge = ha[i].be;
				dm += (long)(ha[i].se - ha[i].ss) - (long)(ha[i].be - ha[i].bs);
				in_a = grew = true;
				i++;
			}
			if (j < nht && (first && !in_a ? ht[j].bs == gs : overlaps(&ht[j], gs, ge))) {
				if (ht[j].be > ge)
					ge = ht[j].be;
				dt += (long)(ht[j].se - ht[j].ss) - (long)(ht[j].be - ht[j].bs);
				in_t = grew = true;
				j++;
			}
			first = false;
		}
		size_t me = (size_t)((long)mpos + (long)(ge - gs) + dm);
		size_t te = (size_t)((long)tpos + (long)(ge - gs) + dt);
		if (r)
			break;
		if (!in_t) {
			r = out_lines(&o, A, mpos, me);
		} else if (!in_a) {
			r = out_lines(&o, T, tpos, te);
		} else if (lines_eq(A + mpos, me - mpos, T + tpos, te - tpos)) {
			r = out_lines(&o, A, mpos, me); /* the same change on both sides */
		} else {
			cf[ncf++] = (lfs_merge_conflict){ mpos + 1, me - mpos, tpos + 1, te - tpos, gs + 1,
							  ge - gs };
		}
		mpos = me;
		tpos = te;
		bpos = ge;
	}
	if (!r)
		r = out_lines(&o, A, mpos, na);
	if (!r && !ncf) {
		char *q = realloc(o.p, o.n + 1);
		if (!q) {
			r = ENOMEM;
		} else {
			q[o.n] = '\0';
			out->text = q;
			out->len = o.n;
			o.p = NULL;
		}
	}
	if (!r && ncf) {
		out->conflicts = cf;
		out->nconflicts = ncf;
		cf = NULL;
	}
	free(o.p);
	free(cf);
	free(ha);
	free(ht);
	free(B);
	free(A);
	free(T);
	if (r)
		lfs_merge_result_free(out);
	return r;
}

/*
 * Does @p mine already hold every change from @p older to @p newer (merging
 * those changes onto it changes nothing, and does not conflict)? 0 with
 * *yes set, or ENOMEM.
 */
static int holds_changes(const lfs_merge_text *older, const lfs_merge_text *newer, const char *mine,
			 size_t mn, size_t max_d, bool *yes)
{
	lfs_merge_result m;
	int r = lfs_merge3(older->data, older->n, mine, mn, newer->data, newer->n, max_d, &m);
	if (r)
		return r;
	*yes = !m.nconflicts && m.len == mn && (mn == 0 || memcmp(m.text, mine, mn) == 0);
	lfs_merge_result_free(&m);
	return 0;
}

int lfs_merge3_bases(const lfs_merge_text *bases, size_t nbases, const char *mine, size_t mn,
		     const char *theirs, size_t tn, size_t max_d, lfs_merge_result *out, size_t *chosen)
{
	memset(out, 0, sizeof(*out));
	*chosen = 0;
	if (!nbases)
		return EINVAL;
	/* The newest candidate that passes, whose merge is clean; else the
	 * conflicts of the newest one that passes (candidate 0 always does). */
	lfs_merge_result fallback = { 0 };
	bool have_fallback = false;
	size_t fb_i = 0;
	for (size_t i = nbases; i-- > 0;) {
		bool ok = true;
		for (size_t j = 0; j < i && ok; j++) {
			int r = holds_changes(&bases[j], &bases[i], mine, mn, max_d, &ok);
			if (r) {
				lfs_merge_result_free(&fallback);
				return r;
			}
		}
		if (!ok)
			continue;
		lfs_merge_result m;
		int r = lfs_merge3(bases[i].data, bases[i].n, mine, mn, theirs, tn, max_d, &m);
		if (r) {
			lfs_merge_result_free(&fallback);
			return r;
		}
		if (!m.nconflicts) {
			lfs_merge_result_free(&fallback);
			*out = m;
			*chosen = i;
			return 0;
		}
		if (!have_fallback) {
			fallback = m;
			fb_i = i;
			have_fallback = true;
		} else {
			lfs_merge_result_free(&m);
		}
	}
	*out = fallback;
	*chosen = fb_i;
	return 0;
}
