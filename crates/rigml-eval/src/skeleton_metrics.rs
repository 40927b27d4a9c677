//! Skeleton metrics, METRICS.md §5: Chamfer distances between joints and sampled bones, and the
//! joint-count error. Inputs are joint positions and parents already in §1 normalised units.

use glam::Vec3;

/// Bone sampling step (normalised units).
pub const BONE_STEP: f32 = 0.005;
/// Predicted joints closer than this are duplicates and merged (normalised units).
pub const DUPLICATE_DISTANCE: f32 = 1e-6;

/// Joints of one skeleton: positions and parent indices (`parents[j] < j` not required).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointSet {
    pub positions: Vec<Vec3>,
    pub parents: Vec<Option<usize>>,
}

impl JointSet {
    /// Bind-pose joints of `skeleton` in §1 units: `(p - centre) · scale`. Joints are compared in
    /// the space the mesh is stored in (where a rigging method places them), so `centre` and
    /// `scale` come from the stored GT mesh ([`crate::deformation::normalisation`] of
    /// `mesh.positions`) and are applied to both skeletons.
    pub fn from_skeleton(skeleton: &rigml_core::Skeleton, centre: Vec3, scale: f32) -> JointSet {
        JointSet {
            positions: skeleton
                .bind_positions()
                .iter()
                .map(|p| (*p - centre) * scale)
                .collect(),
            parents: skeleton.parents.clone(),
        }
    }

    /// Bones `(parent position, child position)`; parents out of range are skipped.
    pub fn bones(&self) -> Vec<(Vec3, Vec3)> {
        self.parents
            .iter()
            .enumerate()
            .filter_map(|(j, p)| Some((*self.positions.get((*p)?)?, *self.positions.get(j)?)))
            .collect()
    }

    /// A copy with duplicate joints (closer than [`DUPLICATE_DISTANCE`]) merged into the first
    /// of them; parents are remapped and self-links dropped.
    pub fn merged_duplicates(&self) -> JointSet {
        let mut keep: Vec<usize> = Vec::new();
        let mut map = vec![0usize; self.positions.len()];
        for (j, p) in self.positions.iter().enumerate() {
            match keep
                .iter()
                .position(|&k| self.positions[k].distance(*p) < DUPLICATE_DISTANCE)
            {
                Some(i) => map[j] = i,
                None => {
                    map[j] = keep.len();
                    keep.push(j);
                }
            }
        }
        let mut parents = vec![None; keep.len()];
        for (j, p) in self.parents.iter().enumerate() {
            let (Some(&c), Some(&pp)) = (map.get(j), p.and_then(|p| map.get(p))) else {
                continue;
            };
            if c != pp && parents[c].is_none() {
                parents[c] = Some(pp);
            }
        }
        JointSet {
            positions: keep.iter().map(|&k| self.positions[k]).collect(),
            parents,
        }
    }
}

/// Points of a bone `(p, c)`: `n = round(|c-p| / 0.005)` steps, `n+1` points with both ends;
/// only `p` when the bone is shorter than `0.0025` (n = 0).
pub fn sample_bone(p: Vec3, c: Vec3, out: &mut Vec<Vec3>) {
    let n = (p.distance(c) / BONE_STEP).round() as usize;
    if n == 0 {
        out.push(p);
        return;
    }
    out.extend((0..=n).map(|i| p + (c - p) * (i as f32 / n as f32)));
}

/// `Samp(S)`: the union of all bone samples.
pub fn sample_bones(s: &JointSet) -> Vec<Vec3> {
    let mut out = Vec::new();
    for (p, c) in s.bones() {
        sample_bone(p, c, &mut out);
    }
    out
}

/// `mean_{a∈A} min_{b∈B} |a-b|`; `None` when either set is empty.
pub use rigml_geom::point_sets::directed_distance as directed;

/// `CD(A,B) = 0.5·(directed(A,B) + directed(B,A))`.
pub use rigml_geom::point_sets::chamfer;

/// All §5 numbers of one predicted skeleton against the GT one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkeletonScores {
    pub cd_j2j: f64,
    /// `None` when either skeleton has no bone.
    pub cd_j2b: Option<f64>,
    pub cd_b2b: Option<f64>,
    /// `|J_pr| - |J_gt|` after merging duplicate predicted joints.
    pub joint_count_error: i64,
}

/// Score `pred` (duplicates merged first) against `gt`. `None` when either has no joint
/// (an empty generation is a failure, §5).
pub fn score(pred: &JointSet, gt: &JointSet) -> Option<SkeletonScores> {
    let pred = pred.merged_duplicates();
    let cd_j2j = chamfer(&pred.positions, &gt.positions)?;
    let (samp_pr, samp_gt) = (sample_bones(&pred), sample_bones(gt));
    let cd_j2b = directed(&pred.positions, &samp_gt)
        .zip(directed(&gt.positions, &samp_pr))
        .map(|(a, b)| 0.5 * (a + b));
    Some(SkeletonScores {
        cd_j2j,
        cd_j2b,
        cd_b2b: chamfer(&samp_pr, &samp_gt),
        joint_count_error: pred.positions.len() as i64 - gt.positions.len() as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two(a: Vec3, b: Vec3) -> JointSet {
        JointSet {
            positions: vec![a, b],
            parents: vec![None, Some(0)],
        }
    }

    #[test]
    fn bone_sampling_rule() {
        let mut out = Vec::new();
        // |c-p| = 0.012 -> n = round(2.4) = 2 -> 3 points 0, .006, .012.
        sample_bone(Vec3::ZERO, Vec3::new(0.012, 0.0, 0.0), &mut out);
        assert_eq!(out.len(), 3);
        assert!((out[1].x - 0.006).abs() < 1e-7);
        out.clear();
        // 0.002 < 0.0025: just p.
        sample_bone(Vec3::ONE, Vec3::new(1.002, 1.0, 1.0), &mut out);
        assert_eq!(out, vec![Vec3::ONE]);
    }

    #[test]
    fn identical_skeletons_score_zero() {
        let s = two(Vec3::ZERO, Vec3::new(0.0, 0.1, 0.0));
        let r = score(&s, &s).unwrap();
        assert_eq!(r.cd_j2j, 0.0);
        assert_eq!(r.cd_j2b, Some(0.0));
        assert_eq!(r.cd_b2b, Some(0.0));
        assert_eq!(r.joint_count_error, 0);
    }

    #[test]
    fn shifted_skeleton_hand_computed() {
        // GT: (0,0,0)-(0,.01,0): n = 2, samples y = 0, .005, .01.
        // Pred: the same shifted by .003 in x: every nearest distance is .003.
        // CD-J2J = .003; CD-J2B: pred joints to GT samples .003, GT joints to pred samples .003.
        let gt = two(Vec3::ZERO, Vec3::new(0.0, 0.01, 0.0));
        let d = Vec3::new(0.003, 0.0, 0.0);
        let pr = two(d, Vec3::new(0.0, 0.01, 0.0) + d);
        let r = score(&pr, &gt).unwrap();
        assert!((r.cd_j2j - 0.003).abs() < 1e-7);
        assert!((r.cd_j2b.unwrap() - 0.003).abs() < 1e-7);
        assert!((r.cd_b2b.unwrap() - 0.003).abs() < 1e-7);
    }

    #[test]
    fn extra_and_duplicate_joints() {
        // Pred = GT joints + a duplicate of joint 1 + an extra joint at (0,.04,0).
        // Merged pred: (0,0,0), (0,.01,0), (0,.04,0): count error +1.
        // J2J: pred->gt: (0 + 0 + .03)/3 = .01; gt->pred: 0; CD = .005.
        let gt = two(Vec3::ZERO, Vec3::new(0.0, 0.01, 0.0));
        let pr = JointSet {
            positions: vec![
                Vec3::ZERO,
                Vec3::new(0.0, 0.01, 0.0),
                Vec3::new(0.0, 0.01, 0.0),
                Vec3::new(0.0, 0.04, 0.0),
            ],
            parents: vec![None, Some(0), Some(1), Some(2)],
        };
        let r = score(&pr, &gt).unwrap();
        assert_eq!(r.joint_count_error, 1);
        assert!((r.cd_j2j - 0.005).abs() < 1e-7, "{}", r.cd_j2j);
        assert!(score(&JointSet::default(), &gt).is_none());
    }

    #[test]
    fn from_skeleton_normalises() {
        // Chain joints at x = 0, 1, 2; centre (1,0,0), scale 1/2 -> x = -.5, 0, .5.
        let s = JointSet::from_skeleton(&crate::deformation::tests::chain(), Vec3::X, 0.5);
        assert_eq!(
            s.positions,
            vec![Vec3::new(-0.5, 0.0, 0.0), Vec3::ZERO, Vec3::new(0.5, 0.0, 0.0)]
        );
        assert_eq!(s.bones().len(), 2);
    }
}
