#!/usr/bin/env bash
# Issue 34's FBX-out check over the whole manifest: every character is written by rigml as GLB
# and as FBX (both straight from its source file), and Blender's importers show the FBX as they
# show the GLB (`import_check.py FBX=GLB`: import, no warning, vertex and bone counts, every vertex
# weighted, one action per clip, materials, attachments, and the posed bounding box of the first
# clip's first frame within 1e-3 of the GLB's size).
#
# Usage: tools/blender/fbx_manifest_check.sh OUT_DIR
#   RIGML=path/to/rigml (default target/release/rigml), DATA=../shared/data,
#   BPY=python with bpy (default .venv-bpy/bin/python; tools/blender/README.md), SPLIT (all if unset).
# Writes OUT_DIR/<id>.glb, OUT_DIR/<id>.fbx, OUT_DIR/result.json (import_check.py's JSON) and prints
# the files that failed a check and the count that passed. Takes about 5 minutes on 2 cores.
set -euo pipefail
out=${1:?usage: tools/blender/fbx_manifest_check.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
rigml=${RIGML:-$here/../../target/release/rigml}
data=${DATA:-$here/../../../shared/data}
bpy=${BPY:-$here/../../.venv-bpy/bin/python}
mkdir -p "$out"
pairs=()
while IFS=$'\t' read -r id path; do
  "$rigml" convert "$data/$path" "$out/$id.glb" --force > /dev/null
  "$rigml" convert "$data/$path" "$out/$id.fbx" --force > /dev/null
  pairs+=("$out/$id.fbx=$out/$id.glb")
done < <(awk -F'\t' -v want="${SPLIT:-}" \
  'NR > 1 && $2 == "character" && (want == "" || $3 == want) { print $1 "\t" $4 }' "$data/manifest.tsv")
if [ ${#pairs[@]} -eq 0 ]; then
  echo "no character rows in $data/manifest.tsv${SPLIT:+ with split $SPLIT}" >&2
  exit 2
fi
# One Blender process for every pair (the file list is passed as arguments, not through xargs,
# so that one JSON list comes back).
"$bpy" "$here/import_check.py" --json --rigml "$rigml" "${pairs[@]}" > "$out/result.json" 2> "$out/check.log" || true
# Where only the posed bounding box differs, the GLB's own skinning (tools/glb_pose_bbox.py, numpy,
# independent of rigml and Blender) says what the GLB means: Blender's glTF importer can be the
# one that is off (the 2016 chick).
"$bpy" - "$out/result.json" "$here/../glb_pose_bbox.py" << 'EOF'
import json, subprocess, sys
results = json.load(open(sys.argv[1]))
passed = by_referee = 0
for r in results:
    bad = {k: v for k, v in r["checks"].items() if v != "ok"}
    if list(bad) == ["source_bbox"]:
        out = subprocess.run([sys.executable, sys.argv[2], r["source"]], capture_output=True, text=True, check=True)
        box = json.loads(out.stdout)
        # glTF's Y up as Blender shows it (Z up): (x, y, z) -> (x, -z, y).
        lo = [box["min"][0], -box["max"][2], box["min"][1]]
        hi = [box["max"][0], -box["min"][2], box["max"][1]]
        flo, fhi = r["bbox"]["file"]
        size = max(h - l for l, h in zip(lo, hi)) or 1.0
        err = max(abs(a - b) for a, b in zip(lo + hi, flo + fhi)) / size
        if err <= 1e-3:
            by_referee += 1
            print(f"{r['file']}: Blender's glTF import: {bad['source_bbox']}; the GLB's own skinning "
                  f"agrees with the FBX within {err:.2g} of its size")
            bad = {}
        else:
            bad["referee_bbox"] = f"the GLB's own skinning differs from the FBX by {err:.3g} of its size"
    if bad:
        print(f"{r['file']}: {bad}")
    else:
        passed += 1
print(f"{passed} of {len(results)} FBX files shown as their GLB ({by_referee} by the GLB's own skinning)")
EOF
