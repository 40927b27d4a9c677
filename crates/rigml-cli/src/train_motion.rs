//! `rigml train-motion --split train [--val val] -o motion.safetensors`: train the motion model
//! (rigml-motion) on the humanoid clips of a manifest split, with the same progress bar,
//! checkpoints, curves PNG and `--resume` as `rigml train`.

use crate::arg_numbers::{non_negative, positive, unit_interval};
use crate::motion_data::load_split;
use crate::train::{bar, checkpoint_path, curves_path, Bars};
use anyhow::{bail, Result};
use rigml::train::Progress;
use rigml_eval::dataset::Dataset;
use rigml_motion::train::{Inputs, MotionLosses, MotionTrainConfig};
use rigml_motion::{MotionError, MotionModel};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

/// Train the learned motion model (denoising, contacts, in-betweens) on a manifest split.
#[derive(clap::Args)]
#[command(after_help = "\
Needs a build with training (the `train` cargo feature).

Examples:
  rigml train-motion --split train --val val -o motion.safetensors
  rigml train-motion --split train --val val --infill 0 -o denoise.safetensors   (cleaning only)
  rigml train-motion --split train --val val --infill 0 --noise-evidence --steps 1500 -o denoise.safetensors
  rigml train-motion --split train --val val --infill 0 --noise-evidence --blend -o blend.safetensors
  rigml train-motion --split train --steps 200 -o quick.safetensors --force
  rigml train-motion --split train --val val -o motion.safetensors --resume motion.safetensors.ckpt
Every humanoid clip of the split is encoded in IK-Rig space at 30 fps, with --copies damaged
copies (jitter, spikes, dropped frames, foot sliding) and the mirror of each. Writes OUTPUT,
OUTPUT.ckpt every --checkpoint-every steps and OUTPUT with -curves.png (the loss curves).")]
pub struct Args {
    /// The data folder holding manifest.tsv, or the manifest itself.
    #[arg(long, default_value = "../shared/data")]
    pub data: PathBuf,
    /// Split to fit on.
    #[arg(long, default_value = "train", value_parser = ["train", "val", "test"])]
    pub split: String,
    /// Split to validate on while training (never test for a model you report on test).
    #[arg(long, value_parser = ["train", "val", "test"])]
    pub val: Option<String>,
    /// The model file to write (.safetensors).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Optimiser steps.
    #[arg(long, default_value_t = 3000)]
    pub steps: usize,
    /// Windows per step.
    #[arg(long, default_value_t = 16)]
    pub batch: usize,
    /// Frames per window (30 fps).
    #[arg(long, default_value_t = 96)]
    pub window: usize,
    /// Hidden channels.
    #[arg(long, default_value_t = 128)]
    pub hidden: usize,
    /// Dilations of the residual blocks, comma-separated (one block each; the receptive field
    /// is ± their sum): more or wider blocks see further from each frame.
    #[arg(long, default_value = "1,2,4,8,16,1", value_parser = dilation_list)]
    pub dilations: Dilations,
    /// Peak learning rate (Adam, cosine decay).
    #[arg(long, default_value_t = 1e-3, value_parser = positive::<f64>)]
    pub learning_rate: f64,
    /// Share of windows that teach in-filling between key frames (the rest teach denoising).
    #[arg(long, default_value_t = 0.3, value_parser = unit_interval::<f32>)]
    pub infill: f32,
    /// Damaged copies of every clip.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub copies: u16,
    /// Leave out the mirrored clips.
    #[arg(long)]
    pub no_mirror: bool,
    /// Seed of everything random.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Validate every N steps.
    #[arg(long, default_value_t = 250)]
    pub val_every: usize,
    /// Write OUTPUT.ckpt every N steps (0 = never).
    #[arg(long, default_value_t = 500)]
    pub checkpoint_every: usize,
    /// Weight of the contact term of the loss (the motion term's weight is 1).
    #[arg(long, default_value_t = MotionTrainConfig::default().contact_weight, value_parser = non_negative::<f32>)]
    pub contact_weight: f32,
    /// Smallest spread a feature is normalised by (the loss weighs each feature by one over its
    /// spread squared, so this caps the weight of features that barely move).
    #[arg(long, default_value_t = rigml_motion::data::MIN_SPREAD, value_parser = positive::<f32>)]
    pub min_spread: f32,
    /// Let the model read, beside each frame, how much the prefilter took away from every
    /// feature around it (the noise evidence; 2 × 128 + 1 input channels).
    #[arg(long)]
    pub noise_evidence: bool,
    /// Let the model read heights above each clip's own floor (the low percentile of its ankle
    /// heights, as `rigml clean`'s contact detector measures them) instead of above the ground
    /// the encoder assumes.
    #[arg(long)]
    pub floor_relative: bool,
    /// A blending model (cleaning only; with --noise-evidence and --infill 0): instead of
    /// correcting the prefiltered frames, the network says per feature and moment how much of
    /// what the prefilter took away to give back, and learns it from the error at the clip's
    /// own rate. It can only choose between the raw clip and the smoothed one.
    #[arg(long)]
    pub blend: bool,
    /// Continue from a checkpoint or model (its weights, normalisation and step count; the same
    /// --noise-evidence, --floor-relative and --blend).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Replace OUTPUT (and its curves PNG) if they exist.
    #[arg(long)]
    pub force: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Summary {
    model: String,
    curves: String,
    clips: usize,
    skipped: Vec<(String, String)>,
    /// Clean frames at 30 fps, mirrors included (each also has `copies` damaged versions).
    frames: usize,
    val_clips: usize,
    steps: usize,
    seconds_data: f64,
    seconds_training: f64,
    final_train_loss: Option<f64>,
    final_val_loss: Option<f32>,
    final_val_motion: Option<f32>,
    final_val_contacts: Option<f32>,
    /// Every validation: step, total, motion and contact losses.
    val_history: Vec<(usize, f32, f32, f32)>,
}

/// The blocks' dilations (`--dilations`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dilations(pub Vec<usize>);

/// `--dilations`: a comma-separated list of whole numbers from 1 to 64.
fn dilation_list(text: &str) -> std::result::Result<Dilations, String> {
    rigml_motion::model::parse_dilations(text)
        .map(Dilations)
        .ok_or_else(|| format!("{text:?} is not a comma-separated list of whole numbers from 1 to 64"))
}

fn config(args: &Args) -> MotionTrainConfig {
    MotionTrainConfig {
        steps: args.steps,
        batch: args.batch,
        window: args.window,
        hidden: args.hidden,
        dilations: args.dilations.0.clone(),
        learning_rate: args.learning_rate,
        infill: args.infill,
        seed: args.seed,
        val_every: args.val_every,
        checkpoint_every: args.checkpoint_every,
        contact_weight: args.contact_weight,
        min_spread: args.min_spread,
        inputs: Inputs {
            evidence: args.noise_evidence,
            floor: args.floor_relative,
            blend: args.blend,
        },
    }
}

pub fn run(args: &Args) -> Result<String> {
    let config = config(args);
    config.validate()?;
    rigml_learn::training_device_name()?;
    let curves = curves_path(&args.output);
    for path in [&args.output, &curves] {
        if path.exists() && !args.force {
            bail!("{}: exists (use --force to replace it)", path.display());
        }
    }
    let resume = match &args.resume {
        Some(path) => Some(MotionModel::load(path)?),
        None => None,
    };
    let started = Instant::now();
    let dataset = Dataset::open(&args.data)?;
    let loading = bar(2, "{bar:30} {pos}/{len} loading and damaging clips {msg} [{elapsed}]");
    let (sources, mut skipped) = load_split(&dataset, &args.split)?;
    if sources.is_empty() {
        bail!("the {} split holds no humanoid motion clip", args.split);
    }
    let mirror = !args.no_mirror;
    let mut train =
        rigml_motion::data::prepare_with(&sources, usize::from(args.copies), args.seed, mirror, args.blend)?;
    // A clip whose encoding is not finite everywhere (a degenerate chain, a zero-length bone)
    // would make the loss NaN: it is left out and reported.
    train.retain(|p| {
        let finite = p.is_finite();
        if !finite {
            skipped.push((p.name.clone(), "its IK-Rig encoding is not finite (left out)".into()));
        }
        finite
    });
    loading.inc(1);
    let val = match &args.val {
        Some(split) => {
            let (v, _) = load_split(&dataset, split)?;
            Some(rigml_motion::data::prepare_with(
                &v,
                2,
                args.seed ^ 0x7a1,
                false,
                args.blend,
            )?)
        }
        None => None,
    };
    loading.finish_and_clear();
    let seconds_data = started.elapsed().as_secs_f64();
    let mut metadata = HashMap::new();
    metadata.insert(
        "rigml.train.command".into(),
        std::env::args().collect::<Vec<_>>().join(" "),
    );
    metadata.insert("rigml.train.clips".into(), sources.len().to_string());
    let losses = |l: &MotionLosses| format!("{:.4} (motion {:.4} contacts {:.4})", l.total, l.motion, l.contacts);
    let mut bars = Bars::new(args.steps, checkpoint_path(&args.output), losses, losses);
    bars.show(Progress::Member {
        index: 0,
        count: 1,
        seed: args.seed,
    })?;
    let fit_start = Instant::now();
    let (model, history) = rigml_motion::train::train(
        &train,
        val.as_deref(),
        &config,
        resume.as_ref(),
        &metadata,
        &mut |event| bars.show(Progress::Fit { member: 0, event }).map_err(MotionError::from),
    )?;
    bars.clear();
    let seconds_training = fit_start.elapsed().as_secs_f64();
    rigml_io::atomic::write(&args.output, &model.to_bytes()?, args.force)?;
    let series = |v: &[(usize, MotionLosses)]| v.iter().map(|(s, l)| (*s, l.total)).collect::<Vec<_>>();
    let train_curve = rigml_learn::curves::smooth_series(&series(&history.train));
    let val_curve: Vec<(f64, f64)> = history.val.iter().map(|(s, l)| (*s as f64, l.total as f64)).collect();
    rigml_io::atomic::write(
        &curves,
        &rigml_learn::curves::png_series(&train_curve, &val_curve, "loss (motion MSE + contacts BCE)")?,
        args.force,
    )?;
    let last_val = history.val.last().map(|e| e.1);
    let summary = Summary {
        model: args.output.display().to_string(),
        curves: curves.display().to_string(),
        clips: sources.len(),
        skipped,
        frames: train.iter().map(|p| p.len()).sum(),
        val_clips: val.as_ref().map_or(0, Vec::len),
        steps: args.steps,
        seconds_data,
        seconds_training,
        final_train_loss: train_curve.last().map(|e| e.1),
        final_val_loss: last_val.map(|l| l.total),
        final_val_motion: last_val.map(|l| l.motion),
        final_val_contacts: last_val.map(|l| l.contacts),
        val_history: history
            .val
            .iter()
            .map(|(s, l)| (*s, l.total, l.motion, l.contacts))
            .collect(),
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    let mut out = format!(
        "trained the motion model on {} clips ({} frames at 30 fps with their mirrors, {} damaged copies of each): {} steps in {:.1} s (data {:.1} s)\n",
        summary.clips, summary.frames, args.copies, summary.steps, summary.seconds_training, summary.seconds_data
    );
    for (id, why) in &summary.skipped {
        out += &format!("skipped {id}: {why}\n");
    }
    if let Some(t) = summary.final_train_loss {
        out += &format!("final train loss {t:.4}\n");
    }
    if let (Some(v), Some(m), Some(c)) = (
        summary.final_val_loss,
        summary.final_val_motion,
        summary.final_val_contacts,
    ) {
        out += &format!("final val loss {v:.4} (motion {m:.4}, contacts {c:.4})\n");
    }
    out += &format!("wrote {} and {}\n", summary.model, summary.curves);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn default_dilations_are_the_models_and_bad_lists_are_refused() {
        let w = Wrapper::try_parse_from(["t", "-o", "m.safetensors"]).unwrap();
        assert_eq!(w.args.dilations.0, rigml_motion::model::DILATIONS.to_vec());
        let w = Wrapper::try_parse_from(["t", "-o", "m.safetensors", "--dilations", "1,2,4,8,16,32,1"]).unwrap();
        assert_eq!(config(&w.args).dilations, [1, 2, 4, 8, 16, 32, 1]);
        for bad in ["", "1,,2", "0", "65", "1,x"] {
            assert!(
                Wrapper::try_parse_from(["t", "-o", "m", "--dilations", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
