/**
 * @file peer_cmp.c
 * Our model.mdl text vs nwnmdlcomp's decompile of the same binary (peer_cmp.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "peer_cmp.h"

/* ---- difference bookkeeping -------------------------------------------- */

void peer_cmp_diff(peer_cmp *c, const char *key, const char *fmt, ...)
{
	peer_dclass *d = NULL;
	for (size_t i = 0; i < c->n_cls; i++)
		if (strcmp(c->cls[i].key, key) == 0)
			d = &c->cls[i];
	if (!d) {
		if (c->n_cls == c->cap_cls) {
			c->cap_cls = c->cap_cls ? c->cap_cls * 2 : 32;
			c->cls = realloc(c->cls, c->cap_cls * sizeof(*c->cls));
			assert_non_null(c->cls);
		}
		d = &c->cls[c->n_cls++];
		memset(d, 0, sizeof(*d));
		snprintf(d->key, sizeof(d->key), "%s", key);
		char msg[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		snprintf(d->example, sizeof(d->example), "%s [%s%s%s]: %s", c->file, c->where,
			 c->node ? " node " : "", c->node ? c->node : "", msg);
	}
	d->count++;
	if (getenv("LFS_PEER_CMP_ALL") && !peer_cmp_rule(key)) {
		/* every undocumented difference, for investigation */
		char msg[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		printf("diff %s: %s [%s%s%s]: %s\n", key, c->file, c->where,
		       c->node ? " node " : "", c->node ? c->node : "", msg);
	}
	if (d->last_file != c->file_no) {
		d->files++;
		d->last_file = c->file_no;
	}
}

/* ---- documented exception classes --------------------------------------- */

/**
 * Every class of difference that is accepted, with the largest number of
 * files it may affect (docs/peer-differences.md lists the same classes with
 * their reasons and measured counts).
 */
const peer_rule peer_rules[] = {
	/* R10 the peer writes "filedependancy <model>.max": not in the binary */
	{ "model:peer-invents:filedependancy", 216 },
	/* R5 peer spellings, values compared under our keyword */
	{ "node:peer-alias:isdynamic", 95 },
	{ "node:peer-alias:setfillumcolor", 10 },
	/* R6 the peer leaves out attributes equal to its defaults */
	{ "node:peer-omits-default:generateflare", 95 },
	{ "node:peer-omits-default:shadow", 9 },
	{ "node:peer-omits-default:beaming", 14 },
	{ "node:peer-omits-default:render", 14 },
	{ "node:peer-omits-default:transparencyhint", 14 },
	{ "node:peer-omits-default:tilefade", 14 },
	{ "node:peer-omits-default:rotatetexture", 14 },
	{ "node:peer-omits-default:lightmapped", 14 },
	/* R8, R9 mesh data the peer does not write */
	{ "mesh:peer-drops-normals", 14 },
	{ "mesh:peer-omits-white-colors", 14 },
	/* R11-R15 (found by peer_read in compiles; none in the corpus binaries) */
	{ "mesh:peer-merges-weights", 0 },
	{ "mesh:peer-colors-excess-precision", 0 },
	{ "mesh:peer-omits-empty", 0 },
	{ "node:peer-prints-empty:blend", 0 },
	{ "node:peer-part-number-order", 0 },
	{ "node:peer-alias:texture3", 0 },
	{ "node:peer-alias:unknowncontroller", 0 },
	/* R2b the peer prints near-identity rotations as 0 0 0 0 */
	{ "node:peer-flattens-near-identity", 12 },
	{ "anim-node:peer-flattens-near-identity", 15 },
	/* R7 type-part fields of animation nodes (printed by the peer only) */
	{ "anim-node:peer-part-field:refmodel", 25 },
	{ "anim-node:peer-part-field:reattachable", 25 },
	{ "anim-node:peer-part-field:ambient", 7 },
	{ "anim-node:peer-part-field:diffuse", 7 },
	{ "anim-node:peer-part-field:specular", 7 },
	{ "anim-node:peer-part-field:shininess", 7 },
	{ "anim-node:peer-part-field:displacement", 1 },
	{ "anim-node:peer-part-field:period", 1 },
	{ "anim-node:peer-part-field:tightness", 1 },
	{ "anim-node:peer-part-field:bitmap", 0 },
	{ "anim-node:peer-part-field:shadow", 0 },
	{ "anim-node:peer-part-field:transparencyhint", 0 },
	{ "anim-node:peer-alias:setfillumcolor", 0 },
	{ NULL, 0 },
};

const peer_rule *peer_cmp_rule(const char *key)
{
	for (size_t i = 0; peer_rules[i].key; i++)
		if (strcmp(peer_rules[i].key, key) == 0)
			return &peer_rules[i];
	return NULL;
}

/* ---- value comparison --------------------------------------------------- */

static bool f32(const char *s, float *f)
{
	return mdl_tok_float(s, f);
}

static bool same_f32(float a, float b)
{
	if (isnan(a) && isnan(b))
		return true;
	uint32_t ua, ub;
	memcpy(&ua, &a, 4);
	memcpy(&ub, &b, 4);
	return ua == ub;
}

/* Compare one token; returns false (and records @p cls) on a difference. */
static bool tok_eq(peer_cmp *c, const char *cls, const char *what, const char *a, const char *b)
{
	float fa, fb;
	c->n_values++;
	if (f32(a, &fa) && f32(b, &fb)) {
		if (same_f32(fa, fb))
			return true;
		char k[96];
		snprintf(k, sizeof(k), "%s:value", cls);
		peer_cmp_diff(c, k, "%s: ours %s, peer %s", what, a, b);
		return false;
	}
	if (strcmp(a, b) == 0)
		return true;
	char k[96];
	snprintf(k, sizeof(k), "%s:%s", cls, strcasecmp(a, b) == 0 ? "case" : "text");
	peer_cmp_diff(c, k, "%s: ours '%s', peer '%s'", what, a, b);
	return false;
}

/* Tokens [from, ntok) of two rows. */
static bool row_eq(peer_cmp *c, const char *cls, const char *what, const mdl_row *a, uint32_t fa,
		   const mdl_row *b, uint32_t fb)
{
	uint32_t na = a->ntok > fa ? a->ntok - fa : 0, nb = b->ntok > fb ? b->ntok - fb : 0;
	if (na != nb) {
		char k[96];
		snprintf(k, sizeof(k), "%s:width", cls);
		peer_cmp_diff(c, k, "%s: ours %u values (line %u), peer %u (line %u)", what, na, a->line, nb,
		     b->line);
		return false;
	}
	bool ok = true;
	for (uint32_t i = 0; i < na; i++)
		ok &= tok_eq(c, cls, what, a->tok[fa + i].s, b->tok[fb + i].s);
	return ok;
}

/* axis-angle (4 tokens) -> quaternion x y z w, in double. */
static bool axis_angle_quat(const mdl_row *r, uint32_t from, double q[4])
{
	float v[4];
	if (r->ntok < from + 4)
		return false;
	for (int i = 0; i < 4; i++)
		if (!f32(r->tok[from + i].s, &v[i]))
			return false;
	double len = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
	double s = sin(v[3] / 2.0), co = cos(v[3] / 2.0);
	if (len == 0.0) { /* "0 0 0 0" = identity */
		q[0] = q[1] = q[2] = 0.0;
		q[3] = 1.0;
		return true;
	}
	for (int i = 0; i < 3; i++)
		q[i] = v[i] / len * s;
	q[3] = co;
	return true;
}

static void orient_eq(peer_cmp *c, const char *cls, const mdl_row *a, uint32_t fa, const mdl_row *b,
		      uint32_t fb)
{
	double qa[4], qb[4];
	c->n_orient++;
	if (!axis_angle_quat(a, fa, qa) || !axis_angle_quat(b, fb, qb)) {
		char k[96];
		snprintf(k, sizeof(k), "%s:orientation-syntax", cls);
		peer_cmp_diff(c, k, "orientation row not 4 numbers (ours line %u, peer line %u)", a->line,
		     b->line);
		return;
	}
	double dp = 0, dm = 0;
	for (int i = 0; i < 4; i++) {
		dp = fmax(dp, fabs(qa[i] - qb[i]));
		dm = fmax(dm, fabs(qa[i] + qb[i]));
	}
	double d = fmin(dp, dm);
	/* R2b: the peer prints "0 0 0 0" when x²+y²+z² <= 1e-6 (NN CQuaternion::
	 * GetAxisRotation); accept that when our rotation is that close to the
	 * identity. */
	double sa = sqrt(qa[0] * qa[0] + qa[1] * qa[1] + qa[2] * qa[2]);
	bool peer_zero = true;
	for (int i = 0; i < 4; i++) {
		float f;
		peer_zero &= f32(b->tok[fb + i].s, &f) && f == 0.0f;
	}
	if (d > 0.0 && peer_zero && sa * sa <= 1.0e-6 * (1.0 + 1e-4)) {
		char k[96];
		snprintf(k, sizeof(k), "%s:peer-flattens-near-identity", cls);
		peer_cmp_diff(c, k, "ours '%s %s %s %s' (line %u), peer 0 0 0 0 (line %u)", a->tok[fa].s,
		     a->tok[fa + 1].s, a->tok[fa + 2].s, a->tok[fa + 3].s, a->line, b->line);
		return;
	}
	if (d > c->max_orient_dev && d <= PEER_ORIENT_TOL) {
		c->max_orient_dev = d;
		snprintf(c->max_orient_at, sizeof(c->max_orient_at),
			 "%s [%s node %s] ours line %u '%s %s %s %s', peer line %u '%s %s %s %s'",
			 c->file, c->where, c->node ? c->node : "-", a->line, a->tok[fa].s,
			 a->tok[fa + 1].s, a->tok[fa + 2].s, a->tok[fa + 3].s, b->line, b->tok[fb].s,
			 b->tok[fb + 1].s, b->tok[fb + 2].s, b->tok[fb + 3].s);
	}
	if (d > PEER_ORIENT_TOL) {
		char k[96];
		snprintf(k, sizeof(k), "%s:orientation", cls);
		peer_cmp_diff(c, k, "rotation differs by %.3g (ours line %u '%s %s %s %s', peer line %u)", d,
		     a->line, a->tok[fa].s, a->tok[fa + 1].s, a->tok[fa + 2].s, a->tok[fa + 3].s,
		     b->line);
	}
}

/* ---- statements --------------------------------------------------------- */

/* Comparison key of a statement: lower-case controller/attribute name. */
static void stmt_key(const mdl_stmt *s, char *out, size_t n)
{
	snprintf(out, n, "%s", s->name);
	for (char *p = out; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
}

static bool is_orientation(const char *key)
{
	return strcmp(key, "orientation") == 0;
}

/* Rows of a statement as (time?, values): PLAIN = one row from the head. */
static uint32_t stmt_nrows(const mdl_stmt *s)
{
	return s->kind == MDL_ST_PLAIN ? 1 : s->n_rows;
}

static const mdl_row *stmt_row(const mdl_stmt *s, uint32_t i)
{
	return s->kind == MDL_ST_PLAIN ? &s->head : &s->rows[i];
}

static void compare_stmt(peer_cmp *c, const char *cls, const char *key, const mdl_stmt *a,
			 const mdl_stmt *b)
{
	char what[160];
	bool orient = is_orientation(key);
	if (a->kind != b->kind && (a->kind == MDL_ST_LIST || b->kind == MDL_ST_LIST)) {
		char k[96];
		snprintf(k, sizeof(k), "%s:form:%s", cls, key);
		peer_cmp_diff(c, k, "%s: ours kind %d line %u, peer kind %d line %u", key, a->kind,
		     a->head.line, b->kind, b->head.line);
		return;
	}
	if (a->kind == MDL_ST_PLAIN && b->kind == MDL_ST_PLAIN) {
		snprintf(what, sizeof(what), "%s (ours line %u, peer line %u)", key, a->head.line,
			 b->head.line);
		if (orient)
			orient_eq(c, cls, &a->head, 1, &b->head, 1);
		else
			row_eq(c, cls, what, &a->head, 1, &b->head, 1);
		return;
	}
	if (a->kind != b->kind) {
		/* plain controller vs one key at t=0 (R3) */
		char k[96];
		snprintf(k, sizeof(k), "%s:plain-vs-key:%s", cls, key);
		peer_cmp_diff(c, k, "%s: ours line %u, peer line %u", key, a->head.line, b->head.line);
	}
	uint32_t na = stmt_nrows(a), nb = stmt_nrows(b);
	if (na != nb) {
		char k[96];
		snprintf(k, sizeof(k), "%s:rows:%s", cls, key);
		peer_cmp_diff(c, k, "%s: ours %u rows (line %u), peer %u rows (line %u)", key, na,
		     a->head.line, nb, b->head.line);
		return;
	}
	uint32_t fa = a->kind == MDL_ST_PLAIN ? 1 : 0, fb = b->kind == MDL_ST_PLAIN ? 1 : 0;
	for (uint32_t r = 0; r < na; r++) {
		const mdl_row *ra = stmt_row(a, r), *rb = stmt_row(b, r);
		snprintf(what, sizeof(what), "%s row %u (ours line %u, peer line %u)", key, r,
			 ra->line, rb->line);
		bool ka = a->kind != MDL_ST_PLAIN, kb = b->kind != MDL_ST_PLAIN;
		if (ka && kb && (ra->ntok == 0 || rb->ntok == 0)) {
			row_eq(c, cls, what, ra, 0, rb, 0);
			continue;
		}
		/* times */
		if (ka && kb) {
			tok_eq(c, cls, what, ra->tok[0].s, rb->tok[0].s);
		} else {
			const mdl_row *kr = ka ? ra : rb;
			float t;
			if (!kr->ntok || !f32(kr->tok[0].s, &t) || t != 0.0f) {
				char k[96];
				snprintf(k, sizeof(k), "%s:plain-vs-key-time:%s", cls, key);
				peer_cmp_diff(c, k, "%s: key time not 0", what);
			}
		}
		uint32_t va = fa + (ka ? 1 : 0), vb = fb + (kb ? 1 : 0);
		if (orient)
			orient_eq(c, cls, ra, va, rb, vb);
		else
			row_eq(c, cls, what, ra, va, rb, vb);
	}
}

/* ---- meshes (R1) -------------------------------------------------------- */

typedef struct vlist {
	const mdl_stmt *st;
	uint32_t n;
} vlist;

static const mdl_stmt *find_kw(const mdl_node *n, const char *kw)
{
	return mdl_node_find(n, kw);
}

static bool is_vertex_list(const char *key)
{
	static const char *const k[] = { "verts", "tverts", "tverts1", "tverts2", "tverts3",
					 "faces", "weights", "constraints", "colors", "normals",
					 "tangents", "texindices1", "texindices2", "texindices3",
					 "animverts", "animtverts" };
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (strcmp(key, k[i]) == 0)
			return true;
	return false;
}

static bool face_idx(const mdl_row *r, int col, int64_t *out)
{
	return r->ntok > (uint32_t)col && mdl_tok_int(r->tok[col].s, out) && *out >= 0;
}

/* True when every row of a colors list is exactly 1 1 1 (0xFFFFFFFF in binary). */
static bool all_white(const mdl_stmt *l)
{
	for (uint32_t r = 0; r < l->n_rows; r++) {
		if (l->rows[r].ntok != 3)
			return false;
		for (uint32_t i = 0; i < 3; i++) {
			float f;
			if (!f32(l->rows[r].tok[i].s, &f) || f != 1.0f)
				return false;
		}
	}
	return true;
}

/* Two rows equal token by token (numbers float32-equal), counting nothing. */
static bool rows_same(const mdl_row *a, const mdl_row *b)
{
	if (a->ntok != b->ntok)
		return false;
	for (uint32_t i = 0; i < a->ntok; i++) {
		float fa, fb;
		if (f32(a->tok[i].s, &fa) && f32(b->tok[i].s, &fb)) {
			if (!same_f32(fa, fb))
				return false;
		} else if (strcmp(a->tok[i].s, b->tok[i].s) != 0) {
			return false;
		}
	}
	return true;
}

/* Row @p i of list @p kw of node @p n, NULL when the list or row is absent. */
static const mdl_row *list_row(const mdl_node *n, const char *kw, uint32_t i)
{
	const mdl_stmt *l = mdl_node_find(n, kw);
	return l && i < l->n_rows ? &l->rows[i] : NULL;
}

/* R11: the peer merges vertices by position, colour and dangly constraint
 * only (NN FindRemapVertex) and prints the weights of the first vertex of a
 * merged group. True when some vertex j of ours has the same position,
 * colour and constraint as our vertex @p v and the weights @p peer. */
static bool peer_merged_weights(const mdl_node *n, uint32_t v, const mdl_row *peer)
{
	const mdl_stmt *verts = mdl_node_find(n, "verts"), *w = mdl_node_find(n, "weights");
	if (!verts || !w || v >= verts->n_rows || verts->n_rows != w->n_rows)
		return false;
	static const char *const same[] = { "colors", "constraints" };
	for (uint32_t j = 0; j < verts->n_rows; j++) {
		if (j == v || !rows_same(&verts->rows[j], &verts->rows[v]) ||
		    !rows_same(&w->rows[j], peer))
			continue;
		bool ok = true;
		for (size_t k = 0; k < 2 && ok; k++) {
			const mdl_row *x = list_row(n, same[k], j), *y = list_row(n, same[k], v);
			ok = (!x && !y) || (x && y && rows_same(x, y));
		}
		if (ok)
			return true;
	}
	return false;
}

/* R12: the binary stores colours as bytes; the peer divides by 255.0f in
 * x87 extended precision and prints that quotient with %.9g (not rounded to
 * float32). True when every column of ours is float32(b/255) and the peer's
 * is the %.9g text of the double b/255, for the same byte b. */
static bool colour_bytes_same(const mdl_row *a, const mdl_row *b)
{
	if (a->ntok != b->ntok || a->ntok == 0)
		return false;
	for (uint32_t i = 0; i < a->ntok; i++) {
		float fa;
		if (!f32(a->tok[i].s, &fa) || !(fa >= 0.0f && fa <= 1.0f))
			return false;
		long byte = lrintf(fa * 255.0f);
		char want[32];
		snprintf(want, sizeof(want), "%.9g", (double)byte / 255.0);
		if (!same_f32(fa, (float)byte / 255.0f) || strcmp(b->tok[i].s, want) != 0)
			return false;
	}
	return true;
}

/* Compare one per-vertex list through face corners; idx_col is the face
 * column giving the index into this list (0 = position index, 4 = tvert). */
static void corner_list(peer_cmp *c, const mdl_node *na, const mdl_node *nb, const char *kw,
			int idx_col)
{
	const mdl_stmt *la = find_kw(na, kw), *lb = find_kw(nb, kw);
	const mdl_stmt *fa = find_kw(na, "faces"), *fb = find_kw(nb, "faces");
	if (!la && !lb)
		return;
	if (!la || !lb) {
		char k[96];
		if (la && strcmp(kw, "normals") == 0) {
			/* R8: the peer never writes normals */
			peer_cmp_diff(c, "mesh:peer-drops-normals", "normals (ours line %u) not in peer",
			     la->head.line);
			return;
		}
		if (la && strcmp(kw, "colors") == 0 && all_white(la)) {
			/* R9: the peer leaves out colors when every vertex is white */
			peer_cmp_diff(c, "mesh:peer-omits-white-colors", "colors (ours line %u) all 1 1 1",
			     la->head.line);
			return;
		}
		snprintf(k, sizeof(k), "mesh:only-%s:%s", la ? "ours" : "peer", kw);
		peer_cmp_diff(c, k, "%s only in %s", kw, la ? "ours" : "peer");
		return;
	}
	if (!fa || !fb || fa->n_rows != fb->n_rows)
		return; /* reported by the caller */
	for (uint32_t f = 0; f < fa->n_rows; f++) {
		for (int k = 0; k < 3; k++) {
			int64_t ia, ib;
			if (!face_idx(&fa->rows[f], idx_col + k, &ia) ||
			    !face_idx(&fb->rows[f], idx_col + k, &ib) || ia >= la->n_rows ||
			    ib >= lb->n_rows) {
				char key[96];
				snprintf(key, sizeof(key), "mesh:bad-index:%s", kw);
				peer_cmp_diff(c, key, "face %u corner %d: index out of %s", f, k, kw);
				continue;
			}
			char what[160];
			snprintf(what, sizeof(what), "%s of face %u corner %d (ours row %lld line %u, peer row %lld line %u)",
				 kw, f, k, (long long)ia, la->rows[ia].line, (long long)ib,
				 lb->rows[ib].line);
			char cls[64];
			snprintf(cls, sizeof(cls), "mesh:%s", kw);
			if (!rows_same(&la->rows[ia], &lb->rows[ib])) {
				if (strcmp(kw, "weights") == 0 &&
				    peer_merged_weights(na, (uint32_t)ia, &lb->rows[ib])) {
					/* R11: the peer prints another vertex's weights */
					peer_cmp_diff(c, "mesh:peer-merges-weights", "%s", what);
					continue;
				}
				if (strcmp(kw, "colors") == 0 &&
				    colour_bytes_same(&la->rows[ia], &lb->rows[ib])) {
					/* R12: the peer's colour text is not float32 */
					peer_cmp_diff(c, "mesh:peer-colors-excess-precision", "%s", what);
					continue;
				}
			}
			row_eq(c, cls, what, &la->rows[ia], 0, &lb->rows[ib], 0);
			if (idx_col == 0 && strcmp(kw, "verts") == 0)
				c->n_corners++;
		}
	}
}

/* R1 for animmesh sets: `kw` holds sets of `per` rows each, `per` = the
 * length of list `base` (verts or tverts) on each side; set s of a corner
 * is row s * per + index (idx_col: the face column of the index). */
static void corner_sets(peer_cmp *c, const mdl_node *na, const mdl_node *nb, const char *kw,
			const char *base_a, const char *base_b, int idx_col)
{
	const mdl_stmt *la = find_kw(na, kw), *lb = find_kw(nb, kw);
	const mdl_stmt *fa = find_kw(na, "faces"), *fb = find_kw(nb, "faces");
	const mdl_stmt *ba = find_kw(na, base_a), *bb = find_kw(nb, base_b);
	char key[96];
	if (!la && !lb)
		return;
	if (!la || !lb || !ba || !bb || ba->n_rows == 0 || bb->n_rows == 0 ||
	    la->n_rows % ba->n_rows || lb->n_rows % bb->n_rows ||
	    la->n_rows / ba->n_rows != lb->n_rows / bb->n_rows) {
		snprintf(key, sizeof(key), "mesh:sets:%s", kw);
		peer_cmp_diff(c, key, "%s: ours %u rows, peer %u: not the same number of sets", kw,
			      la ? la->n_rows : 0, lb ? lb->n_rows : 0);
		return;
	}
	if (!fa || !fb || fa->n_rows != fb->n_rows)
		return; /* reported by the caller */
	uint32_t sets = la->n_rows / ba->n_rows;
	snprintf(key, sizeof(key), "mesh:%s", kw);
	for (uint32_t st = 0; st < sets; st++)
		for (uint32_t f = 0; f < fa->n_rows; f++)
			for (int k = 0; k < 3; k++) {
				int64_t ia, ib;
				if (!face_idx(&fa->rows[f], idx_col + k, &ia) ||
				    !face_idx(&fb->rows[f], idx_col + k, &ib) ||
				    ia >= ba->n_rows || ib >= bb->n_rows) {
					snprintf(key, sizeof(key), "mesh:bad-index:%s", kw);
					peer_cmp_diff(c, key, "face %u corner %d: index out of %s", f, k, kw);
					return;
				}
				const mdl_row *ra = &la->rows[st * ba->n_rows + (uint32_t)ia];
				const mdl_row *rb = &lb->rows[st * bb->n_rows + (uint32_t)ib];
				char what[160];
				snprintf(what, sizeof(what), "%s set %u of face %u corner %d (ours line %u, peer line %u)",
					 kw, st, f, k, ra->line, rb->line);
				row_eq(c, key, what, ra, 0, rb, 0);
			}
}

static void compare_mesh(peer_cmp *c, const mdl_node *na, const mdl_node *nb)
{
	const mdl_stmt *fa = find_kw(na, "faces"), *fb = find_kw(nb, "faces");
	if (!fa || !fb) {
		const mdl_stmt *va = find_kw(na, "verts");
		if (fa && fa->n_rows == 0 && (!va || va->n_rows == 0) && !find_kw(nb, "verts")) {
			/* R13: the peer writes no list of a mesh without vertices and faces */
			peer_cmp_diff(c, "mesh:peer-omits-empty", "faces 0 (ours line %u)",
				      fa->head.line);
			return;
		}
		if (fa || fb)
			peer_cmp_diff(c, "mesh:faces-missing", "faces only in %s", fa ? "ours" : "peer");
		return;
	}
	if (fa->n_rows != fb->n_rows) {
		peer_cmp_diff(c, "mesh:face-count", "ours %u faces, peer %u", fa->n_rows, fb->n_rows);
		return;
	}
	for (uint32_t f = 0; f < fa->n_rows; f++) {
		const mdl_row *ra = &fa->rows[f], *rb = &fb->rows[f];
		if (ra->ntok < 8 || rb->ntok < 8) {
			peer_cmp_diff(c, "mesh:face-width", "face %u has < 8 columns", f);
			continue;
		}
		char what[96];
		snprintf(what, sizeof(what), "surface id of face %u (ours line %u, peer line %u)", f,
			 ra->line, rb->line);
		tok_eq(c, "mesh:surface", what, ra->tok[7].s, rb->tok[7].s);
	}
	corner_list(c, na, nb, "verts", 0);
	corner_list(c, na, nb, "tverts", 4);
	corner_list(c, na, nb, "weights", 0);
	corner_list(c, na, nb, "constraints", 0);
	corner_list(c, na, nb, "colors", 0);
	corner_list(c, na, nb, "normals", 0);
	corner_list(c, na, nb, "tangents", 0);
	corner_sets(c, na, nb, "animverts", "verts", "verts", 0);
	corner_sets(c, na, nb, "animtverts", "verts", "tverts", 4);
	/* tverts1..3/texindices: not written by either side for the corpus */
	static const char *const extra[] = { "tverts1", "tverts2", "tverts3", "texindices1",
					     "texindices2", "texindices3" };
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		if (find_kw(na, extra[i]) || find_kw(nb, extra[i]))
			peer_cmp_diff(c, "mesh:extra-uv-set", "%s present", extra[i]);
}

/* ---- nodes -------------------------------------------------------------- */

typedef struct entry {
	char key[64];
	const mdl_stmt *st;
	const char *alias; /* peer spelling when an alias was applied */
	bool used;
} entry;

/* R6: attributes the peer writes only when they differ from a default
 * (NwnMdlDecomp.cpp); `aabb_def` is the default on aabb nodes, NULL = the
 * peer never omits it there. */
static const struct omit_default {
	const char *key, *def, *aabb_def;
} omit_defaults[] = {
	{ "shadow", "1", "1" },          { "beaming", "0", "0" },
	{ "render", "1", "0" },          { "transparencyhint", "0", NULL },
	{ "rotatetexture", "0", "0" },   { "tilefade", "0", "0" },
	{ "lightmapped", "0", "0" },     { "generateflare", "0", "0" },
	{ NULL, NULL, NULL },
};

/* R7: fields of a node's type part that the peer prints in animation nodes
 * (its `!fAnimation` tests are commented out) and the view does not. */
static const char *const anim_part_fields[] = {
	"ambient", "diffuse", "specular", "shininess", "shadow", "beaming", "render",
	"transparencyhint", "rotatetexture", "tilefade", "lightmapped", "bitmap",
	"texture1", "texture2", "texture3", "materialname", "displacement", "period", "tightness",
	"refmodel", "reattachable", NULL,
};

/* R14: the emitter's 32-byte strings (NN writes them even when empty). */
static const char *const emitter_strings[] = { "update", "render", "blend", "texture", NULL };

static bool in_list(const char *const *l, const char *k)
{
	for (; *l; l++)
		if (strcmp(*l, k) == 0)
			return true;
	return false;
}

/* Is the our-only statement @p st a default value the peer leaves out? */
static bool peer_omits_default(const mdl_node *n, const char *key, const mdl_stmt *st)
{
	bool aabb = strcasecmp(n->type, "aabb") == 0;
	for (size_t i = 0; omit_defaults[i].key; i++) {
		if (strcmp(omit_defaults[i].key, key) != 0)
			continue;
		const char *def = aabb ? omit_defaults[i].aabb_def : omit_defaults[i].def;
		const char *v = mdl_stmt_arg(st, 0);
		float fv, fd;
		return def && v && st->kind == MDL_ST_PLAIN && st->head.ntok == 2 &&
		       f32(v, &fv) && f32(def, &fd) && fv == fd;
	}
	return false;
}

/* Peer spellings of keywords we write differently (R5). */
static const struct alias {
	const char *peer, *ours;
} aliases[] = {
	{ "setfillumcolor", "selfillumcolor" }, /* nwnmdlcomp's spelling */
	{ "isdynamic", "ndynamictype" },        /* both set the light's dynamic type */
	{ "texture3", "materialname" },         /* the same 64 bytes (mesh 0x1A8) */
	{ NULL, NULL },
};

static entry *collect(const mdl_node *n, uint32_t *count, bool peer)
{
	entry *e = calloc(n->n_stmts + 1, sizeof(*e));
	assert_non_null(e);
	for (uint32_t i = 0; i < n->n_stmts; i++) {
		stmt_key(&n->stmts[i], e[i].key, sizeof(e[i].key));
		e[i].st = &n->stmts[i];
		for (size_t k = 0; peer && aliases[k].peer; k++) {
			if (strcmp(e[i].key, aliases[k].peer) == 0) {
				e[i].alias = aliases[k].peer;
				snprintf(e[i].key, sizeof(e[i].key), "%s", aliases[k].ours);
			}
		}
		/* R5b: NN's controller-name lookup refuses its own highest id,
		 * 488 (sizeMid_y): `nController >= g_nMaxControllerIndex` with the
		 * maximum itself in the table (NmcGetControllerName) */
		if (peer && strcmp(e[i].key, "unknowncontroller") == 0 &&
		    strcasecmp(n->type, "emitter") == 0) {
			e[i].alias = "unknowncontroller";
			snprintf(e[i].key, sizeof(e[i].key), "sizemid_y");
		}
	}
	*count = n->n_stmts;
	return e;
}

static void compare_node(peer_cmp *c, const mdl_node *a, const mdl_node *b, bool anim)
{
	c->node = a->name;
	const char *cls = anim ? "anim-node" : "node";
	char k[96];
	if (strcasecmp(a->type, b->type) != 0) {
		snprintf(k, sizeof(k), "%s:type", cls);
		peer_cmp_diff(c, k, "type ours %s, peer %s", a->type, b->type);
	}
	const char *pa = a->parent ? a->parent : "(none)", *pb = b->parent ? b->parent : "(none)";
	if (strcmp(pa, pb) != 0) {
		snprintf(k, sizeof(k), "%s:parent", cls);
		peer_cmp_diff(c, k, "parent ours %s, peer %s", pa, pb);
	}
	if (a->has_part_number != b->has_part_number || a->part_number != b->part_number) {
		snprintf(k, sizeof(k), "%s:part-number", cls);
		peer_cmp_diff(c, k, "part number ours %lld, peer %lld", (long long)a->part_number,
		     (long long)b->part_number);
	}
	uint32_t nea, neb;
	entry *ea = collect(a, &nea, false), *eb = collect(b, &neb, true);
	bool mesh = find_kw(a, "faces") || find_kw(b, "faces");
	if (mesh)
		compare_mesh(c, a, b);
	for (uint32_t i = 0; i < nea; i++) {
		if (mesh && is_vertex_list(ea[i].key))
			continue;
		/* k-th occurrence of a key matches the k-th occurrence on the other side */
		entry *m = NULL;
		for (uint32_t j = 0; j < neb && !m; j++)
			if (!eb[j].used && strcmp(eb[j].key, ea[i].key) == 0)
				m = &eb[j];
		if (!m && peer_omits_default(a, ea[i].key, ea[i].st)) {
			snprintf(k, sizeof(k), "%s:peer-omits-default:%s", cls, ea[i].key);
			peer_cmp_diff(c, k, "%s (ours line %u) has the default the peer leaves out",
			     ea[i].key, ea[i].st->head.line);
			continue;
		}
		if (!m) {
			snprintf(k, sizeof(k), "%s:only-ours:%s", cls, ea[i].key);
			peer_cmp_diff(c, k, "%s (ours line %u) missing in peer", ea[i].key,
			     ea[i].st->head.line);
			continue;
		}
		m->used = true;
		if (m->alias) {
			snprintf(k, sizeof(k), "%s:peer-alias:%s", cls, m->alias);
			peer_cmp_diff(c, k, "peer writes %s for %s (peer line %u)", m->alias, ea[i].key,
			     m->st->head.line);
		}
		compare_stmt(c, cls, ea[i].key, ea[i].st, m->st);
	}
	for (uint32_t j = 0; j < neb; j++) {
		if (eb[j].used || (mesh && is_vertex_list(eb[j].key)))
			continue;
		if (anim && in_list(anim_part_fields, eb[j].key))
			snprintf(k, sizeof(k), "%s:peer-part-field:%s", cls, eb[j].key);
		else if (in_list(emitter_strings, eb[j].key) && eb[j].st->kind == MDL_ST_PLAIN &&
			 eb[j].st->head.ntok == 1 && strcasecmp(b->type, "emitter") == 0)
			/* R14: NN prints the emitter's strings unconditionally; an
			 * empty one is a keyword without value, ours leaves it out */
			snprintf(k, sizeof(k), "%s:peer-prints-empty:%s", cls, eb[j].key);
		else
			snprintf(k, sizeof(k), "%s:only-peer:%s", cls, eb[j].key);
		peer_cmp_diff(c, k, "%s (peer line %u) missing in ours", eb[j].key, eb[j].st->head.line);
	}
	free(ea);
	free(eb);
	c->node = NULL;
}

/* R15: when the names differ in order, and ours sorted by part number
 * (stable) give the peer's order, set @p pa to that order. */
static bool part_number_order(const mdl_node *a, const mdl_node *b, uint32_t n,
			      const mdl_node **pa)
{
	bool differs = false;
	for (uint32_t i = 0; i < n; i++) {
		differs |= strcmp(a[i].name, b[i].name) != 0;
		if (!a[i].has_part_number)
			return false;
	}
	if (!differs)
		return false;
	const mdl_node **s = calloc(n + 1, sizeof(*s));
	assert_non_null(s);
	for (uint32_t i = 0; i < n; i++) { /* insertion sort: stable */
		uint32_t j = i;
		while (j > 0 && s[j - 1]->part_number > a[i].part_number) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = &a[i];
	}
	bool ok = true;
	for (uint32_t i = 0; i < n && ok; i++)
		ok = strcmp(s[i]->name, b[i].name) == 0;
	if (ok)
		memcpy(pa, s, n * sizeof(*s));
	free(s);
	return ok;
}

static const char *first_out_of_order(const mdl_node *a, const mdl_node *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(a[i].name, b[i].name) != 0)
			return a[i].name;
	return "-";
}

static void compare_nodes(peer_cmp *c, const mdl_node *a, uint32_t na, const mdl_node *b,
			  uint32_t nb, bool anim)
{
	const char *cls = anim ? "anim-node" : "node";
	char k[96];
	if (na != nb) {
		snprintf(k, sizeof(k), "%s:count", cls);
		peer_cmp_diff(c, k, "ours %u nodes, peer %u", na, nb);
	}
	uint32_t n = na < nb ? na : nb;
	const mdl_node **pa = calloc(n + 1, sizeof(*pa));
	assert_non_null(pa);
	for (uint32_t i = 0; i < n; i++)
		pa[i] = &a[i];
	if (!anim && na == nb && part_number_order(a, b, n, pa))
		/* R15: NN prints geometry nodes in part-number order, ours in
		 * the order of the children arrays */
		peer_cmp_diff(c, "node:peer-part-number-order",
			      "peer prints nodes by part number; first difference: ours %s",
			      first_out_of_order(a, b, n));
	for (uint32_t i = 0; i < n; i++) {
		const mdl_node *ai = pa[i];
		if (strcmp(ai->name, b[i].name) != 0) {
			snprintf(k, sizeof(k), "%s:name", cls);
			peer_cmp_diff(c, k, "node %u: ours %s, peer %s", i, ai->name, b[i].name);
			break;
		}
		compare_node(c, ai, &b[i], anim);
	}
	free(pa);
}

/* ---- model level -------------------------------------------------------- */

static void compare_model_stmts(peer_cmp *c, const mdl_stmt *a, uint32_t na, const mdl_stmt *b,
				uint32_t nb, const char *cls)
{
	char k[96];
	bool *used = calloc(nb + 1, 1);
	assert_non_null(used);
	for (uint32_t i = 0; i < na; i++) {
		char ka[64];
		stmt_key(&a[i], ka, sizeof(ka));
		uint32_t j;
		for (j = 0; j < nb; j++) {
			char kb[64];
			stmt_key(&b[j], kb, sizeof(kb));
			if (!used[j] && strcmp(ka, kb) == 0)
				break;
		}
		if (j == nb) {
			snprintf(k, sizeof(k), "%s:only-ours:%s", cls, ka);
			/* (no our-only model statement is expected) */
			peer_cmp_diff(c, k, "%s (ours line %u) missing in peer", ka, a[i].head.line);
			continue;
		}
		used[j] = true;
		if (strcmp(ka, "classification") == 0) {
			const char *va = mdl_stmt_arg(&a[i], 0), *vb = mdl_stmt_arg(&b[j], 0);
			if (!va || !vb || strcasecmp(va, vb) != 0) {
				snprintf(k, sizeof(k), "%s:classification", cls);
				peer_cmp_diff(c, k, "ours %s, peer %s", va ? va : "-", vb ? vb : "-");
			}
			continue;
		}
		compare_stmt(c, cls, ka, &a[i], &b[j]);
	}
	for (uint32_t j = 0; j < nb; j++) {
		if (used[j])
			continue;
		char kb[64];
		stmt_key(&b[j], kb, sizeof(kb));
		if (strcmp(kb, "filedependancy") == 0) /* R10: invented by the peer */
			snprintf(k, sizeof(k), "%s:peer-invents:%s", cls, kb);
		else
			snprintf(k, sizeof(k), "%s:only-peer:%s", cls, kb);
		peer_cmp_diff(c, k, "%s (peer line %u) missing in ours", kb, b[j].head.line);
	}
	free(used);
}

void peer_cmp_docs(peer_cmp *c, const mdl_doc *a, const mdl_doc *b)
{
	c->where = "model";
	compare_model_stmts(c, a->stmts, a->n_stmts, b->stmts, b->n_stmts, "model");
	c->where = "geom";
	compare_nodes(c, a->nodes, a->n_nodes, b->nodes, b->n_nodes, false);
	if (a->n_anims != b->n_anims)
		peer_cmp_diff(c, "anim:count", "ours %u animations, peer %u", a->n_anims, b->n_anims);
	uint32_t n = a->n_anims < b->n_anims ? a->n_anims : b->n_anims;
	for (uint32_t i = 0; i < n; i++) {
		const mdl_anim *x = &a->anims[i], *y = &b->anims[i];
		c->where = x->name;
		if (strcmp(x->name, y->name) != 0 || strcmp(x->model, y->model) != 0) {
			peer_cmp_diff(c, "anim:name", "ours %s %s, peer %s %s", x->name, x->model, y->name,
			     y->model);
			continue;
		}
		compare_model_stmts(c, x->stmts, x->n_stmts, y->stmts, y->n_stmts, "anim");
		compare_nodes(c, x->nodes, x->n_nodes, y->nodes, y->n_nodes, true);
	}
	c->where = "model";
}

/* ---- queries ------------------------------------------------------------ */

bool peer_cmp_has_class(const peer_cmp *c, const char *key)
{
	for (size_t i = 0; i < c->n_cls; i++)
		if (strcmp(c->cls[i].key, key) == 0)
			return true;
	return false;
}

unsigned peer_cmp_report(const peer_cmp *c, bool check_files)
{
	unsigned bad = 0;
	for (size_t i = 0; i < c->n_cls; i++) {
		const peer_dclass *d = &c->cls[i];
		const peer_rule *r = peer_cmp_rule(d->key);
		bool over = r && check_files && d->files > r->max_files;
		const char *verdict = !r ? "UNDOCUMENTED" :
				      over ? "MORE FILES THAN DOCUMENTED" :
					     "documented";
		if (!r || over)
			bad++;
		printf("  %-48s %6u diffs in %3u files  %s\n      e.g. %s\n", d->key, d->count,
		       d->files, verdict, d->example);
	}
	return bad;
}
