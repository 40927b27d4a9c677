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

/// A rig with no hand joints and IK feet (Quaternius' Ultimate Monsters): the report says which
/// joint plays each role and how the limbs end, so the mapping can be checked before the clip is
/// used.
#[test]
fn retarget_reports_the_targets_roles_and_unusual_limbs() {
    let dir = tempfile::tempdir().unwrap();
    let clip = common::asset("cmu_09_01_run");
    let report = |id: &str| -> Value {
        let to = common::asset(id);
        let out = format!("{id}.glb");
        let o = rigml(
            dir.path(),
            &["retarget", s(&clip), "--to", s(&to), "-o", &out, "--json"],
        );
        assert_ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = report("quaternius-ultimate-monsters-dino");
    assert_eq!(v["target_roles"]["leftUpperArm"], "UpperArm.L");
    assert_eq!(v["target_roles"]["leftHand"], "Middle1.L");
    assert_eq!(v["target_roles"]["rightFoot"], "Foot.R");
    let notes: Vec<&str> = v["target_notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(notes.len(), 4, "{notes:?}");
    assert!(
        notes[0].starts_with("left arm: no hand joint") && notes[0].contains("3 other finger"),
        "{notes:?}"
    );
    assert!(notes[2].starts_with("left leg: Foot.L is an IK target"), "{notes:?}");
    // A plain rig has none.
    let v = report("kaykit2-ranger");
    assert_eq!(v["target_notes"].as_array().map(Vec::len), Some(0));
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

/// FBX out of a retarget: the clip written to FBX (120 fps CMU motion on KayKit's Ranger) reads
/// back through ufbx with the GLB's vertices and weights, and poses the mesh as the GLB's clip
/// does at every frame, within 1e-5 of the character's size.
#[test]
fn retarget_to_fbx_round_trips_through_ufbx() {
    use rigml_core::{lbs, skinning_matrices, Character};
    let dir = tempfile::tempdir().unwrap();
    let clip = common::asset("cmu_09_01_run");
    let to = common::asset("kaykit2-ranger");
    for out in ["out.glb", "out.fbx"] {
        assert_ok(&rigml(dir.path(), &["retarget", s(&clip), "--to", s(&to), "-o", out]));
    }
    let glb = rigml_io::load(&dir.path().join("out.glb")).unwrap();
    let fbx = rigml_io::load(&dir.path().join("out.fbx")).unwrap();
    assert_eq!(fbx.mesh.vertex_count(), glb.mesh.vertex_count());
    assert_eq!(fbx.clips.len(), 1);
    let size = glb.size();
    let posed = |c: &Character, t: f32| {
        let pose = c.clips[0].sample(&c.skeleton, t);
        let m = skinning_matrices(&c.skeleton, &pose).unwrap();
        lbs(&c.mesh.positions, c.skin.as_ref().unwrap(), &m)
    };
    let clip = &glb.clips[0];
    let frames = clip.key_count();
    let mut worst = 0.0f32;
    for f in 0..frames {
        let t = clip.start() + clip.duration() * f as f32 / (frames - 1).max(1) as f32;
        let (a, b) = (posed(&glb, t), posed(&fbx, t));
        let d = a.iter().zip(&b).map(|(x, y)| x.distance(*y)).fold(0.0, f32::max);
        worst = worst.max(d / size);
    }
    println!("{frames} frames, worst posed distance {worst:.2e} of the size");
    assert!(worst <= 1e-5, "posed vertices differ by {worst:.2e} of the size");
}
