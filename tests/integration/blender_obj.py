# Blender side of blender_obj.sh, run as
#   blender -b --factory-startup --python blender_obj.py -- SRC DST [OBJECT VERTEX DX]
#   blender -b --factory-startup --python blender_obj.py -- SRC DST --delete-face OBJECT FACE
# Imports the OBJ SRC with the File menu's importer (bpy.ops.wm.obj_import,
# Blender 3.x's C++ one) and default settings, optionally moves vertex VERTEX
# of object OBJECT by DX along Blender's x axis (OBJ x: the default axis
# conversion, forward -Z / up Y, keeps x) or deletes face FACE (0-based, the
# OBJ's order) of OBJECT as Delete > Faces does (bmesh.ops.delete, context
# FACES: edges and vertices left without a face go too), and exports to DST
# with bpy.ops.wm.obj_export and default settings (which also writes DST's
# .mtl).
import sys

import bmesh
import bpy

args = sys.argv[sys.argv.index("--") + 1:]
src, dst = args[0], args[1]
bpy.ops.wm.read_factory_settings(use_empty=True)
res = bpy.ops.wm.obj_import(filepath=src)
if res != {"FINISHED"}:
    raise RuntimeError("import failed: %s" % res)
if len(args) >= 5 and args[2] == "--delete-face":
    me = bpy.data.objects[args[3]].data
    bm = bmesh.new()
    bm.from_mesh(me)
    bm.faces.ensure_lookup_table()
    nf = len(bm.faces)
    bmesh.ops.delete(bm, geom=[bm.faces[int(args[4])]], context="FACES")
    bm.to_mesh(me)
    bm.free()
    print("blender_obj: %s: %d -> %d faces, %d vertices" % (args[3], nf, len(me.polygons), len(me.vertices)))
elif len(args) >= 5:
    obj = bpy.data.objects[args[2]]
    obj.data.vertices[int(args[3])].co.x += float(args[4])
res = bpy.ops.wm.obj_export(filepath=dst)
if res != {"FINISHED"}:
    raise RuntimeError("export failed: %s" % res)
print("blender_obj: %s -> %s ok" % (src, dst))
