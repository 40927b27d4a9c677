//! End-to-end tests of `rigml clean` on a real CMU walk (train split): the report, the written
//! file, and failures that name the file.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use run::{assert_clean_failure, assert_ok, rigml, stderr};

use rigml_anim::cleanup::{synthetic, Frames, Leg};
use rigml_anim::retarget::rig_for;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn walk() -> PathBuf {
    let rows = common::rows_where("id", "cmu_131_01_walk");
    rows.first().expect("cmu_131_01_walk in the manifest").path()
}

/// The walk with seeded rotation jitter (0.2°) and root drift during contacts (0.1 H/s), as BVH.
fn damaged_walk(dir: &Path) -> PathBuf {
    let mut character = rigml_io::load(&walk()).unwrap();
    let skeleton = &character.skeleton;
    let clip = character.clips[0].clone();
    let info = rig_for(skeleton, &[], "walk").unwrap();
    let legs = Leg::from_humanoid(&info.map, skeleton).unwrap();
    let h = info.hip_height;
    let mut frames = Frames::bake(skeleton, &clip).unwrap();
    let damage = synthetic::Damage {
        seed: 11,
        jitter_degrees: 0.2,
        drift_speed: 0.1,
    };
    synthetic::damage(skeleton, &mut frames, &clip, &legs, h, &damage).unwrap();
    character.clips[0] = frames.to_clip(&clip);
    let path = dir.join("damaged.bvh");
    rigml_io::save(&character, &path, rigml_io::SaveOptions::default()).unwrap();
    path
}

fn number(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} is not a number in {v}"))
}

#[test]
fn clean_reduces_jitter_and_skate_and_writes_a_bvh() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = damaged_walk(dir.path());
    let o = rigml(dir.path(), &["clean", "damaged.bvh", "-o", "clean.bvh", "--json"]);
    assert_ok(&o);
    let report: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let (jb, ja) = (
        number(&report, &["before", "jitter"]),
        number(&report, &["after", "jitter"]),
    );
    let (sb, sa) = (
        number(&report, &["before", "foot_skate_floor"]),
        number(&report, &["after", "foot_skate_floor"]),
    );
    assert!(ja < 0.05 * jb, "jitter {jb} -> {ja}");
    assert!(sa < 0.5 * sb, "floor-relative skate {sb} -> {sa}");
    let legs = report["legs"].as_array().unwrap();
    assert_eq!(legs.len(), 2);
    for leg in legs {
        for c in leg["contacts"].as_array().unwrap() {
            assert!(c["intervals"].as_array().unwrap().len() >= 3, "{c}");
        }
    }
    // The written clip reads back with the same skeleton and frame count.
    let a = rigml_io::load(&damaged).unwrap();
    let b = rigml_io::load(&dir.path().join("clean.bvh")).unwrap();
    assert_eq!(a.skeleton.names, b.skeleton.names);
    assert_eq!(a.clips[0].key_count(), b.clips[0].key_count());
    // Not clobbered without --force; the text report names contacts and the measures.
    let again = rigml(dir.path(), &["clean", "damaged.bvh", "-o", "clean.bvh"]);
    assert_clean_failure(&again, "clean.bvh");
    let text = rigml(
        dir.path(),
        &[
            "clean",
            "damaged.bvh",
            "-o",
            "clean.bvh",
            "--force",
            "--filter",
            "savgol",
        ],
    );
    assert_ok(&text);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("LeftAnkle") && text.contains("foot skate") && text.contains("savgol"),
        "{text}"
    );
}

#[test]
fn bad_input_and_parameters_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.bvh"), "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0").unwrap();
    assert_clean_failure(
        &rigml(dir.path(), &["clean", "broken.bvh", "-o", "x.bvh"]),
        "broken.bvh",
    );
    assert_clean_failure(
        &rigml(dir.path(), &["clean", "missing.bvh", "-o", "x.bvh"]),
        "missing.bvh",
    );
    let walk = walk();
    let walk = walk.to_str().unwrap();
    // A cutoff above the Nyquist frequency (60 Hz at 120 fps).
    let o = rigml(dir.path(), &["clean", walk, "-o", "x.bvh", "--cutoff", "80"]);
    assert_clean_failure(&o, "cmu_131_01_walk.bvh");
    assert!(stderr(&o).contains("Nyquist"), "{}", stderr(&o));
    let o = rigml(
        dir.path(),
        &["clean", walk, "-o", "x.bvh", "--filter", "savgol", "--window", "4"],
    );
    assert_clean_failure(&o, "cmu_131_01_walk.bvh");
    // A negative step limit is refused where the command line is read (exit status 2).
    let o = rigml(dir.path(), &["clean", walk, "-o", "x.bvh", "--max-step=-5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--max-step"), "{}", stderr(&o));
    assert!(!dir.path().join("x.bvh").exists());
}
