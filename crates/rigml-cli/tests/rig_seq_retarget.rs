//! Issue 33's humanoid check through the `rigml` binary: a train humanoid's walk baked to OBJ
//! frames (no rig left, its T-pose written beside them as `reference.obj`, as captures come),
//! rigged by `rigml rig-seq --rest`, and the result retargeted onto another humanoid. The
//! original clip goes onto the same humanoid with the same command; both are scored with the
//! METRICS.md §7 foot metrics (crates/rigml-rig/tests/feet): the sequence's rig must skate no
//! more; its penetration, worse today, is bounded.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
#[allow(dead_code)] // assert_no_worse checks more than this test asks for
#[path = "../../rigml-rig/tests/feet/mod.rs"]
mod feet;
mod run;

use rigml_anim::retarget::rig_for;
use rigml_core::{Character, Mesh};
use run::{assert_ok, rigml};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Write `positions` over `triangles` as a bare OBJ mesh.
fn write_obj(path: &Path, positions: &[glam::Vec3], triangles: &[[u32; 3]]) {
    let character = Character {
        name: "frame".into(),
        mesh: Mesh {
            positions: positions.to_vec(),
            triangles: triangles.to_vec(),
            ..Mesh::default()
        },
        ..Character::default()
    };
    std::fs::write(path, rigml_io::obj::to_obj(&character)).unwrap();
}

#[test]
fn a_humanoid_sequence_rigged_by_rig_seq_retargets_as_well_as_its_source_clip() {
    let dir = tempfile::tempdir().unwrap();
    let source = common::asset("kaykit1-knight");
    let knight = rigml_io::load(&source).unwrap();
    let clip_name = "Walking_A";
    let clip = knight
        .clips
        .iter()
        .position(|c| c.name == clip_name)
        .expect("the Knight has a walk");
    let options = rigml_io::sequence::SequenceOptions { clip, frames: None };
    let baked = rigml_io::sequence::bake(&knight, &options, &source).unwrap();
    let walk = dir.path().join("walk");
    std::fs::create_dir(&walk).unwrap();
    for (f, positions) in baked.sequence.frames.iter().enumerate() {
        write_obj(
            &walk.join(format!("frame_{f:03}.obj")),
            positions,
            &baked.sequence.triangles,
        );
    }
    write_obj(
        &walk.join("reference.obj"),
        &knight.mesh.positions,
        &baked.sequence.triangles,
    );

    let fps = format!("{}", baked.sequence.fps.unwrap_or(30.0));
    let o = rigml(
        dir.path(),
        &[
            "rig-seq",
            "walk",
            "--rest",
            "walk/reference.obj",
            "--fps",
            &fps,
            "-o",
            "seq.glb",
            "--json",
        ],
    );
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["template"], "humanoid", "the T-pose is rigged as a humanoid: {v}");
    assert_eq!(v["frames"].as_u64(), Some(baked.sequence.frames.len() as u64));
    println!("rig-seq: RMSE {} per round {}", v["rmse"], v["rmse_per_round"]);

    let target = common::asset("godot-mannequiny");
    let h = rig_for(&rigml_io::load(&target).unwrap().skeleton, &[], "mannequiny")
        .unwrap()
        .hip_height;
    assert_ok(&rigml(
        dir.path(),
        &["retarget", "seq.glb", "--to", s(&target), "-o", "from-seq.glb"],
    ));
    assert_ok(&rigml(
        dir.path(),
        &[
            "retarget",
            s(&source),
            "--clip-name",
            clip_name,
            "--to",
            s(&target),
            "-o",
            "from-clip.glb",
        ],
    ));
    let score = |name: &str| {
        let back = rigml_io::load(&dir.path().join(name)).unwrap();
        back.validate().unwrap();
        feet::score(&back, h)
    };
    let (a, r) = (score("from-seq.glb"), score("from-clip.glb"));
    println!("Knight {clip_name} via rig-seq vs the clip: {}", feet::report(&a, &r));
    assert_eq!(a.frames, r.frames);
    // Issue 33 asks for foot skate no worse (joints and soles, with feet::assert_no_worse's
    // tolerance; this walk has few §7 contact frames, so skate is a weak check here).
    let no_worse = |ours: f64, clip: f64| ours <= clip * 1.05 + 0.002;
    assert!(no_worse(a.skate, r.skate), "joint skate: {}", feet::report(&a, &r));
    assert!(
        no_worse(a.mesh_skate, r.mesh_skate),
        "sole skate: {}",
        feet::report(&a, &r)
    );
    // Penetration is worse than the clip's (measured 0.0080 H against 0.0012 H at the joints,
    // 0.028 H against 0.014 H at the mesh: the template's hips and ankles sit apart from the
    // artist's, and the encoding carries that over); bounded so that a regression shows. With
    // joints moved to the sequence's pivots it was 0.015 H and 0.051 H, and the legs splayed.
    assert!(a.depth <= r.depth + 0.01, "joint penetration: {}", feet::report(&a, &r));
    assert!(
        a.mesh_depth <= r.mesh_depth + 0.02,
        "mesh penetration: {}",
        feet::report(&a, &r)
    );
    assert!(
        a.mesh_lowest <= r.mesh_lowest.max(0.0) + 0.02,
        "floating: {}",
        feet::report(&a, &r)
    );
}
