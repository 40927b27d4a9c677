//! Property tests of the data model's invariants (proptest): whatever rows a reader hands to
//! [`Skin`], the result is a valid skin; dense and sparse forms agree; pruning keeps the
//! largest weights; TRS transforms survive a matrix round trip; linear-blend and
//! dual-quaternion skinning reproduce a rigid motion exactly when every joint makes it, and
//! leave the mesh where it is in the bind pose.

use glam::{EulerRot, Mat4, Quat, Vec3};
use proptest::prelude::*;
use rigml_core::{dqs, lbs, skinning_matrices, Pose, Skeleton, Skin, Transform};

/// Joints of the generated skins and skeletons.
const JOINTS: u32 = 12;

/// A raw reader row: up to 8 (joint, weight) pairs, duplicates and zeros allowed.
fn raw_row() -> impl Strategy<Value = Vec<(u32, f32)>> {
    prop::collection::vec((0..JOINTS, prop_oneof![Just(0.0f32), 0.0f32..10.0]), 0..8)
}

fn raw_rows() -> impl Strategy<Value = Vec<Vec<(u32, f32)>>> {
    prop::collection::vec(raw_row(), 1..40)
}

fn build(rows: &[Vec<(u32, f32)>], cap: usize) -> Skin {
    Skin::from_rows(rows.iter().map(Vec::as_slice), JOINTS as usize, cap).expect("valid raw rows build")
}

/// A rotation from three Euler angles (radians).
fn rotation() -> impl Strategy<Value = Quat> {
    (-3.1f32..3.1, -1.5f32..1.5, -3.1f32..3.1).prop_map(|(a, b, c)| Quat::from_euler(EulerRot::YXZ, a, b, c))
}

fn vec3(range: f32) -> impl Strategy<Value = Vec3> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// A random tree of `JOINTS` joints (each parent earlier in the list), rest = bind.
fn skeleton() -> impl Strategy<Value = Skeleton> {
    let joints = JOINTS as usize;
    (
        prop::collection::vec(0.0f64..1.0, joints),
        prop::collection::vec((vec3(0.5), rotation()), joints),
    )
        .prop_map(move |(parent_draws, locals)| {
            let parents: Vec<Option<usize>> = (0..joints)
                .map(|j| (j > 0).then(|| (parent_draws[j] * j as f64) as usize))
                .collect();
            let rest_local: Vec<Transform> = locals
                .iter()
                .map(|&(translation, rotation)| Transform {
                    translation,
                    rotation,
                    scale: Vec3::ONE,
                })
                .collect();
            let mut skeleton = Skeleton {
                names: (0..joints).map(|j| format!("joint{j}")).collect(),
                parents,
                rest_local,
                inverse_bind: vec![Mat4::IDENTITY; joints],
            };
            skeleton.inverse_bind = skeleton.rest_world().iter().map(|m| m.inverse()).collect();
            skeleton
        })
}

proptest! {
    #[test]
    fn any_raw_rows_make_a_valid_normalised_skin(rows in raw_rows(), cap in 1usize..6) {
        let skin = build(&rows, cap);
        prop_assert_eq!(skin.vertex_count(), rows.len());
        prop_assert!(skin.validate(rows.len(), JOINTS as usize).is_ok());
        for (v, raw) in rows.iter().enumerate() {
            let row = skin.influences(v);
            prop_assert!(row.len() <= cap);
            let raw_sum: f32 = raw.iter().map(|e| e.1).sum();
            prop_assert_eq!(row.is_empty(), raw_sum < 1e-8, "vertex {} raw {:?} row {:?}", v, raw, row);
            if !row.is_empty() {
                let sum: f32 = row.iter().map(|i| i.weight).sum();
                prop_assert!((sum - 1.0).abs() < 1e-5, "vertex {}: sum {}", v, sum);
            }
            for pair in row.windows(2) {
                prop_assert!(pair[0].weight >= pair[1].weight, "sorted: {:?}", row);
                prop_assert!(pair[0].joint != pair[1].joint);
            }
            let mut joints: Vec<u32> = row.iter().map(|i| i.joint).collect();
            joints.sort_unstable();
            joints.dedup();
            prop_assert_eq!(joints.len(), row.len(), "distinct joints: {:?}", row);
        }
    }

    #[test]
    fn dense_and_sparse_forms_agree(rows in raw_rows(), cap in 1usize..6) {
        let skin = build(&rows, cap);
        let dense = skin.to_dense(JOINTS as usize);
        let back = Skin::from_dense(&dense, JOINTS as usize, cap).unwrap();
        prop_assert_eq!(back.vertex_count(), skin.vertex_count());
        for v in 0..skin.vertex_count() {
            let (a, b) = (skin.influences(v), back.influences(v));
            prop_assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(b) {
                prop_assert_eq!(x.joint, y.joint);
                prop_assert!((x.weight - y.weight).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn pruning_keeps_the_largest_weights(rows in raw_rows(), cap in 1usize..4) {
        let skin = build(&rows, 8);
        let pruned = skin.pruned(cap).unwrap();
        for v in 0..skin.vertex_count() {
            let (full, kept) = (skin.influences(v), pruned.influences(v));
            prop_assert_eq!(kept.len(), full.len().min(cap));
            // Rows are sorted by weight (ties: lower joint first), so the kept joints are the
            // full row's first ones.
            for (x, y) in full.iter().zip(kept) {
                prop_assert_eq!(x.joint, y.joint);
            }
            let sum: f32 = kept.iter().map(|i| i.weight).sum();
            prop_assert!(kept.is_empty() || (sum - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn trs_survives_a_matrix_round_trip(t in vec3(10.0), r in rotation(), s in (0.1f32..5.0, 0.1f32..5.0, 0.1f32..5.0)) {
        let transform = Transform { translation: t, rotation: r, scale: Vec3::new(s.0, s.1, s.2) };
        let back = Transform::from_mat4(&transform.to_mat4());
        prop_assert!((back.translation - t).length() < 1e-4 * (1.0 + t.length()));
        prop_assert!((back.scale - transform.scale).length() < 1e-4 * (1.0 + transform.scale.length()));
        prop_assert!(back.rotation.dot(r).abs() > 1.0 - 1e-4, "{:?} vs {:?}", back.rotation, r);
    }

    #[test]
    fn the_bind_pose_leaves_the_mesh_in_place(skeleton in skeleton(), rows in prop::collection::vec(raw_row(), 30), points in prop::collection::vec(vec3(2.0), 30)) {
        let skin = build(&rows, 4);
        let m = skinning_matrices(&skeleton, &Pose::rest(&skeleton)).unwrap();
        for (moved, p) in lbs(&points, &skin, &m).iter().zip(&points) {
            prop_assert!((*moved - *p).length() < 1e-4, "lbs {} -> {}", p, moved);
        }
        for (moved, p) in dqs(&points, &skin, &m).iter().zip(&points) {
            prop_assert!((*moved - *p).length() < 1e-4, "dqs {} -> {}", p, moved);
        }
    }

    #[test]
    fn a_rigid_motion_of_every_joint_moves_the_mesh_rigidly(rows in prop::collection::vec(raw_row(), 30), points in prop::collection::vec(vec3(2.0), 30), r in rotation(), t in vec3(3.0)) {
        let skin = build(&rows, 4);
        let motion = Mat4::from_rotation_translation(r, t);
        let m = vec![motion; JOINTS as usize];
        for (v, (moved, p)) in lbs(&points, &skin, &m).iter().zip(&points).enumerate() {
            // Unskinned vertices keep their bind position; the rest follow the motion.
            let expected = if skin.influences(v).is_empty() { *p } else { motion.transform_point3(*p) };
            prop_assert!((*moved - expected).length() < 1e-4, "lbs vertex {}: {} vs {}", v, moved, expected);
        }
        for (v, (moved, p)) in dqs(&points, &skin, &m).iter().zip(&points).enumerate() {
            let expected = if skin.influences(v).is_empty() { *p } else { motion.transform_point3(*p) };
            prop_assert!((*moved - expected).length() < 1e-4, "dqs vertex {}: {} vs {}", v, moved, expected);
        }
    }
}
