//! End-to-end tests of `rigml retarget` and `rigml ikrig` on the real assets.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use run::{assert_ok, rigml, stderr};

use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn retarget_writes_an_animated_character_and_refuses_to_clobber() {
    let dir = tempfile::tempdir().unwrap();
    let clip = common::asset("cmu_09_01_run");
    let to = common::asset("kaykit2-ranger");
    let args = ["retarget", s(&clip), "--to", s(&to), "-o", "out.glb", "--json"];
    let o = rigml(dir.path(), &args);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["frames"], 149);
    assert_eq!(v["mode"], "ikrig");
    let out = rigml_io::load(&dir.path().join("out.glb")).unwrap();
    assert_eq!(out.clips.len(), 1);
    assert_eq!(out.clips[0].key_count(), 149);
    // Same output again without --force: refused, file named, nothing overwritten.
    let o = rigml(dir.path(), &args);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("out.glb"), "{}", stderr(&o));
    let o = rigml(
        dir.path(),
        &["retarget", s(&clip), "--to", s(&to), "-o", "fk.glb", "--mode", "fk"],
    );
    assert_ok(&o);
}

#[test]
fn bad_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let clip = common::asset("cmu_09_01_run");
    // A quadruped with humanoid joint names maps by name but is refused as not upright.
    let fox = common::asset("khronos-fox");
    let o = rigml(dir.path(), &["retarget", s(&clip), "--to", s(&fox), "-o", "x.glb"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: ") && err.contains("Fox") && err.contains("upright"),
        "{err}"
    );
    // A broken map file: named with its line.
    std::fs::write(dir.path().join("map.txt"), "hips hip\nelbow lForeArm\n").unwrap();
    let to = common::asset("kaykit2-ranger");
    let o = rigml(
        dir.path(),
        &["retarget", s(&clip), "--map", "map.txt", "--to", s(&to), "-o", "x.glb"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("map.txt: line 2"), "{}", stderr(&o));
    assert!(!dir.path().join("x.glb").exists());
}

#[test]
fn ikrig_encode_then_decode() {
    let dir = tempfile::tempdir().unwrap();
    let clip = common::asset("cmu_09_01_run");
    assert_ok(&rigml(dir.path(), &["ikrig", "encode", s(&clip), "-o", "run.csv"]));
    assert_ok(&rigml(dir.path(), &["ikrig", "encode", s(&clip), "-o", "run.npy"]));
    let npy = std::fs::read(dir.path().join("run.npy")).unwrap();
    assert!(npy.starts_with(b"\x93NUMPY"));
    let to = common::asset("godot-mannequiny");
    let o = rigml(
        dir.path(),
        &["ikrig", "decode", "run.csv", "--to", s(&to), "-o", "run.glb", "--json"],
    );
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["frames"], 149);
    // A damaged table is refused with its line.
    let text = std::fs::read_to_string(dir.path().join("run.csv")).unwrap();
    let broken: String = text.lines().take(5).map(|l| format!("{l}\n")).collect::<String>() + "1,2,3\n";
    std::fs::write(dir.path().join("bad.csv"), broken).unwrap();
    let o = rigml(
        dir.path(),
        &["ikrig", "decode", "bad.csv", "--to", s(&to), "-o", "b.glb"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.csv: line 6"), "{}", stderr(&o));
}
