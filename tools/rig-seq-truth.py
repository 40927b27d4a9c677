#!/usr/bin/env python3
"""`rigml rig-seq --truth` over the locomotion clips (walk, run, gallop, trot) of every train and
val character marked `cat=quadruped`: the recovered joint rotations against the artists' own, per
clip, as a table (TSV). The protocol for judging `rig-seq` changes on train and val shapes: the
Khronos fox's Run clip is never read (it is the test sequence `fox_run`), nor are test rows.

    tools/rig-seq-truth.py OUT.tsv [extra rig-seq arguments...]

Environment: RIGML (the binary, default target/release/rigml), RIGML_DATA (default
../shared/data), FRAMES (frames baked per clip, default 16).
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time

DATA = os.environ.get("RIGML_DATA", "../shared/data")
RIGML = os.environ.get("RIGML", "target/release/rigml")
FRAMES = os.environ.get("FRAMES", "16")
LOCOMOTION = re.compile(r"(walk|run|gallop|trot)$", re.I)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out, extra = sys.argv[1], sys.argv[2:]
    with open(os.path.join(DATA, "manifest.tsv"), newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t")
                if r["kind"] == "character" and r["split"] in ("train", "val")
                and "cat=quadruped" in r["notes"]]
    scratch = tempfile.mkdtemp(prefix="rig-seq-truth-")
    rotations = []
    with open(out, "w") as table:
        table.write("id\tsplit\tclip\tname\tframes\trotation_deg\trotation_by_skin_deg\trmse\ttemplate\tjoints\tseconds\n")
        for r in rows:
            path = os.path.join(DATA, r["path"])
            inspect = subprocess.run([RIGML, "inspect", path, "--json"], capture_output=True, text=True)
            if inspect.returncode != 0:
                print(f"{r['id']}: inspect failed: {inspect.stderr.strip()[-300:]}", flush=True)
                continue
            for i, clip in enumerate(json.loads(inspect.stdout)["clips"]):
                name = clip["name"].split("|")[-1]
                if not LOCOMOTION.search(name) or (r["id"] == "khronos-fox" and name == "Run"):
                    continue
                start = time.time()
                run = subprocess.run(
                    [RIGML, "rig-seq", path, "--clip", str(i), "--frames", FRAMES, "--truth", "--json",
                     "-o", os.path.join(scratch, "out.glb"), "--force"] + extra,
                    capture_output=True, text=True)
                seconds = time.time() - start
                if run.returncode != 0:
                    table.write(f"{r['id']}\t{r['split']}\t{i}\t{name}\t\tFAIL\t\t\t\t\t{seconds:.1f}\n")
                    print(f"{r['id']} {name}: FAIL {run.stderr.strip()[-300:]}", flush=True)
                    continue
                d = json.loads(run.stdout)
                t = d["truth"]
                rotations.append(t["rotation_deg_mean"])
                table.write(f"{r['id']}\t{r['split']}\t{i}\t{name}\t{d['frames']}\t{t['rotation_deg_mean']:.2f}\t"
                            f"{t['by_skin']['rotation_deg_mean']:.2f}\t{d['rmse']:.3e}\t{d['template']}\t"
                            f"{d['joints']}\t{seconds:.1f}\n")
                table.flush()
                print(f"{r['id']} {name}: {t['rotation_deg_mean']:.2f} deg ({d['template']}, {seconds:.1f} s)", flush=True)
    if rotations:
        print(f"mean over {len(rotations)} clips: {sum(rotations) / len(rotations):.2f} deg")


if __name__ == "__main__":
    main()
