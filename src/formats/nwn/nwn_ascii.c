/**
 * @file nwn_ascii.c
 * NWN model -> ASCII MDL (see nwn_ascii.h, docs/formats/nwn-ascii.md).
 *
 * Keyword spellings and list layouts: those of real files as the public
 * parsers read them ([N §2], key in src/formats/nwn/nwn_mdl.h);
 * controller keywords come from nwn_controller_name() [T "Controllers"].
 */
#include "nwn_ascii.h"
#include "nwn_quat.h"

#include "common/mem.h"
#include "nwn_fields.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/** Constant smoothing-group mask printed in face rows: the binary does not
 * store smoothing groups [N §3.4]; the normals list is authoritative. */
#define NWN_ASCII_SMOOTH_MASK 1

static void indent(lfs_sb *o, int n)
{
	static const char sp[] = "                                                                ";
	while (n > 0) {
		int k = n > 64 ? 64 : n;
		lfs_sb_put(o, sp, (size_t)k);
		n -= k;
	}
}

/* "  key v v v\n" */
static void kv_floats(lfs_sb *o, const char *key, const float *v, size_t n)
{
	lfs_sb_puts(o, "  ");
	lfs_sb_puts(o, key);
	lfs_sb_putc(o, ' ');
	lfs_sb_floats(o, v, n);
	lfs_sb_putc(o, '\n');
}

/* Integer attribute: u32 fields are printed as signed 32-bit so that e.g.
 * spawntype 0xFFFFFFFF reads as the -1 real files contain. */
static void kv_int(lfs_sb *o, const char *key, uint32_t v)
{
	lfs_sb_printf(o, "  %s %" PRId32 "\n", key, (int32_t)v);
}

static void kv_str(lfs_sb *o, const char *key, const char *s)
{
	if (s && s[0])
		lfs_sb_printf(o, "  %s %s\n", key, s);
}

/* The controller's times and values lie inside the node's float array. */
static bool ctrl_in_range(const nwn_node *n, const nwn_controller *c)
{
	size_t rows = c->rows;
	if ((size_t)c->key_offset + rows > n->n_ctrl_data)
		return false;
	if ((size_t)c->data_offset + rows * c->ncols > n->n_ctrl_data)
		return false;
	return n->ctrl_data != NULL || rows == 0;
}

bool nwn_ascii_controller_shown(const nwn_node *n, const nwn_controller *c)
{
	return nwn_controller_name(n->flags, c->type) && ctrl_in_range(n, c);
}

/* One key row's values; orientation quaternions become axis-angle. */
static void ctrl_values(lfs_sb *o, const nwn_controller *c, const float *v, bool orient)
{
	if (orient) {
		float aa[4];
		nwn_quat_to_axis_angle(v, aa);
		lfs_sb_floats(o, aa, 4);
	} else {
		lfs_sb_floats(o, v, c->ncols);
	}
}

void nwn_ascii_controller(lfs_sb *o, const nwn_node *n, const nwn_controller *c, int ind)
{
	const char *name = nwn_controller_name(n->flags, c->type);
	if (!nwn_ascii_controller_shown(n, c)) {
		bool ok = ctrl_in_range(n, c);
		/* Unknown id (or data outside the node's float array): keep
		 * everything visible as comments. */
		indent(o, ind);
		lfs_sb_printf(o, "# controller %" PRIu32 " rows %u columns 0x%02X pad %u%s\n",
			      c->type, (unsigned)c->rows, (unsigned)c->columns, (unsigned)c->pad,
			      ok ? "" : " (data out of range)");
		if (!ok)
			return;
		for (unsigned r = 0; r < c->rows; r++) {
			indent(o, ind);
			lfs_sb_puts(o, "#   ");
			lfs_sb_float(o, n->ctrl_data[c->key_offset + r]);
			if (c->ncols) {
				lfs_sb_putc(o, ' ');
				lfs_sb_floats(o, n->ctrl_data + c->data_offset + (size_t)r * c->ncols,
					      c->ncols);
			}
			lfs_sb_putc(o, '\n');
		}
		return;
	}
	bool orient = c->type == NWN_CTRL_ORIENTATION && c->ncols == 4;
	const float *t = n->ctrl_data + c->key_offset;
	const float *v = n->ctrl_data + c->data_offset;
	uint32_t t0 = 1;
	if (c->rows)
		memcpy(&t0, &t[0], 4);
	if (c->rows == 1 && t0 == 0 && !c->bezier && c->columns != 0xFF) {
		/* one key at time 0: the plain form (a value-less `detonate`
		 * has no values) */
		indent(o, ind);
		lfs_sb_puts(o, name);
		if (c->ncols) {
			lfs_sb_putc(o, ' ');
			ctrl_values(o, c, v, orient);
		}
		lfs_sb_putc(o, '\n');
		return;
	}
	indent(o, ind);
	lfs_sb_printf(o, "%s%s %u\n", name, c->bezier ? "bezierkey" : "key", (unsigned)c->rows);
	bool blank = c->columns == 0xFF;
	for (unsigned r = 0; r < c->rows && blank; r++) {
		uint32_t bits;
		memcpy(&bits, &t[r], 4);
		blank = bits == 0;
	}
	if (blank) {
		/* columns -1: the text's blank key rows (`detonatekey 1` + an
		 * empty line), stored with time +0.0 (nwnmdlcomp's compiler,
		 * NmcController.cpp; its decompiler prints them blank). Another
		 * stored time keeps the time-only rows below. */
		for (unsigned r = 0; r < c->rows; r++)
			lfs_sb_putc(o, '\n');
		return;
	}
	for (unsigned r = 0; r < c->rows; r++) {
		indent(o, ind + 2);
		lfs_sb_float(o, t[r]);
		if (c->ncols) {
			lfs_sb_putc(o, ' ');
			ctrl_values(o, c, v + (size_t)r * c->ncols, orient);
		}
		lfs_sb_putc(o, '\n');
	}
}

static void controllers(lfs_sb *o, const nwn_node *n)
{
	for (uint32_t i = 0; i < n->n_ctrls; i++)
		nwn_ascii_controller(o, n, &n->ctrls[i], 2);
}

/* "  key N" + N rows of k floats */
static void float_list(lfs_sb *o, const char *key, const float *v, size_t rows, size_t k,
		       bool pad_zero)
{
	if (!v)
		rows = 0;
	lfs_sb_printf(o, "  %s %zu\n", key, rows);
	for (size_t r = 0; r < rows; r++) {
		lfs_sb_puts(o, "    ");
		lfs_sb_floats(o, v + r * k, k);
		if (pad_zero)
			lfs_sb_puts(o, " 0");
		lfs_sb_putc(o, '\n');
	}
}

/* Bone ref -> node name of the skin's geometry; NULL when the chain breaks.
 * bone ref indexes bone_node_numbers[NWN_SKIN_BONES] (slot 17: the word after
 * the 17-entry table), which holds the bone's node number = depth-first index
 * in the model geometry [N §3.6]. */
static const char *bone_name(const nwn_geometry *g, const nwn_skin *sk, int16_t ref)
{
	if (ref < 0 || ref >= NWN_SKIN_BONES)
		return NULL;
	int16_t num = sk->bone_node_numbers[ref];
	if (num < 0 || (uint32_t)num >= g->n_nodes)
		return NULL;
	return g->nodes[num].name;
}

static void skin_weights(lfs_sb *o, const nwn_geometry *g, const nwn_mesh *me)
{
	const nwn_skin *sk = me->skin;
	size_t rows = (sk->weights && sk->bonerefs) ? me->n_verts : 0;
	lfs_sb_printf(o, "  weights %zu\n", rows);
	for (size_t r = 0; r < rows; r++) {
		lfs_sb_puts(o, "   ");
		for (int l = 0; l < 4; l++) {
			int16_t ref = sk->bonerefs[r * 4 + l];
			if (ref < 0)
				continue;
			const char *bn = bone_name(g, sk, ref);
			lfs_sb_putc(o, ' ');
			if (bn && bn[0])
				lfs_sb_puts(o, bn);
			else
				lfs_sb_printf(o, "?bone%d", (int)ref);
			lfs_sb_putc(o, ' ');
			lfs_sb_float(o, sk->weights[r * 4 + l]);
		}
		lfs_sb_putc(o, '\n');
	}
}

static void aabb_tree(lfs_sb *o, const nwn_aabb *a)
{
	for (uint32_t i = 0; i < a->n_entries; i++) {
		const nwn_aabb_entry *e = &a->entries[i];
		if (i == 0)
			lfs_sb_puts(o, "  aabb ");
		else
			indent(o, 4 + (e->depth > 60 ? 60 : e->depth));
		lfs_sb_floats(o, e->bmin, 3);
		lfs_sb_putc(o, ' ');
		lfs_sb_floats(o, e->bmax, 3);
		lfs_sb_printf(o, " %" PRId32 "\n", e->leaf_face);
	}
}

/* " %u" of @p v, without printf. */
static void put_uint(lfs_sb *o, uint32_t v)
{
	char b[11];
	size_t i = sizeof(b);
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	b[--i] = ' ';
	lfs_sb_put(o, b + i, sizeof(b) - i);
}

static void mesh_lists(lfs_sb *o, const nwn_geometry *g, const nwn_node *n)
{
	const nwn_mesh *me = n->mesh;
	size_t nv = me->n_verts;
	float_list(o, "verts", me->verts, nv, 3, false);
	static const char *const tv_key[4] = { "tverts", "tverts1", "tverts2", "tverts3" };
	for (int k = 0; k < 4; k++)
		if (me->tverts[k])
			float_list(o, tv_key[k], me->tverts[k], nv, 2, true);
	if (me->normals)
		float_list(o, "normals", me->normals, nv, 3, false);
	if (me->colors) {
		lfs_sb_printf(o, "  colors %zu\n", nv);
		for (size_t r = 0; r < nv; r++) {
			uint32_t c = me->colors[r];
			float rgb[3] = { (float)(c & 0xFF) / 255.0f, (float)((c >> 8) & 0xFF) / 255.0f,
					 (float)((c >> 16) & 0xFF) / 255.0f };
			lfs_sb_puts(o, "    ");
			lfs_sb_floats(o, rgb, 3);
			lfs_sb_putc(o, '\n');
		}
	}
	size_t nf = me->faces ? me->n_faces : 0;
	bool has_tv = me->tverts[0] != NULL;
	lfs_sb_printf(o, "  faces %zu\n", nf);
	for (size_t i = 0; i < nf; i++) {
		const nwn_face *f = &me->faces[i];
		/* The binary vertex list is already split per (position, uv, normal):
		 * tvert index = vertex index. */
		/* "    v0 v1 v2 MASK t0 t1 t2 surface" without printf (one line
		 * per face: the bulk of a mesh's text) */
		lfs_sb_puts(o, "   ");
		for (int k = 0; k < 3; k++)
			put_uint(o, f->v[k]);
		put_uint(o, NWN_ASCII_SMOOTH_MASK);
		for (int k = 0; k < 3; k++)
			put_uint(o, has_tv ? f->v[k] : 0);
		put_uint(o, f->surface_id);
		lfs_sb_putc(o, '\n');
	}
	if (me->skin)
		skin_weights(o, g, me);
	if (me->dangly) {
		const nwn_dangly *d = me->dangly;
		float_list(o, "constraints", d->constraints, d->constraints_arr.count, 1, false);
	}
	if (me->aabb)
		aabb_tree(o, me->aabb);
}

/* The scalar fields of part @p kind of @p obj (nwn_fields.def), in table
 * order: floats shortest, integers signed, empty strings and zero OPT
 * fields left out, render hint 2 by name, emitter flag bits one per line
 * (then a comment when unknown bits are set). */
static void fields(lfs_sb *o, nwn_field_kind kind, const void *obj)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind != kind || (f->flags & (NWN_FF_ALIAS | NWN_FF_HIDDEN)))
			continue;
		const void *p = (const char *)obj + f->moff;
		uint32_t v = 0;
		switch ((nwn_field_type)f->type) {
		case NWN_FT_F32:
			if (kind == NWN_FK_MODEL) { /* model header: top level */
				lfs_sb_printf(o, "%s ", f->kw);
				lfs_sb_floats(o, p, 1);
				lfs_sb_putc(o, '\n');
			} else {
				kv_floats(o, f->kw, p, 1);
			}
			break;
		case NWN_FT_F32X3:
			kv_floats(o, f->kw, p, 3);
			break;
		case NWN_FT_I32:
			memcpy(&v, p, sizeof(v));
			if (v || !(f->flags & NWN_FF_OPT))
				kv_int(o, f->kw, v);
			break;
		case NWN_FT_U16:
			kv_int(o, f->kw, *(const uint16_t *)p);
			break;
		case NWN_FT_U8:
			kv_int(o, f->kw, *(const uint8_t *)p);
			break;
		case NWN_FT_STR:
			kv_str(o, f->kw, p);
			break;
		case NWN_FT_RHINT:
			memcpy(&v, p, sizeof(v));
			if (v == 2)
				lfs_sb_printf(o, "  %s NormalAndSpecMapped\n", f->kw);
			else if (v != 0)
				kv_int(o, f->kw, v);
			break;
		case NWN_FT_EFLAG:
			memcpy(&v, p, sizeof(v));
			lfs_sb_printf(o, "  %s %d\n", f->kw, (v >> f->size) & 1 ? 1 : 0);
			if ((i + 1 == nwn_n_fields || nwn_fields[i + 1].type != NWN_FT_EFLAG) &&
			    (v & ~(uint32_t)0x7FF))
				lfs_sb_printf(o, "  # emitter flags 0x%08" PRIX32
						 " (bits above 0x400 unknown)\n", v);
			break;
		}
	}
}

static void light_part(lfs_sb *o, const nwn_light *l)
{
	fields(o, NWN_FK_LIGHT, l);
	size_t nt = l->flare_textures ? l->texnames_arr.count : 0;
	if (nt) {
		lfs_sb_printf(o, "  texturenames %zu\n", nt);
		for (size_t i = 0; i < nt; i++)
			lfs_sb_printf(o, "    %s\n",
				      l->flare_textures[i] && l->flare_textures[i][0] ?
					      l->flare_textures[i] : "NULL");
	}
	if (l->flare_sizes && l->sizes_arr.count)
		float_list(o, "flaresizes", l->flare_sizes, l->sizes_arr.count, 1, false);
	if (l->flare_positions && l->positions_arr.count)
		float_list(o, "flarepositions", l->flare_positions, l->positions_arr.count, 1, false);
	if (l->flare_colorshifts && l->colorshifts_arr.count)
		float_list(o, "flarecolorshifts", l->flare_colorshifts, l->colorshifts_arr.count, 3,
			   false);
}

static const char *parent_name(const nwn_geometry *g, const nwn_node *n)
{
	if (n->parent < 0 || (uint32_t)n->parent >= g->n_nodes)
		return "NULL";
	return g->nodes[n->parent].name;
}

static void node_header(lfs_sb *o, const nwn_geometry *g, const nwn_node *n)
{
	lfs_sb_printf(o, "node %s %s\n", nwn_node_type_name(n->flags), n->name);
	lfs_sb_printf(o, "  parent %s\n", parent_name(g, n));
	lfs_sb_printf(o, "  #part-number %" PRId32 "\n", n->part_number);
	if (n->flags != NWN_DUMMY && !strcmp(nwn_node_type_name(n->flags), "dummy"))
		lfs_sb_printf(o, "  # node flags 0x%08" PRIX32 " (unknown combination)\n", n->flags);
	fields(o, NWN_FK_NODE, n);
}

static void model_node(lfs_sb *o, const nwn_geometry *g, const nwn_node *n)
{
	node_header(o, g, n);
	if (n->mesh) {
		fields(o, NWN_FK_MESH, n->mesh);
		if (n->mesh->dangly)
			fields(o, NWN_FK_DANGLY, n->mesh->dangly);
		if (n->mesh->anim)
			fields(o, NWN_FK_ANIMMESH, n->mesh->anim);
	}
	if (n->light)
		light_part(o, n->light);
	if (n->emitter)
		fields(o, NWN_FK_EMITTER, n->emitter);
	if (n->ref)
		fields(o, NWN_FK_REF, n->ref);
	controllers(o, n);
	if (n->mesh)
		mesh_lists(o, g, n);
	lfs_sb_puts(o, "endnode\n");
}

/* "  key N" + the @p sets x @p nv rows of @p k floats of a vertex-major
 * array (binary: vertex i's set s at i * sets + s), printed set by set as
 * the text has them (all vertices of set 0, then set 1, ...). */
static void set_list(lfs_sb *o, const char *key, const float *v, size_t sets, size_t nv,
		     size_t k, bool pad_zero)
{
	lfs_sb_printf(o, "  %s %zu\n", key, sets * nv);
	for (size_t s = 0; s < sets; s++)
		for (size_t i = 0; i < nv; i++) {
			lfs_sb_puts(o, "    ");
			lfs_sb_floats(o, v + (i * sets + s) * k, k);
			if (pad_zero)
				lfs_sb_puts(o, " 0");
			lfs_sb_putc(o, '\n');
		}
}

static void anim_node(lfs_sb *o, const nwn_geometry *g, const nwn_node *n)
{
	node_header(o, g, n);
	controllers(o, n);
	if (n->mesh && n->mesh->anim) {
		const nwn_animmesh *am = n->mesh->anim;
		size_t nv = n->mesh->n_verts;
		fields(o, NWN_FK_ANIMMESH, am);
		/* the animation node's own mesh: its vertex count and order
		 * size and index the sets (the text's `verts`/`tverts`/`faces`
		 * of an animmesh animation node) */
		if (nv || (n->mesh->faces && n->mesh->n_faces))
			mesh_lists(o, g, n);
		if (am->anim_verts)
			set_list(o, "animverts", am->anim_verts, am->n_vert_sets, nv, 3, false);
		if (am->anim_tverts)
			set_list(o, "animtverts", am->anim_tverts, am->n_tvert_sets, nv, 2, true);
	}
	lfs_sb_puts(o, "endnode\n");
}

lfs_err nwn_ascii_write(const nwn_model *m, lfs_sb *o, lfs_error *err)
{
	const char *name = m->geom.name;
	const char *super = m->supermodel[0] ? m->supermodel : "NULL";
	lfs_sb_puts(o, "#MAXMODEL ASCII\n");
	lfs_sb_puts(o, "# legacyfs: text view of a binary NWN model (see docs/formats/nwn-ascii.md)\n");
	lfs_sb_printf(o, "# model: %s\n", name);
	lfs_sb_printf(o, "newmodel %s\n", name);
	lfs_sb_printf(o, "setsupermodel %s %s\n", name, super);
	if (m->classification) {
		const char *cn = nwn_classification_name(m->classification);
		if (cn)
			lfs_sb_printf(o, "classification %s\n", cn);
		else
			lfs_sb_printf(o, "classification %u\n", (unsigned)m->classification);
	}
	fields(o, NWN_FK_MODEL, m);
	/* fog byte (model header +0x73): 1 in every corpus file; NN's keyword
	 * for 0 is "ignorefog 1" ([N §2.1]) */
	if (m->fog == 0)
		lfs_sb_puts(o, "ignorefog 1\n");
	lfs_sb_puts(o, "#MAXGEOM ASCII\n");
	lfs_sb_printf(o, "beginmodelgeom %s\n", name);
	for (uint32_t i = 0; i < m->geom.n_nodes; i++)
		model_node(o, &m->geom, &m->geom.nodes[i]);
	lfs_sb_printf(o, "endmodelgeom %s\n", name);
	for (uint32_t a = 0; a < m->n_anims; a++) {
		const nwn_anim *an = &m->anims[a];
		lfs_sb_puts(o, "\n#MAXANIM ASCII\n");
		lfs_sb_printf(o, "newanim %s %s\n", an->geom.name, name);
		fields(o, NWN_FK_ANIM, an);
		for (uint32_t e = 0; e < an->n_events && an->events; e++) {
			lfs_sb_puts(o, "  event ");
			lfs_sb_float(o, an->events[e].after);
			lfs_sb_printf(o, " %s\n", an->events[e].name);
		}
		for (uint32_t i = 0; i < an->geom.n_nodes; i++)
			anim_node(o, &an->geom, &an->geom.nodes[i]);
		lfs_sb_printf(o, "doneanim %s %s\n", an->geom.name, name);
	}
	lfs_sb_printf(o, "\ndonemodel %s\n", name);
	if (!lfs_sb_ok(o))
		return lfs_nomem(err, "ascii view");
	return LFS_OK;
}
