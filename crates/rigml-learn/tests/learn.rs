//! rigml-learn on real characters: feature invariants, a tiny training run whose loss falls
//! and whose saved model reloads to identical predictions, and the solver's outputs obeying
//! the influence cap and normalisation.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use rigml_core::Character;
use rigml_learn::features::{self, CANDIDATES, FEATURES, PATCH_DIMS, PATCH_POINTS};
use rigml_learn::sample::{character_samples, SampleOptions, Samples};
use rigml_learn::train::{train, TrainConfig};
use rigml_learn::{Learned, ModelFile};
use rigml_skin::post::Prepared;
use rigml_skin::{check, SkinSolver, SolveOptions};
use std::collections::HashMap;

fn load(id: &str) -> Character {
    rigml_io::load(&common::asset(id)).unwrap_or_else(|e| panic!("{id}: {e}"))
}

#[test]
fn features_do_not_change_when_the_character_is_scaled() {
    let fox = load("khronos-fox");
    let mut big = fox.clone();
    for p in &mut big.mesh.positions {
        *p *= 100.0;
    }
    for t in &mut big.skeleton.rest_local {
        t.translation *= 100.0;
    }
    big.skeleton.bind_to_rest();
    let mut small = fox.clone();
    small.skeleton.bind_to_rest();
    // The last layout (the inside share in place of the root flag, voxel binding's weights in
    // two slots) is checked here; the others differ from it in those three slots.
    let version = *features::FEATURE_VERSIONS.last().unwrap();
    let a = features::extract_with_patches(
        &Prepared::new(&small.mesh, &small.skeleton).unwrap(),
        &small.skeleton.parents,
        version,
    );
    let b = features::extract_with_patches(
        &Prepared::new(&big.mesh, &big.skeleton).unwrap(),
        &big.skeleton.parents,
        version,
    );
    assert_eq!(a.vertex_count, b.vertex_count);
    assert_eq!(a.values.len(), a.vertex_count * CANDIDATES * FEATURES);
    let mut worst = 0.0f32;
    let mut same_joints = 0usize;
    for v in 0..a.vertex_count {
        let ja = &a.joints[v * CANDIDATES..(v + 1) * CANDIDATES];
        let jb = &b.joints[v * CANDIDATES..(v + 1) * CANDIDATES];
        if ja != jb {
            continue; // a near-tie in distance may swap two candidates
        }
        same_joints += 1;
        for k in 0..CANDIDATES {
            for (x, y) in a.pair(v, k).iter().zip(b.pair(v, k)) {
                worst = worst.max((x - y).abs() / (1.0 + x.abs()));
            }
        }
    }
    assert!(
        same_joints * 100 >= a.vertex_count * 99,
        "{same_joints} of {}",
        a.vertex_count
    );
    assert!(worst < 2e-3, "largest relative feature change {worst}");
    assert!(a.values.iter().all(|x| x.is_finite()));
    // The surface patches are in normalised units too; the vertex itself is its patch's first
    // point, and every point lies within the patch's reach.
    assert_eq!(a.patch.len(), a.vertex_count * PATCH_POINTS * PATCH_DIMS);
    let worst_patch = a
        .patch
        .iter()
        .zip(&b.patch)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(worst_patch < 1e-3, "largest patch change {worst_patch}");
    for patch in a.patch.chunks_exact(PATCH_POINTS * PATCH_DIMS) {
        assert!(patch[..3].iter().all(|x| x.abs() < 1e-6));
        for point in patch.chunks_exact(PATCH_DIMS) {
            let reach = (point[0] * point[0] + point[1] * point[1] + point[2] * point[2]).sqrt();
            assert!(reach <= 1.0 + 1e-4 && point[3].abs() <= 1.0 + 1e-4, "{point:?}");
        }
    }
}

#[test]
fn a_tiny_model_learns_and_reloads_to_identical_predictions() {
    tiny_model_learns_and_reloads(0);
}

#[test]
fn a_tiny_model_with_a_point_encoder_learns_and_reloads_to_identical_predictions() {
    tiny_model_learns_and_reloads(8);
}

/// A few steps on three characters lower the loss, and the saved model (with a point encoder
/// of width `patch`, 0 = none) reloads to identical predictions.
fn tiny_model_learns_and_reloads(patch: usize) {
    let options = SampleOptions {
        max_vertices: 300,
        posed_copies: 1,
        stretched_copies: 0,
        subdivided_copies: 0,
        coarse_copies: 0,
        seed: 7,
        feature_version: features::FEATURE_VERSION,
    };
    let mut samples = Samples::default();
    for (i, id) in [
        "khronos-fox",
        "quaternius-fish-dolphin",
        "quaternius-platformer-game-skull",
    ]
    .iter()
    .enumerate()
    {
        let c = load(id);
        samples.append(character_samples(id, &c, &options).unwrap(), i as u32);
    }
    assert!(samples.len() > 600);
    assert!(samples.coverage_loss.iter().all(|c| (0.0..=1.0).contains(c)));
    let config = TrainConfig {
        steps: 60,
        batch: 256,
        learning_rate: 1e-2,
        hidden: 16,
        patch,
        val_every: 0,
        checkpoint_every: 0,
        ..TrainConfig::default()
    };
    let mut events = 0;
    let (model, history) = train(&samples, None, &config, None, &HashMap::new(), &mut |_| {
        events += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(events, 60);
    let mean = |r: &[(usize, rigml_learn::train::Losses)]| r.iter().map(|e| e.1.total).sum::<f32>() / r.len() as f32;
    let (first, last) = (mean(&history.train[..10]), mean(&history.train[50..]));
    assert!(last < 0.8 * first, "loss {first} -> {last}");

    let bytes = model.to_bytes().unwrap();
    let reloaded = ModelFile::from_bytes(&bytes, "memory").unwrap();
    assert_eq!(reloaded, model);
    let fox = load("khronos-fox");
    let prep = Prepared::new(&fox.mesh, &fox.skeleton).unwrap();
    let feats = features::extract_with_patches(&prep, &fox.skeleton.parents, features::FEATURE_VERSION);
    assert_eq!(model.weights.contains_key("patch1.weight"), patch > 0);
    let solver = Learned::new(model);
    let p1 = solver.probabilities(&feats).unwrap();
    let p2 = Learned::new(reloaded).probabilities(&feats).unwrap();
    assert_eq!(p1, p2);
    // A network with a point encoder reads the patches; one without ignores them.
    let mut flat = feats.clone();
    flat.patch.fill(0.0);
    assert_eq!(solver.probabilities(&flat).unwrap() == p1, patch == 0);
    assert!(ModelFile::from_bytes(&bytes[..bytes.len() / 2], "half").is_err());
}

#[test]
fn learned_weights_obey_the_cap_and_normalisation_on_real_characters() {
    let options = SampleOptions {
        max_vertices: 200,
        posed_copies: 0,
        stretched_copies: 0,
        subdivided_copies: 0,
        coarse_copies: 0,
        seed: 3,
        feature_version: features::FEATURE_VERSION,
    };
    let fox = load("khronos-fox");
    let samples = character_samples("khronos-fox", &fox, &options).unwrap();
    let config = TrainConfig {
        steps: 5,
        batch: 64,
        hidden: 8,
        val_every: 0,
        checkpoint_every: 0,
        ..TrainConfig::default()
    };
    let (model, _) = train(&samples, None, &config, None, &HashMap::new(), &mut |_| Ok(())).unwrap();
    let solver = Learned::new(model);
    for id in ["godot-platformer-robot", "quaternius-cute-fish-shark"] {
        let c = load(id);
        let skin = solver.solve(&c.mesh, &c.skeleton, &SolveOptions::default()).unwrap();
        let prep = Prepared::new(&c.mesh, &c.skeleton).unwrap();
        let failures = check::failures(&skin, c.mesh.vertex_count(), 4, &prep.bones);
        assert!(failures.is_empty(), "{id}: {failures:?}");
    }
}

#[test]
fn the_embedded_model_loads_and_names_its_thresholds() {
    let learned = Learned::embedded().unwrap();
    assert!(learned.relative > 0.0 && learned.relative < 1.0);
    assert!(learned.model().metadata.contains_key("rigml.train.command"));
    // The smoothing and sharpening chosen on val are stored too, and in range.
    for key in [rigml_learn::infer::KEY_SMOOTH, rigml_learn::infer::KEY_SHARPEN] {
        assert!(learned.model().metadata.contains_key(key), "{key} missing");
    }
    assert!(learned.smooth <= rigml_learn::infer::MAX_SMOOTH);
    assert!(learned.sharpen >= 1.0 && learned.sharpen.is_finite());
}

#[test]
fn the_embedded_model_is_the_176_character_ensemble_and_skins_within_its_cap() {
    // models/skin-default.safetensors: five networks fitted on the grown train split (176
    // characters) with feature layout 5 and the voxel prior (docs/model-card-skin.md).
    let learned = Learned::embedded().unwrap();
    let model = learned.model();
    assert_eq!(model.member_count().unwrap(), 5);
    let assets = model.metadata["rigml.train.assets"].split(',').count();
    assert_eq!(assets, 176, "trained on the whole grown train split");
    assert_eq!(model.feature_version(), Some(5));
    let voxel_scales = model
        .weights
        .keys()
        .filter(|k| k.ends_with("prior_voxel.scale"))
        .count();
    assert_eq!(voxel_scales, 5, "every member corrects voxel binding");
    let character = load("quaternius-fish-whale");
    let options = SolveOptions::default();
    let skin = learned.solve(&character.mesh, &character.skeleton, &options).unwrap();
    assert_eq!(skin.vertex_count(), character.mesh.positions.len());
    assert!(skin.influences_max() <= options.max_influences);
    assert_eq!(skin.unskinned_count(), 0);
}

/// Version 4's inside share, read off the features of every candidate slot that holds `joint`.
fn inside_share(character: &Character, joint: u32) -> f32 {
    let prep = Prepared::new(&character.mesh, &character.skeleton).unwrap();
    let feats = features::extract(&prep, &character.skeleton.parents, 4);
    let slot = (0..feats.joints.len())
        .find(|&i| feats.joints[i] == joint)
        .unwrap_or_else(|| panic!("{}: joint {joint} is never a candidate", character.name));
    feats.values[slot * FEATURES + features::ROOT_OR_INSIDE]
}

#[test]
fn the_inside_share_tells_a_body_root_from_a_ground_root() {
    // The cute fish's root is its front body (about half of the GT weight); the ultimate
    // monsters' 43-joint rig stands on a weightless root on the ground plane.
    let fish = load("quaternius-cute-fish-royalgramma");
    let monster = load("quaternius-ultimate-monsters-frog");
    let root = |c: &Character| c.skeleton.parents.iter().position(Option::is_none).unwrap() as u32;
    let (body, ground) = (inside_share(&fish, root(&fish)), inside_share(&monster, root(&monster)));
    assert!(body >= 0.8, "fish root {body}");
    assert!(ground <= 0.5, "ground root {ground}");
}
