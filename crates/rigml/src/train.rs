//! The learned skin model's training recipe, as `rigml train` runs it (the skeleton model's is
//! in [`skeleton`]): which characters of a
//! manifest split are drawn (all, `characters` of them by a seeded draw, or all but a fold's
//! families), their samples (features cached on disk), one network or an ensemble of networks
//! with consecutive seeds, and the inference settings chosen on a validation split and stored
//! in the model's metadata with the training facts.
//!
//! The work reports through a [`Progress`] hook (the CLI draws progress bars from it; a hook
//! that returns an error stops the run). Fitting needs burn (rigml-learn's `train` feature);
//! in a build without it [`train_skin`] stops with rigml-learn's `NoTraining` error before any
//! work.

use crate::error::{invalid, Result};
use rigml_eval::dataset::{AssetRow, Dataset};
use rigml_eval::skin_metrics::{rows_of, score, Mode, PreparedGt};
use rigml_eval::Fold;
use rigml_learn::infer::{
    search_thresholds, Chosen, KEY_ABSOLUTE, KEY_RELATIVE, KEY_RIGID, KEY_RIGID_SINGLE, KEY_SHARPEN, KEY_SMOOTH,
};
use rigml_learn::sample::{cached_samples, SampleOptions, Samples};
use rigml_learn::train::{History, Losses, TrainConfig, TrainEvent, KEY_STEP};
use rigml_learn::{LearnError, Learned, ModelFile};
use rigml_skin::SolveOptions;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

mod parallel;
pub mod skeleton;

/// Metadata key of the command (or call) a model was trained by.
pub const KEY_COMMAND: &str = "rigml.train.command";

/// Everything that decides a skin model's training.
#[derive(Debug, Clone, PartialEq)]
pub struct SkinRecipe {
    /// Split to fit on.
    pub split: String,
    /// Split to validate on while training and to choose the inference settings on (never
    /// test for a model reported on test).
    pub val: Option<String>,
    /// The optimiser and network settings; `seed` is the first member's (member `i` uses
    /// `seed + i`), `groups` is filled from the families when `balance_families` is above 0, and
    /// `group_balance` is replaced by `balance_families`.
    pub config: TrainConfig,
    /// Networks to train (more than one: an ensemble whose probabilities are the members' mean).
    pub members: usize,
    /// Networks fitted at once, each on a thread of its own (1: one after another; more than
    /// `members` fits them all at once). The model does not depend on it: every network's
    /// samples, initial values and batches come from its own seed. Each network at work holds
    /// its samples in memory (about 1.6 GB for the 176 training characters of the shipped
    /// recipe).
    pub jobs: usize,
    /// Fit on this many of the split's characters only, drawn with the first seed
    /// ([`draw_characters`]).
    pub characters: Option<usize>,
    /// Leave out the families of this fold (family-grouped cross-validation).
    pub hold_out_fold: Option<Fold>,
    /// How far batches are balanced across families, in `0..=1` (0: every sample weighs the
    /// same; 1: every family does; between: a family of `n` samples weighs `n^(1 - b)`).
    pub balance_families: f32,
    /// Vertices per character, re-posed and stretched copies (the seed is each member's).
    pub sampling: SampleOptions,
    /// Inference thresholds stored in the model (replaced by those chosen on `val`).
    pub relative: f32,
    pub absolute: f32,
    /// The settings chosen on `val` keep mean recall at least this where possible.
    pub min_recall: f64,
    /// Feature cache folder (`None`: no cache).
    pub cache: Option<PathBuf>,
    /// Write [`rigml_learn::infer::GATED_GEOMETRY_FALLBACK`] into an ensemble whose members
    /// correct voxel binding ([`SkinRecipe::fallback_settings`]).
    pub geometry_fallback: bool,
    /// What to record as the command that trained the model.
    pub command: String,
}

impl Default for SkinRecipe {
    fn default() -> Self {
        SkinRecipe {
            split: "train".into(),
            val: None,
            config: TrainConfig::default(),
            members: 1,
            jobs: 1,
            characters: None,
            hold_out_fold: None,
            balance_families: 0.0,
            sampling: SampleOptions::default(),
            relative: rigml_learn::infer::DEFAULT_RELATIVE,
            absolute: rigml_learn::infer::DEFAULT_ABSOLUTE,
            min_recall: 0.0,
            cache: None,
            geometry_fallback: true,
            command: String::new(),
        }
    }
}

impl SkinRecipe {
    /// The fallback settings the trained model gets beside the chosen thresholds: the gated
    /// geometric fallback for an ensemble (two networks or more, whose spread it reads) that
    /// corrects voxel binding (whose row it falls back to, and whose agreement with bone heat
    /// it reads), unless `geometry_fallback` is off; none otherwise.
    pub fn fallback_settings(&self) -> &'static [(&'static str, &'static str)] {
        if self.geometry_fallback && self.members >= 2 && self.config.voxel_prior {
            &rigml_learn::infer::GATED_GEOMETRY_FALLBACK
        } else {
            &[]
        }
    }

    /// How many networks are fitted at once: `jobs`, at most `members`.
    pub fn jobs_at_once(&self) -> usize {
        self.jobs.min(self.members)
    }

    /// The optimiser settings every network is fitted with before its own seed and the family
    /// groups are filled in: `config` with `balance_families` as its group balance.
    fn fit_config(&self) -> TrainConfig {
        TrainConfig {
            group_balance: self.balance_families,
            ..self.config.clone()
        }
    }

    /// Refuses settings that cannot train, before any work.
    pub fn validate(&self, resuming: bool) -> Result<()> {
        // The settings as the networks get them, so that the family balance is checked once,
        // where the trainer checks it.
        self.fit_config().validate()?;
        if self.sampling.max_vertices == 0 {
            return Err(invalid("max_vertices must be at least 1"));
        }
        if !(1..=rigml_learn::model::MAX_MEMBERS).contains(&self.members) {
            return Err(invalid(format!(
                "members must lie in 1..={}, got {}",
                rigml_learn::model::MAX_MEMBERS,
                self.members
            )));
        }
        for (name, value) in [("relative", self.relative), ("absolute", self.absolute)] {
            if !(0.0..1.0).contains(&value) {
                return Err(invalid(format!("{name} must lie in [0, 1), got {value}")));
            }
        }
        if !(0.0..=1.0).contains(&self.min_recall) {
            return Err(invalid(format!(
                "min_recall must lie in [0, 1], got {}",
                self.min_recall
            )));
        }
        if self.characters == Some(0) {
            return Err(invalid("characters must be at least 1"));
        }
        if self.jobs == 0 {
            return Err(invalid("jobs must be at least 1"));
        }
        if !rigml_learn::features::FEATURE_VERSIONS.contains(&self.sampling.feature_version) {
            return Err(invalid(format!(
                "feature version must be one of {:?}, got {}",
                rigml_learn::features::FEATURE_VERSIONS,
                self.sampling.feature_version
            )));
        }
        if self.config.voxel_prior && !rigml_learn::features::holds_voxel_binding(self.sampling.feature_version) {
            return Err(invalid(format!(
                "a voxel prior reads voxel binding's shares, which feature version {} does not hold (5 and 6 do)",
                self.sampling.feature_version
            )));
        }
        if resuming && self.members > 1 {
            return Err(invalid(format!(
                "resuming continues one network; it cannot be combined with {} members",
                self.members
            )));
        }
        Ok(())
    }
}

/// Which part of the work a [`Progress::Item`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Loading characters and extracting their samples (skin model).
    Features,
    /// Scoring the validation characters to choose the inference settings (skin model).
    Thresholds,
    /// Loading characters and sampling their point clouds (skeleton model).
    Clouds,
    /// Predicting the validation characters' joint votes (skeleton model).
    Votes,
    /// Trying clustering settings on them (skeleton model; items are settings, not characters).
    Search,
}

impl Phase {
    /// A short name for progress bars.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Features => "features",
            Phase::Thresholds => "thresholds",
            Phase::Clouds => "clouds",
            Phase::Votes => "settings",
            Phase::Search => "settings search",
        }
    }
}

/// What a training recipe reports as it goes (`L`: the fitting loop's losses).
#[derive(Debug)]
pub enum Progress<'a, L = Losses> {
    /// Item `done` of `total` of a phase is next (`id`); `done == total`: the phase ended.
    /// `member`: the network whose samples these are (`None`: work for the whole model).
    Item {
        phase: Phase,
        done: usize,
        total: usize,
        id: &'a str,
        member: Option<usize>,
    },
    /// Network `index` (from 0) of `count` starts (sampling, then fitting), with `seed`.
    /// Networks fitted on several threads at once ([`SkinRecipe::jobs`]) report in turns.
    Member { index: usize, count: usize, seed: u64 },
    /// An event of network `member`'s fitting loop (steps, validations, checkpoints to write).
    Fit { member: usize, event: TrainEvent<'a, L> },
}

/// Report item `done` of `total` of `phase` for the whole model (an `Item` event).
pub(crate) fn item<L>(
    progress: &mut dyn FnMut(Progress<L>) -> Result<(), LearnError>,
    phase: Phase,
    done: usize,
    total: usize,
    id: &str,
) -> Result<(), LearnError> {
    progress(Progress::Item {
        phase,
        done,
        total,
        id,
        member: None,
    })
}

/// What training one network left behind (the facts a summary needs, not the samples).
#[derive(Debug, Clone)]
pub struct MemberRun {
    /// Ids of the characters it was fitted on, in manifest order.
    pub ids: Vec<String>,
    pub samples: usize,
    pub val_samples: usize,
    /// Mean over characters of the ground-truth mass outside the candidates.
    pub mean_coverage_loss: f32,
    pub history: History,
    pub seconds_features: f64,
    pub seconds_training: f64,
}

/// A trained skin model and how it came about.
#[derive(Debug, Clone)]
pub struct TrainedSkin {
    /// The model, with its inference settings and training facts in the metadata.
    pub model: ModelFile,
    /// One run per network.
    pub members: Vec<MemberRun>,
    /// The inference settings chosen on the validation split, if one was given.
    pub chosen: Option<Chosen>,
}

/// Train the skin model of `recipe` on `dataset` (resuming one network from `resume`),
/// reporting through `progress`.
pub fn train_skin(
    dataset: &Dataset,
    recipe: &SkinRecipe,
    resume: Option<&ModelFile>,
    progress: &mut dyn FnMut(Progress) -> Result<(), LearnError>,
) -> Result<TrainedSkin> {
    recipe.validate(resume.is_some())?;
    let version = recipe.sampling.feature_version;
    if let Some(found) = resume.and_then(ModelFile::feature_version) {
        if found != version {
            return Err(invalid(format!(
                "the model to resume was trained on feature version {found}, the recipe asks for {version}"
            )));
        }
    }
    // Before any work: a build without training stops here.
    rigml_learn::training_device_name()?;
    let mut metadata = HashMap::new();
    metadata.insert(rigml_learn::model::KEY_FEATURE_VERSION.into(), version.to_string());
    metadata.insert(KEY_COMMAND.to_string(), recipe.command.clone());
    metadata.insert("rigml.train.split".into(), recipe.split.clone());
    metadata.insert(KEY_RELATIVE.into(), recipe.relative.to_string());
    metadata.insert(KEY_ABSOLUTE.into(), recipe.absolute.to_string());
    let jobs = recipe.jobs_at_once();
    let fitted = if jobs > 1 {
        parallel::train_members(dataset, recipe, jobs, &metadata, progress)?
    } else {
        let mut fitted = Vec::new();
        for member in 0..recipe.members {
            let seed = member_seed(recipe, member);
            progress(Progress::Member {
                index: member,
                count: recipe.members,
                seed,
            })?;
            fitted.push(train_member(dataset, recipe, member, resume, &metadata, progress)?);
        }
        fitted
    };
    let (runs, mut models): (Vec<MemberRun>, Vec<ModelFile>) = fitted.into_iter().unzip();
    let mut model = if models.len() == 1 {
        models.remove(0)
    } else {
        metadata.insert("rigml.train.assets".into(), runs[0].ids.join(","));
        metadata.insert(KEY_STEP.into(), recipe.config.steps.to_string());
        ModelFile::ensemble(&models, metadata)?
    };
    let chosen = match &recipe.val {
        Some(split) => Some(choose_settings(
            dataset,
            split,
            recipe.min_recall,
            &mut model,
            progress,
        )?),
        None => None,
    };
    // After the thresholds were chosen, as the fallback was measured: on the thresholds of the
    // networks' mean.
    for (key, value) in recipe.fallback_settings() {
        model.metadata.insert((*key).into(), (*value).into());
    }
    Ok(TrainedSkin {
        model,
        members: runs,
        chosen,
    })
}

/// The seed of network `member` (from 0): the recipe's first seed plus `member`.
fn member_seed(recipe: &SkinRecipe, member: usize) -> u64 {
    recipe.config.seed.wrapping_add(member as u64)
}

/// Sample the data with network `member`'s seed and fit that network.
fn train_member(
    dataset: &Dataset,
    recipe: &SkinRecipe,
    member: usize,
    resume: Option<&ModelFile>,
    metadata: &HashMap<String, String>,
    progress: &mut dyn FnMut(Progress) -> Result<(), LearnError>,
) -> Result<(MemberRun, ModelFile)> {
    let seed = member_seed(recipe, member);
    let options = SampleOptions {
        seed,
        ..recipe.sampling
    };
    let started = Instant::now();
    let draw = recipe.characters.map(|n| (n, recipe.config.seed));
    let rows = split_rows(dataset, &recipe.split, draw, recipe.hold_out_fold)?;
    let train_samples = samples_of(&rows, &options, recipe, member, progress)?;
    let val_samples = match &recipe.val {
        Some(split) => {
            let val_options = SampleOptions {
                posed_copies: 0,
                stretched_copies: 0,
                subdivided_copies: 0,
                coarse_copies: 0,
                ..options
            };
            let rows = split_rows(dataset, split, None, None)?;
            Some(samples_of(&rows, &val_options, recipe, member, progress)?)
        }
        None => None,
    };
    let seconds_features = started.elapsed().as_secs_f64();
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let mut metadata = metadata.clone();
    metadata.insert("rigml.train.assets".into(), ids.join(","));
    if let Some(fold) = recipe.hold_out_fold {
        metadata.insert("rigml.train.hold_out_fold".into(), fold.to_string());
    }
    let config = TrainConfig {
        seed,
        groups: if recipe.balance_families > 0.0 {
            family_groups(&rows)
        } else {
            Vec::new()
        },
        ..recipe.fit_config()
    };
    let trained_at = Instant::now();
    let (model, history) = rigml_learn::train::train(
        &train_samples,
        val_samples.as_ref(),
        &config,
        resume,
        &metadata,
        &mut |event| progress(Progress::Fit { member, event }),
    )?;
    let coverage = &train_samples.coverage_loss;
    let run = MemberRun {
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

/// The skinned-character rows of `split`: all, all but a fold's families, or `draw.0` of them
/// drawn with seed `draw.1` ([`draw_characters`]).
fn split_rows<'a>(
    dataset: &'a Dataset,
    split: &str,
    draw: Option<(usize, u64)>,
    hold_out: Option<Fold>,
) -> Result<Vec<&'a AssetRow>> {
    let mut rows: Vec<_> = match hold_out {
        Some(fold) => dataset.select_fold(Some("character"), Some(split), fold, false)?,
        None => dataset.select(Some("character"), Some(split)),
    };
    if rows.is_empty() {
        return Err(invalid(format!("the manifest has no characters in split {split:?}")));
    }
    if let Some((count, seed)) = draw {
        if count > rows.len() {
            return Err(invalid(format!(
                "characters {count}: the manifest has only {} characters in split {split:?}",
                rows.len()
            )));
        }
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        let keep = draw_characters(&ids, count, seed);
        rows = rows.into_iter().zip(keep).filter(|(_, k)| *k).map(|(r, _)| r).collect();
    }
    Ok(rows)
}

/// The samples of `rows` (asset `i` is row `i`) for network `member`, features from the
/// recipe's cache.
fn samples_of(
    rows: &[&AssetRow],
    options: &SampleOptions,
    recipe: &SkinRecipe,
    member: usize,
    progress: &mut dyn FnMut(Progress) -> Result<(), LearnError>,
) -> Result<Samples> {
    let mut item = |done: usize, id: &str| {
        progress(Progress::Item {
            phase: Phase::Features,
            done,
            total: rows.len(),
            id,
            member: Some(member),
        })
    };
    let mut all = Samples::default();
    for (i, row) in rows.iter().enumerate() {
        item(i, &row.id)?;
        let character = rigml_io::load(&row.path).map_err(|e| invalid(format!("training asset {}: {e}", row.id)))?;
        let samples = cached_samples(recipe.cache.as_deref(), &row.id, &character, options)
            .map_err(|e| invalid(format!("{}: {}: {e}", row.path.display(), row.id)))?;
        all.append(samples, i as u32);
    }
    item(rows.len(), "")?;
    Ok(all)
}

/// The group of every row's family (numbered in order of first appearance).
fn family_groups(rows: &[&AssetRow]) -> Vec<u32> {
    let mut index: HashMap<&str, u32> = HashMap::new();
    rows.iter()
        .map(|r| {
            let next = index.len() as u32;
            *index.entry(r.family.as_str()).or_insert(next)
        })
        .collect()
}

/// Which of `ids` a draw of `count` with `seed` keeps: those whose hash of the seed and the id
/// ranks lowest. A character's rank does not depend on the others, so for one seed a larger
/// draw holds every smaller one, and adding rows to a manifest moves no other row in or out
/// beyond the count.
pub fn draw_characters(ids: &[&str], count: usize, seed: u64) -> Vec<bool> {
    let rank = |id: &str| rigml_eval::deformation::fnv1a64(format!("{seed}:{id}").as_bytes());
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by_cached_key(|&i| (rank(ids[i]), i));
    let mut keep = vec![false; ids.len()];
    order.iter().take(count).for_each(|&i| keep[i] = true);
    keep
}

/// Pick the inference settings (thresholds, smoothing, sharpening, rigid pieces) that maximise
/// `2 min(P, R) - L1` (METRICS.md §2, top-4 mode) over the skinned characters of `split` while
/// keeping mean recall >= `min_recall` where possible, and store them in `model`.
pub fn choose_settings(
    dataset: &Dataset,
    split: &str,
    min_recall: f64,
    model: &mut ModelFile,
    progress: &mut dyn FnMut(Progress) -> Result<(), LearnError>,
) -> Result<Chosen> {
    let learned = Learned::new(model.clone());
    let options = SolveOptions::default();
    let mut cases = Vec::new();
    let mut truths = Vec::new();
    let rows: Vec<_> = dataset
        .rows
        .iter()
        .filter(|r| r.kind == "character" && r.split == split)
        .collect();
    for (i, row) in rows.iter().enumerate() {
        item(progress, Phase::Thresholds, i, rows.len(), &row.id)?;
        let character = rigml_io::load(&row.path).map_err(|e| invalid(format!("validation asset {}: {e}", row.id)))?;
        let Some(gt) = &character.skin else {
            continue;
        };
        let truth = PreparedGt::new(&rows_of(gt));
        if truth.is_data_issue() {
            continue;
        }
        cases.push(
            learned
                .score(&character.mesh, &character.skeleton)
                .map_err(|e| invalid(format!("{}: learned: {e}", row.path.display())))?,
        );
        truths.push(truth);
    }
    item(progress, Phase::Thresholds, rows.len(), rows.len(), "")?;
    let score = |i: usize, skin: &rigml_core::Skin| -> [f64; 3] {
        match truths.get(i).map(|gt| score(&rows_of(skin), gt, Mode::Top4)) {
            Some(Ok(s)) => [s.precision, s.recall, s.l1],
            _ => [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::INFINITY],
        }
    };
    let best = search_thresholds(&learned, &cases, &options, min_recall, &score)?;
    let settings = [
        (KEY_RELATIVE, best.relative.to_string()),
        (KEY_ABSOLUTE, best.absolute.to_string()),
        (KEY_SMOOTH, best.smooth.to_string()),
        (KEY_SHARPEN, best.sharpen.to_string()),
        (KEY_RIGID, best.rigid.to_string()),
        (KEY_RIGID_SINGLE, best.rigid_single.to_string()),
        ("rigml.infer.chosen_on", split.to_string()),
    ];
    for (key, value) in settings {
        model.metadata.insert(key.into(), value);
    }
    Ok(best)
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
    }

    #[test]
    fn impossible_recipes_are_refused_before_any_work() {
        assert!(SkinRecipe::default().validate(false).is_ok());
        let bad = [
            SkinRecipe {
                members: 0,
                ..SkinRecipe::default()
            },
            SkinRecipe {
                relative: 1.0,
                ..SkinRecipe::default()
            },
            SkinRecipe {
                min_recall: 1.5,
                ..SkinRecipe::default()
            },
            SkinRecipe {
                characters: Some(0),
                ..SkinRecipe::default()
            },
            SkinRecipe {
                jobs: 0,
                ..SkinRecipe::default()
            },
            SkinRecipe {
                balance_families: 1.5,
                ..SkinRecipe::default()
            },
            SkinRecipe {
                balance_families: f32::NAN,
                ..SkinRecipe::default()
            },
            SkinRecipe {
                sampling: SampleOptions {
                    max_vertices: 0,
                    ..SampleOptions::default()
                },
                ..SkinRecipe::default()
            },
            SkinRecipe {
                sampling: SampleOptions {
                    feature_version: 2,
                    ..SampleOptions::default()
                },
                ..SkinRecipe::default()
            },
            // A voxel prior on a layout without voxel shares (3 is the default).
            SkinRecipe {
                config: TrainConfig {
                    voxel_prior: true,
                    ..TrainConfig::default()
                },
                ..SkinRecipe::default()
            },
        ];
        for recipe in &bad {
            assert!(recipe.validate(false).is_err(), "{recipe:?} was accepted");
        }
        for version in [5, 6] {
            let voxel = SkinRecipe {
                config: TrainConfig {
                    voxel_prior: true,
                    ..TrainConfig::default()
                },
                sampling: SampleOptions {
                    feature_version: version,
                    ..SampleOptions::default()
                },
                ..SkinRecipe::default()
            };
            assert!(voxel.validate(false).is_ok(), "layout {version}");
        }
        let ensemble = SkinRecipe {
            members: 3,
            ..SkinRecipe::default()
        };
        assert!(ensemble.validate(false).is_ok() && ensemble.validate(true).is_err());
    }

    #[test]
    fn only_ensembles_that_correct_voxel_binding_get_the_gated_fallback() {
        let recipe = |members: usize, voxel_prior: bool, geometry_fallback: bool| SkinRecipe {
            members,
            config: TrainConfig {
                voxel_prior,
                ..TrainConfig::default()
            },
            geometry_fallback,
            ..SkinRecipe::default()
        };
        let gate = &rigml_learn::infer::GATED_GEOMETRY_FALLBACK;
        assert_eq!(recipe(5, true, true).fallback_settings(), gate);
        assert_eq!(recipe(2, true, true).fallback_settings(), gate);
        // One network has no spread; no voxel prior, no voxel row to fall back to; or turned off.
        assert!(recipe(1, true, true).fallback_settings().is_empty());
        assert!(recipe(5, false, true).fallback_settings().is_empty());
        assert!(recipe(5, true, false).fallback_settings().is_empty());
        // What it writes is what inference reads back.
        let metadata = gate.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        let learned = Learned::new(ModelFile {
            weights: Default::default(),
            metadata,
        });
        assert!(learned.fallback == 1.0 && learned.fallback_geometry && learned.fallback_agreement);
        assert!((learned.fallback_from - 0.1).abs() < 1e-6 && !learned.fallback_contested);
    }

    #[test]
    fn families_are_numbered_in_order_of_first_appearance() {
        let row = |family: &str| AssetRow {
            family: family.into(),
            ..AssetRow::character("x", &PathBuf::from("x.glb"))
        };
        let rows = [row("a/x"), row("b"), row("a/x"), row("c/y"), row("b")];
        let rows: Vec<&AssetRow> = rows.iter().collect();
        assert_eq!(family_groups(&rows), vec![0, 1, 0, 2, 1]);
    }
}
