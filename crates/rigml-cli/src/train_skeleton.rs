//! `rigml train-skeleton --split train [--val val] -o skel.safetensors`: train the learned
//! skeleton predictor (joint votes + clustering + spanning tree) on the characters of a
//! manifest split, and choose its clustering settings on --val. The recipe is the library's
//! (`rigml::train::skeleton`); this module maps the flags onto it, draws its progress bars and
//! writes the model, its curves and the summary.

use crate::arg_numbers::{non_negative, positive, unit_interval};
use crate::train::{checkpoint_path, curves_path, Bars};
use anyhow::{bail, Context, Result};
use rigml::train::skeleton::{train_skeleton, ChosenSettings, SkeletonRecipe};
use rigml_eval::dataset::Dataset;
use rigml_learn::skeleton::data::Augment;
use rigml_learn::skeleton::net;
use rigml_learn::skeleton::train::{Config, History, Losses};
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;

/// Train the learned skeleton predictor on a manifest split.
#[derive(clap::Args)]
#[command(after_help = "\
Needs a build with training (the `train` cargo feature, which builds burn; the default build
leaves it out): cargo build --release --features train, or
cargo install --path crates/rigml-cli --features train. --library-into trains nothing and runs
in any build.

Examples:
  rigml train-skeleton --split train --val val -o skel.safetensors
  rigml train-skeleton --data ../shared/data --steps 200 --seed 2 -o quick.safetensors --force
  rigml train-skeleton --val val -o skel.safetensors --resume skel.safetensors.ckpt --force
  rigml train-skeleton --val val --hold-out-fold 2/5 -o cv/skel2.safetensors
                    (without the families of fold 2 of 5: score with rigml eval --folds 5)
  rigml train-skeleton --data my_rigs --library-into skel.safetensors -o mine.safetensors
                    (no training: skel.safetensors with my_rigs' train characters as its
                    rig library, which `rigml rig` then reuses for meshes shaped like them)
Writes OUTPUT, OUTPUT.ckpt every --checkpoint-every steps and a PNG of the loss curves
(OUTPUT with the extension replaced by -curves.png). With --val, the clustering settings
(mean-shift bandwidth, merge radius, minimum vote mass, confidence power) are chosen by the
mean CD-J2J plus 0.02 x the mean relative joint-count error on that split's characters and
stored in the model. The model also stores the rigs of the characters it was trained on (its
rig library: `rigml rig`'s default template reuses the most alike rig, moved onto the new
mesh, when the shapes are alike enough; --template library always does).")]
pub struct Args {
    /// The data folder holding manifest.tsv, or the manifest itself.
    #[arg(long, default_value = "../shared/data")]
    pub data: PathBuf,
    /// Split to fit on.
    #[arg(long, default_value = "train", value_parser = ["train", "val", "test"])]
    pub split: String,
    /// Leave out the families of fold I of K of the split (a family-grouped cross-validation;
    /// `rigml eval --fold I/K --skeleton-model M` or `--folds K --fold-skeleton-models` scores
    /// the model on exactly those).
    #[arg(long, value_name = "I/K")]
    pub hold_out_fold: Option<rigml_eval::Fold>,
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
    #[arg(long, default_value_t = 2e-3, value_parser = positive::<f64>)]
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
    #[arg(long, default_value_t = 0.15, value_parser = unit_interval::<f32>)]
    pub scale: f32,
    /// Largest joint rotation (degrees) of the re-posed copies (0 = no re-posing).
    #[arg(long, default_value_t = 20.0, value_parser = non_negative::<f32>)]
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
    /// Train nothing: write this skeleton model with the --split characters' rigs as its rig
    /// library (replacing any it had), e.g. a studio's own rigs beside the shipped network.
    #[arg(long, value_name = "MODEL")]
    pub library_into: Option<PathBuf>,
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
    settings: Option<Chosen>,
    skipped: Vec<String>,
}

/// The chosen clustering settings as the summary shows them.
#[derive(Serialize, Clone, Copy)]
struct Chosen {
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

impl From<ChosenSettings> for Chosen {
    fn from(c: ChosenSettings) -> Chosen {
        Chosen {
            bandwidth: c.bandwidth,
            merge: c.merge,
            min_mass: c.min_mass,
            power: c.power,
            characters: c.characters,
            mean_cd_j2j: c.mean_cd_j2j,
            mean_relative_count_error: c.mean_relative_count_error,
            mean_cd_j2j_default_settings: c.mean_cd_j2j_default_settings,
        }
    }
}

/// Load, augment, train, choose settings, write; returns the summary.
pub fn run(args: &Args) -> Result<String> {
    let recipe = SkeletonRecipe {
        split: args.split.clone(),
        hold_out_fold: args.hold_out_fold,
        val: args.val.clone(),
        choose_on_all: args.choose_on == "all",
        config: Config {
            steps: args.steps,
            batch: args.batch,
            learning_rate: args.learning_rate,
            hidden: args.hidden,
            seed: args.seed,
            val_every: args.val_every,
            checkpoint_every: args.checkpoint_every,
        },
        augment: Augment {
            mirror: !args.no_mirror,
            copies: args.copies,
            scale: args.scale,
            pose_angle: args.pose_degrees.to_radians(),
            seed: args.seed,
        },
        command: std::env::args().collect::<Vec<_>>().join(" "),
    };
    if !(0.0..=90.0).contains(&args.pose_degrees) {
        bail!("--pose-degrees must lie in [0, 90], got {}", args.pose_degrees);
    }
    recipe.validate()?;
    if let Some(model) = &args.library_into {
        return library_into(args, model);
    }
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
        Some(path) => {
            let bytes = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
            Some(net::from_bytes(&bytes, &path.display().to_string())?)
        }
        None => None,
    };
    let dataset = Dataset::open(&args.data)?;
    let mut bars = Bars::new(
        args.steps,
        checkpoint_path(&args.output),
        |l: &Losses| format!("{:.4} (offset {:.4} conf {:.4})", l.total, l.offset, l.confidence),
        |l: &Losses| format!("{:.4} (offset {:.4})", l.total, l.offset),
    );
    let trained = train_skeleton(&dataset, &recipe, resume.as_ref(), &mut |p| bars.show(p))?;
    bars.clear();
    let history = &trained.history;
    rigml_io::atomic::write(&args.output, &trained.model.to_bytes()?, args.force)?;
    rigml_io::atomic::write(&curves, &curves_png(history)?, args.force)?;
    let last_val = history.val.last().map(|e| e.1);
    let chosen = trained.chosen.map(Chosen::from);
    let summary = Summary {
        model: args.output.display().to_string(),
        curves: curves.display().to_string(),
        device: device.clone(),
        characters: trained.ids.len(),
        clouds: trained.clouds,
        val_clouds: trained.val_clouds,
        steps: args.steps,
        seconds_data: trained.seconds_data,
        seconds_training: trained.seconds_training,
        seconds_settings: trained.seconds_settings,
        final_train_loss: rigml_learn::curves::smooth_series(&totals(&history.train))
            .last()
            .map(|e| e.1 as f32),
        final_val_loss: last_val.map(|l| l.total),
        final_val_offset: last_val.map(|l| l.offset),
        settings: chosen,
        skipped: trained.skipped.clone(),
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

#[derive(Serialize)]
struct LibrarySummary {
    model: String,
    from: String,
    rigs: usize,
    skipped: Vec<String>,
}

/// `--library-into MODEL`: MODEL with the rigs of the split's characters as its library.
fn library_into(args: &Args, model_path: &std::path::Path) -> Result<String> {
    if args.output.exists() && !args.force {
        bail!("{}: exists (use --force to replace it)", args.output.display());
    }
    let bytes = std::fs::read(model_path).with_context(|| format!("{}", model_path.display()))?;
    let mut model = net::from_bytes(&bytes, &model_path.display().to_string())?;
    let dataset = Dataset::open(&args.data)?;
    let (library, skipped) =
        rigml::train::skeleton::rig_library(&dataset, &args.split, args.hold_out_fold, &mut |_| Ok(()))?;
    library.write_into(&mut model);
    model.metadata.insert(
        "rigml.skeleton.library.command".into(),
        std::env::args().collect::<Vec<_>>().join(" "),
    );
    rigml_io::atomic::write(&args.output, &model.to_bytes()?, args.force)?;
    let summary = LibrarySummary {
        model: args.output.display().to_string(),
        from: model_path.display().to_string(),
        rigs: library.rigs.len(),
        skipped,
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    let mut out = format!(
        "wrote {}: {} with a rig library of {} characters of {}\n",
        summary.model, summary.from, summary.rigs, args.split
    );
    for s in &summary.skipped {
        let _ = writeln!(out, "skipped {s}");
    }
    Ok(out)
}
