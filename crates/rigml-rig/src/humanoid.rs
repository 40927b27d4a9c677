//! The humanoid template placer: orientation, landmarks found in the voxel solid, and a
//! standard skeleton with Mixamo-style names (`Hips`, `Spine`..`Spine2`, `Neck`, `Head`,
//! `LeftShoulder`, `LeftArm`, `LeftForeArm`, `LeftHand`, `LeftUpLeg`, `LeftLeg`, `LeftFoot`,
//! `LeftToeBase`, ...) that rigml-anim's humanoid mapping and other tools understand.
//!
//! Steps: [`orient::detect`] finds up, forward and the mirror plane; the mesh is voxelised in
//! that frame at unit height (parts that nearly touch are joined); landmarks come from a curve
//! skeleton through the solid (see `landmarks`); left and right are averaged into mirror images
//! when the mesh is symmetric; fingers are added only where the hand, voxelised on its own at a
//! finer resolution, splits into four or five branches (or a thumb and fused fingers).
//!
//! Finally the joints whose role every rig agrees on are moved by the median offset between the
//! landmark rules and the artists' rigs of the train split (`template::ARTIST_OFFSETS`).
//!
//! On the val humanoids of the data set (`cargo run --release -p rigml-rig --example
//! humanoid_table`) CD-J2J is 0.018-0.024 except the mech (0.053: blade legs without feet, and
//! an artist rig with IK pole targets far outside the body, worth 0.016 on their own); mean
//! 0.0266 over the six (0.0276 without the offsets), 0.0312 over 26 train humanoids (0.0340).

mod hand;
mod landmarks;
mod template;
mod volume;

use crate::orient::{self, Orientation};
use crate::{check_mesh, ground, PlacedSkeleton, RigError, SkeletonPlacer};
use glam::Vec3;
use rigml_core::Mesh;

pub use template::JOINT_NAMES;

/// Voxels along the longest side of the character's solid.
pub const RESOLUTION: usize = 128;

/// Mirror agreement (share of solid voxels whose mirror image is solid) above which a mesh is
/// taken as left/right symmetric and its joints are made exactly mirror images.
pub const SYMMETRY_TOLERANCE: f32 = 0.8;

/// How much better a shape may mirror itself front to back (across its thinnest side) than
/// left to right and still be read as a standing humanoid. A four-legged body is thinnest
/// across its width, so the humanoid frame reads it across the body, its front and back legs
/// as two legs; it then mirrors itself far better across the thin side (its own left and right).
/// On train and val characters caught at 4 even frames of each of their clips (`cargo run
/// --release -p rigml-rig --example detect_table 4 all FRAMES.tsv`), refusing frames 0.1 or
/// more better across the thin side refuses 41 of the 46 quadruped frames that were taken for
/// humanoids and 7 of the 839 humanoid-category frames that were
/// (docs/experiments/2026-12-03-detect-mid-motion.md).
pub const DEPTH_MIRROR_MARGIN: f32 = 0.1;

/// Places a standard humanoid skeleton inside a standing character (T-pose or A-pose).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Humanoid {
    /// Add end sites (`LeftHandTip_End`, `RightHandTip_End`, `HeadTop_End`, `LeftToe_End`,
    /// `RightToe_End`) at the hand tips, head top and toe tips. Off by default: most artist rigs
    /// have none, and on train and val they raise CD-J2J (0.0353 against 0.0290 on val when
    /// measured: mean over the six val humanoids).
    pub end_sites: bool,
    /// Leave the joints where the landmark rules put them, without moving them by the offsets
    /// measured against the artists' rigs of the train split (see `template`). For measuring
    /// those offsets; off by default.
    pub raw_landmarks: bool,
    /// Put a ground root ([`crate::ground`]) above the hips: a weightless `root` at the
    /// model's origin, as game rigs have. On by default.
    pub ground_root: bool,
}

impl Default for Humanoid {
    fn default() -> Self {
        Humanoid {
            end_sites: false,
            raw_landmarks: false,
            ground_root: true,
        }
    }
}

/// What [`looks_humanoid`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanoidCheck {
    /// The character's frame.
    pub orientation: Orientation,
    /// `Ok(())` when landmarks and limb proportions of a standing humanoid were found, else why
    /// not.
    pub verdict: Result<(), String>,
}

impl HumanoidCheck {
    /// True when the mesh is a standing humanoid.
    pub fn is_humanoid(&self) -> bool {
        self.verdict.is_ok()
    }
}

/// The mesh in the character frame (x left, y up, z forward), scaled to unit height about the
/// bounds centre, and the scale used.
fn to_character_frame(mesh: &Mesh, o: &Orientation) -> Result<(Vec<Vec3>, f32), RigError> {
    let local: Vec<Vec3> = mesh.positions.iter().map(|&p| o.to_local(p)).collect();
    let (lo, hi) = orient::bounds(&local).ok_or(RigError::EmptyMesh)?;
    let height = hi.y - lo.y;
    if !(height.is_finite() && height > 0.0) {
        return Err(RigError::Degenerate);
    }
    Ok((local.iter().map(|p| *p / height).collect(), height))
}

/// What [`analyse`] finds: the frame, the height, the mesh in the character frame at unit
/// height, and the landmarks or why there are none.
type Analysis = (Orientation, f32, Vec<Vec3>, Result<landmarks::Landmarks, String>);

/// Landmarks of `mesh`, or why it is not a standing humanoid.
fn analyse(mesh: &Mesh) -> Result<Analysis, RigError> {
    check_mesh(mesh)?;
    let o = orient::detect(&mesh.positions, &mesh.triangles)?;
    let (local, height) = to_character_frame(mesh, &o)?;
    // Refused before the solid is built: the frame alone says so, and the volume is the costly part.
    if o.depth_symmetry > o.symmetry + DEPTH_MIRROR_MARGIN {
        let why = format!(
            "it mirrors itself front to back ({:.2} of the solid) better than left to right ({:.2}), \
             as a four-legged body seen across does",
            o.depth_symmetry, o.symmetry
        );
        return Ok((o, height, local, Err(why)));
    }
    let Some(vol) = volume::Volume::new(&local, &mesh.triangles, RESOLUTION) else {
        return Err(RigError::Degenerate);
    };
    let found = landmarks::find(&vol, o.symmetry >= SYMMETRY_TOLERANCE)
        .and_then(|l| template::check_proportions(&l).map(|()| l));
    Ok((o, height, local, found))
}

/// Decide whether `mesh` is a standing humanoid: two feet on the ground beside the mirror
/// plane, arms reaching out from a vertical trunk, a head on top (see
/// [`template::check_proportions`]). Errors only for meshes no placer can use.
pub fn looks_humanoid(mesh: &Mesh) -> Result<HumanoidCheck, RigError> {
    let (orientation, _, _, found) = analyse(mesh)?;
    Ok(HumanoidCheck {
        orientation,
        verdict: found.map(|_| ()),
    })
}

impl SkeletonPlacer for Humanoid {
    fn name(&self) -> &'static str {
        "humanoid"
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        let (o, height, local, found) = analyse(mesh)?;
        let mut marks = found.map_err(|message| RigError::Placement {
            placer: self.name().into(),
            message: format!("not a standing humanoid: {message}"),
        })?;
        let symmetric = o.symmetry >= SYMMETRY_TOLERANCE;
        if symmetric {
            template::make_symmetric(&mut marks);
        }
        let mut fingers =
            [&marks.left, &marks.right].map(|s| hand::fingers(&local, &mesh.triangles, s.wrist, s.hand_tip));
        if symmetric {
            template::make_fingers_symmetric(&mut fingers);
        }
        let mut placed = template::build(&marks, self.end_sites, !self.raw_landmarks, &fingers);
        for h in &mut placed.heads {
            *h = o.to_model(*h * height);
        }
        placed.forward = o.forward;
        if self.ground_root {
            if let Some(at) = ground::ground_point(&mesh.positions, o.up) {
                ground::add_ground_root(&mut placed, at);
            }
        }
        placed.validate()?;
        Ok(placed)
    }
}
