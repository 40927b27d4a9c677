//! Training samples from skinned characters: features, the GT target over the candidates, and
//! the vectors of the LBS deformation loss; plus re-posed copies (pose augmentation) and the
//! on-disk feature cache.
//!
//! Target: the GT row (METRICS.md §1 top-4, renormalised) restricted to the candidate joints and
//! renormalised over them (RigNet's recipe). The GT mass outside the candidates is recorded as
//! *coverage loss*: it bounds the recall the model can reach.
//!
//! Deformation vectors: for [`POSES`] random poses (METRICS.md §3 style, but seeded from the
//! asset id plus a training salt, never the evaluation seeds), `y[v,k,p] = M_p,j_k x_v / s`, with
//! `s` the longest side of the rest-posed mesh. The LBS error of predicted weights `q` against
//! targets `w` is then `|sum_k (q_k - w_k) y[v,k,p]|`, linear in the weights.

use crate::features::{self, Features, CANDIDATES, FEATURES, FEATURE_VERSION, PATCH_DIMS, PATCH_POINTS};
use crate::LearnError;
use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rigml_core::{lbs, skinning_matrices, Character, Pose, Skeleton, Skin};
use rigml_skin::post::Prepared;
use std::collections::HashMap;
use std::path::Path;

/// Random poses per sample for the deformation loss.
pub const POSES: usize = 4;

/// Numbers per (vertex, candidate) in the deformation vectors.
pub const DEFORM: usize = 3 * POSES;

/// Largest joint rotation of the loss poses and of the augmentation poses, radians (45°).
const THETA_MAX: f32 = std::f32::consts::FRAC_PI_4;

/// How samples are drawn from one character.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleOptions {
    /// Most welded vertices kept per character copy (random subset, seeded).
    pub max_vertices: usize,
    /// Re-posed copies added per character (pose augmentation; 0 = bind pose only).
    pub posed_copies: usize,
    /// Stretched copies added per character (proportion augmentation, see [`stretched`]).
    pub stretched_copies: usize,
    /// Subdivided copies added per character (density augmentation, see [`rigml_core::subdivided`]; each
    /// copy is the same subdivision, with its own vertex subset and loss poses). One by default:
    /// family-grouped cross-validation found it better on two seeds
    /// (docs/experiments/2026-11-28-subdivided-copies.md).
    pub subdivided_copies: usize,
    /// Coarsened copies added per character (skeleton augmentation, see [`coarsened`]): each
    /// keeps every non-root joint with a chance drawn per copy from [`COARSE_KEEP`], the others
    /// merged into their nearest kept ancestor, so that the network also sees rigs whose few
    /// bones each carry a large part of the body. One by default: family-grouped
    /// cross-validation found it better on two seeds, most on rigs of few joints
    /// (docs/experiments/2026-12-04-coarse-copies.md).
    pub coarse_copies: usize,
    /// Seed of the vertex subset and the poses.
    pub seed: u64,
    /// Feature layout of the samples (one of [`features::FEATURE_VERSIONS`]).
    pub feature_version: u32,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            max_vertices: 3000,
            posed_copies: 1,
            stretched_copies: 0,
            subdivided_copies: 1,
            coarse_copies: 1,
            seed: 1,
            feature_version: FEATURE_VERSION,
        }
    }
}

/// Samples of a set of characters, flat arrays ready for batching.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// `[n * K * F]`
    pub x: Vec<f32>,
    /// `[n * K]`
    pub mask: Vec<f32>,
    /// `[n * K]` target weights over the candidates (rows sum to 1, or 0 when no GT mass).
    pub target: Vec<f32>,
    /// `[n * K * DEFORM]`
    pub deform: Vec<f32>,
    /// `[n * PATCH_POINTS * PATCH_DIMS]` the vertex's surface patch.
    pub patch: Vec<f32>,
    /// `[n]` which character (index into the input list) each sample comes from.
    pub asset: Vec<u32>,
    /// Per character: mean GT mass outside the candidates over its kept vertices.
    pub coverage_loss: Vec<f32>,
}

impl Samples {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.asset.len()
    }

    /// No samples at all.
    pub fn is_empty(&self) -> bool {
        self.asset.is_empty()
    }

    /// Whether every array holds exactly [`Samples::len`] samples' worth of numbers (as
    /// [`character_samples`] and the cache give them; training refuses anything else).
    pub fn is_whole(&self) -> bool {
        let n = self.len();
        self.x.len() == n * CANDIDATES * FEATURES
            && self.mask.len() == n * CANDIDATES
            && self.target.len() == n * CANDIDATES
            && self.deform.len() == n * CANDIDATES * DEFORM
            && self.patch.len() == n * PATCH_POINTS * PATCH_DIMS
    }

    /// Append `other`, renumbering its assets after ours.
    pub fn append(&mut self, other: Samples, asset: u32) {
        self.x.extend(other.x);
        self.mask.extend(other.mask);
        self.target.extend(other.target);
        self.deform.extend(other.deform);
        self.patch.extend(other.patch);
        self.asset.extend(other.asset.iter().map(|_| asset));
        self.coverage_loss.extend(other.coverage_loss);
    }
}

/// FNV-1a-64 over bytes, continuing from `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The GT row of vertex `v`: top 4 by weight (ties to the lower joint), normalised.
pub fn gt_top4(skin: &Skin, v: usize) -> Vec<(u32, f32)> {
    let mut row: Vec<(u32, f32)> = skin
        .influences(v)
        .iter()
        .filter(|i| i.weight.is_finite() && i.weight > 0.0)
        .map(|i| (i.joint, i.weight))
        .collect();
    row.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    row.truncate(4);
    let sum: f32 = row.iter().map(|e| e.1).sum();
    if sum > 1e-8 {
        row.iter_mut().for_each(|e| e.1 /= sum);
    } else {
        row.clear();
    }
    row
}

/// `count` random poses of `skeleton` (rotations up to 45° about random axes after the rest
/// rotation, roots fixed), from `rng`.
pub fn random_poses(skeleton: &Skeleton, count: usize, rng: &mut ChaCha8Rng) -> Vec<Pose> {
    (0..count)
        .map(|_| {
            let mut pose = Pose::rest(skeleton);
            for (j, local) in pose.local.iter_mut().enumerate() {
                if skeleton.parents.get(j).copied().flatten().is_none() {
                    continue;
                }
                let z = 2.0 * rng.random::<f32>() - 1.0;
                let phi = std::f32::consts::TAU * rng.random::<f32>();
                let r = (1.0 - z * z).max(0.0).sqrt();
                let axis = Vec3::new(r * phi.cos(), r * phi.sin(), z).normalize_or(Vec3::Y);
                let angle = THETA_MAX * rng.random::<f32>();
                local.rotation = (local.rotation * Quat::from_axis_angle(axis, angle)).normalize();
            }
            pose
        })
        .collect()
}

/// `character` re-posed by `pose` with its own GT weights: the posed mesh, and a skeleton whose
/// rest and bind pose are that pose.
pub fn reposed(character: &Character, skin: &Skin, pose: &Pose) -> Result<Character, LearnError> {
    let matrices = skinning_matrices(&character.skeleton, pose).map_err(|e| LearnError::Data(e.to_string()))?;
    let mut posed = character.clone();
    posed.mesh.positions = lbs(&character.mesh.positions, skin, &matrices);
    posed.mesh.normals.clear();
    posed.skeleton.rest_local = pose.local.clone();
    posed.skeleton.bind_to_rest();
    Ok(posed)
}

/// Largest stretch of the proportion augmentation along each axis (factors from `1/STRETCH_MAX`
/// to `STRETCH_MAX`, log-uniform).
const STRETCH_MAX: f32 = 1.25;

/// `character` stretched by `factors` along the world axes: mesh and joint positions scaled,
/// joint orientations kept (so bones stay rigid frames), GT weights unchanged: a thinner,
/// taller or wider copy of the same artist's binding, for the features that depend on
/// proportions (bone lengths against distances to the surface). With the default model's
/// recipe it did not help on val (docs/experiments/2026-11-22-stretched-copies.md), so it is off by default.
pub fn stretched(character: &Character, factors: Vec3) -> Result<Character, LearnError> {
    if !(factors.is_finite() && factors.min_element() > 0.0) {
        return Err(LearnError::Data(format!(
            "stretch factors must be positive, got {factors}"
        )));
    }
    let skeleton = &character.skeleton;
    let bind = skeleton.bind_world();
    let world: Vec<glam::Mat4> = bind
        .iter()
        .map(|m| {
            let (_, rotation, translation) = m.to_scale_rotation_translation();
            glam::Mat4::from_rotation_translation(rotation, translation * factors)
        })
        .collect();
    let mut out = character.clone();
    out.mesh.positions.iter_mut().for_each(|p| *p *= factors);
    out.mesh.normals.clear();
    out.skeleton.rest_local = world
        .iter()
        .enumerate()
        .map(|(j, m)| {
            let local = match skeleton.parents.get(j).copied().flatten().and_then(|p| world.get(p)) {
                Some(parent) => parent.inverse() * *m,
                None => *m,
            };
            rigml_core::Transform::from_mat4(&local)
        })
        .collect();
    out.skeleton.bind_to_rest();
    out.validate()
        .map_err(|e| LearnError::Data(format!("stretched copy: {e}")))?;
    Ok(out)
}

/// The range of the chance that a coarsened copy keeps each non-root joint (drawn uniformly per
/// copy): from a tenth (a 50-joint rig becomes one of about 6, like the fish and blob packs) to
/// two thirds (a rig with its chains thinned).
pub const COARSE_KEEP: std::ops::Range<f32> = 0.1..0.67;

/// `character` with the joints `keep` marks `false` merged into their nearest kept ancestor:
/// their weights go to it and their kept descendants hang from it, every kept joint staying
/// where it was (same bind and rest placement), so one bone now spans what the merged joints
/// did. Roots are always kept. The copy has no clips or attachments (their joint indices would
/// be stale). It is how an artist's detailed rig becomes one with few bones over large regions,
/// the rigs (fish, blobs, props) the network had seen too few of.
pub fn coarsened(character: &Character, keep: &[bool]) -> Result<Character, LearnError> {
    let skeleton = &character.skeleton;
    let n = skeleton.joint_count();
    if keep.len() != n {
        return Err(LearnError::Data(format!(
            "coarsened copy: {} keep flags for {n} joints",
            keep.len()
        )));
    }
    // Nearest kept ancestor (or the joint itself) of every joint; parents come first.
    let mut owner = vec![0usize; n];
    let mut index = vec![usize::MAX; n];
    let mut kept = Vec::new();
    for j in 0..n {
        match skeleton.parents[j] {
            Some(p) if !keep[j] => owner[j] = owner[p],
            _ => {
                owner[j] = j;
                index[j] = kept.len();
                kept.push(j);
            }
        }
    }
    let world = skeleton.rest_world();
    let mut out = character.clone();
    out.clips.clear();
    out.attachments.clear();
    out.skeleton = Skeleton {
        names: kept.iter().map(|&j| skeleton.names[j].clone()).collect(),
        parents: kept
            .iter()
            .map(|&j| skeleton.parents[j].map(|p| index[owner[p]]))
            .collect(),
        rest_local: kept
            .iter()
            .map(|&j| {
                let local = match skeleton.parents[j] {
                    Some(p) => world[owner[p]].inverse() * world[j],
                    None => world[j],
                };
                rigml_core::Transform::from_mat4(&local)
            })
            .collect(),
        inverse_bind: kept.iter().map(|&j| skeleton.inverse_bind[j]).collect(),
    };
    if let Some(skin) = &character.skin {
        let rows: Vec<Vec<(u32, f32)>> = skin
            .rows()
            .map(|row| {
                row.iter()
                    .map(|i| (index[owner[i.joint as usize]] as u32, i.weight))
                    .collect()
            })
            .collect();
        out.skin = Some(
            Skin::from_rows(rows.iter().map(|r| r.as_slice()), kept.len(), skin.max_influences())
                .map_err(|e| LearnError::Data(format!("coarsened copy: {e}")))?,
        );
    }
    out.validate()
        .map_err(|e| LearnError::Data(format!("coarsened copy: {e}")))?;
    Ok(out)
}

/// Samples of one character pose (bind pose or a re-posed copy), `salt` varies the seeds.
fn samples_of_pose(
    character: &Character,
    skin: &Skin,
    options: &SampleOptions,
    salt: u64,
) -> Result<Samples, LearnError> {
    let prep = Prepared::new(&character.mesh, &character.skeleton).map_err(|e| LearnError::Data(e.to_string()))?;
    let feats: Features = features::extract_with_patches(&prep, &character.skeleton.parents, options.feature_version);
    let n = feats.vertex_count;
    // Representative source vertex of every welded vertex.
    let mut source = vec![usize::MAX; n];
    for (v, &w) in prep.welded.map.iter().enumerate() {
        if let Some(s) = source.get_mut(w as usize) {
            if *s == usize::MAX {
                *s = v;
            }
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed ^ salt);
    let mut order: Vec<usize> = (0..n).filter(|&w| source[w] != usize::MAX).collect();
    // Partial Fisher-Yates: the first `max_vertices` entries are a uniform subset.
    let keep = options.max_vertices.min(order.len());
    for i in 0..keep {
        let j = rng.random_range(i..order.len());
        order.swap(i, j);
    }
    order.truncate(keep);
    order.sort_unstable();

    // Deformation vectors in rest-normalised units.
    let rest = skinning_matrices(&character.skeleton, &Pose::rest(&character.skeleton))
        .map_err(|e| LearnError::Data(e.to_string()))?;
    let rest_positions = lbs(&character.mesh.positions, skin, &rest);
    let (lo, hi) = rest_positions
        .iter()
        .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), &p| {
            (lo.min(p), hi.max(p))
        });
    let longest = (hi - lo).max_element();
    let inv_scale = if longest.is_finite() && longest > 0.0 {
        1.0 / longest
    } else {
        1.0
    };
    let poses = random_poses(&character.skeleton, POSES, &mut rng);
    let matrices: Vec<Vec<glam::Mat4>> = poses
        .iter()
        .map(|p| skinning_matrices(&character.skeleton, p))
        .collect::<Result<_, _>>()
        .map_err(|e| LearnError::Data(e.to_string()))?;

    let mut out = Samples::default();
    let mut lost = 0.0f64;
    for &w in &order {
        let v = source[w];
        let gt = gt_top4(skin, v);
        let joints = &feats.joints[w * CANDIDATES..(w + 1) * CANDIDATES];
        let mut target = [0.0f32; CANDIDATES];
        for (k, &j) in joints.iter().enumerate() {
            target[k] = gt.iter().find(|e| e.0 == j).map_or(0.0, |e| e.1);
        }
        let mass: f32 = target.iter().sum();
        lost += f64::from((1.0 - mass).max(0.0));
        if mass > 1e-6 {
            target.iter_mut().for_each(|t| *t /= mass);
        }
        out.x
            .extend_from_slice(&feats.values[w * CANDIDATES * FEATURES..(w + 1) * CANDIDATES * FEATURES]);
        out.mask
            .extend_from_slice(&feats.mask[w * CANDIDATES..(w + 1) * CANDIDATES]);
        out.target.extend_from_slice(&target);
        let patch = PATCH_POINTS * PATCH_DIMS;
        out.patch.extend_from_slice(&feats.patch[w * patch..(w + 1) * patch]);
        let x = character.mesh.positions[v];
        for &j in joints {
            for m in &matrices {
                let y = match m.get(j as usize) {
                    Some(mj) => mj.transform_point3(x) * inv_scale,
                    None => Vec3::ZERO,
                };
                out.deform.extend_from_slice(&[y.x, y.y, y.z]);
            }
        }
        out.asset.push(0);
    }
    out.coverage_loss.push((lost / order.len().max(1) as f64) as f32);
    Ok(out)
}

/// Samples of one skinned character: its bind pose plus `options.posed_copies` re-posed copies.
/// `id` seeds the poses and the vertex subsets.
pub fn character_samples(id: &str, character: &Character, options: &SampleOptions) -> Result<Samples, LearnError> {
    character.validate().map_err(|e| LearnError::Data(e.to_string()))?;
    let skin = character
        .skin
        .as_ref()
        .ok_or_else(|| LearnError::Data("has no skin weights to learn from".into()))?;
    let salt = fnv(0xcbf2_9ce4_8422_2325 ^ 0x7261_696e, id.as_bytes());
    let mut all = samples_of_pose(character, skin, options, salt)?;
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed ^ salt.rotate_left(17));
    for (c, pose) in random_poses(&character.skeleton, options.posed_copies, &mut rng)
        .iter()
        .enumerate()
    {
        let posed = reposed(character, skin, pose)?;
        let more = samples_of_pose(&posed, skin, options, salt.wrapping_add(c as u64 + 1))?;
        all.append(more, 0);
    }
    for c in 0..options.stretched_copies {
        let factors = Vec3::from_array(std::array::from_fn(|_| {
            STRETCH_MAX.powf(2.0 * rng.random::<f32>() - 1.0)
        }));
        let copy = stretched(character, factors)?;
        let salt = salt.wrapping_add((options.posed_copies + c) as u64 + 1);
        all.append(samples_of_pose(&copy, skin, options, salt)?, 0);
    }
    if options.subdivided_copies > 0 {
        // One subdivision; each copy samples it with its own vertex subset and loss poses.
        let mut copy =
            rigml_core::subdivided(character).map_err(|e| LearnError::Data(format!("subdivided copy: {e}")))?;
        let copy_skin = copy
            .skin
            .take()
            .ok_or_else(|| LearnError::Data("subdivided copy lost its skin".into()))?;
        for c in 0..options.subdivided_copies {
            let salt = salt.wrapping_add((options.posed_copies + options.stretched_copies + c) as u64 + 1);
            all.append(samples_of_pose(&copy, &copy_skin, options, salt)?, 0);
        }
    }
    let joints = character.skeleton.joint_count();
    for c in 0..options.coarse_copies {
        let chance = rng.random_range(COARSE_KEEP);
        let keep: Vec<bool> = (0..joints)
            .map(|j| character.skeleton.parents[j].is_none() || rng.random::<f32>() < chance)
            .collect();
        // A copy that merges nothing, or leaves a single joint, teaches nothing new.
        let count = keep.iter().filter(|&&k| k).count();
        if count == joints || count < 2 {
            continue;
        }
        let mut copy = coarsened(character, &keep)?;
        let copy_skin = copy
            .skin
            .take()
            .ok_or_else(|| LearnError::Data("coarsened copy lost its skin".into()))?;
        let salt = salt
            .wrapping_add((options.posed_copies + options.stretched_copies + options.subdivided_copies + c) as u64 + 1);
        all.append(samples_of_pose(&copy, &copy_skin, options, salt)?, 0);
    }
    // One coverage number per character: the mean over its copies.
    let copies = all.coverage_loss.len().max(1) as f32;
    all.coverage_loss = vec![all.coverage_loss.iter().sum::<f32>() / copies];
    Ok(all)
}

/// Cache key of a character's samples: its data, the options and the feature version.
pub fn cache_key(id: &str, character: &Character, options: &SampleOptions) -> u64 {
    let mut h = fnv(0xcbf2_9ce4_8422_2325, id.as_bytes());
    h = fnv(h, &options.feature_version.to_le_bytes());
    for n in [
        options.max_vertices as u64,
        options.posed_copies as u64,
        options.stretched_copies as u64,
        options.seed,
        POSES as u64,
    ] {
        h = fnv(h, &n.to_le_bytes());
    }
    // Only when used, so that the keys of caches written before the option existed still hold.
    if options.subdivided_copies > 0 {
        h = fnv(h, &(options.subdivided_copies as u64).to_le_bytes());
    }
    if options.coarse_copies > 0 {
        h = fnv(h, b"coarse");
        h = fnv(h, &(options.coarse_copies as u64).to_le_bytes());
    }
    for p in &character.mesh.positions {
        h = fnv(h, &p.x.to_le_bytes());
        h = fnv(h, &p.y.to_le_bytes());
        h = fnv(h, &p.z.to_le_bytes());
    }
    for t in &character.mesh.triangles {
        for i in t {
            h = fnv(h, &i.to_le_bytes());
        }
    }
    for m in &character.skeleton.inverse_bind {
        for x in m.to_cols_array() {
            h = fnv(h, &x.to_le_bytes());
        }
    }
    if let Some(skin) = &character.skin {
        for i in skin.rows().flatten() {
            h = fnv(h, &i.joint.to_le_bytes());
            h = fnv(h, &i.weight.to_le_bytes());
        }
    }
    h
}

/// [`character_samples`] through an on-disk cache in `dir` (`None` = no cache). A damaged or
/// incomplete cache file (one written before samples had patches) is recomputed and replaced.
pub fn cached_samples(
    dir: Option<&Path>,
    id: &str,
    character: &Character,
    options: &SampleOptions,
) -> Result<Samples, LearnError> {
    let Some(dir) = dir else {
        return character_samples(id, character, options);
    };
    let path = dir.join(format!("{id}-{:016x}.safetensors", cache_key(id, character, options)));
    if let Ok(bytes) = std::fs::read(&path) {
        if let Some(samples) = decode(&bytes) {
            return Ok(samples);
        }
    }
    let samples = character_samples(id, character, options)?;
    std::fs::create_dir_all(dir).map_err(|source| LearnError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let bytes = encode(&samples)?;
    // Unique per process and call: two trainings (or two networks of one, fitted on threads)
    // sharing a cache may write the same entry at once, and each must rename its own file (the
    // last rename wins; both files are the same samples).
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("{}-{call}.tmp", std::process::id()));
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|source| LearnError::Io {
            path: path.display().to_string(),
            source,
        })?;
    Ok(samples)
}

fn encode(s: &Samples) -> Result<Vec<u8>, LearnError> {
    let fields: [(&str, &[f32]); 6] = [
        ("x", &s.x),
        ("mask", &s.mask),
        ("target", &s.target),
        ("deform", &s.deform),
        ("patch", &s.patch),
        ("coverage_loss", &s.coverage_loss),
    ];
    let bytes: Vec<(String, Vec<u8>)> = fields
        .iter()
        .map(|(name, v)| (name.to_string(), v.iter().flat_map(|x| x.to_le_bytes()).collect()))
        .collect();
    let mut views = Vec::new();
    for (name, data) in &bytes {
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![data.len() / 4], data)
            .map_err(|e| LearnError::Model(e.to_string()))?;
        views.push((name.clone(), view));
    }
    safetensors::serialize(views, None::<HashMap<String, String>>).map_err(|e| LearnError::Model(e.to_string()))
}

fn decode(bytes: &[u8]) -> Option<Samples> {
    let t = safetensors::SafeTensors::deserialize(bytes).ok()?;
    let get = |name: &str| -> Option<Vec<f32>> {
        let view = t.tensor(name).ok()?;
        Some(
            view.data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    };
    let mask = get("mask")?;
    let n = mask.len() / CANDIDATES;
    let s = Samples {
        x: get("x")?,
        target: get("target")?,
        deform: get("deform")?,
        patch: get("patch")?,
        coverage_loss: get("coverage_loss")?,
        asset: vec![0; n],
        mask,
    };
    s.is_whole().then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_skin::synthetic::tube_chain;

    /// A tube around a three-bone chain, each ring bound rigidly to the bone it sits on.
    fn tube() -> Character {
        let (mesh, skeleton) = tube_chain(3, 4, 8, 0.2, 1.0);
        let joints: Vec<u32> = mesh
            .positions
            .iter()
            .map(|p| (p.y.floor().clamp(0.0, 2.0)) as u32)
            .collect();
        let skin = Skin::rigid(&joints, skeleton.joint_count()).unwrap();
        Character {
            name: "tube".into(),
            mesh,
            skeleton,
            skin: Some(skin),
            clips: Vec::new(),
            attachments: Vec::new(),
        }
    }

    #[test]
    fn a_stretched_copy_scales_mesh_and_joints_and_keeps_a_rigid_bound_skeleton() {
        let character = tube();
        let factors = Vec3::new(1.25, 0.8, 1.1);
        let copy = stretched(&character, factors).unwrap();
        for (a, b) in character.mesh.positions.iter().zip(&copy.mesh.positions) {
            assert!((*a * factors - *b).length() < 1e-6);
        }
        for (a, b) in character
            .skeleton
            .bind_positions()
            .iter()
            .zip(copy.skeleton.bind_positions())
        {
            assert!((*a * factors - b).length() < 1e-5, "{a} {b}");
        }
        // Bound where it rests: the rest pose leaves the stretched mesh where it is.
        let rest = skinning_matrices(&copy.skeleton, &Pose::rest(&copy.skeleton)).unwrap();
        let skin = copy.skin.as_ref().unwrap();
        for (a, b) in copy.mesh.positions.iter().zip(lbs(&copy.mesh.positions, skin, &rest)) {
            assert!((*a - b).length() < 1e-5);
        }
        // No stretch changes nothing the features see.
        let same = stretched(&character, Vec3::ONE).unwrap();
        let options = SampleOptions {
            max_vertices: 1000,
            posed_copies: 0,
            subdivided_copies: 0,
            ..SampleOptions::default()
        };
        let (a, b) = (
            samples_of_pose(&character, skin, &options, 7).unwrap(),
            samples_of_pose(&same, skin, &options, 7).unwrap(),
        );
        assert!(a.x.iter().zip(&b.x).all(|(p, q)| (p - q).abs() < 1e-4));
        assert!(stretched(&character, Vec3::new(1.0, 0.0, 1.0)).is_err());
        assert!(stretched(&character, Vec3::new(1.0, f32::NAN, 1.0)).is_err());
    }

    /// The tube's samples and cache key with the plain options (no copies, `max_vertices`) and
    /// with `change` applied to them: what the "copies add samples" tests compare.
    fn plain_and_changed(max_vertices: usize, change: impl FnOnce(&mut SampleOptions)) -> [(Samples, u64); 2] {
        let character = tube();
        let plain = SampleOptions {
            max_vertices,
            posed_copies: 0,
            subdivided_copies: 0,
            coarse_copies: 0,
            ..SampleOptions::default()
        };
        let mut changed = plain;
        change(&mut changed);
        [plain, changed].map(|options| {
            (
                character_samples("tube", &character, &options).unwrap(),
                cache_key("tube", &character, &options),
            )
        })
    }

    #[test]
    fn stretched_copies_add_samples_and_change_the_cache_key() {
        let [(a, key_a), (b, key_b)] = plain_and_changed(1000, |o| o.stretched_copies = 2);
        assert_eq!(b.len(), 3 * a.len());
        assert_eq!(&b.x[..a.x.len()], &a.x[..]);
        assert_ne!(&b.x[a.x.len()..2 * a.x.len()], &a.x[..]);
        assert_ne!(key_a, key_b);
    }

    #[test]
    fn a_coarsened_copy_merges_joints_into_their_kept_ancestor_and_keeps_the_rest_in_place() {
        let character = tube();
        // A chain of four joints; the skin binds each ring of vertices to joint 0, 1 or 2.
        assert_eq!(character.skeleton.joint_count(), 4);
        let copy = coarsened(&character, &[true, false, true, true]).unwrap();
        let skeleton = &copy.skeleton;
        let names = &character.skeleton.names;
        assert_eq!(
            skeleton.names,
            vec![names[0].clone(), names[2].clone(), names[3].clone()]
        );
        assert_eq!(skeleton.parents, vec![None, Some(0), Some(1)]);
        // Kept joints stay where they were, at rest and at bind.
        let (before, after) = (character.skeleton.rest_world(), skeleton.rest_world());
        for (a, b) in [(0, 0), (2, 1), (3, 2)] {
            assert!(before[a].abs_diff_eq(after[b], 1e-5), "joint {a}");
            assert_eq!(skeleton.inverse_bind[b], character.skeleton.inverse_bind[a]);
        }
        // The merged joint's vertices now follow its parent; the rest pose leaves the mesh in place.
        let (old, new) = (character.skin.as_ref().unwrap(), copy.skin.as_ref().unwrap());
        let mut merged = 0;
        for (a, b) in old.rows().zip(new.rows()) {
            let expected = [0, 0, 1, 2][a[0].joint as usize];
            merged += usize::from(a[0].joint == 1);
            assert_eq!(b.len(), 1);
            assert_eq!(b[0].joint, expected);
        }
        assert!(merged > 0, "the merged joint carried vertices");
        let rest = skinning_matrices(skeleton, &Pose::rest(skeleton)).unwrap();
        for (a, b) in copy.mesh.positions.iter().zip(lbs(&copy.mesh.positions, new, &rest)) {
            assert!((*a - b).length() < 1e-5);
        }
        // A root is kept even when its flag says otherwise; a wrong flag count is an error.
        let flags = [false, true, true, true];
        assert_eq!(coarsened(&character, &flags).unwrap().skeleton.joint_count(), 4);
        assert!(coarsened(&character, &[true, false]).is_err());
    }

    #[test]
    fn coarse_copies_add_samples_and_change_the_cache_key() {
        let [(a, key_a), (b, key_b)] = plain_and_changed(1000, |o| o.coarse_copies = 4);
        assert!(b.len() > a.len(), "{} then {}", a.len(), b.len());
        assert_eq!(b.len() % a.len(), 0);
        assert_eq!(&b.x[..a.x.len()], &a.x[..]);
        assert_ne!(key_a, key_b);
    }

    #[test]
    fn subdivided_copies_add_samples_and_change_the_cache_key() {
        let [(a, key_a), (b, key_b)] = plain_and_changed(100_000, |o| o.subdivided_copies = 1);
        assert!(b.len() > 3 * a.len(), "{} then {}", a.len(), b.len());
        assert_eq!(&b.x[..a.x.len()], &a.x[..]);
        assert_ne!(key_a, key_b);
    }

    #[test]
    fn feature_version_4_changes_one_slot_and_the_cache_key() {
        let character = tube();
        let v3 = SampleOptions {
            max_vertices: 1000,
            posed_copies: 0,
            subdivided_copies: 0,
            ..SampleOptions::default()
        };
        let v4 = SampleOptions {
            feature_version: 4,
            ..v3
        };
        let (a, b) = (
            character_samples("tube", &character, &v3).unwrap(),
            character_samples("tube", &character, &v4).unwrap(),
        );
        assert_eq!(a.len(), b.len());
        let slot = features::ROOT_OR_INSIDE;
        for (p, q) in a.x.chunks_exact(FEATURES).zip(b.x.chunks_exact(FEATURES)) {
            for f in (0..FEATURES).filter(|&f| f != slot) {
                assert_eq!(p[f], q[f]);
            }
            // The tube is open at both ends, so its voxel solid is a shell: no bone lies inside.
            assert_eq!(q[slot], 0.0);
        }
        assert!(
            a.x.chunks_exact(FEATURES).any(|p| p[slot] == 1.0),
            "the root is a candidate somewhere"
        );
        assert_ne!(cache_key("tube", &character, &v3), cache_key("tube", &character, &v4));
    }

    #[test]
    fn the_cache_returns_what_it_stored_and_leaves_no_temporary_file() {
        let character = tube();
        let options = SampleOptions {
            max_vertices: 200,
            posed_copies: 0,
            subdivided_copies: 0,
            ..SampleOptions::default()
        };
        let dir = std::env::temp_dir().join(format!("rigml-cache-test-{}", std::process::id()));
        let first = cached_samples(Some(&dir), "tube", &character, &options).unwrap();
        let again = cached_samples(Some(&dir), "tube", &character, &options).unwrap();
        assert_eq!(first, again);
        assert_eq!(first, character_samples("tube", &character, &options).unwrap());
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(names[0].ends_with(".safetensors"), "{names:?}");
    }
}
