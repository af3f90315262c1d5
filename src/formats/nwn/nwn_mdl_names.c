/**
 * @file nwn_mdl_names.c
 * Names of NWN node types, controllers and classifications.
 *
 * Controller ids and their ASCII keywords: [T "Controllers"], [N §3.1].
 * Ids collide across node types (88 = light radius = emitter birthrate), so
 * the node's flags select the table. Spelling follows the ASCII files written
 * by BioWare's exporter and by nwnmdlcomp (camel case for emitter keys, e.g.
 * "colorStart", "lifeExp").
 */
#include "nwn_mdl.h"
#include "nwn_mdl_layout.h"

#include <stddef.h>
#include <strings.h>

typedef struct ctrl_name {
	uint32_t id;
	const char *name;
} ctrl_name;

static const ctrl_name common_ctrls[] = {
	{ 8, "position" }, { 20, "orientation" }, { 36, "scale" },
};

static const ctrl_name mesh_ctrls[] = {
	{ 100, "selfillumcolor" }, { 128, "alpha" },
};

static const ctrl_name light_ctrls[] = {
	{ 76, "color" }, { 88, "radius" }, { 96, "shadowradius" },
	{ 100, "verticaldisplacement" }, { 140, "multiplier" },
};

/* "mid" ids follow the Torlack/nwnmdlcomp table ([N §3.1] lists the
 * conflict with cleanmodels' BioWare table; no corpus binary uses them). */
static const ctrl_name emitter_ctrls[] = {
	{ 80, "alphaEnd" }, { 84, "alphaStart" }, { 88, "birthrate" },
	{ 92, "bounce_co" }, { 96, "colorEnd" }, { 108, "colorStart" },
	{ 120, "combinetime" }, { 124, "drag" }, { 128, "fps" },
	{ 132, "frameEnd" }, { 136, "frameStart" }, { 140, "grav" },
	{ 144, "lifeExp" }, { 148, "mass" }, { 152, "p2p_bezier2" },
	{ 156, "p2p_bezier3" }, { 160, "particleRot" }, { 164, "randvel" },
	{ 168, "sizeStart" }, { 172, "sizeEnd" }, { 176, "sizeStart_y" },
	{ 180, "sizeEnd_y" }, { 184, "spread" }, { 188, "threshold" },
	{ 192, "velocity" }, { 196, "xsize" }, { 200, "ysize" },
	{ 204, "blurlength" }, { 208, "lightningDelay" }, { 212, "lightningRadius" },
	{ 216, "lightningScale" }, { 228, "detonate" }, { 464, "alphaMid" },
	{ 468, "colorMid" }, { 480, "percentStart" }, { 481, "percentMid" },
	{ 482, "percentEnd" }, { 484, "sizeMid" }, { 488, "sizeMid_y" },
};

#define N_(a) (sizeof(a) / sizeof((a)[0]))

static const ctrl_name *table_for(uint32_t flags, size_t *n)
{
	if (flags & NWN_HAS_LIGHT) {
		*n = N_(light_ctrls);
		return light_ctrls;
	}
	if (flags & NWN_HAS_EMITTER) {
		*n = N_(emitter_ctrls);
		return emitter_ctrls;
	}
	if (flags & NWN_HAS_MESH) {
		*n = N_(mesh_ctrls);
		return mesh_ctrls;
	}
	*n = 0;
	return NULL;
}

const char *nwn_controller_name(uint32_t flags, uint32_t type)
{
	for (size_t i = 0; i < N_(common_ctrls); i++)
		if (common_ctrls[i].id == type)
			return common_ctrls[i].name;
	size_t n;
	const ctrl_name *t = table_for(flags, &n);
	for (size_t i = 0; i < n; i++)
		if (t[i].id == type)
			return t[i].name;
	return NULL;
}

uint32_t nwn_controller_id(uint32_t flags, const char *name)
{
	for (size_t i = 0; i < N_(common_ctrls); i++)
		if (!strcasecmp(common_ctrls[i].name, name))
			return common_ctrls[i].id;
	size_t n;
	const ctrl_name *t = table_for(flags, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(t[i].name, name))
			return t[i].id;
	return 0;
}

const char *nwn_node_type_name(uint32_t flags)
{
	switch (flags) {
	case NWN_DUMMY: return "dummy";
	case NWN_LIGHT: return "light";
	case NWN_EMITTER: return "emitter";
	case NWN_REFERENCE: return "reference";
	case NWN_TRIMESH: return "trimesh";
	case NWN_SKIN: return "skin";
	case NWN_ANIMMESH: return "animmesh";
	case NWN_DANGLYMESH: return "danglymesh";
	case NWN_AABB: return "aabb";
	}
	return "dummy";
}

const char *nwn_classification_name(uint8_t c)
{
	switch (c) {
	case 0: return "unknown";
	case NWN_CLASS_EFFECT: return "effect";
	case NWN_CLASS_TILE: return "tile";
	case NWN_CLASS_CHARACTER: return "character";
	case NWN_CLASS_DOOR: return "door";
	}
	return NULL;
}

int32_t nwn_find_node(const nwn_geometry *g, const char *name)
{
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (!strcasecmp(g->nodes[i].name, name))
			return (int32_t)i;
	return -1;
}

uint32_t nwn_node_size(uint32_t flags)
{
	switch (flags) {
	case NWN_DUMMY: return NODE_HDR_SIZE;
	case NWN_LIGHT: return LIGHT_SIZE;
	case NWN_EMITTER: return EMITTER_SIZE;
	case NWN_REFERENCE: return REFERENCE_SIZE;
	case NWN_TRIMESH: return MESH_HDR_SIZE;
	case NWN_SKIN: return SKIN_SIZE;
	case NWN_ANIMMESH: return ANIMMESH_SIZE;
	case NWN_DANGLYMESH: return DANGLY_SIZE;
	case NWN_AABB: return AABB_NODE_SIZE;
	}
	return 0;
}
