//! What a rig that replaces a file's own skeleton keeps of the file: where it shows its mesh
//! ([`shown_placement`], [`place_in_scene`]) and the meshes its joints carried ([`reattach`]).
//!
//! A skinned mesh is drawn through its joints: glTF ignores a skinned mesh node's transform,
//! and the vertices are stored in bind space. Many files keep a whole-character transform in
//! the skeleton: Blender's glTF exports of the Quaternius characters store Z-up vertices under
//! an armature turned −90° about X and scaled 100×, which rigml's reader bakes into the root
//! joint. [`crate::rig`] places a new skeleton in bind space, so without that transform a
//! rigged Quaternius spider came out 1/100 of its size, lying on its back. [`shown_placement`]
//! reads the transform from the file's root joint, and [`place_in_scene`] gives it to the new
//! skeleton's roots; vertices, skin weights and inverse bind matrices stay as they are.

use glam::{Mat4, Vec3};
use rigml_core::{Attachment, Character, Skeleton, Transform};

/// Relative size, against the mesh, of a placement's largest effect on a vertex below which it
/// counts as none (float noise of the file's own matrices).
const NO_PLACEMENT: f32 = 1e-4;

/// Largest relative difference between the scale factors along the three axes for a placement
/// to count as uniform (a new root can carry rotation, uniform scale and translation only).
const UNIFORM: f32 = 1e-3;

/// How the file shows its bind-space mesh: the rest transform of its main root joint (the one
/// with the most joints under it) times that joint's inverse bind matrix. When the rest pose is
/// the bind pose up to a whole-character transform, as in most exported files, this is that
/// transform, the same for every joint; when the file was saved with its root posed, the
/// root's pose is part of it, as it is of what the file shows.
///
/// `None` when there is nothing to carry over (the transform moves no vertex measurably), when
/// the file has no skinned skeleton (meshes without a skin are read with their node transforms
/// applied), or when the transform is not a rotation, a uniform scale and a translation.
pub fn shown_placement(character: &Character) -> Option<Mat4> {
    character.skin.as_ref()?;
    let skeleton = &character.skeleton;
    let root = main_root(skeleton)?;
    let rest = skeleton.rest_world();
    let placement = rest[root] * *skeleton.inverse_bind.get(root)?;
    let (scale, rotation, translation) = placement.to_scale_rotation_translation();
    let uniform =
        scale.min_element() > 0.0 && scale.max_element() - scale.min_element() <= UNIFORM * scale.max_element();
    if !(uniform && rotation.is_finite() && translation.is_finite()) {
        return None;
    }
    let placement = Mat4::from_scale_rotation_translation(Vec3::splat(scale.x), rotation, translation);
    let positions = &character.mesh.positions;
    let (lo, hi) = positions
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    let size = (hi - lo).max_element();
    let moved = positions
        .iter()
        .map(|p| placement.transform_point3(*p).distance(*p))
        .fold(0.0f32, f32::max);
    (moved.is_finite() && moved > NO_PLACEMENT * size).then_some(placement)
}

/// The attachments of a character with skeleton `old` (props, hats, horns), hung from the
/// joints of `new`, a skeleton placed in the same bind space: each goes to the new joint
/// nearest the middle of its vertices (in the bind pose), and keeps its place in bind space,
/// so it shows where it did when the rest poses are the bind poses (up to the placement both
/// carry). Without new joints there is nothing to hang them from, and none are kept.
pub fn reattach(attachments: &[Attachment], old: &Skeleton, new: &Skeleton) -> Vec<Attachment> {
    let new_bind = new.bind_world();
    let heads: Vec<Vec3> = new_bind.iter().map(|m| m.w_axis.truncate()).collect();
    // Props hang from joints that move the body, never from a control joint.
    let control = crate::controls(new);
    attachments
        .iter()
        .filter_map(|a| {
            let bind = old.inverse_bind.get(a.joint)?.inverse() * a.local;
            let n = a.mesh.positions.len().max(1) as f32;
            let middle = bind.transform_point3(a.mesh.positions.iter().copied().sum::<Vec3>() / n);
            let joint = (0..heads.len())
                .filter(|&i| !control[i])
                .min_by(|&i, &k| heads[i].distance(middle).total_cmp(&heads[k].distance(middle)))?;
            Some(Attachment {
                name: a.name.clone(),
                joint,
                local: new_bind[joint].inverse() * bind,
                mesh: a.mesh.clone(),
            })
        })
        .collect()
}

/// The root with the most joints under it (the first such root on a tie).
fn main_root(skeleton: &Skeleton) -> Option<usize> {
    let n = skeleton.joint_count();
    let mut under = vec![1usize; n];
    for j in (0..n).rev() {
        if let Some(p) = skeleton.parents[j].filter(|&p| p < j) {
            under[p] += under[j];
        }
    }
    (0..n)
        .filter(|&j| skeleton.parents[j].is_none())
        .max_by_key(|&j| (under[j], std::cmp::Reverse(j)))
}

/// Put the whole skeleton under `placement`: each root's rest transform becomes `placement`
/// followed by the old one, so the rest pose shows the bind-space mesh where `placement` puts
/// it. Inverse bind matrices (bind space) are unchanged. `placement` must be a similarity, as
/// [`shown_placement`] returns, for the roots to stay translation-rotation-scale transforms.
pub fn place_in_scene(skeleton: &mut Skeleton, placement: Mat4) {
    for (local, parent) in skeleton.rest_local.iter_mut().zip(&skeleton.parents) {
        if parent.is_none() {
            *local = Transform::from_mat4(&(placement * local.to_mat4()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;
    use rigml_core::{Mesh, Pose, Skin};

    /// A bar of four vertices bound to two joints, rest = bind.
    fn bar() -> Character {
        let positions = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(0.2, 0.0, 2.0),
            Vec3::new(0.0, 0.3, 2.0),
        ];
        let mut skeleton = Skeleton {
            names: vec!["a".into(), "b".into()],
            parents: vec![None, Some(0)],
            rest_local: vec![Transform::IDENTITY, Transform::from_translation(Vec3::Z)],
            inverse_bind: Vec::new(),
        };
        skeleton.bind_to_rest();
        let rows: Vec<Vec<(u32, f32)>> = vec![vec![(0, 1.0)], vec![(0, 0.5), (1, 0.5)], vec![(1, 1.0)], vec![(1, 1.0)]];
        let skin = Skin::from_rows(rows.iter().map(Vec::as_slice), 2, 4).unwrap();
        Character {
            name: "bar".into(),
            mesh: Mesh {
                positions,
                triangles: vec![[0, 1, 2], [1, 2, 3]],
                ..Mesh::default()
            },
            skeleton,
            skin: Some(skin),
            clips: Vec::new(),
            attachments: Vec::new(),
        }
    }

    fn shown(c: &Character) -> Vec<Vec3> {
        let m = rigml_core::skinning_matrices(&c.skeleton, &Pose::rest(&c.skeleton)).unwrap();
        rigml_core::lbs(&c.mesh.positions, c.skin.as_ref().unwrap(), &m)
    }

    #[test]
    fn finds_an_armature_transform_and_hands_it_to_a_new_skeleton() {
        let mut c = bar();
        assert_eq!(shown_placement(&c), None, "rest = bind: nothing to carry over");
        // What Blender's exporter does: the armature turned -90° about X and scaled 100×.
        let armature = Mat4::from_scale_rotation_translation(
            Vec3::splat(100.0),
            Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
            Vec3::new(1.0, 2.0, 3.0),
        );
        place_in_scene(&mut c.skeleton, armature);
        let placement = shown_placement(&c).expect("a placement");
        assert!(placement.abs_diff_eq(armature, 1e-3), "{placement:?}");
        // A new skeleton in bind space (here the same joints, rest = bind) placed by it shows
        // the mesh where the file did.
        let mut new = bar();
        place_in_scene(&mut new.skeleton, placement);
        for (a, b) in shown(&new).iter().zip(shown(&c)) {
            assert!(a.distance(b) < 1e-3, "{a} vs {b}");
        }
    }

    #[test]
    fn the_main_root_decides_and_a_non_uniform_scale_is_refused() {
        // A lone control joint (an IK target) as an extra root, placed differently: the root
        // with the body under it is the one read.
        let mut c = bar();
        let s = &mut c.skeleton;
        s.names.push("ik".into());
        s.parents.push(None);
        s.rest_local.push(Transform::from_translation(Vec3::new(5.0, 0.0, 0.0)));
        s.inverse_bind.push(Mat4::IDENTITY);
        assert_eq!(shown_placement(&c), None);
        let turn = Mat4::from_rotation_z(0.5);
        c.skeleton.rest_local[0] = Transform::from_mat4(&turn);
        assert!(shown_placement(&c).unwrap().abs_diff_eq(turn, 1e-6));
        c.skeleton.rest_local[0].scale = Vec3::new(1.0, 2.0, 1.0);
        assert_eq!(shown_placement(&c), None);
    }

    #[test]
    fn attachments_keep_their_place_on_the_nearest_new_joint() {
        let old = bar();
        // A hat on joint b (at z = 1), 0.5 above it in b's space.
        let hat = Attachment {
            name: "hat".into(),
            joint: 1,
            local: Mat4::from_translation(Vec3::new(0.0, 0.0, 0.5)),
            mesh: Mesh {
                positions: vec![Vec3::X * 0.1, Vec3::Y * 0.1, Vec3::ZERO],
                triangles: vec![[0, 1, 2]],
                ..Mesh::default()
            },
        };
        // A new skeleton: joints at z = 0, 1.4 and 3.
        let mut new = Skeleton {
            names: vec!["r".into(), "m".into(), "t".into()],
            parents: vec![None, Some(0), Some(1)],
            rest_local: vec![
                Transform::IDENTITY,
                Transform::from_translation(Vec3::Z * 1.4),
                Transform::from_translation(Vec3::Z * 1.6),
            ],
            inverse_bind: Vec::new(),
        };
        new.bind_to_rest();
        let moved = reattach(std::slice::from_ref(&hat), &old.skeleton, &new);
        assert_eq!(moved[0].joint, 1, "nearest to the hat's middle (z = 1.5)");
        let place = |s: &Skeleton, a: &Attachment| s.bind_world()[a.joint] * a.local;
        assert!(place(&new, &moved[0]).abs_diff_eq(place(&old.skeleton, &hat), 1e-6));
        assert!(reattach(&[hat], &old.skeleton, &Skeleton::default()).is_empty());
    }

    #[test]
    fn no_placement_without_a_skin() {
        let mut c = bar();
        place_in_scene(&mut c.skeleton, Mat4::from_scale(Vec3::splat(2.0)));
        c.skin = None;
        assert_eq!(shown_placement(&c), None);
    }
}
