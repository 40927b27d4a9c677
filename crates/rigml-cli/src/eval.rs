//! `rigml eval`: score skin-weight methods against the artists' weights, and auto-riggers
//! (`rig-<template>`) against the artists' skeletons, on a manifest split (metrics of
//! docs/METRICS.md), and write a report folder.

use crate::skin::METHODS;
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rigml_eval::{ExternalFiles, Fold, Method, Options, Progress};
use std::fmt::Write;
use std::path::PathBuf;

/// Score methods on the characters of a data split and write summary.md, per_asset.csv and plots.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml eval --split val --methods learned,heat,nearest,voxel -o report/
  rigml eval --split val --methods learned --model my-skin.safetensors -o report-mine/
  rigml eval --split val --methods rig-detect,rig-humanoid,rig-auto -o report-rig/
                    (skeleton metrics: CD-J2J, ...; rig_deform_*: the placed skeleton skinned
                     with --rig-skin, driven by the artist rig's poses, vs the artist-posed mesh)
  rigml eval --data ../shared/data/manifest.tsv --split val --methods heat \\
             --weights-from blender=bpy-weights/ -o report/ --force
  rigml eval --split train --methods learned,voxel --folds 5 \\
             --fold-models cv/fold{}.safetensors -o report-cv/
                    (family-grouped cross-validation: fold I's families scored with the model
                     `rigml train --hold-out-fold I/5` fitted without them)
External weights: one file per asset in the folder, named <asset id>.npz (`weights` N×J and
`joint_names`) or <asset id>.glb (same vertex order as the asset); joints are matched by name.")]
pub struct Args {
    /// The data folder holding manifest.tsv, or the manifest itself.
    #[arg(long, default_value = "../shared/data")]
    pub data: PathBuf,
    /// Which split to score: train, val, test or all.
    #[arg(long, default_value = "val", value_parser = ["train", "val", "test", "all"])]
    pub split: String,
    /// Comma-separated methods to run on every asset: skin solvers (learned, nearest, heat,
    /// voxel, or a blend A+B:SHARE such as learned+voxel:0.3) and auto-riggers (rig-detect,
    /// rig-humanoid, rig-auto; `:no-ground-root` after the name leaves out the ground root and
    /// `:poles` adds IK pole targets, e.g. rig-detect:no-ground-root), which get the bare mesh
    /// and are scored on their skeletons.
    #[arg(long, value_delimiter = ',', default_value = "learned,nearest,heat,voxel")]
    pub methods: Vec<String>,
    /// Model file for the learned method (default: the embedded model).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Skeleton model file for the auto-riggers that use one (rig-detect, rig-auto,
    /// rig-learned; default: the embedded model), e.g. from `rigml train-skeleton`.
    #[arg(long, value_name = "FILE")]
    pub skeleton_model: Option<PathBuf>,
    /// Weights made elsewhere: `NAME=DIR` (or just DIR, named after it), repeatable.
    #[arg(long, value_name = "[NAME=]DIR")]
    pub weights_from: Vec<String>,
    /// Report folder.
    #[arg(short, long, default_value = "report")]
    pub output: PathBuf,
    /// Replace report files that exist.
    #[arg(long)]
    pub force: bool,
    /// Skip the deformation error (the slowest metric), and for auto-riggers the skinning of
    /// their skeletons and the end-to-end deformation error (rig_deform_*).
    #[arg(long)]
    pub no_deformation: bool,
    /// Score every method on denser copies of the assets: each triangle split in four this many
    /// times, the artist's weights interpolated at the new vertices (meshes from other tools are
    /// often far denser than the data set's; 1 = about 4x the vertices).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub subdivide: u8,
    /// The skin solver that skins an auto-rigger's skeleton for the end-to-end deformation
    /// error (rig_deform_*; as `rigml rig --skin`).
    #[arg(long, default_value = "learned", value_parser = clap::builder::PossibleValuesParser::new(METHODS))]
    pub rig_skin: String,
    /// Draw no pictures (by default each method's worst and best asset is drawn, artist vs
    /// method weights, into the report folder; this runs the method once more on those assets).
    #[arg(long)]
    pub no_pictures: bool,
    /// Score only the held-out families of one fold (I/K) of a family-grouped
    /// cross-validation over the split (the families `rigml train --hold-out-fold I/K` leaves
    /// out).
    #[arg(long, value_name = "I/K", conflicts_with = "folds")]
    pub fold: Option<Fold>,
    /// Cross-validation over families: score every fold 1..K of the split on its held-out
    /// families, the learned method with the model --fold-models names for that fold (and the
    /// auto-riggers with the skeleton model --fold-skeleton-models names), and write one report
    /// (per-family tables over every family of the split; no pictures).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u16).range(2..))]
    pub folds: Option<u16>,
    /// With --folds: the skin model of each fold, `{}` standing for the fold's number (1..K),
    /// e.g. `cv/fold{}.safetensors`.
    #[arg(long, value_name = "TEMPLATE", requires = "folds")]
    pub fold_models: Option<String>,
    /// With --folds: the skeleton model of each fold (`rigml train-skeleton --hold-out-fold`),
    /// `{}` standing for the fold's number, e.g. `cv/skel{}.safetensors`.
    #[arg(long, value_name = "TEMPLATE", requires = "folds")]
    pub fold_skeleton_models: Option<String>,
}

/// Run the evaluation and write the report; returns the summary.
pub fn run(args: &Args) -> Result<String> {
    let split = (args.split != "all").then_some(args.split.as_str());
    let options = Options {
        deformation: !args.no_deformation,
        subdivide: args.subdivide,
        ..Options::default()
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut progress = |event: Progress| match event {
        Progress::Asset { index, total, id } => {
            bar.set_length(total as u64);
            bar.set_position(index as u64);
            bar.set_message(id.to_string());
        }
        Progress::Done => bar.finish_and_clear(),
    };
    let (report, methods) = match args.folds {
        Some(count) => {
            if args.fold_models.is_none() && args.fold_skeleton_models.is_none() {
                bail!("--folds {count}: name each fold's model with --fold-models and/or --fold-skeleton-models");
            }
            let count = usize::from(count);
            // Every fold's models must be there before the first fold is scored.
            let skin = fold_files("--fold-models", args.fold_models.as_deref(), count)?;
            let skeleton = fold_files("--fold-skeleton-models", args.fold_skeleton_models.as_deref(), count)?;
            // And every fold must hold a family of the split (no more folds than families).
            let dataset = rigml_eval::Dataset::open(&args.data)?;
            for index in 0..count {
                dataset.select_fold(Some("character"), split, Fold { index, count }, true)?;
            }
            for warning in not_held_out(args) {
                bar.println(format!("warning: {warning}"));
            }
            let mut merged = rigml_eval::Report::default();
            for index in 0..count {
                let model = skin.as_ref().map(|m| m[index].as_path()).or(args.model.as_deref());
                let skeleton_model = skeleton
                    .as_ref()
                    .map(|m| m[index].as_path())
                    .or(args.skeleton_model.as_deref());
                let methods = methods(args, model, skeleton_model)?;
                let fold = Fold { index, count };
                let named: Vec<String> = [model, skeleton_model]
                    .into_iter()
                    .flatten()
                    .map(|p| p.display().to_string())
                    .collect();
                bar.println(format!("fold {fold}: {}", named.join(", ")));
                merged.absorb(rigml_eval::run_fold(
                    &args.data,
                    split,
                    Some(fold),
                    &methods,
                    &options,
                    &mut progress,
                )?);
            }
            (merged, None)
        }
        None => {
            let methods = methods(args, args.model.as_deref(), args.skeleton_model.as_deref())?;
            let report = rigml_eval::run_fold(&args.data, split, args.fold, &methods, &options, &mut progress)?;
            (report, Some(methods))
        }
    };
    let pictures = match methods {
        // Pictures draw the assets as stored; a subdivided run's weights belong to the copies.
        Some(methods) if !args.no_pictures && args.subdivide == 0 => {
            std::fs::create_dir_all(&args.output).with_context(|| format!("{}", args.output.display()))?;
            rigml_eval::pictures::write_pictures(&args.data, &report, &methods, &args.output, args.force)?
        }
        _ => Vec::new(),
    };
    let written = rigml_eval::output::write_report_with_pictures(&report, &args.output, args.force, &pictures)?;
    let drawn = pictures.iter().filter(|p| p.file.is_ok()).count();
    let mut out = std::fs::read_to_string(args.output.join("summary.md")).unwrap_or_default();
    if args.subdivide > 0 {
        let _ = writeln!(
            out,
            "\nscored on copies subdivided {} time(s) (--subdivide): about {}x the stored triangles; no pictures",
            args.subdivide,
            4usize.pow(u32::from(args.subdivide))
        );
    }
    let _ = writeln!(
        out,
        "\nwrote {} files to {}",
        written.len() + drawn,
        args.output.display()
    );
    Ok(out)
}

/// What a `--folds` run scores with a model trained on every family of the split, so that those
/// numbers are not held out: the learned skin method (and the skinning of auto-riggers'
/// skeletons for the end-to-end deformation) without `--fold-models`, the auto-riggers that use
/// the skeleton model without `--fold-skeleton-models`. A model given with `--model` or
/// `--skeleton-model` may have been trained on anything, so it is named too.
fn not_held_out(args: &Args) -> Vec<String> {
    let methods: Vec<&str> = args.methods.iter().map(String::as_str).collect();
    let riggers = methods.iter().any(|m| m.starts_with("rig-"));
    let skin_used = methods.iter().any(|m| m.split(['+', ':']).any(|p| p == "learned"))
        || (riggers && !args.no_deformation && args.rig_skin == "learned");
    let skeleton_used = methods.iter().any(|m| {
        let template = m.strip_prefix("rig-").map(|s| s.split(':').next().unwrap_or(""));
        matches!(template, Some("detect" | "auto" | "learned"))
    });
    let mut out = Vec::new();
    if skin_used && args.fold_models.is_none() {
        out.push(format!(
            "the learned skin weights use {} for every fold (no --fold-models): not held out",
            args.model
                .as_ref()
                .map_or("the embedded model".to_string(), |m| m.display().to_string())
        ));
    }
    if skeleton_used && args.fold_skeleton_models.is_none() {
        out.push(format!(
            "the auto-riggers place joints with {} for every fold (no --fold-skeleton-models): not held out",
            args.skeleton_model
                .as_ref()
                .map_or("the embedded skeleton model".to_string(), |m| m.display().to_string())
        ));
    }
    out
}

/// The files a `--fold-models`-style template names for folds 1..=count (None without a
/// template), every one checked to exist.
fn fold_files(flag: &str, template: Option<&str>, count: usize) -> Result<Option<Vec<PathBuf>>> {
    let Some(template) = template else {
        return Ok(None);
    };
    if !template.contains("{}") {
        bail!("{flag} {template:?}: put {{}} where the fold's number goes");
    }
    let files: Vec<PathBuf> = (1..=count)
        .map(|i| PathBuf::from(template.replace("{}", &i.to_string())))
        .collect();
    let missing: Vec<String> = files
        .iter()
        .filter(|m| !m.is_file())
        .map(|m| m.display().to_string())
        .collect();
    if !missing.is_empty() {
        bail!("{flag} {template:?}: no such model file: {}", missing.join(", "));
    }
    Ok(Some(files))
}

/// The methods `args` names, the learned one loading `model` and the auto-riggers
/// `skeleton_model` (None: the embedded models).
fn methods(
    args: &Args,
    model: Option<&std::path::Path>,
    skeleton_model: Option<&std::path::Path>,
) -> Result<Vec<Method>> {
    let settings = rigml::EvalSettings {
        model,
        skeleton_model,
        rig_skin: &args.rig_skin,
        deformation: !args.no_deformation,
    };
    let mut methods = args
        .methods
        .iter()
        .filter(|m| !m.is_empty())
        .map(|name| rigml::eval_method(name, &settings).with_context(|| format!("--methods {name}")))
        .collect::<Result<Vec<Method>>>()?;
    for spec in &args.weights_from {
        let (name, dir) = match spec.split_once('=') {
            Some((name, dir)) => (name.to_string(), PathBuf::from(dir)),
            None => {
                let dir = PathBuf::from(spec);
                let name = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| spec.clone());
                (name, dir)
            }
        };
        let files = ExternalFiles::from_dir(&dir).with_context(|| format!("--weights-from {spec}"))?;
        methods.push(Method::external(&name, files));
    }
    if methods.is_empty() {
        bail!("nothing to evaluate: give --methods or --weights-from");
    }
    Ok(methods)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        eval: Args,
    }

    fn warnings(line: &str) -> Vec<String> {
        let cli = Cli::parse_from(std::iter::once("eval").chain(line.split_whitespace()));
        not_held_out(&cli.eval)
    }

    #[test]
    fn cross_validation_names_the_models_that_saw_every_family() {
        // Skin models per fold, no auto-rigger: nothing to say.
        assert!(warnings("--methods learned,voxel --folds 5 --fold-models f{}.st").is_empty());
        // Skeleton models per fold, but the riggers' skeletons are skinned by the embedded
        // learned model for the end-to-end deformation.
        let w = warnings("--methods rig-detect --folds 5 --fold-skeleton-models s{}.st");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("skin weights"), "{w:?}");
        assert!(warnings("--methods rig-detect --folds 5 --fold-skeleton-models s{}.st --no-deformation").is_empty());
        // The humanoid and curve templates use no skeleton model.
        assert!(warnings("--methods rig-humanoid,rig-curve:no-ground-root --folds 5 --fold-models f{}.st").is_empty());
        // A blend with the learned method, and a rigger without fold skeleton models.
        let w = warnings("--methods learned+voxel:0.3,rig-auto --folds 5 --no-deformation --fold-models f{}.st");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("embedded skeleton model"), "{w:?}");
    }
}
