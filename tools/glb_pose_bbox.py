# SPDX-License-Identifier: MIT OR Apache-2.0
"""The bounding box of a GLB's skinned meshes at the first key of one of its animations, computed
from the file alone with numpy (glTF's skinning: sum of weight x joint world x inverse bind x
vertex), independent of rigml and of any importer. A referee for importer comparisons: Blender's
glTF importer and its FBX importer can disagree about the same character, and this says what the
file itself means.

Usage: python3 tools/glb_pose_bbox.py FILE.glb [--animation K]   (needs numpy)
Prints min and max, Y up, as JSON. Each animated channel contributes its first key (for
CUBICSPLINE the value of the first tangent-value-tangent triplet): the pose at the animation's
start when its channels start together, as rigml's do.
"""

import argparse
import json
import struct

import numpy as np

TYPES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
COMPONENTS = {5126: "<f4", 5125: "<u4", 5123: "<u2", 5121: "u1", 5122: "<i2", 5120: "i1"}


def load(path):
    try:
        data = open(path, "rb").read()
    except OSError as e:
        raise SystemExit(f"{path}: {e.strerror}")
    if data[:4] != b"glTF":
        raise SystemExit(f"{path}: not a GLB")
    n = struct.unpack("<I", data[12:16])[0]
    doc = json.loads(data[20 : 20 + n])
    bin_start = 20 + n + 8
    return doc, data[bin_start:]


def accessor(doc, blob, i):
    a = doc["accessors"][i]
    view = doc["bufferViews"][a["bufferView"]]
    k = TYPES[a["type"]]
    dt = np.dtype(COMPONENTS[a["componentType"]])
    stride = view.get("byteStride", dt.itemsize * k)
    start = view.get("byteOffset", 0) + a.get("byteOffset", 0)
    rows = [np.frombuffer(blob, dt, k, start + r * stride) for r in range(a["count"])]
    out = np.array(rows, dtype=float)
    if a.get("normalized"):
        out /= np.iinfo(dt).max
    return out


def rotation(q):
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--animation", type=int, default=0)
    args = ap.parse_args()
    doc, blob = load(args.file)
    nodes = doc["nodes"]
    trs = [
        {
            "t": n.get("translation", [0, 0, 0]),
            "r": n.get("rotation", [0, 0, 0, 1]),
            "s": n.get("scale", [1, 1, 1]),
            "m": n.get("matrix"),
        }
        for n in nodes
    ]
    animations = doc.get("animations", [])
    if animations and not 0 <= args.animation < len(animations):
        raise SystemExit(f"{args.file}: --animation {args.animation}: the file has {len(animations)} animations (0 to {len(animations) - 1})")
    if animations:
        anim = animations[args.animation]
        for ch in anim["channels"]:
            path = {"translation": "t", "rotation": "r", "scale": "s"}.get(ch["target"]["path"])
            if path is None or "node" not in ch["target"]:
                continue
            sampler = anim["samplers"][ch["sampler"]]
            out = accessor(doc, blob, sampler["output"])
            first = out[1] if sampler.get("interpolation") == "CUBICSPLINE" else out[0]
            trs[ch["target"]["node"]][path] = first
            trs[ch["target"]["node"]]["m"] = None
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}

    def local(i):
        if trs[i]["m"] is not None:
            return np.array(trs[i]["m"], dtype=float).reshape(4, 4).T
        m = np.eye(4)
        m[:3, :3] = rotation(trs[i]["r"]) * np.array(trs[i]["s"])
        m[:3, 3] = trs[i]["t"]
        return m

    def world(i):
        m = local(i)
        while i in parent:
            i = parent[i]
            m = local(i) @ m
        return m

    points = []
    for n in nodes:
        if "mesh" not in n or "skin" not in n:
            continue
        skin = doc["skins"][n["skin"]]
        ibm = accessor(doc, blob, skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1)
        mats = np.array([world(j) @ ibm[k] for k, j in enumerate(skin["joints"])])
        for prim in doc["meshes"][n["mesh"]]["primitives"]:
            attrs = prim["attributes"]
            pos = accessor(doc, blob, attrs["POSITION"])
            out = np.zeros_like(pos)
            for name in [a for a in attrs if a.startswith("JOINTS_")]:
                joints = accessor(doc, blob, attrs[name]).astype(int)
                weights = accessor(doc, blob, attrs["WEIGHTS_" + name[len("JOINTS_") :]])
                for c in range(4):
                    m = mats[joints[:, c]]
                    out += weights[:, c : c + 1] * (np.einsum("nij,nj->ni", m[:, :3, :3], pos) + m[:, :3, 3])
            points.append(out)
    if not points:
        raise SystemExit(f"{args.file}: no skinned mesh")
    p = np.concatenate(points)
    print(json.dumps({"min": p.min(axis=0).round(6).tolist(), "max": p.max(axis=0).round(6).tolist()}))


if __name__ == "__main__":
    main()
