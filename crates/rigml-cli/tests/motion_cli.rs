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
            "--library",
            "train",
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
        // The pooled contact F1 is the F1 of the counts written beside it.
        let c = &r["contact_counts"];
        let [hits, false_alarms, misses] =
            ["hits", "false_alarms", "misses"].map(|k| c[k].as_u64().unwrap_or_else(|| panic!("{r}")) as f64);
        let pooled = r["contact_f1_pooled"].as_f64().unwrap();
        let expected = if hits + false_alarms + misses == 0.0 {
            1.0
        } else {
            2.0 * hits / (2.0 * hits + false_alarms + misses)
        };
        assert!((pooled - expected).abs() < 1e-12, "{r}");
    }
    // The damaged clip itself finds every contact of the clean clip, and one clip's pooled F1
    // is its own F1.
    let clean_damaged = &rows[0];
    assert!(
        clean_damaged["contact_counts"]["hits"].as_u64().unwrap() > 0,
        "{clean_damaged}"
    );
    assert_eq!(clean_damaged["contact_f1_pooled"].as_f64(), Some(1.0));
    assert_eq!(report["clips"].as_array().unwrap().len(), 1);
    for r in rows {
        assert!((r["contact_f1_pooled"].as_f64().unwrap() - r["mean"]["contact_f1"].as_f64().unwrap()).abs() < 1e-12);
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
    // In-betweens under both key layouts, by interpolation, the model and retrieval from the
    // train clips.
    let inbetweens = report["inbetweens"].as_array().unwrap();
    for protocol in ["keys", "transitions"] {
        let rows: Vec<&Value> = inbetweens.iter().filter(|r| r["protocol"] == protocol).collect();
        assert_eq!(rows.len(), 3 * 3, "{protocol}: 3 gap lengths × 3 methods");
        assert_eq!(rows.iter().filter(|r| r["method"] == "retrieval").count(), 3);
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

/// Mean distance of every joint from the clip's own, over the frames that are not keys.
fn error_between_keys(
    skeleton: &rigml_core::Skeleton,
    a: &rigml_anim::cleanup::Frames,
    b: &rigml_anim::cleanup::Frames,
    keys: &[usize],
) -> f32 {
    let (mut sum, mut count) = (0.0f32, 0usize);
    for f in (keys[0]..=keys[keys.len() - 1]).filter(|f| !keys.contains(f)) {
        let (x, y) = (
            skeleton.world_matrices(&a.poses[f]),
            skeleton.world_matrices(&b.poses[f]),
        );
        for (p, q) in x.iter().zip(&y) {
            sum += p.w_axis.distance(q.w_axis);
            count += 1;
        }
    }
    sum / count.max(1) as f32
}

#[test]
fn inbetween_retrieves_from_a_motion_library() {
    let dir = tempfile::tempdir().unwrap();
    // A val subject's walk, keys half a second apart, filled from four train walks (other
    // subjects): two named as files, two found in a folder.
    let walk = clip("cmu_08_01_walk");
    let walk = walk.to_str().unwrap();
    let folder = dir.path().join("mocap");
    std::fs::create_dir(&folder).unwrap();
    for id in ["cmu_07_01_walk", "cmu_07_02_walk"] {
        let path = clip(id);
        std::fs::copy(&path, folder.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::write(folder.join("notes.txt"), "not a clip").unwrap();
    let (lib_a, lib_b) = (clip("cmu_131_01_walk"), clip("cmu_07_03_walk"));
    let keys: Vec<usize> = (0..=240).step_by(60).collect();
    let input = rigml_io::load(Path::new(walk)).unwrap();
    let frames = rigml_anim::cleanup::Frames::bake(&input.skeleton, &input.clips[0]).unwrap();
    let mut errors = Vec::new();
    for method in ["interpolate", "retrieval"] {
        let out = format!("{method}.bvh");
        let mut args = vec![
            "inbetween",
            walk,
            "--keys",
            "0,60,120,180,240",
            "--method",
            method,
            "-o",
            &out,
            "--json",
        ];
        if method == "retrieval" {
            args.extend(["--library", lib_a.to_str().unwrap(), lib_b.to_str().unwrap(), "mocap"]);
        }
        let o = rigml(dir.path(), &args);
        assert_ok(&o);
        let report: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        if method == "retrieval" {
            assert_eq!(report["library_clips"], 4, "{report}");
        }
        let result = rigml_io::load(&dir.path().join(&out)).unwrap();
        let baked = rigml_anim::cleanup::Frames::bake(&result.skeleton, &result.clips[0]).unwrap();
        assert!(
            error_between_keys(&input.skeleton, &frames, &baked, &[0]) < 1e-2,
            "{method}: key 0 moved"
        );
        errors.push(error_between_keys(&input.skeleton, &frames, &baked, &keys));
    }
    // Walks found in the library follow the walk's steps between keys; interpolation cuts them.
    assert!(
        errors[1] < 0.8 * errors[0],
        "retrieval {} against interpolation {}",
        errors[1],
        errors[0]
    );
    // A library with no clip in it, a library path that does not exist, and --library without
    // retrieval are refused.
    let retrieve_from = |library: &[&str]| {
        let mut args = vec!["inbetween", walk, "--every", "60", "--method", "retrieval", "--library"];
        args.extend(library);
        args.extend(["-o", "x.bvh"]);
        rigml(dir.path(), &args)
    };
    assert_clean_failure(&retrieve_from(&["mocap/notes.txt"]), "notes.txt");
    assert_clean_failure(&retrieve_from(&["mocap", "moca"]), "moca: no such file or folder");
    let o = rigml(
        dir.path(),
        &["inbetween", walk, "--every", "60", "--library", "mocap", "-o", "x.bvh"],
    );
    assert_clean_failure(&o, "--library");
    assert!(!dir.path().join("x.bvh").exists());
}
