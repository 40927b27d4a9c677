//! Auto-rigging (issue 10): place a skeleton inside a mesh that has none, then skin it with any
//! [`SkinSolver`] and hand back a [`Character`] that animates.
//!
//! A [`SkeletonPlacer`] looks only at the mesh and returns a [`PlacedSkeleton`]: joint names,
//! parents and model-space joint heads. [`PlacedSkeleton::to_skeleton`] turns that into a bind
//! pose with a consistent bone roll, and [`rig`] puts mesh, skeleton and skin together.

pub mod auto;
pub mod curve;
pub mod detect;
pub mod ground;
pub mod humanoid;
pub mod learned;
pub mod library;
pub mod orient;
pub mod placed;
pub mod scene;

pub use auto::Auto;
pub use curve::{CurveParams, CurveSkeleton};
pub use detect::Detect;
pub use humanoid::{looks_humanoid, Humanoid, HumanoidCheck};
pub use learned::LearnedPlacer;
pub use library::{LibraryMatch, LibraryPlacer};
pub use placed::PlacedSkeleton;

use rigml_core::{Character, Mesh, Skeleton, Skin, Transform};
use rigml_skin::{SkinSolver, SolveOptions};
use thiserror::Error;

/// What can go wrong placing a skeleton. The caller adds the file.
#[derive(Debug, Error)]
pub enum RigError {
    #[error("the mesh has no vertices or no triangles")]
    EmptyMesh,
    #[error("the mesh has non-finite vertex positions (vertex {vertex})")]
    NonFinite { vertex: usize },
    #[error("the mesh has no extent (all vertices at one point)")]
    Degenerate,
    #[error("{placer}: {message}")]
    Placement { placer: String, message: String },
    #[error("invalid placed skeleton: {0}")]
    Invalid(String),
    #[error("skinning the rigged mesh: {0}")]
    Skin(String),
    #[error(transparent)]
    Core(#[from] rigml_core::CoreError),
}

/// Something that places joints inside a bare mesh.
pub trait SkeletonPlacer: Sync {
    /// The template's name as `rigml rig --template` and evaluation reports spell it.
    fn name(&self) -> &'static str;

    /// Joints for this mesh, in the mesh's model space.
    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError>;

    /// [`SkeletonPlacer::place`], with the name of the template that placed the joints: its own
    /// name, or for a placer that chooses a template per mesh ([`Detect`]) the one it chose.
    fn place_with_template(&self, mesh: &Mesh) -> Result<(&'static str, PlacedSkeleton), RigError> {
        Ok((self.name(), self.place(mesh)?))
    }

    /// [`SkeletonPlacer::place_with_template`], with the rig library's rig the joints came from
    /// when they came from one ([`library`]), so that a report can name it.
    fn place_reported(&self, mesh: &Mesh) -> Result<Placement, RigError> {
        let (template, skeleton) = self.place_with_template(mesh)?;
        Ok(Placement {
            template,
            skeleton,
            library_rig: None,
        })
    }
}

/// What [`SkeletonPlacer::place_reported`] placed.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The template that placed the joints.
    pub template: &'static str,
    pub skeleton: PlacedSkeleton,
    /// For a rig from the skeleton model's rig library: its id and how alike the shapes were.
    pub library_rig: Option<(String, f32)>,
}

/// Refuse meshes no placer can work on: empty, non-finite or without extent.
pub fn check_mesh(mesh: &Mesh) -> Result<(), RigError> {
    if mesh.positions.is_empty() || mesh.triangles.is_empty() {
        return Err(RigError::EmptyMesh);
    }
    if let Some(vertex) = mesh.positions.iter().position(|p| !p.is_finite()) {
        return Err(RigError::NonFinite { vertex });
    }
    let (lo, hi) = mesh.positions.iter().fold(
        (glam::Vec3::splat(f32::MAX), glam::Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    // Bounds within rounding of the coordinates are no extent: a mesh collapsed to a point (a
    // clip's frame that scales the character up from nothing) has nothing to rig.
    if rigml_geom::voxel::within_rounding(lo, hi) {
        return Err(RigError::Degenerate);
    }
    Ok(())
}

/// Which joints of a placed skeleton are control joints that carry no skin weight: leaves
/// named as pole targets ([`library::is_pole_name`]: the quadruped legs' `front_leg_pole_L` ...
/// and an artist's `PoleTarget.L` in a rig the library carried), and the ground root
/// ([`ground::is_ground_root`]).
pub fn controls(skeleton: &Skeleton) -> Vec<bool> {
    skeleton
        .names
        .iter()
        .zip(skeleton.children())
        .enumerate()
        .map(|(j, (name, children))| {
            (children.is_empty() && library::is_pole_name(name))
                || ground::is_ground_root(&skeleton.names, &skeleton.parents, j)
        })
        .collect()
}

/// Skin `mesh` for a placed `skeleton` with `solver`, leaving its control joints
/// ([`controls`]) without weight: the solver sees the skeleton without them (a pole target's
/// bone from the root runs out of the body, a ground root's down to the floor, and either would
/// otherwise pull weight toward it), and the weights are mapped back onto every joint.
pub fn skin_placed(
    mesh: &Mesh,
    skeleton: &Skeleton,
    solver: &dyn SkinSolver,
    options: &SolveOptions,
) -> Result<Skin, RigError> {
    let fail = |e: &dyn std::fmt::Display| RigError::Skin(e.to_string());
    let n = skeleton.joint_count();
    let control = controls(skeleton);
    let kept: Vec<usize> = (0..n).filter(|&j| !control[j]).collect();
    if kept.len() == n || kept.is_empty() {
        return solver.solve(mesh, skeleton, options).map_err(|e| fail(&e));
    }
    skeleton.validate()?;
    let mut index = vec![None; n];
    for (i, &j) in kept.iter().enumerate() {
        index[j] = Some(i);
    }
    // Each kept joint hangs from its nearest kept ancestor (none: it becomes a root), at the
    // same rest pose in model space.
    let world = skeleton.rest_world();
    let ancestors: Vec<Option<usize>> = kept
        .iter()
        .map(|&j| {
            let mut p = skeleton.parents[j];
            while let Some(q) = p.filter(|&q| control[q]) {
                p = skeleton.parents[q];
            }
            p
        })
        .collect();
    let deforming = Skeleton {
        names: kept.iter().map(|&j| skeleton.names[j].clone()).collect(),
        parents: ancestors.iter().map(|a| a.and_then(|p| index[p])).collect(),
        rest_local: kept
            .iter()
            .zip(&ancestors)
            .map(|(&j, &a)| match a {
                _ if a == skeleton.parents[j] => skeleton.rest_local[j],
                None => Transform::from_mat4(&world[j]),
                Some(a) => Transform::from_mat4(&(world[a].inverse() * world[j])),
            })
            .collect(),
        inverse_bind: kept.iter().map(|&j| skeleton.inverse_bind[j]).collect(),
    };
    let skin = solver.solve(mesh, &deforming, options).map_err(|e| fail(&e))?;
    let skin = skin.remap_joints(&kept);
    skin.validate(mesh.vertex_count(), n).map_err(|e| fail(&e))?;
    Ok(skin)
}

/// A rigged character and the name of the template that placed its skeleton (for
/// [`Detect`], the one it chose for this mesh).
#[derive(Debug, Clone)]
pub struct Rigged {
    pub character: Character,
    pub template: &'static str,
    /// For a rig from the skeleton model's rig library: its id and the shapes' similarity.
    pub library_rig: Option<(String, f32)>,
}

/// Place a skeleton with `placer`, skin the mesh with `solver`, and return the rigged character
/// (bind pose = rest pose, no clips).
pub fn rig(
    name: &str,
    mesh: Mesh,
    placer: &dyn SkeletonPlacer,
    solver: &dyn SkinSolver,
    options: &SolveOptions,
) -> Result<Character, RigError> {
    Ok(rig_with_progress(name, mesh, placer, solver, options, &mut |_| {})?.character)
}

/// The stages of [`rig`], reported as each starts (for progress messages and timings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Place,
    Skin,
    Done,
}

/// [`rig`], calling `progress` as each stage starts and once at the end, and naming the
/// template that placed the skeleton.
pub fn rig_with_progress(
    name: &str,
    mesh: Mesh,
    placer: &dyn SkeletonPlacer,
    solver: &dyn SkinSolver,
    options: &SolveOptions,
    progress: &mut dyn FnMut(Stage),
) -> Result<Rigged, RigError> {
    check_mesh(&mesh)?;
    progress(Stage::Place);
    let Placement {
        template,
        skeleton: placed,
        library_rig,
    } = placer.place_reported(&mesh)?;
    let skeleton = placed.to_skeleton()?;
    progress(Stage::Skin);
    let skin = skin_placed(&mesh, &skeleton, solver, options)?;
    let character = Character {
        name: name.to_string(),
        mesh,
        skeleton,
        skin: Some(skin),
        clips: Vec::new(),
        attachments: Vec::new(),
    };
    character.validate()?;
    progress(Stage::Done);
    Ok(Rigged {
        character,
        template,
        library_rig,
    })
}
