//! `rigml render IN -o OUT.png`: skin weights as pictures (heat map of one joint, a colour per
//! dominant joint, a pose sheet, or two weight sets side by side), drawn on the CPU.

use anyhow::{anyhow, Context, Result};
use rigml_viz::{poses_from_clip, render_compare, render_pose_sheet, render_weights, RenderOptions, WeightMode};
use std::fmt::Write;
use std::path::PathBuf;

/// Draw skin weights to a PNG: front, side and back views.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml render Ranger.glb --joint upperarm.l -o arm.png      heat map of one joint's weights
  rigml render Ranger.glb --dominant -o parts.png             a colour per strongest joint
  rigml render Fox.glb --all --poses 6 -o sheet.png           six frames of the first clip
  rigml render artist.glb --compare predicted.glb -o diff.png artist | predicted | difference")]
pub struct Args {
    /// The character to draw (any format rigml reads).
    pub input: PathBuf,
    /// The PNG to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Heat map of this joint's weights.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["dominant", "all"])]
    pub joint: Option<String>,
    /// One colour per vertex's strongest joint (the default).
    #[arg(long)]
    pub dominant: bool,
    /// Every joint's colour blended by weight.
    #[arg(long)]
    pub all: bool,
    /// A pose sheet: N evenly spaced frames of the first clip (the rest pose if there is none).
    #[arg(long, value_name = "N", conflicts_with = "compare")]
    pub poses: Option<usize>,
    /// Another file with the same mesh and joints: draw INPUT's weights, OTHER's, and their
    /// difference.
    #[arg(long, value_name = "OTHER")]
    pub compare: Option<PathBuf>,
    /// Panel size in pixels.
    #[arg(long, default_value_t = 512)]
    pub size: u32,
    /// Draw the mesh as stored (bind pose) instead of skinned by the rest pose.
    #[arg(long)]
    pub bind: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Load, render, save; returns what was written.
pub fn run(args: &Args) -> Result<String> {
    let character = rigml_io::load(&args.input)?;
    let skin = character
        .skin
        .as_ref()
        .ok_or_else(|| anyhow!("{}: has no skin weights to draw", args.input.display()))?;
    let mode = match (&args.joint, args.all) {
        (Some(name), _) => WeightMode::Joint(character.skeleton.index_of(name).ok_or_else(|| {
            anyhow!(
                "{}: no joint named {name} (see `rigml inspect {}`)",
                args.input.display(),
                args.input.display()
            )
        })?),
        (None, true) => WeightMode::All,
        (None, false) => WeightMode::Dominant,
    };
    let options = RenderOptions {
        mode,
        size: args.size,
        rest_pose: !args.bind,
        ..RenderOptions::default()
    };
    let mut out = String::new();
    let image = if let Some(other_path) = &args.compare {
        let other = rigml_io::load(other_path)?;
        let other_skin = other
            .skin
            .as_ref()
            .ok_or_else(|| anyhow!("{}: has no skin weights to compare", other_path.display()))?;
        let comparison = render_compare(&character, skin, other_skin, &options)
            .with_context(|| format!("comparing with {}", other_path.display()))?;
        let _ = writeln!(
            out,
            "weight difference per vertex (0 = same, 1 = disjoint): max {:.4}, mean {:.4}",
            comparison.max_difference, comparison.mean_difference
        );
        comparison.image
    } else if let Some(count) = args.poses {
        let poses = if character.clips.is_empty() {
            vec![rigml_core::Pose::rest(&character.skeleton); count]
        } else {
            poses_from_clip(&character, 0, count)?
        };
        render_pose_sheet(&character, &poses, &options)?
    } else {
        render_weights(&character, &options)?
    };
    rigml_io::atomic::write(&args.output, &rigml_viz::encode_png(&args.output, &image)?, args.force)?;
    let _ = writeln!(
        out,
        "wrote {} ({}x{})",
        args.output.display(),
        image.width(),
        image.height()
    );
    Ok(out)
}
