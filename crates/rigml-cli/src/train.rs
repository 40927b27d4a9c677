//! `rigml train --split train [--val val] -o model.safetensors`: train the learned skin-weight
//! model on the skinned characters of a manifest split. The recipe is the library's
//! (`rigml::train`); this module maps the flags onto it, draws its progress bars and writes the
//! model, its curves and the summary.

use crate::arg_numbers::{non_negative, positive, unit_interval};
use anyhow::{bail, Result};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use rigml::train::{train_skin, Progress, SkinRecipe, TrainedSkin};
use rigml_eval::dataset::Dataset;
use rigml_learn::sample::SampleOptions;
use rigml_learn::train::{History, Losses, TrainConfig, TrainEvent};
use rigml_learn::ModelFile;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

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
  rigml train --split train --val val -o skin.safetensors --members 5 --jobs 2
                    (two networks at once: the same model in about half the time on two cores)
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
    #[arg(long, default_value_t = 3e-3, value_parser = positive::<f64>)]
    pub learning_rate: f64,
    /// Weight of the LBS deformation loss next to the KL loss.
    #[arg(long, default_value_t = 10.0, value_parser = non_negative::<f32>)]
    pub deform_weight: f32,
    /// Hidden width of the network.
    #[arg(long, default_value_t = 64)]
    pub hidden: usize,
    /// Width of a point encoder's shape code (a PointNet over each vertex's surface patch, fed
    /// to the pair network next to the features; 0 = none, the default model's architecture).
    #[arg(long, default_value_t = 0)]
    pub point_encoder: usize,
    /// Let the network correct the bone-heat solution rather than score from scratch: its logits
    /// add to a learnt multiple of ln(heat share), so that where it has learnt nothing for a
    /// vertex the weights fall back to heat's (the model remembers it; inference needs no flag).
    #[arg(long)]
    pub prior_residual: bool,
    /// Let the network correct geodesic voxel binding (needs --feature-version 5 or 6): its
    /// logits add a learnt multiple of ln(voxel share), so that where it has learnt nothing the
    /// weights fall back to voxel binding's (with --prior-residual too, to both).
    #[arg(long)]
    pub voxel_prior_residual: bool,
    /// With --prior-residual or --voxel-prior-residual: keep the prior's multiple at 1 instead
    /// of learning it, so that where the network's correction is small the weights are the
    /// geometric solver's own (a learnt multiple settles near 0.25: a flattened row).
    #[arg(long)]
    pub fixed_prior_scale: bool,
    /// With --voxel-prior-residual and --members 2 or more, the model falls back toward voxel
    /// binding's own weights where its networks disagree and voxel binding and bone heat agree
    /// (chosen by family cross-validation; docs/model-card-skin.md). This flag leaves it out
    /// (the networks' mean everywhere).
    #[arg(long)]
    pub no_geometry_fallback: bool,
    /// Draw batches family by family (a family, then one of its samples). STRENGTH 1 (the
    /// flag alone): a family of 35 characters weighs no more than a family of one; 0.5: a
    /// family of n samples weighs sqrt(n); 0: every sample the same (as without the flag).
    /// Families as in `rigml eval --folds`: the two folders below `characters/`.
    #[arg(long, value_name = "STRENGTH", num_args = 0..=1, default_missing_value = "1", value_parser = unit_interval::<f32>)]
    pub balance_families: Option<f32>,
    /// Seed of everything random (parameters, batches, vertex subsets, poses).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Networks to train, with seeds SEED, SEED+1, ...; more than one are saved as one ensemble
    /// model whose probabilities are the mean of the members' (steadier than any one seed).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=rigml_learn::model::MAX_MEMBERS as i64))]
    pub members: u16,
    /// Networks fitted at once, each on a thread of its own (0 = one per CPU core, at most
    /// --members; in a GPU build 0 means 1). The model is the same for any N; each network at
    /// work holds its samples in memory (about 1.6 GB each for the embedded model's recipe).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub jobs: usize,
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
    /// Subdivided copies of every training character: each triangle split in four, weights
    /// interpolated at the new vertices (density augmentation; at most 4; 0 = none).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=4))]
    pub subdivided_copies: u16,
    /// Coarsened copies of every training character: each keeps 10-67 % of the joints (drawn at
    /// random, roots always), the others merged into their nearest kept ancestor with their
    /// weights (skeleton augmentation: rigs of few bones over large regions; at most 4; 0 =
    /// none, as the models before 2026-12-06 were trained).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=4))]
    pub coarse_copies: u16,
    /// Feature layout: 3 (the default); 4, where the flag that says whether a
    /// candidate bone is a root is replaced by the share of the bone inside the mesh's solid
    /// (a rig's root may be a weightless ground bone or the body itself; the solid tells which);
    /// 5 and 6, layouts 3 and 4 with geodesic voxel binding's weights as inputs beside bone heat's
    /// (the embedded model: 5, with --voxel-prior-residual).
    #[arg(long, default_value_t = rigml_learn::features::FEATURE_VERSION, value_parser = clap::value_parser!(u32).range(3..=6))]
    pub feature_version: u32,
    /// Inference: drop candidates below this share of the row's largest weight (stored in the
    /// model; with --val the value chosen on val replaces it).
    #[arg(long, default_value_t = rigml_learn::infer::DEFAULT_RELATIVE, value_parser = unit_interval::<f32>)]
    pub relative: f32,
    /// Inference: drop candidates below this weight (stored in the model).
    #[arg(long, default_value_t = rigml_learn::infer::DEFAULT_ABSOLUTE, value_parser = unit_interval::<f32>)]
    pub absolute: f32,
    /// Inference settings are chosen on --val to maximise 2 min(P, R) - L1 among those whose mean
    /// recall (top-4 mode) is at least this (0 = no constraint).
    #[arg(long, default_value_t = 0.0, value_parser = unit_interval::<f64>)]
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
    /// Write OUTPUT.ckpt every N steps (0 = never; with --members, of the network that reached
    /// a checkpoint last).
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
    /// Sampling time summed over the networks (each network samples with its own seed).
    seconds_features: f64,
    /// Fitting time summed over the networks.
    seconds_training: f64,
    /// Networks fitted at once.
    jobs: usize,
    /// The whole run, from reading the manifest to the model (networks fitted at once overlap,
    /// so this may be less than the sums above).
    seconds_wall: f64,
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

/// Write a training loop's checkpoint to `path` (atomically, replacing the last one).
fn write_checkpoint(path: &Path, model: &rigml_learn::ModelFile) -> Result<(), rigml_learn::LearnError> {
    let bytes = model.to_bytes()?;
    rigml_io::atomic::write(path, &bytes, true).map_err(|e| rigml_learn::LearnError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e.to_string()),
    })
}

/// The recipe the flags describe.
fn recipe(args: &Args) -> SkinRecipe {
    SkinRecipe {
        split: args.split.clone(),
        val: args.val.clone(),
        config: TrainConfig {
            steps: args.steps,
            batch: args.batch,
            learning_rate: args.learning_rate,
            deform_weight: args.deform_weight,
            hidden: args.hidden,
            patch: args.point_encoder,
            prior: args.prior_residual,
            voxel_prior: args.voxel_prior_residual,
            fixed_prior_scale: args.fixed_prior_scale,
            // Filled in by the recipe from `balance_families` (rigml::train::SkinRecipe::config).
            groups: Vec::new(),
            group_balance: 0.0,
            seed: args.seed,
            val_every: args.val_every,
            checkpoint_every: args.checkpoint_every,
        },
        members: usize::from(args.members),
        jobs: jobs(args.jobs),
        characters: args.characters.map(|n| n as usize),
        hold_out_fold: args.hold_out_fold,
        balance_families: args.balance_families.unwrap_or(0.0),
        sampling: SampleOptions {
            max_vertices: args.max_vertices,
            posed_copies: usize::from(args.posed_copies),
            stretched_copies: usize::from(args.stretched_copies),
            subdivided_copies: usize::from(args.subdivided_copies),
            coarse_copies: usize::from(args.coarse_copies),
            seed: args.seed,
            feature_version: args.feature_version,
        },
        relative: args.relative,
        absolute: args.absolute,
        min_recall: args.min_recall,
        cache: (!args.no_cache).then(|| args.cache.clone()),
        geometry_fallback: !args.no_geometry_fallback,
        command: std::env::args().collect::<Vec<_>>().join(" "),
    }
}

/// The networks to fit at once for `--jobs requested` (0: one per CPU core; one on a GPU).
fn jobs(requested: usize) -> usize {
    match requested {
        0 if cfg!(feature = "wgpu") => 1,
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
}

/// Load, extract, train, write; returns the summary.
pub fn run(args: &Args) -> Result<String> {
    let recipe = recipe(args);
    if args.resume.is_some() && args.members > 1 {
        bail!(
            "--resume continues one network; it cannot be combined with --members {}",
            args.members
        );
    }
    recipe.validate(args.resume.is_some())?;
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
    let losses = |l: &Losses| format!("{:.4} (kl {:.4} deform {:.4})", l.total, l.kl, l.deform);
    let mut bars = Bars::new(args.steps, checkpoint_path(&args.output), losses, losses);
    let started = std::time::Instant::now();
    let trained = train_skin(&dataset, &recipe, resume.as_ref(), &mut |p| bars.show(p))?;
    let wall = started.elapsed().as_secs_f64();
    bars.clear();
    rigml_io::atomic::write(&args.output, &trained.model.to_bytes()?, args.force)?;
    let histories: Vec<History> = trained.members.iter().map(|r| r.history.clone()).collect();
    rigml_io::atomic::write(&curves, &rigml_learn::curves::png(&histories)?, args.force)?;
    let summary = summarise(args, &curves, &device, &trained, recipe.jobs_at_once(), wall);
    if args.json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    Ok(text(args, &summary, &trained))
}

/// The progress bars of a training recipe: one per phase of loading or choosing (per network
/// while it samples), one per network's steps (with the step's losses beside the last
/// validation's), and the checkpoints it asks for written to `checkpoint`. Networks fitted at
/// once (`--jobs`) each have their bars, one below the other.
pub(crate) struct Bars<L> {
    steps: usize,
    checkpoint: PathBuf,
    step_text: fn(&L) -> String,
    val_text: fn(&L) -> String,
    shown: MultiProgress,
    /// Networks in the model (their bars are prefixed with the network's number when more
    /// than one).
    members: usize,
    items: HashMap<Option<usize>, ProgressBar>,
    fits: HashMap<usize, ProgressBar>,
    last_val: HashMap<usize, String>,
}

impl<L> Bars<L> {
    pub(crate) fn new(
        steps: usize,
        checkpoint: PathBuf,
        step_text: fn(&L) -> String,
        val_text: fn(&L) -> String,
    ) -> Self {
        Bars {
            steps,
            checkpoint,
            step_text,
            val_text,
            shown: MultiProgress::new(),
            members: 1,
            items: HashMap::new(),
            fits: HashMap::new(),
            last_val: HashMap::new(),
        }
    }

    /// `member`'s prefix in an ensemble, or nothing.
    fn prefix(&self, member: Option<usize>) -> String {
        match member {
            Some(m) if self.members > 1 => format!("member {}/{} ", m + 1, self.members),
            _ => String::new(),
        }
    }

    /// Show one event of the recipe.
    pub(crate) fn show(&mut self, progress: Progress<L>) -> Result<(), rigml_learn::LearnError> {
        match progress {
            Progress::Item {
                phase,
                done,
                total,
                id,
                member,
            } => {
                let prefix = self.prefix(member);
                let items = self.items.entry(member).or_insert_with(|| {
                    let label = phase.label();
                    let items = bar(
                        total as u64,
                        &format!("{{prefix}}{{bar:30}} {{pos}}/{{len}} {label} {{msg}} [{{elapsed}}]"),
                    );
                    items.set_prefix(prefix);
                    self.shown.add(items)
                });
                items.set_position(done as u64);
                items.set_message(id.to_string());
                if done >= total {
                    if let Some(items) = self.items.remove(&member) {
                        self.remove(&items);
                    }
                }
            }
            Progress::Member { index, count, seed } => {
                self.members = count;
                // Networks whose steps are all done make room for this one.
                let done: Vec<usize> = (self.fits.iter())
                    .filter(|(_, fit)| fit.position() >= fit.length().unwrap_or(0))
                    .map(|(&m, _)| m)
                    .collect();
                for m in done.into_iter().chain([index]) {
                    if let Some(fit) = self.fits.remove(&m) {
                        self.remove(&fit);
                    }
                }
                self.last_val.remove(&index);
                let fit = bar(
                    self.steps as u64,
                    "{prefix}{bar:30} {pos}/{len} {msg} [{elapsed}<{eta}]",
                );
                if count > 1 {
                    fit.set_prefix(format!("member {}/{count} (seed {seed}) ", index + 1));
                }
                self.fits.insert(index, self.shown.add(fit));
            }
            Progress::Fit { member, event } => match event {
                TrainEvent::Step { step, losses, .. } => {
                    if let Some(fit) = self.fits.get(&member) {
                        fit.set_position(step as u64);
                        let last_val = self.last_val.get(&member).map_or("", String::as_str);
                        fit.set_message(format!("loss {}{last_val}", (self.step_text)(&losses)));
                    }
                }
                TrainEvent::Val { losses, .. } => {
                    self.last_val
                        .insert(member, format!(" | val {}", (self.val_text)(&losses)));
                }
                TrainEvent::Checkpoint { model, .. } => write_checkpoint(&self.checkpoint, model)?,
            },
        }
        Ok(())
    }

    /// Take `bar` off the screen.
    fn remove(&self, bar: &ProgressBar) {
        bar.finish_and_clear();
        self.shown.remove(bar);
    }

    /// Remove every bar still shown.
    pub(crate) fn clear(&mut self) {
        let bars: Vec<ProgressBar> = self
            .items
            .drain()
            .map(|(_, b)| b)
            .chain(self.fits.drain().map(|(_, b)| b))
            .collect();
        for bar in &bars {
            self.remove(bar);
        }
    }
}

/// The summary of a training (the first member's samples and losses for an ensemble).
fn summarise(args: &Args, curves: &Path, device: &str, trained: &TrainedSkin, jobs: usize, wall: f64) -> Summary {
    let first = &trained.members[0];
    let history = &first.history;
    let last_val = history.val.last().map(|e| e.1);
    let chosen = trained.chosen;
    Summary {
        model: args.output.display().to_string(),
        curves: curves.display().to_string(),
        members: trained.members.len(),
        device: device.to_string(),
        characters: first.ids.len(),
        samples: first.samples,
        val_samples: first.val_samples,
        steps: args.steps,
        seconds_features: trained.members.iter().map(|r| r.seconds_features).sum(),
        seconds_training: trained.members.iter().map(|r| r.seconds_training).sum(),
        jobs,
        seconds_wall: wall,
        final_train_loss: rigml_learn::curves::smoothed(history).last().map(|e| e.1 as f32),
        final_val_loss: last_val.map(|l| l.total),
        final_val_kl: last_val.map(|l| l.kl),
        final_val_deform: last_val.map(|l| l.deform),
        mean_coverage_loss: first.mean_coverage_loss,
        thresholds: chosen.map(|c| (c.relative, c.absolute, c.objective)),
        smooth: chosen.map(|c| c.smooth),
        sharpen: chosen.map(|c| c.sharpen),
        rigid: chosen.map(|c| c.rigid),
        rigid_single: chosen.map(|c| c.rigid_single),
    }
}

/// The summary as text.
fn text(args: &Args, summary: &Summary, trained: &TrainedSkin) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trained {} on {} characters ({} samples, {} val samples) on {}: {} steps in {:.1} s (features {:.1} s; summed over networks, {} at once), {:.1} s in all",
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
        summary.seconds_features,
        summary.jobs,
        summary.seconds_wall
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
    if let Some(c) = trained.chosen {
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
    out
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

    fn balance(flags: &[&str]) -> Result<f32, clap::Error> {
        let line = ["t", "--split", "train", "-o", "m.safetensors"].iter().chain(flags);
        Wrapper::try_parse_from(line).map(|w| recipe(&w.args).balance_families)
    }

    #[test]
    fn the_family_balance_flag_alone_balances_fully_and_takes_a_strength() {
        assert_eq!(balance(&[]).unwrap(), 0.0);
        assert_eq!(balance(&["--balance-families"]).unwrap(), 1.0);
        assert_eq!(balance(&["--balance-families", "0.5"]).unwrap(), 0.5);
        for bad in ["1.5", "-0.1", "x"] {
            assert!(balance(&["--balance-families", bad]).is_err(), "{bad}");
        }
    }
}
