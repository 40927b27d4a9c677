//! The general template (`--template auto`): the curve skeleton of [`CurveSkeleton`], less the end
//! chains the learned placer puts no joint near.
//!
//! The curve skeleton follows every part of a shape; the learned placer knows which parts
//! artists rig but places joints less precisely, and misses thin parts. Together: the curve
//! skeleton's joints, kept where the learned skeleton agrees that a limb is there, when the two
//! disagree about a large share of the joints (see [`crate::curve::support`]). On val this takes
//! the anglerfish from 38 joints in its fins and lantern to a 12-joint body, CD-J2J 0.111 →
//! 0.065, and changes no other non-humanoid (`rigml eval --split val --methods
//! rig-auto,rig-curve`).
//!
//! The agreement also works the other way: the curve skeleton's pruning removes side branches
//! that stick out of a thick part by less than a few of its radii, which takes short real limbs
//! (a T-rex's arms, a sauropod's lower legs) for the rim of the body. The end chains of a curve
//! skeleton pruned less eagerly ([`crate::CurveParams::loose_thickness`]) that the learned
//! skeleton backs and the default one lacks are grafted on, mirrored pairs together (val
//! `rig-detect` CD-J2J: T-rex 0.0488 -> 0.0401; train non-humanoids 0.0651 -> 0.0631).

use crate::curve::{CurveDetail, Support};
use crate::{CurveSkeleton, LearnedPlacer, PlacedSkeleton, RigError, SkeletonPlacer};
use rigml_core::Mesh;

/// [`CurveSkeleton`] guided by [`LearnedPlacer`]; see the module documentation.
#[derive(Debug, Clone)]
pub struct Auto {
    pub curve: CurveSkeleton,
    pub learned: LearnedPlacer,
}

impl Auto {
    /// The default curve-skeleton settings with the embedded skeleton model.
    pub fn embedded() -> Result<Auto, RigError> {
        Ok(Auto {
            curve: CurveSkeleton::default(),
            learned: LearnedPlacer::embedded()?,
        })
    }

    /// [`SkeletonPlacer::place`] with what the curve skeleton found on the way. The two placers
    /// run at the same time. When the learned placer finds no joint at all, nothing is removed.
    pub fn place_detail(&self, mesh: &Mesh) -> Result<CurveDetail, RigError> {
        let (curve, learned) = rayon::join(|| self.curve.curve(mesh), || self.learned.place(mesh));
        let support = match learned {
            Ok(learned) => Some(Support::new(&learned.heads, &learned.parents)),
            Err(RigError::Placement { .. }) => None,
            Err(other) => return Err(other),
        };
        self.curve.finish(curve?, support.as_ref())
    }
}

impl SkeletonPlacer for Auto {
    fn name(&self) -> &'static str {
        "auto"
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        self.place_detail(mesh).map(|d| d.skeleton)
    }
}
