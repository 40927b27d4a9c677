# SPDX-License-Identifier: MIT OR Apache-2.0
"""Shared helpers for rigml's Blender (bpy) scripts: manifest rows, rigml's reference vertex
order, scene reset/import, and the Blender -> rigml vertex map.

Run with the bpy venv's Python (see tools/blender/README.md); this module imports bpy.
"""

import csv
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager

import bpy
import numpy as np

# Blender imports glTF's +Y-up as +Z-up: Blender (x, y, z) = glTF (x, -z, y). The inverse maps
# Blender world coordinates back to rigml's (glTF / Y-up) frame. FBX files may carry either.
AXIS_MAPS = {
    "blender-z-up->y-up": lambda p: np.stack([p[:, 0], p[:, 2], -p[:, 1]], axis=1),
    "identity": lambda p: p,
}

# Index-wise position error (in units of the longest bbox side) under which Blender's vertex
# order is taken to be the file's own.
ORDER_TOL = 1e-4


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def default_rigml():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for build in ("release", "debug"):
        path = os.path.join(root, "target", build, "rigml")
        if os.path.exists(path):
            return path
    return "rigml"


def manifest_rows(manifest, kind="character", split=None, ids=None):
    """Rows of the manifest (a file, or a folder holding manifest.tsv) as dicts, with `abs_path`."""
    if os.path.isdir(manifest):
        manifest = os.path.join(manifest, "manifest.tsv")
    base = os.path.dirname(os.path.abspath(manifest))
    try:
        with open(manifest, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as e:
        die(f"{manifest}: {e.strerror}")
    out = []
    for row in rows:
        if kind and row.get("kind") != kind:
            continue
        if split and split != "all" and row.get("split") != split:
            continue
        if ids and row.get("id") not in ids:
            continue
        if row.get("format") not in ("glb", "gltf", "fbx"):
            continue  # Blender imports glTF and FBX only (MakeHuman JSON rigs are not characters it reads).
        row["abs_path"] = os.path.join(base, row["path"])
        out.append(row)
    return out


def file_rows(paths):
    """Rows like manifest_rows' for plain files: id = file stem."""
    rows = []
    for p in paths:
        if not os.path.isfile(p):
            die(f"{p}: no such file")
        stem, ext = os.path.splitext(os.path.basename(p))
        rows.append({"id": stem, "format": ext.lstrip(".").lower(), "abs_path": os.path.abspath(p)})
    return rows


def reference_mesh(rigml, path):
    """rigml's own vertex order, bind positions and triangles for `path`, through
    `rigml convert path x.obj` read back.

    Returns (positions (N,3) float64, triangles (T,3) int64, parts [(name, start, count)]).
    """
    with tempfile.TemporaryDirectory(prefix="rigml-bpy-") as tmp:
        obj = os.path.join(tmp, "ref.obj")
        proc = subprocess.run([rigml, "convert", path, obj], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"rigml convert failed: {proc.stderr.strip()}")
        positions, triangles, parts = [], [], []
        with open(obj, encoding="utf-8") as f:
            for line in f:
                if line.startswith("v "):
                    positions.append([float(x) for x in line.split()[1:4]])
                elif line.startswith("f "):
                    corners = [int(c.split("/")[0]) - 1 for c in line.split()[1:]]
                    triangles.extend([corners[0], corners[k], corners[k + 1]] for k in range(1, len(corners) - 1))
                elif line.startswith(("o ", "g ")):
                    parts.append([line[2:].strip(), len(positions), 0])
    for i, part in enumerate(parts):
        end = parts[i + 1][1] if i + 1 < len(parts) else len(positions)
        part[2] = end - part[1]
    parts = [tuple(p) for p in parts if p[2] > 0] or [("", 0, len(positions))]
    positions = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    return positions, np.asarray(triangles, dtype=np.int64).reshape(-1, 3), parts


@contextmanager
def captured_stdio():
    """Capture what C code (Blender's reports) writes to fd 1 and 2; yields a list that holds the
    text after the block."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    out = []
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", "replace"))


def reset_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)


def import_file(path):
    """Import a GLB/glTF/FBX into the empty scene; returns (operator result, captured log text)."""
    ext = os.path.splitext(path)[1].lower()
    with captured_stdio() as log:
        if ext == ".fbx":
            result = bpy.ops.import_scene.fbx(filepath=path)
        else:
            result = bpy.ops.import_scene.gltf(filepath=path)
    return result, log[0]


def custom_shapes():
    """Meshes the importer made only to draw bones (not part of the character)."""
    shapes = set()
    for ob in bpy.data.objects:
        if ob.type == "ARMATURE" and ob.pose:
            for pb in ob.pose.bones:
                if pb.custom_shape is not None:
                    shapes.add(pb.custom_shape.name)
    return shapes


def character_meshes():
    """Mesh objects of the imported character, in Blender's object order: the skinned ones (with
    an Armature modifier) when there are any, else all, as rigml's readers do (rigid meshes hanging
    from bones are rigml's attachments, see `attached_meshes`)."""
    shapes = custom_shapes()
    meshes = [ob for ob in bpy.data.objects if ob.type == "MESH" and ob.name not in shapes and len(ob.data.vertices)]
    skinned = [ob for ob in meshes if any(m.type == "ARMATURE" for m in ob.modifiers)]
    return skinned or meshes


def attached_meshes():
    """Mesh objects parented to a bone (rigml's attachments): (object name, bone name) pairs."""
    shapes = custom_shapes()
    return [
        (ob.name, ob.parent_bone)
        for ob in bpy.data.objects
        if ob.type == "MESH" and ob.name not in shapes and ob.parent_type == "BONE" and len(ob.data.vertices)
    ]


def triangles_of(ob):
    """The object's faces fan-triangulated, as a set of sorted vertex-index triples."""
    out = set()
    for poly in ob.data.polygons:
        vs = list(poly.vertices)
        for k in range(1, len(vs) - 1):
            out.add(tuple(sorted((vs[0], vs[k], vs[k + 1]))))
    return out


def world_positions(ob):
    """Object vertices in world space (the mesh data, i.e. the rest shape), as (n,3) float64."""
    co = np.empty(len(ob.data.vertices) * 3, dtype=np.float64)
    ob.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    m = np.array(ob.matrix_world, dtype=np.float64)
    return co @ m[:3, :3].T + m[:3, 3]


def normalise(p):
    """Centre on the bbox centre and scale the longest side to 1 (METRICS.md §1)."""
    if len(p) == 0:
        return p
    lo, hi = p.min(axis=0), p.max(axis=0)
    size = float((hi - lo).max()) or 1.0
    return (p - (lo + hi) / 2.0) / size


def vertex_map(objects, ref_positions, ref_triangles, ref_parts):
    """Map each rigml vertex to (object index, Blender vertex index).

    Blender keeps a glTF primitive's / FBX mesh's vertices in file order, one object per mesh node
    (its primitives concatenated). So each object must cover a run of consecutive rigml parts with
    the same vertex count, and is accepted when, vertex for vertex, either
    - "index": positions agree within ORDER_TOL of the longest bbox side (both sides centred and
      scaled by their bbox, Blender's after undoing a candidate axis change), or
    - "index-topology": at least 99 % of rigml's triangles of the run are faces of the object
      (pose-independent: Blender moves skinned vertices to the armature's rest pose, which differs
      from the file's bind pose on some assets).
    Failing that, every rigml vertex takes the nearest Blender vertex ("nearest").
    Returns (map (N,2) int array, how, max position error in normalised units, axis map name).
    """
    blender = [world_positions(ob) for ob in objects]
    if not blender:
        raise RuntimeError("Blender made no mesh objects")
    ref_n = normalise(ref_positions)
    candidates = []
    for axis_name, axis in AXIS_MAPS.items():
        conv = _normalised_like(blender, axis)
        ordered = _ordered_map(conv, ref_n, ref_parts, lambda k, start, total: None)
        if ordered is not None and ordered[1] <= ORDER_TOL:
            return ordered[0], "index", ordered[1], axis_name
        candidates.append((conv, axis_name))
    tris = [triangles_of(ob) for ob in objects]

    def topology_error(k, start, total):
        inside = ref_triangles[(ref_triangles >= start).all(axis=1) & (ref_triangles < start + total).all(axis=1)]
        if len(inside) == 0:
            return None
        hits = sum(tuple(sorted(t)) in tris[k] for t in (inside - start).tolist())
        return 0.0 if hits >= 0.99 * len(inside) else None

    for conv, axis_name in candidates:
        ordered = _ordered_map(conv, ref_n, ref_parts, topology_error)
        if ordered is not None:
            return ordered[0], "index-topology", ordered[1], axis_name
    best = None
    for conv, axis_name in candidates:
        mapping, err = _nearest_map(conv, ref_n)
        if best is None or err < best[1]:
            best = (mapping, err, axis_name)
    return best[0], "nearest", best[1], best[2]


def _normalised_like(blender, axis):
    """Blender positions after `axis`, centred and scaled by the bbox of all of them."""
    whole = axis(np.concatenate(blender))
    lo, hi = whole.min(axis=0), whole.max(axis=0)
    size = float((hi - lo).max()) or 1.0
    return [(axis(p) - (lo + hi) / 2.0) / size for p in blender]


def _ordered_map(conv, ref_n, ref_parts, accept):
    """Objects matched to runs of consecutive parts of equal vertex count, each by the smallest
    index-wise position error, or by `accept(k, start, total)` returning a non-None error when
    positions do not agree. None if some part is left unmatched."""
    used = [False] * len(conv)
    mapping = np.full((len(ref_n), 2), -1, dtype=np.int64)
    worst = 0.0
    p = 0
    while p < len(ref_parts):
        start = ref_parts[p][1]
        choice = None
        for k, pts in enumerate(conv):
            if used[k]:
                continue
            total, q = 0, p
            while q < len(ref_parts) and total < len(pts):
                total += ref_parts[q][2]
                q += 1
            if total != len(pts):
                continue
            err = float(np.abs(pts - ref_n[start : start + total]).max()) if total else 0.0
            if err > ORDER_TOL:
                if accept(k, start, total) is None:
                    continue
            if choice is None or err < choice[0]:
                choice = (err, k, q, total)
        if choice is None:
            return None
        err, k, q, total = choice
        used[k] = True
        mapping[start : start + total, 0] = k
        mapping[start : start + total, 1] = np.arange(total)
        worst = max(worst, err)
        p = q
    if (mapping[:, 0] < 0).any():
        return None
    return mapping, worst


def _nearest_map(conv, ref_n):
    from mathutils import kdtree

    total = sum(len(p) for p in conv)
    tree = kdtree.KDTree(total)
    owner = []
    i = 0
    for k, pts in enumerate(conv):
        for vi, co in enumerate(pts):
            tree.insert(co.tolist(), i)
            owner.append((k, vi))
            i += 1
    tree.balance()
    mapping = np.empty((len(ref_n), 2), dtype=np.int64)
    worst = 0.0
    for v, co in enumerate(ref_n):
        _, idx, dist = tree.find(co.tolist())
        mapping[v] = owner[idx]
        worst = max(worst, dist)
    return mapping, worst


def save_npz(path, weights, joint_names, force):
    """Write `weights` (N,J) float32 and `joint_names` (<U) as an .npz, atomically, refusing to
    replace an existing file unless `force`."""
    if os.path.exists(path) and not force:
        raise RuntimeError(f"{path}: exists (use --force to replace it)")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(
                f, weights=np.ascontiguousarray(weights, dtype=np.float32), joint_names=np.array(joint_names, dtype=str)
            )
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
