//! Joint frames turned so that Blender's FBX importer keeps a moving child free to move.
//!
//! Blender's importer (`io_scene_fbx`, `build_skeleton`, Blender 5.0) gives each bone a tail on
//! its own Y axis at the mean distance of its children (at least 0.01), and marks a child bone
//! *connected* when its head lies on that tail (each coordinate within a relative 1e-6). A
//! connected bone ignores its location, so a clip that moves such a child (hips keyed above a
//! root, as KayKit's Rig_Medium does) plays in Blender without that motion. Measured on the
//! manifest (2026-11-28): `kaykit-rig-medium-general`'s first posed frame was 0.0062 of its
//! size off the GLB's.
//!
//! The writer therefore turns such a parent's frame a quarter turn ([`children_unconnected`]):
//! its child then lies off its Y axis, Blender leaves it unconnected, and the file still poses
//! every vertex, joint and attachment exactly as before. Only the parent's axes (and the way its
//! children's local transforms are written) change.

use rigml_core::glam::{DMat4, Mat4, Quat};
use rigml_core::{ChannelValues, Character};
use std::f32::consts::FRAC_PI_2;

/// Relative distance from a bone's tail within which a child counts as on it. Wider than
/// Blender's 1e-6 so that single-precision rounding in Blender cannot connect a child this
/// test calls free; turning a frame that Blender would have left alone costs nothing.
const ON_TAIL: f64 = 1e-4;

/// Blender's shortest bone: a bone's tail is at least this far from its head.
const MIN_BONE: f64 = 0.01;

/// Candidate turns of a parent's frame, tried in order: a quarter turn about its X axis (its
/// bone then points along its old Z axis), about its Z axis, the other way about X.
fn turns() -> [Quat; 3] {
    [
        Quat::from_rotation_x(FRAC_PI_2),
        Quat::from_rotation_z(FRAC_PI_2),
        Quat::from_rotation_x(-FRAC_PI_2),
    ]
}

/// The character with the frame of each joint turned whose bone, as Blender's importer builds
/// it, would connect a child whose location the clips (or the rest pose) move away from its
/// bind place; `None` when no joint needs it. For a joint `p` turned by `Q`: its rest rotation
/// and every rotation key become `r · Q`, its bind matrix `bind · Q`, each child's rest
/// translation and rotation and their keys `Q⁻¹ · t` and `Q⁻¹ · r`, and each attachment on `p`
/// `Q⁻¹ · local`. World transforms of every other joint are unchanged and `p`'s skinning
/// matrix (`world · inverse_bind`) too, so posed vertices do not move. A joint with a
/// non-uniform scale (rest or keyed) is left alone: `T·R·S·Q` is not a TRS transform then.
pub fn children_unconnected(c: &Character) -> Option<Character> {
    let skeleton = &c.skeleton;
    let joints = skeleton.joint_count();
    let bind: Vec<DMat4> = skeleton.inverse_bind.iter().map(|m| m.as_dmat4().inverse()).collect();
    let children = skeleton.children();
    let mut turn: Vec<Option<Quat>> = vec![None; joints];
    for p in 0..joints {
        if children[p].is_empty() || !uniform_scale(c, p) {
            continue;
        }
        // Each child's head in the parent's bind frame, as the importer takes it.
        let to_parent = bind[p].inverse();
        let heads: Vec<rigml_core::glam::DVec3> = children[p]
            .iter()
            .map(|&k| (to_parent * bind[k]).w_axis.truncate())
            .collect();
        let tail = (heads.iter().map(|h| h.length()).sum::<f64>() / heads.len() as f64).max(MIN_BONE);
        let on_tail = |h: rigml_core::glam::DVec3| {
            let tol = ON_TAIL * tail;
            h.x.abs() <= tol && h.z.abs() <= tol && (h.y - tail).abs() <= tol
        };
        let moving: Vec<rigml_core::glam::DVec3> = children[p]
            .iter()
            .zip(&heads)
            .filter(|&(&k, &h)| moves(c, k, h, tail))
            .map(|(_, &h)| h)
            .collect();
        if !moving.iter().any(|&h| on_tail(h)) {
            continue;
        }
        turn[p] = turns().into_iter().find(|q| {
            let back = q.inverse().as_dquat();
            !moving.iter().any(|&h| on_tail(back * h))
        });
    }
    if turn.iter().all(Option::is_none) {
        return None;
    }
    let mut out = c.clone();
    for (p, q) in turn.iter().enumerate() {
        if let Some(q) = q {
            turn_frame(&mut out, p, *q, &children[p]);
        }
    }
    Some(out)
}

/// Whether joint `k` (head `head` in its parent's bind frame) is placed anywhere but its bind
/// place: by its rest translation or by a translation key.
fn moves(c: &Character, k: usize, head: rigml_core::glam::DVec3, tail: f64) -> bool {
    let tol = ON_TAIL * tail;
    let off = |t: rigml_core::glam::Vec3| (t.as_dvec3() - head).abs().max_element() > tol;
    off(c.skeleton.rest_local[k].translation)
        || c.clips
            .iter()
            .flat_map(|clip| &clip.channels)
            .any(|ch| match &ch.values {
                ChannelValues::Translation(v) if ch.joint == k => v.iter().any(|&t| off(t)),
                _ => false,
            })
}

/// Whether joint `p`'s rest scale and every scale key are uniform (within 1e-5 relative).
fn uniform_scale(c: &Character, p: usize) -> bool {
    let uniform = |s: rigml_core::glam::Vec3| (s.max_element() - s.min_element()).abs() <= 1e-5 * s.abs().max_element();
    uniform(c.skeleton.rest_local[p].scale)
        && c.clips
            .iter()
            .flat_map(|clip| &clip.channels)
            .all(|ch| match &ch.values {
                ChannelValues::Scale(v) if ch.joint == p => v.iter().all(|&s| uniform(s)),
                _ => true,
            })
}

/// Turn joint `p`'s frame by `q` (see [`children_unconnected`]); `kids` are its child joints.
fn turn_frame(c: &mut Character, p: usize, q: Quat, kids: &[usize]) {
    let back = q.inverse();
    let s = &mut c.skeleton;
    s.rest_local[p].rotation = (s.rest_local[p].rotation * q).normalize();
    s.inverse_bind[p] = Mat4::from_quat(back) * s.inverse_bind[p];
    for &k in kids {
        s.rest_local[k].translation = back * s.rest_local[k].translation;
        s.rest_local[k].rotation = (back * s.rest_local[k].rotation).normalize();
    }
    // Keys are linear in the value (cubic-spline tangents included), so the same products
    // apply to every entry.
    for ch in c.clips.iter_mut().flat_map(|clip| clip.channels.iter_mut()) {
        match &mut ch.values {
            ChannelValues::Rotation(v) if ch.joint == p => v.iter_mut().for_each(|r| *r *= q),
            ChannelValues::Rotation(v) if kids.contains(&ch.joint) => v.iter_mut().for_each(|r| *r = back * *r),
            ChannelValues::Translation(v) if kids.contains(&ch.joint) => v.iter_mut().for_each(|t| *t = back * *t),
            _ => {}
        }
    }
    for a in c.attachments.iter_mut().filter(|a| a.joint == p) {
        a.local = Mat4::from_quat(back) * a.local;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::glam::Vec3;
    use rigml_core::skin::SkinBuilder;
    use rigml_core::{lbs, skinning_matrices, Channel, Clip, Interpolation, Skeleton, Transform};

    /// A root at the origin, hips straight above it (on the root's bone tail) keyed up and
    /// sideways, a spine above the hips; one vertex on each joint.
    fn hips_above_root(hips_keys: Vec<Vec3>) -> Character {
        let rest_local = vec![
            Transform::IDENTITY,
            Transform::from_translation(Vec3::new(0.0, 1.0, 0.0)),
            Transform::from_translation(Vec3::new(0.0, 0.5, 0.0)),
        ];
        let mut skeleton = Skeleton {
            names: vec!["root".into(), "hips".into(), "spine".into()],
            parents: vec![None, Some(0), Some(1)],
            rest_local,
            inverse_bind: Vec::new(),
        };
        skeleton.inverse_bind = skeleton.rest_world().iter().map(|m| m.inverse()).collect();
        let mut skin = SkinBuilder::new(3, 4).unwrap();
        for row in [&[(0u32, 1.0f32)][..], &[(1, 1.0)], &[(1, 0.5), (2, 0.5)]] {
            skin.push_row(row).unwrap();
        }
        let n = hips_keys.len();
        let times: Vec<f32> = (0..n).map(|i| i as f32 / 30.0).collect();
        let turning = (0..n).map(|i| Quat::from_rotation_y(0.3 * i as f32)).collect();
        Character {
            name: "kaykit-like".into(),
            mesh: rigml_core::Mesh {
                positions: vec![
                    Vec3::new(0.1, 0.0, 0.0),
                    Vec3::new(0.0, 1.0, 0.1),
                    Vec3::new(0.1, 1.4, 0.0),
                ],
                triangles: vec![[0, 1, 2]],
                ..Default::default()
            },
            skeleton,
            skin: Some(skin.finish()),
            clips: vec![Clip {
                name: "bob".into(),
                channels: vec![
                    Channel {
                        joint: 1,
                        interpolation: Interpolation::Linear,
                        times: times.clone(),
                        values: ChannelValues::Translation(hips_keys),
                    },
                    Channel {
                        joint: 0,
                        interpolation: Interpolation::Linear,
                        times,
                        values: ChannelValues::Rotation(turning),
                    },
                ],
            }],
            attachments: Vec::new(),
        }
    }

    fn posed(c: &Character, t: f32) -> Vec<Vec3> {
        let pose = c.clips[0].sample(&c.skeleton, t);
        let m = skinning_matrices(&c.skeleton, &pose).unwrap();
        lbs(&c.mesh.positions, c.skin.as_ref().unwrap(), &m)
    }

    #[test]
    fn a_parent_whose_moving_child_sits_on_its_tail_is_turned_and_poses_as_before() {
        let keys = vec![
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.2, 1.1, -0.1),
            Vec3::new(-0.1, 0.9, 0.3),
        ];
        let c = hips_above_root(keys);
        let out = children_unconnected(&c).expect("the hips move and sit on the root's tail");
        // Only the root is turned (the spine does not move); the hips now lie off its Y axis.
        assert_ne!(out.skeleton.rest_local[0].rotation, c.skeleton.rest_local[0].rotation);
        assert_eq!(out.skeleton.rest_local[2], c.skeleton.rest_local[2]);
        let head = out.skeleton.rest_local[1].translation;
        assert!(head.x.abs() + head.z.abs() > 0.5 && head.y.abs() < 1e-6, "{head}");
        for t in [0.0, 0.5 / 30.0, 1.0 / 30.0, 2.0 / 30.0] {
            for (a, b) in posed(&c, t).iter().zip(posed(&out, t)) {
                assert!(a.distance(b) < 1e-5, "at {t}: {a} vs {b}");
            }
            let (wa, wb) = (
                c.clips[0].sample(&c.skeleton, t).world_matrices(&c.skeleton).unwrap(),
                out.clips[0]
                    .sample(&out.skeleton, t)
                    .world_matrices(&out.skeleton)
                    .unwrap(),
            );
            for j in [1, 2] {
                assert!(wa[j].abs_diff_eq(wb[j], 1e-5), "joint {j} at {t}");
            }
        }
        // Nothing left to turn.
        assert!(children_unconnected(&out).is_none());
    }

    #[test]
    fn a_child_that_stays_in_place_or_lies_off_the_tail_is_left_alone() {
        // Keys at the bind place only: Blender's connection loses nothing.
        let still = hips_above_root(vec![Vec3::new(0.0, 1.0, 0.0); 3]);
        assert!(children_unconnected(&still).is_none());
        // Hips off the root's Y axis: Blender does not connect them.
        let mut off = hips_above_root(vec![Vec3::new(0.2, 1.1, 0.0); 3]);
        off.skeleton.rest_local[1].translation = Vec3::new(0.0, 0.0, 1.0);
        off.skeleton.inverse_bind = off.skeleton.rest_world().iter().map(|m| m.inverse()).collect();
        assert!(children_unconnected(&off).is_none());
    }
}
