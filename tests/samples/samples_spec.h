/**
 * @file samples_spec.h
 * The single source of truth for the project's own sample models.
 *
 * tests/samples/mksamples.c encodes these descriptions into NWN binary MDL
 * files (samples/box.mdl, samples/skin2bone.mdl) and the unit test
 * tests/unit/test_samples.c decodes the checked-in files and compares what the
 * decoder returns with these same descriptions. Both sides read the values
 * from here, so no number is hard-coded twice.
 *
 * Units: positions in metres, times in seconds, orientation key values are
 * quaternions (x, y, z, w) as stored in binary controller data
 * ([N §3.2], key in src/formats/nwn/nwn_mdl.h). All float literals are exactly
 * representable or written as the float32 value the writer stores, so the
 * files are identical on every machine.
 *
 * The constants below are taken from Torlack's "NWN Binary Model Files
 * Basics" on purpose instead of from src/formats/nwn_mdl.h, so a
 * wrong constant in the decoder's header is caught by the sample test.
 */
#ifndef LFS_SAMPLES_SPEC_H
#define LFS_SAMPLES_SPEC_H

#include <stddef.h>
#include <stdint.h>

/* Node type = flag combination [T "Model Routines and the Node types"]. */
#define SMP_DUMMY 0x001u
#define SMP_TRIMESH 0x021u
#define SMP_SKIN 0x061u

/* Controller ids [T "Controllers"]. */
#define SMP_CTRL_POSITION 8u
#define SMP_CTRL_ORIENTATION 20u

/** Classification byte [T "The Model Header"]; 0 = ASCII "other"/"item"/unknown. */
#define SMP_CLASS_OTHER 0x00u
#define SMP_CLASS_CHARACTER 0x04u

/** One controller: @p rows keys, @p cols values per key (without the time). */
typedef struct smp_ctrl {
	uint32_t type;        /**< SMP_CTRL_* */
	uint16_t rows;
	uint8_t cols;
	const float *times;   /**< rows times, seconds */
	const float *values;  /**< rows * cols values */
} smp_ctrl;

/** Mesh data of a trimesh or skin node, as the binary stores it (split vertices). */
typedef struct smp_mesh {
	const char *bitmap;       /**< texture0 resref */
	uint16_t n_verts;
	const float *verts;       /**< n_verts * 3 */
	const float *tverts;      /**< n_verts * 2 (texture channel 0) */
	const float *normals;     /**< n_verts * 3, unit length */
	uint32_t n_faces;
	const uint16_t *faces;    /**< n_faces * 3 vertex indices, counter-clockwise seen from outside */
	uint32_t surface_id;      /**< same for every face */
	float diffuse[3], ambient[3], specular[3], shininess;
	/* skin only (NULL/0 for a trimesh): */
	const float *weights;     /**< n_verts * 4 weight lanes, 0 on unused lanes */
	const int16_t *bonerefs;  /**< n_verts * 4 bone indices, -1 on unused lanes */
	uint8_t n_bones;
	const int16_t *bone_nodes;/**< bone index -> model node index (= part number) */
} smp_mesh;

/** A node. Lists of nodes are in depth-first pre-order; parent is an index into the list. */
typedef struct smp_node {
	const char *name;
	int32_t parent;           /**< -1 for the root */
	uint32_t flags;           /**< SMP_DUMMY, SMP_TRIMESH or SMP_SKIN */
	const smp_mesh *mesh;     /**< NULL for dummies */
	uint32_t n_ctrls;
	const smp_ctrl *ctrls;
} smp_node;

/** Animation event. */
typedef struct smp_event {
	float after;              /**< seconds from the start */
	const char *name;
} smp_event;

/** Animation: its own node list (dummies carrying keys); parts matched to the model by name. */
typedef struct smp_anim {
	const char *name;
	float length, trans_time; /**< seconds */
	const char *anim_root;
	uint32_t n_events;
	const smp_event *events;
	uint32_t n_nodes;
	const smp_node *nodes;
} smp_anim;

/** A sample model and the file name it is written to. */
typedef struct smp_model {
	const char *file;         /**< e.g. "box.mdl" */
	const char *name;         /**< model name (= resref) */
	uint8_t classification;
	const char *supermodel;   /**< "NULL" when none, as BioWare writes it */
	uint32_t n_nodes;
	const smp_node *nodes;
	uint32_t n_anims;
	const smp_anim *anims;
} smp_model;

/** All sample models. */
extern const smp_model smp_models[];
extern const size_t smp_n_models;

/** The texture written next to the box: 8x8, 32-bit BGRA, top-left origin. */
#define SMP_TGA_FILE "lfs_crate.tga"
#define SMP_TGA_SIZE 8

#endif
