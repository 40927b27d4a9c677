//! The learned placer with the embedded model: a valid skeleton on a val character with CD-J2J
//! (METRICS.md §5) under a measured bound, and errors (never panics) on broken meshes.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use glam::Vec3;
use rigml_core::Mesh;
use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet};
use rigml_rig::{LearnedPlacer, SkeletonPlacer};

/// Measured with the embedded model: 0.0544 (`rigml eval --split val --methods
/// rig-auto,rig-learned`, 24 joints for the GT 51); the bound leaves room for float differences.
const WOLF_CD_J2J: f64 = 0.06;

#[test]
fn the_embedded_model_places_a_valid_skeleton_in_the_val_wolf() {
    let rows = common::manifest();
    let row = rows
        .iter()
        .find(|r| r.id() == "quaternius-animals-wolf")
        .expect("wolf in the manifest");
    assert_eq!(row.get("split"), "val");
    let wolf = rigml_io::load(&row.path()).unwrap();
    let learned = LearnedPlacer::embedded().unwrap();
    let placed = learned.place(&wolf.mesh).unwrap();
    placed.validate().unwrap();
    let skeleton = placed.to_skeleton().unwrap();
    let (centre, scale) = normalisation(&wolf.mesh.positions).unwrap();
    let gt = JointSet::from_skeleton(&wolf.skeleton, centre, scale);
    let pred = JointSet::from_skeleton(&skeleton, centre, scale);
    let s = score(&pred, &gt).unwrap();
    println!(
        "wolf: {} joints (GT {}), CD-J2J {:.4}",
        placed.len(),
        wolf.skeleton.joint_count(),
        s.cd_j2j
    );
    assert!(s.cd_j2j <= WOLF_CD_J2J, "CD-J2J {:.4}", s.cd_j2j);
    // Same mesh, same skeleton.
    assert_eq!(learned.place(&wolf.mesh).unwrap(), placed);
}

#[test]
fn broken_meshes_are_errors_not_panics() {
    let learned = LearnedPlacer::embedded().unwrap();
    let mut mesh = Mesh::default();
    assert!(learned.place(&mesh).is_err(), "empty");
    mesh.positions = vec![Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)];
    mesh.triangles = vec![[0, 1, 2]];
    assert!(learned.place(&mesh).is_err(), "non-finite");
    mesh.positions = vec![Vec3::ONE; 3];
    assert!(learned.place(&mesh).is_err(), "a point");
    // Collinear corners: extent but no area.
    mesh.positions = vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0];
    let err = learned.place(&mesh).unwrap_err();
    assert!(err.to_string().contains("learned"), "{err}");
    // Indices out of range only.
    mesh.positions = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
    mesh.triangles = vec![[0, 1, 9]];
    assert!(learned.place(&mesh).is_err(), "out of range");
    // A lone flat triangle has area: a skeleton (or a clear error), no panic.
    mesh.triangles = vec![[0, 1, 2]];
    if let Ok(p) = learned.place(&mesh) {
        p.validate().unwrap();
    }
}
