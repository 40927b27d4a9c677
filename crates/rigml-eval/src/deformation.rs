//! Deformation error, METRICS.md §3: the mesh posed with predicted weights against the same mesh
//! posed with GT weights, both top-4, same GT skeleton, same pose, [`rigml_core::lbs`].
//! Distances are in §1 normalised units (longest rest AABB side = 1).

use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rigml_core::{lbs, skinning_matrices, Clip, Pose, Skeleton, Skin};

/// Random poses per asset (pose set a).
pub const RANDOM_POSES: usize = 10;
/// Largest random rotation angle, degrees.
pub const THETA_MAX_DEG: f64 = 45.0;
/// Most frames taken from one clip (pose set b).
pub const MAX_CLIP_FRAMES: usize = 100;

/// FNV-1a 64-bit hash (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The §1 normalisation of a point set: AABB centre and `s = 1 / longest side`.
/// `None` when the set is empty, not finite, or has zero extent.
pub fn normalisation(points: &[Vec3]) -> Option<(Vec3, f32)> {
    let first = *points.first()?;
    let (lo, hi) = points
        .iter()
        .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    let longest = (hi - lo).max_element();
    if !(longest.is_finite() && longest > 0.0) {
        return None;
    }
    Some(((lo + hi) * 0.5, 1.0 / longest))
}

/// The §1 normalisation of the **rest-posed** mesh: the GT skin applied at the skeleton's rest
/// pose, AABB over the skinned vertices (all vertices when none is skinned).
///
/// Deformed positions live in the skeleton's posed space, which need not be the space the mesh
/// is stored in: FBX2glTF exports (the Quaternius assets) keep the mesh in a bind space 100×
/// smaller than the armature's. Normalising the stored positions would then inflate every
/// distance 100-fold; the rest-posed mesh is in the same space as the deformed one, and equals
/// the stored mesh whenever bind = rest.
pub fn rest_normalisation(
    positions: &[Vec3],
    skeleton: &Skeleton,
    gt: &Skin,
    skinned: &[bool],
) -> Result<Option<(Vec3, f32)>, String> {
    if gt.vertex_count() != positions.len() || skinned.len() != positions.len() {
        return Err(format!(
            "vertex counts differ: mesh {}, GT skin {}, mask {}",
            positions.len(),
            gt.vertex_count(),
            skinned.len()
        ));
    }
    let joints = skeleton.joint_count();
    if gt.rows().flatten().any(|i| i.joint as usize >= joints) {
        return Err(format!("GT skin uses a joint beyond the {joints} of the skeleton"));
    }
    let m = skinning_matrices(skeleton, &Pose::rest(skeleton)).map_err(|e| e.to_string())?;
    let rest = lbs(positions, gt, &m);
    let skinned_points: Vec<Vec3> = rest.iter().zip(skinned).filter(|(_, &s)| s).map(|(p, _)| *p).collect();
    Ok(if skinned_points.is_empty() {
        normalisation(&rest)
    } else {
        normalisation(&skinned_points)
    })
}

/// Pose set (a): [`RANDOM_POSES`] poses seeded by `fnv1a64(asset_id)`.
///
/// Draw order: poses `k = 0..K`, then joints in file order; roots make no draws and keep their
/// rest transform. Each non-root joint draws `u1, u2, u3` (uniform f64 in `[0,1)`, `rand`'s
/// standard 53-bit conversion): axis `(sqrt(1-z²) cos φ, sqrt(1-z²) sin φ, z)` with `z = 2u1-1`,
/// `φ = 2π u2`; angle `θmax · u3`; `R_local = R_rest · R(axis, angle)`.
pub fn random_poses(asset_id: &str, skeleton: &Skeleton) -> Vec<Pose> {
    let mut rng = ChaCha8Rng::seed_from_u64(fnv1a64(asset_id.as_bytes()));
    let theta_max = THETA_MAX_DEG.to_radians();
    (0..RANDOM_POSES)
        .map(|_| {
            let mut pose = Pose::rest(skeleton);
            for (j, local) in pose.local.iter_mut().enumerate() {
                if skeleton.parents.get(j).copied().flatten().is_none() {
                    continue;
                }
                let u1: f64 = rng.random();
                let u2: f64 = rng.random();
                let u3: f64 = rng.random();
                let z = 2.0 * u1 - 1.0;
                let phi = 2.0 * std::f64::consts::PI * u2;
                let r = (1.0 - z * z).max(0.0).sqrt();
                let axis = Vec3::new((r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32).normalize();
                let angle = (theta_max * u3) as f32;
                local.rotation = (local.rotation * Quat::from_axis_angle(axis, angle)).normalize();
            }
            pose
        })
        .collect()
}

/// Indices of the frames of an `F`-frame clip used by pose set (b): all when `F ≤ 100`, else
/// `round(i·(F-1)/99)` for `i = 0..99`.
pub fn clip_frame_indices(frames: usize) -> Vec<usize> {
    if frames <= MAX_CLIP_FRAMES {
        return (0..frames).collect();
    }
    let last = (frames - 1) as f64;
    (0..MAX_CLIP_FRAMES)
        .map(|i| (i as f64 * last / (MAX_CLIP_FRAMES - 1) as f64).round() as usize)
        .collect()
}

/// Pose set (b): the frames of every clip, in clip order. A clip's frames are the key times of
/// its channel with the most keys (the baked frame count, [`Clip::key_count`]).
pub fn clip_poses(clips: &[Clip], skeleton: &Skeleton) -> Vec<Pose> {
    let mut poses = Vec::new();
    for clip in clips {
        let Some(times) = clip.channels.iter().map(|c| &c.times).max_by_key(|t| t.len()) else {
            continue;
        };
        for f in clip_frame_indices(times.len()) {
            if let Some(&t) = times.get(f) {
                poses.push(clip.sample(skeleton, t));
            }
        }
    }
    poses
}

/// Per-asset deformation error over one pose set (means over poses).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeformScores {
    pub mean: f64,
    pub max: f64,
    pub p95: f64,
    pub poses: usize,
}

/// Nearest-rank percentile of unsorted values: sort ascending, take index `ceil(q·N) - 1`.
pub fn percentile_nearest_rank(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values.get(rank - 1).copied()
}

/// Deformation error of `pred` against `gt` (both already top-4) over `poses`, scored on the
/// vertices where `skinned[v]` is true, scaled by `scale` (§1). `None` when there is no pose or
/// no skinned vertex. Errors if a pose does not fit the skeleton or lengths disagree.
pub fn deformation_error(
    positions: &[Vec3],
    skeleton: &Skeleton,
    gt: &Skin,
    pred: &Skin,
    skinned: &[bool],
    poses: &[Pose],
    scale: f32,
) -> Result<Option<DeformScores>, String> {
    let n = positions.len();
    if gt.vertex_count() != n || pred.vertex_count() != n || skinned.len() != n {
        return Err(format!(
            "vertex counts differ: mesh {n}, GT skin {}, predicted skin {}, mask {}",
            gt.vertex_count(),
            pred.vertex_count(),
            skinned.len()
        ));
    }
    let joints = skeleton.joint_count();
    for (name, skin) in [("GT", gt), ("predicted", pred)] {
        if let Some((v, i)) = skin
            .rows()
            .enumerate()
            .find_map(|(v, r)| r.iter().find(|i| i.joint as usize >= joints).map(|i| (v, i.joint)))
        {
            return Err(format!("{name} skin: vertex {v} uses joint {i} of {joints}"));
        }
    }
    if poses.is_empty() || !skinned.iter().any(|&s| s) {
        return Ok(None);
    }
    let mut errors = PoseErrors::new(n);
    for (k, pose) in poses.iter().enumerate() {
        let m = skinning_matrices(skeleton, pose).map_err(|e| format!("pose {k}: {e}"))?;
        errors.add(k, &lbs(positions, gt, &m), &lbs(positions, pred, &m), skinned, scale)?;
    }
    Ok(Some(errors.finish()))
}

/// Per-pose vertex distances between a reference and a predicted deformation, summed over poses
/// into the mean / max / p95 of [`DeformScores`] (each averaged over poses).
pub(crate) struct PoseErrors {
    sum: [f64; 3],
    poses: usize,
    d: Vec<f64>,
}

impl PoseErrors {
    pub(crate) fn new(vertices: usize) -> Self {
        Self {
            sum: [0.0; 3],
            poses: 0,
            d: Vec::with_capacity(vertices),
        }
    }

    /// Add pose `k`: distances of the `skinned` vertices, times `scale` (§1 units).
    pub(crate) fn add(
        &mut self,
        k: usize,
        reference: &[Vec3],
        predicted: &[Vec3],
        skinned: &[bool],
        scale: f32,
    ) -> Result<(), String> {
        self.d.clear();
        self.d.extend(
            reference
                .iter()
                .zip(predicted)
                .zip(skinned)
                .filter(|(_, &s)| s)
                .map(|((a, b), _)| f64::from(a.distance(*b)) * f64::from(scale)),
        );
        if self.d.is_empty() {
            return Ok(());
        }
        if self.d.iter().any(|x| !x.is_finite()) {
            return Err(format!("pose {k}: non-finite deformed position"));
        }
        self.sum[0] += self.d.iter().sum::<f64>() / self.d.len() as f64;
        self.sum[1] += self.d.iter().copied().fold(0.0, f64::max);
        self.sum[2] += percentile_nearest_rank(&mut self.d, 0.95).unwrap_or(0.0);
        self.poses += 1;
        Ok(())
    }

    pub(crate) fn finish(self) -> DeformScores {
        let k = self.poses.max(1) as f64;
        DeformScores {
            mean: self.sum[0] / k,
            max: self.sum[1] / k,
            p95: self.sum[2] / k,
            poses: self.poses,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::skin_metrics::tests::{gt_rows, moved_rows};
    use glam::Mat4;
    use rigml_core::Transform;

    /// Chain along +x: joint 0 at the origin, 1 at (1,0,0), 2 at (2,0,0); bind = rest.
    pub(crate) fn chain() -> Skeleton {
        let rest_local = vec![
            Transform::IDENTITY,
            Transform::from_translation(Vec3::X),
            Transform::from_translation(Vec3::X),
        ];
        let mut s = Skeleton {
            names: vec!["root".into(), "mid".into(), "tip".into()],
            parents: vec![None, Some(0), Some(1)],
            rest_local,
            inverse_bind: vec![Mat4::IDENTITY; 3],
        };
        s.inverse_bind = s.rest_world().iter().map(|m| m.inverse()).collect();
        s
    }

    pub(crate) fn positions() -> Vec<Vec3> {
        vec![
            Vec3::new(0.0, 0.5, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(1.5, 0.0, 0.0),
            Vec3::new(3.0, 0.0, 0.0),
        ]
    }

    fn skin(rows: &[Vec<(u32, f32)>]) -> Skin {
        Skin::from_rows(rows.iter().map(|r| r.as_slice()), 3, 4).unwrap()
    }

    #[test]
    fn fnv_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn percentile_is_nearest_rank() {
        // N = 4: ceil(3.8) - 1 = 3 -> the largest. N = 20: ceil(19) - 1 = 18 -> 19th smallest.
        assert_eq!(percentile_nearest_rank(&mut [3.0, 1.0, 4.0, 2.0], 0.95), Some(4.0));
        let mut v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile_nearest_rank(&mut v, 0.95), Some(19.0));
        assert_eq!(percentile_nearest_rank(&mut [], 0.95), None);
    }

    #[test]
    fn clip_frames_subsampled() {
        assert_eq!(clip_frame_indices(3), vec![0, 1, 2]);
        let idx = clip_frame_indices(199);
        // round(i * 198 / 99) = 2i.
        assert_eq!(idx.len(), 100);
        assert_eq!((idx[0], idx[1], idx[99]), (0, 2, 198));
    }

    #[test]
    fn random_poses_are_seeded_and_keep_the_root() {
        let s = chain();
        let a = random_poses("asset", &s);
        assert_eq!(a.len(), RANDOM_POSES);
        assert_eq!(a, random_poses("asset", &s));
        assert_ne!(a, random_poses("other", &s));
        for p in &a {
            assert_eq!(p.local[0], s.rest_local[0]);
            // Angle of R_rest^-1 R_local is at most 45 degrees; translation untouched.
            let angle = (s.rest_local[1].rotation.inverse() * p.local[1].rotation)
                .to_axis_angle()
                .1;
            assert!(angle <= 45f32.to_radians() + 1e-5, "{angle}");
            assert_eq!(p.local[1].translation, Vec3::X);
        }
    }

    #[test]
    fn random_pose_draw_order_and_formula() {
        // Re-derive pose 1, joint 2 by hand from the raw stream: the root makes no draws, so
        // pose 0 takes draws 0..6 (joint 1: 0..3, joint 2: 3..6) and pose 1 joint 2 takes 9..12.
        // A uniform is (next_u64 >> 11) · 2^-53.
        use rand::RngCore;
        let mut rng = ChaCha8Rng::seed_from_u64(fnv1a64(b"asset"));
        let u: Vec<f64> = (0..12)
            .map(|_| (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64))
            .collect();
        let (u1, u2, u3) = (u[9], u[10], u[11]);
        let z = 2.0 * u1 - 1.0;
        let phi = 2.0 * std::f64::consts::PI * u2;
        let r = (1.0 - z * z).sqrt();
        let axis = Vec3::new((r * phi.cos()) as f32, (r * phi.sin()) as f32, z as f32);
        let expected = Quat::from_axis_angle(axis.normalize(), (std::f64::consts::FRAC_PI_4 * u3) as f32);
        let s = chain();
        let got = random_poses("asset", &s)[1].local[2].rotation;
        assert!(
            got.abs_diff_eq(s.rest_local[2].rotation * expected, 1e-6),
            "{got:?} {expected:?}"
        );
    }

    #[test]
    fn identical_weights_deform_identically() {
        let s = chain();
        let gt = skin(&gt_rows());
        let (_, scale) = normalisation(&positions()).unwrap();
        let poses = random_poses("x", &s);
        let d = deformation_error(&positions(), &s, &gt, &gt, &[true; 4], &poses, scale)
            .unwrap()
            .unwrap();
        assert_eq!((d.mean, d.max, d.p95, d.poses), (0.0, 0.0, 0.0, 10));
    }

    #[test]
    fn moved_weights_hand_computed() {
        // Pose: tip (joint 2) turns 90° about +z; root and mid stay.
        // v3 (3,0,0): GT on tip -> (2,0,0) + Rz90(1,0,0) = (2,1,0); pred on mid -> (3,0,0); d = √2.
        // v2 (1.5,0,0): GT .75·mid + .25·tip = .75·(1.5,0,0) + .25·((2,0,0) + Rz90(-.5,0,0))
        //   = (1.125,0,0) + .25·(2,-.5,0) = (1.625,-.125,0); pred (1.5,0,0); d = .125√2.
        // AABB x 0..3, y 0..0.5 -> s = 1/3. Per vertex (scaled): 0, 0, .125√2/3, √2/3.
        // mean = 1.125√2/12, max = √2/3, p95 (N=4, index 3) = √2/3.
        let s = chain();
        let mut pose = Pose::rest(&s);
        pose.local[2].rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        let (_, scale) = normalisation(&positions()).unwrap();
        assert!((scale - 1.0 / 3.0).abs() < 1e-7);
        let d = deformation_error(
            &positions(),
            &s,
            &skin(&gt_rows()),
            &skin(&moved_rows()),
            &[true; 4],
            &[pose],
            scale,
        )
        .unwrap()
        .unwrap();
        let r2 = std::f64::consts::SQRT_2;
        assert!((d.mean - 1.125 * r2 / 12.0).abs() < 1e-6, "{}", d.mean);
        assert!((d.max - r2 / 3.0).abs() < 1e-6);
        assert!((d.p95 - r2 / 3.0).abs() < 1e-6);
        // Masking v3 out leaves v2 as the worst vertex.
        let d = deformation_error(
            &positions(),
            &s,
            &skin(&gt_rows()),
            &skin(&moved_rows()),
            &[true, true, true, false],
            &[Pose::rest(&s)],
            scale,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d.max, 0.0);
    }

    #[test]
    fn rest_normalisation_uses_the_posed_space() {
        // Root rest scale 2, inverse binds of the unscaled chain: the rest-posed mesh is the
        // stored one doubled, x 0..6 -> s = 1/6 (stored: 1/3). With bind = rest it is 1/3.
        let mut s = chain();
        let gt = skin(&gt_rows());
        let (_, plain) = rest_normalisation(&positions(), &s, &gt, &[true; 4]).unwrap().unwrap();
        assert!((plain - 1.0 / 3.0).abs() < 1e-6);
        s.rest_local[0].scale = Vec3::splat(2.0);
        let (_, scaled) = rest_normalisation(&positions(), &s, &gt, &[true; 4]).unwrap().unwrap();
        assert!((scaled - 1.0 / 6.0).abs() < 1e-6, "{scaled}");
        assert!(rest_normalisation(&positions()[..2], &s, &gt, &[true; 2]).is_err());
    }

    #[test]
    fn mismatches_are_errors() {
        let s = chain();
        let gt = skin(&gt_rows());
        assert!(deformation_error(&positions()[..3], &s, &gt, &gt, &[true; 3], &[], 1.0).is_err());
        assert!(normalisation(&[Vec3::ONE, Vec3::ONE]).is_none());
        assert!(normalisation(&[]).is_none());
    }
}
