//! `rigml ikrig encode CLIP -o clip.csv|.npy` and `rigml ikrig decode clip.csv --to CHARACTER
//! -o OUT.glb`: the IK-Rig motion encoding as a table, and back onto any humanoid.

use crate::retarget::{load_clip, rig};
use anyhow::{bail, Context, Result};
use rigml_anim::decode::{decode, DecodeOptions};
use rigml_anim::encode::encode;
use rigml_anim::retarget::bake_clip;
use rigml_anim::rig::sample_frames;
use rigml_anim::table;
use rigml_io::SaveOptions;
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;

/// Encode a humanoid clip as IK-Rig goals, or decode such goals onto a character.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml ikrig encode ../shared/data/motion/cmu_02_01_walk.bvh -o walk.csv
  rigml ikrig encode dance.glb --clip-name Dance -o dance.npy
  rigml ikrig encode anim.glb --skeleton character.glb -o anim.csv
  rigml ikrig decode walk.csv --to Ranger.glb -o ranger-walk.glb

Columns (CSV header; the same order in .npy): time, origin_x/z and forward_x/z of the ground
frame (hip heights), hips position and rotation, then per chain (spine, neck, left/right arm,
left/right leg) root, offset (chain lengths), pole and effector rotation, then shoulder and
toe rotations and four 0/1 contact flags.")]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Subcommand)]
pub enum Command {
    /// Encode a clip as per-frame IK-Rig goals (.csv with a header, or .npy of f32).
    Encode(EncodeArgs),
    /// Decode an encoding (.csv) onto a humanoid character and write it animated.
    Decode(DecodeArgs),
}

#[derive(clap::Args)]
pub struct EncodeArgs {
    /// The animated source (.bvh, .glb, .gltf, .fbx).
    pub clip: PathBuf,
    /// The file holding the skeleton the clip animates, when it is not CLIP itself.
    #[arg(long, value_name = "CHARACTER")]
    pub skeleton: Option<PathBuf>,
    /// The table to write: .csv or .npy.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Which clip of the source to use (by name; default: the first).
    #[arg(long)]
    pub clip_name: Option<String>,
    /// Humanoid map overrides for the skeleton (see `rigml retarget --help`).
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args)]
pub struct DecodeArgs {
    /// An encoding written by `rigml ikrig encode` (.csv).
    pub encoding: PathBuf,
    /// The character to animate.
    #[arg(long, value_name = "CHARACTER")]
    pub to: PathBuf,
    /// The animated character to write (.glb, .gltf or .fbx).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Humanoid map overrides for the target skeleton.
    #[arg(long, value_name = "FILE")]
    pub to_map: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Serialize)]
struct Summary {
    input: String,
    output: String,
    frames: usize,
    fps: f32,
    columns: usize,
    hip_height: f32,
}

pub fn run(args: &Args) -> Result<String> {
    let summary = match &args.command {
        Command::Encode(a) => run_encode(a)?,
        Command::Decode(a) => run_decode(a)?,
    };
    let json = match &args.command {
        Command::Encode(a) => a.json,
        Command::Decode(a) => a.json,
    };
    if json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} frames at {:.1} fps, {} columns (hip height {:.4})",
        summary.input, summary.frames, summary.fps, summary.columns, summary.hip_height
    );
    let _ = writeln!(s, "wrote {}", summary.output);
    Ok(s)
}

fn run_encode(args: &EncodeArgs) -> Result<Summary> {
    let ext = args
        .output
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext != "csv" && ext != "npy" {
        bail!("{}: the encoding is written as .csv or .npy", args.output.display());
    }
    let (source, clip) = load_clip(&args.clip, args.clip_name.as_deref())?;
    let (skeleton_file, skeleton) = match &args.skeleton {
        Some(path) => (path.clone(), rigml_io::load(path)?),
        None => (args.clip.clone(), source),
    };
    let info = rig(&skeleton, &skeleton_file, args.map.as_deref())?;
    let asset = args.clip.display().to_string();
    let frames = sample_frames(&skeleton.skeleton, &clip, &asset)?;
    let encoded = encode(&skeleton.skeleton, &info, &frames, &clip.name);
    let bytes = if ext == "csv" {
        table::to_csv(&encoded).into_bytes()
    } else {
        table::to_npy(&encoded)
    };
    rigml_io::atomic::write(&args.output, &bytes, args.force)?;
    Ok(Summary {
        input: asset,
        output: args.output.display().to_string(),
        frames: encoded.frames.len(),
        fps: encoded.fps,
        columns: table::columns().len(),
        hip_height: info.hip_height,
    })
}

fn run_decode(args: &DecodeArgs) -> Result<Summary> {
    let text = std::fs::read_to_string(&args.encoding).with_context(|| format!("{}", args.encoding.display()))?;
    let name = args
        .encoding
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("ikrig")
        .to_string();
    let encoded = table::from_csv(&text, &args.encoding.display().to_string(), &name)?;
    let mut target = rigml_io::load(&args.to)?;
    let info = rig(&target, &args.to, args.to_map.as_deref())?;
    let poses = decode(&target.skeleton, &info, &encoded, DecodeOptions::default());
    let times: Vec<f32> = encoded.times.iter().map(|t| t - encoded.times[0]).collect();
    target.clips = vec![bake_clip(&target.skeleton, &times, &poses, &name)];
    rigml_io::save(&target, &args.output, SaveOptions { force: args.force })?;
    Ok(Summary {
        input: args.encoding.display().to_string(),
        output: args.output.display().to_string(),
        frames: poses.len(),
        fps: encoded.fps,
        columns: table::columns().len(),
        hip_height: info.hip_height,
    })
}
