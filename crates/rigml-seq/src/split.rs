//! One more joint where a rig replays a sequence worst: a bone split in two.
//!
//! A template places joints from the anchor's shape alone; where the sequence bends a part the
//! template left as one bone (a cat's trunk curling and stretching), no weight or pose can make
//! up for the missing joint. [`worst_bone`] finds the bone whose vertices carry the most
//! residual, and [`split_bone`] inserts a joint midway along it, so that the fit that follows
//! can bend there (after Le & Deng 2014, who split a bone cluster where its vertices disagree).

use crate::pose_fit::Rigid;
use crate::SeqError;
use glam::{Mat4, Vec3};
use rigml_core::{Skeleton, Skin, Transform};

/// A skeleton with one joint inserted, and what moved.
#[derive(Debug, Clone)]
pub struct Split {
    pub skeleton: Skeleton,
    /// The skin on the new skeleton: the split bone's weights shared between its two halves by
    /// where each vertex lies along it.
    pub skin: Skin,
    /// The fixed flags (see [`crate::pose_fit::PoseFitter::new`]) on the new skeleton.
    pub fixed: Vec<bool>,
    /// Index of the inserted joint.
    pub inserted: usize,
}

impl Split {
    /// A pose of the old skeleton on the new one: the inserted joint turns with the bone it
    /// was cut from (its skinning map is that joint's), so the skinned mesh is unchanged.
    pub fn pose(&self, old: &[Rigid], joint: usize) -> Vec<Rigid> {
        let mut out = Vec::with_capacity(old.len() + 1);
        out.extend_from_slice(&old[..self.inserted]);
        out.push(old[joint]);
        out.extend_from_slice(&old[self.inserted..]);
        out
    }
}

/// The bone whose vertices carry the largest squared residual, as `(joint, child)`: each
/// vertex's `residual[v]` counts for the joint of its largest weight, and, where that joint has
/// several children, for the bone (joint → child) nearest the vertex. Fixed joints and children,
/// bones shorter than `min_length` (in the mesh's units), and the bones in `skip`, are not
/// candidates; `rest` are the bind positions of the skin's vertices.
pub fn worst_bone(
    skeleton: &Skeleton,
    skin: &Skin,
    fixed: &[bool],
    rest: &[Vec3],
    residual: &[f64],
    min_length: f32,
    skip: &[(usize, usize)],
) -> Option<(usize, usize)> {
    let children = skeleton.children();
    let positions = skeleton.bind_positions();
    let candidate = |j: usize, c: usize| {
        !fixed[j] && !fixed[c] && positions[j].distance(positions[c]) >= min_length && !skip.contains(&(j, c))
    };
    // Per joint, per child (in `children` order): the residual of the bone.
    let mut per_bone: Vec<Vec<f64>> = children.iter().map(|c| vec![0.0; c.len()]).collect();
    for (v, row) in skin.rows().enumerate() {
        let dominant = row
            .iter()
            .filter(|i| i.weight > 0.0)
            .max_by(|a, b| a.weight.total_cmp(&b.weight));
        let (Some(i), Some(&r), Some(&p)) = (dominant, residual.get(v), rest.get(v)) else {
            continue;
        };
        let j = i.joint as usize;
        let Some(kids) = children.get(j) else { continue };
        let nearest = kids
            .iter()
            .enumerate()
            .filter(|&(_, &c)| candidate(j, c))
            .map(|(k, &c)| (k, segment_distance(p, positions[j], positions[c])))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((k, _)) = nearest {
            per_bone[j][k] += r;
        }
    }
    let mut best: Option<(usize, usize, f64)> = None;
    for (j, kids) in children.iter().enumerate() {
        for (k, &c) in kids.iter().enumerate() {
            let r = per_bone[j][k];
            if r > 0.0 && best.is_none_or(|b| r > b.2) {
                best = Some((j, c, r));
            }
        }
    }
    best.map(|(j, c, _)| (j, c))
}

/// The inverse of a rigid (affine) matrix with its bottom row exactly `0 0 0 1`.
fn affine_inverse(m: &Mat4) -> Mat4 {
    Mat4::from(glam::Affine3A::from_mat4(*m).inverse())
}

/// Distance from `p` to the segment `a`–`b`.
fn segment_distance(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// Insert a joint midway between `joint` and its child `child` (the new joint's parent is
/// `joint`, `child`'s parent becomes the new joint; it is numbered where `child` was, so every
/// parent still comes before its children). The new joint takes `joint`'s bind orientation and
/// the name `<joint>_mid` (made unique). Each vertex weighted to `joint` gives the new joint a
/// share of that weight rising from 0 at a quarter of the bone to all of it at three quarters,
/// by its projection on the bone (`rest` are the bind positions of the skin's vertices).
pub fn split_bone(
    skeleton: &Skeleton,
    skin: &Skin,
    fixed: &[bool],
    rest: &[Vec3],
    joint: usize,
    child: usize,
) -> Result<Split, SeqError> {
    let n = skeleton.joint_count();
    if joint >= n || child >= n || skeleton.parents[child] != Some(joint) {
        return Err(SeqError::Options(format!(
            "joint {child} is not a child of joint {joint}"
        )));
    }
    if fixed.len() != n {
        return Err(SeqError::Options(format!("{} fixed flags for {n} joints", fixed.len())));
    }
    let inserted = child;
    let new_index = |k: usize| if k < inserted { k } else { k + 1 };
    let bind_of = |j: usize| affine_inverse(&skeleton.inverse_bind[j]);
    let (a, b) = (bind_of(joint).w_axis.truncate(), bind_of(child).w_axis.truncate());
    let mut mid = bind_of(joint);
    mid.w_axis = ((a + b) * 0.5).extend(1.0);

    let mut parents = Vec::with_capacity(n + 1);
    let mut names = Vec::with_capacity(n + 1);
    let mut rest_local = Vec::with_capacity(n + 1);
    let mut inverse_bind = Vec::with_capacity(n + 1);
    let mut new_fixed = Vec::with_capacity(n + 1);
    let base = format!("{}_mid", skeleton.names[joint]);
    let mut name = base.clone();
    let mut k = 2;
    while skeleton.names.contains(&name) {
        name = format!("{base}{k}");
        k += 1;
    }
    // Every other joint keeps its transforms as they were (rebuilding them from inverted
    // matrices leaves round-off in the bottom row, which glTF validators refuse).
    for (j, &is_fixed) in fixed.iter().enumerate() {
        if j == inserted {
            parents.push(Some(joint));
            names.push(name.clone());
            rest_local.push(Transform::from_mat4(&(skeleton.inverse_bind[joint] * mid)));
            inverse_bind.push(affine_inverse(&mid));
            new_fixed.push(false);
        }
        if j == child {
            parents.push(Some(inserted));
            rest_local.push(Transform::from_mat4(&(affine_inverse(&mid) * bind_of(child))));
        } else {
            parents.push(skeleton.parents[j].map(new_index));
            rest_local.push(skeleton.rest_local[j]);
        }
        names.push(skeleton.names[j].clone());
        inverse_bind.push(skeleton.inverse_bind[j]);
        new_fixed.push(is_fixed);
    }
    let split_skeleton = Skeleton {
        names,
        parents,
        rest_local,
        inverse_bind,
    };
    split_skeleton.validate()?;

    let axis = b - a;
    let length2 = axis.length_squared().max(f32::MIN_POSITIVE);
    let rows: Vec<Vec<(u32, f32)>> = skin
        .rows()
        .enumerate()
        .map(|(v, row)| {
            let t = rest.get(v).map_or(0.0, |p| (*p - a).dot(axis) / length2);
            let share = ((t - 0.25) / 0.5).clamp(0.0, 1.0);
            let mut out = Vec::with_capacity(row.len() + 1);
            for i in row.iter().filter(|i| i.weight > 0.0) {
                let j = i.joint as usize;
                if j == joint && share > 0.0 {
                    if share < 1.0 {
                        out.push((joint as u32, i.weight * (1.0 - share)));
                    }
                    out.push((inserted as u32, i.weight * share));
                } else {
                    out.push((new_index(j) as u32, i.weight));
                }
            }
            out
        })
        .collect();
    let cap = skin.max_influences().max(1);
    let split_skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), n + 1, cap)?;
    Ok(Split {
        skeleton: split_skeleton,
        skin: split_skin,
        fixed: new_fixed,
        inserted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pose_fit::PoseFitter;
    use glam::{DQuat, DVec3};

    /// A chain of three joints along x (0, 1, 2) with one vertex near each joint and two
    /// halfway along the first bone.
    fn chain() -> (Skeleton, Skin, Vec<Vec3>) {
        let at = |x: f32| Transform {
            translation: Vec3::new(x, 0.0, 0.0),
            ..Transform::default()
        };
        let skeleton = Skeleton {
            names: vec!["a".into(), "b".into(), "c".into()],
            parents: vec![None, Some(0), Some(1)],
            rest_local: vec![at(0.0), at(1.0), at(1.0)],
            inverse_bind: vec![
                Mat4::from_translation(Vec3::new(0.0, 0.0, 0.0)),
                Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0)),
                Mat4::from_translation(Vec3::new(-2.0, 0.0, 0.0)),
            ],
        };
        let rest = vec![
            Vec3::new(0.1, 0.1, 0.0),
            Vec3::new(0.4, 0.1, 0.0),
            Vec3::new(0.9, 0.1, 0.0),
            Vec3::new(1.5, 0.1, 0.0),
            Vec3::new(2.0, 0.1, 0.0),
        ];
        let rows: Vec<Vec<(u32, f32)>> = vec![
            vec![(0, 1.0)],
            vec![(0, 1.0)],
            vec![(0, 0.5), (1, 0.5)],
            vec![(1, 1.0)],
            vec![(2, 1.0)],
        ];
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 3, 4).unwrap();
        (skeleton, skin, rest)
    }

    #[test]
    fn a_split_keeps_the_order_the_names_and_the_skinned_mesh() {
        let (skeleton, skin, rest) = chain();
        let split = split_bone(&skeleton, &skin, &[false; 3], &rest, 0, 1).unwrap();
        assert_eq!(split.inserted, 1);
        assert_eq!(split.skeleton.names, ["a", "a_mid", "b", "c"]);
        assert_eq!(split.skeleton.parents, [None, Some(0), Some(1), Some(2)]);
        let positions = split.skeleton.bind_positions();
        assert!(positions[1].distance(Vec3::new(0.5, 0.0, 0.0)) < 1e-6);
        // The other joints' matrices are the old ones, bit for bit; the new one is rigid with an
        // exact bottom row (glTF validators refuse round-off there).
        assert_eq!(split.skeleton.inverse_bind[0], skeleton.inverse_bind[0]);
        assert_eq!(split.skeleton.inverse_bind[2], skeleton.inverse_bind[1]);
        assert_eq!(split.skeleton.inverse_bind[1].row(3), glam::Vec4::W);
        assert!(positions[2].distance(Vec3::new(1.0, 0.0, 0.0)) < 1e-6);
        // The vertex at 0.1 stays on "a"; the one at 0.9 gives "a"'s half to the new joint.
        let row = |v: usize| -> Vec<(u32, f32)> {
            split
                .skin
                .influences(v)
                .iter()
                .filter(|i| i.weight > 0.0)
                .map(|i| (i.joint, i.weight))
                .collect()
        };
        assert_eq!(row(0), [(0, 1.0)]);
        assert!(row(2).iter().any(|&(j, w)| j == 1 && (w - 0.5).abs() < 1e-6));
        assert!(row(2).iter().any(|&(j, w)| j == 2 && (w - 0.5).abs() < 1e-6));
        assert_eq!(row(4), [(3, 1.0)]);

        // Posed as the old skeleton was, the mesh does not move.
        let turn = Rigid {
            r: DQuat::from_rotation_z(0.7),
            t: DVec3::new(0.2, 0.0, 0.0),
        };
        let old_pose = vec![Rigid::IDENTITY, turn, turn.after(&turn)];
        let old = PoseFitter::new(&skeleton, &skin, &rest, &[false; 3]).unwrap();
        let new = PoseFitter::new(&split.skeleton, &split.skin, &rest, &split.fixed).unwrap();
        let before = old.skinned(&old_pose);
        let after = new.skinned(&split.pose(&old_pose, 0));
        for (p, q) in before.iter().zip(&after) {
            assert!(p.distance(*q) < 1e-5, "{p} moved to {q}");
        }
    }

    #[test]
    fn the_worst_bone_is_the_one_whose_vertices_carry_the_residual() {
        let (skeleton, skin, rest) = chain();
        // Vertex 3 is "b"'s: its residual points at the bone b → c.
        let residual = [0.0, 0.1, 0.0, 5.0, 0.0];
        let worst =
            |fixed: &[bool], residual: &[f64], min: f32| worst_bone(&skeleton, &skin, fixed, &rest, residual, min, &[]);
        assert_eq!(worst(&[false; 3], &residual, 0.0), Some((1, 2)));
        assert_eq!(worst(&[false; 3], &[1.0, 0.0, 0.0, 0.0, 0.0], 0.0), Some((0, 1)));
        // A fixed child is no candidate, nor is a bone under the length floor.
        assert_eq!(worst(&[false, false, true], &residual, 0.0), Some((0, 1)));
        assert_eq!(worst(&[false; 3], &residual, 2.0), None);
        // A bone tried already is skipped.
        let skip = [(1, 2)];
        assert_eq!(
            worst_bone(&skeleton, &skin, &[false; 3], &rest, &residual, 0.0, &skip),
            Some((0, 1))
        );
        // A bad joint pair is refused, not a panic.
        assert!(split_bone(&skeleton, &skin, &[false; 3], &[], 0, 2).is_err());
    }

    #[test]
    fn at_a_fork_the_residual_counts_for_the_nearest_bone() {
        // "a" at the origin with children "b" along x and "c" along y; both vertices are "a"'s.
        let at = |p: Vec3| Transform {
            translation: p,
            ..Transform::default()
        };
        let skeleton = Skeleton {
            names: vec!["a".into(), "b".into(), "c".into()],
            parents: vec![None, Some(0), Some(0)],
            rest_local: vec![at(Vec3::ZERO), at(Vec3::X), at(Vec3::Y)],
            inverse_bind: vec![
                Mat4::IDENTITY,
                Mat4::from_translation(-Vec3::X),
                Mat4::from_translation(-Vec3::Y),
            ],
        };
        let rest = [Vec3::new(0.4, 0.1, 0.0), Vec3::new(0.1, 0.6, 0.0)];
        let rows: Vec<Vec<(u32, f32)>> = vec![vec![(0, 1.0)], vec![(0, 1.0)]];
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 3, 4).unwrap();
        let worst = |residual: &[f64]| worst_bone(&skeleton, &skin, &[false; 3], &rest, residual, 0.0, &[]);
        assert_eq!(worst(&[2.0, 1.0]), Some((0, 1)));
        assert_eq!(worst(&[1.0, 2.0]), Some((0, 2)));
        assert_eq!(worst(&[0.0, 0.0]), None);
        let split = split_bone(&skeleton, &skin, &[false; 3], &rest, 0, 2).unwrap();
        assert_eq!(split.skeleton.names, ["a", "b", "a_mid", "c"]);
        assert_eq!(split.skeleton.parents, [None, Some(0), Some(0), Some(2)]);
    }
}
