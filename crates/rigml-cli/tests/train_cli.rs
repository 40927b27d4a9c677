//! End-to-end tests of `rigml train` and `rigml train-skeleton` on a few small real characters:
//! a manifest of three train split assets (one relabelled as the validation split of this run),
//! tiny networks and a few steps, so that each whole command (sampling, training, settings
//! choice, checkpoints, writing) runs.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use rigml_learn::{Learned, ModelFile};
use run::{assert_ok, rigml, stderr};
use serde_json::Value;
use std::path::Path;

/// `dir/manifest.tsv` listing the three characters by absolute path; `whale` is this run's val.
fn small_manifest(dir: &Path) {
    let rows = common::manifest();
    let header: Vec<&str> = vec!["id", "kind", "split", "path", "format"];
    let mut text = header.join("\t") + "\n";
    for (id, split) in [
        ("quaternius-platformer-game-skull", "train"),
        ("quaternius-fish-dolphin", "train"),
        ("quaternius-fish-whale", "val"),
    ] {
        let row = rows
            .iter()
            .find(|r| r.id() == id)
            .expect("asset listed in the manifest");
        assert_eq!(row.get("split"), "train", "{id} must come from the train split");
        text += &format!(
            "{id}\tcharacter\t{split}\t{}\t{}\n",
            row.path().display(),
            row.get("format")
        );
    }
    std::fs::write(dir.join("manifest.tsv"), text).unwrap();
}

/// Settings small enough for a test: a few steps of a tiny network on a few vertices.
const TINY: &str =
    "--steps 12 --batch 64 --hidden 6 --max-vertices 150 --val-every 6 --checkpoint-every 0 --cache cache";

/// `rigml train --data manifest.tsv ARGS TINY` in `dir` (`args` split at whitespace).
fn train(dir: &Path, args: &str) -> std::process::Output {
    let line = format!("train --data manifest.tsv {args} {TINY}");
    rigml(dir, &line.split_whitespace().collect::<Vec<_>>())
}

#[test]
fn an_ensemble_is_trained_saved_and_used() {
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    let o = train(
        dir.path(),
        "--split train --val val -o ens.safetensors --members 2 --seed 5 --jobs 2 --json",
    );
    assert_ok(&o);
    let summary: Value = serde_json::from_slice(&o.stdout).expect("train --json prints one JSON object");
    assert_eq!(summary["members"], 2);
    assert_eq!(summary["jobs"], 2);
    assert_eq!(summary["characters"], 2);
    if !cfg!(feature = "wgpu") {
        assert_eq!(
            summary["device"],
            rigml_learn::training_device_name().unwrap(),
            "the CPU build trains on the CPU"
        );
    }
    assert!(dir.path().join("ens-curves.png").is_file());

    let model = ModelFile::load(&dir.path().join("ens.safetensors")).unwrap();
    assert_eq!(model.member_count().unwrap(), 2);
    assert_ne!(model.member_weights(0).unwrap(), model.member_weights(1).unwrap());
    assert!(model.setting(rigml_learn::infer::KEY_RELATIVE).is_some());
    // The ensemble skins a character, and the command line takes it with --model.
    let whale = common::asset("quaternius-fish-whale");
    let character = rigml_io::load(&whale).unwrap();
    let skin = rigml_skin::SkinSolver::solve(
        &Learned::new(model),
        &character.mesh,
        &character.skeleton,
        &rigml_skin::SolveOptions::default(),
    )
    .unwrap();
    assert_eq!(skin.vertex_count(), character.mesh.positions.len());
    let whale = whale.display().to_string();
    let o = rigml(
        dir.path(),
        &["skin", &whale, "--model", "ens.safetensors", "-o", "whale.glb"],
    );
    assert_ok(&o);
    assert!(dir.path().join("whale.glb").is_file());

    // Member 0 of the ensemble is the single network that `--seed 5` trains alone.
    assert_ok(&train(dir.path(), "--split train -o one.safetensors --seed 5"));
    let one = ModelFile::load(&dir.path().join("one.safetensors")).unwrap();
    assert_eq!(one.member_count().unwrap(), 1);
    let ens = ModelFile::load(&dir.path().join("ens.safetensors")).unwrap();
    assert_eq!(ens.member_weights(0).unwrap(), one.weights);

    // Fitted one after another, the networks are those fitted at once on two threads.
    let o = train(
        dir.path(),
        "--split train -o seq.safetensors --members 2 --seed 5 --jobs 1 --json",
    );
    assert_ok(&o);
    let summary: Value = serde_json::from_slice(&o.stdout).expect("train --json prints one JSON object");
    assert_eq!(summary["jobs"], 1);
    let seq = ModelFile::load(&dir.path().join("seq.safetensors")).unwrap();
    for member in 0..2 {
        assert_eq!(
            seq.member_weights(member).unwrap(),
            ens.member_weights(member).unwrap(),
            "network {member}"
        );
    }
}

#[test]
fn a_draw_of_characters_trains_on_that_many() {
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    let o = train(dir.path(), "--split train -o one.safetensors --characters 1 --json");
    assert_ok(&o);
    let summary: Value = serde_json::from_slice(&o.stdout).expect("train --json prints one JSON object");
    assert_eq!(summary["characters"], 1);
    let model = ModelFile::load(&dir.path().join("one.safetensors")).unwrap();
    let assets = &model.metadata["rigml.train.assets"];
    assert!(
        ["quaternius-platformer-game-skull", "quaternius-fish-dolphin"].contains(&assets.as_str()),
        "{assets}"
    );
}

#[test]
fn resuming_an_ensemble_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    std::fs::write(dir.path().join("old.safetensors"), b"not read").unwrap();
    let o = train(dir.path(), "-o m.safetensors --members 3 --resume old.safetensors");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--members 3"), "{}", stderr(&o));
    assert!(!dir.path().join("m.safetensors").exists());
    let o = train(dir.path(), "-o m.safetensors --members 0");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = train(dir.path(), "-o m.safetensors --stretched-copies 17");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--stretched-copies"), "{}", stderr(&o));
    let o = train(dir.path(), "-o m.safetensors --characters 3");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("characters 3: the manifest has only 2"),
        "{}",
        stderr(&o)
    );
    let o = train(dir.path(), "-o m.safetensors --characters 0");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = train(dir.path(), "-o m.safetensors --posed-copies 100000");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--posed-copies"), "{}", stderr(&o));
    assert!(!dir.path().join("m.safetensors").exists());
}

#[test]
fn the_skeleton_trainer_writes_a_model_its_curves_and_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    let line = "train-skeleton --data manifest.tsv --split train -o skel.safetensors --steps 4 --batch 2 \
                --hidden 8 --copies 0 --no-mirror --val-every 2 --checkpoint-every 2 --json";
    let o = rigml(dir.path(), &line.split_whitespace().collect::<Vec<_>>());
    assert_ok(&o);
    let summary: Value = serde_json::from_slice(&o.stdout).expect("train-skeleton --json prints one JSON object");
    assert_eq!(summary["steps"], 4, "{summary}");
    if !cfg!(feature = "wgpu") {
        assert_eq!(
            summary["device"],
            rigml_learn::training_device_name().unwrap(),
            "the CPU build trains on the CPU"
        );
    }
    for file in ["skel.safetensors", "skel-curves.png", "skel.safetensors.ckpt"] {
        assert!(dir.path().join(file).is_file(), "{file} missing");
    }
    let checkpoint = ModelFile::read(
        &std::fs::read(dir.path().join("skel.safetensors.ckpt")).unwrap(),
        "ckpt",
    )
    .unwrap();
    assert_eq!(
        checkpoint
            .metadata
            .get(rigml_learn::skeleton::train::KEY_STEP)
            .map(String::as_str),
        Some("2")
    );
}

#[test]
fn skeleton_models_are_cross_validated_by_family_and_used_by_rig() {
    // The two train families of the small manifest, one held out per fold, as for the skin
    // model below; the fold models then place the held-out family's skeleton in `rigml eval`.
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    let mut held_out = Vec::new();
    for fold in 1..=2 {
        let line = format!(
            "train-skeleton --data manifest.tsv --split train -o skel{fold}.safetensors --steps 2 --batch 2 \
             --hidden 8 --copies 0 --no-mirror --checkpoint-every 0 --hold-out-fold {fold}/2 --json"
        );
        let o = rigml(dir.path(), &line.split_whitespace().collect::<Vec<_>>());
        assert_ok(&o);
        let summary: Value = serde_json::from_slice(&o.stdout).expect("train-skeleton --json prints one JSON object");
        assert_eq!(summary["characters"], 1, "fold {fold}: {summary}");
        let path = dir.path().join(format!("skel{fold}.safetensors"));
        let model = ModelFile::read(&std::fs::read(&path).unwrap(), "skel").unwrap();
        assert_eq!(
            model.metadata["rigml.skeleton.train.hold_out_fold"],
            format!("{fold}/2")
        );
        held_out.push(model.metadata["rigml.skeleton.train.assets"].clone());
    }
    held_out.sort();
    assert!(
        held_out[0].starts_with("quaternius-fish-dolphin")
            && held_out[1].starts_with("quaternius-platformer-game-skull"),
        "{held_out:?}"
    );
    let eval = |args: &str| {
        let line = format!("eval --data manifest.tsv --split train --no-deformation {args}");
        rigml(dir.path(), &line.split_whitespace().collect::<Vec<_>>())
    };
    assert_ok(&eval(
        "--methods rig-learned,rig-curve --folds 2 --fold-skeleton-models skel{}.safetensors -o cv",
    ));
    let csv = std::fs::read_to_string(dir.path().join("cv/per_family.csv")).unwrap();
    for family in [
        "quaternius/fish_pack,rig-learned,1",
        "quaternius/platformer_game_pack,rig-learned,1",
    ] {
        assert!(csv.lines().any(|l| l.starts_with(family)), "{family} not in\n{csv}");
    }
    // --folds without any fold model is refused before any work, naming both flags.
    let o = eval("--methods rig-learned --folds 2 -o bad");
    assert!(
        !o.status.success() && stderr(&o).contains("--fold-skeleton-models"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("bad").exists(), "nothing written");

    // `rigml rig` and `rigml eval` take a skeleton model file; a missing one is named.
    let whale = common::rows_where("id", "quaternius-fish-whale")[0].path();
    let whale = whale.to_str().unwrap();
    let o = rigml(
        dir.path(),
        &[
            "rig",
            whale,
            "--template",
            "learned",
            "--skeleton-model",
            "skel1.safetensors",
            "--skin",
            "nearest",
            "-o",
            "whale.glb",
            "--json",
        ],
    );
    assert_ok(&o);
    assert!(dir.path().join("whale.glb").is_file());
    let o = rigml(
        dir.path(),
        &["rig", whale, "--skeleton-model", "nope.safetensors", "-o", "nope.glb"],
    );
    assert!(
        !o.status.success() && stderr(&o).contains("nope.safetensors"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("nope.glb").exists());
}

#[test]
fn a_family_grouped_cross_validation_trains_without_each_fold_and_scores_it() {
    // The small manifest's train split holds two families (the platformer pack's skull, the fish
    // pack's dolphin), so with two folds each fold holds one family out.
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    let mut held_out = Vec::new();
    for fold in 1..=2 {
        let o = train(
            dir.path(),
            &format!("--split train -o fold{fold}.safetensors --hold-out-fold {fold}/2 --json"),
        );
        assert_ok(&o);
        let summary: Value = serde_json::from_slice(&o.stdout).expect("train --json prints one JSON object");
        assert_eq!(summary["characters"], 1, "fold {fold}");
        let model = ModelFile::load(&dir.path().join(format!("fold{fold}.safetensors"))).unwrap();
        assert_eq!(model.metadata["rigml.train.hold_out_fold"], format!("{fold}/2"));
        held_out.push(model.metadata["rigml.train.assets"].clone());
    }
    held_out.sort();
    assert_eq!(
        held_out,
        ["quaternius-fish-dolphin", "quaternius-platformer-game-skull"]
    );

    // `rigml eval --data manifest.tsv --split train ARGS` (split at whitespace) in the folder.
    let eval_train = |args: &str| {
        let line = format!("eval --data manifest.tsv --split train {args}");
        rigml(dir.path(), &line.split_whitespace().collect::<Vec<_>>())
    };
    let o = eval_train("--methods learned,nearest --no-deformation --folds 2 --fold-models fold{}.safetensors -o cv");
    assert_ok(&o);
    let csv = std::fs::read_to_string(dir.path().join("cv/per_family.csv")).unwrap();
    for family in [
        "quaternius/fish_pack,learned,1",
        "quaternius/platformer_game_pack,learned,1",
    ] {
        assert!(csv.lines().any(|l| l.starts_with(family)), "{family} not in\n{csv}");
    }
    let summary = std::fs::read_to_string(dir.path().join("cv/summary.md")).unwrap();
    assert!(summary.contains("## Per family: l1_top4"), "{summary}");
    // One fold alone scores only its held-out family.
    assert_ok(&eval_train(
        "--methods nearest --no-deformation --no-pictures --fold 1/2 -o one",
    ));
    let csv = std::fs::read_to_string(dir.path().join("one/per_family.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains(",nearest,")).count(), 2, "{csv}");
    // A template without {} is refused before any work.
    let o = eval_train("--folds 2 --fold-models fold.safetensors -o bad");
    assert!(!o.status.success() && stderr(&o).contains("{}"), "{}", stderr(&o));
    // So is a fold whose model is missing.
    let o = eval_train("--folds 3 --fold-models fold{}.safetensors -o bad");
    assert!(
        !o.status.success() && stderr(&o).contains("fold3.safetensors"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("bad").exists(), "nothing written");
    // More folds than the split has families: refused before any work, by eval and by train.
    std::fs::copy(
        dir.path().join("fold1.safetensors"),
        dir.path().join("fold3.safetensors"),
    )
    .unwrap();
    let o = eval_train("--folds 3 --fold-models fold{}.safetensors -o bad");
    assert!(
        !o.status.success() && stderr(&o).contains("fold 3/3: holds no family"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("bad").exists(), "nothing written");
    let o = train(dir.path(), "--split train -o none.safetensors --hold-out-fold 3/3");
    assert!(
        !o.status.success() && stderr(&o).contains("fold 3/3: holds no family"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("none.safetensors").exists());
    // A blend of two solvers is a method of its own; a blend without a share, or with a share
    // outside [0, 1], is refused before any work.
    let eval =
        |methods: &str, out: &str| eval_train(&format!("--methods {methods} --no-deformation --no-pictures -o {out}"));
    assert_ok(&eval("nearest,nearest+heat:0.5", "blend"));
    let csv = std::fs::read_to_string(dir.path().join("blend/per_asset.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.contains(",nearest+heat:0.5,")).count(),
        2,
        "{csv}"
    );
    // A rigger with or without one of its control rules is a method of its own too.
    assert_ok(&eval("rig-detect:no-ground-root:poles", "rules"));
    let csv = std::fs::read_to_string(dir.path().join("rules/per_asset.csv")).unwrap();
    assert_eq!(
        csv.lines()
            .filter(|l| l.contains(",rig-detect:no-ground-root:poles,"))
            .count(),
        2,
        "{csv}"
    );
    for bad in ["nearest+heat", "nearest+heat:2", "nearest+heat:x", "rig-detect:no-feet"] {
        let o = eval(bad, "bad");
        assert!(!o.status.success() && stderr(&o).contains(bad), "{bad}: {}", stderr(&o));
        assert!(!dir.path().join("bad").exists(), "{bad}: nothing written");
    }
}

#[test]
fn a_hook_that_stops_networks_fitted_at_once_stops_them_all() {
    use rigml::train::{train_skin, Progress, SkinRecipe};
    use rigml_learn::train::{TrainConfig, TrainEvent};
    let dir = tempfile::tempdir().unwrap();
    small_manifest(dir.path());
    let dataset = rigml_eval::dataset::Dataset::open(&dir.path().join("manifest.tsv")).unwrap();
    let recipe = SkinRecipe {
        config: TrainConfig {
            steps: 50,
            batch: 64,
            hidden: 6,
            val_every: 0,
            checkpoint_every: 0,
            ..TrainConfig::default()
        },
        members: 3,
        jobs: 2,
        sampling: rigml_learn::sample::SampleOptions {
            max_vertices: 150,
            ..Default::default()
        },
        ..SkinRecipe::default()
    };
    let mut started = Vec::new();
    let mut steps_after_stop = 0;
    let mut stopped = false;
    let result = train_skin(&dataset, &recipe, None, &mut |p| {
        match p {
            Progress::Member { index, .. } => started.push(index),
            Progress::Fit {
                event: TrainEvent::Step { step, .. },
                ..
            } => {
                if stopped {
                    steps_after_stop += 1;
                }
                if step == 5 {
                    stopped = true;
                    return Err(rigml_learn::LearnError::Train("enough".into()));
                }
            }
            _ => {}
        }
        Ok(())
    });
    let e = result.expect_err("the hook's error ends the run");
    assert!(e.to_string().contains("enough"), "{e}");
    assert!(!started.contains(&2), "no network starts after the stop: {started:?}");
    assert_eq!(steps_after_stop, 0, "no event reaches the hook after it asked to stop");
}
