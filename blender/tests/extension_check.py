# SPDX-License-Identifier: MIT OR Apache-2.0
"""The rigml extension in headless Blender (the `bpy` package), as a user would use it.

1. install: the extension zip installs into a fresh user folder (set BLENDER_USER_RESOURCES
   before starting) and `rigml.auto_weights` / `rigml.rig_mesh` are registered;
2. character: a character file imported with Blender's glTF importer, Auto Weights on all its
   meshes and its armature; the vertex groups must equal, within 1e-5, the weights `rigml skin`
   computes for the same mesh and bones as Blender holds them (saved to a GLB with
   `rigml.character`); `rigml skin` on the original file is compared too, for information;
3. locked: the same character with one group locked and one bone set not to deform: the locked
   group is untouched, the non-deforming bone gets no weight, every row still sums to 1;
4. transforms: a tube under a 3-bone armature, the armature turned and scaled 0.01 and the mesh
   with unapplied rotation and non-uniform scale: the vertex groups equal `rigml skin`'s weights
   for the world-space mesh and bones (within 1e-5), the same scene with every transform applied
   gives the same weights (within 1e-4: applying rounds the stored float32 coordinates), and each
   vertex's dominant bone is the bone whose span it lies in;
5. bad input: no armature, and a camera in the selection, are CANCELLED with an error report
   and change nothing;
6. rig mesh: Rig Mesh on the character's largest mesh makes an armature and weights every vertex.

Usage:
  BLENDER_USER_RESOURCES=$(mktemp -d) .venv-bpy/bin/python blender/tests/extension_check.py \\
      --zip target/blender/rigml-*.zip --character Ranger.glb --rigml target/debug/rigml
Prints one JSON object; exit status 1 when a check fails.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback

import bpy
import numpy as np

TOLERANCE = 1e-5


def clear_scene():
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    for collection in (bpy.data.meshes, bpy.data.armatures, bpy.data.materials, bpy.data.actions, bpy.data.images):
        for block in list(collection):
            if block.users == 0:
                collection.remove(block)


def import_gltf(path):
    clear_scene()
    bpy.ops.import_scene.gltf(filepath=path)
    meshes = [o for o in bpy.data.objects if o.type == "MESH" and any(m.type == "ARMATURE" for m in o.modifiers)]
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    return meshes, armatures[0]


def select(meshes, active):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in meshes:
        obj.select_set(True)
    if active is not None:
        active.select_set(True)
    bpy.context.view_layer.objects.active = active


def weights_by_position(meshes, bone_names):
    """Per vertex (all meshes, object order): world position (N, 3) and dense weights (N, J)
    over `bone_names` (groups of other names ignored)."""
    positions, rows = [], []
    col = {n: i for i, n in enumerate(bone_names)}
    for obj in meshes:
        m = np.array(obj.matrix_world)
        co = np.empty(len(obj.data.vertices) * 3)
        obj.data.vertices.foreach_get("co", co)
        positions.append(co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3])
        names = {g.index: g.name for g in obj.vertex_groups}
        dense = np.zeros((len(obj.data.vertices), len(bone_names)))
        for v in obj.data.vertices:
            for g in v.groups:
                name = names.get(g.group)
                if name in col:
                    dense[v.index, col[name]] = g.weight
        rows.append(dense)
    return np.concatenate(positions), np.concatenate(rows)


def match_rows(pos_a, pos_b, size):
    """For each row of pos_a, the index of the row of pos_b at the same place (within 1e-5 of
    the size), or -1."""
    from mathutils.kdtree import KDTree

    tree = KDTree(len(pos_b))
    for i, p in enumerate(pos_b):
        tree.insert(p, i)
    tree.balance()
    out = np.full(len(pos_a), -1)
    for i, p in enumerate(pos_a):
        _, j, d = tree.find(p)
        if d <= 1e-5 * size:
            out[i] = j
    return out


def run_auto_weights(**options):
    return bpy.ops.rigml.auto_weights(**options)


def dense_of(character, names):
    """A rigml character's weights as dense (N, len(names)) columns in `names`' order."""
    joints, weights = character.weights
    col = {n: names.index(n) for n in character.joint_names if n in names}
    index = [col.get(n, -1) for n in character.joint_names]
    out = np.zeros((joints.shape[0], len(names)))
    for slot in range(joints.shape[1]):
        for v in np.nonzero(joints[:, slot] >= 0)[0]:
            out[v, index[joints[v, slot]]] += weights[v, slot]
    return out


def check_character(args, report):
    import rigml
    from bl_ext.user_default.rigml import bridge

    meshes, arm = import_gltf(args.character)
    select(meshes, arm)
    # What Auto Weights will read (the extension's own gathering), saved as a file for `rigml skin`.
    job = bridge.gather(bpy.context, False, False)
    skeleton = rigml.Skeleton(names=job.bone_names, parents=job.parents, positions=job.heads)
    work = tempfile.mkdtemp()
    held = os.path.join(work, "as-blender-holds-it.glb")
    rigml.save(rigml.character(job.vertices, job.triangles, skeleton, name="held"), held)
    skinned = os.path.join(work, "rigml-skin.glb")
    subprocess.run([args.rigml, "skin", held, "--method", args.method, "-o", skinned], check=True, capture_output=True)
    expected = dense_of(rigml.load(skinned), job.bone_names)

    result = run_auto_weights(method=args.method, max_influences=4, use_tails=False)
    _, got = weights_by_position([p.obj for p in job.parts], job.bone_names)
    diff = np.abs(got - expected)
    report["character"] = {
        "result": sorted(result),
        "vertices": len(got),
        "max_abs_diff": float(diff.max()),
        "row_sum_err": float(np.abs(got.sum(axis=1) - 1).max()),
    }
    # For information: `rigml skin` on the original file, whose bones rigml reads itself. Blender's
    # importer rounds bone heads differently (~5e-7), which is enough to break ties between
    # mirrored joints (a 4th influence of ~0.002 left vs right), so this is reported, not checked.
    original = os.path.join(work, "original-skin.glb")
    subprocess.run([args.rigml, "skin", args.character, "--method", args.method, "-o", original], check=True, capture_output=True)
    other = rigml.load(original)
    pos, _ = weights_by_position([p.obj for p in job.parts], job.bone_names)
    other_pos = np.asarray(other.vertices, np.float64) @ bridge.FROM_RIGML.T
    match = match_rows(pos, other_pos, float(np.ptp(pos, axis=0).max()))
    via_file = dense_of(other, job.bone_names)
    d = np.abs(got[match >= 0] - via_file[match[match >= 0]])
    report["character"]["from_the_file"] = {
        "matched": int((match >= 0).sum()),
        "max_abs_diff": float(d.max()) if d.size else None,
        "rows_over_1e-5": int((d.max(axis=1) > TOLERANCE).sum()) if d.size else None,
    }
    c = report["character"]
    return result == {"FINISHED"} and c["max_abs_diff"] <= TOLERANCE and c["row_sum_err"] < 1e-4


def check_locked(args, report):
    meshes, arm = import_gltf(args.character)
    bones = [b.name for b in arm.data.bones]
    before_pos, before = weights_by_position(meshes, bones)
    heaviest = int(before.sum(axis=0).argmax())
    locked_name = bones[heaviest]
    for obj in meshes:
        group = obj.vertex_groups.get(locked_name)
        if group is not None:
            group.lock_weight = True
    # A bone that had weight stops deforming; its group is removed first, so any weight it
    # holds afterwards was written by the operator.
    weighted = [j for j in np.argsort(-before.sum(axis=0)) if j != heaviest]
    off = bones[int(weighted[0])]
    arm.data.bones[off].use_deform = False
    for obj in meshes:
        group = obj.vertex_groups.get(off)
        if group is not None:
            obj.vertex_groups.remove(group)
    select(meshes, arm)
    result = run_auto_weights(method=args.method, max_influences=4, respect_locked=True, use_tails=True)
    _, after = weights_by_position(meshes, bones)
    locked_diff = float(np.abs(after[:, heaviest] - before[:, heaviest]).max())
    others = [j for j in range(len(bones)) if arm.data.bones[bones[j]].use_deform]
    row_sum = after[:, others].sum(axis=1)
    report["locked"] = {
        "result": sorted(result),
        "locked_group": locked_name,
        "locked_max_change": locked_diff,
        "non_deform_bone": off,
        "non_deform_weight": float(after[:, bones.index(off)].max()),
        "row_sum_err": float(np.abs(row_sum - 1).max()),
    }
    r = report["locked"]
    return result == {"FINISHED"} and locked_diff == 0.0 and r["non_deform_weight"] == 0.0 and r["row_sum_err"] < 1e-4


def tube_scene(apply: bool):
    """A tube around a 3-bone chain; the armature turned 90 degrees about X and scaled 0.01,
    the mesh turned and scaled non-uniformly, both with transforms left unapplied (or applied)."""
    clear_scene()
    bpy.ops.mesh.primitive_cylinder_add(vertices=16, radius=20.0, depth=300.0, location=(0, 0, 0))
    tube = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=12)
    bpy.ops.object.mode_set(mode="OBJECT")
    # Put the tube's axis along world Y with a non-uniform scale left on the object.
    tube.scale = (0.01, 0.02, 0.01)
    tube.rotation_euler = (np.pi / 2, 0.0, 0.0)
    tube.data.transform(np.diag([1.0, 0.5, 1.0, 1.0]).tolist())
    data = bpy.data.armatures.new("chain")
    arm = bpy.data.objects.new("chain", data)
    bpy.context.scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    made = []
    for k in range(3):
        bone = data.edit_bones.new(f"bone{k}")
        # In armature space the chain runs along Z, 100 units per bone; the object's
        # rotation turns it onto the world's -Y axis and its scale makes it 1 unit long.
        bone.head = (0.0, 0.0, -150.0 + 100.0 * k)
        bone.tail = (0.0, 0.0, -50.0 + 100.0 * k)
        if made:
            bone.parent = made[-1]
            bone.use_connect = True
        made.append(bone)
    bpy.ops.object.mode_set(mode="OBJECT")
    arm.rotation_euler = (np.pi / 2, 0.0, 0.0)
    arm.scale = (0.01, 0.01, 0.01)
    bpy.context.view_layer.update()
    if apply:
        for obj in (tube, arm):
            select([obj], obj)
            bpy.ops.object.transform_apply(location=True, rotation=True, scale=True)
    return tube, arm


def rigml_skin_of_job(args, job, method):
    """`rigml skin` (the CLI) on the mesh and bones a job holds, saved with `rigml.character`:
    dense weights in the job's vertex and bone order."""
    import rigml

    work = tempfile.mkdtemp()
    held = os.path.join(work, "held.glb")
    skeleton = rigml.Skeleton(names=job.bone_names, parents=job.parents, positions=job.heads)
    rigml.save(rigml.character(job.vertices, job.triangles, skeleton, name="held"), held)
    skinned = os.path.join(work, "skinned.glb")
    subprocess.run([args.rigml, "skin", held, "--method", method, "-o", skinned], check=True, capture_output=True)
    return dense_of(rigml.load(skinned), job.bone_names)


def check_transforms(args, report):
    from bl_ext.user_default.rigml import bridge

    bones = ["bone0", "bone1", "bone2"]
    results = {}
    for apply in (False, True):
        tube, arm = tube_scene(apply)
        select([tube], arm)
        job = bridge.gather(bpy.context, False, False)
        expected = rigml_skin_of_job(args, job, "heat")
        first = run_auto_weights(method="heat", max_influences=4, use_tails=False)
        _, w = weights_by_position([tube], bones)
        error = float(np.abs(w - expected).max())
        # Again with the bones' own tails (the default), for the applied/unapplied comparison.
        result = run_auto_weights(method="heat", max_influences=4, use_tails=True)
        pos, w = weights_by_position([tube], bones)
        results[apply] = (pos, w, sorted(first | result), error)
    (pa, wa, ra, ea), (pb, wb, rb, eb) = results[False], results[True]
    match = match_rows(pa, pb, float(np.ptp(pa, axis=0).max()))
    diff = np.abs(wa[match >= 0] - wb[match[match >= 0]])
    # The dominant bone is the one along whose span the vertex lies (world -Y, 1 unit per bone).
    span = np.clip(np.floor(1.5 - pa[:, 1]).astype(int), 0, 2)
    out = {
        "results": [ra, rb],
        "vs_rigml_skin_max_abs_diff": [ea, eb],
        "matched": int((match >= 0).sum()),
        "vertices": len(pa),
        "applied_vs_unapplied_max_abs_diff": float(diff.max()),
        "dominant_on_own_span": float((wa.argmax(axis=1) == span).mean()),
    }
    report["transforms"] = out
    # Applying the transforms stores new float32 coordinates (rounded ~1e-7 relative), so the
    # two scenes' inputs differ slightly: their weights agree within 1e-4, not bit for bit.
    return (
        ra == rb == ["FINISHED"]
        and max(ea, eb) <= TOLERANCE
        and out["matched"] == out["vertices"]
        and out["applied_vs_unapplied_max_abs_diff"] <= 1e-4
        and out["dominant_on_own_span"] > 0.95
    )


def check_bad_input(args, report):
    tube, arm = tube_scene(False)
    out = {}
    select([tube], None)
    bpy.context.view_layer.objects.active = tube
    before = len(tube.vertex_groups)
    try:
        result = run_auto_weights(method="nearest")
        out["no_armature"] = sorted(result)
    except RuntimeError as e:  # an operator that reports ERROR raises in background mode
        out["no_armature"] = str(e).strip()
    bpy.ops.object.camera_add()
    camera = bpy.context.active_object
    select([tube, camera], arm)
    try:
        result = run_auto_weights(method="nearest")
        out["camera"] = sorted(result)
    except RuntimeError as e:
        out["camera"] = str(e).strip()
    out["groups_unchanged"] = len(tube.vertex_groups) == before
    report["bad_input"] = out
    return (
        "no armature" in str(out["no_armature"])
        and "camera" in str(out["camera"]).lower()
        and out["groups_unchanged"]
    )


def check_rig_mesh(args, report):
    meshes, arm = import_gltf(args.character)
    biggest = max(meshes, key=lambda o: len(o.data.vertices))
    for obj in meshes:
        obj.vertex_groups.clear()
    select([biggest], biggest)
    result = bpy.ops.rigml.rig_mesh(template="detect", method="learned")
    rigs = [o for o in bpy.data.objects if o.type == "ARMATURE" and o is not arm]
    bones = [b.name for b in rigs[0].data.bones] if rigs else []
    _, w = weights_by_position([biggest], bones)
    report["rig_mesh"] = {
        "result": sorted(result),
        "bones": len(bones),
        "unweighted": int((w.sum(axis=1) < 1e-6).sum()),
        "parent": biggest.parent.name if biggest.parent else None,
    }
    r = report["rig_mesh"]
    return result == {"FINISHED"} and r["bones"] > 3 and r["unweighted"] == 0 and rigs and r["parent"] == rigs[0].name


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zip", required=True)
    parser.add_argument("--character", required=True)
    parser.add_argument("--rigml", required=True, help="the rigml binary (for `rigml skin`)")
    parser.add_argument("--method", default="learned")
    args = parser.parse_args()
    report = {}
    passed = {}
    result = bpy.ops.extensions.package_install_files(filepath=args.zip, repo="user_default", enable_on_install=True)
    passed["install"] = result == {"FINISHED"} and hasattr(bpy.ops.rigml, "auto_weights")
    report["install"] = sorted(result)
    for name, check in [
        ("character", check_character),
        ("locked", check_locked),
        ("transforms", check_transforms),
        ("bad_input", check_bad_input),
        ("rig_mesh", check_rig_mesh),
    ]:
        if not passed["install"]:
            break
        try:
            passed[name] = bool(check(args, report))
        except Exception:
            report[name + "_error"] = traceback.format_exc()
            passed[name] = False
    report["passed"] = passed
    print(json.dumps(report, indent=1, default=str))
    sys.exit(0 if passed and all(passed.values()) else 1)


if __name__ == "__main__":
    main()
