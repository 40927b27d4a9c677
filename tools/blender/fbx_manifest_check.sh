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
python3 - "$out/result.json" << 'EOF'
import json, sys
results = json.load(open(sys.argv[1]))
for r in results:
    if not r["pass"]:
        bad = {k: v for k, v in r["checks"].items() if v != "ok"}
        print(f"{r['file']}: {bad}")
print(f"{sum(r['pass'] for r in results)} of {len(results)} FBX files shown as their GLB")
EOF
