#!/usr/bin/env bash
# Subject-grouped cross-validation of a motion-model recipe over the train split (docs/METRICS.md
# §10): the train subjects fall into folds; for each fold, `rigml train-motion` trains the recipe
# on the other folds' clips and `rigml eval-motion` scores the fold's own clips with that model,
# beside the filters and interpolation. Val and test clips are not read. A fold's manifest (the
# train rows only, the fold's subjects marked `val`) and a link to the data's motion folder are
# written under OUT_DIR; the data itself is not copied.
#
# Usage: tools/subject-cv.sh OUT_DIR [-- train-motion flags]
#   RIGML=path/to/rigml (default target/release/rigml, built with `--features train`),
#   DATA=../shared/data, FOLDS (subject groups, `;` between folds; default the three of
#   docs/experiments/2026-12-07-contacts-in-seconds.md). Clips of subjects in no fold always train.
#   Default flags: the shipped denoising recipe (docs/model-card-motion.md).
# Example (3-4 minutes of training per fold):
#   tools/subject-cv.sh cv-floor -- --steps 1500 --infill 0 --noise-evidence --floor-relative
# Writes OUT_DIR/foldI/{manifest.tsv,model.safetensors,train.json,eval.json} and prints, per
# noise level, the learned model's joint error (% of leg) and skate as means over every held-out
# clip, and its contact F1 both as the mean of per-clip F1s and pooled over every held-out frame.
set -euo pipefail
out=${1:?usage: tools/subject-cv.sh OUT_DIR [-- train-motion flags]}
shift
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
if [ $# -eq 0 ]; then
    set -- --steps 1500 --infill 0 --noise-evidence --floor-relative
fi
rigml=${RIGML:-target/release/rigml}
data=$(cd "${DATA:-../shared/data}" && pwd)
folds=${FOLDS:-"cmu_07 cmu_01 cmu_131 cmu_11;cmu_05 cmu_03 cmu_10;cmu_13 cmu_09"}
[ -x "$rigml" ] || { echo "subject-cv: $rigml is not an executable rigml (build with --features train)" >&2; exit 1; }
[ -f "$data/manifest.tsv" ] || { echo "subject-cv: $data/manifest.tsv: no such file" >&2; exit 1; }
mkdir -p "$out"
IFS=';' read -r -a groups <<< "$folds"
[ "${#groups[@]}" -ge 2 ] || { echo "subject-cv: FOLDS must name at least two folds of subjects, ';' between them" >&2; exit 1; }
i=0
for group in "${groups[@]}"; do
    i=$((i + 1))
    dir="$out/fold$i"
    mkdir -p "$dir"
    ln -sfn "$data/motion" "$dir/motion"
    # Train motion rows only; a row's subject is the first two `_`-separated parts of its id.
    awk -F'\t' -v OFS='\t' -v subjects="$group" '
        NR == 1 { for (c = 1; c <= NF; c++) col[$c] = c; print; next }
        $col["kind"] != "motion" || $col["split"] != "train" { next }
        {
            n = split($col["id"], part, "_"); subject = part[1] "_" part[2]
            held = 0; m = split(subjects, s, " ")
            for (k = 1; k <= m; k++) if (s[k] == subject) held = 1
            $col["split"] = held ? "val" : "train"; print
        }' "$data/manifest.tsv" > "$dir/manifest.tsv"
    held=$(awk -F'\t' 'NR == 1 { for (c = 1; c <= NF; c++) if ($c == "split") s = c; next } $s == "val"' "$dir/manifest.tsv" | wc -l)
    [ "$held" -gt 0 ] || { echo "subject-cv: fold $i ($group) holds no train clip" >&2; exit 1; }
    echo "fold $i: $group ($held clips held out)" >&2
    "$rigml" train-motion --data "$dir" --split train --val val "$@" -o "$dir/model.safetensors" --force --json > "$dir/train.json"
    "$rigml" eval-motion --data "$dir" --split val --model "$dir/model.safetensors" --json > "$dir/eval.json"
done
python3 - "$out" "$i" <<'EOF'
import json, sys
out, k = sys.argv[1], int(sys.argv[2])
sums, order = {}, []
for f in range(1, k + 1):
    for r in json.load(open(f"{out}/fold{f}/eval.json"))["rows"]:
        if r["method"] != "learned":
            continue
        s = sums.setdefault(r["level"], [0, 0.0, 0.0, 0.0, 0, 0])
        if r["level"] not in order:
            order.append(r["level"])
        n, m = r["clips"], r["mean"]
        s[0] += n; s[1] += n * m["joint_error"]; s[2] += n * m["skate"]; s[3] += n * m["contact_f1"]
        c = r["contact_counts"]
        s[4] += 2 * c["hits"]; s[5] += 2 * c["hits"] + c["false_alarms"] + c["misses"]
print("| noise | held-out clips | joint error (% leg) | skate (H/s) | contact F1 (mean of clips) | contact F1 (pooled) |")
print("|---|---|---|---|---|---|")
for level in order:
    n, e, sk, f1, hits2, all2 = sums[level]
    pooled = hits2 / all2 if all2 else 1.0
    print(f"| {level} | {n} | {100 * e / n:.3f} | {sk / n:.4f} | {f1 / n:.3f} | {pooled:.3f} |")
EOF
