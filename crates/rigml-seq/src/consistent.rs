//! Skinning a sequence whose skeleton is posed in every frame (a skinned clip baked to frames, or
//! a decomposition's rig), with any [`SkinSolver`]:
//!
//! - **per frame**: the solver runs on every frame's mesh with the skeleton bound in that frame's
//!   pose. The weights drift between frames; METRICS.md §6's temporal skinning error measures it.
//! - **consistent** (SPRig's teacher on the anchor, docs/ALGORITHMS.md §6): the solver runs once,
//!   on the anchor frame, and the weights are carried to every frame by correspondence. Frames
//!   share one topology, so the correspondence is the vertex index itself and the temporal error
//!   is 0 by construction; what remains to measure is how well those weights reproduce each frame
//!   by linear blend skinning from the anchor ([`Consistent::reconstructed`]).

use crate::source::total_area;
use crate::SeqError;
use glam::{Mat4, Vec3};
use rigml_core::{Mesh, Skeleton, Skin, Transform};
use rigml_skin::{SkinSolver, SolveOptions};

/// Frames with the skeleton posed in each.
#[derive(Debug, Clone, Copy)]
pub struct PosedFrames<'a> {
    pub triangles: &'a [[u32; 3]],
    pub frames: &'a [Vec<Vec3>],
    pub skeleton: &'a Skeleton,
    /// `skinning[f][j]`: frame `f`'s skinning matrix of joint `j` (world · inverse bind).
    pub skinning: &'a [Vec<Mat4>],
}

impl PosedFrames<'_> {
    /// Model-space joint matrices of frame `f`.
    pub fn world(&self, f: usize) -> Result<Vec<Mat4>, SeqError> {
        let skinning = self.skinning.get(f).ok_or_else(|| SeqError::Skin {
            frame: f,
            message: format!("no pose (the sequence has {} posed frames)", self.skinning.len()),
        })?;
        if skinning.len() != self.skeleton.joint_count() || self.skeleton.inverse_bind.len() != skinning.len() {
            return Err(SeqError::Skin {
                frame: f,
                message: format!(
                    "{} joint matrices for {} joints",
                    skinning.len(),
                    self.skeleton.joint_count()
                ),
            });
        }
        Ok(skinning
            .iter()
            .zip(&self.skeleton.inverse_bind)
            .map(|(s, ib)| *s * ib.inverse())
            .collect())
    }

    /// The skeleton bound in frame `f`'s pose: rest and bind transforms are that pose.
    pub fn skeleton_at(&self, f: usize) -> Result<Skeleton, SeqError> {
        let world = self.world(f)?;
        let mut skeleton = self.skeleton.clone();
        skeleton.rest_local = world
            .iter()
            .enumerate()
            .map(|(j, w)| {
                let local = match skeleton.parents.get(j).copied().flatten() {
                    Some(p) => world[p].inverse() * *w,
                    None => *w,
                };
                Transform::from_mat4(&local)
            })
            .collect();
        skeleton.inverse_bind = world.iter().map(|w| w.inverse()).collect();
        if skeleton.inverse_bind.iter().any(|m| !m.is_finite()) {
            return Err(SeqError::Skin {
                frame: f,
                message: "a joint matrix is singular in this pose".into(),
            });
        }
        Ok(skeleton)
    }

    fn mesh(&self, f: usize) -> Result<Mesh, SeqError> {
        let positions = self.frames.get(f).ok_or_else(|| SeqError::Skin {
            frame: f,
            message: "no such frame".into(),
        })?;
        Ok(Mesh {
            positions: positions.clone(),
            triangles: self.triangles.to_vec(),
            ..Default::default()
        })
    }

    fn solve(&self, f: usize, solver: &dyn SkinSolver, options: &SolveOptions) -> Result<Skin, SeqError> {
        solver
            .solve(&self.mesh(f)?, &self.skeleton_at(f)?, options)
            .map_err(|e| SeqError::Skin {
                frame: f,
                message: format!("{}: {e}", solver.name()),
            })
    }
}

/// The solver's weights on every frame. `progress(done, total)` after each frame.
pub fn per_frame(
    posed: &PosedFrames,
    solver: &dyn SkinSolver,
    options: &SolveOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Skin>, SeqError> {
    let total = posed.frames.len();
    (0..total)
        .map(|f| {
            let skin = posed.solve(f, solver, options);
            progress(f + 1, total);
            skin
        })
        .collect()
}

/// Weights predicted on the anchor frame and used for every frame.
#[derive(Debug, Clone)]
pub struct Consistent {
    pub anchor: usize,
    pub skin: Skin,
    /// Every frame deformed from the anchor by linear blend skinning with `skin` and the frame's
    /// pose relative to the anchor's (`world_f · world_anchor⁻¹`).
    pub reconstructed: Vec<Vec<Vec3>>,
}

/// Solve on the anchor frame (largest total area) and carry the weights to every frame.
pub fn consistent(
    posed: &PosedFrames,
    solver: &dyn SkinSolver,
    options: &SolveOptions,
) -> Result<Consistent, SeqError> {
    let anchor = (0..posed.frames.len())
        .map(|f| (f, total_area(&posed.frames[f], posed.triangles)))
        .fold(None, |best: Option<(usize, f64)>, (f, a)| match best {
            Some((_, b)) if b >= a => best,
            _ => Some((f, a)),
        })
        .map(|b| b.0)
        .ok_or(SeqError::Empty)?;
    let skin = posed.solve(anchor, solver, options)?;
    let anchor_world = posed.world(anchor)?;
    let rest = &posed.frames[anchor];
    if skin.vertex_count() != rest.len() {
        return Err(SeqError::Skin {
            frame: anchor,
            message: format!("{} weight rows for {} vertices", skin.vertex_count(), rest.len()),
        });
    }
    let mut reconstructed = Vec::with_capacity(posed.frames.len());
    for f in 0..posed.frames.len() {
        let world = posed.world(f)?;
        let matrices: Vec<Mat4> = world.iter().zip(&anchor_world).map(|(w, a)| *w * a.inverse()).collect();
        reconstructed.push(rigml_core::lbs(rest, &skin, &matrices));
    }
    Ok(Consistent {
        anchor,
        skin,
        reconstructed,
    })
}
