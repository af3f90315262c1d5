/**
 * @file nwn_mdl_layout.h
 * Private to the NWN codec (nwn_mdl_decode.c, nwn_mdl_encode.c): structure
 * sizes in bytes from Torlack's "NWN Binary Model Files Basics" [T] (key
 * in nwn_mdl.h) with the AABB entry corrected to 40 bytes
 * (docs/formats/nwn-binary.md), and the raw-data NULL pointer.
 */
#ifndef LFS_NWN_MDL_LAYOUT_H
#define LFS_NWN_MDL_LAYOUT_H

#define RAW_NULL 0xFFFFFFFFu

#define GEOM_HDR_SIZE 0x70
#define MODEL_HDR_SIZE 0xE8
#define ANIM_HDR_SIZE 0xC4
#define EVENT_SIZE 0x24
#define NODE_HDR_SIZE 0x70
#define CTRL_KEY_SIZE 12
#define MESH_HDR_SIZE 0x270
#define SKIN_SIZE 0x2D4
#define DANGLY_SIZE 0x288
#define AABB_NODE_SIZE 0x274
#define ANIMMESH_SIZE 0x2A8
#define LIGHT_SIZE 0xCC
#define EMITTER_SIZE 0x148
#define REFERENCE_SIZE 0xB4
#define FACE_SIZE 32
#define AABB_ENTRY_SIZE 40

#endif
