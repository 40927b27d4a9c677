//! Learned skeleton prediction (issue 10, general path; RigNet-style joint votes).
//!
//! A mesh is normalised (METRICS.md §1: AABB centre, longest side 1; the file's axes are kept —
//! the assets follow glTF, Y up and +Z forward) and sampled into a surface point cloud with
//! per-point features ([`points`]). A PointNet-style network ([`net`]) predicts for every point
//! the offset to its nearest joint, a confidence and the local joint spacing. The votes
//! `point + offset` are clustered by weighted mean shift and joined by a minimum spanning tree
//! that avoids bones leaving the solid ([`joints`]). When the mesh is mirror symmetric about
//! its x mid-plane the network also runs on the mirror image (test-time augmentation) and the
//! joints are made exactly symmetric.
//!
//! Training ([`train`]) uses the train split's characters with augmentation ([`data`]):
//! mirroring, anisotropic scaling and re-posing with the characters' own skin weights.
//! The default model, trained by `rigml train-skeleton`, is embedded in the binary.

pub mod data;
pub mod forward;
pub mod joints;
pub mod library;
pub mod net;
pub mod points;
pub mod train;

use crate::model::ModelFile;
use crate::LearnError;
use forward::SkeletonForward;
use glam::Vec3;
use joints::{Settings, Tree, Vote};
use points::{Frame, FEATURES, POINTS, TARGETS};
use rigml_geom::{Cell, VoxelGrid};
use std::path::Path;

/// The default skeleton model, trained by `rigml train-skeleton` on the train split.
pub const DEFAULT_MODEL: &[u8] = include_bytes!("../../../../models/skeleton-default.safetensors");

/// Seed of the inference point sample (fixed: the same mesh always gives the same skeleton).
pub const SAMPLE_SEED: u64 = 7;
/// Voxels along the longest side of the solid used for symmetry and bone costs.
const SOLID_RESOLUTION: usize = 64;
/// Share of solid voxels whose x-mirror image must be solid for the mesh to count as symmetric.
pub const SYMMETRY: f32 = 0.85;
/// Feature columns that change sign under x -> -x (position, normal, centroid offsets).
const MIRRORED_FEATURES: [usize; 5] = [0, 3, 7, 10, 13];

/// A trained skeleton model with its clustering settings.
#[derive(Debug, Clone)]
pub struct Predictor {
    model: ModelFile,
    /// The model's network, loaded and checked once.
    net: SkeletonForward,
    pub settings: Settings,
    /// The artists' rigs stored with the network, if the file holds any ([`library`]).
    library: Option<library::RigLibrary>,
}

/// What the network says about one mesh, before clustering (reused when searching settings).
#[derive(Debug, Clone)]
pub struct Votes {
    pub frame: Frame,
    /// Votes in normalised units (both the mesh's and its mirror image's when symmetric).
    pub votes: Vec<Vote>,
    /// The surface samples' centroid (normalised): the root is the joint nearest it.
    pub centre: Vec3,
    /// Whether the mesh was found mirror symmetric about x = 0 (normalised).
    pub symmetric: bool,
    /// Solid voxels of the normalised mesh.
    solid: VoxelGrid,
}

impl Votes {
    /// Whether a normalised point lies in the solid (not an exterior voxel).
    pub fn inside(&self, p: Vec3) -> bool {
        let g = &self.solid;
        g.cell_of(p)
            .and_then(|c| g.cells.get(g.index(c)))
            .is_some_and(|&c| c != Cell::Exterior)
    }
}

impl Predictor {
    /// A predictor for `model` (checked: every tensor present with the right shape) with the
    /// settings stored in it.
    pub fn new(model: ModelFile) -> Result<Predictor, LearnError> {
        let net = SkeletonForward::from_weights(&model.weights)?;
        let settings = Settings::from_metadata(|k| model.setting(k));
        let library = library::RigLibrary::from_model(&model)?;
        Ok(Predictor {
            model,
            net,
            settings,
            library,
        })
    }

    /// The default model shipped inside the binary.
    pub fn embedded() -> Result<Predictor, LearnError> {
        Predictor::new(net::from_bytes(DEFAULT_MODEL, "embedded skeleton model")?)
    }

    /// Load a model file written by `rigml train-skeleton`.
    pub fn from_file(path: &Path) -> Result<Predictor, LearnError> {
        let bytes = std::fs::read(path).map_err(|source| LearnError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Predictor::new(net::from_bytes(&bytes, &path.display().to_string())?)
    }

    /// The rig library stored with the network (none in files written before it existed).
    pub fn library(&self) -> Option<&library::RigLibrary> {
        self.library.as_ref()
    }

    /// The model behind this predictor.
    pub fn model(&self) -> &ModelFile {
        &self.model
    }

    /// Raw network outputs `[n * TARGETS]` for a normalised cloud's features.
    pub fn outputs(&self, features: &[f32]) -> Result<Vec<f32>, LearnError> {
        self.net.predict(features)
    }

    /// Sample the mesh, run the network (twice when symmetric) and collect the votes.
    pub fn votes(&self, positions: &[Vec3], triangles: &[[u32; 3]]) -> Result<Votes, LearnError> {
        let frame = Frame::of(positions)?;
        let unit: Vec<Vec3> = positions.iter().map(|p| frame.to_unit(*p)).collect();
        let cloud = points::sample(&unit, triangles, POINTS, SAMPLE_SEED)?;
        let solid = VoxelGrid::new(&unit, triangles, SOLID_RESOLUTION)
            .ok_or_else(|| LearnError::Data("the mesh gives no voxels".into()))?;
        let symmetric = mirror_score(&solid) >= SYMMETRY;
        let mut votes = Vec::with_capacity(2 * POINTS);
        let out = self.net.predict(&cloud.features)?;
        collect(&cloud.points, &out, false, &mut votes);
        if symmetric {
            let mut mirrored = cloud.features.clone();
            for row in mirrored.chunks_exact_mut(FEATURES) {
                MIRRORED_FEATURES.iter().for_each(|&c| row[c] = -row[c]);
            }
            let flipped: Vec<Vec3> = cloud.points.iter().map(|p| Vec3::new(-p.x, p.y, p.z)).collect();
            let out = self.net.predict(&mirrored)?;
            collect(&flipped, &out, true, &mut votes);
        }
        let centre = cloud.points.iter().copied().sum::<Vec3>() / cloud.points.len().max(1) as f32;
        Ok(Votes {
            frame,
            votes,
            centre,
            symmetric,
            solid,
        })
    }

    /// The joint tree for `votes` with `settings`, in model space.
    pub fn tree(votes: &Votes, settings: &Settings) -> Tree {
        let modes = joints::Modes::new(&votes.votes, settings.bandwidth, settings.power);
        Predictor::tree_from(votes, &modes, settings)
    }

    /// [`Predictor::tree`] from already computed modes (`settings.bandwidth` and `power` must be
    /// the ones the modes were made with; used by the settings search).
    pub fn tree_from(votes: &Votes, modes: &joints::Modes, settings: &Settings) -> Tree {
        let mut joints = modes.joints(settings.merge, settings.min_mass);
        if votes.symmetric {
            joints::symmetrise(&mut joints, (2.0 * settings.bandwidth).max(0.03));
        }
        let step = 0.5 / SOLID_RESOLUTION as f32;
        let mut tree = joints::connect(&joints, votes.centre, settings.outside, step, &|p| votes.inside(p));
        tree.positions.iter_mut().for_each(|p| *p = votes.frame.to_model(*p));
        tree
    }

    /// Joints (model space, parents first) for a mesh. Errors on meshes that cannot be sampled
    /// and when no joint comes out.
    pub fn place(&self, positions: &[Vec3], triangles: &[[u32; 3]]) -> Result<Tree, LearnError> {
        let votes = self.votes(positions, triangles)?;
        let tree = Predictor::tree(&votes, &self.settings);
        if tree.positions.is_empty() {
            return Err(LearnError::Data("no joint gathered enough votes".into()));
        }
        Ok(tree)
    }
}

/// Votes from network outputs; `mirror` maps them back across x = 0.
fn collect(points: &[Vec3], out: &[f32], mirror: bool, votes: &mut Vec<Vote>) {
    for (p, o) in points.iter().zip(out.chunks_exact(TARGETS)) {
        let mut at = *p + Vec3::new(o[0], o[1], o[2]);
        if mirror {
            at.x = -at.x;
        }
        let confidence = 1.0 / (1.0 + (-o[3]).exp());
        votes.push(Vote {
            at,
            weight: confidence,
            spacing: o[4].clamp(-8.0, 1.0).exp(),
        });
    }
}

/// Share of solid voxels whose mirror image across the grid's x mid-plane is solid.
fn mirror_score(g: &VoxelGrid) -> f32 {
    let mid = 0.0f32; // normalised meshes are centred on x = 0
    let (mut solid, mut hits) = (0usize, 0usize);
    for (i, c) in g.cells.iter().enumerate() {
        if *c == Cell::Exterior {
            continue;
        }
        solid += 1;
        let p = g.center(g.coords(i));
        let image = Vec3::new(2.0 * mid - p.x, p.y, p.z);
        if g.cell_of(image)
            .and_then(|c| g.cells.get(g.index(c)))
            .is_some_and(|&c| c != Cell::Exterior)
        {
            hits += 1;
        }
    }
    if solid == 0 {
        0.0
    } else {
        hits as f32 / solid as f32
    }
}
