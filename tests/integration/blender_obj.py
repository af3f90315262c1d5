# Blender side of blender_obj.sh, run as
#   blender -b --factory-startup --python blender_obj.py -- SRC DST [OBJECT VERTEX DX]
# Imports the OBJ SRC with the File menu's importer (bpy.ops.wm.obj_import,
# Blender 3.x's C++ one) and default settings, optionally moves vertex VERTEX
# of object OBJECT by DX along Blender's x axis (OBJ x: the default axis
# conversion, forward -Z / up Y, keeps x), and exports to DST with
# bpy.ops.wm.obj_export and default settings (which also writes DST's .mtl).
import sys

import bpy

args = sys.argv[sys.argv.index("--") + 1:]
src, dst = args[0], args[1]
bpy.ops.wm.read_factory_settings(use_empty=True)
res = bpy.ops.wm.obj_import(filepath=src)
if res != {"FINISHED"}:
    raise RuntimeError("import failed: %s" % res)
if len(args) >= 5:
    obj = bpy.data.objects[args[2]]
    obj.data.vertices[int(args[3])].co.x += float(args[4])
res = bpy.ops.wm.obj_export(filepath=dst)
if res != {"FINISHED"}:
    raise RuntimeError("export failed: %s" % res)
print("blender_obj: %s -> %s ok" % (src, dst))
