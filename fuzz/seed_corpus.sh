#!/bin/sh
# Build the seed corpora fuzz/corpus/{gltf,bvh,obj} at run time (fuzz/corpus is git-ignored;
# no data is committed). Run from the repository root:  sh fuzz/seed_corpus.sh
#  1. the hand-made files of crates/rigml-io/tests/bad_input.rs (tiny, one feature each);
#  2. small real files picked through the shared manifest: the 3 smallest character GLBs,
#     the smallest BVH cut to its first 3 frames, the first frame OBJ of the first
#     OBJ sequence that is not restricted_*. Data folder: $RIGML_DATA, else the first shared/data beside an ancestor.
set -eu
root=$(pwd)
corpus="$root/fuzz/corpus"
mkdir -p "$corpus/gltf" "$corpus/bvh" "$corpus/obj"

RIGML_FUZZ_SEEDS="$corpus" cargo test -q -p rigml-io --test bad_input export_fuzz_seeds >/dev/null

data=${RIGML_DATA:-}
if [ -z "$data" ]; then
    dir=$root
    while [ "$dir" != / ]; do
        if [ -f "$dir/shared/data/manifest.tsv" ]; then data="$dir/shared/data"; break; fi
        dir=$(dirname "$dir")
    done
fi
if [ -z "$data" ]; then
    echo "no shared data found: seeds are the hand-made files only" >&2
    exit 0
fi

# Manifest rows of one format, smallest file first: prints paths relative to $data.
rows() {
    awk -F'\t' -v want="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["format"] == want && $col["kind"] != "" { print $col["path"] }' "$data/manifest.tsv" |
    while read -r p; do
        printf '%s\t%s\n' "$(du -b "$data/$p" | cut -f1)" "$p"
    done | sort -n | cut -f2
}

for p in $(rows glb | head -n 3); do cp "$data/$p" "$corpus/gltf/$(basename "$p")"; done

bvh=$(rows bvh | head -n 1)
awk '/^Frames:/ { print "Frames: 3"; next } { print } /^Frame Time:/ { n = 3; while (n-- > 0 && (getline line) > 0) print line; exit }' \
    "$data/$bvh" >"$corpus/bvh/$(basename "$bvh" .bvh)_3frames.bvh"

seq=$(rows obj_frames | grep -v restricted | head -n 1)  # restricted_*: research-only licence
first=$(ls "$data/$seq" | grep '\.obj$' | head -n 1)
cp "$data/$seq/$first" "$corpus/obj/$(basename "$seq")_$first"

for t in gltf bvh obj; do echo "$t: $(ls "$corpus/$t" | wc -l) seeds"; done
