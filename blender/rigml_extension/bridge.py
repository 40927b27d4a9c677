# SPDX-License-Identifier: MIT OR Apache-2.0
"""Blender data <-> rigml arrays: what the operators read from the scene and write back.

Everything goes through world space: mesh vertices (``matrix_world @ co``, so unapplied object
scale and rotation are taken into account) and the armature's bones (``matrix_world @
head_local / tail_local``). rigml works in glTF axes (Y up); Blender's Z-up world is turned
into them on the way in, ``(x, y, z) -> (x, z, -y)``, and back on the way out. Arrays are read
with ``foreach_get`` and weights written through a bmesh deform layer, never one Python call per
vertex and group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bmesh
import numpy as np

# Blender world (Z up) -> rigml / glTF (Y up) and back.
TO_RIGML = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
FROM_RIGML = TO_RIGML.T


class InputError(Exception):
    """Input the operators cannot work on; the message is shown to the user as is."""


@dataclass
class MeshPart:
    """One selected mesh object's share of the vertex soup."""

    obj: object
    start: int
    count: int


@dataclass
class Job:
    """A skinning job gathered from the scene."""

    armature: object
    parts: list[MeshPart]
    vertices: np.ndarray  # (N, 3) float64, rigml axes
    triangles: np.ndarray  # (M, 3) int64
    bone_names: list[str]
    parents: list[int]
    heads: np.ndarray  # (J, 3) rigml axes
    tails: np.ndarray  # (J, 3) rigml axes
    locked: list[bool] = field(default_factory=list)
    existing: tuple[np.ndarray, np.ndarray] | None = None


def world_points(matrix, points: np.ndarray) -> np.ndarray:
    """``matrix @ p`` for each row of ``points`` (N, 3), a 4x4 Blender matrix."""
    m = np.array(matrix, dtype=np.float64)
    return points @ m[:3, :3].T + m[:3, 3]


def mesh_arrays(obj) -> tuple[np.ndarray, np.ndarray]:
    """World-space vertices (N, 3) and triangles (M, 3) of a mesh object's base mesh (its
    modifiers are not applied: the weights belong to the base mesh's vertices)."""
    if obj.mode == "EDIT":
        obj.update_from_editmode()
    me = obj.data
    co = np.empty(len(me.vertices) * 3, np.float64)
    me.vertices.foreach_get("co", co)
    me.calc_loop_triangles()
    tris = np.empty(len(me.loop_triangles) * 3, np.int64)
    me.loop_triangles.foreach_get("vertices", tris)
    return world_points(obj.matrix_world, co.reshape(-1, 3)), tris.reshape(-1, 3)


def deform_bones(armature) -> tuple[list, list[int]]:
    """The armature's deforming bones and, for each, the index of its nearest deforming
    ancestor (-1 for none)."""
    bones = [b for b in armature.data.bones if b.use_deform]
    index = {b.name: i for i, b in enumerate(bones)}
    parents = []
    for b in bones:
        p = b.parent
        while p is not None and p.name not in index:
            p = p.parent
        parents.append(-1 if p is None else index[p.name])
    return bones, parents


def gather(context, selected_bones_only: bool, respect_locked: bool) -> Job:
    """The selected meshes and the active armature as one rigml job, or :class:`InputError`."""
    armature = context.active_object
    if armature is None or armature.type != "ARMATURE":
        armatures = [o for o in context.selected_objects if o.type == "ARMATURE"]
        if len(armatures) != 1:
            raise InputError(
                "rigml: select the mesh(es), then the armature last (active); "
                + ("no armature is selected" if not armatures else f"{len(armatures)} armatures are selected")
            )
        armature = armatures[0]
    others = [o for o in context.selected_objects if o.type not in ("MESH", "ARMATURE")]
    if others:
        names = ", ".join(f"'{o.name}' ({o.type.lower()})" for o in others)
        raise InputError(f"rigml: only meshes can be weighted; deselect {names}")
    meshes = [o for o in context.selected_objects if o.type == "MESH"]
    if not meshes:
        raise InputError("rigml: no mesh is selected (select the mesh(es), then the armature)")
    bones, parents = deform_bones(armature)
    if not bones:
        raise InputError(f"rigml: armature '{armature.name}' has no deforming bone")

    parts, vertex_blocks, triangle_blocks, start = [], [], [], 0
    for obj in meshes:
        v, t = mesh_arrays(obj)
        if len(v) == 0:
            raise InputError(f"rigml: mesh '{obj.name}' has no vertices")
        parts.append(MeshPart(obj, start, len(v)))
        vertex_blocks.append(v)
        triangle_blocks.append(t + start)
        start += len(v)
    vertices = np.concatenate(vertex_blocks) @ TO_RIGML.T
    triangles = np.concatenate(triangle_blocks) if triangle_blocks else np.zeros((0, 3), np.int64)
    heads = world_points(armature.matrix_world, np.array([b.head_local for b in bones], np.float64))
    tails = world_points(armature.matrix_world, np.array([b.tail_local for b in bones], np.float64))
    job = Job(
        armature=armature,
        parts=parts,
        vertices=vertices,
        triangles=triangles,
        bone_names=[b.name for b in bones],
        parents=parents,
        heads=heads @ TO_RIGML.T,
        tails=tails @ TO_RIGML.T,
    )

    locked = [False] * len(bones)
    if respect_locked:
        for part in parts:
            for group in part.obj.vertex_groups:
                if group.lock_weight and group.name in job.bone_names:
                    locked[job.bone_names.index(group.name)] = True
    if selected_bones_only:
        selected = [b.select for b in bones]
        if not any(selected):
            raise InputError("rigml: 'Selected Bones Only' is on but no deforming bone is selected")
        locked = [lock or not sel for lock, sel in zip(locked, selected)]
    if all(locked):
        raise InputError("rigml: every deforming bone is locked (or unselected): nothing to weight")
    job.locked = locked
    if any(locked):
        job.existing = existing_weights(job, [n for n, lock in zip(job.bone_names, locked) if lock])
    return job


def existing_weights(job: Job, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The current weights of the groups ``names`` as padded (N, K) joint / weight arrays.

    Read through bmesh's deform layer (one dict per vertex, no RNA lookups per group) and
    scattered into the arrays with numpy."""
    wanted = set(names)
    vertex_ids: list[int] = []
    joint_ids: list[int] = []
    values: list[float] = []
    counts = np.zeros(sum(part.count for part in job.parts), np.int64)
    for part in job.parts:
        obj = part.obj
        joint_of_group = {g.index: job.bone_names.index(g.name) for g in obj.vertex_groups if g.name in wanted}
        if not joint_of_group:
            continue
        bm = bmesh.new()
        try:
            bm.from_mesh(obj.data)
            layer = bm.verts.layers.deform.active
            if layer is None:
                continue
            for v, vert in enumerate(bm.verts):
                for g, w in vert[layer].items():
                    j = joint_of_group.get(g)
                    if j is not None and w > 0:
                        vertex_ids.append(part.start + v)
                        joint_ids.append(j)
                        values.append(w)
        finally:
            bm.free()
    rows = np.asarray(vertex_ids, np.int64)
    np.add.at(counts, rows, 1)
    width = int(max(counts.max(initial=0), 1))
    joints = np.full((len(counts), width), -1, np.int64)
    weights = np.zeros((len(counts), width), np.float32)
    if len(rows):
        # The slot of each entry within its vertex's row (entries of one vertex are consecutive).
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        slots = np.arange(len(rows)) - starts[rows]
        joints[rows, slots] = joint_ids
        weights[rows, slots] = values
    return joints, weights


def write_weights(job: Job, joints: np.ndarray, weights: np.ndarray, solved: list[bool]) -> None:
    """Replace the vertex groups of the solved bones with the new weights (creating the groups
    that are missing); other groups, locked ones included, are left as they are. Adds an
    Armature modifier for the armature where a mesh has none."""
    for part in job.parts:
        obj = part.obj
        group_of_joint = {}
        for j, name in enumerate(job.bone_names):
            if solved[j]:
                group = obj.vertex_groups.get(name) or obj.vertex_groups.new(name=name)
                group_of_joint[j] = group.index
        solved_groups = set(group_of_joint.values())
        rows_j = joints[part.start : part.start + part.count]
        rows_w = weights[part.start : part.start + part.count]
        bm = bmesh.new()
        try:
            bm.from_mesh(obj.data)
            layer = bm.verts.layers.deform.verify()
            bm.verts.ensure_lookup_table()
            for v, vert in enumerate(bm.verts):
                d = vert[layer]
                for g in [g for g in d.keys() if g in solved_groups]:
                    del d[g]
                for j, w in zip(rows_j[v], rows_w[v]):
                    if j >= 0 and w > 0.0 and j in group_of_joint:
                        d[group_of_joint[int(j)]] = float(w)
            bm.to_mesh(obj.data)
        finally:
            bm.free()
        obj.data.update()
        if not any(m.type == "ARMATURE" and m.object == job.armature for m in obj.modifiers):
            modifier = obj.modifiers.new(name="Armature", type="ARMATURE")
            modifier.object = job.armature
