# SPDX-License-Identifier: MIT OR Apache-2.0
"""Blender's automatic weights vs `rigml skin --method heat`, timed in one run on the same files.

For each asset, one after the other (so that load on the machine hits both alike): Blender's
weighting step alone (auto_weights.py's weight_s, as imported and, with --merge, after Merge by
Distance) and rigml's solve time (the seconds `rigml skin` prints, loading and saving excluded).
Prints a table and the median ratio Blender / rigml; writes it as CSV with --csv.

Usage (any Python 3; Blender runs through --bpy):
  python3 tools/blender/compare_speed.py --manifest ../shared/data --split val \\
      --files /tmp/tubes/tube-10k-20.glb /tmp/tubes/tube-100k-60.glb --work /tmp/speed --merge
"""

import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def rows_of(args):
    """(asset id, file, auto_weights.py arguments selecting it) for every asset to time. The
    manifest is read here rather than through common.py, which needs bpy."""
    rows = []
    if args.manifest:
        path = args.manifest if not os.path.isdir(args.manifest) else os.path.join(args.manifest, "manifest.tsv")
        base = os.path.dirname(os.path.abspath(path))
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row.get("kind") != "character" or row.get("format") not in ("glb", "gltf", "fbx"):
                    continue
                if args.split != "all" and row.get("split") != args.split:
                    continue
                select = ["--manifest", args.manifest, "--split", args.split, "--ids", row["id"]]
                rows.append((row["id"], os.path.join(base, row["path"]), select))
    for p in args.files:
        stem = os.path.splitext(os.path.basename(p))[0]
        rows.append((stem, os.path.abspath(p), ["--files", os.path.abspath(p)]))
    return rows


def blender_time(args, select, out, merge):
    cmd = [args.bpy, os.path.join(HERE, "auto_weights.py"), *select, "--out", out, "--rigml", args.rigml, "--force"]
    if merge:
        cmd.append("--merge")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    path = os.path.join(out, "timings.csv")
    if not os.path.exists(path):
        return None, f"auto_weights failed: {proc.stderr.strip()[-300:]}"
    with open(path, newline="", encoding="utf-8") as f:
        rec = list(csv.DictReader(f))[-1]
    if rec["status"] != "ok":
        return None, rec["message"]
    return rec, ""


def rigml_time(args, path, out):
    proc = subprocess.run(
        [args.rigml, "skin", path, "--method", "heat", "-o", out, "--force"], capture_output=True, text=True
    )
    m = re.search(r" in ([0-9.]+) s ", proc.stdout)
    if proc.returncode != 0 or not m:
        return None, proc.stderr.strip()[-300:]
    return float(m.group(1)), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", help="manifest.tsv or its folder")
    ap.add_argument("--split", default="val", choices=["train", "val", "test", "all"])
    ap.add_argument("--files", nargs="*", default=[], help="more character files (e.g. the synthetic tubes)")
    ap.add_argument("--work", required=True, help="scratch folder (weights, skinned GLBs)")
    ap.add_argument("--bpy", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), ".venv-bpy", "bin", "python"))
    ap.add_argument("--rigml", default=None, help="rigml binary (default: target/release/rigml)")
    ap.add_argument("--merge", action="store_true", help="also time Blender after Merge by Distance")
    ap.add_argument("--csv", help="write the table here too")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(HERE))
    args.rigml = args.rigml or os.path.join(root, "target", "release", "rigml")
    for tool in (args.bpy, args.rigml):
        if not os.path.exists(tool):
            sys.exit(f"error: {tool}: not found")
    rows = rows_of(args)
    if not rows:
        sys.exit("error: nothing to time (give --manifest and/or --files)")
    os.makedirs(args.work, exist_ok=True)

    header = ["id", "vertices", "blender_s", "blender_unweighted", "rigml_heat_s", "ratio"]
    if args.merge:
        header += ["blender_merged_s", "merged_unweighted", "ratio_merged"]
    table = []
    for asset, path, select in rows:
        out = os.path.join(args.work, asset)
        shutil.rmtree(out, ignore_errors=True)
        rec, why = blender_time(args, select, os.path.join(out, "bpy"), False)
        ours, why2 = rigml_time(args, path, os.path.join(out, "rigml-heat.glb"))
        line = {"id": asset, "vertices": rec["vertices"] if rec else ""}
        line["blender_s"] = rec["weight_s"] if rec else f"error: {why}"
        line["blender_unweighted"] = rec["unweighted"] if rec else ""
        line["rigml_heat_s"] = f"{ours:.3f}" if ours is not None else f"error: {why2}"
        line["ratio"] = f"{float(rec['weight_s']) / ours:.2f}" if rec and ours else ""
        if args.merge:
            mrec, why3 = blender_time(args, select, os.path.join(out, "bpy-merged"), True)
            line["blender_merged_s"] = mrec["weight_s"] if mrec else f"error: {why3}"
            line["merged_unweighted"] = mrec["unweighted"] if mrec else ""
            line["ratio_merged"] = f"{float(mrec['weight_s']) / ours:.2f}" if mrec and ours else ""
        table.append(line)
        print("  ".join(f"{k}={line[k]}" for k in header), flush=True)
        shutil.rmtree(out, ignore_errors=True)

    widths = [max(len(h), *(len(str(r[h])) for r in table)) for h in header]
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for r in table:
        print(" | ".join(str(r[h]).ljust(w) for h, w in zip(header, widths)))
    for key in ("ratio", "ratio_merged"):
        values = [float(r[key]) for r in table if r.get(key)]
        if values:
            print(f"median {key} (Blender / rigml heat): {statistics.median(values):.2f} over {len(values)} assets")
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=header)
            w.writeheader()
            w.writerows(table)


if __name__ == "__main__":
    main()
