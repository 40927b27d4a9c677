//! End-to-end tests of `rigml decompose` and `rigml skin-seq`: run as a user would, check the
//! written file, the JSON summary and the failures.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use run::{assert_clean_failure, assert_ok, rigml};

use serde_json::Value;

#[test]
fn decompose_fox_walk_writes_a_rig_and_refuses_to_clobber() {
    let row = common::rows_where("id", "fox_walk")
        .into_iter()
        .next()
        .expect("fox_walk row");
    let input = row.path();
    let input = input.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "decompose",
        input,
        "--bones",
        "12",
        "--iterations",
        "5",
        "-o",
        "fox.glb",
        "--json",
    ];
    let o = rigml(dir.path(), &args);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["frames"], 18);
    assert_eq!(v["vertices"], 290);
    let rmse = v["rmse"].as_f64().unwrap();
    // The fox is itself linear blend skinned with 24 joints; 12 bones leave a small error.
    assert!(rmse > 0.0 && rmse < 0.02, "{v}");
    assert!(v["bones"].as_u64().unwrap() <= 12);
    let back = rigml_io::load(&dir.path().join("fox.glb")).unwrap();
    assert_eq!(back.mesh.vertex_count(), 290);
    assert_eq!(back.clips[0].key_count(), 18);
    // Again without --force: refused, file named.
    let o = rigml(dir.path(), &args);
    assert_clean_failure(&o, "fox.glb");
}

#[test]
fn decompose_reports_bad_sequences_by_file() {
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    std::fs::create_dir(&seq).unwrap();
    let tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 3 4\n";
    std::fs::write(seq.join("frame_000.obj"), tri).unwrap();
    std::fs::write(seq.join("frame_001.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    let o = rigml(dir.path(), &["decompose", "seq", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "frame_001.obj");
    let o = rigml(dir.path(), &["decompose", "missing", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "missing");
    let o = rigml(dir.path(), &["decompose", "seq", "--truth", "-o", "out.glb"]);
    assert_clean_failure(&o, "seq");
    // Alembic: a damaged cache, an HDF5 one, and --truth (a cache has no rig to compare with).
    std::fs::write(
        dir.path().join("bad.abc"),
        b"Ogawa\xff\x00\x01\x10\0\0\0\0\0\0\0garbage",
    )
    .unwrap();
    let o = rigml(dir.path(), &["decompose", "bad.abc", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "bad.abc");
    std::fs::write(dir.path().join("old.abc"), b"\x89HDF\r\n\x1a\n\0\0\0\0\0\0\0\0").unwrap();
    let o = rigml(dir.path(), &["decompose", "old.abc", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "HDF5 Alembic is not supported; re-export as Ogawa");
    let o = rigml(dir.path(), &["decompose", "bad.abc", "--truth", "-o", "out.glb"]);
    assert_clean_failure(&o, "not a mesh cache");
    assert!(!dir.path().join("out.glb").exists());
}

#[test]
fn skin_seq_per_frame_and_consistent_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    assert_ok(&rigml(dir.path(), &["demo", "-o", "."]));
    let base = [
        "skin-seq",
        "rigml-demo.glb",
        "--frames",
        "4",
        "--method",
        "nearest",
        "--json",
    ];
    let o = rigml(dir.path(), &base);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["mode"].as_str(), v["frames"].as_u64()), (Some("per-frame"), Some(4)));
    // Nearest-bone weights change with the pose (measured 161.4 summed over 4822 vertices).
    assert!(v["tse"].as_f64().unwrap() > 1.0, "{v}");
    let mut consistent = base.to_vec();
    consistent.push("--consistent");
    let o = rigml(dir.path(), &consistent);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tse"].as_f64(), Some(0.0));
    let rmse = v["lbs_rmse"].as_f64().unwrap();
    assert!(rmse.is_finite() && rmse < 0.1, "{v}");
}
