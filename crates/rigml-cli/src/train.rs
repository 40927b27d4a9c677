//! `rigml train --split train [--val val] -o model.safetensors`: train the learned skin-weight
//! model on the skinned characters of a manifest split (rigml-learn does the work).

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rigml_eval::dataset::Dataset;
use rigml_eval::skin_metrics::{rows_of, score, Mode, PreparedGt};
use rigml_learn::infer::{
    search_thresholds, Chosen, KEY_ABSOLUTE, KEY_RELATIVE, KEY_RIGID, KEY_RIGID_SINGLE, KEY_SHARPEN, KEY_SMOOTH,
};
use rigml_learn::sample::{cached_samples, SampleOptions, Samples};
use rigml_learn::train::{train, History, Losses, TrainConfig, TrainEvent};
use rigml_learn::{Learned, ModelFile};
use rigml_skin::SolveOptions;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Train the learned skin-weight model on a manifest split.
#[derive(clap::Args)]
#[command(after_help = "\
Needs a build with training (the `train` cargo feature, which builds burn; the default build
leaves it out): cargo build --release --features train, or
cargo install --path crates/rigml-cli --features train.

Examples:
  rigml train --split train --val val -o skin.safetensors
  rigml train --data ../shared/data --split train --steps 200 -o quick.safetensors --force
  rigml train --split train --val val -o skin.safetensors --resume skin.safetensors.ckpt
  rigml train --split train --val val -o skin.safetensors --members 4 --seed 2
  rigml train --split train --val val --hold-out-fold 2/5 -o cv/fold2.safetensors
                    (without the families of fold 2 of 5: score it with rigml eval --fold 2/5)
Writes OUTPUT, OUTPUT.ckpt every --checkpoint-every steps and a PNG of the loss curves
(OUTPUT with the extension -curves.png). Features are cached in --cache (default
target/rigml-learn-cache), keyed by the data, the sampling options and the feature version.")]
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
    /// Samples per step.
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,
    /// Peak learning rate (Adam, cosine decay).
    #[arg(long, default_value_t = 3e-3)]
    pub learning_rate: f64,
    /// Weight of the LBS deformation loss next to the KL loss.
    #[arg(long, default_value_t = 10.0)]
    pub deform_weight: f32,
    /// Hidden width of the network.
    #[arg(long, default_value_t = 64)]
    pub hidden: usize,
    /// Width of a point encoder's shape code (a PointNet over each vertex's surface patch, fed
    /// to the pair network next to the features; 0 = none, the default model's architecture).
    #[arg(long, default_value_t = 0)]
    pub point_encoder: usize,
    /// Seed of everything random (parameters, batches, vertex subsets, poses).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Networks to train, with seeds SEED, SEED+1, ...; more than one are saved as one ensemble
    /// model whose probabilities are the mean of the members' (steadier than any one seed).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=rigml_learn::model::MAX_MEMBERS as i64))]
    pub members: u16,
    /// Fit on N of the split's characters only, drawn with --seed (the same ones for every
    /// member; for one seed, the N drawn include those drawn for any smaller N): to measure
    /// how much more data would help, as docs/model-card-skin.md's learning curve does.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub characters: Option<u32>,
    /// Leave out the families of fold I of K (a family-grouped cross-validation over the
    /// split; `rigml eval --fold I/K` or `--folds K` scores the model on exactly those): to
    /// measure how the model does on families it has never seen.
    #[arg(long, value_name = "I/K")]
    pub hold_out_fold: Option<rigml_eval::Fold>,
    /// Most vertices sampled per character (and per re-posed copy).
    #[arg(long, default_value_t = 3000)]
    pub max_vertices: usize,
    /// Re-posed copies of every training character (pose augmentation; at most 16).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=16))]
    pub posed_copies: u16,
    /// Stretched copies of every training character: mesh and joints scaled along each axis by
    /// up to 1.25x either way, weights kept (proportion augmentation; at most 16).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=16))]
    pub stretched_copies: u16,
    /// Inference: drop candidates below this share of the row's largest weight (stored in the
    /// model; with --val the value chosen on val replaces it).
    #[arg(long, default_value_t = rigml_learn::infer::DEFAULT_RELATIVE)]
    pub relative: f32,
    /// Inference: drop candidates below this weight (stored in the model).
    #[arg(long, default_value_t = rigml_learn::infer::DEFAULT_ABSOLUTE)]
    pub absolute: f32,
    /// Inference settings are chosen on --val to maximise 2 min(P, R) - L1 among those whose mean
    /// recall (top-4 mode) is at least this (0 = no constraint).
    #[arg(long, default_value_t = 0.0)]
    pub min_recall: f64,
    /// Feature cache folder.
    #[arg(long, default_value = "target/rigml-learn-cache")]
    pub cache: PathBuf,
    /// Do not read or write the feature cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Validate every N steps.
    #[arg(long, default_value_t = 250)]
    pub val_every: usize,
    /// Write OUTPUT.ckpt every N steps (0 = never; with --members, of the network in training).
    #[arg(long, default_value_t = 500)]
    pub checkpoint_every: usize,
    /// Continue from a checkpoint or model (its weights and step count; one network only).
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
    /// Networks in the model (more than 1: an ensemble).
    members: usize,
    /// The device the networks were fitted on (the CPU unless built with a GPU feature).
    device: String,
    characters: usize,
    samples: usize,
    val_samples: usize,
    steps: usize,
    seconds_features: f64,
    seconds_training: f64,
    final_train_loss: Option<f32>,
    final_val_loss: Option<f32>,
    final_val_kl: Option<f32>,
    final_val_deform: Option<f32>,
    mean_coverage_loss: f32,
    /// `(relative, absolute, objective)` chosen on the val split.
    thresholds: Option<(f32, f32, f64)>,
    /// One-ring smoothing rounds chosen on the val split.
    smooth: Option<usize>,
    /// Sharpening exponent chosen on the val split.
    sharpen: Option<f32>,
    /// Rigid-piece share chosen on the val split (above 1: off).
    rigid: Option<f32>,
    /// Rigid share for pieces that hold no joint and one bone runs through, chosen on the val
    /// split (above 1: off).
    rigid_single: Option<f32>,
}

/// Samples of every skinned character of `split`, or of `draw.0` of them drawn with seed
/// `draw.1` ([`draw_characters`]).
fn split_samples(
    dataset: &Dataset,
    split: &str,
    draw: Option<(usize, u64)>,
    hold_out: Option<rigml_eval::Fold>,
    options: &SampleOptions,
    cache: Option<&Path>,
) -> Result<(Samples, Vec<String>)> {
    let mut rows: Vec<_> = match hold_out {
        Some(fold) => dataset.select_fold(Some("character"), Some(split), fold, false)?,
        None => dataset.select(Some("character"), Some(split)),
    };
    if rows.is_empty() {
        bail!("the manifest has no characters in split {split:?}");
    }
    if let Some((count, seed)) = draw {
        if count > rows.len() {
            bail!(
                "--characters {count}: the manifest has only {} characters in split {split:?}",
                rows.len()
            );
        }
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        let keep = draw_characters(&ids, count, seed);
        rows = rows.into_iter().zip(keep).filter(|(_, k)| *k).map(|(r, _)| r).collect();
    }
    let bar = bar(rows.len() as u64, "{bar:30} {pos}/{len} features {msg} [{elapsed}]");
    let mut all = Samples::default();
    let mut ids = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        bar.set_message(row.id.clone());
        let character = rigml_io::load(&row.path).with_context(|| format!("training asset {}", row.id))?;
        let samples = cached_samples(cache, &row.id, &character, options)
            .with_context(|| format!("{}: {}", row.path.display(), row.id))?;
        all.append(samples, i as u32);
        ids.push(row.id.clone());
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok((all, ids))
}

/// Which of `ids` a draw of `count` with `seed` keeps: those whose hash of the seed and the id
/// ranks lowest. A character's rank does not depend on the others, so for one seed a larger
/// draw holds every smaller one, and adding rows to a manifest moves no other row in or out
/// beyond the count.
fn draw_characters(ids: &[&str], count: usize, seed: u64) -> Vec<bool> {
    let rank = |id: &str| rigml_eval::deformation::fnv1a64(format!("{seed}:{id}").as_bytes());
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by_cached_key(|&i| (rank(ids[i]), i));
    let mut keep = vec![false; ids.len()];
    order.iter().take(count).for_each(|&i| keep[i] = true);
    keep
}

/// A progress bar with `template` (the plain style if the template does not parse).
pub(crate) fn bar(len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar
}

/// `OUTPUT` with its extension replaced by `-curves.png`.
pub(crate) fn curves_path(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!("{stem}-curves.png"))
}

/// `OUTPUT.ckpt`: where checkpoints go.
pub(crate) fn checkpoint_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().map(|s| s.to_os_string()).unwrap_or_default();
    name.push(".ckpt");
    output.with_file_name(name)
}

/// The event handler of a training loop: moves `progress` and shows the step's losses
/// (`step_text`) beside the last validation's (`val_text`); writes checkpoints to `checkpoint`.
pub(crate) fn events<'a, L>(
    progress: &'a ProgressBar,
    checkpoint: PathBuf,
    step_text: impl Fn(&L) -> String + 'a,
    val_text: impl Fn(&L) -> String + 'a,
) -> impl FnMut(TrainEvent<'_, L>) -> Result<(), rigml_learn::LearnError> + 'a {
    let mut last_val = String::new();
    move |event| {
        match event {
            TrainEvent::Step { step, losses, .. } => {
                progress.set_position(step as u64);
                progress.set_message(format!("{}{last_val}", step_text(&losses)));
            }
            TrainEvent::Val { losses, .. } => last_val = format!(" | val {}", val_text(&losses)),
            TrainEvent::Checkpoint { model, .. } => write_checkpoint(&checkpoint, model)?,
        }
        Ok(())
    }
}

/// Write a training loop's checkpoint to `path` (atomically, replacing the last one).
pub(crate) fn write_checkpoint(path: &Path, model: &rigml_learn::ModelFile) -> Result<(), rigml_learn::LearnError> {
    let bytes = model.to_bytes()?;
    rigml_io::atomic::write(path, &bytes, true).map_err(|e| rigml_learn::LearnError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e.to_string()),
    })
}

/// Load, extract, train, write; returns the summary.
pub fn run(args: &Args) -> Result<String> {
    if args.max_vertices == 0 {
        bail!("--max-vertices must be at least 1");
    }
    for (flag, value) in [("--relative", args.relative), ("--absolute", args.absolute)] {
        if !(0.0..1.0).contains(&value) {
            bail!("{flag} must lie in [0, 1), got {value}");
        }
    }
    if !(0.0..=1.0).contains(&args.min_recall) {
        bail!("--min-recall must lie in [0, 1], got {}", args.min_recall);
    }
    if args.resume.is_some() && args.members > 1 {
        bail!(
            "--resume continues one network; it cannot be combined with --members {}",
            args.members
        );
    }
    let config = TrainConfig {
        steps: args.steps,
        batch: args.batch,
        learning_rate: args.learning_rate,
        deform_weight: args.deform_weight,
        hidden: args.hidden,
        patch: args.point_encoder,
        seed: args.seed,
        val_every: args.val_every,
        checkpoint_every: args.checkpoint_every,
    };
    config.validate()?;
    // Before any work: a build without training, or a GPU build on a machine without a usable
    // GPU, stops here.
    let device = rigml_learn::training_device_name()?;
    if args.output.exists() && !args.force {
        bail!("{}: exists (use --force to replace it)", args.output.display());
    }
    let curves = curves_path(&args.output);
    if curves.exists() && !args.force {
        bail!("{}: exists (use --force to replace it)", curves.display());
    }
    let resume = match &args.resume {
        Some(path) => Some(ModelFile::load(path)?),
        None => None,
    };
    let dataset = Dataset::open(&args.data)?;
    let cache = (!args.no_cache).then_some(args.cache.as_path());
    let mut metadata = HashMap::new();
    metadata.insert(
        "rigml.train.command".to_string(),
        std::env::args().collect::<Vec<_>>().join(" "),
    );
    metadata.insert("rigml.train.split".into(), args.split.clone());
    metadata.insert(KEY_RELATIVE.into(), args.relative.to_string());
    metadata.insert(KEY_ABSOLUTE.into(), args.absolute.to_string());

    let mut members = Vec::new();
    let mut runs = Vec::new();
    for member in 0..usize::from(args.members) {
        let seed = args.seed.wrapping_add(member as u64);
        let (run, model) = train_member(
            args,
            &dataset,
            cache,
            TrainConfig { seed, ..config.clone() },
            resume.as_ref(),
            &metadata,
            member,
        )?;
        members.push(model);
        runs.push(run);
    }
    let first = &runs[0];
    let mut model = if members.len() == 1 {
        members.remove(0)
    } else {
        metadata.insert("rigml.train.assets".into(), first.ids.join(","));
        metadata.insert(rigml_learn::train::KEY_STEP.into(), args.steps.to_string());
        ModelFile::ensemble(&members, metadata)?
    };
    let histories: Vec<History> = runs.iter().map(|r| r.history.clone()).collect();
    let chosen = match &args.val {
        Some(split) => Some(choose_thresholds(&dataset, split, args.min_recall, &mut model)?),
        None => None,
    };
    rigml_io::atomic::write(&args.output, &model.to_bytes()?, args.force)?;
    rigml_io::atomic::write(&curves, &rigml_learn::curves::png(&histories)?, args.force)?;
    let summary = summarise(args, &curves, first);
    let summary = Summary {
        device: device.clone(),
        seconds_features: runs.iter().map(|r| r.seconds_features).sum(),
        seconds_training: runs.iter().map(|r| r.seconds_training).sum(),
        thresholds: chosen.map(|c| (c.relative, c.absolute, c.objective)),
        smooth: chosen.map(|c| c.smooth),
        sharpen: chosen.map(|c| c.sharpen),
        rigid: chosen.map(|c| c.rigid),
        rigid_single: chosen.map(|c| c.rigid_single),
        ..summary
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trained {} on {} characters ({} samples, {} val samples) on {}: {} steps in {:.1} s (features {:.1} s)",
        if summary.members > 1 {
            format!("{} networks", summary.members)
        } else {
            "one network".to_string()
        },
        summary.characters,
        summary.samples,
        summary.val_samples,
        summary.device,
        summary.steps,
        summary.seconds_training,
        summary.seconds_features
    );
    let _ = writeln!(
        out,
        "GT mass outside the {} candidates (mean over characters): {:.4}",
        rigml_learn::features::CANDIDATES,
        summary.mean_coverage_loss
    );
    if let Some(t) = summary.final_train_loss {
        let _ = writeln!(
            out,
            "final train loss (last {} steps): {t:.4}",
            rigml_learn::curves::SMOOTH
        );
    }
    if let (Some(v), Some(kl), Some(d)) = (summary.final_val_loss, summary.final_val_kl, summary.final_val_deform) {
        let _ = writeln!(out, "final val loss {v:.4} (kl {kl:.4}, deform {d:.5})");
    }
    if let Some(c) = chosen {
        let share = |s: f32| {
            if s > 1.0 {
                "off".to_string()
            } else {
                format!("from a {s} share")
            }
        };
        let _ = writeln!(
            out,
            "inference settings chosen on {}: smooth {} rounds, sharpen {}, relative {}, absolute {}, rigid pieces {}, single-bone pieces {} (mean P {:.4}, R {:.4}, L1 {:.4}; 2 min(P, R) - L1 = {:.4}{})",
            args.val.as_deref().unwrap_or("val"),
            c.smooth,
            c.sharpen,
            c.relative,
            c.absolute,
            share(c.rigid),
            // A single-bone piece needs the lower of the two shares (rigml_learn::infer::make_rigid).
            share(c.rigid_single.min(c.rigid)),
            c.means[0],
            c.means[1],
            c.means[2],
            c.objective,
            if c.recall_met { "" } else { "; no setting reached --min-recall" }
        );
    }
    let _ = writeln!(out, "wrote {} and {}", summary.model, summary.curves);
    Ok(out)
}

/// What training one network left behind (the facts the summary needs, not the samples).
struct Run {
    ids: Vec<String>,
    samples: usize,
    val_samples: usize,
    mean_coverage_loss: f32,
    history: History,
    seconds_features: f64,
    seconds_training: f64,
}

/// Sample the data with `config.seed` and train one network (member `member` of
/// `args.members`), with its progress bar and checkpoints.
fn train_member(
    args: &Args,
    dataset: &Dataset,
    cache: Option<&Path>,
    config: TrainConfig,
    resume: Option<&ModelFile>,
    metadata: &HashMap<String, String>,
    member: usize,
) -> Result<(Run, ModelFile)> {
    let options = SampleOptions {
        max_vertices: args.max_vertices,
        posed_copies: usize::from(args.posed_copies),
        stretched_copies: usize::from(args.stretched_copies),
        seed: config.seed,
    };
    let started = Instant::now();
    let draw = args.characters.map(|n| (n as usize, args.seed));
    let (train_samples, ids) = split_samples(dataset, &args.split, draw, args.hold_out_fold, &options, cache)?;
    let val_samples = match &args.val {
        Some(split) => {
            let val_options = SampleOptions {
                posed_copies: 0,
                stretched_copies: 0,
                ..options
            };
            Some(split_samples(dataset, split, None, None, &val_options, cache)?.0)
        }
        None => None,
    };
    let seconds_features = started.elapsed().as_secs_f64();
    let mut metadata = metadata.clone();
    metadata.insert("rigml.train.assets".into(), ids.join(","));
    if let Some(fold) = args.hold_out_fold {
        metadata.insert("rigml.train.hold_out_fold".into(), fold.to_string());
    }
    let label = if args.members > 1 {
        format!("member {}/{} (seed {}) ", member + 1, args.members, config.seed)
    } else {
        String::new()
    };
    let progress = bar(
        args.steps as u64,
        "{prefix}{bar:30} {pos}/{len} {msg} [{elapsed}<{eta}]",
    );
    progress.set_prefix(label);
    let trained_at = Instant::now();
    let mut on_event = events(
        &progress,
        checkpoint_path(&args.output),
        |l: &Losses| format!("loss {:.4} (kl {:.4} deform {:.4})", l.total, l.kl, l.deform),
        |l: &Losses| format!("{:.4} (kl {:.4} deform {:.4})", l.total, l.kl, l.deform),
    );
    let (model, history) = train(
        &train_samples,
        val_samples.as_ref(),
        &config,
        resume,
        &metadata,
        &mut on_event,
    )?;
    progress.finish_and_clear();
    let coverage = &train_samples.coverage_loss;
    let run = Run {
        ids,
        samples: train_samples.len(),
        val_samples: val_samples.as_ref().map_or(0, Samples::len),
        mean_coverage_loss: coverage.iter().sum::<f32>() / coverage.len().max(1) as f32,
        history,
        seconds_features,
        seconds_training: trained_at.elapsed().as_secs_f64(),
    };
    Ok((run, model))
}

/// Pick the inference settings (thresholds, smoothing, sharpening, rigid pieces) that maximise
/// `2 min(P, R) - L1` (METRICS.md §2, top-4 mode) over the skinned characters of `split` while
/// keeping mean recall >= `min_recall` where possible, and store them in `model`.
fn choose_thresholds(dataset: &Dataset, split: &str, min_recall: f64, model: &mut ModelFile) -> Result<Chosen> {
    let learned = Learned::new(model.clone());
    let options = SolveOptions::default();
    let mut cases = Vec::new();
    let mut truths = Vec::new();
    let rows: Vec<_> = dataset
        .rows
        .iter()
        .filter(|r| r.kind == "character" && r.split == split)
        .collect();
    let bar = bar(rows.len() as u64, "{bar:30} {pos}/{len} thresholds {msg} [{elapsed}]");
    for row in rows {
        bar.set_message(row.id.clone());
        let character = rigml_io::load(&row.path).with_context(|| format!("validation asset {}", row.id))?;
        let Some(gt) = &character.skin else {
            bar.inc(1);
            continue;
        };
        let truth = PreparedGt::new(&rows_of(gt));
        if truth.is_data_issue() {
            bar.inc(1);
            continue;
        }
        cases.push(
            learned
                .score(&character.mesh, &character.skeleton)
                .map_err(|e| anyhow::anyhow!("{}: learned: {e}", row.path.display()))?,
        );
        truths.push(truth);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let score = |i: usize, skin: &rigml_core::Skin| -> [f64; 3] {
        match truths.get(i).map(|gt| score(&rows_of(skin), gt, Mode::Top4)) {
            Some(Ok(s)) => [s.precision, s.recall, s.l1],
            _ => [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::INFINITY],
        }
    };
    let best = search_thresholds(&learned, &cases, &options, min_recall, &score)?;
    model.metadata.insert(KEY_RELATIVE.into(), best.relative.to_string());
    model.metadata.insert(KEY_ABSOLUTE.into(), best.absolute.to_string());
    model.metadata.insert(KEY_SMOOTH.into(), best.smooth.to_string());
    model.metadata.insert(KEY_SHARPEN.into(), best.sharpen.to_string());
    model.metadata.insert(KEY_RIGID.into(), best.rigid.to_string());
    model
        .metadata
        .insert(KEY_RIGID_SINGLE.into(), best.rigid_single.to_string());
    model.metadata.insert("rigml.infer.chosen_on".into(), split.to_string());
    Ok(best)
}

/// The summary of a training (the first member's samples and losses for an ensemble).
fn summarise(args: &Args, curves: &Path, run: &Run) -> Summary {
    let history = &run.history;
    let last_val = history.val.last().map(|e| e.1);
    Summary {
        model: args.output.display().to_string(),
        curves: curves.display().to_string(),
        members: usize::from(args.members),
        device: String::new(),
        characters: run.ids.len(),
        samples: run.samples,
        val_samples: run.val_samples,
        steps: args.steps,
        seconds_features: 0.0,
        seconds_training: 0.0,
        final_train_loss: rigml_learn::curves::smoothed(history).last().map(|e| e.1 as f32),
        final_val_loss: last_val.map(|l| l.total),
        final_val_kl: last_val.map(|l| l.kl),
        final_val_deform: last_val.map(|l| l.deform),
        mean_coverage_loss: run.mean_coverage_loss,
        thresholds: None,
        smooth: None,
        sharpen: None,
        rigid: None,
        rigid_single: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draw_keeps_its_count_and_holds_every_smaller_draw_of_its_seed() {
        let ids: Vec<String> = (0..40).map(|i| format!("asset-{i}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut previous = vec![false; ids.len()];
        for count in [0, 1, 5, 20, 40] {
            let keep = draw_characters(&ids, count, 7);
            assert_eq!(keep.iter().filter(|k| **k).count(), count);
            assert!(previous.iter().zip(&keep).all(|(p, k)| !p || *k), "draw of {count}");
            assert_eq!(draw_characters(&ids, count, 7), keep, "the same seed draws the same");
            previous = keep;
        }
        assert_ne!(draw_characters(&ids, 20, 7), draw_characters(&ids, 20, 8));
        // A row added to the list leaves the others' ranks alone.
        let mut more = ids.clone();
        more.insert(3, "asset-new");
        let keep = draw_characters(&more, 41, 7);
        assert!(keep.iter().all(|k| *k));
        let small = draw_characters(&ids, 10, 7);
        let grown = draw_characters(&more, 11, 7);
        let kept: Vec<&str> = ids.iter().zip(&small).filter(|(_, k)| **k).map(|(i, _)| *i).collect();
        assert!(kept.iter().all(|id| grown[more.iter().position(|m| m == id).unwrap()]));
    }
}
