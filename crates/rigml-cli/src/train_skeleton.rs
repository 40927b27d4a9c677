//! `rigml train-skeleton --split train [--val val] -o skel.safetensors`: train the learned
//! skeleton predictor (joint votes + clustering + spanning tree) on the characters of a
//! manifest split, and choose its clustering settings on --val (rigml-learn does the work).

use crate::train::{bar, checkpoint_path, curves_path, events};
use anyhow::{bail, Context, Result};
use rigml_eval::dataset::{AssetRow, Dataset};
use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet};
use rigml_learn::skeleton::data::{character_shapes, Augment, Shape};
use rigml_learn::skeleton::joints::{Modes, Settings, Tree};
use rigml_learn::skeleton::train::{train, Config, History, Losses};
use rigml_learn::skeleton::{net, Predictor, Votes};
use rigml_learn::ModelFile;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Train the learned skeleton predictor on a manifest split.
#[derive(clap::Args)]
#[command(after_help = "\
Needs a build with training (the `train` cargo feature, which builds burn; the default build
leaves it out): cargo build --release --features train, or
cargo install --path crates/rigml-cli --features train.

Examples:
  rigml train-skeleton --split train --val val -o skel.safetensors
  rigml train-skeleton --data ../shared/data --steps 200 --seed 2 -o quick.safetensors --force
  rigml train-skeleton --val val -o skel.safetensors --resume skel.safetensors.ckpt --force
Writes OUTPUT, OUTPUT.ckpt every --checkpoint-every steps and a PNG of the loss curves
(OUTPUT with the extension replaced by -curves.png). With --val, the clustering settings
(mean-shift bandwidth, merge radius, minimum vote mass, confidence power) are chosen by the
mean CD-J2J plus 0.02 x the mean relative joint-count error on that split's characters and
stored in the model.")]
pub struct Args {
    /// The data folder holding manifest.tsv, or the manifest itself.
    #[arg(long, default_value = "../shared/data")]
    pub data: PathBuf,
    /// Split to fit on.
    #[arg(long, default_value = "train", value_parser = ["train", "val", "test"])]
    pub split: String,
    /// Split to validate on and to choose the clustering settings on (never test).
    #[arg(long, value_parser = ["train", "val"])]
    pub val: Option<String>,
    /// Which --val characters the settings are chosen on: the non-humanoids (the learned
    /// placer's job under `--template detect`) or all.
    #[arg(long, default_value = "non-humanoid", value_parser = ["non-humanoid", "all"])]
    pub choose_on: String,
    /// The model file to write (.safetensors).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Optimiser steps.
    #[arg(long, default_value_t = 1500)]
    pub steps: usize,
    /// Point clouds per step.
    #[arg(long, default_value_t = 4)]
    pub batch: usize,
    /// Peak learning rate (Adam, cosine decay).
    #[arg(long, default_value_t = 2e-3)]
    pub learning_rate: f64,
    /// Hidden width of the network.
    #[arg(long, default_value_t = 96)]
    pub hidden: usize,
    /// Seed of everything random (parameters, batches, samples, augmentation).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Randomly augmented copies per training character (scaled, mirrored, re-posed; at most
    /// 64: every copy is held in memory).
    #[arg(long, default_value_t = 2)]
    pub copies: usize,
    /// Do not add the mirror image of every training character.
    #[arg(long)]
    pub no_mirror: bool,
    /// Largest relative per-axis scale change of the augmented copies.
    #[arg(long, default_value_t = 0.15)]
    pub scale: f32,
    /// Largest joint rotation (degrees) of the re-posed copies (0 = no re-posing).
    #[arg(long, default_value_t = 20.0)]
    pub pose_degrees: f32,
    /// Validate every N steps.
    #[arg(long, default_value_t = 100)]
    pub val_every: usize,
    /// Write OUTPUT.ckpt every N steps (0 = never).
    #[arg(long, default_value_t = 250)]
    pub checkpoint_every: usize,
    /// Continue from a checkpoint or model (its weights and step count).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Replace OUTPUT (and its curves PNG) if they exist.
    #[arg(long)]
    pub force: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Most augmented copies per character: each is a full point cloud held in memory for the whole
/// run, so more would exhaust memory long before it helped.
const MAX_COPIES: usize = 64;

#[derive(Serialize)]
struct Summary {
    model: String,
    curves: String,
    /// The device the network was fitted on (the CPU unless built with a GPU feature).
    device: String,
    characters: usize,
    clouds: usize,
    val_clouds: usize,
    steps: usize,
    seconds_data: f64,
    seconds_training: f64,
    seconds_settings: f64,
    final_train_loss: Option<f32>,
    final_val_loss: Option<f32>,
    /// Mean L1 offset error on val (normalised units).
    final_val_offset: Option<f32>,
    /// Chosen settings and the mean CD-J2J they give on the --val characters chosen on.
    settings: Option<ChosenSettings>,
    skipped: Vec<String>,
}

#[derive(Serialize, Clone, Copy)]
struct ChosenSettings {
    bandwidth: f32,
    merge: f32,
    min_mass: f32,
    power: f32,
    characters: usize,
    mean_cd_j2j: f64,
    /// Mean of `|n_pred - n_gt| / n_gt` with the chosen settings.
    mean_relative_count_error: f64,
    mean_cd_j2j_default_settings: f64,
}

fn is_humanoid(row: &AssetRow) -> bool {
    row.notes
        .rsplit("cat=")
        .next()
        .is_some_and(|c| c.starts_with("humanoid") || c.starts_with("mech-humanoid"))
}

fn characters<'a>(dataset: &'a Dataset, split: &str) -> Result<Vec<&'a AssetRow>> {
    let rows: Vec<_> = dataset
        .rows
        .iter()
        .filter(|r| r.kind == "character" && r.split == split)
        .collect();
    if rows.is_empty() {
        bail!("the manifest has no characters in split {split:?}");
    }
    Ok(rows)
}

/// Clouds of every character of `rows` (characters without a skeleton are skipped and named).
fn clouds(rows: &[&AssetRow], augment: &Augment, what: &str) -> Result<(Vec<Shape>, Vec<String>, Vec<String>)> {
    let bar = bar(
        rows.len() as u64,
        &format!("{{bar:30}} {{pos}}/{{len}} {what} {{msg}} [{{elapsed}}]"),
    );
    let mut all = Vec::new();
    let mut ids = Vec::new();
    let mut skipped = Vec::new();
    for row in rows {
        bar.set_message(row.id.clone());
        let character = rigml_io::load(&row.path).with_context(|| format!("{}: {}", row.path.display(), row.id))?;
        if character.skeleton.is_empty() {
            skipped.push(format!("{} (no skeleton)", row.id));
            bar.inc(1);
            continue;
        }
        let salt = row.id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        let shapes = character_shapes(&character, augment, salt)
            .with_context(|| format!("{}: {}", row.path.display(), row.id))?;
        all.extend(shapes);
        ids.push(row.id.clone());
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok((all, ids, skipped))
}

/// CD-J2J of a predicted tree against a character's GT skeleton (METRICS.md §1 units).
fn cd_j2j(tree: &Tree, gt: &JointSet, centre: glam::Vec3, scale: f32) -> Option<f64> {
    let pred = JointSet {
        positions: tree.positions.iter().map(|p| (*p - centre) * scale).collect(),
        parents: tree.parents.clone(),
    };
    score(&pred, gt).map(|s| s.cd_j2j)
}

/// Weight of the relative joint-count error `|n_pred - n_gt| / n_gt` beside CD-J2J when the
/// clustering settings are chosen. CD-J2J alone rewards ever more joints (every extra joint can
/// only bring a GT joint closer to its nearest prediction), which gave rigs of 100+ joints on a
/// 6-joint fish; at 0.02 a skeleton with twice the artist's joints must win 0.02 of CD-J2J to be
/// preferred. A rigger's choice, not tuned on test.
const COUNT_WEIGHT: f64 = 0.02;

/// Choose the clustering settings on `rows` by mean CD-J2J plus [`COUNT_WEIGHT`] times the mean
/// relative joint-count error, store them in `model`.
fn choose_settings(rows: &[&AssetRow], model: &mut ModelFile) -> Result<ChosenSettings> {
    let predictor = Predictor::new(model.clone())?;
    let loading = bar(rows.len() as u64, "{bar:30} {pos}/{len} settings {msg} [{elapsed}]");
    let mut cases: Vec<(Votes, JointSet, glam::Vec3, f32)> = Vec::new();
    for row in rows {
        loading.set_message(row.id.clone());
        let character = rigml_io::load(&row.path).with_context(|| format!("{}: {}", row.path.display(), row.id))?;
        let Some((centre, scale)) = normalisation(&character.mesh.positions) else {
            loading.inc(1);
            continue;
        };
        if character.skeleton.is_empty() {
            loading.inc(1);
            continue;
        }
        let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
        let votes = predictor
            .votes(&character.mesh.positions, &character.mesh.triangles)
            .with_context(|| format!("{}: {}", row.path.display(), row.id))?;
        cases.push((votes, gt, centre, scale));
        loading.inc(1);
    }
    loading.finish_and_clear();
    if cases.is_empty() {
        bail!("no character to choose the clustering settings on");
    }
    // (objective, mean CD-J2J, mean relative joint-count error) of one setting.
    let mean = |s: &Settings, modes: &[Modes]| -> (f64, f64, f64) {
        let (cd, count) = cases
            .iter()
            .zip(modes)
            .map(|((votes, gt, centre, scale), m)| {
                let tree = Predictor::tree_from(votes, m, s);
                let cd = cd_j2j(&tree, gt, *centre, *scale).unwrap_or(1.0);
                let n_gt = gt.positions.len().max(1) as f64;
                (cd, (tree.positions.len() as f64 - n_gt).abs() / n_gt)
            })
            .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d));
        let n = cases.len() as f64;
        let (cd, count) = (cd / n, count / n);
        (cd + COUNT_WEIGHT * count, cd, count)
    };
    let modes_for = |bandwidth: f32, power: f32| -> Vec<Modes> {
        cases
            .iter()
            .map(|(votes, ..)| Modes::new(&votes.votes, bandwidth, power))
            .collect()
    };
    let base = Settings::default();
    let default_score = mean(&base, &modes_for(base.bandwidth, base.power));
    let mut best = (default_score, base);
    const BANDWIDTHS: [f32; 6] = [0.01, 0.015, 0.02, 0.03, 0.045, 0.06];
    const POWERS: [f32; 3] = [1.0, 2.0, 4.0];
    let search = bar(
        (BANDWIDTHS.len() * POWERS.len()) as u64,
        "{bar:30} {pos}/{len} settings search [{elapsed}]",
    );
    for bandwidth in BANDWIDTHS {
        for power in POWERS {
            let modes = modes_for(bandwidth, power);
            for merge in [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0] {
                for min_mass in [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064] {
                    let s = Settings {
                        bandwidth,
                        merge,
                        min_mass,
                        power,
                        ..base
                    };
                    let m = mean(&s, &modes);
                    if m.0 < best.0 .0 {
                        best = (m, s);
                    }
                }
            }
            search.inc(1);
        }
    }
    search.finish_and_clear();
    let ((_, score, count_error), s) = best;
    for (k, v) in s.to_metadata() {
        model.metadata.insert(k, v);
    }
    Ok(ChosenSettings {
        bandwidth: s.bandwidth,
        merge: s.merge,
        min_mass: s.min_mass,
        power: s.power,
        characters: cases.len(),
        mean_cd_j2j: score,
        mean_relative_count_error: count_error,
        mean_cd_j2j_default_settings: default_score.1,
    })
}

/// Load, augment, train, choose settings, write; returns the summary.
pub fn run(args: &Args) -> Result<String> {
    let config = Config {
        steps: args.steps,
        batch: args.batch,
        learning_rate: args.learning_rate,
        hidden: args.hidden,
        seed: args.seed,
        val_every: args.val_every,
        checkpoint_every: args.checkpoint_every,
    };
    config.validate()?;
    // Before any work: a build without training, or a GPU build on a machine without a usable
    // GPU, stops here.
    let device = rigml_learn::training_device_name()?;
    if args.copies > MAX_COPIES {
        bail!(
            "--copies must be at most {MAX_COPIES} (every copy is held in memory), got {}",
            args.copies
        );
    }
    if !(0.0..0.9).contains(&args.scale) {
        bail!("--scale must lie in [0, 0.9), got {}", args.scale);
    }
    if !(0.0..=90.0).contains(&args.pose_degrees) {
        bail!("--pose-degrees must lie in [0, 90], got {}", args.pose_degrees);
    }
    if args.output.exists() && !args.force {
        bail!("{}: exists (use --force to replace it)", args.output.display());
    }
    let curves = curves_path(&args.output);
    if curves.exists() && !args.force {
        bail!("{}: exists (use --force to replace it)", curves.display());
    }
    let resume = match &args.resume {
        Some(path) => {
            let bytes = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
            Some(net::from_bytes(&bytes, &path.display().to_string())?)
        }
        None => None,
    };
    let dataset = Dataset::open(&args.data)?;
    let augment = Augment {
        mirror: !args.no_mirror,
        copies: args.copies,
        scale: args.scale,
        pose_angle: args.pose_degrees.to_radians(),
        seed: args.seed,
    };
    let started = Instant::now();
    let train_rows = characters(&dataset, &args.split)?;
    let (train_clouds, ids, mut skipped) = clouds(&train_rows, &augment, "training clouds")?;
    let val_rows = match &args.val {
        Some(split) => characters(&dataset, split)?,
        None => Vec::new(),
    };
    let (val_clouds, _, val_skipped) = if val_rows.is_empty() {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        clouds(&val_rows, &Augment::none(args.seed), "val clouds")?
    };
    skipped.extend(val_skipped);
    let seconds_data = started.elapsed().as_secs_f64();

    let mut metadata = HashMap::new();
    metadata.insert(
        "rigml.skeleton.train.command".to_string(),
        std::env::args().collect::<Vec<_>>().join(" "),
    );
    metadata.insert("rigml.skeleton.train.split".into(), args.split.clone());
    metadata.insert("rigml.skeleton.train.assets".into(), ids.join(","));
    metadata.insert("rigml.skeleton.train.augment".into(), format!("{augment:?}"));
    let progress = bar(args.steps as u64, "{bar:30} {pos}/{len} {msg} [{elapsed}<{eta}]");
    let trained_at = Instant::now();
    let mut on_event = events(
        &progress,
        checkpoint_path(&args.output),
        |l: &Losses| format!("loss {:.4} (offset {:.4} conf {:.4})", l.total, l.offset, l.confidence),
        |l: &Losses| format!("{:.4} (offset {:.4})", l.total, l.offset),
    );
    let (mut model, history) = train(
        &train_clouds,
        &val_clouds,
        &config,
        resume.as_ref(),
        &metadata,
        &mut on_event,
    )?;
    progress.finish_and_clear();
    let seconds_training = trained_at.elapsed().as_secs_f64();
    let settings_at = Instant::now();
    let chosen = if val_rows.is_empty() {
        None
    } else {
        let rows: Vec<&AssetRow> = val_rows
            .iter()
            .copied()
            .filter(|r| args.choose_on == "all" || !is_humanoid(r))
            .collect();
        model.metadata.insert(
            "rigml.skeleton.settings.chosen_on".into(),
            format!("{} ({})", args.val.as_deref().unwrap_or(""), args.choose_on),
        );
        Some(choose_settings(&rows, &mut model)?)
    };
    let seconds_settings = settings_at.elapsed().as_secs_f64();
    rigml_io::atomic::write(&args.output, &model.to_bytes()?, args.force)?;
    rigml_io::atomic::write(&curves, &curves_png(&history)?, args.force)?;
    let last_val = history.val.last().map(|e| e.1);
    let summary = Summary {
        model: args.output.display().to_string(),
        curves: curves.display().to_string(),
        device: device.clone(),
        characters: ids.len(),
        clouds: train_clouds.len(),
        val_clouds: val_clouds.len(),
        steps: args.steps,
        seconds_data,
        seconds_training,
        seconds_settings,
        final_train_loss: rigml_learn::curves::smooth_series(&totals(&history.train))
            .last()
            .map(|e| e.1 as f32),
        final_val_loss: last_val.map(|l| l.total),
        final_val_offset: last_val.map(|l| l.offset),
        settings: chosen,
        skipped,
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trained on {} characters ({} clouds, {} val clouds) on {}: {} steps in {:.1} s (data {:.1} s, settings {:.1} s)",
        summary.characters,
        summary.clouds,
        summary.val_clouds,
        summary.device,
        summary.steps,
        summary.seconds_training,
        summary.seconds_data,
        summary.seconds_settings
    );
    if let Some(t) = summary.final_train_loss {
        let _ = writeln!(
            out,
            "final train loss (last {} steps): {t:.4}",
            rigml_learn::curves::SMOOTH
        );
    }
    if let (Some(v), Some(o)) = (summary.final_val_loss, summary.final_val_offset) {
        let _ = writeln!(out, "final val loss {v:.4} (offset L1 {o:.4})");
    }
    if let Some(c) = chosen {
        let _ = writeln!(
            out,
            "clustering chosen on {} {} characters: bandwidth {}, merge {}, min mass {}, power {} -> mean CD-J2J {:.4}, relative joint-count error {:.3} (CD-J2J with defaults {:.4})",
            c.characters,
            args.choose_on,
            c.bandwidth,
            c.merge,
            c.min_mass,
            c.power,
            c.mean_cd_j2j,
            c.mean_relative_count_error,
            c.mean_cd_j2j_default_settings
        );
    }
    for s in &summary.skipped {
        let _ = writeln!(out, "skipped {s}");
    }
    let _ = writeln!(out, "wrote {} and {}", summary.model, summary.curves);
    Ok(out)
}

fn totals(series: &[(usize, rigml_learn::skeleton::train::Losses)]) -> Vec<(usize, f32)> {
    series.iter().map(|(s, l)| (*s, l.total)).collect()
}

fn curves_png(history: &History) -> Result<Vec<u8>> {
    let train = rigml_learn::curves::smooth_series(&totals(&history.train));
    let val: Vec<(f64, f64)> = history
        .val
        .iter()
        .map(|(s, l)| (*s as f64, f64::from(l.total)))
        .collect();
    Ok(rigml_learn::curves::png_series(
        &train,
        &val,
        "10·L1(offset) + BCE(conf) + 0.2·L1(log spacing)",
    )?)
}
