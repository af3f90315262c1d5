/**
 * @file nwn_patch.c
 * Byte patching of an NWN binary: writes of new values at their structure
 * offsets (model data / raw data), edit tracking of mesh nodes, controller
 * key rows, and key count changes (re-decode + re-layout by the encoder).
 * No text here: the views (src/formats/nwn/nwn_apply*.c) read the edited text and
 * call these.
 */
#include "nwn_patch.h"
#include "../../common/floatfmt.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/mem.h"
#include "nwn_mdl_derive.h"
#include "nwn_mdl_encode.h"

#define FACE_SIZE 32u

/* ---- patch primitives ----------------------------------------------------- */

lfs_err nwn_patch_bytes(nwn_patch *a, size_t foff, const void *src, size_t len, const char *what)
{
	if (foff > a->n || a->n - foff < len)
		return lfs_fail(a->err, LFS_ERR_CORRUPT, foff, what,
				"edit target at file offset 0x%zx lies outside the file", foff);
	if (memcmp(a->img + foff, src, len)) {
		memcpy(a->img + foff, src, len);
		a->changed = true;
	}
	return LFS_OK;
}

static void le32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

bool nwn_feq(float x, float y)
{
	return lfs_f32_bits(x) == lfs_f32_bits(y);
}

lfs_err nwn_patch_md_u32(nwn_patch *a, uint32_t off, uint32_t v)
{
	uint8_t b[4];
	le32(b, v);
	return nwn_patch_bytes(a, a->md0 + off, b, 4, "model data");
}

lfs_err nwn_patch_md_f32(nwn_patch *a, uint32_t off, float v)
{
	return nwn_patch_md_u32(a, off, lfs_f32_bits(v));
}

lfs_err nwn_patch_md_u16(nwn_patch *a, uint32_t off, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return nwn_patch_bytes(a, a->md0 + off, b, 2, "model data");
}

lfs_err nwn_patch_md_u8(nwn_patch *a, uint32_t off, uint8_t v)
{
	return nwn_patch_bytes(a, a->md0 + off, &v, 1, "model data");
}

lfs_err nwn_patch_raw_u32(nwn_patch *a, uint32_t ptr, size_t idx, uint32_t v)
{
	uint8_t b[4];
	le32(b, v);
	return nwn_patch_bytes(a, a->raw0 + ptr + 4 * idx, b, 4, "raw data");
}

lfs_err nwn_patch_raw_f32(nwn_patch *a, uint32_t ptr, size_t idx, float v)
{
	return nwn_patch_raw_u32(a, ptr, idx, lfs_f32_bits(v));
}

lfs_err nwn_patch_raw_u16(nwn_patch *a, uint32_t ptr, size_t idx, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return nwn_patch_bytes(a, a->raw0 + ptr + 2 * idx, b, 2, "raw data");
}

/* Fixed-size string field of @p field bytes at model offset @p off: the new
 * text, a NUL, zeros over the rest of the old text; bytes after the old
 * string's NUL (uninitialised memory in game files, [N §3.3]) are kept. */
lfs_err nwn_patch_md_str(nwn_patch *a, uint32_t off, size_t field, const char *s)
{
	size_t foff = a->md0 + off, len = strlen(s);
	if (foff > a->n || a->n - foff < field || len >= field || field > 256)
		return lfs_fail(a->err, LFS_ERR_CORRUPT, foff, "string field", "bad string edit");
	uint8_t buf[256];
	memcpy(buf, a->img + foff, field);
	size_t oldlen = strnlen((const char *)buf, field);
	memcpy(buf, s, len);
	for (size_t i = len; i < field && (i == len || i < oldlen); i++)
		buf[i] = 0;
	return nwn_patch_bytes(a, foff, buf, field, "string field");
}
/* ---- mesh tracking -------------------------------------------------------- */

lfs_err nwn_patch_track(nwn_patch *a, uint32_t node)
{
	nwn_mesh_track *t = &a->trk[node];
	if (t->on)
		return LFS_OK;
	const nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	size_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
	size_t na = me->aabb ? me->aabb->n_entries : 0;
	t->vold = malloc(nv * 12 + 1);
	t->vdirty = calloc(nv + 1, 1);
	t->fold = malloc(nf * 6 + 2);
	t->fdirty = calloc(nf + 1, 1);
	t->aold = malloc(na * 24 + 4);
	t->aexplicit = calloc(na + 1, 1);
	if (!t->vold || !t->vdirty || !t->fold || !t->fdirty || !t->aold || !t->aexplicit)
		return lfs_nomem(a->err, "apply view");
	if (nv)
		memcpy(t->vold, me->verts, nv * 12);
	for (size_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++)
			t->fold[3 * f + k] = me->faces[f].v[k];
	for (size_t i = 0; i < na; i++) {
		memcpy(t->aold + 6 * i, me->aabb->entries[i].bmin, 12);
		memcpy(t->aold + 6 * i + 3, me->aabb->entries[i].bmax, 12);
	}
	t->on = true;
	return LFS_OK;
}

void nwn_track_free(nwn_mesh_track *t)
{
	free(t->vold);
	free(t->vdirty);
	free(t->fold);
	free(t->fdirty);
	free(t->aold);
	free(t->aexplicit);
}

/* Vertex @p v component @p k of model-geometry node @p node. */
lfs_err nwn_patch_set_vert(nwn_patch *a, uint32_t node, uint32_t v, int k, float val)
{
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	lfs_err e = nwn_patch_track(a, node);
	if (e)
		return e;
	me->verts[3 * (size_t)v + k] = val;
	a->trk[node].vdirty[v] = 1;
	return nwn_patch_raw_f32(a, me->verts_raw, 3 * (size_t)v + k, val);
}

/* Vertex index @p k of face @p f; keeps the vertex index list (the faces'
 * indices in face order, [N §3.3]) in step. */
lfs_err nwn_patch_set_face_v(nwn_patch *a, uint32_t node, uint32_t f, int k, uint16_t v)
{
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	lfs_err e = nwn_patch_track(a, node);
	if (e)
		return e;
	uint16_t old = me->faces[f].v[k];
	me->faces[f].v[k] = v;
	a->trk[node].fdirty[f] = 1;
	if ((e = nwn_patch_md_u16(a, me->faces_arr.off + FACE_SIZE * f + 26 + 2 * (uint32_t)k, v)))
		return e;
	size_t li = 3 * (size_t)f + (size_t)k;
	if (me->vindices && me->vindex_offsets && li < me->n_vindices && me->vindices[li] == old) {
		me->vindices[li] = v;
		return nwn_patch_raw_u16(a, me->vindex_offsets[0], li, v);
	}
	return LFS_OK;
}

/* ---- controllers ------------------------------------------------------------ */

/* Write one key row of controller @p c: time and values as the edited text
 * gives them, compared with what the generated text showed. @p ocols = 4 when
 * the first four values are shown as axis-angle (then the quaternion is
 * rebuilt only if one of the four changed). */
lfs_err nwn_patch_ctrl_row(nwn_patch *a, nwn_node *n, const nwn_controller *c, uint32_t r, float gt, float et,
			const float *gv, const float *ev, unsigned ocols)
{
	uint32_t base = n->ctrl_data_arr.off;
	lfs_err e = LFS_OK;
	if (!nwn_feq(gt, et)) {
		size_t idx = (size_t)c->key_offset + r;
		n->ctrl_data[idx] = et;
		if ((e = nwn_patch_md_f32(a, base + 4 * (uint32_t)idx, et)))
			return e;
	}
	size_t d0 = (size_t)c->data_offset + (size_t)r * c->ncols;
	unsigned k = 0;
	if (ocols == 4) {
		bool diff = false;
		for (int j = 0; j < 4; j++)
			diff |= !nwn_feq(gv[j], ev[j]);
		if (diff) {
			float q[4];
			nwn_axis_angle_to_quat_double(ev, q);
			for (int j = 0; j < 4 && !e; j++) {
				n->ctrl_data[d0 + j] = q[j];
				e = nwn_patch_md_f32(a, base + 4 * (uint32_t)(d0 + j), q[j]);
			}
		}
		k = 4;
	}
	for (; k < c->ncols && !e; k++) {
		if (nwn_feq(gv[k], ev[k]))
			continue;
		n->ctrl_data[d0 + k] = ev[k];
		e = nwn_patch_md_f32(a, base + 4 * (uint32_t)(d0 + k), ev[k]);
	}
	return e;
}

/* ---- key count changes ------------------------------------------------------ */

/* Record a new key list for controller @p ct (node @p ni of geometry @p gi):
 * @p en rows of edited times @p et and shown values @p ev, against the @p gn
 * generated rows @p gv. Shown orientation columns (@p ocols = 4) become
 * quaternions, keeping the stored bits of a row whose text is unchanged. */
lfs_err nwn_patch_pend_rows(nwn_patch *a, int32_t gi, uint32_t ni, const nwn_node *n,
			 const nwn_controller *ct, uint32_t gn, const float *gv, uint32_t en,
			 const float *et, const float *ev, unsigned ocols)
{
	unsigned nc = ct->ncols;
	if (en == 0 || en > 65535)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: a controller needs 1 to 65535 keys, the edit has %u", a->file, en);
	if (!lfs_grow32((void **)&a->pend, &a->cap_pend, a->n_pend + 1, sizeof(*a->pend)))
		return lfs_nomem(a->err, "apply view");
	nwn_pend_keys *p = &a->pend[a->n_pend];
	p->t = malloc((size_t)en * sizeof(float));
	p->v = malloc(((size_t)en * nc + 1) * sizeof(float));
	if (!p->t || !p->v) {
		free(p->t);
		free(p->v);
		return lfs_nomem(a->err, "apply view");
	}
	a->n_pend++;
	p->geom = gi;
	p->node = ni;
	p->ctrl = (uint32_t)(ct - n->ctrls);
	p->rows = en;
	memcpy(p->t, et, (size_t)en * sizeof(float));
	for (uint32_t r = 0; r < en; r++) {
		const float *e = ev + (size_t)r * nc;
		float *o = p->v + (size_t)r * nc;
		memcpy(o, e, nc * sizeof(float));
		if (ocols != 4)
			continue;
		/* a row showing the same axis-angle as a stored key (itself, or
		 * the row it was copied from) keeps that key's quaternion bits */
		uint32_t src = UINT32_MAX;
		/* candidates: the same index, the row before, the last row
		 * (bounded work even for hostile row counts) */
		uint32_t cands[3] = { r, r - 1, gn - 1 };
		for (int g = 0; g < 3 && src == UINT32_MAX; g++) {
			uint32_t cand = cands[g];
			if (cand >= gn)
				continue;
			bool same = true;
			for (int k = 0; k < 4 && same; k++)
				same = nwn_feq(gv[(size_t)cand * nc + k], e[k]);
			if (same)
				src = cand;
		}
		if (src != UINT32_MAX)
			memcpy(o, n->ctrl_data + ct->data_offset + (size_t)src * nc, 4 * sizeof(float));
		else
			nwn_axis_angle_to_quat_double(e, o);
	}
	return LFS_OK;
}

/* Rebuild a node's controller data with new keys for controller @p p->ctrl,
 * in the layout every corpus file has: per controller, its times then its
 * values, controllers in order. New arrays go to @p owned. */
static lfs_err rebuild_ctrls(nwn_patch *a, nwn_node *n, const nwn_pend_keys *p, float **owned)
{
	if (p->ctrl >= n->n_ctrls)
		return lfs_fail(a->err, LFS_ERR_CORRUPT, SIZE_MAX, NULL, "%s: controller lost", a->file);
	size_t total = 0;
	for (uint32_t k = 0; k < n->n_ctrls; k++) {
		const nwn_controller *c = &n->ctrls[k];
		size_t rows = k == p->ctrl ? p->rows : c->rows;
		total += rows * (1 + (size_t)c->ncols);
	}
	if (total > 65535)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: node '%s' would hold %zu controller floats (16-bit offsets allow 65535)",
				a->file, n->name, total);
	float *d = malloc((total + 1) * sizeof(float));
	if (!d)
		return lfs_nomem(a->err, "apply view");
	*owned = d;
	size_t pos = 0;
	for (uint32_t k = 0; k < n->n_ctrls; k++) {
		nwn_controller *c = &n->ctrls[k];
		bool ed = k == p->ctrl;
		size_t rows = ed ? p->rows : c->rows, nv = rows * c->ncols;
		memcpy(d + pos, ed ? p->t : n->ctrl_data + c->key_offset, rows * sizeof(float));
		c->key_offset = (uint16_t)pos;
		pos += rows;
		memcpy(d + pos, ed ? p->v : n->ctrl_data + c->data_offset, nv * sizeof(float));
		c->data_offset = (uint16_t)pos;
		pos += nv;
		c->rows = (uint16_t)rows;
	}
	n->ctrl_data = d;
	n->n_ctrl_data = (uint32_t)pos;
	n->ctrl_data_arr.count = (uint32_t)pos;
	return LFS_OK;
}

/* Re-decode the patched file, apply the key count changes, re-lay it. */
lfs_err nwn_patch_relayout(nwn_patch *a)
{
	nwn_model *m2 = NULL;
	lfs_error derr;
	if (nwn_mdl_decode(a->img, a->n, &m2, &derr))
		return lfs_fail(a->err, LFS_ERR_CORRUPT, derr.offset, derr.structure,
				"%s: patched file does not decode: %s", a->file, derr.msg);
	float **owned = calloc(a->n_pend + 1, sizeof(*owned));
	lfs_err e = owned ? LFS_OK : lfs_nomem(a->err, "apply view");
	for (uint32_t i = 0; i < a->n_pend && !e; i++) {
		const nwn_pend_keys *p = &a->pend[i];
		nwn_geometry *g = p->geom < 0 ? &m2->geom
			: (uint32_t)p->geom < m2->n_anims ? &m2->anims[p->geom].geom : NULL;
		if (!g || p->node >= g->n_nodes)
			e = lfs_fail(a->err, LFS_ERR_CORRUPT, SIZE_MAX, NULL, "%s: node lost", a->file);
		else
			e = rebuild_ctrls(a, &g->nodes[p->node], p, &owned[i]);
	}
	uint8_t *out = NULL;
	size_t on = 0;
	if (!e)
		e = nwn_mdl_encode(m2, &out, &on, a->err);
	if (!e) {
		free(a->img);
		a->img = out;
		a->n = on;
		a->changed = true;
	}
	for (uint32_t i = 0; owned && i < a->n_pend; i++)
		free(owned[i]);
	free(owned);
	nwn_model_free(m2);
	return e;
}


/* ---- context ------------------------------------------------------------------ */

lfs_err nwn_patch_open(nwn_patch *a, const uint8_t *orig, size_t n, const char *file, lfs_error *err)
{
	memset(a, 0, sizeof(*a));
	a->file = file;
	a->err = err;
	a->n = n;
	lfs_err e = nwn_mdl_decode(orig, n, &a->m, err);
	if (e)
		return e;
	a->md0 = 12;
	a->raw0 = 12 + (size_t)a->m->model_size;
	/* the output starts as the decoder's private copy of @p orig: the value
	 * path never reads a->m->image (only the encoder does, and relayout
	 * decodes img afresh), so the file is copied once, not twice */
	a->img = a->m->image;
	a->m->image = NULL;
	a->m->image_size = 0;
	a->trk = calloc(a->m->geom.n_nodes + 1, sizeof(*a->trk));
	if (!a->img || !a->trk)
		return lfs_nomem(err, "apply view");
	return LFS_OK;
}

lfs_err nwn_patch_finish(nwn_patch *a)
{
	lfs_err e = LFS_OK;
	for (uint32_t i = 0; i < a->m->geom.n_nodes && !e; i++)
		e = nwn_patch_derive_mesh(a, i);
	if (!e && a->n_pend)
		e = nwn_patch_relayout(a);
	if (!e && a->changed) {
		/* the patched file must still decode */
		nwn_model *chk = NULL; /* only read: no copy of the file */
		lfs_error cerr;
		if (nwn_mdl_decode_noimage(a->img, a->n, &chk, &cerr) != LFS_OK)
			e = lfs_fail(a->err, LFS_ERR_CORRUPT, cerr.offset, cerr.structure,
				     "%s: the edited binary does not decode: %s", a->file, cerr.msg);
		if (!e && a->keep_result) {
			nwn_model_free(a->result);
			a->result = chk; /* the decode of exactly img[0..n) */
		} else {
			nwn_model_free(chk);
		}
	}
	return e;
}

void nwn_patch_close(nwn_patch *a)
{
	if (a->trk && a->m)
		for (uint32_t i = 0; i < a->m->geom.n_nodes; i++)
			nwn_track_free(&a->trk[i]);
	free(a->trk);
	for (uint32_t i = 0; i < a->n_pend; i++) {
		free(a->pend[i].t);
		free(a->pend[i].v);
	}
	free(a->pend);
	nwn_model_free(a->m);
	nwn_model_free(a->result);
	free(a->img);
	memset(a, 0, sizeof(*a));
}
