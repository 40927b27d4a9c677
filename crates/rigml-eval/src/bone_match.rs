//! Recovered bone motion against ground truth (issue 6): a decomposition's per-frame bone
//! transforms and joint positions compared with a skinned character's own joints, after a
//! one-to-one matching of bones to joints ([`hungarian`] on the mean point error).
//!
//! Both sides are given as per-frame maps from the anchor frame's space to frame `f`'s. For a
//! true joint `j` and a bone `b`, the point error at frame `f` is `|T_fj(p_j) − R_fb(p_j)|` with
//! `p_j` the joint's anchor-frame position (multiplied by `scale`, the METRICS.md §6
//! normalisation); the rotation error is the angle of `rot(T_fj) · rot(R_fb)⁻¹`.

use crate::sequence_metrics::hungarian;
use glam::{Mat4, Quat, Vec3};
use rigml_core::Skin;

/// The comparison after matching.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneMatch {
    /// True joints compared.
    pub joints: usize,
    /// Recovered bones available.
    pub bones: usize,
    /// `(true joint, bone)` pairs of the matching.
    pub pairs: Vec<(usize, usize)>,
    /// Mean over matched pairs and frames of the point error (normalised units).
    pub point_error_mean: f64,
    /// Mean over matched pairs and frames of the rotation error, degrees.
    pub rotation_deg_mean: f64,
    /// Median over matched pairs of the per-pair mean rotation error, degrees.
    pub rotation_deg_median: f64,
    /// Per pair (in the order of `pairs`): its mean rotation error over the frames, degrees.
    /// Where the mean and the median part, these say which joints carry the error.
    pub rotation_deg_per_pair: Vec<f64>,
    /// Mean distance between matched true and recovered joint positions in the anchor frame
    /// (normalised units); `None` without recovered joint positions.
    pub joint_position_error_mean: Option<f64>,
}

/// Match and compare. `truth[f][j]`, `recovered[f][b]`: anchor → frame `f` maps; `joints`: the
/// true joints to compare; `probes[j]`: true joint positions in the anchor frame;
/// `recovered_joints[b]`: recovered joint positions (anchor frame), if any. The matching
/// minimises `cost` when given (row per entry of `joints`, column per bone, e.g.
/// [`skin_overlap_cost`]), else the mean point error; the errors reported are the same measures
/// on the pairs it gives. `None` when there is nothing to compare, the frame counts differ or
/// `cost` has the wrong size.
pub fn match_bones(
    cost: Option<&[f64]>,
    truth: &[Vec<Mat4>],
    recovered: &[Vec<Mat4>],
    joints: &[usize],
    probes: &[Vec3],
    recovered_joints: Option<&[Vec3]>,
    scale: f32,
) -> Option<BoneMatch> {
    let frames = truth.len();
    let bones = recovered.first().map_or(0, Vec::len);
    if frames == 0 || recovered.len() != frames || joints.is_empty() || bones == 0 {
        return None;
    }
    let rotation = |m: &Mat4| m.to_scale_rotation_translation().1;
    let mut point = vec![0.0f64; joints.len() * bones];
    let mut angle = vec![0.0f64; joints.len() * bones];
    for (row, &j) in joints.iter().enumerate() {
        let p = *probes.get(j)?;
        for f in 0..frames {
            let t = truth[f].get(j)?;
            let (tp, tq) = (t.transform_point3(p), rotation(t));
            for (b, r) in recovered[f].iter().enumerate().take(bones) {
                point[row * bones + b] += f64::from(tp.distance(r.transform_point3(p)) * scale) / frames as f64;
                angle[row * bones + b] += rotation_angle_deg(tq, rotation(r)) / frames as f64;
            }
        }
    }
    let assignment = match cost {
        Some(c) if c.len() == point.len() => hungarian(c, joints.len(), bones),
        Some(_) => return None,
        None => hungarian(&point, joints.len(), bones),
    };
    let pairs: Vec<(usize, usize, usize)> = assignment
        .iter()
        .enumerate()
        .filter_map(|(row, b)| b.map(|b| (row, joints[row], b)))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let count = pairs.len() as f64;
    let point_error_mean = pairs.iter().map(|&(row, _, b)| point[row * bones + b]).sum::<f64>() / count;
    let rotation_deg_per_pair: Vec<f64> = pairs.iter().map(|&(row, _, b)| angle[row * bones + b]).collect();
    let rotation_deg_mean = rotation_deg_per_pair.iter().sum::<f64>() / count;
    let mut angles = rotation_deg_per_pair.clone();
    angles.sort_by(f64::total_cmp);
    let rotation_deg_median = angles[angles.len() / 2];
    let joint_position_error_mean = recovered_joints.map(|rj| {
        pairs
            .iter()
            .filter_map(|&(_, j, b)| Some(f64::from(probes.get(j)?.distance(*rj.get(b)?) * scale)))
            .sum::<f64>()
            / count
    });
    Some(BoneMatch {
        joints: joints.len(),
        bones,
        pairs: pairs.iter().map(|&(_, j, b)| (j, b)).collect(),
        point_error_mean,
        rotation_deg_mean,
        rotation_deg_median,
        rotation_deg_per_pair,
        joint_position_error_mean,
    })
}

/// A matching cost that pairs joints moving the same part of the mesh: `1 − cos` of the angle
/// between true joint `joints[r]`'s weights and bone `bones[b]`'s over the vertices (one skin
/// row per vertex on both sides, the same vertices in the same order). Row-major, one row per
/// entry of `joints`. `None` when the skins' vertex counts differ.
pub fn skin_overlap_cost(truth: &Skin, joints: &[usize], recovered: &Skin, bones: &[usize]) -> Option<Vec<f64>> {
    if truth.vertex_count() != recovered.vertex_count() {
        return None;
    }
    let (a, b) = (weight_columns(truth, joints), weight_columns(recovered, bones));
    let norm = |c: &[(usize, f64)]| c.iter().map(|e| e.1 * e.1).sum::<f64>().sqrt();
    let mut dense = vec![0.0f64; truth.vertex_count()];
    let mut cost = vec![1.0f64; joints.len() * bones.len()];
    for (r, col) in a.iter().enumerate() {
        let na = norm(col);
        for &(v, w) in col {
            dense[v] = w;
        }
        for (c, other) in b.iter().enumerate() {
            let nb = norm(other);
            if na > 0.0 && nb > 0.0 {
                let dot: f64 = other.iter().map(|&(v, w)| dense[v] * w).sum();
                cost[r * bones.len() + c] = 1.0 - dot / (na * nb);
            }
        }
        for &(v, _) in col {
            dense[v] = 0.0;
        }
    }
    Some(cost)
}

/// Per entry of `of`: the `(vertex, weight)` pairs of the vertices that joint weights in `skin`.
fn weight_columns(skin: &Skin, of: &[usize]) -> Vec<Vec<(usize, f64)>> {
    let mut at = std::collections::HashMap::new();
    for (i, &j) in of.iter().enumerate() {
        at.insert(j, i);
    }
    let mut out = vec![Vec::new(); of.len()];
    for (v, row) in skin.rows().enumerate() {
        for inf in row {
            if let Some(&i) = at.get(&(inf.joint as usize)) {
                out[i].push((v, f64::from(inf.weight)));
            }
        }
    }
    out
}

/// A matching cost that pairs joints moving the same part of the mesh the same way: for true
/// joint `joints[r]` and bone `b`, the mean over frames and over the vertices the joint weights
/// (weighted by its weights) of `|T_fj(v) − R_fb(v)| · scale`, `v` the vertex's anchor-frame
/// position. Row-major, one row per entry of `joints`.
///
/// Why not the point error at the joint itself (what [`match_bones`] minimises without a cost):
/// a joint is the pivot between its parent and itself, so at its own position the parent's map
/// and its own agree, and a bone moving the parent's part, or another chain rooted at the same
/// place, matches it as well as the right bone. The vertices it weights lie off the pivot, where
/// those maps part. `None` when the skin, the vertices and the maps disagree in size.
pub fn vertex_motion_cost(
    truth: &[Vec<Mat4>],
    recovered: &[Vec<Mat4>],
    joints: &[usize],
    skin: &Skin,
    anchor_vertices: &[Vec3],
    scale: f32,
) -> Option<Vec<f64>> {
    let frames = truth.len();
    let bones = recovered.first().map_or(0, Vec::len);
    if frames == 0 || recovered.len() != frames || skin.vertex_count() != anchor_vertices.len() {
        return None;
    }
    // Per row: (vertex, share of the row's weight, over the frames), computed once.
    let mut weighted = weight_columns(skin, joints);
    for column in &mut weighted {
        let total: f64 = column.iter().map(|e| e.1).sum();
        let per = if total > 0.0 {
            f64::from(scale) / (total * frames as f64)
        } else {
            0.0
        };
        for e in column.iter_mut() {
            e.1 *= per;
        }
    }
    let mut cost = vec![0.0f64; joints.len() * bones];
    let mut moved = vec![Vec3::ZERO; bones * anchor_vertices.len()];
    for f in 0..frames {
        if recovered[f].len() != bones {
            return None;
        }
        // Every vertex under every bone's map of this frame, once.
        for (b, r) in recovered[f].iter().enumerate() {
            for (v, p) in anchor_vertices.iter().enumerate() {
                moved[b * anchor_vertices.len() + v] = r.transform_point3(*p);
            }
        }
        for (r, &j) in joints.iter().enumerate() {
            let t = truth[f].get(j)?;
            for &(v, share) in &weighted[r] {
                let tp = t.transform_point3(anchor_vertices[v]);
                for b in 0..bones {
                    cost[r * bones + b] += share * f64::from(tp.distance(moved[b * anchor_vertices.len() + v]));
                }
            }
        }
    }
    Some(cost)
}

/// Angle of the rotation taking `b` to `a`, degrees in `[0, 180]`.
pub fn rotation_angle_deg(a: Quat, b: Quat) -> f64 {
    let d = f64::from((a * b.inverse()).normalize().w.abs().min(1.0));
    (2.0 * d.acos()).to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_motion_matches_exactly_despite_permutation() {
        // Two joints with different motions; the recovered bones are the same motions swapped.
        let m0 = |f: usize| Mat4::from_rotation_z(0.3 * f as f32);
        let m1 = |f: usize| Mat4::from_translation(Vec3::new(f as f32, 0.0, 0.0));
        let truth: Vec<Vec<Mat4>> = (0..4).map(|f| vec![m0(f), m1(f)]).collect();
        let recovered: Vec<Vec<Mat4>> = (0..4).map(|f| vec![m1(f), m0(f)]).collect();
        let probes = [Vec3::X, Vec3::Y];
        let got = match_bones(
            None,
            &truth,
            &recovered,
            &[0, 1],
            &probes,
            Some(&[Vec3::Y, Vec3::X]),
            1.0,
        )
        .unwrap();
        assert_eq!(got.pairs, vec![(0, 1), (1, 0)]);
        assert!(got.point_error_mean < 1e-6 && got.rotation_deg_mean < 1e-3, "{got:?}");
        assert_eq!(got.joint_position_error_mean, Some(0.0));
        // A 90° error about the probe's own axis shows in the angle, not in the point error.
        let rotated: Vec<Vec<Mat4>> = (0..4).map(|f| vec![m0(f) * Mat4::from_rotation_x(1.5707964)]).collect();
        let got = match_bones(None, &truth, &rotated, &[0], &probes, None, 1.0).unwrap();
        assert!((got.rotation_deg_mean - 90.0).abs() < 1e-2, "{got:?}");
        assert_eq!(got.rotation_deg_per_pair.len(), 1);
        assert!((got.rotation_deg_per_pair[0] - 90.0).abs() < 1e-2, "{got:?}");
        assert!(got.point_error_mean < 1e-6);
        assert!(match_bones(None, &truth, &recovered[..2], &[0], &probes, None, 1.0).is_none());
    }

    #[test]
    fn skin_overlap_pairs_joints_that_weight_the_same_vertices() {
        use rigml_core::skin::SkinBuilder;
        let skin = |rows: &[&[(u32, f32)]]| {
            let mut b = SkinBuilder::new(3, 4).unwrap();
            for r in rows {
                b.push_row(r).unwrap();
            }
            b.finish()
        };
        // True joints 0 and 1 weight vertices 0-1 and 2-3; bones 2 and 0 weight them.
        let truth = skin(&[&[(0, 1.0)], &[(0, 0.8), (1, 0.2)], &[(1, 1.0)], &[(1, 1.0)]]);
        let fitted = skin(&[&[(2, 1.0)], &[(2, 1.0)], &[(0, 1.0)], &[(0, 0.5), (2, 0.5)]]);
        let cost = skin_overlap_cost(&truth, &[0, 1], &fitted, &[0, 2]).unwrap();
        assert!(cost[1] < cost[0] && cost[2] < cost[3], "{cost:?}");
        assert!(cost.iter().all(|c| (0.0..=1.0 + 1e-12).contains(c)), "{cost:?}");
        // The matching follows the cost, not the motion's point error.
        let m0 = |f: usize| Mat4::from_rotation_z(0.3 * f as f32);
        let m1 = |f: usize| Mat4::from_translation(Vec3::new(f as f32, 0.0, 0.0));
        let truth_m: Vec<Vec<Mat4>> = (0..4).map(|f| vec![m0(f), m1(f)]).collect();
        let recovered: Vec<Vec<Mat4>> = (0..4).map(|f| vec![m0(f), m1(f)]).collect();
        let probes = [Vec3::X, Vec3::Y];
        let got = match_bones(Some(&cost), &truth_m, &recovered, &[0, 1], &probes, None, 1.0).unwrap();
        assert_eq!(got.pairs, vec![(0, 1), (1, 0)]);
        assert!(got.rotation_deg_mean > 1.0, "{got:?}");
        let short = skin(&[&[(0, 1.0)]]);
        assert!(skin_overlap_cost(&short, &[0], &fitted, &[0]).is_none());
    }

    #[test]
    fn vertex_motion_tells_a_joint_from_others_pivoting_at_the_same_place() {
        use rigml_core::skin::SkinBuilder;
        // Joint 0 stays; joint 1 turns about its pivot (1, 0, 0) by 0.2 rad a frame. Bones: the
        // identity, the same pivot turned the other way (a sibling chain), and joint 1's motion.
        let pivot = Vec3::X;
        let about = |a: f32| Mat4::from_translation(pivot) * Mat4::from_rotation_z(a) * Mat4::from_translation(-pivot);
        let truth: Vec<Vec<Mat4>> = (0..5).map(|f| vec![Mat4::IDENTITY, about(0.2 * f as f32)]).collect();
        let recovered: Vec<Vec<Mat4>> = (0..5)
            .map(|f| vec![Mat4::IDENTITY, about(-0.2 * f as f32), about(0.2 * f as f32)])
            .collect();
        // At the pivot every bone agrees with joint 1: the point error there cannot choose.
        let at_pivot = match_bones(None, &truth, &recovered, &[1], &[Vec3::ZERO, pivot], None, 1.0).unwrap();
        assert!(at_pivot.point_error_mean < 1e-6, "{at_pivot:?}");
        // The vertices joint 1 weights lie off the pivot, where the bones part.
        let vertices = [
            Vec3::ZERO,
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(2.0, 0.5, 0.0),
        ];
        let mut b = SkinBuilder::new(2, 4).unwrap();
        for row in [&[(0u32, 1.0f32)][..], &[(0, 1.0)], &[(1, 1.0)], &[(0, 0.2), (1, 0.8)]] {
            b.push_row(row).unwrap();
        }
        let skin = b.finish();
        let cost = vertex_motion_cost(&truth, &recovered, &[0, 1], &skin, &vertices, 1.0).unwrap();
        assert!(cost[5] < 1e-6 && cost[3] > 0.1 && cost[4] > 0.1, "{cost:?}");
        let got = match_bones(
            Some(&cost),
            &truth,
            &recovered,
            &[0, 1],
            &[Vec3::ZERO, pivot],
            None,
            1.0,
        )
        .unwrap();
        assert_eq!(got.pairs, vec![(0, 0), (1, 2)]);
        assert!(got.rotation_deg_mean < 1e-3, "{got:?}");
        assert!(vertex_motion_cost(&truth, &recovered, &[0, 1], &skin, &vertices[..3], 1.0).is_none());
    }
}
