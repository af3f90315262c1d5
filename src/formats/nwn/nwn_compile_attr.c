/**
 * @file nwn_compile_attr.c
 * The compiler's node statements: attributes of lights, emitters, meshes
 * and every part (matched by keyword and node type, as the reference
 * compiler does), and the per-statement dispatch (controllers first).
 */
#include "nwn_compile_priv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"

/* ------------------------------------------------------------ attributes */

bool nc_kw(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

/* A statement setting a scalar field of part @p kind (nwn_fields.def,
 * aliases included) of @p obj; *done = false when @p k names none. */
lfs_err nc_field_stmt(comp *c, const mdl_stmt *s, nwn_field_kind kind, void *obj, const char *k,
		      bool *done)
{
	const nwn_field *f = nwn_field_find(kind, k, true);
	*done = f != NULL;
	if (!f)
		return LFS_OK;
	void *p = nwn_field_ptr(f, obj);
	int32_t iv;
	uint32_t v;
	lfs_err e;
	switch ((nwn_field_type)f->type) {
	case NWN_FT_F32:
		return nc_head_f(c, s, 0, p);
	case NWN_FT_F32X3: {
		float t[3];
		if (!(e = nc_head_fv(c, s, t, 3)))
			memcpy(p, t, sizeof(t));
		return e;
	}
	case NWN_FT_I32:
		if (!(e = nc_head_i(c, s, &iv))) {
			v = (uint32_t)iv;
			memcpy(p, &v, sizeof(v));
		}
		return e;
	case NWN_FT_U16:
		if (!(e = nc_head_i(c, s, &iv))) {
			uint16_t h = (uint16_t)iv;
			memcpy(p, &h, sizeof(h));
		}
		return e;
	case NWN_FT_U8:
		if (!(e = nc_head_i(c, s, &iv)))
			*(uint8_t *)p = (uint8_t)iv;
		return e;
	case NWN_FT_STR:
		nc_head_str(s, p, f->size);
		return LFS_OK;
	case NWN_FT_RHINT: { /* EE [N §3.3] */
		const char *t = mdl_stmt_arg(s, 0);
		if (t && nc_kw(t, "NormalAndSpecMapped"))
			v = 2;
		else if (t && nc_tok_i(t, &iv))
			v = (uint32_t)iv;
		else
			v = 0;
		memcpy(p, &v, sizeof(v));
		return LFS_OK;
	}
	case NWN_FT_EFLAG:
		if ((e = nc_head_i(c, s, &iv)))
			return e;
		memcpy(&v, p, sizeof(v));
		if (iv)
			v |= 1u << f->size;
		else
			v &= ~(1u << f->size);
		memcpy(p, &v, sizeof(v));
		return LFS_OK;
	}
	return LFS_OK;
}

static lfs_err attr_light(comp *c, cnode *cn, const mdl_stmt *s, const char *k, bool *done)
{
	nwn_light *l = cn->n.light;
	lfs_err e = LFS_OK;
	*done = true;
	if ((e = nc_field_stmt(c, s, NWN_FK_LIGHT, l, k, done)) || *done)
		return e;
	*done = true;
	fvec v = { 0 };
	if (nc_kw(k, "flaresizes") || nc_kw(k, "flarepositions") || nc_kw(k, "flarecolorshifts")) {
		uint32_t cols = nc_kw(k, "flarecolorshifts") ? 3 : 1;
		if ((e = nc_rows_f(c, s, cols, &v))) {
			free(v.v);
			return e;
		}
		float *dst = nc_arena_zalloc(c->ar, (size_t)v.n * sizeof(float));
		if (!dst) {
			free(v.v);
			return lfs_nomem(c->err, NULL);
		}
		if (v.n)
			memcpy(dst, v.v, (size_t)v.n * sizeof(float));
		uint32_t rows = v.n / cols;
		free(v.v);
		if (nc_kw(k, "flaresizes")) {
			l->flare_sizes = dst;
			l->sizes_arr.count = l->sizes_arr.alloc = rows;
		} else if (nc_kw(k, "flarepositions")) {
			l->flare_positions = dst;
			l->positions_arr.count = l->positions_arr.alloc = rows;
		} else {
			l->flare_colorshifts = dst;
			l->colorshifts_arr.count = l->colorshifts_arr.alloc = rows;
		}
		return LFS_OK;
	}
	if (nc_kw(k, "texturenames")) {
		char **names = nc_arena_zalloc(c->ar, ((size_t)s->n_rows + 1) * sizeof(char *));
		if (!names)
			return lfs_nomem(c->err, NULL);
		for (uint32_t r = 0; r < s->n_rows; r++) {
			const char *t = s->rows[r].ntok ? s->rows[r].tok[0].s : "";
			size_t len = strlen(t);
			names[r] = nc_arena_zalloc(c->ar, len + 1);
			if (!names[r])
				return lfs_nomem(c->err, NULL);
			memcpy(names[r], t, len);
		}
		l->flare_textures = names;
		l->texnames_arr.count = l->texnames_arr.alloc = s->n_rows;
		return LFS_OK;
	}
	*done = false;
	return LFS_OK;
}

static lfs_err attr_mesh(comp *c, cnode *cn, const mdl_stmt *s, const char *k, bool *done)
{
	nwn_mesh *m = cn->n.mesh;
	lfs_err e = LFS_OK;
	*done = true;
	float *vp = NULL;
	if (nc_kw(k, "bmin"))
		vp = m->bmin;
	else if (nc_kw(k, "bmax"))
		vp = m->bmax;
	if (vp) {
		float t[3];
		if (!(e = nc_head_fv(c, s, t, 3)))
			memcpy(vp, t, sizeof(t));
		return e;
	}
	if ((e = nc_field_stmt(c, s, NWN_FK_MESH, m, k, done)) || *done)
		return e;
	*done = true;
	if (s->kind != MDL_ST_LIST) {
		*done = false;
		return LFS_OK;
	}
	if (nc_kw(k, "verts"))
		return nc_rows_f(c, s, 3, &cn->verts);
	if (nc_kw(k, "tverts"))
		return nc_rows_f(c, s, 3, &cn->tverts[0]);
	if (nc_kw(k, "tverts1") || nc_kw(k, "tverts2") || nc_kw(k, "tverts3"))
		return nc_rows_f(c, s, 3, &cn->tverts[k[6] - '0']);
	if (nc_kw(k, "colors"))
		return nc_rows_f(c, s, 3, &cn->colors);
	if (nc_kw(k, "normals"))
		return nc_rows_f(c, s, 3, &cn->normals);
	if (nc_kw(k, "texindices1") || nc_kw(k, "texindices2") || nc_kw(k, "texindices3")) {
		int t = k[10] - '0';
		free(cn->texind[t]);
		return nc_rows_i(c, s, 3, &cn->texind[t], &cn->ntexind[t]);
	}
	if (nc_kw(k, "mirrorlist")) {
		int32_t *v;
		free(cn->mirror);
		cn->mirror = NULL;
		e = nc_rows_i(c, s, 1, &v, &cn->nmirror);
		cn->mirror = (uint32_t *)v;
		return e;
	}
	if (nc_kw(k, "faces")) {
		cn->faces_stmt = s;
		int32_t *v;
		uint32_t nr;
		if ((e = nc_rows_i(c, s, 8, &v, &nr))) {
			free(v);
			return e;
		}
		free(cn->faces);
		cn->faces = malloc(((size_t)nr + 1) * sizeof(nwn_src_face));
		if (!cn->faces) {
			free(v);
			return lfs_nomem(c->err, NULL);
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
		if (nc_kw(k, "weights")) {
			cn->weights_stmt = s;
			return LFS_OK;
		}
		nwn_skin *sk = n->mesh->skin;
		if (nc_kw(k, "qbone_ref_inv") || nc_kw(k, "tbone_ref_inv")) {
			bool q = nc_kw(k, "qbone_ref_inv");
			fvec v = { 0 };
			if ((e = nc_rows_f(c, s, q ? 4 : 3, &v))) {
				free(v.v);
				return e;
			}
			float *d = nc_arena_zalloc(c->ar, (size_t)v.n * sizeof(float));
			if (!d) {
				free(v.v);
				return lfs_nomem(c->err, NULL);
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
		if (nc_kw(k, "boneconstantindices"))
			return LFS_OK; /* recomputed (zeros) */
		*done = false;
	}
	if (n->flags & NWN_HAS_DANGLY) {
		*done = true;
		if ((e = nc_field_stmt(c, s, NWN_FK_DANGLY, n->mesh->dangly, k, done)) || *done)
			return e;
		*done = true;
		if (nc_kw(k, "constraints"))
			return nc_rows_f(c, s, 1, &cn->constraints);
		*done = false;
	}
	if (n->flags & NWN_HAS_ANIM) {
		*done = true;
		if ((e = nc_field_stmt(c, s, NWN_FK_ANIMMESH, n->mesh->anim, k, done)) || *done)
			return e;
		*done = true;
		if (nc_kw(k, "animverts"))
			return nc_rows_f(c, s, 3, &cn->animverts);
		if (nc_kw(k, "animtverts"))
			return nc_rows_f(c, s, 3, &cn->animtverts);
		*done = false;
	}
	if ((n->flags & NWN_HAS_AABB) && nc_kw(k, "aabb") && s->kind == MDL_ST_LIST) {
		*done = true;
		nwn_aabb *a = n->mesh->aabb;
		nwn_aabb_entry *ents = nc_arena_zalloc(c->ar, ((size_t)s->n_rows + 1) * sizeof(*ents));
		if (!ents)
			return lfs_nomem(c->err, NULL);
		/* rows are the tree depth first; a leaf has face >= 0, an inner
		 * entry is followed by its two subtrees [N §2.2] */
		uint32_t r = 0;
		uint16_t *stack = malloc(((size_t)s->n_rows + 1) * sizeof(uint16_t));
		uint32_t *open = malloc(((size_t)s->n_rows + 1) * sizeof(uint32_t));
		uint32_t sp = 0;
		if (!stack || !open) {
			free(stack);
			free(open);
			return lfs_nomem(c->err, NULL);
		}
		bool ok = true;
		uint16_t depth = 0;
		for (; r < s->n_rows; r++) {
			const mdl_row *row = &s->rows[r];
			nwn_aabb_entry *x = &ents[r];
			float f[6];
			int32_t leaf = 0, plane = 0;
			for (int i = 0; i < 6; i++)
				if (i >= (int)row->ntok || !nc_tok_f(row->tok[i].s, &f[i])) {
					free(stack);
					free(open);
					return nc_at(c, row, (uint32_t)i, "aabb row: expected 6 numbers and a face index");
				}
			if (row->ntok < 7 || !nc_tok_i(row->tok[6].s, &leaf)) {
				free(stack);
				free(open);
				return nc_at(c, row, 6, "aabb row: expected a face index");
			}
			bool has_plane = row->ntok >= 8 && nc_tok_i(row->tok[7].s, &plane);
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
			return nc_at(c, &s->head, 0, "aabb: the rows do not form one complete tree");
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

/* ------------------------------------------------------ unknown statements */

/*
 * Keywords real files use that the compiler deliberately ignores (measured on
 * the 457 corpus ASCII models; docs/nwn-compile.md "Ignored keywords" gives
 * the file counts). @p types: node type flags the keyword is ignored in, 0 =
 * any node. Anything else that no node type knows is refused.
 */
static const struct {
	const char *kw;
	uint32_t types;
} IGNORED[] = {
	/* 3ds Max / GMax export leftovers [N §2.2] */
	{ "wirecolor", 0 }, { "center", 0 }, { "gizmo", 0 }, { "dummy", 0 },
	{ "showdispl", 0 }, { "displtype", 0 }, { "danglymesh", 0 },
	{ "iconsize", 0 }, { "opacity", 0 }, { "cone_angle_manipulator", 0 },
	{ "update_sel", 0 }, { "render_sel", 0 }, { "blend_sel", 0 }, { "spawntype_sel", 0 },
	{ "p2p_type", 0 }, { "lightningsubdiv", 0 }, { "twosidedtext", 0 }, { "lockaxes", 0 },
	{ "chunky", 0 }, { "chunk", 0 },
	{ "lensflares", 0 }, { "negativelight", 0 }, { "omni_light", 0 },
	/* EE lists with no slot in this binary layout */
	{ "tangents", NWN_HAS_MESH }, { "multimaterial", NWN_HAS_MESH },
	/* EE GUI animmesh clip rectangle: no slot in this layout */
	{ "clipu", NWN_HAS_MESH }, { "clipv", NWN_HAS_MESH }, { "clipw", NWN_HAS_MESH },
	{ "cliph", NWN_HAS_MESH },
	/* a danglymesh exported as trimesh keeps its dangly values (c_mindflayer,
	 * plc_cndl02); an emitter with a mesh's `alpha` (one file) */
	{ "displacement", NWN_HAS_MESH }, { "tightness", NWN_HAS_MESH }, { "period", NWN_HAS_MESH },
	{ "alpha", NWN_HAS_EMITTER },
};

static bool ignored_kw(const char *k, uint32_t flags)
{
	for (size_t i = 0; i < sizeof(IGNORED) / sizeof(IGNORED[0]); i++)
		if (nc_kw(k, IGNORED[i].kw) && (!IGNORED[i].types || (flags & IGNORED[i].types)))
			return true;
	return false;
}

/* List keywords of mesh parts (attr_mesh, attr_part, attr_light). */
static const char *const LIST_KW[] = {
	"verts", "tverts", "tverts1", "tverts2", "tverts3", "colors", "normals", "faces",
	"texindices1", "texindices2", "texindices3", "mirrorlist", "weights", "qbone_ref_inv",
	"tbone_ref_inv", "boneconstantindices", "constraints", "animverts", "animtverts", "aabb",
	"flaresizes", "flarepositions", "flarecolorshifts", "texturenames", "bmin", "bmax",
};

/* Is @p k a statement of some node type (controller, attribute or list)? */
static bool known_kw(const char *k)
{
	static const uint32_t types[] = { NWN_DUMMY, NWN_LIGHT, NWN_EMITTER, NWN_REFERENCE, NWN_TRIMESH,
					  NWN_SKIN, NWN_ANIMMESH, NWN_DANGLYMESH, NWN_AABB };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (nc_controller_id(types[i], k))
			return true;
	for (int kind = NWN_FK_NODE; kind <= NWN_FK_REF; kind++)
		if (nwn_field_find((nwn_field_kind)kind, k, true))
			return true;
	for (size_t i = 0; i < sizeof(LIST_KW) / sizeof(LIST_KW[0]); i++)
		if (nc_kw(k, LIST_KW[i]))
			return true;
	return false;
}

/* Is @p k an attribute (not a controller) of @p n's type? */
static bool own_attribute(const nwn_node *n, const char *k)
{
	if (nwn_field_find(NWN_FK_NODE, k, true))
		return true;
	if (n->emitter && nwn_field_find(NWN_FK_EMITTER, k, true))
		return true;
	if (n->light && nwn_field_find(NWN_FK_LIGHT, k, true))
		return true;
	if (n->ref && nwn_field_find(NWN_FK_REF, k, true))
		return true;
	if (n->mesh && nwn_field_find(NWN_FK_MESH, k, true))
		return true;
	return false;
}

static const char *type_word(const cnode *cn)
{
	return cn->src && cn->src->type[0] ? cn->src->type : "dummy";
}

/* A statement no handler of the node's type took: ignored when real files
 * use it (IGNORED, stray number rows, keyed attributes, the statements of an
 * `emmiter` dummy), refused otherwise. */
static lfs_err other_stmt(comp *c, cnode *cn, const mdl_stmt *s, const char *k)
{
	const nwn_node *n = &cn->n;
	float f;
	if (nc_tok_f(k, &f)) {
		/* rows beyond a key list's count (vdr_stone04): the compiler
		 * ignores them as the reference does; a save through the mount
		 * would lose them (a swapped `1 p2p_sel`, `2 birthratekey`): refused */
		if (c->edit_mode)
			return nc_at(c, &s->head, 0,
				     "node '%s': a line of numbers outside any list would be lost (a list takes as many rows as its count says; a statement starts with its keyword)",
				     n->name);
		nc_warn(c, &s->head, 0, "node '%s': a line of numbers outside any list: ignored", n->name);
		return LFS_OK;
	}
	if (ignored_kw(k, n->flags))
		return LFS_OK;
	if (cn->alias_dummy && known_kw(k))
		return LFS_OK; /* the game reads the node as a dummy: its emitter lines do nothing */
	if (s->kind == MDL_ST_KEYS && own_attribute(n, k))
		return LFS_OK; /* an attribute written as keys (`ygridkey`): not animatable, ignored */
	if (known_kw(k))
		return nc_at(c, &s->head, 0, "'%s' cannot appear in node '%s' of type %s", s->head.tok[0].s,
			     n->name, type_word(cn));
	return nc_at(c, &s->head, 0, "unknown statement '%s' in node '%s'", s->head.tok[0].s, n->name);
}

lfs_err nc_node_statement(comp *c, cnode *cn, const mdl_stmt *s)
{
	nwn_node *n = &cn->n;
	const char *k = s->kind == MDL_ST_KEYS ? s->name : s->head.tok[0].s;
	/* controllers first (the reference tries them before attributes) */
	uint32_t id = nc_controller_id(n->flags, k);
	if (id && s->kind != MDL_ST_LIST)
		return nc_add_controller(c, cn, s, id);
	if (s->kind == MDL_ST_KEYS)
		return other_stmt(c, cn, s, k);
	bool done = false;
	lfs_err e = LFS_OK;
	if ((e = nc_field_stmt(c, s, NWN_FK_NODE, n, k, &done)) || done)
		return e;
	if (n->light && ((e = attr_light(c, cn, s, k, &done)) || done))
		return e;
	if (n->emitter && ((e = nc_field_stmt(c, s, NWN_FK_EMITTER, n->emitter, k, &done)) || done))
		return e;
	if (n->ref && ((e = nc_field_stmt(c, s, NWN_FK_REF, n->ref, k, &done)) || done))
		return e;
	if (n->mesh) {
		if ((e = attr_part(c, cn, s, k, &done)) || done)
			return e;
		if ((e = attr_mesh(c, cn, s, k, &done)) || done)
			return e;
	}
	return other_stmt(c, cn, s, k);
}
