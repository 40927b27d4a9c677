"""rigml: skin weights, auto-rigging and evaluation for 3D characters.

The same library as the ``rigml`` command line (Rust, no Python dependencies beyond numpy, the
learned models inside the wheel). Quick start::

    import rigml

    ranger = rigml.load("Ranger.glb")                        # glTF, FBX, OBJ, BVH, ...
    result = rigml.skin_weights(ranger.vertices, ranger.triangles, ranger.skeleton,
                                method="learned", max_influences=4)
    result.joints, result.weights                            # (N, K) int32 / float32

    rigged, template = rigml.rig(mesh_vertices, mesh_triangles)   # a bare mesh
    rigml.save(rigged, "rigged.glb")

Arrays of any float (or integer) dtype are accepted. Bad input raises ``ValueError`` with
rigml's message (``file: place: problem`` for files); the GIL is released while solvers run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

import numpy as np

from . import _rigml
from ._rigml import Cancel, Character, SkinResult

__all__ = [
    "Cancel",
    "Character",
    "Skeleton",
    "SkinResult",
    "load",
    "save",
    "skin_weights",
    "rig",
    "character",
    "evaluate",
    "METHODS",
    "TEMPLATES",
    "__version__",
]

__version__: str = _rigml.__version__
METHODS: tuple[str, ...] = tuple(_rigml.names()["methods"])
"""Skin methods: learned (the trained network), nearest, heat (Blender's automatic weights),
voxel (Maya's geodesic voxel binding)."""
TEMPLATES: tuple[str, ...] = tuple(_rigml.names()["templates"])
"""Skeleton templates for :func:`rig`: detect, humanoid, auto, curve, learned, library (the
skeleton model's stored rig of the most alike training character; detect uses it for shapes
that are not standing humanoids when they are alike enough, and carries alike humanoids' rigs
onto a standing humanoid's landmarks)."""


@dataclass
class Skeleton:
    """Joints for :func:`skin_weights`, in the mesh's space.

    ``names``: one per joint. ``parents``: each joint's parent index, -1 for a root (any order).
    ``positions``: (J, 3) joint (bone head) positions in the bind pose. ``tails``: optional (J, 3)
    bone tails (a Blender bone's tail; without them a joint's bone runs to its children).
    ``deform``: optional per-joint flags; a joint that does not deform (IK, pole and control
    bones, Rigify's non-``DEF-`` bones) gets no weight.
    """

    names: Sequence[str]
    parents: Sequence[int]
    positions: np.ndarray
    tails: Optional[np.ndarray] = None
    deform: Optional[Sequence[bool]] = None

    def index(self, name: str) -> int:
        """The index of the joint called ``name`` (``ValueError`` if there is none)."""
        try:
            return list(self.names).index(name)
        except ValueError:
            raise ValueError(f"no joint called {name!r}") from None


def _skeleton_of(character: Character) -> Skeleton:
    return Skeleton(
        names=character.joint_names,
        parents=[int(p) for p in character.parents],
        positions=character.joint_positions,
    )


Character.skeleton = property(  # type: ignore[attr-defined]
    _skeleton_of, doc="The character's joints as a :class:`Skeleton` (bind-pose positions)."
)


def load(path: Union[str, "os.PathLike[str]"]) -> Character:
    """Read a character file (.glb, .gltf, .vrm, .fbx, .obj, .bvh, RigNet, MakeHuman)."""
    return _rigml.load(path)


def save(character: Character, path: Union[str, "os.PathLike[str]"], force: bool = False) -> None:
    """Write ``character``; the format follows the extension (.glb, .gltf, .fbx, .obj, .bvh).

    The file is written atomically; an existing file is replaced only with ``force=True``.
    """
    _rigml.save(character, path, force)


def _joint_mask(
    value: Union[None, Sequence[bool], Sequence[Union[str, int]], np.ndarray],
    skeleton: Skeleton,
    what: str,
) -> Optional[list[bool]]:
    """A per-joint bool list from a bool mask, joint names or joint indices."""
    if value is None:
        return None
    items = list(np.asarray(value).tolist()) if isinstance(value, np.ndarray) else list(value)
    count = len(skeleton.names)
    if items and all(isinstance(v, (bool, np.bool_)) for v in items):
        if len(items) != count:
            raise ValueError(f"{what}: {len(items)} flags for {count} joints")
        return [bool(v) for v in items]
    mask = [False] * count
    for item in items:
        if isinstance(item, str):
            mask[skeleton.index(item)] = True
        elif isinstance(item, (int, np.integer)) and 0 <= int(item) < count:
            mask[int(item)] = True
        else:
            raise ValueError(f"{what}: {item!r} is not a joint name or index (0..{count - 1})")
    return mask


def skin_weights(
    vertices: np.ndarray,
    triangles: np.ndarray,
    skeleton: Union[Skeleton, Character],
    method: str = "learned",
    max_influences: int = 4,
    locked: Union[None, Sequence[bool], Sequence[Union[str, int]]] = None,
    existing: Optional[tuple[np.ndarray, np.ndarray]] = None,
    locked_vertices: Optional[Sequence[bool]] = None,
    progress: Optional[Callable[[str, float], Optional[bool]]] = None,
    model: Optional[str] = None,
    resolution: Optional[int] = None,
    cancel: Optional[Cancel] = None,
) -> SkinResult:
    """Skin weights for a mesh bound to a skeleton, as ``rigml skin`` computes them.

    ``vertices`` (N, 3) and ``triangles`` (M, 3) describe the mesh; ``skeleton`` is a
    :class:`Skeleton` (or a :class:`Character`, whose joints are used) in the same space.
    ``method``: one of :data:`METHODS`, or a blend ``"learned+voxel:0.3"``. ``max_influences``
    caps every row. ``locked``: joints (names, indices or a bool mask) whose weights in
    ``existing`` stay as they are; the other deforming joints share what is left of each
    vertex (lock every unselected bone for "selected bones only"). ``existing``: the current
    weights as ``(joints, weights)`` (N, K) arrays, joint -1 in unused slots.
    ``locked_vertices``: per vertex, keep its whole row from ``existing``. ``progress(stage,
    fraction)`` is called as each stage starts; return ``False`` to cancel (``ValueError``
    "cancelled"). ``cancel``: a :class:`Cancel` flag that another thread may set while the
    solver runs (the GIL is released); the solver stops at its next phase with the same
    ``ValueError``. ``model``: a model file from ``rigml train`` for ``learned``.
    ``resolution``: the voxel grid of ``voxel``.

    Returns a :class:`SkinResult`: ``joints`` and ``weights`` (N, K) with rows summing to 1,
    ``solved_joints``, ``unweighted``, ``over_cap``, ``seconds``, ``method``.
    """
    if isinstance(skeleton, Character):
        skeleton = _skeleton_of(skeleton)
    ex = None
    if existing is not None:
        ex = (np.asarray(existing[0]), np.asarray(existing[1]))
    return _rigml.skin_weights(
        np.asarray(vertices),
        np.asarray(triangles),
        [str(n) for n in skeleton.names],
        [int(p) for p in skeleton.parents],
        np.asarray(skeleton.positions),
        method=method,
        max_influences=int(max_influences),
        deform=None if skeleton.deform is None else [bool(d) for d in skeleton.deform],
        tails=None if skeleton.tails is None else np.asarray(skeleton.tails),
        locked=_joint_mask(locked, skeleton, "locked"),
        existing=ex,
        locked_vertices=None if locked_vertices is None else [bool(v) for v in locked_vertices],
        model=model,
        resolution=resolution,
        progress=progress,
        cancel=cancel,
    )


def character(
    vertices: np.ndarray,
    triangles: np.ndarray,
    skeleton: Optional[Skeleton] = None,
    weights: Optional[tuple[np.ndarray, np.ndarray]] = None,
    name: str = "character",
) -> Character:
    """A :class:`Character` from arrays, to :func:`save` (e.g. a DCC's mesh and bones for
    ``rigml`` on the command line): ``vertices`` (N, 3), ``triangles`` (M, 3), optionally a
    :class:`Skeleton` (bind pose at its positions) and ``weights`` as ``(joints, weights)`` (N, K)
    arrays over its joints."""
    if skeleton is None:
        if weights is not None:
            raise ValueError("character: weights need a skeleton")
        return _rigml.character(np.asarray(vertices), np.asarray(triangles), name=name)
    w = None if weights is None else (np.asarray(weights[0]), np.asarray(weights[1]))
    return _rigml.character(
        np.asarray(vertices),
        np.asarray(triangles),
        [str(n) for n in skeleton.names],
        [int(p) for p in skeleton.parents],
        np.asarray(skeleton.positions),
        w,
        name=name,
    )


def rig(
    vertices: np.ndarray,
    triangles: np.ndarray,
    template: str = "detect",
    method: str = "learned",
    max_influences: int = 4,
    name: str = "rigged",
) -> tuple[Character, str]:
    """Auto-rig a bare mesh: place a skeleton (``template``, one of :data:`TEMPLATES`) and skin
    it (``method``). Returns the rigged character and the template that placed it (``detect``
    answers ``humanoid`` or ``auto``). Y is up, as in glTF."""
    return _rigml.rig(
        np.asarray(vertices),
        np.asarray(triangles),
        template=template,
        method=method,
        max_influences=int(max_influences),
        name=name,
    )


def evaluate(
    path: Union[str, "os.PathLike[str]"],
    methods: Union[str, Sequence[str]] = "learned",
    asset_id: Optional[str] = None,
    deformation: bool = True,
    model: Optional[str] = None,
    rig_skin: str = "learned",
    weights: Optional[SkinResult] = None,
) -> list[dict]:
    """Score ``methods`` on one character file against its own weights (and skeleton), as
    ``rigml eval`` scores a manifest row: one dict per method with the ``per_asset.csv``
    columns (``precision_top4``, ``l1_top4``, ``deform_a_mean``, ``cd_j2j`` for ``rig-*``, ...).
    ``asset_id`` seeds the random poses; pass the manifest's id to reproduce ``rigml eval``.
    ``weights``: a :class:`SkinResult` already computed for this file (by :func:`skin_weights`
    on :func:`load`'s character) is scored as the one method named, without solving again."""
    names = [methods] if isinstance(methods, str) else list(methods)
    given = None
    cap = 4
    if weights is not None:
        given = (np.asarray(weights.joints), np.asarray(weights.weights))
        cap = max(1, int(given[0].shape[1]))
    return _rigml.evaluate(
        path,
        names,
        asset_id=asset_id,
        deformation=deformation,
        model=model,
        rig_skin=rig_skin,
        weights=given,
        max_influences=cap,
    )

