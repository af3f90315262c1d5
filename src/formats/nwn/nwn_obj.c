/**
 * @file nwn_obj.c
 * OBJ/MTL views of NWN meshes (see nwn_obj.h, docs/formats/obj-csv.md).
 */
#include "nwn_obj.h"
#include "nwn_quat.h"
#include "text/obj.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The rules of NWN's mesh OBJ reader (see nwn_obj.h). */
const lfs_obj_rules nwn_obj_rules_nums = {
	.flags = LFS_OBJ_STRICT | LFS_OBJ_DEFINED_ABOVE | LFS_OBJ_VT_W0 | LFS_OBJ_MDL_MSGS |
		 LFS_OBJ_NUMS,
	.max_corners = 15,
};

/* ---- helpers ------------------------------------------------------------ */

/* First key of controller @p type with at least @p ncols values, or NULL. */
static const float *first_key(const nwn_node *n, uint32_t type, unsigned ncols)
{
	for (uint32_t i = 0; i < n->n_ctrls; i++) {
		const nwn_controller *c = &n->ctrls[i];
		if (c->type != type || c->ncols < ncols || c->rows == 0 || !n->ctrl_data)
			continue;
		if ((size_t)c->data_offset + ncols > n->n_ctrl_data)
			continue;
		return n->ctrl_data + c->data_offset;
	}
	return NULL;
}

static float mesh_alpha(const nwn_node *n)
{
	const float *a = (n->flags & NWN_HAS_MESH) ? first_key(n, NWN_CTRL_ALPHA, 1) : NULL;
	return a ? a[0] : 1.0f;
}

static bool is_null_tex(const char *t)
{
	return !t[0] || !strcasecmp(t, "NULL");
}

/* Hamilton product a*b, quaternions x y z w. */
static void qmul(const double *a, const double *b, double *o)
{
	double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
	double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
	double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
	double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
	o[0] = x;
	o[1] = y;
	o[2] = z;
	o[3] = w;
}


void nwn_obj_transforms(const nwn_geometry *g, double *t, double *q, double *s)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const nwn_node *n = &g->nodes[i];
		double lt[3] = { 0, 0, 0 }, lq[4] = { 0, 0, 0, 1 }, ls = 1;
		const float *p = first_key(n, NWN_CTRL_POSITION, 3);
		if (p)
			for (int k = 0; k < 3; k++)
				lt[k] = p[k];
		const float *o = first_key(n, NWN_CTRL_ORIENTATION, 4);
		if (o) {
			double len = sqrt((double)o[0] * o[0] + (double)o[1] * o[1] +
					  (double)o[2] * o[2] + (double)o[3] * o[3]);
			if (len > 0 && isfinite(len))
				for (int k = 0; k < 4; k++)
					lq[k] = o[k] / len;
		}
		const float *sc = first_key(n, NWN_CTRL_SCALE, 1);
		if (sc && isfinite(sc[0]))
			ls = sc[0];
		/* Nodes are in pre-order: a valid parent comes first. */
		if (n->parent >= 0 && (uint32_t)n->parent < i) {
			uint32_t pi = (uint32_t)n->parent;
			double r[3];
			nwn_quat_rotate(q + 4 * pi, lt, r);
			for (int k = 0; k < 3; k++)
				t[3 * i + k] = t[3 * pi + k] + s[pi] * r[k];
			qmul(q + 4 * pi, lq, q + 4 * i);
			s[i] = s[pi] * ls;
		} else {
			memcpy(t + 3 * i, lt, sizeof(lt));
			memcpy(q + 4 * i, lq, sizeof(lq));
			s[i] = ls;
		}
	}
}

/* ---- materials ---------------------------------------------------------- */

typedef struct mat_key {
	const char *tex;
	float amb[3], dif[3], spe[3], shin, alpha;
} mat_key;

static void key_of(const nwn_node *n, mat_key *k)
{
	const nwn_mesh *me = n->mesh;
	k->tex = is_null_tex(me->textures[0]) ? "" : me->textures[0];
	memcpy(k->amb, me->ambient, sizeof(k->amb));
	memcpy(k->dif, me->diffuse, sizeof(k->dif));
	memcpy(k->spe, me->specular, sizeof(k->spe));
	k->shin = me->shininess;
	k->alpha = mesh_alpha(n);
}

static uint32_t key_hash(const mat_key *k)
{
	uint32_t h = lfs_name_hash(k->tex);
	const float *f[] = { k->amb, k->dif, k->spe, &k->shin, &k->alpha };
	const size_t nf[] = { 3, 3, 3, 1, 1 };
	for (size_t i = 0; i < 5; i++) {
		for (size_t j = 0; j < nf[i]; j++) {
			uint32_t u;
			memcpy(&u, &f[i][j], 4);
			for (int b = 0; b < 4; b++) {
				h ^= (u >> (8 * b)) & 0xFF;
				h *= 16777619u;
			}
		}
	}
	return h;
}

static bool key_eq(const mat_key *a, const mat_key *b)
{
	/* bitwise float comparison: deterministic, NaN-safe */
	return !strcmp(a->tex, b->tex) && !memcmp(a->amb, b->amb, sizeof(a->amb)) &&
	       !memcmp(a->dif, b->dif, sizeof(a->dif)) && !memcmp(a->spe, b->spe, sizeof(a->spe)) &&
	       !memcmp(&a->shin, &b->shin, 4) && !memcmp(&a->alpha, &b->alpha, 4);
}

static void mtl_rgb(lfs_sb *o, const char *key, const float *v)
{
	lfs_sb_puts(o, key);
	lfs_sb_putc(o, ' ');
	lfs_sb_floats(o, v, 3);
	lfs_sb_putc(o, '\n');
}

lfs_err nwn_obj_materials(const nwn_model *m, const lfs_view_opts *opts, nwn_obj_mats *mats,
			  lfs_sb *mtl, lfs_error *err)
{
	const nwn_geometry *g = &m->geom;
	lfs_nameset_init(&mats->names);
	mats->node_mat = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*mats->node_mat));
	/* hash table: slot -> node index of the material's first node, +1 (0 = free) */
	size_t cap = 16;
	while (cap < 2 * (size_t)g->n_nodes + 2)
		cap *= 2;
	uint32_t *tab = calloc(cap, sizeof(*tab));
	if (!mats->node_mat || !tab) {
		free(tab);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "obj view", "out of memory");
	}
	if (mtl)
		lfs_sb_printf(mtl, "# legacyfs: materials of model %s (see docs/formats/obj-csv.md)\n",
			      m->geom.name);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const nwn_node *n = &g->nodes[i];
		if (!n->mesh)
			continue;
		mat_key k;
		key_of(n, &k);
		size_t slot = key_hash(&k) & (cap - 1);
		bool found = false;
		while (tab[slot]) {
			mat_key k2;
			key_of(&g->nodes[tab[slot] - 1], &k2);
			if (key_eq(&k, &k2)) {
				found = true;
				break;
			}
			slot = (slot + 1) & (cap - 1);
		}
		if (found) {
			mats->node_mat[i] = mats->node_mat[tab[slot] - 1];
			continue;
		}
		tab[slot] = i + 1;
		const char *name = lfs_nameset_add(&mats->names, k.tex[0] ? k.tex : "untextured");
		if (!name) {
			free(tab);
			return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "obj view", "out of memory");
		}
		mats->node_mat[i] = name;
		if (!mtl)
			continue;
		lfs_sb_printf(mtl, "\nnewmtl %s\n", name);
		mtl_rgb(mtl, "Ka", k.amb);
		mtl_rgb(mtl, "Kd", k.dif);
		mtl_rgb(mtl, "Ks", k.spe);
		lfs_sb_puts(mtl, "Ns ");
		lfs_sb_float(mtl, k.shin);
		lfs_sb_puts(mtl, "\nd ");
		lfs_sb_float(mtl, k.alpha);
		lfs_sb_puts(mtl, "\nillum 2\n");
		if (k.tex[0] && opts && opts->texture_lookup) {
			char path[1024];
			path[0] = '\0';
			if (opts->texture_lookup(opts->texture_ctx, k.tex, path, sizeof(path)) &&
			    path[0] && !strpbrk(path, "\r\n"))
				lfs_sb_printf(mtl, "map_Kd %s\n", path);
		}
	}
	free(tab);
	if (mtl && !lfs_sb_ok(mtl))
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "obj view", "out of memory");
	return LFS_OK;
}

void nwn_obj_mats_free(nwn_obj_mats *mats)
{
	free(mats->node_mat);
	mats->node_mat = NULL;
	lfs_nameset_free(&mats->names);
}

/* ---- meshes ------------------------------------------------------------- */

static bool face_ok(const nwn_face *f, size_t nv)
{
	return f->v[0] < nv && f->v[1] < nv && f->v[2] < nv;
}

/* Face statements for one mesh whose first v / vt / vn have OBJ numbers
 * base + 1, *vt_base + 1, *vn_base + 1 (vt_base / vn_base NULL: no such
 * part). Returns the faces left out (a vertex index out of range). */
static size_t write_faces(lfs_sb *o, const nwn_mesh *me, size_t nv, size_t base,
			  const size_t *vt_base, const size_t *vn_base)
{
	size_t skipped = 0;
	size_t nf = me->faces ? me->n_faces : 0;
	for (size_t i = 0; i < nf; i++) {
		const nwn_face *f = &me->faces[i];
		if (!face_ok(f, nv)) {
			skipped++;
			continue;
		}
		size_t x[3], xt[3], xn[3];
		for (int c = 0; c < 3; c++) {
			x[c] = base + f->v[c];
			xt[c] = (vt_base ? *vt_base : 0) + f->v[c];
			xn[c] = (vn_base ? *vn_base : 0) + f->v[c];
		}
		lfs_obj_write_f(o, 3, x, vt_base ? xt : NULL, vn_base ? xn : NULL);
	}
	return skipped;
}

lfs_err nwn_obj_mesh(const nwn_model *m, uint32_t idx, const char *obj_name,
		     const nwn_obj_mats *mats, lfs_sb *o, lfs_error *err)
{
	const nwn_node *n = &m->geom.nodes[idx];
	const nwn_mesh *me = n->mesh;
	size_t nv = me->verts ? me->n_verts : 0;
	bool vt = me->tverts[0] != NULL, vn = me->normals != NULL;
	lfs_sb_printf(o, "# legacyfs: %s node %s of model %s, node-local coordinates\n",
		      nwn_node_type_name(n->flags), obj_name, m->geom.name);
	lfs_sb_printf(o, "# %zu vertices, %" PRIu32 " faces\n", nv, me->faces ? me->n_faces : 0);
	lfs_obj_write_stmt(o, "mtllib", "../model.mtl");
	lfs_obj_write_stmt(o, "o", obj_name);
	lfs_obj_write_stmt(o, "g", obj_name);
	for (size_t i = 0; i < nv; i++)
		lfs_obj_write_plain(o, LFS_OBJ_V, me->verts + 3 * i);
	if (vt)
		for (size_t i = 0; i < nv; i++)
			lfs_obj_write_plain(o, LFS_OBJ_VT, me->tverts[0] + 2 * i);
	if (vn)
		for (size_t i = 0; i < nv; i++)
			lfs_obj_write_plain(o, LFS_OBJ_VN, me->normals + 3 * i);
	if (mats && mats->node_mat && mats->node_mat[idx])
		lfs_obj_write_stmt(o, "usemtl", mats->node_mat[idx]);
	lfs_obj_write_stmt(o, "s", "off");
	size_t zero = 0;
	size_t skipped = write_faces(o, me, nv, 0, vt ? &zero : NULL, vn ? &zero : NULL);
	if (skipped)
		lfs_sb_printf(o, "# %zu faces left out: vertex index out of range\n", skipped);
	if (!lfs_sb_ok(o))
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "obj view", "out of memory");
	return LFS_OK;
}

lfs_err nwn_obj_model(const nwn_model *m, const char *const *obj_names,
		      const nwn_obj_mats *mats, lfs_sb *o, lfs_error *err)
{
	const nwn_geometry *g = &m->geom;
	size_t nn = g->n_nodes ? g->n_nodes : 1;
	double *t = malloc(nn * 3 * sizeof(double));
	double *q = malloc(nn * 4 * sizeof(double));
	double *s = malloc(nn * sizeof(double));
	if (!t || !q || !s) {
		free(t);
		free(q);
		free(s);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "obj view", "out of memory");
	}
	nwn_obj_transforms(g, t, q, s);
	lfs_sb_printf(o, "# legacyfs: rendered meshes of model %s in model space (metres)\n",
		      g->name);
	lfs_obj_write_stmt(o, "mtllib", "model.mtl");
	size_t base = 0, vt_base = 0, vn_base = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const nwn_node *n = &g->nodes[i];
		const nwn_mesh *me = n->mesh;
		if (!me || !obj_names || !obj_names[i] || me->render == 0 || me->aabb ||
		    (n->flags & NWN_HAS_AABB))
			continue;
		size_t nv = me->verts ? me->n_verts : 0;
		bool vt = me->tverts[0] != NULL, vn = me->normals != NULL;
		lfs_obj_write_stmt(o, "o", obj_names[i]);
		lfs_obj_write_stmt(o, "g", obj_names[i]);
		for (size_t v = 0; v < nv; v++) {
			double p[3] = { me->verts[3 * v], me->verts[3 * v + 1], me->verts[3 * v + 2] };
			double r[3];
			nwn_quat_rotate(q + 4 * i, p, r);
			float w[3];
			for (int k = 0; k < 3; k++)
				w[k] = (float)(t[3 * i + k] + s[i] * r[k]);
			lfs_obj_write_plain(o, LFS_OBJ_V, w);
		}
		if (vt)
			for (size_t v = 0; v < nv; v++)
				lfs_obj_write_plain(o, LFS_OBJ_VT, me->tverts[0] + 2 * v);
		if (vn) {
			for (size_t v = 0; v < nv; v++) {
				double p[3] = { me->normals[3 * v], me->normals[3 * v + 1],
						me->normals[3 * v + 2] };
				double r[3];
				nwn_quat_rotate(q + 4 * i, p, r);
				float w[3];
				for (int k = 0; k < 3; k++)
					w[k] = (float)(s[i] < 0 ? -r[k] : r[k]);
				lfs_obj_write_plain(o, LFS_OBJ_VN, w);
			}
		}
		if (mats && mats->node_mat && mats->node_mat[i])
			lfs_obj_write_stmt(o, "usemtl", mats->node_mat[i]);
		lfs_obj_write_stmt(o, "s", "off");
		/* vt/vn numbering runs in step with v only when every mesh has
		 * them; write faces with separate bases. */
		write_faces(o, me, nv, base, vt ? &vt_base : NULL, vn ? &vn_base : NULL);
		base += nv;
		if (vt)
			vt_base += nv;
		if (vn)
			vn_base += nv;
	}
	free(t);
	free(q);
	free(s);
	if (!lfs_sb_ok(o))
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "obj view", "out of memory");
	return LFS_OK;
}
