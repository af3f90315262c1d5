/**
 * @file nwn_compile.c
 * ASCII MDL -> nwn_model -> binary (see nwn_compile.h, docs/nwn-compile.md).
 *
 * Statement interpretation follows shared/notes/nwn-mdl-format.md §2 and the
 * reference compiler's tables (controllers before attributes; attributes
 * matched by keyword and node type). Per node, at `endnode`: part number =
 * running count, emitters raise the model radius to 40, meshes are derived
 * (nwn_derive_mesh). After the geometry: skins (nwn_derive_skin, on the tree
 * in text order), then the children of each node are ordered opaque meshes
 * before transparent ones (stable) when a transparent mesh precedes an
 * opaque one, then part numbers are merged with the supermodel's.
 */
#include "nwn_compile.h"

#include "mdl_parse.h"
#include "../formats/nwn/nwn_mdl.h"
#include "../formats/nwn/nwn_mdl_derive.h"
#include "../formats/nwn/nwn_mdl_encode.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RAW_NULL 0xFFFFFFFFu
#define MAX_SUPER_DEPTH 8

/* Function pointers of the game's compiler (BioWare-compiled corpus files,
 * docs/nwn-compile.md); animmesh: none in game files, nwnmdlcomp's set. */
static const uint32_t FN_GEOM[2] = { 0x0040BBC0, 0x0040BBD0 };
static const uint32_t FN_ANIM[2] = { 0x0040B6C0, 0x0044E700 };
static const uint32_t FN_DUMMY[6] = { 0x40cb70, 0x40cbd0, 0x40cbe0, 0x40cbf0, 0x40cc10, 0x40cc20 };
static const uint32_t FN_LIGHT[6] = { 0x40db70, 0x40db80, 0x40db90, 0x40dba0, 0x40dbc0, 0x40dbd0 };
static const uint32_t FN_EMITTER[6] = { 0x40cb70, 0x40d9b0, 0x40d9c0, 0x40d9d0, 0x40d9f0, 0x40da00 };
static const uint32_t FN_REFERENCE[6] = { 0x40cb70, 0x40df30, 0x40cbe0, 0x40df40, 0x40df60, 0x40df70 };
static const uint32_t FN_TRIMESH[8] = { 0x40e2e0, 0x40e2f0, 0x40e300, 0x40e310, 0x40e330, 0x40e340,
					0x40e350, 0x40d7e0 };
static const uint32_t FN_SKIN[8] = { 0x40d710, 0x40d790, 0x40d7a0, 0x40e310, 0x40d7b0, 0x40d7c0,
				     0x40d7d0, 0x40d7e0 };
static const uint32_t FN_DANGLY[8] = { 0x40e040, 0x40e080, 0x40e090, 0x40e310, 0x40e330, 0x40e0a0,
				       0x40e0c0, 0x40e0b0 };
static const uint32_t FN_AABB[8] = { 0x40e660, 0x40e6e0, 0x40e300, 0x40e310, 0x40e330, 0x40e6f0,
				     0x40e350, 0x40d7e0 };
static const uint32_t FN_ANIMMESH[8] = { 0x46cf88, 0x46cf98, 0x46cfac, 0x46cfbc, 0x46cfd8, 0x46cfe8,
					 0x46cffc, 0x46d00c };

/* ------------------------------------------------------------------ arena */

typedef struct ablk {
	struct ablk *next;
	size_t used, cap;
	max_align_t data[];
} ablk;

typedef struct arena {
	ablk *head;
} arena;

static void *arena_zalloc(void *ctx, size_t n)
{
	arena *a = ctx;
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	ablk *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		b = malloc(sizeof(ablk) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

static void arena_free(arena *a)
{
	ablk *b = a->head;
	while (b) {
		ablk *n = b->next;
		free(b);
		b = n;
	}
	a->head = NULL;
}

/* ------------------------------------------------------------ structures */

/* Growable float/int vectors (malloc, freed with the compile). */
typedef struct fvec {
	float *v;
	uint32_t n, cap;
} fvec;

typedef struct cnode {
	nwn_node n;
	const mdl_node *src;
	int32_t parent;      /* cnode index, -1 */
	bool attached;
	uint32_t *kids;
	uint32_t nkids, capk;
	/* controllers */
	nwn_controller *ctrls;
	uint32_t nctrl, capc;
	fvec data;
	/* mesh source */
	nwn_mesh_src ms;
	fvec verts, tverts[4], colors, normals, constraints, animverts, animtverts;
	nwn_src_face *faces;
	uint32_t nfaces;
	int32_t *texind[4];
	uint32_t ntexind[4];
	uint32_t *mirror;
	uint32_t nmirror;
	const mdl_stmt *weights_stmt;
	uint32_t *split_src;
	bool has_aabb_rows;
	bool transparent_sorted;
} cnode;

typedef struct cgeom {
	cnode *nodes;
	uint32_t n, cap;
	int32_t root;
	uint32_t node_count; /* running part number */
} cgeom;

typedef struct comp {
	const char *file;
	lfs_error *err;
	arena *ar;
	nwn_alloc alloc;
	nwn_supermodel_lookup_fn lookup;
	void *lctx;
	int depth;
	uint32_t warnings;
	/* edit mode (nwn_compile_doc): keep the text's child order, record the
	 * source node of every flattened node, report the supermodel */
	bool edit_mode;
	const mdl_node ***srcs; /* [1 + animations] */
	uint32_t ***splits;     /* [1 + animations][node]: split vertex -> text vertex */
	bool super_found;
} comp;

/* ------------------------------------------------------------------ errors */

static lfs_err at(comp *c, const mdl_row *r, uint32_t tok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static lfs_err at(comp *c, const mdl_row *r, uint32_t tok, const char *fmt, ...)
{
	uint32_t col = (r && tok < r->ntok) ? r->tok[tok].col : 1;
	uint32_t line = r ? r->line : 1;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return lfs_fail_at(c->err, c->file, line, col, "%s", msg);
}

static lfs_err nomem(comp *c)
{
	return lfs_fail(c->err, LFS_ERR_NOMEM, SIZE_MAX, NULL, "out of memory");
}

/* ------------------------------------------------------------ value parse */

/* A float as the reference reads it: strtod, then rounded to float.
 * Fast path (Clinger): up to 15 significant digits and a power of ten up to
 * 22 give the correctly rounded double with one multiplication or division,
 * i.e. exactly strtod's result; anything else goes to strtod. */
static bool tok_f(const char *s, float *out)
{
	static const double p10[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
					1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
					1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	if (!s || !*s)
		return false;
	const char *p = s;
	bool neg = false;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	uint64_t mant = 0;
	int digits = 0, frac = 0;
	bool any = false;
	while (*p >= '0' && *p <= '9') {
		if (mant || *p != '0')
			digits++;
		mant = mant * 10 + (uint64_t)(*p++ - '0');
		any = true;
		if (digits > 15)
			goto slow;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (mant || *p != '0')
				digits++;
			mant = mant * 10 + (uint64_t)(*p++ - '0');
			frac++;
			any = true;
			if (digits > 15 || frac > 22)
				goto slow;
		}
	}
	if (!any || *p != '\0')
		goto slow; /* exponents, inf, nan, hex, junk: strtod decides */
	{
		double d = (double)mant;
		if (frac)
			d /= p10[frac];
		if (neg)
			d = -d;
		*out = (float)d;
		return true;
	}
slow:
	errno = 0;
	char *end = NULL;
	double d = strtod(s, &end);
	if (end == s || *end != '\0')
		return false;
	*out = (float)d;
	return true;
}

static bool tok_i(const char *s, int32_t *out)
{
	if (!s || !*s)
		return false;
	if (!strcasecmp(s, "true")) {
		*out = 1;
		return true;
	}
	if (!strcasecmp(s, "false")) {
		*out = 0;
		return true;
	}
	errno = 0;
	char *end = NULL;
	long v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE || v > INT32_MAX || v < INT32_MIN)
		return false;
	*out = (int32_t)v;
	return true;
}

static lfs_err head_f(comp *c, const mdl_stmt *s, uint32_t i, float *out)
{
	const char *t = mdl_stmt_arg(s, i);
	if (!t)
		return at(c, &s->head, 0, "'%s': expected a number", s->head.tok[0].s);
	if (!tok_f(t, out))
		return at(c, &s->head, i + 1, "'%s': not a number", t);
	return LFS_OK;
}

static lfs_err head_fv(comp *c, const mdl_stmt *s, float *out, int n)
{
	for (int i = 0; i < n; i++) {
		lfs_err e = head_f(c, s, (uint32_t)i, &out[i]);
		if (e)
			return e;
	}
	return LFS_OK;
}

static lfs_err head_i(comp *c, const mdl_stmt *s, int32_t *out)
{
	const char *t = mdl_stmt_arg(s, 0);
	if (!t)
		return at(c, &s->head, 0, "'%s': expected an integer", s->head.tok[0].s);
	if (!tok_i(t, out))
		return at(c, &s->head, 1, "'%s': not an integer", t);
	return LFS_OK;
}

/* String attribute into a fixed field (truncated to size - 1 as the
 * reference does). */
static void head_str(const mdl_stmt *s, char *dst, size_t size)
{
	const char *t = mdl_stmt_arg(s, 0);
	if (!t)
		t = "";
	size_t len = strlen(t);
	if (len > size - 1)
		len = size - 1;
	memcpy(dst, t, len);
	dst[len] = '\0';
}

static bool fvec_push(fvec *v, float f)
{
	if (v->n == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 64;
		if (cap < v->cap)
			return false;
		float *nv = realloc(v->v, (size_t)cap * sizeof(float));
		if (!nv)
			return false;
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = f;
	return true;
}

/* Rows of a numeric list into a vector of @p cols floats per row (missing
 * columns 0, extra columns ignored). */
static lfs_err rows_f(comp *c, const mdl_stmt *s, uint32_t cols, fvec *v)
{
	v->n = 0;
	for (uint32_t r = 0; r < s->n_rows; r++) {
		const mdl_row *row = &s->rows[r];
		for (uint32_t k = 0; k < cols; k++) {
			float f = 0;
			if (k < row->ntok && !tok_f(row->tok[k].s, &f))
				return at(c, row, k, "'%s': not a number", row->tok[k].s);
			if (!fvec_push(v, f))
				return nomem(c);
		}
	}
	return LFS_OK;
}

static lfs_err rows_i(comp *c, const mdl_stmt *s, uint32_t cols, int32_t **out, uint32_t *n)
{
	*n = 0;
	*out = malloc(((size_t)s->n_rows * cols + 1) * sizeof(int32_t));
	if (!*out)
		return nomem(c);
	for (uint32_t r = 0; r < s->n_rows; r++) {
		const mdl_row *row = &s->rows[r];
		for (uint32_t k = 0; k < cols; k++) {
			int32_t v = 0;
			if (k < row->ntok && !tok_i(row->tok[k].s, &v))
				return at(c, row, k, "'%s': not an integer", row->tok[k].s);
			(*out)[(size_t)r * cols + k] = v;
		}
	}
	*n = s->n_rows;
	return LFS_OK;
}

/* ------------------------------------------------------------ node types */

static uint32_t type_flags(const char *t)
{
	static const struct {
		const char *name;
		uint32_t flags;
	} types[] = {
		{ "dummy", NWN_DUMMY },       { "light", NWN_LIGHT },       { "emitter", NWN_EMITTER },
		{ "reference", NWN_REFERENCE }, { "trimesh", NWN_TRIMESH }, { "skin", NWN_SKIN },
		{ "animmesh", NWN_ANIMMESH }, { "danglymesh", NWN_DANGLYMESH }, { "aabb", NWN_AABB },
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcasecmp(t, types[i].name))
			return types[i].flags;
	return NWN_DUMMY; /* unknown types (emmiter, camera) are dummies [N §2.2] */
}

static lfs_err init_node(comp *c, cnode *cn, const mdl_node *src, bool anim)
{
	nwn_node *n = &cn->n;
	memset(cn, 0, sizeof(*cn));
	cn->src = src;
	cn->parent = -1;
	n->parent = -1;
	n->flags = type_flags(src->type);
	size_t len = strlen(src->name);
	memcpy(n->name, src->name, len > 31 ? 31 : len);
	const uint32_t *fn = FN_DUMMY;
	switch (n->flags) {
	case NWN_LIGHT: fn = FN_LIGHT; break;
	case NWN_EMITTER: fn = FN_EMITTER; break;
	case NWN_REFERENCE: fn = FN_REFERENCE; break;
	case NWN_TRIMESH: fn = FN_TRIMESH; break;
	case NWN_SKIN: fn = FN_SKIN; break;
	case NWN_DANGLYMESH: fn = FN_DANGLY; break;
	case NWN_AABB: fn = FN_AABB; break;
	case NWN_ANIMMESH: fn = FN_ANIMMESH; break;
	}
	memcpy(n->fn, fn, sizeof(n->fn));
	(void)anim;
	void *A = c->ar;
	if (n->flags & NWN_HAS_MESH) {
		nwn_mesh *m = arena_zalloc(A, sizeof(*m));
		if (!m)
			return nomem(c);
		n->mesh = m;
		m->fn[0] = fn[6];
		m->fn[1] = fn[7];
		m->diffuse[0] = m->diffuse[1] = m->diffuse[2] = 0.8f;
		m->ambient[0] = m->ambient[1] = m->ambient[2] = 0.2f;
		m->shininess = 1.0f;
		m->shadow = 1;
		m->render = 1;
		m->strip_raw = RAW_NULL;
		m->verts_raw = m->normals_raw = m->colors_raw = RAW_NULL;
		for (int t = 0; t < 4; t++)
			m->tverts_raw[t] = RAW_NULL;
		for (int t = 0; t < 6; t++)
			m->texanim_raw[t] = RAW_NULL;
		if (n->flags == NWN_SKIN) {
			if (!(m->skin = arena_zalloc(A, sizeof(nwn_skin))))
				return nomem(c);
			m->skin->weights_raw = m->skin->bonerefs_raw = RAW_NULL;
		} else if (n->flags == NWN_DANGLYMESH) {
			if (!(m->dangly = arena_zalloc(A, sizeof(nwn_dangly))))
				return nomem(c);
		} else if (n->flags == NWN_AABB) {
			if (!(m->aabb = arena_zalloc(A, sizeof(nwn_aabb))))
				return nomem(c);
			/* walkmeshes are neither drawn nor cast shadows by default
			 * [N §2.5; the reference's aabb defaults] */
			m->render = 0;
			m->shadow = 0;
		} else if (n->flags == NWN_ANIMMESH) {
			if (!(m->anim = arena_zalloc(A, sizeof(nwn_animmesh))))
				return nomem(c);
		}
	} else if (n->flags == NWN_LIGHT) {
		nwn_light *l = arena_zalloc(A, sizeof(*l));
		if (!l)
			return nomem(c);
		n->light = l;
		l->priority = 5;
		l->dynamic_type = 1;
		l->affect_dynamic = 1;
		l->shadow = 1;
		l->fading_light = 1;
	} else if (n->flags == NWN_EMITTER) {
		if (!(n->emitter = arena_zalloc(A, sizeof(nwn_emitter))))
			return nomem(c);
	} else if (n->flags == NWN_REFERENCE) {
		if (!(n->ref = arena_zalloc(A, sizeof(nwn_reference))))
			return nomem(c);
	}
	return LFS_OK;
}

/* ------------------------------------------------------------ controllers */

static uint32_t controller_id(uint32_t flags, const char *name)
{
	if ((flags & NWN_HAS_MESH) && !strcasecmp(name, "setfillumcolor"))
		return NWN_CTRL_SELFILLUMCOLOR; /* nwnmdlcomp's spelling */
	return nwn_controller_id(flags, name);
}

/* One key row: time + up to 9 values (rows with exactly 5 numbers are
 * axis-angle orientations and become quaternions [N §2.3]). */
typedef struct krow {
	float v[10];
	int ncol;
} krow;

static lfs_err key_row(comp *c, const mdl_row *r, uint32_t first, bool implicit_time, krow *k)
{
	memset(k, 0, sizeof(*k));
	uint32_t i = first;
	if (implicit_time) {
		k->ncol = 1;
	} else {
		if (i >= r->ntok)
			return LFS_OK; /* blank row: no time, no values */
		if (!tok_f(r->tok[i].s, &k->v[0]))
			return at(c, r, i, "'%s': key time is not a number", r->tok[i].s);
		k->ncol = 1;
		i++;
	}
	for (; i < r->ntok && k->ncol < 10; i++) {
		if (!tok_f(r->tok[i].s, &k->v[k->ncol]))
			return at(c, r, i, "'%s': controller value is not a number", r->tok[i].s);
		k->ncol++;
	}
	if (k->ncol == 5) {
		float q[4];
		nwn_axis_angle_to_quat(&k->v[1], q);
		memcpy(&k->v[1], q, sizeof(q));
	}
	return LFS_OK;
}

static lfs_err add_controller(comp *c, cnode *cn, const mdl_stmt *s, uint32_t id)
{
	krow *rows;
	uint32_t nrows = s->kind == MDL_ST_KEYS ? s->n_rows : 1;
	if (nrows == 0)
		return LFS_OK; /* no data: nothing stored */
	rows = malloc((size_t)nrows * sizeof(krow));
	if (!rows)
		return nomem(c);
	lfs_err e = LFS_OK;
	for (uint32_t r = 0; r < nrows && !e; r++) {
		if (s->kind == MDL_ST_KEYS)
			e = key_row(c, &s->rows[r], 0, false, &rows[r]);
		else
			e = key_row(c, &s->head, 1, true, &rows[r]);
	}
	if (e)
		goto out;
	int ncol = rows[0].ncol;
	if (nrows > 32767 || cn->data.n + (size_t)nrows * 10 > 32767) {
		e = at(c, &s->head, 0, "'%s': controller data exceeds the binary's 16-bit key offsets",
		       s->head.tok[0].s);
		goto out;
	}
	if (cn->nctrl == cn->capc) {
		uint32_t cap = cn->capc ? cn->capc * 2 : 8;
		nwn_controller *nc = realloc(cn->ctrls, (size_t)cap * sizeof(*nc));
		if (!nc) {
			e = nomem(c);
			goto out;
		}
		cn->ctrls = nc;
		cn->capc = cap;
	}
	nwn_controller *k = &cn->ctrls[cn->nctrl++];
	memset(k, 0, sizeof(*k));
	k->type = id;
	k->rows = (uint16_t)nrows;
	k->columns = (uint8_t)(int8_t)(ncol - 1);
	if (s->kind == MDL_ST_KEYS && s->bezier)
		k->columns |= 0x10;
	k->ncols = k->columns == 0xFF ? 0 : (k->columns & 0x0F);
	k->bezier = k->columns != 0xFF && (k->columns & 0x10);
	k->key_offset = (uint16_t)cn->data.n;
	for (uint32_t r = 0; r < nrows; r++)
		if (!fvec_push(&cn->data, rows[r].v[0])) {
			e = nomem(c);
			goto out;
		}
	k->data_offset = (uint16_t)cn->data.n;
	for (uint32_t r = 0; r < nrows && ncol > 1; r++)
		for (int j = 1; j < ncol; j++)
			if (!fvec_push(&cn->data, rows[r].v[j])) {
				e = nomem(c);
				goto out;
			}
	k->name = nwn_controller_name(cn->n.flags, id);
out:
	free(rows);
	return e;
}

/* ------------------------------------------------------------ attributes */

static const char *const emitter_flags[11] = {
	"p2p", "p2p_sel", "affectedByWind", "m_isTinted", "bounce", "random",
	"inherit", "inheritvel", "inherit_local", "splat", "inherit_part",
};

static bool kw(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

static lfs_err attr_light(comp *c, cnode *cn, const mdl_stmt *s, const char *k, bool *done)
{
	nwn_light *l = cn->n.light;
	int32_t iv;
	lfs_err e = LFS_OK;
	*done = true;
	uint32_t *ip = NULL;
	if (kw(k, "ambientonly"))
		ip = &l->ambient_only;
	else if (kw(k, "shadow"))
		ip = &l->shadow;
	else if (kw(k, "ndynamictype") || kw(k, "isdynamic"))
		ip = &l->dynamic_type;
	else if (kw(k, "affectdynamic"))
		ip = &l->affect_dynamic;
	else if (kw(k, "lightpriority"))
		ip = &l->priority;
	else if (kw(k, "generateflare"))
		ip = &l->generate_flare;
	else if (kw(k, "fadinglight"))
		ip = &l->fading_light;
	if (ip) {
		if (!(e = head_i(c, s, &iv)))
			*ip = (uint32_t)iv;
		return e;
	}
	if (kw(k, "flareradius"))
		return head_f(c, s, 0, &l->flare_radius);
	fvec v = { 0 };
	if (kw(k, "flaresizes") || kw(k, "flarepositions") || kw(k, "flarecolorshifts")) {
		uint32_t cols = kw(k, "flarecolorshifts") ? 3 : 1;
		if ((e = rows_f(c, s, cols, &v))) {
			free(v.v);
			return e;
		}
		float *dst = arena_zalloc(c->ar, (size_t)v.n * sizeof(float));
		if (!dst) {
			free(v.v);
			return nomem(c);
		}
		if (v.n)
			memcpy(dst, v.v, (size_t)v.n * sizeof(float));
		uint32_t rows = v.n / cols;
		free(v.v);
		if (kw(k, "flaresizes")) {
			l->flare_sizes = dst;
			l->sizes_arr.count = l->sizes_arr.alloc = rows;
		} else if (kw(k, "flarepositions")) {
			l->flare_positions = dst;
			l->positions_arr.count = l->positions_arr.alloc = rows;
		} else {
			l->flare_colorshifts = dst;
			l->colorshifts_arr.count = l->colorshifts_arr.alloc = rows;
		}
		return LFS_OK;
	}
	if (kw(k, "texturenames")) {
		char **names = arena_zalloc(c->ar, ((size_t)s->n_rows + 1) * sizeof(char *));
		if (!names)
			return nomem(c);
		for (uint32_t r = 0; r < s->n_rows; r++) {
			const char *t = s->rows[r].ntok ? s->rows[r].tok[0].s : "";
			size_t len = strlen(t);
			names[r] = arena_zalloc(c->ar, len + 1);
			if (!names[r])
				return nomem(c);
			memcpy(names[r], t, len);
		}
		l->flare_textures = names;
		l->texnames_arr.count = l->texnames_arr.alloc = s->n_rows;
		return LFS_OK;
	}
	*done = false;
	return LFS_OK;
}

static lfs_err attr_emitter(comp *c, cnode *cn, const mdl_stmt *s, const char *k, bool *done)
{
	nwn_emitter *m = cn->n.emitter;
	int32_t iv;
	lfs_err e;
	*done = true;
	for (int i = 0; i < 11; i++)
		if (kw(k, emitter_flags[i])) {
			if ((e = head_i(c, s, &iv)))
				return e;
			if (iv)
				m->flags |= 1u << i;
			else
				m->flags &= ~(1u << i);
			return LFS_OK;
		}
	uint32_t *ip = NULL;
	if (kw(k, "xgrid"))
		ip = &m->x_grid;
	else if (kw(k, "ygrid"))
		ip = &m->y_grid;
	else if (kw(k, "loop"))
		ip = &m->loop;
	else if (kw(k, "twosidedtex"))
		ip = &m->two_sided_tex;
	else if (kw(k, "spawntype"))
		ip = &m->spawn_type; /* any value, e.g. EE's -1 [N §2.2] */
	if (ip) {
		if (!(e = head_i(c, s, &iv)))
			*ip = (uint32_t)iv;
		return e;
	}
	if (kw(k, "renderorder")) {
		if (!(e = head_i(c, s, &iv)))
			m->render_order = (uint16_t)iv;
		return e;
	}
	if (kw(k, "deadspace"))
		return head_f(c, s, 0, &m->dead_space);
	if (kw(k, "blastradius"))
		return head_f(c, s, 0, &m->blast_radius);
	if (kw(k, "blastlength"))
		return head_f(c, s, 0, &m->blast_length);
	if (kw(k, "update"))
		head_str(s, m->update, 32);
	else if (kw(k, "render"))
		head_str(s, m->render, 32);
	else if (kw(k, "blend"))
		head_str(s, m->blend, 32);
	else if (kw(k, "texture"))
		head_str(s, m->texture, 64);
	else if (kw(k, "chunkname"))
		head_str(s, m->chunk_name, 16);
	else
		*done = false;
	return LFS_OK;
}

static lfs_err attr_mesh(comp *c, cnode *cn, const mdl_stmt *s, const char *k, bool *done)
{
	nwn_mesh *m = cn->n.mesh;
	int32_t iv;
	lfs_err e = LFS_OK;
	*done = true;
	float *vp = NULL;
	if (kw(k, "bmin"))
		vp = m->bmin;
	else if (kw(k, "bmax"))
		vp = m->bmax;
	else if (kw(k, "diffuse"))
		vp = m->diffuse;
	else if (kw(k, "ambient"))
		vp = m->ambient;
	else if (kw(k, "specular"))
		vp = m->specular;
	if (vp) {
		float t[3];
		if (!(e = head_fv(c, s, t, 3)))
			memcpy(vp, t, sizeof(t));
		return e;
	}
	if (kw(k, "shininess"))
		return head_f(c, s, 0, &m->shininess);
	uint32_t *ip = NULL;
	if (kw(k, "shadow"))
		ip = &m->shadow;
	else if (kw(k, "beaming"))
		ip = &m->beaming;
	else if (kw(k, "render"))
		ip = &m->render;
	else if (kw(k, "transparencyhint"))
		ip = &m->transparency_hint;
	else if (kw(k, "tilefade"))
		ip = &m->tile_fade;
	if (ip) {
		if (!(e = head_i(c, s, &iv)))
			*ip = (uint32_t)iv;
		return e;
	}
	if (kw(k, "rotatetexture") || kw(k, "lightmapped")) {
		if (!(e = head_i(c, s, &iv)))
			*(kw(k, "lightmapped") ? &m->lightmapped : &m->rotate_texture) = (uint8_t)iv;
		return e;
	}
	if (kw(k, "bitmap") || kw(k, "texture0")) {
		head_str(s, m->textures[0], 64);
		return LFS_OK;
	}
	if (kw(k, "texture1") || kw(k, "texture2") || kw(k, "texture3")) {
		head_str(s, m->textures[k[7] - '0'], 64);
		return LFS_OK;
	}
	if (kw(k, "materialname")) { /* EE: the 4th texture slot [N §3.3] */
		head_str(s, m->textures[3], 64);
		return LFS_OK;
	}
	if (kw(k, "renderhint")) { /* EE [N §3.3] */
		const char *t = mdl_stmt_arg(s, 0);
		if (t && kw(t, "NormalAndSpecMapped"))
			m->render_hint = 2;
		else if (t && tok_i(t, &iv))
			m->render_hint = (uint32_t)iv;
		else
			m->render_hint = 0;
		return LFS_OK;
	}
	if (s->kind != MDL_ST_LIST) {
		*done = false;
		return LFS_OK;
	}
	if (kw(k, "verts"))
		return rows_f(c, s, 3, &cn->verts);
	if (kw(k, "tverts"))
		return rows_f(c, s, 3, &cn->tverts[0]);
	if (kw(k, "tverts1") || kw(k, "tverts2") || kw(k, "tverts3"))
		return rows_f(c, s, 3, &cn->tverts[k[6] - '0']);
	if (kw(k, "colors"))
		return rows_f(c, s, 3, &cn->colors);
	if (kw(k, "normals"))
		return rows_f(c, s, 3, &cn->normals);
	if (kw(k, "texindices1") || kw(k, "texindices2") || kw(k, "texindices3")) {
		int t = k[10] - '0';
		free(cn->texind[t]);
		return rows_i(c, s, 3, &cn->texind[t], &cn->ntexind[t]);
	}
	if (kw(k, "mirrorlist")) {
		int32_t *v;
		free(cn->mirror);
		cn->mirror = NULL;
		e = rows_i(c, s, 1, &v, &cn->nmirror);
		cn->mirror = (uint32_t *)v;
		return e;
	}
	if (kw(k, "faces")) {
		int32_t *v;
		uint32_t nr;
		if ((e = rows_i(c, s, 8, &v, &nr))) {
			free(v);
			return e;
		}
		free(cn->faces);
		cn->faces = malloc(((size_t)nr + 1) * sizeof(nwn_src_face));
		if (!cn->faces) {
			free(v);
			return nomem(c);
		}
		for (uint32_t r = 0; r < nr; r++) {
			const int32_t *x = v + (size_t)r * 8;
			nwn_src_face *f = &cn->faces[r];
			f->v[0] = x[0];
			f->v[1] = x[1];
			f->v[2] = x[2];
			f->smooth = (uint32_t)x[3];
			f->t[0] = x[4];
			f->t[1] = x[5];
			f->t[2] = x[6];
			f->surface = (uint32_t)x[7];
		}
		cn->nfaces = nr;
		free(v);
		return LFS_OK;
	}
	if (kw(k, "tangents") || kw(k, "multimaterial")) {
		c->warnings++; /* no slot in the binary layout */
		return LFS_OK;
	}
	*done = false;
	return LFS_OK;
}

static lfs_err attr_part(comp *c, cnode *cn, const mdl_stmt *s, const char *k, bool *done)
{
	nwn_node *n = &cn->n;
	lfs_err e = LFS_OK;
	*done = false;
	if (n->flags & NWN_HAS_SKIN) {
		*done = true;
		if (kw(k, "weights")) {
			cn->weights_stmt = s;
			return LFS_OK;
		}
		nwn_skin *sk = n->mesh->skin;
		if (kw(k, "qbone_ref_inv") || kw(k, "tbone_ref_inv")) {
			bool q = kw(k, "qbone_ref_inv");
			fvec v = { 0 };
			if ((e = rows_f(c, s, q ? 4 : 3, &v))) {
				free(v.v);
				return e;
			}
			float *d = arena_zalloc(c->ar, (size_t)v.n * sizeof(float));
			if (!d) {
				free(v.v);
				return nomem(c);
			}
			if (v.n)
				memcpy(d, v.v, (size_t)v.n * sizeof(float));
			free(v.v);
			if (q) {
				sk->qbone_ref_inv = d;
				sk->qbone_arr.count = sk->qbone_arr.alloc = s->n_rows;
			} else {
				sk->tbone_ref_inv = d;
				sk->tbone_arr.count = sk->tbone_arr.alloc = s->n_rows;
			}
			return LFS_OK;
		}
		if (kw(k, "boneconstantindices"))
			return LFS_OK; /* recomputed (zeros) */
		*done = false;
	}
	if (n->flags & NWN_HAS_DANGLY) {
		*done = true;
		nwn_dangly *d = n->mesh->dangly;
		if (kw(k, "displacement"))
			return head_f(c, s, 0, &d->displacement);
		if (kw(k, "tightness"))
			return head_f(c, s, 0, &d->tightness);
		if (kw(k, "period"))
			return head_f(c, s, 0, &d->period);
		if (kw(k, "constraints"))
			return rows_f(c, s, 1, &cn->constraints);
		*done = false;
	}
	if (n->flags & NWN_HAS_ANIM) {
		*done = true;
		if (kw(k, "sampleperiod"))
			return head_f(c, s, 0, &n->mesh->anim->sample_period);
		if (kw(k, "animverts"))
			return rows_f(c, s, 3, &cn->animverts);
		if (kw(k, "animtverts"))
			return rows_f(c, s, 3, &cn->animtverts);
		*done = false;
	}
	if ((n->flags & NWN_HAS_AABB) && kw(k, "aabb") && s->kind == MDL_ST_LIST) {
		*done = true;
		nwn_aabb *a = n->mesh->aabb;
		nwn_aabb_entry *ents = arena_zalloc(c->ar, ((size_t)s->n_rows + 1) * sizeof(*ents));
		if (!ents)
			return nomem(c);
		/* rows are the tree depth first; a leaf has face >= 0, an inner
		 * entry is followed by its two subtrees [N §2.2] */
		uint32_t r = 0;
		uint16_t *stack = malloc(((size_t)s->n_rows + 1) * sizeof(uint16_t));
		uint32_t *open = malloc(((size_t)s->n_rows + 1) * sizeof(uint32_t));
		uint32_t sp = 0;
		if (!stack || !open) {
			free(stack);
			free(open);
			return nomem(c);
		}
		bool ok = true;
		uint16_t depth = 0;
		for (; r < s->n_rows; r++) {
			const mdl_row *row = &s->rows[r];
			nwn_aabb_entry *x = &ents[r];
			float f[6];
			int32_t leaf = 0, plane = 0;
			for (int i = 0; i < 6; i++)
				if (i >= (int)row->ntok || !tok_f(row->tok[i].s, &f[i])) {
					free(stack);
					free(open);
					return at(c, row, (uint32_t)i, "aabb row: expected 6 numbers and a face index");
				}
			if (row->ntok < 7 || !tok_i(row->tok[6].s, &leaf)) {
				free(stack);
				free(open);
				return at(c, row, 6, "aabb row: expected a face index");
			}
			bool has_plane = row->ntok >= 8 && tok_i(row->tok[7].s, &plane);
			memcpy(x->bmin, f, 3 * sizeof(float));
			memcpy(x->bmax, f + 3, 3 * sizeof(float));
			x->leaf_face = leaf;
			x->plane = has_plane ? (uint32_t)plane : 0;
			x->depth = depth;
			if (!has_plane && leaf == -1)
				x->plane = 0xFFFFFFFFu; /* computed below */
			if (leaf == -1) {
				/* inner: two children follow */
				stack[sp] = 2;
				open[sp++] = r;
				depth++;
			} else {
				/* leaf: close finished parents */
				while (sp > 0) {
					if (--stack[sp - 1] > 0)
						break;
					sp--;
					depth--;
				}
				if (sp == 0) {
					r++;
					break;
				}
			}
		}
		ok = (sp == 0);
		free(stack);
		free(open);
		if (!ok || r != s->n_rows)
			return at(c, &s->head, 0, "aabb: the rows do not form one complete tree");
		/* plane bits of inner entries written without them (NN rule) */
		for (uint32_t i = 0; i < s->n_rows; i++) {
			if (ents[i].plane != 0xFFFFFFFFu)
				continue;
			uint32_t l = i + 1, rr = 0;
			for (uint32_t j = i + 1; j < s->n_rows && ents[j].depth > ents[i].depth; j++)
				if (ents[j].depth == ents[i].depth + 1 && j != l) {
					rr = j;
					break;
				}
			ents[i].plane = rr ? nwn_aabb_plane(&ents[l], &ents[rr]) : 0;
		}
		a->entries = ents;
		a->n_entries = s->n_rows;
		a->root_ptr = s->n_rows ? 1 : 0;
		cn->has_aabb_rows = true;
		return LFS_OK;
	}
	return LFS_OK;
}

static lfs_err node_statement(comp *c, cnode *cn, const mdl_stmt *s)
{
	nwn_node *n = &cn->n;
	const char *k = s->kind == MDL_ST_KEYS ? s->name : s->head.tok[0].s;
	/* controllers first (the reference tries them before attributes) */
	uint32_t id = controller_id(n->flags, k);
	if (id && s->kind != MDL_ST_LIST)
		return add_controller(c, cn, s, id);
	if (s->kind == MDL_ST_KEYS) {
		c->warnings++;
		return LFS_OK;
	}
	bool done = false;
	lfs_err e = LFS_OK;
	if (kw(k, "wirecolor"))
		return LFS_OK;
	if (kw(k, "inheritcolor")) {
		int32_t iv;
		if (!(e = head_i(c, s, &iv)))
			n->inherit_color = (uint32_t)iv;
		return e;
	}
	if (n->light && ((e = attr_light(c, cn, s, k, &done)) || done))
		return e;
	if (n->emitter && ((e = attr_emitter(c, cn, s, k, &done)) || done))
		return e;
	if (n->ref) {
		if (kw(k, "reattachable")) {
			int32_t iv;
			if (!(e = head_i(c, s, &iv)))
				n->ref->reattachable = (uint32_t)iv;
			return e;
		}
		if (kw(k, "refmodel")) {
			head_str(s, n->ref->ref_model, 64);
			return LFS_OK;
		}
	}
	if (n->mesh) {
		if ((e = attr_part(c, cn, s, k, &done)) || done)
			return e;
		if ((e = attr_mesh(c, cn, s, k, &done)) || done)
			return e;
	}
	c->warnings++; /* unknown or editor-only keyword: ignored */
	return LFS_OK;
}

/* ------------------------------------------------------------------ tree */

static int32_t find_in_tree(const cgeom *g, int32_t at_, const char *name, uint32_t depth)
{
	if (at_ < 0 || depth > 4096)
		return -1;
	const cnode *n = &g->nodes[at_];
	if (!strcasecmp(n->n.name, name))
		return at_;
	for (uint32_t i = 0; i < n->nkids; i++) {
		int32_t r = find_in_tree(g, (int32_t)n->kids[i], name, depth + 1);
		if (r >= 0)
			return r;
	}
	return -1;
}

static lfs_err attach(comp *c, cgeom *g, uint32_t idx)
{
	cnode *cn = &g->nodes[idx];
	const mdl_node *src = cn->src;
	if (!src->parent)
		return LFS_OK; /* no parent line: the node belongs to no tree */
	if (!strcasecmp(src->parent, "NULL")) {
		if (g->root >= 0)
			return lfs_fail_at(c->err, c->file, src->parent_line, 1,
					   "node '%s': a second node with parent NULL (the geometry already has root '%s')",
					   cn->n.name, g->nodes[g->root].n.name);
		g->root = (int32_t)idx;
		cn->attached = true;
		return LFS_OK;
	}
	char pname[32]; /* the reference reads the parent name into 32 bytes */
	size_t pl = strlen(src->parent);
	memcpy(pname, src->parent, pl > 31 ? 31 : pl);
	pname[pl > 31 ? 31 : pl] = '\0';
	int32_t p = find_in_tree(g, g->root, pname, 0);
	if (p < 0)
		return lfs_fail_at(c->err, c->file, src->parent_line, 1,
				   "node '%s': unknown parent node '%s' (a parent must be defined earlier in the same geometry)",
				   cn->n.name, src->parent);
	cnode *pn = &g->nodes[p];
	if (pn->nkids == pn->capk) {
		uint32_t cap = pn->capk ? pn->capk * 2 : 4;
		uint32_t *nk = realloc(pn->kids, (size_t)cap * sizeof(uint32_t));
		if (!nk)
			return nomem(c);
		pn->kids = nk;
		pn->capk = cap;
	}
	pn->kids[pn->nkids++] = idx;
	cn->parent = p;
	cn->attached = true;
	return LFS_OK;
}

static void free_cnode(cnode *cn)
{
	free(cn->kids);
	free(cn->ctrls);
	free(cn->data.v);
	free(cn->verts.v);
	for (int t = 0; t < 4; t++) {
		free(cn->tverts[t].v);
		free(cn->texind[t]);
	}
	free(cn->colors.v);
	free(cn->normals.v);
	free(cn->constraints.v);
	free(cn->animverts.v);
	free(cn->animtverts.v);
	free(cn->faces);
	free(cn->mirror);
}

static void free_cgeom(cgeom *g)
{
	for (uint32_t i = 0; i < g->n; i++)
		free_cnode(&g->nodes[i]);
	free(g->nodes);
	memset(g, 0, sizeof(*g));
}

/* Finish a node at `endnode`: copy controllers to the arena, derive meshes. */
static lfs_err finish_node(comp *c, cnode *cn, bool model_geom, float *model_radius)
{
	nwn_node *n = &cn->n;
	if (cn->nctrl) {
		n->ctrls = arena_zalloc(c->ar, (size_t)cn->nctrl * sizeof(nwn_controller));
		if (!n->ctrls)
			return nomem(c);
		memcpy(n->ctrls, cn->ctrls, (size_t)cn->nctrl * sizeof(nwn_controller));
		n->n_ctrls = cn->nctrl;
		n->ctrl_arr.count = n->ctrl_arr.alloc = cn->nctrl;
	}
	if (cn->data.n) {
		n->ctrl_data = arena_zalloc(c->ar, (size_t)cn->data.n * sizeof(float));
		if (!n->ctrl_data)
			return nomem(c);
		memcpy(n->ctrl_data, cn->data.v, (size_t)cn->data.n * sizeof(float));
		n->n_ctrl_data = cn->data.n;
		n->ctrl_data_arr.count = n->ctrl_data_arr.alloc = cn->data.n;
	}
	if (n->flags == NWN_EMITTER && model_geom && *model_radius < 40.0f)
		*model_radius = 40.0f;
	if (!n->mesh)
		return LFS_OK;
	nwn_mesh_src *s = &cn->ms;
	s->verts = cn->verts.v;
	s->n_verts = cn->verts.n / 3;
	for (int t = 0; t < 4; t++) {
		s->tverts[t] = cn->tverts[t].v;
		s->n_tverts[t] = cn->tverts[t].n / 3;
		s->texindices[t] = cn->texind[t];
		s->n_texindices[t] = cn->ntexind[t];
	}
	s->colors = cn->colors.v;
	s->n_colors = cn->colors.n / 3;
	s->normals = cn->normals.v;
	s->n_normals = cn->normals.n / 3;
	s->faces = cn->faces;
	s->n_faces = cn->nfaces;
	s->mirror = cn->mirror;
	s->n_mirror = cn->nmirror;
	s->constraints = cn->constraints.v;
	s->n_constraints = cn->constraints.n;
	s->anim_verts = cn->animverts.v;
	s->n_anim_verts = cn->animverts.n / 3;
	s->anim_tverts = cn->animtverts.v;
	s->n_anim_tverts = cn->animtverts.n / 3;
	s->warnings = &c->warnings;
	lfs_error sub = { 0 };
	lfs_err e = nwn_derive_mesh(n, s, &c->alloc, &cn->split_src, &sub);
	if (e) {
		if (c->err)
			lfs_fail_at(c->err, c->file, cn->src->head.line, 1, "node '%s': %s", n->name, sub.msg);
		return e == LFS_ERR_NOMEM ? e : LFS_ERR_PARSE;
	}
	if (n->flags == NWN_AABB && !cn->has_aabb_rows && (e = nwn_derive_aabb(n->mesh, &c->alloc, c->err)))
		return e;
	return LFS_OK;
}

/* Parse the nodes of one geometry (model or animation). */
static lfs_err build_geometry(comp *c, cgeom *g, const mdl_node *nodes, uint32_t count, bool model_geom,
			      float *model_radius)
{
	g->root = -1;
	g->nodes = calloc(count ? count : 1, sizeof(cnode));
	if (!g->nodes)
		return nomem(c);
	for (uint32_t i = 0; i < count; i++) {
		cnode *cn = &g->nodes[i];
		lfs_err e = init_node(c, cn, &nodes[i], !model_geom);
		g->n = i + 1;
		if (e)
			return e;
		/* the parent line is normally first; attach before the statements
		 * as the reference does when it reads it */
		if ((e = attach(c, g, i)))
			return e;
		for (uint32_t k = 0; k < nodes[i].n_stmts; k++)
			if ((e = node_statement(c, cn, &nodes[i].stmts[k])))
				return e;
		cn->n.part_number = (int32_t)g->node_count++;
		if ((e = finish_node(c, cn, model_geom, model_radius)))
			return e;
	}
	return LFS_OK;
}

/* Depth-first flatten of the attached tree into a nwn_geometry node array. */
static lfs_err flatten(comp *c, cgeom *g, nwn_geometry *out, uint32_t **order_out)
{
	out->nodes = NULL;
	out->n_nodes = 0;
	if (g->root < 0)
		return LFS_OK;
	uint32_t *order = malloc((size_t)g->n * sizeof(uint32_t));
	uint32_t *stack = malloc(((size_t)g->n + 1) * sizeof(uint32_t));
	int32_t *pos = malloc((size_t)g->n * sizeof(int32_t));
	if (!order || !stack || !pos) {
		free(order);
		free(stack);
		free(pos);
		return nomem(c);
	}
	uint32_t no = 0, sp = 0;
	stack[sp++] = (uint32_t)g->root;
	while (sp) {
		uint32_t i = stack[--sp];
		order[no++] = i;
		const cnode *cn = &g->nodes[i];
		for (uint32_t k = cn->nkids; k-- > 0;)
			stack[sp++] = cn->kids[k];
	}
	nwn_node *nodes = arena_zalloc(c->ar, (size_t)no * sizeof(nwn_node));
	if (!nodes) {
		free(order);
		free(stack);
		free(pos);
		return nomem(c);
	}
	for (uint32_t i = 0; i < g->n; i++)
		pos[i] = -1;
	for (uint32_t j = 0; j < no; j++)
		pos[order[j]] = (int32_t)j;
	for (uint32_t j = 0; j < no; j++) {
		const cnode *cn = &g->nodes[order[j]];
		nwn_node *n = &nodes[j];
		*n = cn->n;
		n->parent = cn->parent >= 0 ? pos[cn->parent] : -1;
		n->n_children = cn->nkids;
		n->children = NULL;
		if (cn->nkids) {
			n->children = arena_zalloc(c->ar, (size_t)cn->nkids * sizeof(uint32_t));
			if (!n->children) {
				free(order);
				free(stack);
				free(pos);
				return nomem(c);
			}
			for (uint32_t k = 0; k < cn->nkids; k++)
				n->children[k] = (uint32_t)pos[cn->kids[k]];
			n->children_arr.count = n->children_arr.alloc = cn->nkids;
		}
		n->depth = n->parent >= 0 ? nodes[n->parent].depth + 1 : 0;
	}
	free(stack);
	free(pos);
	out->nodes = nodes;
	out->n_nodes = no;
	if (order_out)
		*order_out = order;
	else
		free(order);
	return LFS_OK;
}

/* Stable reorder of children: non-mesh, opaque mesh, transparent mesh —
 * only where a transparent mesh precedes an opaque sibling. */
static int sort_key(const cnode *n)
{
	if (!n->n.mesh)
		return 0;
	return n->n.mesh->transparency_hint ? 2 : 1;
}

static void sort_transparency(cgeom *g)
{
	for (uint32_t i = 0; i < g->n; i++) {
		cnode *cn = &g->nodes[i];
		bool trans = false, after = false;
		for (uint32_t k = 0; k < cn->nkids; k++) {
			const cnode *ch = &g->nodes[cn->kids[k]];
			bool t = ch->n.mesh && ch->n.mesh->transparency_hint > 0;
			if (t)
				trans = true;
			else if (trans)
				after = true;
		}
		if (!after)
			continue;
		for (uint32_t k = 1; k < cn->nkids; k++) { /* insertion sort: stable */
			uint32_t x = cn->kids[k], j = k;
			while (j > 0 && sort_key(&g->nodes[cn->kids[j - 1]]) > sort_key(&g->nodes[x])) {
				cn->kids[j] = cn->kids[j - 1];
				j--;
			}
			cn->kids[j] = x;
		}
	}
}

/* Skin weights: bone names -> depth-first node index of the model tree. */
static lfs_err derive_skins(comp *c, cgeom *g, nwn_geometry *flat, const uint32_t *order)
{
	for (uint32_t j = 0; j < flat->n_nodes; j++) {
		cnode *cn = &g->nodes[order[j]];
		if (cn->n.flags != NWN_SKIN)
			continue;
		const mdl_stmt *ws = cn->weights_stmt;
		uint32_t nw = ws ? ws->n_rows : 0;
		nwn_src_weight *w = calloc(nw + 1, sizeof(*w));
		if (!w)
			return nomem(c);
		for (uint32_t r = 0; r < nw; r++) {
			const mdl_row *row = &ws->rows[r];
			for (uint32_t k = 0; k < 4; k++)
				w[r].node[k] = -1;
			for (uint32_t k = 0; k < 4 && 2 * k < row->ntok; k++) {
				const char *bn = row->tok[2 * k].s;
				float wt = 0;
				if (2 * k + 1 >= row->ntok || !tok_f(row->tok[2 * k + 1].s, &wt)) {
					free(w);
					return at(c, row, 2 * k + 1, "weights: bone '%s' has no numeric weight", bn);
				}
				int32_t idx = -1;
				for (uint32_t q = 0; q < flat->n_nodes; q++)
					if (!strcasecmp(flat->nodes[q].name, bn)) {
						idx = (int32_t)q;
						break;
					}
				if (idx < 0) {
					free(w);
					return at(c, row, 2 * k, "weights: bone '%s' is not a node of the model", bn);
				}
				w[r].node[k] = idx;
				w[r].w[k] = wt;
				w[r].count = k + 1;
			}
		}
		lfs_error sub = { 0 };
		lfs_err e = nwn_derive_skin(flat, j, w, nw, cn->split_src, &c->alloc, &sub);
		free(w);
		if (e) {
			if (c->err)
				lfs_fail_at(c->err, c->file, cn->src->head.line, 1, "%s", sub.msg);
			return e == LFS_ERR_NOMEM ? e : LFS_ERR_PARSE;
		}
		/* the skin part is shared by pointer: g's copy sees it */
		cn->n.mesh = flat->nodes[j].mesh;
	}
	return LFS_OK;
}

/* Part numbers from a reference geometry: the root takes the reference
 * root's number, children are matched by name among the reference node's
 * children; an unmatched child gets -1 [N §2.4, §3.8]. */
static void merge_parts(nwn_geometry *dst, uint32_t di, const nwn_geometry *src, uint32_t si, uint32_t depth)
{
	if (depth > 4096)
		return;
	dst->nodes[di].part_number = src->nodes[si].part_number;
	const nwn_node *sn = &src->nodes[si];
	nwn_node *dn = &dst->nodes[di];
	for (uint32_t i = 0; i < dn->n_children; i++) {
		uint32_t dc = dn->children[i];
		dst->nodes[dc].part_number = -1;
		for (uint32_t j = 0; j < sn->n_children; j++) {
			uint32_t sc = sn->children[j];
			if (sc < src->n_nodes && !strcasecmp(dst->nodes[dc].name, src->nodes[sc].name)) {
				merge_parts(dst, dc, src, sc, depth + 1);
				break;
			}
		}
	}
}

/* ------------------------------------------------------------------ model */

static lfs_err compile_doc(comp *c, const mdl_doc *d, nwn_model *m);

/* Edit mode: the source node of every flattened node (arena array). */
static lfs_err record_srcs(comp *c, const cgeom *g, const uint32_t *order, uint32_t n, uint32_t gi)
{
	const mdl_node **src = arena_zalloc(c->ar, ((size_t)n + 1) * sizeof(*src));
	uint32_t **split = arena_zalloc(c->ar, ((size_t)n + 1) * sizeof(*split));
	if (!src || !split)
		return nomem(c);
	for (uint32_t j = 0; j < n && order; j++) {
		src[j] = g->nodes[order[j]].src;
		split[j] = g->nodes[order[j]].split_src;
	}
	c->srcs[gi] = src;
	c->splits[gi] = split;
	return LFS_OK;
}

/* Load the supermodel through the callback: binary (decoded) or ASCII
 * (compiled, recursively). Returns NULL when not available. */
static lfs_err load_super(comp *c, const char *name, nwn_model **out, nwn_model **to_free, arena *sub_ar)
{
	*out = NULL;
	*to_free = NULL;
	if (!c->lookup || c->depth >= MAX_SUPER_DEPTH)
		return LFS_OK;
	uint8_t *data = NULL;
	size_t n = 0;
	if (!c->lookup(c->lctx, name, &data, &n) || !data)
		return LFS_OK;
	lfs_err e = LFS_OK;
	if (nwn_mdl_is_binary(data, n)) {
		if (nwn_mdl_decode(data, n, out, NULL) == LFS_OK)
			*to_free = *out;
	} else {
		mdl_doc *d = NULL;
		if (mdl_parse(name, data, n, &d, NULL) == LFS_OK) {
			comp sc = *c;
			sc.ar = sub_ar;
			sc.alloc.ctx = sub_ar;
			sc.depth = c->depth + 1;
			sc.file = name;
			sc.edit_mode = false;
			sc.srcs = NULL;
			sc.splits = NULL;
			lfs_error ign;
			sc.err = &ign;
			nwn_model *sm = arena_zalloc(sub_ar, sizeof(*sm));
			if (sm && compile_doc(&sc, d, sm) == LFS_OK)
				*out = sm;
			else if (!sm)
				e = nomem(c);
		}
		mdl_doc_free(d);
	}
	free(data);
	return e;
}

static lfs_err compile_doc(comp *c, const mdl_doc *d, nwn_model *m)
{
	lfs_err e = LFS_OK;
	const mdl_stmt *nm = mdl_doc_find(d, "newmodel");
	if (!nm || !mdl_stmt_arg(nm, 0))
		return lfs_fail_at(c->err, c->file, nm ? nm->head.line : 1, 1,
				   "no 'newmodel <name>' statement: not a model file (walkmesh side files are not compiled)");
	memset(m, 0, sizeof(*m));
	strncpy(m->geom.name, mdl_stmt_arg(nm, 0), 63);
	m->geom.fn[0] = FN_GEOM[0];
	m->geom.fn[1] = FN_GEOM[1];
	m->geom.geom_type = 2;
	m->fog = 1;
	m->animation_scale = 1.0f;
	/* model box and radius: the reference's defaults (no corpus file states
	 * them; every peer binary without `bmin/bmax/radius` has these) */
	m->bmin[0] = m->bmin[1] = -5.0f;
	m->bmin[2] = -1.0f;
	m->bmax[0] = m->bmax[1] = 5.0f;
	m->bmax[2] = 10.0f;
	float radius_stmt = 7.0f;
	uint32_t radius_line = 0;
	for (uint32_t i = 0; i < d->n_stmts; i++) {
		const mdl_stmt *s = &d->stmts[i];
		const char *k = s->head.tok[0].s;
		if (kw(k, "setsupermodel")) {
			const char *sm = mdl_stmt_arg(s, 1);
			memset(m->supermodel, 0, sizeof(m->supermodel));
			if (sm)
				strncpy(m->supermodel, sm, 63);
		} else if (kw(k, "classification")) {
			const char *v = mdl_stmt_arg(s, 0);
			if (!v)
				continue;
			if (kw(v, "effect") || kw(v, "effects"))
				m->classification = NWN_CLASS_EFFECT;
			else if (kw(v, "tile"))
				m->classification = NWN_CLASS_TILE;
			else if (kw(v, "character"))
				m->classification = NWN_CLASS_CHARACTER;
			else if (kw(v, "door"))
				m->classification = NWN_CLASS_DOOR;
			else
				c->warnings++; /* other/unknown/item/gui: the compiler leaves 0 */
		} else if (kw(k, "setanimationscale")) {
			float f;
			const char *v = mdl_stmt_arg(s, 0);
			m->animation_scale = (v && tok_f(v, &f)) ? f : 1.0f;
		} else if (kw(k, "ignorefog")) {
			int32_t iv;
			const char *v = mdl_stmt_arg(s, 0);
			if (v && tok_i(v, &iv))
				m->fog = iv ? 0 : 1; /* "ignore fog" clears the fog flag */
		} else if (kw(k, "bmin") || kw(k, "bmax")) {
			float v[3];
			if ((e = head_fv(c, s, v, 3)))
				return e;
			memcpy(kw(k, "bmin") ? m->bmin : m->bmax, v, sizeof(v));
		} else if (kw(k, "radius")) {
			if ((e = head_f(c, s, 0, &radius_stmt)))
				return e;
			radius_line = s->head.line;
		}
	}

	/* supermodel */
	nwn_model *super = NULL, *super_free = NULL;
	arena sub_ar = { 0 };
	cgeom g = { 0 };
	cgeom *ag = NULL;
	uint32_t nanims = 0;
	if (m->supermodel[0] && strcasecmp(m->supermodel, "NULL")) {
		if ((e = load_super(c, m->supermodel, &super, &super_free, &sub_ar)))
			goto out;
	}

	/* model geometry */
	m->radius = radius_stmt;
	float emitter_radius = 0;
	if (super)
		g.node_count = super->geom.node_count_field + 1;
	if ((e = build_geometry(c, &g, d->nodes, d->n_nodes, true, &emitter_radius)))
		goto out;
	if (emitter_radius > 0) {
		/* the 40 floor applies at the emitter's endnode: a radius statement
		 * after the last emitter wins */
		uint32_t last_em = 0;
		for (uint32_t i = 0; i < g.n; i++)
			if (g.nodes[i].n.flags == NWN_EMITTER)
				last_em = g.nodes[i].src->end_line;
		if (!radius_line || radius_line < last_em) {
			if (m->radius < 40.0f)
				m->radius = 40.0f;
		}
	}
	m->geom.node_count_field = g.node_count;
	{
		nwn_geometry pre = { 0 };
		uint32_t *order = NULL;
		if ((e = flatten(c, &g, &pre, &order)))
			goto out;
		e = derive_skins(c, &g, &pre, order);
		free(order);
		if (e)
			goto out;
	}
	if (!c->edit_mode)
		sort_transparency(&g);
	if (c->edit_mode) {
		c->super_found = super != NULL;
		c->srcs = arena_zalloc(c->ar, ((size_t)d->n_anims + 1) * sizeof(*c->srcs));
		c->splits = arena_zalloc(c->ar, ((size_t)d->n_anims + 1) * sizeof(*c->splits));
		if (!c->srcs || !c->splits) {
			e = nomem(c);
			goto out;
		}
	}
	{
		uint32_t *order = NULL;
		if ((e = flatten(c, &g, &m->geom, c->edit_mode ? &order : NULL)))
			goto out;
		if (c->edit_mode && (e = record_srcs(c, &g, order, m->geom.n_nodes, 0))) {
			free(order);
			goto out;
		}
		free(order);
	}
	if (super && super->geom.n_nodes && m->geom.n_nodes)
		merge_parts(&m->geom, 0, &super->geom, 0, 0);

	/* animations */
	nanims = d->n_anims;
	if (nanims) {
		m->anims = arena_zalloc(c->ar, (size_t)nanims * sizeof(nwn_anim));
		ag = calloc(nanims, sizeof(cgeom));
		if (!m->anims || !ag) {
			e = nomem(c);
			goto out;
		}
	}
	for (uint32_t a = 0; a < nanims; a++) {
		const mdl_anim *sa = &d->anims[a];
		nwn_anim *an = &m->anims[a];
		strncpy(an->geom.name, sa->name, 63);
		an->geom.fn[0] = FN_ANIM[0];
		an->geom.fn[1] = FN_ANIM[1];
		an->geom.geom_type = 5;
		uint32_t nev = 0;
		for (uint32_t i = 0; i < sa->n_stmts; i++)
			nev += kw(sa->stmts[i].head.tok[0].s, "event");
		if (nev && !(an->events = arena_zalloc(c->ar, (size_t)nev * sizeof(nwn_event)))) {
			e = nomem(c);
			goto out;
		}
		for (uint32_t i = 0; i < sa->n_stmts; i++) {
			const mdl_stmt *s = &sa->stmts[i];
			const char *k = s->head.tok[0].s;
			if (kw(k, "length")) {
				if ((e = head_f(c, s, 0, &an->length)))
					goto out;
			} else if (kw(k, "animlength")) {
				if ((e = head_f(c, s, 1, &an->length)))
					goto out;
			} else if (kw(k, "transtime")) {
				if ((e = head_f(c, s, 0, &an->trans_time)))
					goto out;
			} else if (kw(k, "animroot")) {
				head_str(s, an->anim_root, 64);
			} else if (kw(k, "event")) {
				nwn_event ev = { 0 };
				if ((e = head_f(c, s, 0, &ev.after)))
					goto out;
				const char *en = mdl_stmt_arg(s, 1);
				if (!en) {
					e = at(c, &s->head, 0, "event: expected a time and a name");
					goto out;
				}
				strncpy(ev.name, en, 31);
				/* sorted by time; equal times keep text order */
				uint32_t pos = an->n_events;
				for (uint32_t q = 0; q < an->n_events; q++)
					if (an->events[q].after > ev.after) {
						pos = q;
						break;
					}
				memmove(&an->events[pos + 1], &an->events[pos],
					(an->n_events - pos) * sizeof(nwn_event));
				an->events[pos] = ev;
				an->n_events++;
			}
		}
		an->events_arr.count = an->events_arr.alloc = an->n_events;
		float dummy = 0;
		if ((e = build_geometry(c, &ag[a], sa->nodes, sa->n_nodes, false, &dummy)))
			goto out;
		an->geom.node_count_field = ag[a].node_count;
		{
			uint32_t *order = NULL;
			if ((e = flatten(c, &ag[a], &an->geom, c->edit_mode ? &order : NULL)))
				goto out;
			if (c->edit_mode &&
			    (e = record_srcs(c, &ag[a], order, an->geom.n_nodes, a + 1))) {
				free(order);
				goto out;
			}
			free(order);
		}
		if (an->geom.n_nodes && m->geom.n_nodes)
			merge_parts(&an->geom, 0, &m->geom, 0, 0);
	}
	m->n_anims = nanims;
	m->anims_arr.count = m->anims_arr.alloc = nanims;
out:
	free_cgeom(&g);
	if (ag) {
		for (uint32_t a = 0; a < nanims; a++)
			free_cgeom(&ag[a]);
		free(ag);
	}
	nwn_model_free(super_free);
	arena_free(&sub_ar);
	return e;
}

lfs_err nwn_compile(const char *file, const uint8_t *text, size_t n, nwn_supermodel_lookup_fn lookup, void *ctx,
		    uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	if (!file)
		file = "<input>";
	mdl_doc *d = NULL;
	lfs_err e = mdl_parse(file, text, n, &d, err);
	if (e)
		return e;
	arena ar = { 0 };
	comp c = {
		.file = file, .err = err, .ar = &ar, .lookup = lookup, .lctx = ctx,
		.alloc = { arena_zalloc, &ar },
	};
	nwn_model *m = arena_zalloc(&ar, sizeof(*m));
	if (!m)
		e = nomem(&c);
	else
		e = compile_doc(&c, d, m);
	if (!e)
		e = nwn_mdl_encode(m, out, outn, err);
	arena_free(&ar);
	mdl_doc_free(d);
	return e;
}

/* ------------------------------------------------------------- edit mode */

lfs_err nwn_compile_doc(const char *file, const mdl_doc *d, nwn_supermodel_lookup_fn lookup, void *ctx,
			nwn_compiled *out, lfs_error *err)
{
	memset(out, 0, sizeof(*out));
	arena *ar = calloc(1, sizeof(*ar));
	if (!ar)
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, NULL, "out of memory");
	comp c = {
		.file = file ? file : "<input>", .err = err, .ar = ar, .lookup = lookup, .lctx = ctx,
		.alloc = { arena_zalloc, ar }, .edit_mode = true,
	};
	out->priv = ar;
	nwn_model *m = arena_zalloc(ar, sizeof(*m));
	lfs_err e = m ? compile_doc(&c, d, m) : nomem(&c);
	if (e) {
		nwn_compiled_free(out);
		return e;
	}
	out->model = m;
	out->src = c.srcs;
	out->split = c.splits;
	out->super_found = c.super_found;
	return LFS_OK;
}

void *nwn_compiled_zalloc(nwn_compiled *c, size_t n)
{
	if (!c || !c->priv || n > SIZE_MAX - 64)
		return NULL;
	return arena_zalloc(c->priv, n);
}

void nwn_compiled_free(nwn_compiled *c)
{
	if (!c)
		return;
	if (c->priv) {
		arena_free(c->priv);
		free(c->priv);
	}
	memset(c, 0, sizeof(*c));
}
