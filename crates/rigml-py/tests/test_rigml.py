"""Tests of the installed `rigml` wheel, on real characters read through the manifest.

Run by `cargo test -p rigml-cli --test python` (which gives RIGML_BIN, the CLI built from the same
sources, and RIGML_DATA) with the interpreter of a venv the wheel was installed into.
"""

import csv
import os
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rigml

DATA = Path(os.environ.get("RIGML_DATA", Path(__file__).resolve().parents[3] / ".." / "shared" / "data"))
BIN = os.environ.get("RIGML_BIN")


def manifest_rows(split, kind="character"):
    with open(DATA / "manifest.tsv", newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r["split"] == split and r["kind"] == kind]


def val_character(fmt="glb"):
    """The first val character of the manifest in format `fmt`."""
    row = next(r for r in manifest_rows("val") if r["format"] == fmt)
    return row["id"], DATA / row["path"]


def dense(joints, weights, joint_count):
    out = np.zeros((joints.shape[0], joint_count), np.float64)
    rows, slots = np.nonzero(joints >= 0)
    out[rows, joints[rows, slots]] = weights[rows, slots]
    return out


def test_imports_and_names():
    assert set(rigml.METHODS) == {"learned", "nearest", "heat", "voxel"}
    assert "detect" in rigml.TEMPLATES
    assert rigml.__version__


@pytest.mark.skipif(BIN is None, reason="RIGML_BIN (the rigml CLI) not given")
@pytest.mark.parametrize("method", ["learned", "heat"])
def test_skin_weights_equal_the_cli(tmp_path, method):
    _, path = val_character()
    character = rigml.load(path)
    out = tmp_path / "cli.glb"
    subprocess.run([BIN, "skin", str(path), "--method", method, "-o", str(out)], check=True, capture_output=True)
    cli = rigml.load(out).weights
    result = rigml.skin_weights(character.vertices, character.triangles, character.skeleton, method=method)
    joints = len(character.joint_names)
    difference = np.abs(dense(*cli, joints) - dense(result.joints, result.weights, joints)).max()
    assert difference <= 1e-6, difference
    assert result.unweighted == 0
    assert result.method == method
    assert result.weights.dtype == np.float32 and result.joints.dtype == np.int32
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, atol=1e-5)


def test_any_float_dtype_and_shuffled_joints_give_the_same_weights():
    _, path = val_character()
    c = rigml.load(path)
    s = c.skeleton
    base = rigml.skin_weights(c.vertices, c.triangles, s, method="nearest")
    again = rigml.skin_weights(c.vertices.astype(np.float64), c.triangles.astype(np.int32), s, method="nearest")
    np.testing.assert_array_equal(base.joints, again.joints)
    np.testing.assert_allclose(base.weights, again.weights, atol=1e-6)
    # The same joints listed children first: the weights name the caller's own indices.
    order = np.arange(len(s.names))[::-1]
    back = np.argsort(order)
    shuffled = rigml.Skeleton(
        names=[s.names[i] for i in order],
        parents=[-1 if s.parents[i] < 0 else int(back[s.parents[i]]) for i in order],
        positions=np.asarray(s.positions)[order],
    )
    r = rigml.skin_weights(c.vertices, c.triangles, shuffled, method="nearest")
    joints = len(s.names)
    differs = np.abs(dense(base.joints, base.weights, joints) - dense(r.joints, r.weights, joints)[:, back]) > 1e-6
    # Bones at exactly equal distance are told apart by joint order, which the shuffle changes
    # (14 of 7.7k rows on the Ranger); a wrong index mapping would change nearly every row.
    assert differs.any(axis=1).mean() < 0.01, differs.any(axis=1).sum()


def test_deform_mask_and_locked_groups():
    _, path = val_character()
    c = rigml.load(path)
    s = c.skeleton
    joints = len(s.names)
    existing = c.weights
    # Lock the heaviest joint of the file's own weights; half the joints do not deform.
    heaviest = int(np.bincount(existing[0][existing[0] >= 0], weights=existing[1][existing[0] >= 0]).argmax())
    deform = [j % 2 == 0 or j == heaviest for j in range(joints)]
    s.deform = deform
    r = rigml.skin_weights(
        c.vertices, c.triangles, s, method="heat", locked=[s.names[heaviest]], existing=existing, max_influences=4
    )
    got = dense(r.joints, r.weights, joints)
    before = dense(*existing, joints)
    np.testing.assert_allclose(got[:, heaviest], before[:, heaviest], atol=1e-5)
    non_deform = [j for j in range(joints) if not deform[j]]
    assert np.all(got[:, non_deform] == 0.0)
    assert not r.solved_joints[heaviest]
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-5)


def test_progress_is_called_and_can_cancel():
    _, path = val_character()
    c = rigml.load(path)
    seen = []
    rigml.skin_weights(c.vertices, c.triangles, c, method="nearest", progress=lambda s, f: seen.append((s, f)))
    assert [s for s, _ in seen] == ["prepare", "solve", "combine", "done"]
    assert seen[-1][1] == 1.0
    with pytest.raises(ValueError, match="cancelled"):
        rigml.skin_weights(c.vertices, c.triangles, c, method="nearest", progress=lambda s, f: s != "solve")

    def boom(stage, fraction):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        rigml.skin_weights(c.vertices, c.triangles, c, method="nearest", progress=boom)


def test_a_cancel_flag_stops_the_solver_itself():
    _, path = val_character()
    c = rigml.load(path)
    for method in ["heat", "voxel"]:
        flag = rigml.Cancel()
        assert not flag.cancelled

        # The stage hook lets the solve start; only the flag, set as it starts, can stop it.
        def start(stage, fraction, flag=flag):
            if stage == "solve":
                flag.cancel()
            return True

        with pytest.raises(ValueError, match="cancelled"):
            rigml.skin_weights(c.vertices, c.triangles, c, method=method, progress=start, cancel=flag)
        assert flag.cancelled


def test_bad_input_raises_value_error_with_rigml_message(tmp_path):
    _, path = val_character()
    c = rigml.load(path)
    with pytest.raises(ValueError, match="unknown method"):
        rigml.skin_weights(c.vertices, c.triangles, c, method="paint")
    with pytest.raises(ValueError, match=r"vertices: expected shape \(n, 3\)"):
        rigml.skin_weights(c.vertices[:, :2], c.triangles, c)
    bad = c.triangles.copy()
    bad[3, 1] = len(c.vertices)
    with pytest.raises(ValueError, match=r"triangles\[3\]\[1\]"):
        rigml.skin_weights(c.vertices, bad, c)
    nan = c.vertices.copy()
    nan[5, 0] = np.nan
    with pytest.raises(ValueError, match=r"vertices\[5\]: not finite"):
        rigml.skin_weights(nan, c.triangles, c)
    with pytest.raises(ValueError, match="max_influences"):
        rigml.skin_weights(c.vertices, c.triangles, c, max_influences=0)
    with pytest.raises(ValueError, match="no joint called"):
        rigml.skin_weights(c.vertices, c.triangles, c, locked=["no such bone"], existing=c.weights)
    missing = tmp_path / "missing.glb"
    with pytest.raises(ValueError, match="missing.glb"):
        rigml.load(missing)
    broken = tmp_path / "broken.glb"
    broken.write_bytes(b"glTF\x02\x00\x00\x00garbage")
    with pytest.raises(ValueError, match="broken.glb"):
        rigml.load(broken)
    # save never replaces a file without force
    rigml.save(c, tmp_path / "a.glb")
    with pytest.raises(ValueError, match="already exists"):
        rigml.save(c, tmp_path / "a.glb")
    rigml.save(c, tmp_path / "a.glb", force=True)


def test_the_gil_is_released_while_solving():
    _, path = val_character()
    c = rigml.load(path)
    done = threading.Event()

    def solve():
        for _ in range(3):
            rigml.skin_weights(c.vertices, c.triangles, c, method="voxel")
        done.set()

    worker = threading.Thread(target=solve)
    started = time.perf_counter()
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - started
    # With the GIL held by the solver this loop could not run while it solves.
    assert elapsed > 0.05
    assert ticks > elapsed * 100, (ticks, elapsed)


def test_rig_a_bare_mesh_and_save_it(tmp_path):
    _, path = val_character()
    c = rigml.load(path)
    rigged, template = rigml.rig(c.vertices, c.triangles, template="detect", method="nearest")
    assert template in ("humanoid", "auto")
    assert len(rigged.joint_names) > 3
    joints, weights = rigged.weights
    assert joints.shape[0] == len(c.vertices)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    out = tmp_path / "rigged.glb"
    rigml.save(rigged, out)
    back = rigml.load(out)
    assert back.joint_names == rigged.joint_names


def test_evaluate_scores_a_file():
    asset, path = val_character()
    rows = rigml.evaluate(path, ["nearest", "rig-humanoid"], asset_id=asset, deformation=False)
    assert [r["method"] for r in rows] == ["nearest", "rig-humanoid"]
    nearest = rows[0]
    assert nearest["asset"] == asset
    assert 0.0 < nearest["precision_top4"] <= 1.0 and 0.0 <= nearest["l1_top4"] <= 2.0
    assert "cd_j2j" in rows[1]
    with pytest.raises(ValueError, match="unknown method"):
        rigml.evaluate(path, "paint")


def test_character_from_arrays_saves_and_reads_back(tmp_path):
    _, path = val_character()
    c = rigml.load(path)
    made = rigml.character(c.vertices.astype(np.float64), c.triangles, c.skeleton, c.weights, name="made")
    out = tmp_path / "made.glb"
    rigml.save(made, out)
    back = rigml.load(out)
    np.testing.assert_allclose(back.vertices, c.vertices, atol=1e-6)
    np.testing.assert_array_equal(back.triangles, c.triangles)
    joints = len(c.joint_names)
    order = [back.joint_names.index(n) for n in c.joint_names]
    np.testing.assert_allclose(dense(*back.weights, joints)[:, order], dense(*c.weights, joints), atol=1e-6)
    bare = rigml.character(c.vertices, c.triangles)
    assert bare.joint_names == [] and bare.weights is None
    with pytest.raises(ValueError, match="weights need a skeleton"):
        rigml.character(c.vertices, c.triangles, weights=c.weights)


def test_locked_weights_need_not_sum_to_one():
    # A DCC passes only its locked groups: 0.3 on one joint, nothing else. The solved joints
    # share the other 0.7; the locked 0.3 is not inflated to 1.
    _, path = val_character()
    c = rigml.load(path)
    n, joints = len(c.vertices), len(c.joint_names)
    locked_joint = int(np.argmax(np.bincount(c.weights[0][c.weights[0] >= 0], minlength=joints)))
    existing = (np.full((n, 1), locked_joint), np.full((n, 1), 0.3, np.float32))
    r = rigml.skin_weights(c.vertices, c.triangles, c, method="nearest", locked=[locked_joint], existing=existing)
    got = dense(r.joints, r.weights, joints)
    np.testing.assert_allclose(got[:, locked_joint], 0.3, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-5)
