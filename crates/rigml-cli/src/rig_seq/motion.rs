//! `rig-seq --template motion`: the skeleton read from how the sequence moves rather than from
//! the anchor's shape. The sequence is decomposed into `--bones` rigid bones with blended
//! weights (SSDR, `rigml decompose`), and those bones are joined into a tree where each pair
//! turns about a common point (Le & Deng 2014, `rigml_seq::rig`); that tree and its weights are
//! the rig `rig-seq` then fits frame by frame, with connected joints, as it fits a placed one.
//!
//! Why: a placer reads limbs from one frame, and in a fast gait (a gallop's airborne frames) the
//! legs it reads are not the parts that move; the decomposition sees every frame. Over the
//! train/val quadrupeds' walks, runs and gallops (`tools/rig-seq-truth.py`, 27 clips of 3
//! families) the recovered joint rotations were 7.05° from the artists' on average against 10.03°
//! for the shape template at about as many joints: see docs/experiments/2026-11-27-rig-seq.md,
//! section 2026-12-04.

use crate::rig::MOTION;
use rigml_core::Mesh;
use rigml_rig::Rigged;
use rigml_seq::{FrameSource, SeqError};

/// Bones decomposed by default: about as many joints as the shape template gives a quadruped
/// (57 to 66 on the animals pack's husky), so the two are compared at equal joint counts; of 30,
/// 44 and 60 on the train/val protocol, 60 recovered the rotations best (docs as above).
pub const DEFAULT_BONES: u16 = 60;

/// The rig of `mesh` (the sequence's largest-area frame, the decomposition's rest shape, with
/// its UVs and materials) from a decomposition of `source` into `bones` bones, each vertex
/// weighted by at most `max_influences`. Bones that end with no weight are dropped, so the
/// joints can be fewer than `bones`.
pub(super) fn rig(
    source: &dyn FrameSource,
    mesh: Mesh,
    bones: usize,
    max_influences: usize,
    name: &str,
) -> Result<Rigged, SeqError> {
    if mesh.vertex_count() != source.vertex_count() {
        return Err(SeqError::Options(format!(
            "the rest mesh has {} vertices, the frames {}",
            mesh.vertex_count(),
            source.vertex_count()
        )));
    }
    let options = rigml_seq::Options {
        bones,
        max_influences,
        ..rigml_seq::Options::default()
    };
    let decomposition = rigml_seq::decompose(source, &options, &|_, _| {})?;
    // The clip of the decomposition's free bones is not kept: rig-seq fits its own, connected.
    let mut character = rigml_seq::build_rig(&decomposition, name, 24.0)?.character;
    character.mesh = mesh;
    character.clips.clear();
    Ok(Rigged {
        character,
        template: MOTION,
    })
}
