#!/usr/bin/env bash
# Family-grouped cross-validation of a model recipe over the train split (docs/METRICS.md,
# "Per-family means and family-grouped cross-validation"): for each fold I of K, train the recipe
# without fold I's families (`--hold-out-fold I/K`, inference settings chosen on val, never on
# test), then score every fold's held-out families with its own model, next to the geometric
# solvers, in one report (`rigml eval --folds K --fold-models ...`).
#
# Usage: tools/family-cv.sh OUT_DIR [K] [-- extra training flags]
#   KIND=skin (default: `rigml train`, the skin model) or KIND=skeleton (`rigml train-skeleton`,
#   scored by the auto-riggers that use it through --fold-skeleton-models),
#   RIGML=path/to/rigml (default target/release/rigml, built with `--features train`), DATA=../shared/data,
#   METHODS (what the report scores; default learned,voxel,heat for skin,
#   rig-detect,rig-auto,rig-learned for skeleton), EVAL_FLAGS (e.g. --no-deformation),
#   JOBS (folds trained at once, default 1: a one-network skin fold fits on one core, so on a
#   machine of N cores JOBS=N takes about 1/N of the time, each fold holding its samples in
#   memory; the models are the same).
# Example (a short recipe, for comparing settings; about 2 minutes of training per fold):
#   tools/family-cv.sh cv-short 5 -- --steps 1500 --max-vertices 2000 --posed-copies 1 --members 1
#   KIND=skeleton EVAL_FLAGS=--no-deformation tools/family-cv.sh cv-skel 5 -- --steps 1000
# Writes OUT_DIR/foldI.safetensors, OUT_DIR/foldI.json (train summaries) and OUT_DIR/report/
# (summary.md with the per-family tables, per_family.csv, per_asset.csv).
set -euo pipefail
out=${1:?usage: tools/family-cv.sh OUT_DIR [K] [-- train flags]}
shift
k=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    k=$1
    shift
fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
rigml=${RIGML:-target/release/rigml}
data=${DATA:-../shared/data}
case ${KIND:-skin} in
    skin)
        trainer=(train)
        models_flag=--fold-models
        methods=${METHODS:-learned,voxel,heat}
        ;;
    skeleton)
        trainer=(train-skeleton)
        models_flag=--fold-skeleton-models
        methods=${METHODS:-rig-detect,rig-auto,rig-learned}
        ;;
    *)
        echo "KIND=${KIND}: skin or skeleton" >&2
        exit 2
        ;;
esac
jobs=${JOBS:-1}
mkdir -p "$out"
running=0
for i in $(seq 1 "$k"); do
    if [ -f "$out/fold$i.safetensors" ]; then
        echo "fold $i/$k: $out/fold$i.safetensors exists, kept" >&2
        continue
    fi
    if [ "$running" -ge "$jobs" ]; then
        wait -n # a failed fold stops the script here (set -e)
        running=$((running - 1))
    fi
    echo "fold $i/$k: training" >&2
    "$rigml" "${trainer[@]}" --data "$data" --split train --val val --hold-out-fold "$i/$k" \
        --checkpoint-every 0 -o "$out/fold$i.safetensors" --json "$@" > "$out/fold$i.json" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n
    running=$((running - 1))
done
# shellcheck disable=SC2086
"$rigml" eval --data "$data" --split train --methods "$methods" --folds "$k" \
    "$models_flag" "$out/fold{}.safetensors" -o "$out/report" --force ${EVAL_FLAGS:-}
