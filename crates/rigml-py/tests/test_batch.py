"""`python -m rigml.batch` on a local Ray cluster bound to loopback: the same metrics as
`rigml eval`, bad assets as failed rows, `--resume`, outputs. Needs the `batch` extra."""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

# Ray reads this when it is imported: every listener of a local cluster on 127.0.0.1.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402

import rigml  # noqa: E402
from rigml import batch  # noqa: E402

DATA = Path(os.environ.get("RIGML_DATA", Path(__file__).resolve().parents[3] / ".." / "shared" / "data"))
BIN = os.environ.get("RIGML_BIN")


def small_manifest(tmp_path, count=3):
    """A manifest of the first `count` val characters, paths made absolute."""
    with open(DATA / "manifest.tsv", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        fields = reader.fieldnames
        rows = [r for r in reader if r["kind"] == "character" and r["split"] == "val"][:count]
    for r in rows:
        r["path"] = str((DATA / r["path"]).resolve())
    path = tmp_path / "manifest.tsv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, delimiter="\t")
        w.writeheader()
        w.writerows(rows)
    return path, [r["id"] for r in rows]


@pytest.mark.skipif(BIN is None, reason="RIGML_BIN (the rigml CLI) not given")
def test_batch_on_ray_gives_rigml_eval_metrics_and_failed_rows(tmp_path):
    manifest, ids = small_manifest(tmp_path)
    broken = tmp_path / "broken.glb"
    broken.write_bytes(b"glTF\x02\x00\x00\x00junk")
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "rigml.batch", str(manifest), "--split", "val", str(broken),
         str(tmp_path / "missing.fbx"), "-o", str(out), "--method", "nearest", "--num-cpus", "2", "--write", "both"],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "3 of 5 assets done, 2 failed" in run.stdout, run.stdout
    rows = {r["id"]: r for r in pq.read_table(out / "results.parquet").to_pylist()}
    assert list(rows) == ids + ["broken", "missing"]
    assert not rows["broken"]["ok"] and "broken.glb" in rows["broken"]["error"]
    assert not rows["missing"]["ok"] and "missing.fbx" in rows["missing"]["error"]

    report = tmp_path / "report"
    subprocess.run(
        [BIN, "eval", "--data", str(manifest), "--split", "val", "--methods", "nearest", "--no-pictures", "-o", str(report)],
        check=True, capture_output=True,
    )
    compared = 0
    for e in csv.DictReader(open(report / "per_asset.csv")):
        r = rows[e["asset"]]
        assert r["ok"] and r["has_own_weights"]
        for m in batch.METRICS:
            if e[m] == "":
                assert r[m] is None, (e["asset"], m)
                continue
            assert abs(float(e[m]) - r[m]) <= 1e-6, (e["asset"], m, e[m], r[m])
            compared += 1
    assert compared >= 3 * 10

    # The outputs: a skinned GLB and the weights per asset.
    first = rows[ids[0]]
    glb, npz = first["output"].split(";")
    skinned = rigml.load(glb)
    stored = np.load(npz)
    assert skinned.weights is not None and stored["weights"].shape[0] == first["vertices"]


def test_local_cluster_listens_on_loopback_only(tmp_path):
    manifest, _ = small_manifest(tmp_path, count=2)
    listeners = []

    def look(line):
        if not listeners:
            ss = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
            for row in ss.splitlines():
                names = re.findall(r'\("([^"]+)",pid=(\d+)', row)
                if any(n in ("raylet", "gcs_server") or n.startswith("ray::") or int(p) == os.getpid() for n, p in names):
                    listeners.append(row.split()[3])

    settings = batch.Settings(method="nearest", max_influences=4, out=str(tmp_path / "out"), write="none",
                              metrics=False, deformation=False)
    rows = batch.run(batch.collect([str(manifest)]), settings, use_ray=True, num_cpus=2, progress=look)
    assert all(r["ok"] for r in rows)
    assert listeners, "no Ray listener seen"
    outside = [a for a in listeners if not re.match(r"^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]|\[::1\]):\d+$", a)]
    assert not outside, f"Ray listens beyond loopback: {outside}"


def test_resume_keeps_what_succeeded_and_the_loop_needs_no_ray(tmp_path):
    manifest, ids = small_manifest(tmp_path, count=2)
    broken = tmp_path / "broken.obj"
    broken.write_text("v 0 0 0\nf 1 2 3\n")
    assets = batch.collect([str(manifest), str(broken)])
    settings = batch.Settings(method="nearest", max_influences=4, out=str(tmp_path / "out"), write="none",
                              metrics=True, deformation=False)
    first = {r["id"]: r for r in batch.run(assets, settings, use_ray=False)}
    assert [first[i]["ok"] for i in ids] == [True, True] and not first["broken"]["ok"]
    # Direct scoring gives the loop's numbers.
    direct = rigml.evaluate(assets[0].path, "nearest", asset_id=ids[0], deformation=False)[0]
    assert abs(direct["l1_top4"] - first[ids[0]]["l1_top4"]) < 1e-9
    with pytest.raises(FileExistsError, match="already exists"):
        batch.run(assets, settings, use_ray=False)
    again = {r["id"]: r for r in batch.run(assets, settings, use_ray=False, resume=True)}
    # The rows that succeeded are kept as they were (same worker and times); the failed one ran again.
    for i in ids:
        assert again[i]["total_s"] == first[i]["total_s"] and again[i]["worker"] == first[i]["worker"]
    assert not again["broken"]["ok"] and list(again) == ids + ["broken"]


def test_a_task_on_a_lost_node_is_retried_elsewhere(tmp_path):
    """Two nodes on loopback (ray.cluster_utils); the node running a task is killed mid-task
    after the first asset finished; the task runs again on the new node and every row is ok."""
    import ray
    from ray.cluster_utils import Cluster

    manifest, ids = small_manifest(tmp_path, count=4)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    first = cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address)
    killed = []

    def on_row(line):
        # After the first asset, the next one is running on `first`: take that node away at
        # once, then give the cluster a new one. (Adding the new node first took seconds, in
        # which `first` could finish every task left: one worker, no retry to see.)
        if line.startswith("[1/") and not killed:
            cluster.remove_node(first, allow_graceful=False)
            cluster.add_node(num_cpus=1)
            killed.append(True)

    settings = batch.Settings(method="voxel", max_influences=4, out=str(tmp_path / "out"), write="none",
                              metrics=False, deformation=False)
    try:
        rows = batch.run(batch.collect([str(manifest)]), settings, use_ray=True, retries=3, progress=on_row)
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert killed
    assert [r["id"] for r in rows] == ids
    assert all(r["ok"] for r in rows), [r["error"] for r in rows]
    assert len({r["worker"] for r in rows}) >= 2


@pytest.mark.parametrize(
    "flag",
    [["--max-influences", "0"], ["--retries", "-1"], ["--checkpoint", "0"], ["--checkpoint", "nan"], ["--num-cpus", "0"]],
)
def test_impossible_settings_are_refused_before_any_work(tmp_path, flag, capsys):
    with pytest.raises(SystemExit) as stopped:
        batch.main([str(tmp_path / "none.glb"), "-o", str(tmp_path / "out"), "--no-ray", *flag])
    assert stopped.value.code == 2
    assert flag[0] in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
