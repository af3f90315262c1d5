/**
 * @file mksamples.c
 * TEST-ONLY writer of the project's sample models (samples/).
 *
 * A minimal NWN binary MDL encoder that handles exactly what the samples in
 * samples_spec.c use: dummy, trimesh and skin nodes, position/orientation
 * keys, animation events. It is not the project's encoder and does not
 * compile ASCII; it exists so the binaries in samples/ are provably made by
 * code in this repository (the meson test "samples-reproducible" regenerates
 * them and compares byte for byte).
 *
 * Usage: mksamples OUTDIR [--compare REFDIR]
 *   writes box.mdl, skin2bone.mdl and lfs_crate.tga into OUTDIR; with
 *   --compare, also checks that each file equals REFDIR/<name> and exits 1
 *   (naming the first differing offset) when one does not.
 *
 * Layout ([T] = Torlack's "NWN Binary Model Files Basics", [N §x] = the
 * public readers and compilers per topic; both keys are defined in
 * src/formats/nwn/nwn_mdl.h):
 * - file header {0, A, B}; model data (A bytes) then raw data (B bytes),
 *   12 + A + B = file size [T "header", N §1];
 * - model data in the order BioWare's compiler uses (observed in
 *   it_torch_000/c_drgshad): model header (0xE8), animation pointer array,
 *   each animation header (0xC4) followed by its events and its nodes, then
 *   the model geometry's nodes. Per node: node header (0x70; mesh 0x270; skin
 *   0x2D4), [skin: node-to-bone map, qbone, tbone, constant indices],
 *   [mesh: faces, vertex index count array, vertex index offset array],
 *   children pointer array, controller keys (12 bytes each), controller data
 *   (floats: per controller its times then its values), then the children,
 *   depth first [T "Nodes", "Controllers"];
 * - raw data per mesh in tree order: verts, tverts0, normals, vertex index
 *   list (u16), then for skins 4 weights (f32) and 4 bone refs (i16) per
 *   vertex, no padding [N §3.5, §3.6]. (BioWare's own files put the two skin
 *   arrays before the verts; readers follow the pointers either way.)
 * - empty arrays are written as {0, 0, 0} (nwnmdlcomp style [N §3.3]);
 *   function pointers are BioWare's (0x0040BBC0 family, [N §3.3]); string
 *   tails and pad bytes are zero.
 * - computed fields follow nwnmdlcomp [N §3.3, §3.4]: face plane normal =
 *   normalize((p1-p0) x (p2-p1)), distance = -n.p0; adjacent face per edge =
 *   first other face sharing that edge's two positions, else -1; mesh bbox,
 *   average and radius (max distance from the average) over the split
 *   vertices; "area" (+0x268) = total triangle area for trimeshes, 0 for
 *   skins; one vertex index list of 3 * faces entries; skin qbone/tbone =
 *   inverse bind transform of every model node relative to the skin node
 *   (the samples use identity orientations, so q = (w 1, x 0, y 0, z 0) and
 *   t = skin position - node position), constant indices 0.
 */
#include "samples_spec.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Growable zero-filled byte buffer. */
struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void die(const char *what)
{
	fprintf(stderr, "mksamples: %s\n", what);
	exit(1);
}

/** Append @p len zero bytes; return their offset. */
static uint32_t b_alloc(struct buf *b, size_t len)
{
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + len)
			cap *= 2;
		uint8_t *np = realloc(b->p, cap);
		if (!np)
			die("out of memory");
		b->p = np;
		b->cap = cap;
	}
	memset(b->p + b->n, 0, len);
	size_t off = b->n;
	b->n += len;
	if (b->n > UINT32_MAX)
		die("model too large");
	return (uint32_t)off;
}

static void w8(struct buf *b, size_t off, uint8_t v)
{
	b->p[off] = v;
}

static void w16(struct buf *b, size_t off, uint16_t v)
{
	b->p[off] = (uint8_t)v;
	b->p[off + 1] = (uint8_t)(v >> 8);
}

static void w32(struct buf *b, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->p[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void wf(struct buf *b, size_t off, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	w32(b, off, u);
}

static void warr(struct buf *b, size_t off, uint32_t ptr, uint32_t count)
{
	w32(b, off, count ? ptr : 0);
	w32(b, off + 4, count);
	w32(b, off + 8, count);
}

/** Fixed-size string field: NUL terminated, rest zero. */
static void wstr(struct buf *b, size_t off, const char *s, size_t field)
{
	size_t len = strlen(s);
	if (len >= field)
		die("name too long for its field");
	memcpy(b->p + off, s, len);
}

/* Function pointers of BioWare's compiler (1.69/EE), per structure [N §3.3]. */
static const uint32_t fn_model_geom[2] = { 0x0040BBC0, 0x0040BBD0 };
static const uint32_t fn_anim_geom[2] = { 0x0040B6C0, 0x0044E700 };
static const uint32_t fn_dummy[6] = { 0x0040CB70, 0x0040CBD0, 0x0040CBE0,
				      0x0040CBF0, 0x0040CC10, 0x0040CC20 };
static const uint32_t fn_trimesh[6] = { 0x0040E2E0, 0x0040E2F0, 0x0040E300,
					0x0040E310, 0x0040E330, 0x0040E340 };
static const uint32_t fn_trimesh_mesh[2] = { 0x0040E350, 0x0040D7E0 };
static const uint32_t fn_skin[6] = { 0x0040D710, 0x0040D790, 0x0040D7A0,
				     0x0040E310, 0x0040D7B0, 0x0040D7C0 };
static const uint32_t fn_skin_mesh[2] = { 0x0040D7D0, 0x0040D7E0 };

#define NO_RAW 0xFFFFFFFFu

struct writer {
	struct buf m, r;          /* model data, raw data */
	const smp_model *model;
};

static int32_t model_part(const smp_model *mdl, const char *name)
{
	for (uint32_t i = 0; i < mdl->n_nodes; i++)
		if (strcmp(mdl->nodes[i].name, name) == 0)
			return (int32_t)i;
	return -1;
}

/** World position of model node @p i from the first row of position keys. */
static void world_pos(const smp_model *mdl, int32_t i, double out[3])
{
	out[0] = out[1] = out[2] = 0;
	for (; i >= 0; i = mdl->nodes[i].parent) {
		const smp_node *nd = &mdl->nodes[i];
		for (uint32_t c = 0; c < nd->n_ctrls; c++)
			if (nd->ctrls[c].type == SMP_CTRL_POSITION)
				for (int k = 0; k < 3; k++)
					out[k] += nd->ctrls[c].values[k];
	}
}

static bool same_pos(const float *a, const float *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/** Face @p f's neighbour across edge (v[k], v[k+1]) by shared positions, or -1. */
static int16_t adjacent_face(const smp_mesh *ms, uint32_t f, int k)
{
	const float *a = ms->verts + 3 * ms->faces[3 * f + (uint32_t)k];
	const float *b = ms->verts + 3 * ms->faces[3 * f + (uint32_t)(k + 1) % 3];
	for (uint32_t g = 0; g < ms->n_faces; g++) {
		if (g == f)
			continue;
		for (int j = 0; j < 3; j++) {
			const float *c = ms->verts + 3 * ms->faces[3 * g + (uint32_t)j];
			const float *d = ms->verts + 3 * ms->faces[3 * g + (uint32_t)(j + 1) % 3];
			if ((same_pos(a, c) && same_pos(b, d)) || (same_pos(a, d) && same_pos(b, c)))
				return (int16_t)g;
		}
	}
	return -1;
}

/** Mesh header fields after the node header, the face array and the raw data. */
static void write_mesh(struct writer *w, uint32_t o, const smp_node *nd)
{
	struct buf *m = &w->m, *r = &w->r;
	const smp_mesh *ms = nd->mesh;
	bool skin = nd->flags == SMP_SKIN;
	uint32_t nv = ms->n_verts;

	const uint32_t *fn = skin ? fn_skin_mesh : fn_trimesh_mesh;
	w32(m, o + 0x70, fn[0]);
	w32(m, o + 0x74, fn[1]);

	/* bbox, average, radius over the split vertices; total area */
	double mn[3], mx[3], avg[3] = { 0, 0, 0 };
	for (int k = 0; k < 3; k++)
		mn[k] = mx[k] = ms->verts[k];
	for (uint32_t v = 0; v < nv; v++)
		for (int k = 0; k < 3; k++) {
			double x = ms->verts[3 * v + (uint32_t)k];
			mn[k] = x < mn[k] ? x : mn[k];
			mx[k] = x > mx[k] ? x : mx[k];
			avg[k] += x;
		}
	double rad = 0;
	for (int k = 0; k < 3; k++)
		avg[k] /= nv;
	for (uint32_t v = 0; v < nv; v++) {
		double d2 = 0;
		for (int k = 0; k < 3; k++) {
			double d = ms->verts[3 * v + (uint32_t)k] - avg[k];
			d2 += d * d;
		}
		rad = d2 > rad ? d2 : rad;
	}
	rad = sqrt(rad);
	for (int k = 0; k < 3; k++) {
		wf(m, o + 0x84 + 4 * (size_t)k, (float)mn[k]);
		wf(m, o + 0x90 + 4 * (size_t)k, (float)mx[k]);
		wf(m, o + 0xA0 + 4 * (size_t)k, (float)avg[k]);
		wf(m, o + 0xAC + 4 * (size_t)k, ms->diffuse[k]);
		wf(m, o + 0xB8 + 4 * (size_t)k, ms->ambient[k]);
		wf(m, o + 0xC4 + 4 * (size_t)k, ms->specular[k]);
	}
	wf(m, o + 0x9C, (float)rad);
	wf(m, o + 0xD0, ms->shininess);
	w32(m, o + 0xD4, 1); /* shadow */
	w32(m, o + 0xD8, 0); /* beaming */
	w32(m, o + 0xDC, 1); /* render */
	w32(m, o + 0xE0, 0); /* transparency hint */
	w32(m, o + 0xE4, 0); /* render hint */
	wstr(m, o + 0xE8, ms->bitmap, 64);
	w32(m, o + 0x1E8, 0); /* tile fade */

	/* faces */
	uint32_t faces = b_alloc(m, 32 * (size_t)ms->n_faces);
	warr(m, o + 0x78, faces, ms->n_faces);
	double area = 0;
	for (uint32_t f = 0; f < ms->n_faces; f++) {
		const float *p[3];
		for (int k = 0; k < 3; k++)
			p[k] = ms->verts + 3 * ms->faces[3 * f + (uint32_t)k];
		double e1[3], e2[3], n[3];
		for (int k = 0; k < 3; k++) {
			e1[k] = (double)p[1][k] - p[0][k];
			e2[k] = (double)p[2][k] - p[1][k];
		}
		n[0] = e1[1] * e2[2] - e1[2] * e2[1];
		n[1] = e1[2] * e2[0] - e1[0] * e2[2];
		n[2] = e1[0] * e2[1] - e1[1] * e2[0];
		double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
		area += len / 2; /* |(p1-p0) x (p2-p1)| = |(p1-p0) x (p2-p0)| */
		double d = 0;
		for (int k = 0; k < 3; k++) {
			n[k] = (len > 0 ? n[k] / len : 0) + 0.0; /* + 0.0: no -0 */
			d -= n[k] * p[0][k];
		}
		d += 0.0;
		size_t fo = faces + 32 * (size_t)f;
		for (int k = 0; k < 3; k++)
			wf(m, fo + 4 * (size_t)k, (float)n[k]);
		wf(m, fo + 12, (float)d);
		w32(m, fo + 16, ms->surface_id);
		for (int k = 0; k < 3; k++) {
			w16(m, fo + 20 + 2 * (size_t)k, (uint16_t)adjacent_face(ms, f, k));
			w16(m, fo + 26 + 2 * (size_t)k, ms->faces[3 * f + (uint32_t)k]);
		}
	}

	/* vertex index list: count array and offset array (one list) */
	uint32_t vcnt = b_alloc(m, 4);
	uint32_t voff = b_alloc(m, 4);
	warr(m, o + 0x204, vcnt, 1);
	warr(m, o + 0x210, voff, 1);
	w32(m, vcnt, 3 * ms->n_faces);
	w32(m, o + 0x21C, NO_RAW); /* strips */
	w32(m, o + 0x220, 0);
	w8(m, o + 0x224, 3);       /* triangle mode */
	w32(m, o + 0x228, 0);

	/* raw data: verts, tverts0, normals, index list, [weights, bone refs] */
	uint32_t rv = b_alloc(r, 12 * (size_t)nv);
	for (uint32_t i = 0; i < 3 * nv; i++)
		wf(r, rv + 4 * (size_t)i, ms->verts[i]);
	uint32_t rt = b_alloc(r, 8 * (size_t)nv);
	for (uint32_t i = 0; i < 2 * nv; i++)
		wf(r, rt + 4 * (size_t)i, ms->tverts[i]);
	uint32_t rn = b_alloc(r, 12 * (size_t)nv);
	for (uint32_t i = 0; i < 3 * nv; i++)
		wf(r, rn + 4 * (size_t)i, ms->normals[i]);
	uint32_t ri = b_alloc(r, 6 * (size_t)ms->n_faces);
	for (uint32_t i = 0; i < 3 * ms->n_faces; i++)
		w16(r, ri + 2 * (size_t)i, ms->faces[i]);
	w32(m, voff, ri);

	w32(m, o + 0x22C, rv);
	w16(m, o + 0x230, (uint16_t)nv);
	w16(m, o + 0x232, 1); /* texture count */
	w32(m, o + 0x234, rt);
	for (int k = 1; k < 4; k++)
		w32(m, o + 0x234 + 4 * (size_t)k, NO_RAW);
	w32(m, o + 0x244, rn);
	w32(m, o + 0x248, NO_RAW); /* colors */
	for (int k = 0; k < 6; k++)
		w32(m, o + 0x24C + 4 * (size_t)k, NO_RAW);
	wf(m, o + 0x268, skin ? 0.0f : (float)area);

	if (skin) {
		uint32_t rw = b_alloc(r, 16 * (size_t)nv);
		for (uint32_t i = 0; i < 4 * nv; i++)
			wf(r, rw + 4 * (size_t)i, ms->weights[i]);
		uint32_t rb = b_alloc(r, 8 * (size_t)nv);
		for (uint32_t i = 0; i < 4 * nv; i++)
			w16(r, rb + 2 * (size_t)i, (uint16_t)ms->bonerefs[i]);
		w32(m, o + 0x27C, rw);
		w32(m, o + 0x280, rb);
	}
}

/** Skin part: node-to-bone map, qbone/tbone ref inv, constant indices, bone numbers. */
static void write_skin(struct writer *w, uint32_t o, int32_t self)
{
	struct buf *m = &w->m;
	const smp_model *mdl = w->model;
	const smp_mesh *ms = mdl->nodes[self].mesh;
	uint32_t nn = mdl->n_nodes;

	warr(m, o + 0x270, 0, 0); /* compile-time weights array */
	uint32_t n2b = b_alloc(m, 2 * (size_t)nn);
	for (uint32_t j = 0; j < nn; j++) {
		int16_t bone = -1;
		for (uint8_t b = 0; b < ms->n_bones; b++)
			if (ms->bone_nodes[b] == (int16_t)j)
				bone = (int16_t)b;
		w16(m, n2b + 2 * (size_t)j, (uint16_t)bone);
	}
	w32(m, o + 0x284, n2b);
	w32(m, o + 0x288, nn);

	double ps[3];
	world_pos(mdl, self, ps);
	uint32_t q = b_alloc(m, 16 * (size_t)nn);
	uint32_t t = b_alloc(m, 12 * (size_t)nn);
	uint32_t ci = b_alloc(m, 4 * (size_t)nn);
	for (uint32_t j = 0; j < nn; j++) {
		double pj[3];
		world_pos(mdl, (int32_t)j, pj);
		wf(m, q + 16 * (size_t)j, 1.0f); /* w x y z [N §3.2] */
		for (int k = 0; k < 3; k++)
			wf(m, t + 12 * (size_t)j + 4 * (size_t)k, (float)(ps[k] - pj[k]));
	}
	warr(m, o + 0x28C, q, nn);
	warr(m, o + 0x298, t, nn);
	warr(m, o + 0x2A4, ci, nn);
	for (int b = 0; b < 17; b++)
		w16(m, o + 0x2B0 + 2 * (size_t)b,
		    (uint16_t)(b < ms->n_bones ? ms->bone_nodes[b] : -1));
	/* bone 17: the word after the 17-entry table (the game's compiler stores
	 * an 18th bone there); 0 when unused */
	w16(m, o + 0x2D2, (uint16_t)(ms->n_bones > 17 ? ms->bone_nodes[17] : 0));
}

/** Write node @p i of @p nodes and its subtree; return its model offset. */
static uint32_t write_node(struct writer *w, const smp_node *nodes, uint32_t n_nodes,
			   uint32_t i, bool anim)
{
	struct buf *m = &w->m;
	const smp_node *nd = &nodes[i];
	bool mesh = nd->flags == SMP_TRIMESH || nd->flags == SMP_SKIN;
	if (mesh && (anim || !nd->mesh))
		die("mesh nodes only in the model geometry, with mesh data");
	size_t size = nd->flags == SMP_SKIN ? 0x2D4 : mesh ? 0x270 : 0x70;
	uint32_t o = b_alloc(m, size);

	const uint32_t *fn = nd->flags == SMP_SKIN ? fn_skin : mesh ? fn_trimesh : fn_dummy;
	for (int k = 0; k < 6; k++)
		w32(m, o + 4 * (size_t)k, fn[k]);
	w32(m, o + 0x18, 0); /* inherit color */
	int32_t part = anim ? model_part(w->model, nd->name) : (int32_t)i;
	w32(m, o + 0x1C, (uint32_t)part);
	wstr(m, o + 0x20, nd->name, 32);
	w32(m, o + 0x6C, nd->flags);

	if (nd->flags == SMP_SKIN)
		write_skin(w, o, (int32_t)i);
	if (mesh)
		write_mesh(w, o, nd);

	uint32_t nch = 0;
	for (uint32_t j = 0; j < n_nodes; j++)
		nch += nodes[j].parent == (int32_t)i;
	uint32_t ch = b_alloc(m, 4 * (size_t)nch);
	warr(m, o + 0x48, ch, nch);

	uint32_t nkeys = nd->n_ctrls, nfl = 0;
	for (uint32_t c = 0; c < nkeys; c++)
		nfl += nd->ctrls[c].rows * (1u + nd->ctrls[c].cols);
	uint32_t keys = b_alloc(m, 12 * (size_t)nkeys);
	uint32_t data = b_alloc(m, 4 * (size_t)nfl);
	warr(m, o + 0x54, keys, nkeys);
	warr(m, o + 0x60, data, nfl);
	uint32_t at = 0;
	for (uint32_t c = 0; c < nkeys; c++) {
		const smp_ctrl *ct = &nd->ctrls[c];
		size_t ko = keys + 12 * (size_t)c;
		w32(m, ko, ct->type);
		w16(m, ko + 4, ct->rows);
		w16(m, ko + 6, (uint16_t)at);
		w16(m, ko + 8, (uint16_t)(at + ct->rows));
		w8(m, ko + 10, ct->cols);
		w8(m, ko + 11, 0);
		for (uint32_t r = 0; r < ct->rows; r++)
			wf(m, data + 4 * (size_t)(at + r), ct->times[r]);
		at += ct->rows;
		for (uint32_t v = 0; v < (uint32_t)ct->rows * ct->cols; v++)
			wf(m, data + 4 * (size_t)(at + v), ct->values[v]);
		at += (uint32_t)ct->rows * ct->cols;
	}

	uint32_t k = 0;
	for (uint32_t j = 0; j < n_nodes; j++)
		if (nodes[j].parent == (int32_t)i) {
			if (j <= i)
				die("node list is not in depth-first pre-order");
			uint32_t co = write_node(w, nodes, n_nodes, j, anim);
			w32(m, ch + 4 * (size_t)k++, co);
		}
	return o;
}

/** Geometry header fields [T "The Geometry Header"]. */
static void write_geom(struct buf *m, uint32_t o, const uint32_t fn[2], const char *name,
		       uint32_t n_nodes, uint8_t type)
{
	w32(m, o, fn[0]);
	w32(m, o + 4, fn[1]);
	wstr(m, o + 8, name, 64);
	w32(m, o + 0x4C, n_nodes);
	warr(m, o + 0x50, 0, 0);
	warr(m, o + 0x5C, 0, 0);
	w32(m, o + 0x68, 0);
	w8(m, o + 0x6C, type);
}

/** Encode @p mdl; returns the file bytes (malloc'd) and their size. */
static uint8_t *encode_model(const smp_model *mdl, size_t *size)
{
	struct writer w = { .model = mdl };
	struct buf *m = &w.m;

	uint32_t hdr = b_alloc(m, 0xE8);
	write_geom(m, hdr, fn_model_geom, mdl->name, mdl->n_nodes, 2);
	w8(m, hdr + 0x70, 0);
	w8(m, hdr + 0x71, 0);
	w8(m, hdr + 0x72, mdl->classification);
	w8(m, hdr + 0x73, 1); /* fog */
	w32(m, hdr + 0x74, 0);
	w32(m, hdr + 0x84, 0);
	static const float bbox[6] = { -5, -5, -1, 5, 5, 10 }; /* defaults [T] */
	for (int k = 0; k < 6; k++)
		wf(m, hdr + 0x88 + 4 * (size_t)k, bbox[k]);
	wf(m, hdr + 0xA0, 7.0f);
	wf(m, hdr + 0xA4, 1.0f);
	wstr(m, hdr + 0xA8, mdl->supermodel, 64);

	uint32_t aptrs = b_alloc(m, 4 * (size_t)mdl->n_anims);
	warr(m, hdr + 0x78, aptrs, mdl->n_anims);
	for (uint32_t a = 0; a < mdl->n_anims; a++) {
		const smp_anim *an = &mdl->anims[a];
		uint32_t ah = b_alloc(m, 0xC4);
		w32(m, aptrs + 4 * (size_t)a, ah);
		write_geom(m, ah, fn_anim_geom, an->name, mdl->n_nodes, 5);
		wf(m, ah + 0x70, an->length);
		wf(m, ah + 0x74, an->trans_time);
		wstr(m, ah + 0x78, an->anim_root, 64);
		uint32_t ev = b_alloc(m, 0x24 * (size_t)an->n_events);
		warr(m, ah + 0xB8, ev, an->n_events);
		for (uint32_t e = 0; e < an->n_events; e++) {
			wf(m, ev + 0x24 * (size_t)e, an->events[e].after);
			wstr(m, ev + 0x24 * (size_t)e + 4, an->events[e].name, 32);
		}
		w32(m, ah + 0x48, write_node(&w, an->nodes, an->n_nodes, 0, true));
	}
	w32(m, hdr + 0x48, write_node(&w, mdl->nodes, mdl->n_nodes, 0, false));

	*size = 12 + m->n + w.r.n;
	uint8_t *out = malloc(*size);
	if (!out)
		die("out of memory");
	struct buf fh = { out, 0, 12 };
	b_alloc(&fh, 12);
	w32(&fh, 4, (uint32_t)m->n);
	w32(&fh, 8, (uint32_t)w.r.n);
	memcpy(out + 12, m->p, m->n);
	if (w.r.n)
		memcpy(out + 12 + m->n, w.r.p, w.r.n);
	free(m->p);
	free(w.r.p);
	return out;
}

/** 8x8 uncompressed 32-bit TGA (type 2, top-left origin): a crate face. */
static uint8_t *encode_tga(size_t *size)
{
	const unsigned n = SMP_TGA_SIZE;
	*size = 18 + 4 * (size_t)n * n;
	uint8_t *t = calloc(1, *size);
	if (!t)
		die("out of memory");
	t[2] = 2;                 /* uncompressed true-colour */
	t[12] = (uint8_t)n;       /* width */
	t[14] = (uint8_t)n;       /* height */
	t[16] = 32;               /* bits per pixel */
	t[17] = 0x28;             /* 8 alpha bits, top-left origin */
	for (unsigned y = 0; y < n; y++)
		for (unsigned x = 0; x < n; x++) {
			uint8_t *px = t + 18 + 4 * (y * n + x);
			bool edge = x == 0 || y == 0 || x == n - 1 || y == n - 1;
			bool diag = x == y || x == n - 1 - y;
			uint8_t r = edge ? 0x5A : diag ? 0x8B : 0xC8;
			uint8_t g = edge ? 0x3A : diag ? 0x5A : 0x96;
			uint8_t b = edge ? 0x1E : diag ? 0x2B : 0x5A;
			px[0] = b;
			px[1] = g;
			px[2] = r;
			px[3] = 0xFF;
		}
	return t;
}

static int write_file(const char *dir, const char *name, const uint8_t *data, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "mksamples: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static int compare_file(const char *dir, const char *name, const uint8_t *data, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "mksamples: cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	size_t i = 0;
	int c, bad = 0;
	while ((c = getc(f)) != EOF) {
		if (i >= n || (uint8_t)c != data[i]) {
			bad = 1;
			break;
		}
		i++;
	}
	fclose(f);
	if (bad || i != n) {
		fprintf(stderr, "mksamples: %s differs from the writer's output at byte %zu "
			"(regenerate with: ninja -C <build> samples)\n", path, i);
		return 1;
	}
	printf("%s: identical (%zu bytes)\n", path, n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *ref = NULL;
	int bad_args = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--compare") == 0 && i + 1 < argc)
			ref = argv[++i];
		else if (!out && argv[i][0] != '-')
			out = argv[i];
		else
			bad_args = 1;
	}
	if (!out || bad_args) {
		fprintf(stderr, "usage: mksamples OUTDIR [--compare REFDIR]\n");
		return 2;
	}
	if (mkdir(out, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "mksamples: cannot create %s: %s\n", out, strerror(errno));
		return 1;
	}
	int rc = 0;
	for (size_t i = 0; i <= smp_n_models; i++) {
		size_t n;
		const char *name = i < smp_n_models ? smp_models[i].file : SMP_TGA_FILE;
		uint8_t *data = i < smp_n_models ? encode_model(&smp_models[i], &n) : encode_tga(&n);
		rc |= write_file(out, name, data, n);
		if (ref)
			rc |= compare_file(ref, name, data, n);
		free(data);
	}
	return rc;
}
