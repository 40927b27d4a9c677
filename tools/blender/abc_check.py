# SPDX-License-Identifier: MIT OR Apache-2.0
"""Blender's reading of an Alembic mesh cache, printed as JSON for rigml's reader to be compared with.

Imports FILE.abc with Blender's Alembic importer (into an empty scene) and prints, for every mesh
object: its name, vertex, polygon and triangle counts, its polygons (vertex indices, in Blender's
counter-clockwise order), and its world-space vertex positions at each requested time (the
mesh-sequence-cache modifier evaluated through the depsgraph, times the object's world matrix, so
parent Xforms are applied). Also the scene frame range and rate the importer set.

Positions are Blender's: Z up. Blender's importer turns Alembic's Y-up data to Z-up (x, y, z) ->
(x, -z, y) and has no option to keep Y up; undo it as (x, y, z)_alembic = (bx, bz, -by).

Usage:
  .venv-bpy/bin/python tools/blender/abc_check.py FILE.abc --times 0.041667,8.333,16.667
The times are in seconds; each is evaluated at frame time * fps (with a subframe when between
frames). Exit status 1 if the import failed.
"""

import argparse
import json
import math
import sys

import bpy


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--times", default="", help="comma-separated times in seconds")
    args = ap.parse_args()
    times = [float(t) for t in args.times.split(",") if t.strip()]

    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.wm.alembic_import(filepath=args.file, as_background_job=False)
    if "FINISHED" not in result:
        print(json.dumps({"file": args.file, "error": f"alembic_import returned {sorted(result)}"}))
        return 1
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    meshes = [o for o in scene.objects if o.type == "MESH"]
    out = {
        "file": args.file,
        "blender": bpy.app.version_string,
        "fps": fps,
        "frame_start": scene.frame_start,
        "frame_end": scene.frame_end,
        "objects": [],
    }
    for o in meshes:
        out["objects"].append({"name": o.name, "frames": []})
    for t in times:
        frame = t * fps
        whole = math.floor(frame)
        scene.frame_set(whole, subframe=frame - whole)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for o, entry in zip(meshes, out["objects"]):
            evaluated = o.evaluated_get(depsgraph)
            mesh = evaluated.to_mesh()
            mesh.calc_loop_triangles()
            world = evaluated.matrix_world
            entry["vertices"] = len(mesh.vertices)
            entry["polygons"] = len(mesh.polygons)
            entry["triangles"] = len(mesh.loop_triangles)
            if "polygon_vertices" not in entry:
                entry["polygon_vertices"] = [list(p.vertices) for p in mesh.polygons]
            positions = [list(world @ v.co) for v in mesh.vertices]
            entry["frames"].append({"time": t, "frame": frame, "positions": positions})
            evaluated.to_mesh_clear()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
