/**
 * @file nwn_obj_read.c
 * The NWN apply's OBJ text reader (v, vt, vn, f; polygons split into fans)
 * and the line tokenizer it shares with nwn_csv_read.c. To be replaced by
 * the shared OBJ/CSV reader.
 */

#include "nwn_obj_read.h"

#include <stdlib.h>
#include <string.h>

#include "../common/floatfmt.h"
#include "../common/mem.h"
#include "mdl_parse.h"

void nwn_obj_free_doc(nwn_objdoc *d)
{
	free(d->v);
	free(d->vt);
	free(d->vn);
	free(d->f);
	free(d->fline);
}

void nwn_split_line(const char *p, size_t len, nwn_tline *t, char sep)
{
	t->n = 0;
	size_t i = 0;
	while (i < len && t->n < 16) {
		if (sep == ' ') {
			while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
				i++;
			if (i >= len)
				break;
			size_t s = i;
			while (i < len && p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
				i++;
			t->s[t->n] = p + s;
			t->len[t->n] = (uint32_t)(i - s);
			t->col[t->n] = (uint32_t)s + 1;
			t->n++;
		} else {
			size_t s = i;
			while (i < len && p[i] != sep)
				i++;
			size_t a0 = s, b0 = i;
			while (a0 < b0 && (p[a0] == ' ' || p[a0] == '\t'))
				a0++;
			while (b0 > a0 && (p[b0 - 1] == ' ' || p[b0 - 1] == '\t' || p[b0 - 1] == '\r'))
				b0--;
			t->s[t->n] = p + a0;
			t->len[t->n] = (uint32_t)(b0 - a0);
			t->col[t->n] = (uint32_t)a0 + 1;
			t->n++;
			if (i < len)
				i++; /* skip separator */
			else
				break;
			if (i == len) { /* trailing separator: one more empty field */
				if (t->n < 16) {
					t->s[t->n] = p + i;
					t->len[t->n] = 0;
					t->col[t->n] = (uint32_t)i + 1;
					t->n++;
				}
				break;
			}
		}
	}
	if (i < len && t->n == 16)
		t->n = 17; /* too many: callers report it */
}

bool nwn_tok_float(const char *s, uint32_t len, float *v)
{
	return len && lfs_parse_float(s, len, v);
}

bool nwn_tok_int(const char *s, uint32_t len, int64_t *v)
{
	char b[24];
	if (!len || len >= sizeof(b))
		return false;
	memcpy(b, s, len);
	b[len] = 0;
	return mdl_tok_int(b, v);
}

lfs_err nwn_obj_read(lfs_error *err, const char *file, const char *p, size_t n, nwn_objdoc *d)
{
	memset(d, 0, sizeof(*d));
	uint32_t line = 0;
	size_t pos = 0;
	while (pos < n) {
		size_t s = pos;
		while (pos < n && p[pos] != '\n')
			pos++;
		size_t len = pos - s;
		if (pos < n)
			pos++;
		line++;
		nwn_tline t;
		nwn_split_line(p + s, len, &t, ' ');
		if (!t.n || t.s[0][0] == '#')
			continue;
		if (memchr(p + s, '\0', len))
			return lfs_fail_at(err, file, line, 1, "NUL byte in OBJ text");
		const char *kw = t.s[0];
		uint32_t kl = t.len[0];
#define KW(x) (kl == sizeof(x) - 1 && !memcmp(kw, x, kl))
		if (KW("v") || KW("vt") || KW("vn")) {
			uint32_t want = KW("vt") ? 2 : 3;
			uint32_t got = t.n - 1;
			if (KW("vt") && got == 3)
				got = 2; /* optional w, must be 0 */
			if (t.n > 16 || got != want)
				return lfs_fail_at(err, file, line, t.n > 16 ? 1 : t.col[t.n - 1],
						   "expected %u numbers after '%.*s'", want, (int)kl, kw);
			float v[3];
			for (uint32_t k = 0; k + 1 < t.n; k++)
				if (!nwn_tok_float(t.s[k + 1], t.len[k + 1], &v[k]))
					return lfs_fail_at(err, file, line, t.col[k + 1],
							   "'%.*s' is not a number",
							   (int)(t.len[k + 1] > 40 ? 40 : t.len[k + 1]),
							   t.s[k + 1]);
			if (KW("vt") && t.n == 4 && v[2] != 0.0f)
				return lfs_fail_at(err, file, line, t.col[3],
						   "texture w coordinates are not stored: must be 0");
			float **arr = KW("v") ? &d->v : KW("vt") ? &d->vt : &d->vn;
			uint32_t *cnt = KW("v") ? &d->nv : KW("vt") ? &d->nvt : &d->nvn;
			uint32_t *cap = KW("v") ? &d->cv : KW("vt") ? &d->cvt : &d->cvn;
			if (!lfs_grow32((void **)arr, cap, *cnt + 1, want * sizeof(float)))
				return lfs_nomem(err, "apply view");
			memcpy(*arr + (size_t)*cnt * want, v, want * sizeof(float));
			(*cnt)++;
		} else if (KW("f")) {
			if (t.n < 4)
				return lfs_fail_at(err, file, line, t.col[t.n - 1], "a face needs 3 corners");
			if (t.n > 16)
				return lfs_fail_at(err, file, line, 1, "a polygon has at most 15 corners");
			/* corners first, then a fan of triangles (0, i, i+1) */
			int32_t corner[15][3];
			uint32_t nc = t.n - 1;
			for (uint32_t c = 0; c < nc; c++) {
				nwn_tline q;
				nwn_split_line(t.s[c + 1], t.len[c + 1], &q, '/');
				if (q.n > 3 || q.n == 0)
					return lfs_fail_at(err, file, line, t.col[c + 1],
							   "bad face corner");
				uint32_t counts[3] = { d->nv, d->nvt, d->nvn };
				for (uint32_t k = 0; k < 3; k++) {
					int32_t *slot = &corner[c][k];
					*slot = -1;
					if (k >= q.n || (q.len[k] == 0 && k > 0))
						continue;
					int64_t x;
					if (!nwn_tok_int(q.s[k], q.len[k], &x) || x == 0)
						return lfs_fail_at(err, file, line,
								   t.col[c + 1] + (uint32_t)(q.s[k] - t.s[c + 1]),
								   "bad index in face corner");
					if (x < 0)
						x += (int64_t)counts[k] + 1;
					if (x < 1 || x > (int64_t)counts[k])
						return lfs_fail_at(err, file, line,
								   t.col[c + 1] + (uint32_t)(q.s[k] - t.s[c + 1]),
								   "index %lld out of range (1..%u)",
								   (long long)x, counts[k]);
					*slot = (int32_t)(x - 1);
				}
			}
			if (nc > 3)
				d->polygons++;
			for (uint32_t tri = 0; tri + 2 < nc; tri++) {
				if (!lfs_grow32((void **)&d->f, &d->cf, d->nf + 1, 9 * sizeof(int32_t)))
					return lfs_nomem(err, "apply view");
				uint32_t *fl = realloc(d->fline, (size_t)d->cf * sizeof(uint32_t));
				if (!fl)
					return lfs_nomem(err, "apply view");
				d->fline = fl; /* same capacity as f */
				const uint32_t cs[3] = { 0, tri + 1, tri + 2 };
				for (uint32_t c = 0; c < 3; c++)
					memcpy(&d->f[9 * (size_t)d->nf + 3 * c], corner[cs[c]], 3 * sizeof(int32_t));
				d->fline[d->nf] = line;
				d->nf++;
			}
		} else if (KW("o") || KW("g") || KW("s") || KW("usemtl") || KW("mtllib")) {
			continue; /* names, smoothing, materials: not stored per mesh */
		} else {
			return lfs_fail_at(err, file, line, 1, "unknown OBJ statement '%.*s'",
					   (int)(kl > 40 ? 40 : kl), kw);
		}
#undef KW
	}
	return LFS_OK;
}

