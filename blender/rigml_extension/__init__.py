# SPDX-License-Identifier: MIT OR Apache-2.0
"""rigml in Blender: "Auto Weights (rigml)" for selected meshes and the active armature,
"Rig Mesh (rigml)" for a bare mesh, and a "rigml" tab in the 3D view's sidebar.

The rigml wheel bundled with the extension does the work (learned skin weights, bone heat,
geodesic voxel binding, auto-rigging); nothing is downloaded and no GPU is needed.
"""

from __future__ import annotations

import time

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, IntProperty

from . import bridge

METHOD_ITEMS = [
    ("learned", "Learned", "rigml's trained network (the default)"),
    ("heat", "Bone Heat", "Heat diffusion from the bones, as Blender's automatic weights"),
    ("voxel", "Geodesic Voxel", "Geodesic voxel binding, as Maya's: robust on meshes with holes and overlaps"),
    ("nearest", "Nearest Bone", "Distance to the bones, blended at the joints"),
]

TEMPLATE_ITEMS = [
    ("detect", "Detect", "Humanoid landmarks when the mesh is a standing humanoid (with the conventions of "
     "like-shaped training humanoids' rigs), else a stored artist's rig of a like-shaped training character, "
     "else the general template"),
    ("humanoid", "Humanoid", "Mixamo-named humanoid skeleton (retargetable)"),
    ("auto", "Any Shape", "A curve skeleton of any shape, pruned by the learned placer"),
]


def _rigml():
    """The bundled rigml package (imported on use, so that a broken install is reported)."""
    import rigml

    return rigml


class RIGML_OT_auto_weights(bpy.types.Operator):
    """Compute skin weights for the selected meshes from the active armature's deforming bones"""

    bl_idname = "rigml.auto_weights"
    bl_label = "Auto Weights (rigml)"
    bl_options = {"REGISTER", "UNDO"}

    method: EnumProperty(name="Method", items=METHOD_ITEMS, default="learned")
    max_influences: IntProperty(name="Max Influences", default=4, min=1, max=16)
    selected_bones_only: BoolProperty(
        name="Selected Bones Only",
        description="Weight only the selected bones; the others keep their weights",
        default=False,
    )
    respect_locked: BoolProperty(
        name="Respect Locked Groups",
        description="Vertex groups with their lock on keep their weights; the others share what is left",
        default=True,
    )
    use_tails: BoolProperty(
        name="Use Bone Tails",
        description="Bones run from head to tail as Blender draws them (off: from each joint to its "
        "children's heads, as rigml does for files without tails)",
        default=True,
    )

    def execute(self, context):
        started = time.perf_counter()
        try:
            job = bridge.gather(context, self.selected_bones_only, self.respect_locked)
            rigml = _rigml()
            skeleton = rigml.Skeleton(
                names=job.bone_names,
                parents=job.parents,
                positions=job.heads,
                tails=job.tails if self.use_tails else None,
            )
            wm = context.window_manager
            wm.progress_begin(0, 100)
            try:
                result = rigml.skin_weights(
                    job.vertices,
                    job.triangles,
                    skeleton,
                    method=self.method,
                    max_influences=self.max_influences,
                    locked=job.locked if any(job.locked) else None,
                    existing=job.existing,
                    progress=lambda stage, fraction: wm.progress_update(int(fraction * 100)),
                )
            finally:
                wm.progress_end()
        except (bridge.InputError, ValueError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        bridge.write_weights(job, result.joints, result.weights, result.solved_joints)
        seconds = time.perf_counter() - started
        solved = sum(result.solved_joints)
        message = (
            f"rigml {result.method}: {len(job.vertices)} vertices of {len(job.parts)} mesh(es), "
            f"{solved} bones weighted in {seconds:.2f} s ({result.seconds:.2f} s solving), "
            f"{result.unweighted} vertices unweighted"
        )
        if result.over_cap:
            message += f"; {result.over_cap} vertices keep more than {self.max_influences} influences (locked)"
        self.report({"WARNING"} if result.unweighted else {"INFO"}, message)
        return {"FINISHED"}


class RIGML_OT_rig_mesh(bpy.types.Operator):
    """Place a skeleton in the active mesh, make it an armature and weight the mesh to it"""

    bl_idname = "rigml.rig_mesh"
    bl_label = "Rig Mesh (rigml)"
    bl_options = {"REGISTER", "UNDO"}

    template: EnumProperty(name="Template", items=TEMPLATE_ITEMS, default="detect")
    method: EnumProperty(name="Method", items=METHOD_ITEMS, default="learned")
    max_influences: IntProperty(name="Max Influences", default=4, min=1, max=16)

    def execute(self, context):
        obj = context.active_object
        if obj is None or obj.type != "MESH":
            self.report({"ERROR"}, "rigml: make a mesh object active to rig it")
            return {"CANCELLED"}
        started = time.perf_counter()
        try:
            vertices, triangles = bridge.mesh_arrays(obj)
            if len(triangles) == 0:
                raise bridge.InputError(f"rigml: mesh '{obj.name}' has no faces")
            rigml = _rigml()
            rigged, template = rigml.rig(
                vertices @ bridge.TO_RIGML.T,
                triangles,
                template=self.template,
                method=self.method,
                max_influences=self.max_influences,
                name=obj.name,
            )
        except (bridge.InputError, ValueError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        armature = make_armature(context, obj, rigged)
        job = bridge.Job(
            armature=armature,
            parts=[bridge.MeshPart(obj, 0, len(vertices))],
            vertices=vertices,
            triangles=triangles,
            bone_names=list(rigged.joint_names),
            parents=[int(p) for p in rigged.parents],
            heads=rigged.joint_positions,
            tails=rigged.joint_positions,
        )
        joints, weights = rigged.weights
        bridge.write_weights(job, joints, weights, [True] * len(job.bone_names))
        # The mesh follows its new armature (which sits at the world origin, so the mesh keeps
        # its place).
        world = obj.matrix_world.copy()
        obj.parent = armature
        obj.matrix_world = world
        self.report(
            {"INFO"},
            f"rigml: {len(job.bone_names)} bones placed ({template}) and {len(vertices)} vertices weighted "
            f"in {time.perf_counter() - started:.2f} s",
        )
        return {"FINISHED"}


def make_armature(context, obj, rigged):
    """An armature object at the world origin with one bone per rigml joint (head at the joint,
    tail toward its children or continuing its parent), linked beside ``obj``."""
    heads = np.asarray(rigged.joint_positions, np.float64) @ bridge.FROM_RIGML.T
    parents = [int(p) for p in rigged.parents]
    names = list(rigged.joint_names)
    size = float(np.ptp(heads, axis=0).max()) if len(heads) > 1 else 1.0
    min_length = max(size, 1e-3) * 0.02
    children = [[] for _ in names]
    for j, p in enumerate(parents):
        if p >= 0:
            children[p].append(j)
    data = bpy.data.armatures.new(f"{obj.name}_rig")
    armature = bpy.data.objects.new(f"{obj.name}_rig", data)
    for collection in obj.users_collection:
        collection.objects.link(armature)
    previous = context.view_layer.objects.active
    context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        edit = data.edit_bones
        made = []
        for j, name in enumerate(names):
            bone = edit.new(name)
            head = heads[j]
            if children[j]:
                tail = heads[children[j]].mean(axis=0)
            elif parents[j] >= 0:
                tail = head + (head - heads[parents[j]]) * 0.5
            else:
                tail = head + np.array([0.0, 0.0, min_length])
            if np.linalg.norm(tail - head) < min_length:
                # Blender deletes zero-length bones on leaving edit mode.
                tail = head + np.array([0.0, 0.0, min_length])
            bone.head = head
            bone.tail = tail
            made.append(bone)
        for j, p in enumerate(parents):
            if p >= 0:
                made[j].parent = made[p]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        context.view_layer.objects.active = previous
    return armature


class RIGML_PT_sidebar(bpy.types.Panel):
    """The rigml tab in the 3D view's sidebar (N)."""

    bl_label = "rigml"
    bl_idname = "RIGML_PT_sidebar"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "rigml"

    def draw(self, context):
        layout = self.layout
        layout.label(text="Selected meshes, then the armature:")
        layout.operator(RIGML_OT_auto_weights.bl_idname, icon="MOD_VERTEX_WEIGHT")
        layout.separator()
        layout.label(text="A bare mesh:")
        layout.operator(RIGML_OT_rig_mesh.bl_idname, icon="ARMATURE_DATA")


CLASSES = (RIGML_OT_auto_weights, RIGML_OT_rig_mesh, RIGML_PT_sidebar)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
