# SPDX-License-Identifier: MIT OR Apache-2.0
"""Blender as a client of rigml's GLBs: import each file with bpy and check it came in whole.

Checks per file (what rigml itself reads back from the file, `rigml inspect --json`, is the
expectation):
- import:     the glTF importer finished, no exception;
- no_warnings: nothing at WARNING/ERROR level in the importer's log or the operator's reports;
- vertices:   Blender's skinned mesh objects hold as many vertices as rigml's mesh;
- bones:      the armature(s) have one bone per rigml joint;
- weights:    every skinned object has vertex groups named after bones, and every vertex carries
              weight (glTF has no unskinned vertex in a skinned mesh: rigml writes its unskinned
              vertices as weight 1 on joint 0, listed in the primitive's extras, which Blender
              does not read);
- clips:      one action per rigml clip, found by name;
- attached:   as many meshes parented to bones as rigml has attachments, each on its joint;
- materials:  the skinned objects use as many materials as rigml's parts do, and when one of
              them has a texture, Blender loaded an image with pixels for it.
With FILE=SOURCE, `source_bbox`: the bounding box of FILE's posed mesh as Blender shows it after
import (first frame of the active action) equals SOURCE's within 1e-3 of SOURCE's longest side.

Usage:
  .venv-bpy/bin/python tools/blender/import_check.py out/Fox.glb out/rigml-demo.glb
  .venv-bpy/bin/python tools/blender/import_check.py --json out/stag.glb=../shared/data/.../Stag.glb
Exit status 1 if any check failed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import common  # noqa: E402

# The importer logs "HH:MM:SS | LEVEL: text"; operator reports print as "Warning: text".
BAD_LINE = re.compile(r"\|\s*(WARNING|ERROR|CRITICAL)\b|^(Warning|Error)\b", re.MULTILINE)


def inspect(rigml, path):
    proc = subprocess.run([rigml, "inspect", path, "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"rigml inspect failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def clip_action(name, actions):
    """The action Blender made of rigml clip `name`: the glTF importer names it after the clip
    (adding a suffix on clashes), the FBX importer `<armature>|<clip>`."""
    for a in actions:
        if a.name == name or a.name.startswith(name) or a.name.endswith("|" + name):
            return a
    return None


def play(action):
    """Make `action` the one every armature plays, at its first frame (so two imports of one
    character, a GLB and an FBX, are compared in the same pose)."""
    for ob in bpy.data.objects:
        if ob.type != "ARMATURE":
            continue
        if ob.animation_data is None:
            ob.animation_data_create()
        ob.animation_data.action = action
        slots = getattr(action, "slots", None)
        if slots and getattr(ob.animation_data, "action_slot", None) is None:
            ob.animation_data.action_slot = slots[0]
    bpy.context.scene.frame_start = int(round(action.frame_range[0]))


def shown_bbox(clip=None):
    """World bbox of the character's meshes as Blender shows them right after import: armature in
    Pose Position, the action the importer made active (or the one made of rigml clip `clip`), at
    the scene's first frame. (Blender's
    Rest Position is no common ground: edit bones hold no scale, so a file whose root joint's rest
    transform carries a scale, as rigml writes non-joint ancestors baked into the root, shows a
    different rest position from its source, though both pose the same.)"""
    scene = bpy.context.scene
    action = clip_action(clip, bpy.data.actions) if clip else None
    if action is not None:
        play(action)
    scene.frame_set(scene.frame_start)
    bpy.context.view_layer.update()
    graph = bpy.context.evaluated_depsgraph_get()
    pts = []
    for ob in common.character_meshes():
        ev = ob.evaluated_get(graph)
        me = ev.to_mesh()
        co = np.empty(len(me.vertices) * 3)
        me.vertices.foreach_get("co", co)
        m = np.array(ev.matrix_world)
        pts.append(co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3])
        ev.to_mesh_clear()
    p = np.concatenate(pts) if pts else np.zeros((1, 3))
    return p.min(axis=0), p.max(axis=0)


def check_file(path, rigml):
    checks = {}
    expect = inspect(rigml, path)
    common.reset_scene()
    try:
        result, log = common.import_file(path)
    except Exception as e:  # the importer raised: that is the finding
        return expect, {"import": f"exception: {e}"}, ""
    checks["import"] = "ok" if "FINISHED" in result else f"returned {sorted(result)}"
    bad = [m.group(0) + line_rest(log, m.end()) for m in BAD_LINE.finditer(log)]
    checks["no_warnings"] = "ok" if not bad else "; ".join(bad[:5])

    meshes = common.character_meshes()
    armatures = [ob for ob in bpy.data.objects if ob.type == "ARMATURE"]
    n = sum(len(ob.data.vertices) for ob in meshes)
    want_n = expect["mesh"]["vertices"]
    checks["vertices"] = "ok" if n == want_n else f"Blender {n}, rigml {want_n}"
    bones = sum(len(a.data.bones) for a in armatures)
    want_j = expect["skeleton"]["joints"]
    checks["bones"] = "ok" if bones == want_j else f"Blender {bones} bones, rigml {want_j} joints"

    if expect.get("skin"):
        bone_names = {b.name for a in armatures for b in a.data.bones}
        problems = []
        weighted = 0
        for ob in meshes:
            if not ob.vertex_groups:
                problems.append(f"{ob.name}: no vertex groups")
                continue
            stray = [vg.name for vg in ob.vertex_groups if vg.name not in bone_names]
            if stray:
                problems.append(f"{ob.name}: groups without a bone: {stray[:3]}")
            weighted += sum(1 for v in ob.data.vertices if any(g.weight > 0.0 for g in v.groups))
        if weighted != want_n:
            problems.append(
                f"{weighted} of {want_n} vertices carry weight (rigml reads {expect['skin']['unskinned']} as unskinned)"
            )
        checks["weights"] = "ok" if not problems else "; ".join(problems)

    checks["materials"] = check_materials(meshes, expect["mesh"])
    attached = sorted(bone for _, bone in common.attached_meshes())
    want = sorted(a["joint"] for a in expect.get("attachments", []))
    checks["attached"] = "ok" if attached == want else f"Blender {attached}, rigml {want}"


    clips = [c["name"] for c in expect["clips"]]
    actions = [a.name for a in bpy.data.actions]
    missing = [c for c in clips if clip_action(c, bpy.data.actions) is None]
    if len(actions) < len(clips) or missing:
        checks["clips"] = f"{len(actions)} actions for {len(clips)} clips; missing {missing[:5]}"
    else:
        checks["clips"] = "ok"
    return expect, checks, log


def check_materials(meshes, mesh):
    used = sorted({p["material"] for p in mesh["parts"] if p.get("material") is not None})
    mats = {slot.material.as_pointer(): slot.material for ob in meshes for slot in ob.material_slots if slot.material}
    if len(mats) != len(used):
        return f"Blender {len(mats)} materials, rigml {len(used)}"
    if any(mesh["materials"][i]["textures"] > 0 for i in used):
        sizes = [
            tuple(n.image.size)
            for m in mats.values()
            if m.node_tree
            for n in m.node_tree.nodes
            if n.type == "TEX_IMAGE" and n.image
        ]
        if not any(w > 0 and h > 0 for w, h in sizes):
            return f"a texture, but Blender loaded no image with pixels ({sizes})"
    return "ok"


def line_rest(text, at):
    end = text.find("\n", at)
    return text[at : end if end >= 0 else len(text)].rstrip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="GLB[=SOURCE]")
    ap.add_argument("--rigml", default=common.default_rigml(), help="the rigml binary (expected counts)")
    ap.add_argument("--json", action="store_true", help="print one JSON list instead of text")
    args = ap.parse_args()

    results = []
    for spec in args.files:
        path, _, source = spec.partition("=")
        entry = {"file": path, "source": source or None}
        try:
            expect, checks, _ = check_file(path, args.rigml)
            if source and checks.get("import") == "ok":
                # Both in the pose of the file's first clip when it has one.
                clip = expect["clips"][0]["name"] if expect["clips"] else None
                lo, hi = shown_bbox(clip)
                common.reset_scene()
                common.import_file(source)
                slo, shi = shown_bbox(clip)
                size = float((shi - slo).max()) or 1.0
                err = float(max(np.abs(lo - slo).max(), np.abs(hi - shi).max())) / size
                entry["bbox"] = {"file": [lo.tolist(), hi.tolist()], "source": [slo.tolist(), shi.tolist()]}
                checks["source_bbox"] = "ok" if err <= 1e-3 else f"bbox differs from the source's by {err:.3g} of its size"
        except Exception as e:
            checks = {"run": f"{type(e).__name__}: {e}"}
            entry["traceback"] = traceback.format_exc()
        entry["checks"] = checks
        failing = {k: v for k, v in checks.items() if v != "ok"}
        entry["pass"] = not failing
        results.append(entry)
        if not args.json:
            status = "PASS" if entry["pass"] else "FAIL"
            print(f"{status} {path}")
            for k, v in checks.items():
                print(f"  {k}: {v}")
    if args.json:
        print(json.dumps(results, indent=1))
    failed = [r["file"] for r in results if not r["pass"]]
    if not args.json:
        print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
