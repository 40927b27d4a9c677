# SPDX-License-Identifier: MIT OR Apache-2.0
"""Blender's automatic weights (bone heat) on manifest characters, exported for `rigml eval`.

For each character of the split: import the file (glTF or FBX) with bpy, strip the artists'
vertex groups and armature modifiers, parent the meshes to their armature "With Automatic
Weights" (timed alone), and write the weights in rigml's vertex order (METRICS.md §1) to
OUT/<asset id>.npz (`weights` float32 N x J, `joint_names`), the format
`rigml eval --weights-from blender=OUT` reads. OUT/timings.csv gets one row per asset.

Usage (from the repository root, after building rigml):
  .venv-bpy/bin/python tools/blender/auto_weights.py --manifest ../shared/data --split val --out bpy-val/
  target/release/rigml eval --split val --methods heat,voxel,nearest --weights-from blender=bpy-val/ -o report/

Vertex order: rigml's order and bind positions come from `rigml convert FILE x.obj`. Blender's
vertices are taken in object order; a Blender object must match a run of consecutive rigml parts
vertex for vertex (positions equal within 1e-4 of the longest bbox side after undoing Blender's
Z-up axis change); if that fails, each rigml vertex takes its nearest Blender vertex and the
timings row says "nearest" with the worst distance.

Deform bones: the bones that the file's own skin used (the imported vertex groups' names, plus
the bones rigid parts hang from); other bones are set not to deform, as Blender only weights
deform bones. Weights are written as Blender stores them, except each row is divided by its sum
(Blender's armature modifier does the same when it deforms) unless --raw is given; the largest
|sum - 1| before that is in timings.csv.
"""

import argparse
import csv
import io
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import common  # noqa: E402

HEAT_FAILED = "Bone Heat Weighting: failed to find solution"

FIELDS = [
    "id",
    "format",
    "vertices",
    "blender_vertices",
    "objects",
    "armatures",
    "deform_bones",
    "vertex_map",
    "map_max_err",
    "axis",
    "import_s",
    "weight_s",
    "heat_failed",
    "unweighted",
    "max_sum_dev",
    "status",
    "message",
]


def armature_of(ob, armatures):
    for m in ob.modifiers:
        if m.type == "ARMATURE" and m.object is not None:
            return m.object
    if ob.parent is not None and ob.parent.type == "ARMATURE":
        return ob.parent
    return armatures[0] if len(armatures) == 1 else None


def merge_by_distance(ob, relative=1e-6):
    """Blender's "Merge by Distance" on one mesh (what users do to glTF imports, whose vertices
    are split at UV seams), with a distance of `relative` x the mesh's longest bbox side.
    Returns, for each vertex before the merge, its index after it."""
    import bmesh

    bm = bmesh.new()
    try:
        bm.from_mesh(ob.data)
        bm.verts.ensure_lookup_table()
        co = np.array([v.co[:] for v in bm.verts]) if bm.verts else np.zeros((1, 3))
        size = float((co.max(axis=0) - co.min(axis=0)).max()) or 1.0
        layer = bm.verts.layers.int.new("rigml_before_merge")
        for v in bm.verts:
            v[layer] = v.index
        n = len(bm.verts)
        doubles = bmesh.ops.find_doubles(bm, verts=list(bm.verts), dist=relative * size)["targetmap"]
        target = np.arange(n)
        for v, t in doubles.items():
            target[v.index] = t.index
        bmesh.ops.weld_verts(bm, targetmap=doubles)
        bm.verts.index_update()
        after = np.full(n, -1, dtype=np.int64)
        for v in bm.verts:
            after[v[layer]] = v.index
        new_index = after[target]
        bm.verts.layers.int.remove(layer)
        bm.to_mesh(ob.data)
        ob.data.update()
        if (new_index < 0).any():
            raise RuntimeError(f"merge of {ob.name!r} lost track of a vertex")
        return new_index
    finally:
        bm.free()


def weigh(row, out_dir, args):
    rec = {k: "" for k in FIELDS}
    rec.update(id=row["id"], format=row["format"], status="error")
    ref_pos, ref_tris, ref_parts = common.reference_mesh(args.rigml, row["abs_path"])
    rec["vertices"] = len(ref_pos)

    common.reset_scene()
    t0 = time.perf_counter()
    result, log = common.import_file(row["abs_path"])
    rec["import_s"] = f"{time.perf_counter() - t0:.3f}"
    if "FINISHED" not in result:
        raise RuntimeError(f"import returned {result}: {log.strip()[-300:]}")

    meshes = common.character_meshes()
    armatures = [ob for ob in bpy.data.objects if ob.type == "ARMATURE"]
    rec["objects"] = len(meshes)
    rec["armatures"] = len(armatures)
    rec["blender_vertices"] = sum(len(ob.data.vertices) for ob in meshes)
    if not armatures:
        raise RuntimeError("Blender made no armature")
    mapping, how, err, axis = common.vertex_map(meshes, ref_pos, ref_tris, ref_parts)
    rec.update(vertex_map=how, map_max_err=f"{err:.2e}", axis=axis)
    if args.merge:
        # Map through the merge: rigml vertex -> Blender vertex before -> after.
        after = [merge_by_distance(ob) for ob in meshes]
        mapping = np.array([(k, after[k][i]) for k, i in mapping], dtype=np.int64).reshape(-1, 2)
        rec["blender_vertices"] = sum(len(ob.data.vertices) for ob in meshes)

    # Which armature each mesh belongs to, and the bones the file's skin used.
    groups = {}
    for ob in meshes:
        arm = armature_of(ob, armatures)
        if arm is None:
            raise RuntimeError(f"mesh {ob.name!r} has no armature and there are {len(armatures)}")
        groups.setdefault(arm.name, []).append(ob)
    deform = {}
    for arm_name, obs in groups.items():
        arm = bpy.data.objects[arm_name]
        bones = {b.name for b in arm.data.bones}
        used = {vg.name for ob in obs for vg in ob.vertex_groups if vg.name in bones}
        used |= {ob.parent_bone for ob in obs if ob.parent_type == "BONE" and ob.parent_bone in bones}
        deform[arm_name] = used or bones

    # Strip the artists' weights and bindings.
    for ob in meshes:
        ob.vertex_groups.clear()
        for m in [m for m in ob.modifiers if m.type == "ARMATURE"]:
            ob.modifiers.remove(m)
    for arm_name in groups:
        arm = bpy.data.objects[arm_name]
        arm.data.pose_position = "REST"
        for b in arm.data.bones:
            b.use_deform = b.name in deform[arm_name]
    rec["deform_bones"] = sum(len(d) for d in deform.values())

    # The weighting step alone, timed.
    seconds = 0.0
    logs = []
    for arm_name, obs in groups.items():
        arm = bpy.data.objects[arm_name]
        for ob in bpy.context.view_layer.objects:
            ob.select_set(False)
        for ob in obs + [arm]:
            ob.hide_set(False)
            ob.hide_viewport = False
            ob.select_set(True)
        bpy.context.view_layer.objects.active = arm
        with common.captured_stdio() as text:
            t0 = time.perf_counter()
            res = bpy.ops.object.parent_set(type="ARMATURE_AUTO", keep_transform=True)
            seconds += time.perf_counter() - t0
        logs.append(text[0])
        if "FINISHED" not in res:
            raise RuntimeError(f"parent_set returned {res}: {text[0].strip()[-300:]}")
    rec["weight_s"] = f"{seconds:.3f}"
    rec["heat_failed"] = int(any(HEAT_FAILED in t for t in logs))

    # Weights in rigml's vertex order; columns are the deform bones.
    names = sorted({n for d in deform.values() for n in d})
    column = {n: c for c, n in enumerate(names)}
    per_object = []
    for ob in meshes:
        index_name = {vg.index: vg.name for vg in ob.vertex_groups}
        w = np.zeros((len(ob.data.vertices), len(names)), dtype=np.float64)
        for v in ob.data.vertices:
            for g in v.groups:
                c = column.get(index_name.get(g.group, ""))
                if c is not None and g.weight > 0.0:
                    w[v.index, c] += g.weight
        per_object.append(w)
    weights = np.stack([per_object[k][i] for k, i in mapping]) if len(mapping) else np.zeros((0, len(names)))
    sums = weights.sum(axis=1)
    weighted = sums >= 1e-8
    rec["unweighted"] = int((~weighted).sum())
    rec["max_sum_dev"] = f"{float(np.abs(sums[weighted] - 1.0).max()) if weighted.any() else 0.0:.2e}"
    if not args.raw:
        weights[weighted] /= sums[weighted, None]
    common.save_npz(os.path.join(out_dir, f"{row['id']}.npz"), weights, names, args.force)
    rec["status"] = "ok"
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", help="manifest.tsv or the folder holding it")
    ap.add_argument("--files", nargs="+", default=[], help="character files instead of manifest rows (id = file stem)")
    ap.add_argument("--split", default="val", choices=["train", "val", "test", "all"])
    ap.add_argument("--ids", default="", help="comma-separated asset ids (default: every character of the split)")
    ap.add_argument("--out", required=True, help="folder for <asset id>.npz and timings.csv")
    ap.add_argument("--rigml", default=common.default_rigml(), help="the rigml binary (reference vertex order)")
    ap.add_argument(
        "--merge", action="store_true", help="merge each mesh's coincident vertices first (Merge by Distance)"
    )
    ap.add_argument("--raw", action="store_true", help="keep Blender's row sums (no renormalisation)")
    ap.add_argument("--force", action="store_true", help="replace existing output files")
    args = ap.parse_args()

    ids = {i for i in args.ids.split(",") if i} or None
    if args.files:
        rows = common.file_rows(args.files)
    elif args.manifest:
        rows = common.manifest_rows(args.manifest, split=args.split, ids=ids)
        if not rows:
            common.die(f"{args.manifest}: no glTF/FBX characters in split {args.split!r}")
    else:
        common.die("give --manifest or --files")
    os.makedirs(args.out, exist_ok=True)
    timings = os.path.join(args.out, "timings.csv")
    if os.path.exists(timings) and not args.force:
        common.die(f"{timings}: exists (use --force to replace it)")

    records = []
    for n, row in enumerate(rows, 1):
        try:
            rec = weigh(row, args.out, args)
        except Exception as e:  # one asset's failure is recorded, the rest go on
            rec = {k: "" for k in FIELDS}
            rec.update(id=row["id"], format=row["format"], status="error", message=str(e).replace("\n", " "))
        records.append(rec)
        print(
            f"[{n}/{len(rows)}] {rec['id']}: {rec['status']} weight {rec['weight_s']} s, "
            f"map {rec['vertex_map']} ({rec['map_max_err']}), unweighted {rec['unweighted']}, "
            f"heat failed {rec['heat_failed']} {rec['message']}",
            flush=True,
        )
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    tmp = timings + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(buf.getvalue())
    os.replace(tmp, timings)
    errors = [r["id"] for r in records if r["status"] != "ok"]
    print(f"wrote {len(records) - len(errors)} weight files and {timings}")
    if errors:
        print(f"error: no weights for {', '.join(errors)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
