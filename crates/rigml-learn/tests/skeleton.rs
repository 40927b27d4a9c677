//! The learned skeleton predictor on real characters: a tiny training run on three small train
//! characters whose loss falls and whose saved model reloads to identical predictions and
//! skeletons; broken model files are refused with a clear error.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use rigml_core::Character;
use rigml_learn::skeleton::data::{character_shapes, Augment};
use rigml_learn::skeleton::net::{self, KEY_VERSION};
use rigml_learn::skeleton::points::{FEATURES, POINTS, TARGETS};
use rigml_learn::skeleton::train::{evaluate, train, Config};
use rigml_learn::skeleton::Predictor;
use rigml_learn::{LearnError, ModelFile};
use std::collections::HashMap;

fn load(id: &str) -> Character {
    let rows = common::manifest();
    let row = rows
        .iter()
        .find(|r| r.id() == id)
        .unwrap_or_else(|| panic!("{id} not in the manifest"));
    assert_eq!(row.get("split"), "train", "{id}: tests fit on train characters only");
    rigml_io::load(&row.path()).unwrap_or_else(|e| panic!("{id}: {e}"))
}

#[test]
fn a_tiny_run_lowers_the_loss_and_the_saved_model_predicts_the_same() {
    let ids = [
        "quaternius-fish-dolphin",
        "quaternius-platformer-game-skull",
        "quaternius-cute-fish-shark",
    ];
    let augment = Augment {
        copies: 1,
        ..Augment::default()
    };
    let mut shapes = Vec::new();
    let mut characters = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let c = load(id);
        let s = character_shapes(&c, &augment, i as u64).unwrap();
        assert_eq!(s.len(), 3, "{id}: bind pose, mirror, one copy");
        for shape in &s {
            assert_eq!(shape.features.len(), POINTS * FEATURES);
            assert_eq!(shape.targets.len(), POINTS * TARGETS);
            assert!(shape.features.iter().chain(&shape.targets).all(|v| v.is_finite()));
        }
        shapes.extend(s);
        characters.push(c);
    }
    let config = Config {
        steps: 40,
        batch: 2,
        hidden: 24,
        learning_rate: 3e-3,
        val_every: 0,
        checkpoint_every: 0,
        seed: 5,
    };
    let device = rigml_learn::device();
    device.seed(config.seed);
    let untrained = net::to_file(&net::SkeletonNet::new(config.hidden, &device), HashMap::new());
    let before = evaluate(&untrained_net(&untrained), &shapes).unwrap();
    let (model, history) = train(&shapes, &[], &config, None, &HashMap::new(), &mut |_| Ok(())).unwrap();
    assert_eq!(history.train.len(), 40);
    let after = evaluate(&untrained_net(&model), &shapes).unwrap();
    assert!(
        after.total < 0.8 * before.total && after.offset < before.offset,
        "loss {before:?} -> {after:?}"
    );
    // Deterministic for a seed.
    let (again, _) = train(&shapes, &[], &config, None, &HashMap::new(), &mut |_| Ok(())).unwrap();
    assert_eq!(again.weights, model.weights);
    // Bytes round trip: same weights, same outputs, same skeleton.
    let bytes = model.to_bytes().unwrap();
    let reloaded = net::from_bytes(&bytes, "memory").unwrap();
    assert_eq!(reloaded.weights, model.weights);
    let (a, b) = (Predictor::new(model).unwrap(), Predictor::new(reloaded).unwrap());
    let feats = &shapes[0].features;
    assert_eq!(a.outputs(feats).unwrap(), b.outputs(feats).unwrap());
    let mesh = &characters[0].mesh;
    let (ta, tb) = (
        a.place(&mesh.positions, &mesh.triangles),
        b.place(&mesh.positions, &mesh.triangles),
    );
    match (ta, tb) {
        (Ok(ta), Ok(tb)) => {
            assert_eq!(ta, tb);
            for (j, p) in ta.parents.iter().enumerate() {
                assert!(p.is_none_or(|p| p < j) && (j == 0) == p.is_none());
            }
        }
        (Err(ea), Err(eb)) => assert_eq!(ea.to_string(), eb.to_string()),
        (x, y) => panic!("reloaded model disagrees: {x:?} vs {y:?}"),
    }
}

fn untrained_net(model: &ModelFile) -> net::SkeletonNet {
    net::SkeletonNet::from_weights(&model.weights, &rigml_learn::device()).unwrap()
}

#[test]
fn broken_model_files_are_refused_with_a_clear_error() {
    let garbage = net::from_bytes(b"not a model", "bad.safetensors").unwrap_err();
    assert!(
        matches!(&garbage, LearnError::ModelFile { path, .. } if path == "bad.safetensors"),
        "{garbage}"
    );
    // The skin model is a model, but not a skeleton model.
    let skin = net::from_bytes(rigml_learn::infer::DEFAULT_MODEL, "skin.safetensors").unwrap_err();
    assert!(skin.to_string().contains(KEY_VERSION), "{skin}");
    // A skeleton model with a missing or damaged tensor.
    let device = rigml_learn::device();
    let mut model = net::to_file(&net::SkeletonNet::new(8, &device), HashMap::new());
    let good = model.clone();
    model.weights.remove("mix.weight");
    let bytes = model.to_bytes().unwrap();
    let parsed = net::from_bytes(&bytes, "cut.safetensors").unwrap();
    let missing = Predictor::new(parsed).unwrap_err();
    assert!(missing.to_string().contains("mix.weight"), "{missing}");
    let mut nan = good.clone();
    if let Some((_, v)) = nan.weights.get_mut("out.bias") {
        v[0] = f32::NAN;
    }
    assert!(Predictor::new(nan).unwrap_err().to_string().contains("non-finite"));
    let mut wrong = good;
    wrong.weights.insert("lift.weight".into(), (vec![3, 3], vec![0.0; 9]));
    assert!(Predictor::new(wrong).unwrap_err().to_string().contains("shape"));
    // A file that does not exist names the file.
    let err = Predictor::from_file(std::path::Path::new("/nonexistent/skel.safetensors")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/skel.safetensors"), "{err}");
}
