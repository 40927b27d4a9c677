//! Bones as segments between bind-pose joint positions, the geometry every solver measures
//! distances to.
//!
//! Joint `j` owns one segment to each of its children (the part of the body its rotation
//! moves). A leaf joint owns a short segment continuing its parent bone by half that bone's
//! length (the hand of an arm without fingers, the head of a neck), except a **zero-length
//! end-site** ([`Skeleton::zero_length_end_sites`], METRICS.md §4, failure 6). Those are ignored and never receive weight. A root without
//! children owns the point at its position.

use crate::SkinError;
use glam::Vec3;
use rigml_core::Skeleton;

/// Share of the parent bone by which a leaf joint's own segment reaches past the joint.
const LEAF_EXTENSION: f32 = 0.5;

/// One bone segment, owned by `joint`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bone {
    pub joint: u32,
    pub a: Vec3,
    pub b: Vec3,
}

/// The segments of a skeleton plus which joints are ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct Bones {
    pub segments: Vec<Bone>,
    /// Per joint: a zero-length end-site that never gets weight.
    pub ignored: Vec<bool>,
    pub joint_count: usize,
}

impl Bones {
    /// Segments from the bind pose of `skeleton`; `scale` is the length that maps to 1 in
    /// normalised units (the mesh's longest AABB side).
    pub fn new(skeleton: &Skeleton, scale: f32) -> Result<Bones, SkinError> {
        Bones::with_tails(skeleton, scale, None)
    }

    /// [`Bones::new`], or with explicit `tails` (one per joint, bind space): then joint `j` owns
    /// the one segment from its bind position to `tails[j]`, as a DCC bone does (a Blender
    /// bone's head and tail), whatever its children; no joint is ignored. Errors when the
    /// count differs from the joints' or a tail is not finite.
    pub fn with_tails(skeleton: &Skeleton, scale: f32, tails: Option<&[Vec3]>) -> Result<Bones, SkinError> {
        let joint_count = skeleton.joint_count();
        if joint_count == 0 {
            return Err(SkinError::NoJoints);
        }
        skeleton.validate()?;
        let positions = skeleton.bind_positions();
        if let Some(j) = positions.iter().position(|p| !p.is_finite()) {
            return Err(SkinError::Failed {
                solver: "bones",
                problem: format!("joint {j} ({}) has a non-finite bind position", skeleton.names[j]),
            });
        }
        if let Some(tails) = tails {
            if tails.len() != joint_count {
                return Err(SkinError::Failed {
                    solver: "bones",
                    problem: format!("{} bone tails for {joint_count} joints", tails.len()),
                });
            }
            if let Some(j) = tails.iter().position(|t| !t.is_finite()) {
                return Err(SkinError::Failed {
                    solver: "bones",
                    problem: format!("joint {j} ({}) has a non-finite tail", skeleton.names[j]),
                });
            }
            let segments = (0..joint_count)
                .map(|j| Bone {
                    joint: j as u32,
                    a: positions[j],
                    b: tails[j],
                })
                .collect();
            return Ok(Bones {
                segments,
                ignored: vec![false; joint_count],
                joint_count,
            });
        }
        let children = skeleton.children();
        let mut segments = Vec::new();
        let ignored = skeleton.zero_length_end_sites(scale);
        for j in 0..joint_count {
            let p = positions[j];
            if !children[j].is_empty() {
                segments.extend(children[j].iter().map(|&c| Bone {
                    joint: j as u32,
                    a: p,
                    b: positions[c],
                }));
                continue;
            }
            match skeleton.parents[j] {
                Some(_) if ignored[j] => {}
                Some(parent) => segments.push(Bone {
                    joint: j as u32,
                    a: p,
                    b: p + (p - positions[parent]) * LEAF_EXTENSION,
                }),
                None => segments.push(Bone {
                    joint: j as u32,
                    a: p,
                    b: p,
                }),
            }
        }
        Ok(Bones {
            segments,
            ignored,
            joint_count,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::{glam::Mat4, Transform};

    #[test]
    fn chain_with_end_site_and_lone_root() {
        // 0 -> 1 -> 2 (leaf, real bone) and 1 -> 3 (zero-length end-site); 4 is a lone root.
        let t = |x: f32, y: f32| Transform::from_translation(Vec3::new(x, y, 0.0));
        let mut s = Skeleton {
            names: (0..5).map(|i| format!("j{i}")).collect(),
            parents: vec![None, Some(0), Some(1), Some(1), None],
            rest_local: vec![t(0.0, 0.0), t(0.0, 1.0), t(0.0, 1.0), t(0.0, 0.0), t(5.0, 0.0)],
            inverse_bind: vec![Mat4::IDENTITY; 5],
        };
        s.bind_to_rest();
        let bones = Bones::new(&s, 2.0).unwrap();
        assert_eq!(bones.ignored, vec![false, false, false, true, false]);
        let of = |j: u32| bones.segments.iter().filter(|b| b.joint == j).count();
        assert_eq!((of(0), of(1), of(2), of(3), of(4)), (1, 2, 1, 0, 1));
        let leaf = bones.segments.iter().find(|b| b.joint == 2).unwrap();
        assert!((leaf.b - Vec3::new(0.0, 2.5, 0.0)).length() < 1e-6);
        let empty = Skeleton::default();
        assert!(matches!(Bones::new(&empty, 1.0), Err(SkinError::NoJoints)));

        // Explicit tails: one segment per joint, head to tail, children ignored; the end-site
        // is a bone like any other.
        let tails: Vec<Vec3> = (0..5).map(|j| Vec3::new(j as f32, 9.0, 0.0)).collect();
        let bones = Bones::with_tails(&s, 2.0, Some(&tails)).unwrap();
        assert_eq!(bones.segments.len(), 5);
        assert!(bones.ignored.iter().all(|&i| !i));
        assert_eq!(bones.segments[1].b, Vec3::new(1.0, 9.0, 0.0));
        assert_eq!(bones.segments[1].a, Vec3::new(0.0, 1.0, 0.0));
        assert!(Bones::with_tails(&s, 2.0, Some(&tails[..4])).is_err());
        let mut bad = tails.clone();
        bad[2].x = f32::NAN;
        assert!(Bones::with_tails(&s, 2.0, Some(&bad)).is_err());
    }
}
