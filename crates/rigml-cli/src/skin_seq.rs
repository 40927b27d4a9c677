//! `rigml skin-seq IN --clip C --method M`: skin every frame of a skinned animation with a
//! geometric solver and report the temporal skinning error (METRICS.md §6), or, with
//! `--consistent`, skin the anchor frame once, carry the weights to every frame and report the
//! LBS RMSE those weights give (temporal error 0 by construction).

use crate::skin::{solver, METHODS};
use anyhow::{anyhow, bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rigml_eval::sequence_metrics::{lbs_rmse, tse};
use rigml_io::sequence::{bake, SequenceOptions};
use rigml_seq::consistent::{consistent, per_frame, PosedFrames};
use rigml_seq::Normalisation;
use rigml_skin::SolveOptions;
use serde_json::json;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Skin a posed sequence per frame (temporal error) or consistently from the anchor frame.
#[derive(clap::Args)]
#[command(after_help = "\
IN is a skinned animation (.glb, .gltf, .fbx): its clip is baked to frames with its own skin, and
its skeleton, posed in each frame, is what the solver binds to. Its own weights are not used.

Examples:
  rigml skin-seq Wolf.glb --clip 11 --method heat
  rigml skin-seq Wolf.glb --clip 11 --method heat --consistent --json
  rigml skin-seq mannequiny.glb --clip 6 --frames 30 --method nearest")]
pub struct Args {
    /// A skinned animation (.glb, .gltf, .fbx).
    pub input: PathBuf,
    /// The clip to bake.
    #[arg(long, default_value_t = 0)]
    pub clip: usize,
    /// Bake this many evenly spaced frames instead of the clip's keys.
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub frames: Option<u32>,
    /// The solver (see `rigml skin --help`).
    #[arg(long, default_value = "heat", value_parser = clap::builder::PossibleValuesParser::new(METHODS))]
    pub method: String,
    /// Influence cap per vertex.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: u16,
    /// Solve on the anchor frame only and carry the weights to every frame.
    #[arg(long)]
    pub consistent: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Bake, solve, measure.
pub fn run(args: &Args) -> Result<String> {
    let character = rigml_io::load(&args.input)?;
    if character.skeleton.is_empty() {
        bail!("{}: has no skeleton to bind to", args.input.display());
    }
    let options = SequenceOptions {
        clip: args.clip,
        frames: args.frames.map(|n| n as usize),
    };
    let baked = bake(&character, &options, &args.input)?;
    let frames = &baked.sequence.frames;
    if frames.len() < 2 {
        bail!(
            "{}: clip {} bakes to {} frame(s); give --frames N (N ≥ 2)",
            args.input.display(),
            args.clip,
            frames.len()
        );
    }
    let posed = PosedFrames {
        triangles: &baked.sequence.triangles,
        frames,
        skeleton: &character.skeleton,
        skinning: &baked.skinning,
    };
    let solver = solver(&args.method, None, None)?;
    let solve_options = SolveOptions {
        max_influences: usize::from(args.max_influences),
        ..SolveOptions::default()
    };
    let joints = character.skeleton.joint_count();
    let n = frames.first().map_or(0, Vec::len);
    let started = Instant::now();
    let where_ = |e: rigml_seq::SeqError| anyhow!("{}: {e}", args.input.display());
    let (mode, tse_value, rmse, anchor) = if args.consistent {
        let result = consistent(&posed, solver.as_ref(), &solve_options).map_err(where_)?;
        let scale = frames
            .get(result.anchor)
            .and_then(|f| Normalisation::of_frame(f))
            .map_or(1.0, |n| n.scale);
        let (rmse, _) = lbs_rmse(&result.reconstructed, frames, scale).ok_or_else(|| anyhow!("no frames"))?;
        ("consistent", (0.0, 0.0), Some(rmse), Some(result.anchor))
    } else {
        let bar = ProgressBar::new(frames.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} frames [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let skins = per_frame(&posed, solver.as_ref(), &solve_options, &|done, _| {
            bar.set_position(done as u64)
        })
        .map_err(where_)?;
        bar.finish_and_clear();
        let dense: Vec<Vec<f32>> = skins.iter().map(|s| s.to_dense(joints)).collect();
        let value = tse(&dense, n).ok_or_else(|| anyhow!("fewer than two frames"))?;
        ("per-frame", value, None, None)
    };
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let value = json!({
            "input": args.input.display().to_string(),
            "clip": baked.sequence.name,
            "frames": frames.len(),
            "vertices": n,
            "joints": joints,
            "method": args.method,
            "mode": mode,
            "tse": tse_value.0,
            "tse_per_vertex": tse_value.1,
            "anchor_frame": anchor,
            "lbs_rmse": rmse,
            "seconds": seconds,
        });
        return Ok(format!("{value}\n"));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} frames × {n} vertices, {joints} joints, {} {mode}: TSE {:.2} ({:.4} per vertex){} in {seconds:.2} s",
        baked.sequence.name,
        frames.len(),
        args.method,
        tse_value.0,
        tse_value.1,
        rmse.map_or(String::new(), |r| format!(
            ", anchor frame {}, LBS RMSE {r:.3e}",
            anchor.unwrap_or(0)
        )),
    );
    Ok(out)
}
