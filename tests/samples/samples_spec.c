/**
 * @file samples_spec.c
 * Geometry, keys and names of the sample models (see samples_spec.h).
 */
#include "samples_spec.h"

#define H 0.5f   /* half edge of the box */
#define R 0.70710677f /* sqrt(1/2) as float32 */

/* ------------------------------------------------------------------------
 * box.mdl: root dummy "box" + trimesh "crate", a 1 m crate standing on the
 * ground (z from 0 to 1). 24 split vertices: 4 per side, each with the side's
 * normal and its own UV corner, so every binary vertex has exactly one tvert
 * and one normal ([N §3.4], key in src/formats/nwn/nwn_mdl.h).
 * Sides in order +X, -X, +Y, -Y, +Z, -Z; corners counter-clockwise from
 * outside.
 */
static const float box_verts[24 * 3] = {
	H, -H, 0, H, H, 0, H, H, 1, H, -H, 1,          /* +X */
	-H, H, 0, -H, -H, 0, -H, -H, 1, -H, H, 1,      /* -X */
	H, H, 0, -H, H, 0, -H, H, 1, H, H, 1,          /* +Y */
	-H, -H, 0, H, -H, 0, H, -H, 1, -H, -H, 1,      /* -Y */
	-H, -H, 1, H, -H, 1, H, H, 1, -H, H, 1,        /* +Z */
	-H, H, 0, H, H, 0, H, -H, 0, -H, -H, 0,        /* -Z */
};

static const float box_tverts[24 * 2] = {
	0, 0, 1, 0, 1, 1, 0, 1,
	0, 0, 1, 0, 1, 1, 0, 1,
	0, 0, 1, 0, 1, 1, 0, 1,
	0, 0, 1, 0, 1, 1, 0, 1,
	0, 0, 1, 0, 1, 1, 0, 1,
	0, 0, 1, 0, 1, 1, 0, 1,
};

static const float box_normals[24 * 3] = {
	1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0,
	-1, 0, 0, -1, 0, 0, -1, 0, 0, -1, 0, 0,
	0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0,
	0, -1, 0, 0, -1, 0, 0, -1, 0, 0, -1, 0,
	0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1,
	0, 0, -1, 0, 0, -1, 0, 0, -1, 0, 0, -1,
};

/* Two triangles per side: (0,1,2) and (0,2,3) of its four corners. */
#define SIDE(b) (b), (b) + 1, (b) + 2, (b), (b) + 2, (b) + 3
static const uint16_t box_faces[12 * 3] = {
	SIDE(0), SIDE(4), SIDE(8), SIDE(12), SIDE(16), SIDE(20),
};
#undef SIDE

static const smp_mesh box_mesh = {
	.bitmap = "lfs_crate",
	.n_verts = 24,
	.verts = box_verts,
	.tverts = box_tverts,
	.normals = box_normals,
	.n_faces = 12,
	.faces = box_faces,
	.surface_id = 1,
	.diffuse = { 0.8f, 0.8f, 0.8f },
	.ambient = { 0.2f, 0.2f, 0.2f },
	.specular = { 0, 0, 0 },
	.shininess = 1,
};

static const float t0[1] = { 0 };
static const float zero3[3] = { 0, 0, 0 };
static const float ident_q[4] = { 0, 0, 0, 1 };

static const smp_ctrl crate_ctrls[] = {
	{ SMP_CTRL_POSITION, 1, 3, t0, zero3 },
	{ SMP_CTRL_ORIENTATION, 1, 4, t0, ident_q },
};

static const smp_node box_nodes[] = {
	{ "box", -1, SMP_DUMMY, NULL, 0, NULL },
	{ "crate", 0, SMP_TRIMESH, &box_mesh, 2, crate_ctrls },
};

/* Animation "spin": the crate hops up 0.25 m and turns 180 degrees about Z. */
static const float spin_times[3] = { 0, 0.5f, 1 };
static const float spin_pos[3 * 3] = { 0, 0, 0, 0, 0, 0.25f, 0, 0, 0 };
static const float spin_rot[3 * 4] = {
	0, 0, 0, 1,   /* identity */
	0, 0, R, R,   /* 90 degrees about +Z */
	0, 0, 1, 0,   /* 180 degrees about +Z */
};
static const smp_ctrl spin_crate_ctrls[] = {
	{ SMP_CTRL_POSITION, 3, 3, spin_times, spin_pos },
	{ SMP_CTRL_ORIENTATION, 3, 4, spin_times, spin_rot },
};
static const smp_node spin_nodes[] = {
	{ "box", -1, SMP_DUMMY, NULL, 0, NULL },
	{ "crate", 0, SMP_DUMMY, NULL, 2, spin_crate_ctrls },
};
static const smp_event spin_events[] = {
	{ 0.5f, "lfs_hop" },
};
static const smp_anim box_anims[] = {
	{ "spin", 1.0f, 0.25f, "box", 1, spin_events, 2, spin_nodes },
};

/* ------------------------------------------------------------------------
 * skin2bone.mdl: root dummy "skin2bone" with bone "bone1" (at the origin),
 * bone "bone2" (child of bone1, 1 m up) and skin "tube": a square tube
 * 0.5 m wide and 2 m high, three rings of four vertices (z = 0, 1, 2).
 * Ring 0 follows bone1, ring 2 follows bone2, ring 1 is shared half/half.
 * Ring 2 puts its only bone in lane 1 with lane 0 unused, as some game files
 * do ([N §3.6]).
 */
#define Q 0.25f
static const float tube_verts[12 * 3] = {
	Q, Q, 0, -Q, Q, 0, -Q, -Q, 0, Q, -Q, 0,
	Q, Q, 1, -Q, Q, 1, -Q, -Q, 1, Q, -Q, 1,
	Q, Q, 2, -Q, Q, 2, -Q, -Q, 2, Q, -Q, 2,
};
static const float tube_tverts[12 * 2] = {
	0, 0, 0.25f, 0, 0.5f, 0, 0.75f, 0,
	0, 0.5f, 0.25f, 0.5f, 0.5f, 0.5f, 0.75f, 0.5f,
	0, 1, 0.25f, 1, 0.5f, 1, 0.75f, 1,
};
static const float tube_normals[12 * 3] = {
	R, R, 0, -R, R, 0, -R, -R, 0, R, -R, 0,
	R, R, 0, -R, R, 0, -R, -R, 0, R, -R, 0,
	R, R, 0, -R, R, 0, -R, -R, 0, R, -R, 0,
};
/* Side k of ring r: corners a=4r+k, b=4r+(k+1)%4, c=b+4, d=a+4; triangles (a,b,c), (a,c,d). */
#define QUAD(r, k) (4 * (r) + (k)), (4 * (r) + ((k) + 1) % 4), (4 * (r) + 4 + ((k) + 1) % 4), \
	(4 * (r) + (k)), (4 * (r) + 4 + ((k) + 1) % 4), (4 * (r) + 4 + (k))
static const uint16_t tube_faces[16 * 3] = {
	QUAD(0, 0), QUAD(0, 1), QUAD(0, 2), QUAD(0, 3),
	QUAD(1, 0), QUAD(1, 1), QUAD(1, 2), QUAD(1, 3),
};
#undef QUAD
#define W_B1 1, 0, 0, 0
#define W_MID 0.5f, 0.5f, 0, 0
#define W_B2 0, 1, 0, 0
static const float tube_weights[12 * 4] = {
	W_B1, W_B1, W_B1, W_B1,
	W_MID, W_MID, W_MID, W_MID,
	W_B2, W_B2, W_B2, W_B2,
};
#define B_B1 0, -1, -1, -1
#define B_MID 0, 1, -1, -1
#define B_B2 -1, 1, -1, -1
static const int16_t tube_bonerefs[12 * 4] = {
	B_B1, B_B1, B_B1, B_B1,
	B_MID, B_MID, B_MID, B_MID,
	B_B2, B_B2, B_B2, B_B2,
};
static const int16_t tube_bone_nodes[2] = { 1, 2 }; /* bone 0 = bone1, bone 1 = bone2 */

static const smp_mesh tube_mesh = {
	.bitmap = "lfs_crate",
	.n_verts = 12,
	.verts = tube_verts,
	.tverts = tube_tverts,
	.normals = tube_normals,
	.n_faces = 16,
	.faces = tube_faces,
	.surface_id = 1,
	.diffuse = { 0.8f, 0.8f, 0.8f },
	.ambient = { 0.2f, 0.2f, 0.2f },
	.specular = { 0, 0, 0 },
	.shininess = 1,
	.weights = tube_weights,
	.bonerefs = tube_bonerefs,
	.n_bones = 2,
	.bone_nodes = tube_bone_nodes,
};

static const float up1[3] = { 0, 0, 1 };
static const smp_ctrl bone1_ctrls[] = {
	{ SMP_CTRL_POSITION, 1, 3, t0, zero3 },
	{ SMP_CTRL_ORIENTATION, 1, 4, t0, ident_q },
};
static const smp_ctrl bone2_ctrls[] = {
	{ SMP_CTRL_POSITION, 1, 3, t0, up1 },
	{ SMP_CTRL_ORIENTATION, 1, 4, t0, ident_q },
};
static const smp_ctrl tube_ctrls[] = {
	{ SMP_CTRL_POSITION, 1, 3, t0, zero3 },
	{ SMP_CTRL_ORIENTATION, 1, 4, t0, ident_q },
};
static const smp_node skin_nodes[] = {
	{ "skin2bone", -1, SMP_DUMMY, NULL, 0, NULL },
	{ "bone1", 0, SMP_DUMMY, NULL, 2, bone1_ctrls },
	{ "bone2", 1, SMP_DUMMY, NULL, 2, bone2_ctrls },
	{ "tube", 0, SMP_SKIN, &tube_mesh, 2, tube_ctrls },
};

/* Animation "bend": bone2 tilts 45 degrees about +X and back. */
static const float bend_times[3] = { 0, 0.5f, 1 };
static const float bend_rot[3 * 4] = {
	0, 0, 0, 1,
	0.38268343f, 0, 0, 0.9238795f, /* 45 degrees about +X */
	0, 0, 0, 1,
};
static const smp_ctrl bend_bone2_ctrls[] = {
	{ SMP_CTRL_ORIENTATION, 3, 4, bend_times, bend_rot },
};
static const smp_node bend_nodes[] = {
	{ "skin2bone", -1, SMP_DUMMY, NULL, 0, NULL },
	{ "bone1", 0, SMP_DUMMY, NULL, 0, NULL },
	{ "bone2", 1, SMP_DUMMY, NULL, 1, bend_bone2_ctrls },
	{ "tube", 0, SMP_DUMMY, NULL, 0, NULL },
};
static const smp_anim skin_anims[] = {
	{ "bend", 1.0f, 0.25f, "skin2bone", 0, NULL, 4, bend_nodes },
};

/* ------------------------------------------------------------------------
 * skin18bone.mdl (issue 10): a skin with 18 bones, one more than the 17-entry
 * bone table: bone 17's node number sits in the word after the table, as in
 * the game's compiler's output (nwn_mdl.h NWN_SKIN_BONES). Root dummy
 * "skin18bone", a chain of 18 bone dummies b00 -> b01 -> ... -> b17 (b00 at
 * the origin, each next one 0.25 m up), and skin "rope": a flat strip in the
 * XZ plane facing -Y, 0.5 m wide, 18 rows of two vertices (z = 0.25 k); row k
 * follows bone k with weight 1. 17 quads = 34 faces. No animation.
 */
#define B18_ROWS 18
#define B18_ROW(k) -Q, 0, 0.25f * (k), Q, 0, 0.25f * (k)
static const float rope_verts[2 * B18_ROWS * 3] = {
	B18_ROW(0), B18_ROW(1), B18_ROW(2), B18_ROW(3), B18_ROW(4), B18_ROW(5),
	B18_ROW(6), B18_ROW(7), B18_ROW(8), B18_ROW(9), B18_ROW(10), B18_ROW(11),
	B18_ROW(12), B18_ROW(13), B18_ROW(14), B18_ROW(15), B18_ROW(16), B18_ROW(17),
};
#undef B18_ROW
#define B18_TV(k) 0, (k) / 17.0f, 1, (k) / 17.0f
static const float rope_tverts[2 * B18_ROWS * 2] = {
	B18_TV(0), B18_TV(1), B18_TV(2), B18_TV(3), B18_TV(4), B18_TV(5),
	B18_TV(6), B18_TV(7), B18_TV(8), B18_TV(9), B18_TV(10), B18_TV(11),
	B18_TV(12), B18_TV(13), B18_TV(14), B18_TV(15), B18_TV(16), B18_TV(17),
};
#undef B18_TV
#define B18_N 0, -1, 0, 0, -1, 0
static const float rope_normals[2 * B18_ROWS * 3] = {
	B18_N, B18_N, B18_N, B18_N, B18_N, B18_N, B18_N, B18_N, B18_N,
	B18_N, B18_N, B18_N, B18_N, B18_N, B18_N, B18_N, B18_N, B18_N,
};
#undef B18_N
/* Quad k: a = 2k (x = -Q), b = 2k + 1, c = 2k + 3, d = 2k + 2; (a,b,c), (a,c,d). */
#define B18_QUAD(k) 2 * (k), 2 * (k) + 1, 2 * (k) + 3, 2 * (k), 2 * (k) + 3, 2 * (k) + 2
static const uint16_t rope_faces[2 * (B18_ROWS - 1) * 3] = {
	B18_QUAD(0), B18_QUAD(1), B18_QUAD(2), B18_QUAD(3), B18_QUAD(4), B18_QUAD(5),
	B18_QUAD(6), B18_QUAD(7), B18_QUAD(8), B18_QUAD(9), B18_QUAD(10), B18_QUAD(11),
	B18_QUAD(12), B18_QUAD(13), B18_QUAD(14), B18_QUAD(15), B18_QUAD(16),
};
#undef B18_QUAD
#define B18_W 1, 0, 0, 0, 1, 0, 0, 0
static const float rope_weights[2 * B18_ROWS * 4] = {
	B18_W, B18_W, B18_W, B18_W, B18_W, B18_W, B18_W, B18_W, B18_W,
	B18_W, B18_W, B18_W, B18_W, B18_W, B18_W, B18_W, B18_W, B18_W,
};
#undef B18_W
#define B18_B(k) (k), -1, -1, -1, (k), -1, -1, -1
static const int16_t rope_bonerefs[2 * B18_ROWS * 4] = {
	B18_B(0), B18_B(1), B18_B(2), B18_B(3), B18_B(4), B18_B(5),
	B18_B(6), B18_B(7), B18_B(8), B18_B(9), B18_B(10), B18_B(11),
	B18_B(12), B18_B(13), B18_B(14), B18_B(15), B18_B(16), B18_B(17),
};
#undef B18_B
/* bone k = node b<k> = node index k + 1 */
static const int16_t rope_bone_nodes[B18_ROWS] = { 1, 2, 3, 4, 5, 6, 7, 8, 9,
						   10, 11, 12, 13, 14, 15, 16, 17, 18 };

static const smp_mesh rope_mesh = {
	.bitmap = "lfs_crate",
	.n_verts = 2 * B18_ROWS,
	.verts = rope_verts,
	.tverts = rope_tverts,
	.normals = rope_normals,
	.n_faces = 2 * (B18_ROWS - 1),
	.faces = rope_faces,
	.surface_id = 1,
	.diffuse = { 0.8f, 0.8f, 0.8f },
	.ambient = { 0.2f, 0.2f, 0.2f },
	.specular = { 0, 0, 0 },
	.shininess = 1,
	.weights = rope_weights,
	.bonerefs = rope_bonerefs,
	.n_bones = B18_ROWS,
	.bone_nodes = rope_bone_nodes,
};

static const float up_q[3] = { 0, 0, 0.25f };
static const smp_ctrl b18_first_ctrls[] = {
	{ SMP_CTRL_POSITION, 1, 3, t0, zero3 },
	{ SMP_CTRL_ORIENTATION, 1, 4, t0, ident_q },
};
static const smp_ctrl b18_next_ctrls[] = {
	{ SMP_CTRL_POSITION, 1, 3, t0, up_q },
	{ SMP_CTRL_ORIENTATION, 1, 4, t0, ident_q },
};
#define B18_BONE(name, k) { name, k, SMP_DUMMY, NULL, 2, (k) ? b18_next_ctrls : b18_first_ctrls }
static const smp_node skin18_nodes[] = {
	{ "skin18bone", -1, SMP_DUMMY, NULL, 0, NULL },
	B18_BONE("b00", 0), B18_BONE("b01", 1), B18_BONE("b02", 2), B18_BONE("b03", 3),
	B18_BONE("b04", 4), B18_BONE("b05", 5), B18_BONE("b06", 6), B18_BONE("b07", 7),
	B18_BONE("b08", 8), B18_BONE("b09", 9), B18_BONE("b10", 10), B18_BONE("b11", 11),
	B18_BONE("b12", 12), B18_BONE("b13", 13), B18_BONE("b14", 14), B18_BONE("b15", 15),
	B18_BONE("b16", 16), B18_BONE("b17", 17),
	{ "rope", 0, SMP_SKIN, &rope_mesh, 2, tube_ctrls },
};
#undef B18_BONE

const smp_model smp_models[] = {
	{ "box.mdl", "box", SMP_CLASS_OTHER, "NULL", 2, box_nodes, 1, box_anims },
	{ "skin2bone.mdl", "skin2bone", SMP_CLASS_CHARACTER, "NULL", 4, skin_nodes, 1, skin_anims },
	{ "skin18bone.mdl", "skin18bone", SMP_CLASS_CHARACTER, "NULL", 20, skin18_nodes, 0, NULL },
};
const size_t smp_n_models = sizeof smp_models / sizeof smp_models[0];
