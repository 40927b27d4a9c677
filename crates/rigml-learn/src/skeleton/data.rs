//! Training shapes: a character's surface cloud and per-point targets, plus augmented copies —
//! mirrored (x -> -x), anisotropically scaled, and re-posed with the character's own skin
//! weights (LBS under random joint rotations, joints moved with their bones).

use super::points::{sample, targets, Frame, FEATURES, POINTS, TARGETS};
use crate::LearnError;
use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rigml_core::{skinning, Character, Pose};

/// One training cloud: `[POINTS * FEATURES]` features and `[POINTS * TARGETS]` targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub features: Vec<f32>,
    pub targets: Vec<f32>,
}

/// How many augmented copies of each character, and how strong.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Augment {
    /// Also train on the mirror image (x -> -x).
    pub mirror: bool,
    /// Extra randomly augmented copies per character.
    pub copies: usize,
    /// Largest relative change of each axis' scale in those copies (0.15 = ±15 %).
    pub scale: f32,
    /// Largest joint rotation (radians) of the re-posed copies (0 = no re-posing).
    pub pose_angle: f32,
    /// Seed of the copies and of the surface samples.
    pub seed: u64,
}

impl Augment {
    /// No augmentation at all (validation).
    pub fn none(seed: u64) -> Augment {
        Augment {
            mirror: false,
            copies: 0,
            scale: 0.0,
            pose_angle: 0.0,
            seed,
        }
    }
}

impl Default for Augment {
    fn default() -> Self {
        Augment {
            mirror: true,
            copies: 2,
            scale: 0.15,
            pose_angle: 0.35,
            seed: 1,
        }
    }
}

/// The cloud of one (transformed) surface with its targets, both in the surface's own §1 frame.
pub fn shape(positions: &[Vec3], triangles: &[[u32; 3]], joints: &[Vec3], seed: u64) -> Result<Shape, LearnError> {
    let frame = Frame::of(positions)?;
    let unit: Vec<Vec3> = positions.iter().map(|p| frame.to_unit(*p)).collect();
    let cloud = sample(&unit, triangles, POINTS, seed)?;
    let joints: Vec<Vec3> = joints.iter().map(|j| frame.to_unit(*j)).collect();
    let targets = targets(&cloud.points, &joints)?;
    debug_assert_eq!(cloud.features.len(), POINTS * FEATURES);
    debug_assert_eq!(targets.len(), POINTS * TARGETS);
    Ok(Shape {
        features: cloud.features,
        targets,
    })
}

/// `character` re-posed with random joint rotations up to `angle` (roots fixed) and its own
/// skin: posed vertex positions and posed joint positions.
fn reposed(character: &Character, angle: f32, rng: &mut ChaCha8Rng) -> Result<(Vec<Vec3>, Vec<Vec3>), LearnError> {
    let skeleton = &character.skeleton;
    let skin = character
        .skin
        .as_ref()
        .ok_or_else(|| LearnError::Data("no skin to re-pose with".into()))?;
    let mut pose = Pose::bind(skeleton);
    for (j, local) in pose.local.iter_mut().enumerate() {
        if skeleton.parents.get(j).copied().flatten().is_none() {
            continue;
        }
        let axis = Vec3::new(
            2.0 * rng.random::<f32>() - 1.0,
            2.0 * rng.random::<f32>() - 1.0,
            2.0 * rng.random::<f32>() - 1.0,
        )
        .normalize_or(Vec3::Y);
        local.rotation = (local.rotation * Quat::from_axis_angle(axis, angle * rng.random::<f32>())).normalize();
    }
    let matrices = skinning::skinning_matrices(skeleton, &pose).map_err(|e| LearnError::Data(e.to_string()))?;
    let positions = skinning::lbs(&character.mesh.positions, skin, &matrices);
    let joints = pose
        .world_matrices(skeleton)
        .map_err(|e| LearnError::Data(e.to_string()))?
        .iter()
        .map(|m| m.w_axis.truncate())
        .collect();
    Ok((positions, joints))
}

/// The shapes of one character: the bind pose, its mirror image (if asked) and `copies`
/// random copies (scaled, mirrored at random, re-posed when the character has a skin and
/// `pose_angle > 0`). `salt` separates characters' random streams.
pub fn character_shapes(character: &Character, augment: &Augment, salt: u64) -> Result<Vec<Shape>, LearnError> {
    let mesh = &character.mesh;
    let joints = character.skeleton.bind_positions();
    if joints.is_empty() {
        return Err(LearnError::Data("the character has no skeleton".into()));
    }
    let seed = augment.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mirrored_triangles: Vec<[u32; 3]> = mesh.triangles.iter().map(|t| [t[0], t[2], t[1]]).collect();
    let flip = |p: &Vec3| Vec3::new(-p.x, p.y, p.z);
    let mut out = vec![shape(&mesh.positions, &mesh.triangles, &joints, seed)?];
    if augment.mirror {
        let p: Vec<Vec3> = mesh.positions.iter().map(flip).collect();
        let j: Vec<Vec3> = joints.iter().map(flip).collect();
        out.push(shape(&p, &mirrored_triangles, &j, seed ^ 1)?);
    }
    for copy in 0..augment.copies {
        let (mut p, mut j) = if augment.pose_angle > 0.0 && character.skin.is_some() {
            reposed(character, augment.pose_angle, &mut rng)?
        } else {
            (mesh.positions.clone(), joints.clone())
        };
        let a = augment.scale.clamp(0.0, 0.9);
        let s = Vec3::new(
            1.0 + a * (2.0 * rng.random::<f32>() - 1.0),
            1.0 + a * (2.0 * rng.random::<f32>() - 1.0),
            1.0 + a * (2.0 * rng.random::<f32>() - 1.0),
        );
        let mirror = rng.random::<bool>();
        let apply = |q: &mut Vec3| {
            *q *= s;
            if mirror {
                q.x = -q.x;
            }
        };
        p.iter_mut().for_each(apply);
        j.iter_mut().for_each(apply);
        let triangles = if mirror { &mirrored_triangles } else { &mesh.triangles };
        out.push(shape(&p, triangles, &j, seed ^ (copy as u64 + 2))?);
    }
    Ok(out)
}
