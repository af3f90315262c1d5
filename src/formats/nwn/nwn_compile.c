/**
 * @file nwn_compile.c
 * ASCII MDL -> nwn_model -> binary (see nwn_compile.h, docs/nwn-compile.md):
 * this part holds the arena, the value readers (floats as the reference reads
 * them), node types and controllers. Attributes: nwn_compile_attr.c; tree,
 * derivations, supermodel and the entry points: nwn_compile_model.c.
 *
 * Statement interpretation follows the ASCII grammar of real files ([N §2],
 * key in src/formats/nwn/nwn_mdl.h) and the reference compiler's tables
 * (controllers before attributes; attributes matched by keyword and node
 * type). Per node, at `endnode`: part number =
 * running count, emitters raise the model radius to 40, meshes are derived
 * (nwn_derive_mesh). After the geometry: skins (nwn_derive_skin, on the tree
 * in text order), then the children of each node are ordered opaque meshes
 * before transparent ones (stable) when a transparent mesh precedes an
 * opaque one, then part numbers are merged with the supermodel's.
 */
#include "nwn_compile_priv.h"
#include "common/floatfmt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"

/* Function pointers of the game's compiler (BioWare-compiled corpus files,
 * docs/nwn-compile.md); animmesh: none in game files, nwnmdlcomp's set. */
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


void *nc_arena_zalloc(void *ctx, size_t n)
{
	return lfs_arena_zalloc(ctx, n);
}


/* ------------------------------------------------------------------ errors */

lfs_err nc_at(comp *c, const mdl_row *r, uint32_t tok, const char *fmt, ...)
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


void nc_warn(comp *c, const mdl_row *r, uint32_t tok, const char *fmt, ...)
{
	c->warnings++;
	if (!c->warn)
		return;
	uint32_t col = (r && tok < r->ntok) ? r->tok[tok].col : 1;
	uint32_t line = r ? r->line : 1;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lfs_warn_at(c->warn, c->file, line, col, "%s", msg);
}

/* ------------------------------------------------------------ value parse */

/* A float as the reference reads it: strtod, then rounded to float.
 * Fast path (Clinger): up to 15 significant digits and a power of ten up to
 * 22 give the correctly rounded double with one multiplication or division,
 * i.e. exactly strtod's result; anything else goes to strtod. */
bool nc_tok_f(const char *s, float *out)
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
	float f = (float)d;
	if (isinf(f) && lfs_float_has_digit(s, (size_t)(end - s)))
		return false; /* beyond FLT_MAX: would be stored as inf (nc_num_msg) */
	*out = f;
	return true;
}

const char *nc_num_msg(const char *tok, const char *what)
{
	if (tok && lfs_float_overflows(tok, strlen(tok)))
		return LFS_FLOAT_RANGE_MSG;
	return what;
}

bool nc_tok_i(const char *s, int32_t *out)
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

lfs_err nc_head_f(comp *c, const mdl_stmt *s, uint32_t i, float *out)
{
	const char *t = mdl_stmt_arg(s, i);
	if (!t)
		return nc_at(c, &s->head, 0, "'%s': expected a number", s->head.tok[0].s);
	if (!nc_tok_f(t, out))
		return nc_at(c, &s->head, i + 1, "'%s': %s", t, nc_num_msg(t, "not a number"));
	return LFS_OK;
}

lfs_err nc_head_fv(comp *c, const mdl_stmt *s, float *out, int n)
{
	for (int i = 0; i < n; i++) {
		lfs_err e = nc_head_f(c, s, (uint32_t)i, &out[i]);
		if (e)
			return e;
	}
	return LFS_OK;
}

lfs_err nc_head_i(comp *c, const mdl_stmt *s, int32_t *out)
{
	const char *t = mdl_stmt_arg(s, 0);
	if (!t)
		return nc_at(c, &s->head, 0, "'%s': expected an integer", s->head.tok[0].s);
	if (!nc_tok_i(t, out))
		return nc_at(c, &s->head, 1, "'%s': not an integer", t);
	return LFS_OK;
}

/* String attribute into a fixed field (truncated to size - 1 as the
 * reference does). */
void nc_head_str(const mdl_stmt *s, char *dst, size_t size)
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
	if (v->n == UINT32_MAX || !lfs_grow32((void **)&v->v, &v->cap, v->n + 1, sizeof(float)))
		return false;
	v->v[v->n++] = f;
	return true;
}

/* Rows of a numeric list into a vector of @p cols floats per row (missing
 * columns 0, extra columns ignored). */
lfs_err nc_rows_f(comp *c, const mdl_stmt *s, uint32_t cols, fvec *v)
{
	v->n = 0;
	for (uint32_t r = 0; r < s->n_rows; r++) {
		const mdl_row *row = &s->rows[r];
		for (uint32_t k = 0; k < cols; k++) {
			float f = 0;
			if (k < row->ntok && !nc_tok_f(row->tok[k].s, &f))
				return nc_at(c, row, k, "'%s': %s", row->tok[k].s,
					     nc_num_msg(row->tok[k].s, "not a number"));
			if (!fvec_push(v, f))
				return lfs_nomem(c->err, NULL);
		}
	}
	return LFS_OK;
}

lfs_err nc_rows_i(comp *c, const mdl_stmt *s, uint32_t cols, int32_t **out, uint32_t *n)
{
	*n = 0;
	*out = malloc(((size_t)s->n_rows * cols + 1) * sizeof(int32_t));
	if (!*out)
		return lfs_nomem(c->err, NULL);
	for (uint32_t r = 0; r < s->n_rows; r++) {
		const mdl_row *row = &s->rows[r];
		for (uint32_t k = 0; k < cols; k++) {
			int32_t v = 0;
			if (k < row->ntok && !nc_tok_i(row->tok[k].s, &v))
				return nc_at(c, row, k, "'%s': not an integer", row->tok[k].s);
			(*out)[(size_t)r * cols + k] = v;
		}
	}
	*n = s->n_rows;
	return LFS_OK;
}

/* ------------------------------------------------------------ node types */

/* Node types [N §2.2]: the nine the binary layout has. */
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
	return 0;
}

/* Type words real files use that are no type: the game's compiler (and
 * nwnmdlcomp, with a warning) reads any unknown type as a dummy. Only these
 * are accepted (docs/nwn-compile.md "Accepted oddities"): `emmiter` (3
 * corpus files: vce_negblast, vff_strkchaos, ...), `pwk` (2: plc_dimdoor,
 * ptm_candle07n — walkmesh nodes left in the model), `patch` (1.69-era
 * exports; no corpus file). In edit mode (a save through the mount) they
 * are refused: the type word would not survive. */
static const char *const DUMMY_ALIASES[] = { "emmiter", "pwk", "patch" };

static lfs_err node_type(comp *c, const mdl_node *src, uint32_t *flags, bool *alias)
{
	*alias = false;
	*flags = type_flags(src->type);
	if (*flags)
		return LFS_OK;
	for (size_t i = 0; i < sizeof(DUMMY_ALIASES) / sizeof(DUMMY_ALIASES[0]); i++)
		if (!strcasecmp(src->type, DUMMY_ALIASES[i])) {
			/* a save through the mount would turn the type word (and
			 * the statements of the type it meant) into a plain dummy */
			if (c->edit_mode)
				return nc_at(c, &src->head, 1,
					     "node '%s': node type '%s' is no type of the binary format: it would be saved as a dummy (write 'dummy', or the type you mean)",
					     src->name, src->type);
			*flags = NWN_DUMMY;
			*alias = true;
			nc_warn(c, &src->head, 1, "node '%s': unknown node type '%s' compiled as a dummy (as the game's compiler does)",
				src->name, src->type);
			return LFS_OK;
		}
	if (!strcasecmp(src->type, "camera"))
		return nc_at(c, &src->head, 1,
			     "node '%s': node type 'camera' has no layout in the binary format this compiler writes",
			     src->name);
	return nc_at(c, &src->head, 1,
		     "node '%s': unknown node type '%s' (known: dummy, trimesh, danglymesh, skin, animmesh, aabb, emitter, light, reference)",
		     src->name, src->type);
}

lfs_err nc_init_node(comp *c, cnode *cn, const mdl_node *src, bool anim)
{
	nwn_node *n = &cn->n;
	memset(cn, 0, sizeof(*cn));
	cn->src = src;
	cn->parent = -1;
	n->parent = -1;
	lfs_err te = node_type(c, src, &n->flags, &cn->alias_dummy);
	if (te)
		return te;
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
		nwn_mesh *m = nc_arena_zalloc(A, sizeof(*m));
		if (!m)
			return lfs_nomem(c->err, NULL);
		n->mesh = m;
		m->fn[0] = fn[6];
		m->fn[1] = fn[7];
		nwn_fields_defaults(NWN_FK_MESH, m); /* diffuse, ambient, shininess, ... */
		m->strip_raw = RAW_NULL;
		m->verts_raw = m->normals_raw = m->colors_raw = RAW_NULL;
		for (int t = 0; t < 4; t++)
			m->tverts_raw[t] = RAW_NULL;
		for (int t = 0; t < 6; t++)
			m->texanim_raw[t] = RAW_NULL;
		if (n->flags == NWN_SKIN) {
			if (!(m->skin = nc_arena_zalloc(A, sizeof(nwn_skin))))
				return lfs_nomem(c->err, NULL);
			m->skin->weights_raw = m->skin->bonerefs_raw = RAW_NULL;
		} else if (n->flags == NWN_DANGLYMESH) {
			if (!(m->dangly = nc_arena_zalloc(A, sizeof(nwn_dangly))))
				return lfs_nomem(c->err, NULL);
			nwn_fields_defaults(NWN_FK_DANGLY, m->dangly);
		} else if (n->flags == NWN_AABB) {
			if (!(m->aabb = nc_arena_zalloc(A, sizeof(nwn_aabb))))
				return lfs_nomem(c->err, NULL);
			/* walkmeshes are neither drawn nor cast shadows by default
			 * [N §2.5; the reference's aabb defaults] */
			m->render = 0;
			m->shadow = 0;
		} else if (n->flags == NWN_ANIMMESH) {
			if (!(m->anim = nc_arena_zalloc(A, sizeof(nwn_animmesh))))
				return lfs_nomem(c->err, NULL);
			nwn_fields_defaults(NWN_FK_ANIMMESH, m->anim);
		}
	} else if (n->flags == NWN_LIGHT) {
		nwn_light *l = nc_arena_zalloc(A, sizeof(*l));
		if (!l)
			return lfs_nomem(c->err, NULL);
		n->light = l;
		nwn_fields_defaults(NWN_FK_LIGHT, l); /* lightpriority 5, shadow 1, ... */
	} else if (n->flags == NWN_EMITTER) {
		if (!(n->emitter = nc_arena_zalloc(A, sizeof(nwn_emitter))))
			return lfs_nomem(c->err, NULL);
		nwn_fields_defaults(NWN_FK_EMITTER, n->emitter);
	} else if (n->flags == NWN_REFERENCE) {
		if (!(n->ref = nc_arena_zalloc(A, sizeof(nwn_reference))))
			return lfs_nomem(c->err, NULL);
		nwn_fields_defaults(NWN_FK_REF, n->ref);
	}
	nwn_fields_defaults(NWN_FK_NODE, n);
	return LFS_OK;
}

/* ------------------------------------------------------------ controllers */

uint32_t nc_controller_id(uint32_t flags, const char *name)
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
		if (!nc_tok_f(r->tok[i].s, &k->v[0]))
			return nc_at(c, r, i, "'%s': %s", r->tok[i].s,
				     nc_num_msg(r->tok[i].s, "key time is not a number"));
		k->ncol = 1;
		i++;
	}
	for (; i < r->ntok && k->ncol < 10; i++) {
		if (!nc_tok_f(r->tok[i].s, &k->v[k->ncol]))
			return nc_at(c, r, i, "'%s': %s", r->tok[i].s,
				     nc_num_msg(r->tok[i].s, "controller value is not a number"));
		k->ncol++;
	}
	if (k->ncol == 5) {
		float q[4];
		nwn_axis_angle_to_quat(&k->v[1], q);
		memcpy(&k->v[1], q, sizeof(q));
	}
	return LFS_OK;
}

lfs_err nc_add_controller(comp *c, cnode *cn, const mdl_stmt *s, uint32_t id)
{
	krow *rows;
	uint32_t nrows = s->kind == MDL_ST_KEYS ? s->n_rows : 1;
	if (nrows == 0)
		return LFS_OK; /* no data: nothing stored */
	rows = malloc((size_t)nrows * sizeof(krow));
	if (!rows)
		return lfs_nomem(c->err, NULL);
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
		e = nc_at(c, &s->head, 0, "'%s': controller data exceeds the binary's 16-bit key offsets",
		       s->head.tok[0].s);
		goto out;
	}
	if (!lfs_grow32((void **)&cn->ctrls, &cn->capc, cn->nctrl + 1, sizeof(*cn->ctrls))) {
		e = lfs_nomem(c->err, NULL);
		goto out;
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
			e = lfs_nomem(c->err, NULL);
			goto out;
		}
	k->data_offset = (uint16_t)cn->data.n;
	for (uint32_t r = 0; r < nrows && ncol > 1; r++)
		for (int j = 1; j < ncol; j++)
			if (!fvec_push(&cn->data, rows[r].v[j])) {
				e = lfs_nomem(c->err, NULL);
				goto out;
			}
	k->name = nwn_controller_name(cn->n.flags, id);
out:
	free(rows);
	return e;
}

