//! A decomposition turned into a rigged, animated [`Character`]: joint positions and a hierarchy
//! fitted to the bones (after Le & Deng 2014), the weights as a skin, and one clip whose local
//! joint transforms reproduce every frame.
//!
//! Joint between bones `a` and `b`: the rest-space point that moves most nearly the same under
//! both bones' transforms, `argmin_p Σ_f |M_fa p − M_fb p|² + μ|p − m|²` (μ small, `m` the mean
//! of the rest vertices on the a/b cluster boundary, which fixes the free direction of a hinge).
//! Hierarchy: the minimum spanning tree over the bones with that residual as edge cost (bones whose
//! clusters do not touch on the mesh pay a large penalty), rooted at the tree's centre (fewest hops
//! to the farthest bone; ties to the bone with most weight). Each joint sits at its fitted point
//! with its parent; the root at its cluster's weighted centroid.
//!
//! Every joint's bind rotation is the identity, so its skinning matrix is exactly the bone's
//! transform and the clip reproduces the decomposition up to float rounding.

use crate::decompose::Decomposition;
use crate::math::regularised_point;
use crate::SeqError;
use glam::{DMat3, DVec3, Mat4, Quat, Vec3};
use rigml_core::{Channel, ChannelValues, Character, Clip, Interpolation, Mesh, Skeleton, Skin, Transform};
use std::collections::VecDeque;

/// Weight of the pull towards the cluster boundary, per frame (normalised units).
const BOUNDARY_PULL: f64 = 1e-3;
/// Edge-cost penalty for bones whose clusters share no mesh edge (normalised units; residuals
/// of real joints are orders of magnitude smaller).
const NOT_ADJACENT: f64 = 10.0;

/// The rig and how its joints relate to the decomposition's bones.
#[derive(Debug, Clone)]
pub struct Rig {
    pub character: Character,
    /// For each joint, the decomposition bone it animates.
    pub bone_of_joint: Vec<usize>,
    /// Per joint, the RMS over frames of how far its fitted point drifts between the joint's bone
    /// and its parent's (normalised units; 0 for the root): how well the joint is a joint.
    pub joint_residual: Vec<f64>,
}

/// Bone `b`'s transform of frame `f` in the sequence's own units: `x ↦ R x + T`.
pub fn transform_in_units(d: &Decomposition, f: usize, b: usize) -> Option<(Quat, Vec3)> {
    let m = d.transforms.get(f)?.get(b)?;
    let (c, s) = (d.normalisation.centre, d.normalisation.scale);
    Some((m.rotation, c - m.rotation * c + m.translation / s))
}

/// Build the rigged character (mesh = the anchor frame in the sequence's units). Bones without
/// any weight are dropped. `fps` spaces the clip's keys.
pub fn build_rig(d: &Decomposition, name: &str, fps: f32) -> Result<Rig, SeqError> {
    let bones = d.bone_count();
    let n = d.rest.len();
    let frames = d.transforms.len();
    let mut support = vec![0.0f64; bones];
    let mut centroid = vec![DVec3::ZERO; bones];
    for (v, u) in d.rest.iter().enumerate() {
        for (b, w) in d.weights.row(v) {
            support[b as usize] += f64::from(w);
            centroid[b as usize] += f64::from(w) * u.as_dvec3();
        }
    }
    let used: Vec<usize> = (0..bones).filter(|&b| support[b] > 0.0).collect();
    if used.is_empty() || frames == 0 || n == 0 {
        return Err(SeqError::Empty);
    }
    for &b in &used {
        centroid[b] /= support[b];
    }
    let m = used.len();
    // Cluster boundaries: mesh edges whose ends have different dominant bones.
    let dominant = d.weights.dominant();
    let mut boundary = vec![(DVec3::ZERO, 0usize); m * m];
    let slot: Vec<Option<usize>> = (0..bones).map(|b| used.iter().position(|&x| x == b)).collect();
    for t in &d.triangles {
        for e in 0..3 {
            let (v0, v1) = (t[e] as usize, t[(e + 1) % 3] as usize);
            let (Some(&a), Some(&b)) = (dominant.get(v0), dominant.get(v1)) else {
                continue;
            };
            let (Some(Some(a)), Some(Some(b))) = (slot.get(a as usize), slot.get(b as usize)) else {
                continue;
            };
            if a != b {
                let mid = (d.rest[v0] + d.rest[v1]).as_dvec3() * 0.5;
                for (i, j) in [(*a, *b), (*b, *a)] {
                    boundary[i * m + j].0 += mid;
                    boundary[i * m + j].1 += 1;
                }
            }
        }
    }
    // Joint point and residual of every pair.
    let rot: Vec<Vec<DMat3>> = d
        .transforms
        .iter()
        .map(|f| f.iter().map(|r| DMat3::from_quat(r.rotation.as_dquat())).collect())
        .collect();
    let mut point = vec![DVec3::ZERO; m * m];
    let mut cost = vec![f64::INFINITY; m * m];
    let mut drift = vec![0.0f64; m * m];
    for i in 0..m {
        for j in i + 1..m {
            let (a, b) = (used[i], used[j]);
            let (mut ata, mut atc, mut cc) = ([[0.0f64; 3]; 3], DVec3::ZERO, 0.0f64);
            for (f, ft) in d.transforms.iter().enumerate() {
                // Σ_f |A_f p + c_f|² with A_f = R_fa − R_fb, c_f = T_fa − T_fb.
                let am = rot[f][a] - rot[f][b];
                let c = (ft[a].translation - ft[b].translation).as_dvec3();
                let g = am.transpose() * am;
                for (r, row) in ata.iter_mut().enumerate() {
                    for (col, cell) in row.iter_mut().enumerate() {
                        *cell += g.col(col)[r];
                    }
                }
                atc += am.transpose() * c;
                cc += c.length_squared();
            }
            let (mid, adjacent) = match boundary[i * m + j] {
                (s, count) if count > 0 => (s / count as f64, true),
                _ => ((centroid[a] + centroid[b]) * 0.5, false),
            };
            let mu = BOUNDARY_PULL * frames as f64;
            let p = regularised_point(&ata, atc, mu, mid);
            let ap = DVec3::new(
                ata[0][0] * p.x + ata[0][1] * p.y + ata[0][2] * p.z,
                ata[1][0] * p.x + ata[1][1] * p.y + ata[1][2] * p.z,
                ata[2][0] * p.x + ata[2][1] * p.y + ata[2][2] * p.z,
            );
            let residual = ((p.dot(ap) + 2.0 * p.dot(atc) + cc).max(0.0) / frames as f64).sqrt();
            for (x, y) in [(i, j), (j, i)] {
                point[x * m + y] = p;
                drift[x * m + y] = residual;
                cost[x * m + y] = residual + if adjacent { 0.0 } else { NOT_ADJACENT };
            }
        }
    }
    // Minimum spanning tree (Prim, dense: m is the bone count).
    let mut in_tree = vec![false; m];
    let mut best = vec![(f64::INFINITY, usize::MAX); m];
    let mut neighbours = vec![Vec::new(); m];
    best[0] = (0.0, usize::MAX);
    for _ in 0..m {
        let Some(next) = (0..m)
            .filter(|&i| !in_tree[i])
            .min_by(|&x, &y| best[x].0.total_cmp(&best[y].0))
        else {
            break;
        };
        in_tree[next] = true;
        let from = best[next].1;
        if from != usize::MAX {
            neighbours[next].push(from);
            neighbours[from].push(next);
        }
        for i in 0..m {
            if !in_tree[i] && cost[next * m + i] < best[i].0 {
                best[i] = (cost[next * m + i], next);
            }
        }
    }
    let root = (0..m)
        .min_by(|&x, &y| {
            let (ex, ey) = (eccentricity(&neighbours, x), eccentricity(&neighbours, y));
            ex.cmp(&ey).then(support[used[y]].total_cmp(&support[used[x]]))
        })
        .unwrap_or(0);
    // Breadth-first order from the root: parents before children.
    let mut order = Vec::with_capacity(m);
    let mut parent_slot = vec![usize::MAX; m];
    let mut seen = vec![false; m];
    let mut queue = VecDeque::from([root]);
    seen[root] = true;
    while let Some(i) = queue.pop_front() {
        order.push(i);
        for &c in &neighbours[i] {
            if !seen[c] {
                seen[c] = true;
                parent_slot[c] = i;
                queue.push_back(c);
            }
        }
    }
    let joint_of_slot: Vec<usize> = {
        let mut j = vec![0; m];
        for (joint, &i) in order.iter().enumerate() {
            j[i] = joint;
        }
        j
    };
    let norm = &d.normalisation;
    let mut parents = Vec::with_capacity(m);
    let mut positions = Vec::with_capacity(m);
    let mut residuals = Vec::with_capacity(m);
    for &i in &order {
        let p = parent_slot[i];
        if p == usize::MAX {
            parents.push(None);
            positions.push(norm.undo(centroid[used[i]].as_vec3()));
            residuals.push(0.0);
        } else {
            parents.push(Some(joint_of_slot[p]));
            positions.push(norm.undo(point[p * m + i].as_vec3()));
            residuals.push(drift[p * m + i]);
        }
    }
    let bone_of_joint: Vec<usize> = order.iter().map(|&i| used[i]).collect();
    let skeleton = Skeleton {
        names: (0..m).map(|j| format!("bone_{j:02}")).collect(),
        rest_local: (0..m)
            .map(|j| {
                let base = parents[j].map_or(Vec3::ZERO, |p: usize| positions[p]);
                Transform::from_translation(positions[j] - base)
            })
            .collect(),
        inverse_bind: positions.iter().map(|p| Mat4::from_translation(-*p)).collect(),
        parents,
    };
    let joint_of_bone: Vec<Option<u32>> = (0..bones)
        .map(|b| bone_of_joint.iter().position(|&x| x == b).map(|j| j as u32))
        .collect();
    let rows: Vec<Vec<(u32, f32)>> = (0..n)
        .map(|v| {
            d.weights
                .row(v)
                .filter_map(|(b, w)| joint_of_bone.get(b as usize).copied().flatten().map(|j| (j, w)))
                .collect()
        })
        .collect();
    let skin = Skin::from_rows(rows.iter().map(Vec::as_slice), m, d.weights.k.max(1))?;
    let clip = animation(d, &skeleton, &positions, &bone_of_joint, fps);
    let character = Character {
        name: name.to_string(),
        mesh: Mesh {
            positions: d.rest.iter().map(|u| norm.undo(*u)).collect(),
            triangles: d.triangles.clone(),
            ..Default::default()
        },
        skeleton,
        skin: Some(skin),
        clips: vec![clip],
        attachments: Vec::new(),
    };
    character.validate()?;
    Ok(Rig {
        character,
        bone_of_joint,
        joint_residual: residuals,
    })
}

/// Hops from `start` to the farthest node of the tree.
fn eccentricity(neighbours: &[Vec<usize>], start: usize) -> usize {
    let mut depth = vec![usize::MAX; neighbours.len()];
    depth[start] = 0;
    let mut queue = VecDeque::from([start]);
    let mut far = 0;
    while let Some(i) = queue.pop_front() {
        far = far.max(depth[i]);
        for &c in &neighbours[i] {
            if depth[c] == usize::MAX {
                depth[c] = depth[i] + 1;
                queue.push_back(c);
            }
        }
    }
    far
}

/// One clip, a key per frame: joint `j`'s world transform at frame `f` is its bone's transform
/// applied to the bind frame (identity rotation at the joint position), made local to the parent.
fn animation(d: &Decomposition, skeleton: &Skeleton, positions: &[Vec3], bone_of_joint: &[usize], fps: f32) -> Clip {
    let frames = d.transforms.len();
    let fps = if fps.is_finite() && fps > 0.0 { fps } else { 24.0 };
    let times: Vec<f32> = (0..frames).map(|f| f as f32 / fps).collect();
    let joints = skeleton.joint_count();
    let mut translations = vec![Vec::with_capacity(frames); joints];
    let mut rotations: Vec<Vec<Quat>> = vec![Vec::with_capacity(frames); joints];
    for f in 0..frames {
        let world: Vec<(Quat, Vec3)> = (0..joints)
            .map(|j| {
                let (r, t) = transform_in_units(d, f, bone_of_joint[j]).unwrap_or((Quat::IDENTITY, Vec3::ZERO));
                (r, r * positions[j] + t)
            })
            .collect();
        for j in 0..joints {
            let (rj, tj) = world[j];
            let (rl, tl) = match skeleton.parents[j] {
                Some(p) => {
                    let (rp, tp) = world[p];
                    let inv = rp.inverse();
                    ((inv * rj).normalize(), inv * (tj - tp))
                }
                None => (rj, tj),
            };
            // Keep consecutive keys in one hemisphere so interpolation takes the short way.
            let rl = match rotations[j].last() {
                Some(prev) if prev.dot(rl) < 0.0 => -rl,
                _ => rl,
            };
            rotations[j].push(rl);
            translations[j].push(tl);
        }
    }
    let mut channels = Vec::with_capacity(2 * joints);
    for (j, (t, r)) in translations.into_iter().zip(rotations).enumerate() {
        channels.push(Channel {
            joint: j,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: ChannelValues::Translation(t),
        });
        channels.push(Channel {
            joint: j,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: ChannelValues::Rotation(r),
        });
    }
    Clip {
        name: "decomposition".into(),
        channels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompose::tests::two_part_bar;
    use crate::{decompose, Options};

    #[test]
    fn ball_joint_is_found_and_the_clip_reproduces_the_frames() {
        let seq = two_part_bar(8);
        let options = Options {
            bones: 2,
            max_influences: 2,
            iterations: 5,
            // No smoothness pull: it would blend the weights across the cut on purpose.
            smoothness: 0.0,
            ..Options::default()
        };
        let d = decompose(&seq, &options, &|_, _| {}).unwrap();
        let rig = build_rig(&d, "bar", 24.0).unwrap();
        let c = &rig.character;
        assert_eq!(c.skeleton.joint_count(), 2);
        let child = (0..2).find(|&j| c.skeleton.parents[j].is_some()).unwrap();
        let joint = c.skeleton.bind_positions()[child];
        assert!(joint.distance(Vec3::new(1.0, 0.0, 0.0)) < 2e-3, "joint at {joint}");
        assert!(rig.joint_residual[child] < 5e-4, "{:?}", rig.joint_residual);
        // Sampling the clip at each key and skinning gives the frames back.
        let skin = c.skin.as_ref().unwrap();
        for (f, frame) in seq.frames.iter().enumerate() {
            let pose = c.clips[0].sample(&c.skeleton, f as f32 / 24.0);
            let m = rigml_core::skinning_matrices(&c.skeleton, &pose).unwrap();
            let x = rigml_core::lbs(&c.mesh.positions, skin, &m);
            let worst = x.iter().zip(frame).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
            assert!(worst < 1e-4, "frame {f}: {worst}");
        }
    }
}
