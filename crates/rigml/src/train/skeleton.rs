//! The learned skeleton placer's training recipe, as `rigml train-skeleton` runs it: point
//! clouds of a split's characters (augmented: mirrored, scaled, re-posed copies), the vote
//! network fitted on them, and the clustering settings (mean-shift bandwidth, merge radius,
//! minimum vote mass, confidence power) chosen on a validation split's characters and stored in
//! the model's metadata with the training facts.

use super::{item, Phase, Progress};
use crate::error::{invalid, Result};
use rigml_eval::dataset::{AssetRow, Dataset};
use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet};
use rigml_eval::Fold;
use rigml_learn::skeleton::data::{character_shapes, Augment, Shape};
use rigml_learn::skeleton::joints::{Modes, Settings, Tree};
use rigml_learn::skeleton::library::{Anchors, RigLibrary};
use rigml_learn::skeleton::train::{Config, History, Losses};
use rigml_learn::skeleton::{Predictor, Votes};
use rigml_learn::{LearnError, ModelFile};
use std::collections::HashMap;
use std::time::Instant;

/// Most augmented copies per character: each is a full point cloud held in memory for the whole
/// run, so more would exhaust memory long before it helped.
pub const MAX_COPIES: usize = 64;

/// Weight of the relative joint-count error `|n_pred - n_gt| / n_gt` beside CD-J2J when the
/// clustering settings are chosen. CD-J2J alone rewards ever more joints (every extra joint can
/// only bring a GT joint closer to its nearest prediction), which gave rigs of 100+ joints on a
/// 6-joint fish; at 0.02 a skeleton with twice the artist's joints must win 0.02 of CD-J2J to be
/// preferred. A rigger's choice, not tuned on test.
pub const COUNT_WEIGHT: f64 = 0.02;

/// Everything that decides a skeleton model's training.
#[derive(Debug, Clone, PartialEq)]
pub struct SkeletonRecipe {
    /// Split to fit on.
    pub split: String,
    /// Leave out the families of this fold of a family-grouped cross-validation over `split`
    /// (the families `rigml eval --fold` scores), to measure the placer on families it has never
    /// seen.
    pub hold_out_fold: Option<Fold>,
    /// Split to validate on and to choose the clustering settings on (never test).
    pub val: Option<String>,
    /// Choose the settings on every `val` character, not only the non-humanoids (the learned
    /// placer's job under `--template detect`).
    pub choose_on_all: bool,
    /// The optimiser and network settings.
    pub config: Config,
    /// Augmentation of the training clouds (its seed: the recipe's).
    pub augment: Augment,
    /// What to record as the command that trained the model.
    pub command: String,
}

impl SkeletonRecipe {
    /// Refuses settings that cannot train, before any work.
    pub fn validate(&self) -> Result<()> {
        self.config.validate()?;
        let a = &self.augment;
        if a.copies > MAX_COPIES {
            return Err(invalid(format!(
                "copies must be at most {MAX_COPIES} (every copy is held in memory), got {}",
                a.copies
            )));
        }
        if !(0.0..0.9).contains(&a.scale) {
            return Err(invalid(format!("scale must lie in [0, 0.9), got {}", a.scale)));
        }
        if !(0.0..=std::f32::consts::FRAC_PI_2 + 1e-6).contains(&a.pose_angle) {
            return Err(invalid(format!(
                "the pose angle must lie in [0, 90] degrees, got {}",
                a.pose_angle.to_degrees()
            )));
        }
        Ok(())
    }
}

/// The clustering settings chosen on the validation characters and what they score there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChosenSettings {
    pub bandwidth: f32,
    pub merge: f32,
    pub min_mass: f32,
    pub power: f32,
    /// Characters chosen on.
    pub characters: usize,
    pub mean_cd_j2j: f64,
    /// Mean of `|n_pred - n_gt| / n_gt` with the chosen settings.
    pub mean_relative_count_error: f64,
    pub mean_cd_j2j_default_settings: f64,
}

/// A trained skeleton model and how it came about.
#[derive(Debug, Clone)]
pub struct TrainedSkeleton {
    /// The model, with its clustering settings and training facts in the metadata.
    pub model: ModelFile,
    pub history: History,
    /// Ids of the characters fitted on.
    pub ids: Vec<String>,
    pub clouds: usize,
    pub val_clouds: usize,
    /// Characters left out, with why (no skeleton).
    pub skipped: Vec<String>,
    pub chosen: Option<ChosenSettings>,
    pub seconds_data: f64,
    pub seconds_training: f64,
    pub seconds_settings: f64,
}

/// Whether the manifest notes a row as a humanoid (`cat=humanoid...` or `cat=mech-humanoid...`).
pub fn is_humanoid(row: &AssetRow) -> bool {
    row.notes
        .rsplit("cat=")
        .next()
        .is_some_and(|c| c.starts_with("humanoid") || c.starts_with("mech-humanoid"))
}

/// Train the skeleton model of `recipe` on `dataset` (resuming from `resume`), reporting
/// through `progress`.
pub fn train_skeleton(
    dataset: &Dataset,
    recipe: &SkeletonRecipe,
    resume: Option<&ModelFile>,
    progress: &mut dyn FnMut(Progress<Losses>) -> Result<(), LearnError>,
) -> Result<TrainedSkeleton> {
    recipe.validate()?;
    rigml_learn::training_device_name()?;
    let started = Instant::now();
    let train_rows = match recipe.hold_out_fold {
        Some(fold) => dataset.select_fold(Some("character"), Some(&recipe.split), fold, false)?,
        None => characters(dataset, &recipe.split)?,
    };
    let mut library = RigLibrary::default();
    let (train_clouds, ids, mut skipped) = clouds(&train_rows, &recipe.augment, Some(&mut library), progress)?;
    let val_rows = match &recipe.val {
        Some(split) => characters(dataset, split)?,
        None => Vec::new(),
    };
    let (val_clouds, _, val_skipped) = if val_rows.is_empty() {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        clouds(&val_rows, &Augment::none(recipe.augment.seed), None, progress)?
    };
    skipped.extend(val_skipped);
    let seconds_data = started.elapsed().as_secs_f64();

    let mut metadata = HashMap::new();
    metadata.insert("rigml.skeleton.train.command".to_string(), recipe.command.clone());
    metadata.insert("rigml.skeleton.train.split".into(), recipe.split.clone());
    metadata.insert("rigml.skeleton.train.assets".into(), ids.join(","));
    if let Some(fold) = recipe.hold_out_fold {
        metadata.insert("rigml.skeleton.train.hold_out_fold".into(), fold.to_string());
    }
    metadata.insert("rigml.skeleton.train.augment".into(), format!("{:?}", recipe.augment));
    progress(Progress::Member {
        index: 0,
        count: 1,
        seed: recipe.config.seed,
    })?;
    let trained_at = Instant::now();
    let (mut model, history) = rigml_learn::skeleton::train::train(
        &train_clouds,
        &val_clouds,
        &recipe.config,
        resume,
        &metadata,
        &mut |event| progress(Progress::Fit { member: 0, event }),
    )?;
    let seconds_training = trained_at.elapsed().as_secs_f64();
    library.write_into(&mut model);
    let settings_at = Instant::now();
    let chosen = if val_rows.is_empty() {
        None
    } else {
        let rows: Vec<&AssetRow> = val_rows
            .iter()
            .copied()
            .filter(|r| recipe.choose_on_all || !is_humanoid(r))
            .collect();
        model.metadata.insert(
            "rigml.skeleton.settings.chosen_on".into(),
            format!(
                "{} ({})",
                recipe.val.as_deref().unwrap_or(""),
                if recipe.choose_on_all { "all" } else { "non-humanoid" }
            ),
        );
        Some(choose_settings(&rows, &mut model, progress)?)
    };
    Ok(TrainedSkeleton {
        model,
        history,
        ids,
        clouds: train_clouds.len(),
        val_clouds: val_clouds.len(),
        skipped,
        chosen,
        seconds_data,
        seconds_training,
        seconds_settings: settings_at.elapsed().as_secs_f64(),
    })
}

fn characters<'a>(dataset: &'a Dataset, split: &str) -> Result<Vec<&'a AssetRow>> {
    let rows: Vec<_> = dataset
        .rows
        .iter()
        .filter(|r| r.kind == "character" && r.split == split)
        .collect();
    if rows.is_empty() {
        return Err(invalid(format!("the manifest has no characters in split {split:?}")));
    }
    Ok(rows)
}

/// Clouds of every character of `rows` (characters without a skeleton are skipped and named),
/// and, with `library`, their rigs added to it.
fn clouds(
    rows: &[&AssetRow],
    augment: &Augment,
    mut library: Option<&mut RigLibrary>,
    progress: &mut dyn FnMut(Progress<Losses>) -> Result<(), LearnError>,
) -> Result<(Vec<Shape>, Vec<String>, Vec<String>)> {
    let mut all = Vec::new();
    let mut ids = Vec::new();
    let mut skipped = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        item(progress, Phase::Clouds, i, rows.len(), &row.id)?;
        let Some(character) = load_rigged(row, &mut skipped)? else {
            continue;
        };
        if let Some(library) = library.as_deref_mut() {
            add_rig(library, row, &character)?;
        }
        let salt = row.id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        let shapes = character_shapes(&character, augment, salt)
            .map_err(|e| invalid(format!("{}: {}: {e}", row.path.display(), row.id)))?;
        all.extend(shapes);
        ids.push(row.id.clone());
    }
    item(progress, Phase::Clouds, rows.len(), rows.len(), "")?;
    Ok((all, ids, skipped))
}

/// `row`'s character; `None`, named in `skipped`, when it has no skeleton.
fn load_rigged(row: &AssetRow, skipped: &mut Vec<String>) -> Result<Option<rigml_core::Character>> {
    let character =
        rigml_io::load(&row.path).map_err(|e| invalid(format!("{}: {}: {e}", row.path.display(), row.id)))?;
    if character.skeleton.is_empty() {
        skipped.push(format!("{} (no skeleton)", row.id));
        return Ok(None);
    }
    Ok(Some(character))
}

/// Add `character`'s rig (its mesh, joint names, parents and bind positions) to `library`,
/// with the humanoid template's joints on its mesh as anchors when the template takes it for a
/// standing humanoid (what carries the rig onto other humanoids' landmarks).
fn add_rig(library: &mut RigLibrary, row: &AssetRow, character: &rigml_core::Character) -> Result<()> {
    let s = &character.skeleton;
    let bad = |e: String| invalid(format!("{}: {e}", row.path.display()));
    library
        .add(
            &row.id,
            &character.mesh.positions,
            &character.mesh.triangles,
            &s.names,
            &s.parents,
            &s.bind_positions(),
        )
        .map_err(|e| bad(e.to_string()))?;
    if let Ok(t) = rigml_rig::SkeletonPlacer::place(&rigml_rig::Humanoid::default(), &character.mesh) {
        let anchors = Anchors::new(t.names, t.parents, t.heads).map_err(bad)?;
        if let Some(rig) = library.rigs.last_mut() {
            rig.anchors = Some(anchors);
        }
    }
    Ok(())
}

/// The rig library of the characters of `split` (or, with `hold_out_fold`, of the split less
/// that fold's families): what `rigml train-skeleton` stores with the network it trains, built
/// alone to give an existing model a library (`rigml train-skeleton --library-into`).
/// Characters without a skeleton are skipped and named.
pub fn rig_library(
    dataset: &Dataset,
    split: &str,
    hold_out_fold: Option<Fold>,
    progress: &mut dyn FnMut(Progress<Losses>) -> Result<(), LearnError>,
) -> Result<(RigLibrary, Vec<String>)> {
    let rows = match hold_out_fold {
        Some(fold) => dataset.select_fold(Some("character"), Some(split), fold, false)?,
        None => characters(dataset, split)?,
    };
    let mut library = RigLibrary::default();
    let mut skipped = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        item(progress, Phase::Clouds, i, rows.len(), &row.id)?;
        if let Some(character) = load_rigged(row, &mut skipped)? {
            add_rig(&mut library, row, &character)?;
        }
    }
    item(progress, Phase::Clouds, rows.len(), rows.len(), "")?;
    Ok((library, skipped))
}

/// CD-J2J of a predicted tree against a character's GT skeleton (METRICS.md §1 units).
fn cd_j2j(tree: &Tree, gt: &JointSet, centre: glam::Vec3, scale: f32) -> Option<f64> {
    let pred = JointSet {
        positions: tree.positions.iter().map(|p| (*p - centre) * scale).collect(),
        parents: tree.parents.clone(),
    };
    score(&pred, gt).map(|s| s.cd_j2j)
}

/// Choose the clustering settings on `rows` by mean CD-J2J plus [`COUNT_WEIGHT`] times the mean
/// relative joint-count error, store them in `model`.
pub fn choose_settings(
    rows: &[&AssetRow],
    model: &mut ModelFile,
    progress: &mut dyn FnMut(Progress<Losses>) -> Result<(), LearnError>,
) -> Result<ChosenSettings> {
    let predictor = Predictor::new(model.clone())?;
    let mut cases: Vec<(Votes, JointSet, glam::Vec3, f32)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        item(progress, Phase::Votes, i, rows.len(), &row.id)?;
        let character =
            rigml_io::load(&row.path).map_err(|e| invalid(format!("{}: {}: {e}", row.path.display(), row.id)))?;
        let Some((centre, scale)) = normalisation(&character.mesh.positions) else {
            continue;
        };
        if character.skeleton.is_empty() {
            continue;
        }
        let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
        let votes = predictor
            .votes(&character.mesh.positions, &character.mesh.triangles)
            .map_err(|e| invalid(format!("{}: {}: {e}", row.path.display(), row.id)))?;
        cases.push((votes, gt, centre, scale));
    }
    item(progress, Phase::Votes, rows.len(), rows.len(), "")?;
    if cases.is_empty() {
        return Err(invalid("no character to choose the clustering settings on"));
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
    let total = BANDWIDTHS.len() * POWERS.len();
    let mut done = 0;
    for bandwidth in BANDWIDTHS {
        for power in POWERS {
            item(progress, Phase::Search, done, total, "")?;
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
            done += 1;
        }
    }
    item(progress, Phase::Search, total, total, "")?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_recipes_are_refused_before_any_work() {
        let good = SkeletonRecipe {
            split: "train".into(),
            hold_out_fold: None,
            val: None,
            choose_on_all: false,
            config: Config::default(),
            augment: Augment::none(1),
            command: String::new(),
        };
        assert!(good.validate().is_ok());
        let with = |augment: Augment| SkeletonRecipe {
            augment,
            ..good.clone()
        };
        for augment in [
            Augment {
                copies: MAX_COPIES + 1,
                ..Augment::none(1)
            },
            Augment {
                scale: 0.9,
                ..Augment::none(1)
            },
            Augment {
                pose_angle: 100f32.to_radians(),
                ..Augment::none(1)
            },
        ] {
            assert!(with(augment).validate().is_err(), "{augment:?} was accepted");
        }
    }
}
