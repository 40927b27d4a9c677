//! Reading a mesh sequence for `rigml decompose` and `rigml rig-seq`: a folder of OBJ frames
//! (held in memory or streamed from disk), an Alembic mesh cache, or a skinned animation baked
//! to frames with its own skin.

use crate::arg_numbers::positive;
use anyhow::{bail, Result};
use rigml_io::sequence::{Baked, ObjFrames, SequenceOptions};
use rigml_seq::{FrameSource, SeqError};
use std::path::Path;

/// How a skinned input is baked to frames, and the output clip's frame rate.
#[derive(clap::Args)]
pub struct BakeArgs {
    /// Skinned input: the clip to bake.
    #[arg(long, default_value_t = 0)]
    pub clip: usize,
    /// Skinned input: bake this many evenly spaced frames instead of the clip's keys.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub frames: Option<u32>,
    /// Frame rate of the output clip (default: the input's, else 24).
    #[arg(long, value_parser = positive::<f32>)]
    pub fps: Option<f32>,
}

impl BakeArgs {
    /// The baking options of rigml-io.
    pub fn options(&self) -> SequenceOptions {
        SequenceOptions {
            clip: self.clip,
            frames: self.frames.map(|n| n as usize),
        }
    }
}

/// OBJ frames re-read from disk on every pass.
pub struct Streamed(pub ObjFrames);

impl FrameSource for Streamed {
    fn frame_count(&self) -> usize {
        self.0.frame_count()
    }
    fn vertex_count(&self) -> usize {
        self.0.vertex_count
    }
    fn triangles(&self) -> &[[u32; 3]] {
        &self.0.triangles
    }
    fn read_frame(&self, f: usize, out: &mut Vec<glam::Vec3>) -> Result<(), SeqError> {
        *out = self.0.read_frame(f).map_err(|e| SeqError::Source {
            frame: f,
            message: e.to_string(),
        })?;
        Ok(())
    }
}

/// A loaded sequence, in one of its three forms.
pub enum Input {
    /// Every frame in memory (an OBJ folder or an Alembic cache).
    Held(rigml_core::Sequence),
    /// A skinned animation baked to frames; the character keeps its own rig (the truth).
    Baked(Box<rigml_core::Character>, Baked),
    /// OBJ frames read from disk on every pass.
    Streamed(Streamed),
}

impl Input {
    /// Read `path` (see the module docs); Alembic warnings go to stderr.
    pub fn load(path: &Path, options: &SequenceOptions, stream: bool) -> Result<Input> {
        let is_dir = path.is_dir();
        if stream && !is_dir {
            bail!("{}: --stream reads OBJ folders only", path.display());
        }
        if stream {
            return Ok(Input::Streamed(Streamed(ObjFrames::open(path)?)));
        }
        if is_dir {
            return Ok(Input::Held(rigml_io::sequence::load_sequence(path, options)?));
        }
        if rigml_io::Format::from_path(path).ok() == Some(rigml_io::Format::Alembic) {
            let abc = rigml_io::alembic::read(path)?;
            for warning in &abc.warnings {
                eprintln!("warning: {}: {warning}", path.display());
            }
            return Ok(Input::Held(abc.sequence));
        }
        let character = rigml_io::load(path)?;
        let frames = rigml_io::sequence::bake(&character, options, path)?;
        Ok(Input::Baked(Box::new(character), frames))
    }

    /// Whether `path` names a skinned animation (the only input with a truth to compare).
    pub fn is_skinned_file(path: &Path) -> bool {
        !path.is_dir() && rigml_io::Format::from_path(path).ok() != Some(rigml_io::Format::Alembic)
    }

    /// The frames, for the solvers.
    pub fn source(&self) -> &dyn FrameSource {
        match self {
            Input::Held(s) => s,
            Input::Baked(_, b) => &b.sequence,
            Input::Streamed(s) => s,
        }
    }

    /// The input's frame rate, when it has one.
    pub fn fps(&self) -> Option<f32> {
        match self {
            Input::Held(s) => s.fps,
            Input::Baked(_, b) => b.sequence.fps,
            Input::Streamed(_) => None,
        }
    }

    /// The skinned character and its baked frames, for a skinned input.
    pub fn baked(&self) -> Option<(&rigml_core::Character, &Baked)> {
        match self {
            Input::Baked(c, b) => Some((c, b)),
            _ => None,
        }
    }
}

/// Recovered per-frame maps (anchor frame → frame `f`, one per recovered joint) against the
/// skinned input's own joints, matched one to one by rigml-eval's bone matching; the true
/// joints are those carrying weight. `scale` is the METRICS.md §6 normalisation. Joints are
/// matched by their motion: where each map takes the vertices the true joint weights
/// ([`vertex_motion_cost`](rigml_eval::bone_match::vertex_motion_cost)). With `by_skin` (the
/// fitted skin, and the joint of each recovered map), they are matched by the vertices they
/// weight instead ([`skin_overlap_cost`](rigml_eval::bone_match::skin_overlap_cost)).
pub fn compare_with_truth(
    character: &rigml_core::Character,
    baked: &Baked,
    anchor: usize,
    recovered: &[Vec<glam::Mat4>],
    recovered_joints: &[glam::Vec3],
    scale: f32,
    by_skin: Option<(&rigml_core::Skin, &[usize])>,
) -> Result<rigml_eval::bone_match::BoneMatch> {
    use anyhow::Context;
    let anchor_vertices = baked
        .sequence
        .frames
        .get(anchor)
        .context("anchor frame has no vertices")?;
    let anchor = baked.skinning.get(anchor).context("anchor frame has no pose")?;
    let truth: Vec<Vec<glam::Mat4>> = baked
        .skinning
        .iter()
        .map(|frame| frame.iter().zip(anchor).map(|(s, a)| *s * a.inverse()).collect())
        .collect();
    let probes: Vec<glam::Vec3> = anchor
        .iter()
        .zip(character.skeleton.bind_world())
        .map(|(s, b)| (*s * b).w_axis.truncate())
        .collect();
    let mut weight = vec![0.0f32; character.skeleton.joint_count()];
    if let Some(skin) = &character.skin {
        for row in skin.rows() {
            for i in row {
                if let Some(w) = weight.get_mut(i.joint as usize) {
                    *w += i.weight;
                }
            }
        }
    }
    let joints: Vec<usize> = (0..weight.len()).filter(|&j| weight[j] > 0.0).collect();
    let cost = match (by_skin, &character.skin) {
        (Some((skin, bones)), Some(own)) => Some(
            rigml_eval::bone_match::skin_overlap_cost(own, &joints, skin, bones)
                .context("the fitted skin and the file's cover different vertices")?,
        ),
        (None, Some(own)) => Some(
            rigml_eval::bone_match::vertex_motion_cost(&truth, recovered, &joints, own, anchor_vertices, scale)
                .context("the file's skin, its frames and the recovered maps differ in size")?,
        ),
        (_, None) => None,
    };
    rigml_eval::bone_match::match_bones(
        cost.as_deref(),
        &truth,
        recovered,
        &joints,
        &probes,
        Some(recovered_joints),
        scale,
    )
    .context("no joints to compare")
}
