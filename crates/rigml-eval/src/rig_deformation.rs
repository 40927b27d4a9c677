//! End-to-end deformation error of an auto-rig (issue 10): the **predicted** skeleton, skinned
//! with its own predicted weights, driven to follow the GT rig's poses, against the mesh posed
//! by the GT rig (GT skeleton, GT weights, same pose).
//!
//! METRICS.md does not define this number (its §3 keeps the GT skeleton on both sides), so it is
//! defined here; it reuses §1 units and §3's pose sets, weights and statistics.
//!
//! **Definition.** Both skeletons are taken in their bind pose, in the space the mesh is stored
//! in (where a rigging method places joints): `x_j` for GT joints, `y_p` for predicted ones.
//!
//! 1. *Matching* ([`match_joints`]): every predicted joint `p` is driven by one GT joint `g(p)`.
//!    The GT *segments* are, for every GT joint `g`, the bones `(x_g, x_c)` to each child `c`,
//!    or the point `(x_g, x_g)` when `g` is a leaf; each belongs to `g`. The *probes* of `p` are
//!    the midpoints of its bones `(y_p + y_c)/2` to each child `c`, or `y_p` itself for a leaf.
//!    A bone to a child that is a leaf without predicted weight (an IK pole target or another
//!    control joint, an end-site) moves no vertex and gives no probe, unless it is all `p` has.
//!    The cost of `g` is the mean over `p`'s probes of the distance to the nearest of `g`'s
//!    segments. `g(p)` is the cheapest GT joint; costs within [`TIE_FRACTION`] × (longest side
//!    of the GT joints' bounding box) of the cheapest are ties, broken by the distance `|y_p -
//!    x_g|`, then the lower index. The probes sit where `p`'s own weights are (along its bone),
//!    and a GT bone's region moves with its head joint, so this picks the GT joint whose bone
//!    covers the predicted bone. Identical skeletons match every joint to itself.
//! 2. *Driving* ([`driven_matrices`]): let `D_g = pose_world_g · inverse_bind_g` be the GT
//!    skinning matrix of `g` (bind → posed space) and `A_g` its linear 3×3 part. The predicted
//!    rig is posed by forward kinematics with rigid bones: a root `p` gets `M_p = D_{g(p)}`; a
//!    joint `p` with parent `q` is carried by its parent to `M_q(y_p)` and turns like its GT
//!    joint, `M_p(x) = M_q(y_p) + A_{g(p)}·(x - y_p)`. A misplaced joint thus bends the mesh
//!    about the wrong pivot, as it would after retargeting rotations onto it. A root without
//!    predicted weight (a ground root) moves no vertex: its children are driven as roots, so
//!    that the body under it keeps the GT translation, as an animator keys it on the hips.
//! 3. *Scoring* ([`rig_deformation_error`]): per pose, `x_v^gt = LBS(GT top-4 weights, D)` and
//!    `x_v^pred = LBS(predicted top-4 weights, M)`, `d_v = |x_v^pred − x_v^gt| · s` over the GT's
//!    skinned vertices, `s` the §1 scale of the rest-posed mesh; per asset the mean over poses
//!    of `mean_v d_v`, `max_v d_v` and the nearest-rank `P95_v d_v`, as in §3.
//!
//! With the GT skeleton as the prediction the matching is the identity and `M = D`, so the
//! number equals §3's deformation error of the predicted weights: the artist's rig scores 0 and
//! "GT skeleton + learned skin" scores the `learned` method's `deform_a_*`.

use crate::deformation::{DeformScores, PoseErrors};
use glam::{Affine3A, Mat3A, Mat4, Vec3, Vec3A};
use rigml_core::{lbs, skinning_matrices, Pose, Skeleton, Skin};

/// Costs closer than this fraction of the GT joints' extent are ties (see the module docs).
pub const TIE_FRACTION: f32 = 1e-6;

/// Distance from `x` to the segment `a..b` (to `a` when the segment is a point).
pub fn distance_to_segment(x: Vec3, a: Vec3, b: Vec3) -> f32 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= f32::MIN_POSITIVE {
        return x.distance(a);
    }
    let t = ((x - a).dot(ab) / len2).clamp(0.0, 1.0);
    x.distance(a + ab * t)
}

/// Segments `(joint, head, tail)` of joints at `positions`: the bones to each child, or a point
/// for a leaf.
fn segments(positions: &[Vec3], children: &[Vec<usize>]) -> Vec<(usize, Vec3, Vec3)> {
    let mut out = Vec::new();
    for (j, (&x, kids)) in positions.iter().zip(children).enumerate() {
        if kids.is_empty() {
            out.push((j, x, x));
        }
        out.extend(kids.iter().filter_map(|&c| positions.get(c).map(|&y| (j, x, y))));
    }
    out
}

/// Probe points of each joint: the midpoints of its bones to children that are not `idle`
/// (all of its bones when every child is), or its own position for a leaf.
fn probes(positions: &[Vec3], children: &[Vec<usize>], idle: &[bool]) -> Vec<Vec<Vec3>> {
    positions
        .iter()
        .zip(children)
        .map(|(&x, kids)| {
            let mid = |c: &usize| positions.get(*c).map(|&y| 0.5 * (x + y));
            let mut mids: Vec<Vec3> = kids
                .iter()
                .filter(|&&c| !idle.get(c).copied().unwrap_or(false))
                .filter_map(mid)
                .collect();
            if mids.is_empty() {
                mids = kids.iter().filter_map(mid).collect();
            }
            if mids.is_empty() {
                vec![x]
            } else {
                mids
            }
        })
        .collect()
}

/// The leaves and roots of `skeleton` that `skin` gives no weight (control joints such as IK
/// pole targets and a ground root, end-sites): they move no vertex.
pub fn weightless_controls(skeleton: &Skeleton, skin: &Skin) -> Vec<bool> {
    let mut idle: Vec<bool> = skeleton
        .children()
        .iter()
        .zip(&skeleton.parents)
        .map(|(kids, parent)| kids.is_empty() || parent.is_none())
        .collect();
    for i in skin.rows().flatten() {
        if i.weight > 0.0 {
            if let Some(x) = idle.get_mut(i.joint as usize) {
                *x = false;
            }
        }
    }
    idle
}

/// The GT joint that drives each predicted joint (module docs, step 1), from bind positions in
/// the mesh's space; `idle[p]` marks the predicted leaves without weight
/// ([`weightless_controls`]; empty: none). `None` when either skeleton has no joint.
pub fn match_joints(pred: &Skeleton, gt: &Skeleton, idle: &[bool]) -> Option<Vec<usize>> {
    let (y, x) = (pred.bind_positions(), gt.bind_positions());
    if y.is_empty() || x.is_empty() {
        return None;
    }
    let segs = segments(&x, &gt.children());
    let (lo, hi) = x.iter().fold((x[0], x[0]), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    let tie = TIE_FRACTION * (hi - lo).max_element().max(f32::MIN_POSITIVE);
    let mut nearest = vec![f32::INFINITY; x.len()];
    let matched = probes(&y, &pred.children(), idle)
        .iter()
        .zip(&y)
        .map(|(probes, &head)| {
            // cost(g) = mean over probes of the distance to g's nearest segment.
            let mut cost = vec![0.0f32; x.len()];
            for &q in probes {
                nearest.fill(f32::INFINITY);
                for &(g, a, b) in &segs {
                    nearest[g] = nearest[g].min(distance_to_segment(q, a, b));
                }
                cost.iter_mut().zip(&nearest).for_each(|(c, n)| *c += n);
            }
            let best = cost.iter().copied().fold(f32::INFINITY, f32::min);
            (0..x.len())
                .filter(|&g| cost[g] <= best + tie * probes.len() as f32)
                .min_by(|&a, &b| head.distance(x[a]).total_cmp(&head.distance(x[b])).then(a.cmp(&b)))
                .unwrap_or(0)
        })
        .collect();
    Some(matched)
}

/// Skinning matrices of the predicted rig driven by the GT skinning matrices `gt_matrices`
/// (module docs, step 2). `pred_bind[p]`: predicted bind positions; `matched[p]`: its GT joint.
/// A parent index not below its child (not a valid [`Skeleton`]) is treated as a root.
pub fn driven_matrices(
    pred_bind: &[Vec3],
    pred_parents: &[Option<usize>],
    matched: &[usize],
    gt_matrices: &[Mat4],
) -> Result<Vec<Mat4>, String> {
    let mut out: Vec<Mat4> = Vec::with_capacity(pred_bind.len());
    for (p, &y) in pred_bind.iter().enumerate() {
        let g = *matched
            .get(p)
            .ok_or_else(|| format!("predicted joint {p} has no match"))?;
        let d = *gt_matrices
            .get(g)
            .ok_or_else(|| format!("predicted joint {p}: GT joint {g} out of range"))?;
        let parent = pred_parents.get(p).copied().flatten().filter(|&q| q < p);
        let m = match parent.and_then(|q| out.get(q)) {
            None => d,
            Some(parent_m) => {
                let pivot = Vec3A::from(parent_m.transform_point3(y));
                let linear = Mat3A::from_mat4(d);
                let affine = Affine3A {
                    matrix3: linear,
                    translation: pivot - linear * Vec3A::from(y),
                };
                Mat4::from(affine)
            }
        };
        out.push(m);
    }
    Ok(out)
}

fn check_skin(name: &str, skin: &Skin, vertices: usize, joints: usize) -> Result<(), String> {
    if skin.vertex_count() != vertices {
        return Err(format!(
            "{name} skin has {} vertices, the mesh {vertices}",
            skin.vertex_count()
        ));
    }
    match skin
        .rows()
        .enumerate()
        .find_map(|(v, r)| r.iter().find(|i| i.joint as usize >= joints).map(|i| (v, i.joint)))
    {
        Some((v, j)) => Err(format!("{name} skin: vertex {v} uses joint {j} of {joints}")),
        None => Ok(()),
    }
}

/// The end-to-end deformation error (module docs) of the predicted rig (`pred`, `pred_skin`)
/// against the GT rig (`gt`, `gt_skin`), both skins already top-4, over `poses` of the GT
/// skeleton, on the vertices where `skinned[v]`, scaled by `scale` (§1). `None` when there is
/// no pose or no skinned vertex; an error when lengths or joint ranges disagree, a skeleton is
/// empty, a pose does not fit, or a deformed position is not finite.
#[allow(clippy::too_many_arguments)]
pub fn rig_deformation_error(
    positions: &[Vec3],
    gt: &Skeleton,
    gt_skin: &Skin,
    pred: &Skeleton,
    pred_skin: &Skin,
    skinned: &[bool],
    poses: &[Pose],
    scale: f32,
) -> Result<Option<DeformScores>, String> {
    let n = positions.len();
    if skinned.len() != n {
        return Err(format!("vertex counts differ: mesh {n}, mask {}", skinned.len()));
    }
    check_skin("GT", gt_skin, n, gt.joint_count())?;
    check_skin("predicted", pred_skin, n, pred.joint_count())?;
    let idle = weightless_controls(pred, pred_skin);
    let matched = match_joints(pred, gt, &idle).ok_or("a skeleton has no joint")?;
    if poses.is_empty() || !skinned.iter().any(|&s| s) {
        return Ok(None);
    }
    let pred_bind = pred.bind_positions();
    // The children of a weightless root (a ground root) are driven as roots: the root moves
    // no vertex, and the body under it keeps its own translation, as animators key it.
    let parents: Vec<Option<usize>> = pred
        .parents
        .iter()
        .map(|p| p.filter(|&q| !(idle.get(q).copied().unwrap_or(false) && pred.parents[q].is_none())))
        .collect();
    let mut errors = PoseErrors::new(n);
    for (k, pose) in poses.iter().enumerate() {
        let gt_m = skinning_matrices(gt, pose).map_err(|e| format!("pose {k}: {e}"))?;
        let pred_m = driven_matrices(&pred_bind, &parents, &matched, &gt_m)?;
        let x_gt = lbs(positions, gt_skin, &gt_m);
        let x_pr = lbs(positions, pred_skin, &pred_m);
        errors.add(k, &x_gt, &x_pr, skinned, scale)?;
    }
    Ok(Some(errors.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deformation::tests::{chain, positions};
    use crate::deformation::{deformation_error, normalisation, random_poses};
    use crate::skin_metrics::tests::gt_rows;
    use glam::Quat;
    use rigml_core::Transform;
    use std::f32::consts::FRAC_PI_2;
    use std::f64::consts::SQRT_2;

    fn skin(rows: &[Vec<(u32, f32)>], joints: usize) -> Skin {
        Skin::from_rows(rows.iter().map(|r| r.as_slice()), joints, 4).unwrap()
    }

    /// A skeleton with bind = rest from model-space joint positions (no rotations).
    fn skeleton_at(heads: &[Vec3], parents: &[Option<usize>]) -> Skeleton {
        let rest_local = heads
            .iter()
            .zip(parents)
            .map(|(&h, p)| Transform::from_translation(h - p.map_or(Vec3::ZERO, |q| heads[q])))
            .collect();
        let mut s = Skeleton {
            names: (0..heads.len()).map(|j| format!("j{j}")).collect(),
            parents: parents.to_vec(),
            rest_local,
            inverse_bind: vec![Mat4::IDENTITY; heads.len()],
        };
        s.inverse_bind = s.rest_world().iter().map(|m| m.inverse()).collect();
        s
    }

    fn scale() -> f32 {
        normalisation(&positions()).unwrap().1
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    #[test]
    fn segment_distance() {
        let (a, b) = (Vec3::ZERO, Vec3::X);
        assert!((distance_to_segment(Vec3::new(0.5, 2.0, 0.0), a, b) - 2.0).abs() < 1e-7);
        assert!((distance_to_segment(Vec3::new(-3.0, 4.0, 0.0), a, b) - 5.0).abs() < 1e-6);
        assert!((distance_to_segment(Vec3::new(0.0, 1.0, 0.0), b, b) - SQRT_2 as f32).abs() < 1e-6);
    }

    #[test]
    fn identical_skeletons_match_themselves() {
        // A branching skeleton: hips with a spine and two legs, one leg with a foot leaf.
        let heads = [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 1.5, 0.0),
            Vec3::new(0.2, 0.9, 0.0),
            Vec3::new(-0.2, 0.9, 0.0),
            Vec3::new(0.2, 0.1, 0.0),
            Vec3::new(0.2, 0.0, 0.2),
        ];
        let parents = [None, Some(0), Some(0), Some(0), Some(2), Some(4)];
        let s = skeleton_at(&heads, &parents);
        assert_eq!(match_joints(&s, &s, &[]), Some((0..6).collect()));
        assert_eq!(match_joints(&chain(), &chain(), &[]), Some(vec![0, 1, 2]));
        assert_eq!(match_joints(&Skeleton::default(), &s, &[]), None);
        assert_eq!(match_joints(&s, &Skeleton::default(), &[]), None);
    }

    #[test]
    fn identical_rig_scores_zero_and_equals_section_3() {
        // Also with a scaled root (the armature 2× the mesh's bind space, as FBX2glTF exports).
        for root_scale in [1.0, 2.0] {
            let mut s = chain();
            s.rest_local[0].scale = Vec3::splat(root_scale);
            let gt = skin(&gt_rows(), 3);
            let poses = random_poses("x", &s);
            let d = rig_deformation_error(&positions(), &s, &gt, &s, &gt, &[true; 4], &poses, scale())
                .unwrap()
                .unwrap();
            assert!(d.max < 1e-6, "{d:?}");
            assert_eq!(d.poses, 10);
            // GT skeleton + other weights: the same number as §3's deformation error.
            let other = skin(&crate::skin_metrics::tests::moved_rows(), 3);
            let e = rig_deformation_error(&positions(), &s, &gt, &s, &other, &[true; 4], &poses, scale())
                .unwrap()
                .unwrap();
            let f = deformation_error(&positions(), &s, &gt, &other, &[true; 4], &poses, scale())
                .unwrap()
                .unwrap();
            assert!(f.mean > 0.01);
            close(e.mean, f.mean);
            close(e.max, f.max);
            close(e.p95, f.p95);
        }
    }

    #[test]
    fn translated_copy_under_rigid_poses() {
        // The GT chain moved by t = (0, .1, 0), same weights. The matching stays the identity.
        let t = Vec3::new(0.0, 0.1, 0.0);
        let gt = chain();
        let heads: Vec<Vec3> = gt.bind_positions().iter().map(|&p| p + t).collect();
        let pred = skeleton_at(&heads, &gt.parents);
        assert_eq!(match_joints(&pred, &gt, &[]), Some(vec![0, 1, 2]));
        let w = skin(&gt_rows(), 3);
        // The whole body turned rigidly (root 90° about z): every bone turns alike, no error.
        let mut turn = Pose::rest(&gt);
        turn.local[0].rotation = Quat::from_rotation_z(FRAC_PI_2);
        let d = rig_deformation_error(&positions(), &gt, &w, &pred, &w, &[true; 4], &[turn], scale())
            .unwrap()
            .unwrap();
        assert!(d.max < 1e-6, "{d:?}");
        // Only the tip turns 90° about z: it pivots at (2,.1,0) instead of (2,0,0), so what the
        // tip carries is off by (I - Rz90)·t = (.1,.1,0), |.| = .1√2: v3 fully, v2 by a quarter.
        // Scaled by 1/3: mean = (.1 + .025)√2/4/3, max = p95 = .1√2/3.
        let mut bend = Pose::rest(&gt);
        bend.local[2].rotation = Quat::from_rotation_z(FRAC_PI_2);
        let d = rig_deformation_error(&positions(), &gt, &w, &pred, &w, &[true; 4], &[bend], scale())
            .unwrap()
            .unwrap();
        close(d.mean, 0.125 * SQRT_2 / 12.0);
        close(d.max, 0.1 * SQRT_2 / 3.0);
        close(d.p95, 0.1 * SQRT_2 / 3.0);
    }

    #[test]
    fn fewer_predicted_joints_hand_computed() {
        // Prediction: one bone (0,0,0)→(1.8,0,0) and a leaf at (1.8,0,0); v0..v2 on joint 0,
        // v3 on the leaf. Probes: (.9,0,0) lies on GT bone 0→1, the leaf on GT bone 1→2, so
        // the match is [0, 1].
        let gt = chain();
        let pred = skeleton_at(&[Vec3::ZERO, Vec3::new(1.8, 0.0, 0.0)], &[None, Some(0)]);
        assert_eq!(match_joints(&pred, &gt, &[]), Some(vec![0, 1]));
        let pred_skin = skin(&[vec![(0, 1.0)], vec![(0, 1.0)], vec![(0, 1.0)], vec![(1, 1.0)]], 2);
        // GT mid (joint 1) turns 90° about z: GT D_1 = D_2 rotate about (1,0,0).
        // v1 (.5,0,0): GT .5·v1 + .5·(1,-.5,0) = (.75,-.25,0); pred (.5,0,0): d = .25√2.
        // v2 (1.5,0,0): GT (1,.5,0); pred (1.5,0,0): d = .5√2.
        // v3 (3,0,0): GT (1,2,0); pred pivots at (1.8,0,0): (1.8,1.2,0): d = .8√2. v0: 0.
        let mut pose = Pose::rest(&gt);
        pose.local[1].rotation = Quat::from_rotation_z(FRAC_PI_2);
        let d = rig_deformation_error(
            &positions(),
            &gt,
            &skin(&gt_rows(), 3),
            &pred,
            &pred_skin,
            &[true; 4],
            &[pose.clone()],
            scale(),
        )
        .unwrap()
        .unwrap();
        close(d.mean, 1.55 * SQRT_2 / 12.0);
        close(d.max, 0.8 * SQRT_2 / 3.0);
        close(d.p95, 0.8 * SQRT_2 / 3.0);
        // More predicted joints than GT ones: the GT chain against a prediction with an extra
        // joint halfway along each bone, all weights on the first joint: only rigid parts move.
        let many = skeleton_at(
            &[0.0, 0.5, 1.0, 1.5, 2.0].map(|x| Vec3::new(x, 0.0, 0.0)),
            &[None, Some(0), Some(1), Some(2), Some(3)],
        );
        assert_eq!(match_joints(&many, &gt, &[]), Some(vec![0, 0, 1, 1, 2]));
        let rigid = skin(&vec![vec![(0, 1.0)]; 4], 5);
        let d = rig_deformation_error(
            &positions(),
            &gt,
            &skin(&gt_rows(), 3),
            &many,
            &rigid,
            &[true; 4],
            &[pose],
            1.0,
        )
        .unwrap()
        .unwrap();
        assert!(d.max > 0.5, "{d:?}");
    }

    #[test]
    fn mismatches_are_errors() {
        let s = chain();
        let w = skin(&gt_rows(), 3);
        let p = positions();
        let poses = [Pose::rest(&s)];
        assert!(rig_deformation_error(&p[..3], &s, &w, &s, &w, &[true; 3], &poses, 1.0).is_err());
        let two = skeleton_at(&[Vec3::ZERO, Vec3::X], &[None, Some(0)]);
        // The predicted skin names joint 2 of a 2-joint skeleton.
        assert!(rig_deformation_error(&p, &s, &w, &two, &w, &[true; 4], &poses, 1.0).is_err());
        assert!(rig_deformation_error(&p, &s, &w, &Skeleton::default(), &w, &[true; 4], &poses, 1.0).is_err());
        assert_eq!(
            rig_deformation_error(&p, &s, &w, &s, &w, &[false; 4], &poses, 1.0),
            Ok(None)
        );
        assert!(driven_matrices(&[Vec3::ZERO], &[None], &[5], &[Mat4::IDENTITY]).is_err());
    }

    #[test]
    fn a_weightless_leaf_does_not_steer_its_parents_match() {
        // GT: a chain up y. The prediction adds a control joint (an IK pole target) above the
        // chain's end, hanging from the root: its bone's midpoint lies on GT joint 1's bone.
        let at = |y: f32| Vec3::new(0.0, y, 0.0);
        let gt = skeleton_at(&[at(0.0), at(1.0), at(2.0)], &[None, Some(0), Some(1)]);
        let pred = skeleton_at(
            &[at(0.0), at(1.0), at(2.0), at(4.0)],
            &[None, Some(0), Some(1), Some(0)],
        );
        // Counted as a bone, it drags the root onto GT joint 1.
        assert_eq!(match_joints(&pred, &gt, &[]), Some(vec![1, 1, 2, 2]));
        let weights = skin(
            &[vec![(0, 1.0)], vec![(1, 0.5), (2, 0.5)], vec![(2, 1.0)], vec![(1, 1.0)]],
            4,
        );
        let idle = weightless_controls(&pred, &weights);
        assert_eq!(idle, vec![false, false, false, true]);
        assert_eq!(match_joints(&pred, &gt, &idle), Some(vec![0, 1, 2, 2]));
        // A joint whose only children are idle keeps their bones as probes.
        let only = skeleton_at(&[at(0.0), at(4.0)], &[None, Some(0)]);
        assert_eq!(match_joints(&only, &gt, &[false, true]), match_joints(&only, &gt, &[]));
    }

    #[test]
    fn a_weightless_root_leaves_the_body_its_translation() {
        // The GT chain along x; the prediction is the same chain under a ground root that
        // carries no weight, below its far end (the model's origin need not be under the hips).
        // The GT pose moves the chain's root (root motion keyed on the hips) and bends joint 1.
        let gt = chain();
        let w = skin(&gt_rows(), 3);
        let mut heads = vec![Vec3::new(3.0, -1.0, 0.0)];
        heads.extend(gt.bind_positions());
        let pred = skeleton_at(&heads, &[None, Some(0), Some(1), Some(2)]);
        let shifted = w.remap_joints(&[1, 2, 3]);
        assert_eq!(weightless_controls(&pred, &shifted), vec![true, false, false, false]);
        let mut moved = Pose::rest(&gt);
        moved.local[0].translation += Vec3::new(0.3, 0.0, 0.0);
        moved.local[1].rotation = Quat::from_rotation_z(FRAC_PI_2);
        // The ground root's bone lies nearest GT joint 1's: driven through it, the chain
        // would turn with joint 1. Its children are driven as roots instead.
        assert_eq!(match_joints(&pred, &gt, &[]).unwrap()[0], 1);
        let d = rig_deformation_error(&positions(), &gt, &w, &pred, &shifted, &[true; 4], &[moved], scale())
            .unwrap()
            .unwrap();
        assert!(d.max < 1e-6, "{d:?}");
    }
}
