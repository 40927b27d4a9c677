//! End-to-end tests of the motion model's commands on real CMU clips: `rigml train-motion` on a
//! small manifest (two train clips, one val clip; a tiny network, a few steps), `rigml
//! eval-motion` with the model it wrote, and `rigml clean --method learned` with the built-in
//! model on a val subject's walk.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use run::{assert_clean_failure, assert_ok, rigml, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn clip(id: &str) -> PathBuf {
    common::rows_where("id", id)
        .first()
        .unwrap_or_else(|| panic!("{id} in the manifest"))
        .path()
}

/// `dir/manifest.tsv`: two train clips and one val clip, each from its own split.
fn small_manifest(dir: &Path) {
    let mut text = "id\tkind\tsplit\tpath\tformat\n".to_string();
    for (id, split) in [
        ("cmu_131_01_walk", "train"),
        ("cmu_131_02_walk", "train"),
        ("cmu_08_01_walk", "val"),
    ] {
        let row = common::rows_where("id", id);
        let row = row.first().unwrap_or_else(|| panic!("{id} in the manifest"));
        assert_eq!(row.get("split"), split, "{id} must come from the {split} split");
        text += &format!("{id}\tmotion\t{split}\t{}\tbvh\n", row.path().display());
    }
    std::fs::write(dir.join("manifest.tsv"), text).unwrap();
}

#[test]
fn train_motion_writes_a_model_that_eval_motion_scores() {
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    let tiny = "train-motion --data manifest.tsv --split train --val val -o m.safetensors --steps 6 --batch 2 \
                --window 32 --hidden 8 --copies 1 --val-every 3 --checkpoint-every 3 --json";
    let o = rigml(dir.path(), &tiny.split_whitespace().collect::<Vec<_>>());
    assert_ok(&o);
    let summary: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(summary["clips"], 2);
    assert_eq!(summary["val_clips"], 1);
    assert!(summary["final_val_loss"].as_f64().unwrap().is_finite());
    for f in ["m.safetensors", "m-curves.png", "m.safetensors.ckpt"] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    // Not clobbered without --force; resumed from the checkpoint with it.
    let o = rigml(dir.path(), &tiny.split_whitespace().collect::<Vec<_>>());
    assert!(!o.status.success() && stderr(&o).contains("exists"), "{}", stderr(&o));
    let resume = format!("{tiny} --force --resume m.safetensors.ckpt");
    assert_ok(&rigml(dir.path(), &resume.split_whitespace().collect::<Vec<_>>()));
    // Scored on the val clip at every noise level by every method.
    let o = rigml(
        dir.path(),
        &[
            "eval-motion",
            "--data",
            "manifest.tsv",
            "--split",
            "val",
            "--model",
            "m.safetensors",
            "--json",
        ],
    );
    assert_ok(&o);
    let report: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4 * 8, "4 noise levels × 8 methods");
    for r in rows {
        let e = r["mean"]["joint_error"].as_f64().unwrap();
        assert!(e.is_finite() && e >= 0.0, "{r}");
    }
    // The damaged clip at the heaviest level is further from the clean one than at the lightest.
    let error = |level: usize, method: &str| {
        rows.iter()
            .filter(|r| r["method"] == method)
            .nth(level)
            .map(|r| r["mean"]["joint_error"].as_f64().unwrap())
            .unwrap()
    };
    assert_eq!(error(0, "damaged"), 0.0);
    assert!(error(3, "damaged") > error(1, "damaged"));
    // In-betweens under both key layouts, by interpolation and the model.
    let inbetweens = report["inbetweens"].as_array().unwrap();
    for protocol in ["keys", "transitions"] {
        let rows: Vec<&Value> = inbetweens.iter().filter(|r| r["protocol"] == protocol).collect();
        assert_eq!(rows.len(), 3 * 2, "{protocol}: 3 gap lengths × 2 methods");
        assert!(
            rows.iter()
                .all(|r| r["joint_error"].as_f64().is_some_and(f64::is_finite)),
            "{rows:?}"
        );
    }
    // A file that is no motion model is refused by name.
    std::fs::write(dir.path().join("bad.safetensors"), b"not a model").unwrap();
    let o = rigml(
        dir.path(),
        &["eval-motion", "--data", "manifest.tsv", "--model", "bad.safetensors"],
    );
    assert_clean_failure(&o, "bad.safetensors");
}

#[test]
fn clean_learned_finds_contacts_and_writes_a_bvh() {
    let dir = tempfile::tempdir().unwrap();
    let walk = clip("cmu_08_01_walk");
    let walk = walk.to_str().unwrap();
    let o = rigml(
        dir.path(),
        &["clean", walk, "-o", "out.bvh", "--method", "learned", "--json"],
    );
    assert_ok(&o);
    let report: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(report["method"], "learned");
    let contacts = report["contacts"].as_array().unwrap();
    assert_eq!(contacts.len(), 4);
    // Both ankles touch the ground during a walk.
    for slot in [0, 2] {
        assert!(contacts[slot]["frames"].as_u64().unwrap() > 10, "{}", contacts[slot]);
    }
    let out = rigml_io::load(&dir.path().join("out.bvh")).unwrap();
    let input = rigml_io::load(Path::new(walk)).unwrap();
    assert_eq!(out.skeleton.names, input.skeleton.names);
    assert_eq!(out.clips[0].key_count(), input.clips[0].key_count());
    // Filter settings belong to the filter method; the output is not clobbered.
    let o = rigml(
        dir.path(),
        &["clean", walk, "-o", "x.bvh", "--method", "learned", "--cutoff", "4"],
    );
    assert!(
        !o.status.success() && stderr(&o).contains("--method filter"),
        "{}",
        stderr(&o)
    );
    let o = rigml(dir.path(), &["clean", walk, "-o", "out.bvh", "--method", "learned"]);
    assert!(
        !o.status.success() && stderr(&o).contains("already exists"),
        "{}",
        stderr(&o)
    );
    // Not a humanoid: refused with the file's name.
    let fox = clip("khronos-fox");
    let o = rigml(
        dir.path(),
        &["clean", fox.to_str().unwrap(), "-o", "fox.glb", "--method", "learned"],
    );
    assert_clean_failure(&o, "Fox");
    assert!(stderr(&o).contains("humanoid"), "{}", stderr(&o));
}

#[test]
fn inbetween_keeps_the_keys_and_fills_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let walk = clip("cmu_08_01_walk");
    let walk = walk.to_str().unwrap();
    let input = rigml_io::load(Path::new(walk)).unwrap();
    let skeleton = &input.skeleton;
    let frames = rigml_anim::cleanup::Frames::bake(skeleton, &input.clips[0]).unwrap();
    for method in ["interpolate", "learned"] {
        let out_name = format!("{method}.bvh");
        let o = rigml(
            dir.path(),
            &[
                "inbetween",
                walk,
                "--keys",
                "0,60,120,200",
                "--method",
                method,
                "-o",
                &out_name,
                "--json",
            ],
        );
        assert_ok(&o);
        let report: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        assert_eq!(report["filled"], 197);
        let out = rigml_io::load(&dir.path().join(&out_name)).unwrap();
        let baked = rigml_anim::cleanup::Frames::bake(&out.skeleton, &out.clips[0]).unwrap();
        assert_eq!(baked.len(), frames.len());
        let world = |f: &rigml_anim::cleanup::Frames, i: usize| skeleton.world_matrices(&f.poses[i]);
        // Key frames as given (within BVH's text precision), frames between them changed.
        for k in [0, 60, 120, 200] {
            let (a, b) = (world(&frames, k), world(&baked, k));
            let d = a
                .iter()
                .zip(&b)
                .map(|(x, y)| x.w_axis.distance(y.w_axis))
                .fold(0.0f32, f32::max);
            assert!(d < 1e-2, "{method}: key {k} moved by {d}");
        }
        let (a, b) = (world(&frames, 30), world(&baked, 30));
        let d = a
            .iter()
            .zip(&b)
            .map(|(x, y)| x.w_axis.distance(y.w_axis))
            .fold(0.0f32, f32::max);
        assert!(d > 1e-2, "{method}: frame 30 was not filled");
    }
    // Keys that do not make sense are refused with the file's name.
    let o = rigml(dir.path(), &["inbetween", walk, "--keys", "0,9999", "-o", "x.bvh"]);
    assert_clean_failure(&o, "08_01.bvh");
    assert!(stderr(&o).contains("past the clip's last frame"), "{}", stderr(&o));
    let o = rigml(dir.path(), &["inbetween", walk, "--keys", "0,40-30", "-o", "x.bvh"]);
    assert!(
        !o.status.success() && stderr(&o).contains("ends before it starts"),
        "{}",
        stderr(&o)
    );
    // Runs of keys (a transition between two held stretches, LAFAN1-style): at 120 fps several
    // keys fall on each of the model's frames; every one is kept, the gap between runs filled.
    let o = rigml(
        dir.path(),
        &[
            "inbetween",
            walk,
            "--keys",
            "0-40,100-140",
            "--method",
            "learned",
            "-o",
            "runs.bvh",
            "--json",
        ],
    );
    assert_ok(&o);
    let report: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(report["filled"], 59);
    let out = rigml_io::load(&dir.path().join("runs.bvh")).unwrap();
    let baked = rigml_anim::cleanup::Frames::bake(&out.skeleton, &out.clips[0]).unwrap();
    let moved = |i: usize| {
        let (a, b) = (
            skeleton.world_matrices(&frames.poses[i]),
            skeleton.world_matrices(&baked.poses[i]),
        );
        a.iter()
            .zip(&b)
            .map(|(x, y)| x.w_axis.distance(y.w_axis))
            .fold(0.0f32, f32::max)
    };
    for k in [0, 17, 40, 100, 123, 140] {
        assert!(moved(k) < 1e-2, "key {k} moved by {}", moved(k));
    }
    assert!(moved(70) > 1e-2, "frame 70 was not filled");
}
