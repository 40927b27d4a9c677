//! The skin network's training loop in burn (the `train` feature): batches as tensors, the
//! losses, validation, and the Adam loop with checkpoints.

use super::{History, Losses, TrainConfig, TrainEvent, KEY_STEP};
use crate::features::{CANDIDATES, FEATURES, PATCH_DIMS, PATCH_POINTS};
use crate::model::{ModelFile, NetConfig};
use crate::net::{tensor_values, Net};
use crate::sample::{Samples, DEFORM, POSES};
use crate::{training_device, LearnError};
use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Tensor, TensorData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// Held while a network's initial parameters are drawn from the backend's seeded source.
static INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// One batch as tensors.
struct Batch {
    x: Tensor<3>,
    mask: Tensor<2>,
    target: Tensor<2>,
    deform: Tensor<3>,
    patch: Tensor<3>,
}

fn batch(samples: &Samples, index: &[usize], device: &Device) -> Batch {
    let b = index.len();
    let mut x = Vec::with_capacity(b * CANDIDATES * FEATURES);
    let mut mask = Vec::with_capacity(b * CANDIDATES);
    let mut target = Vec::with_capacity(b * CANDIDATES);
    let mut deform = Vec::with_capacity(b * CANDIDATES * DEFORM);
    let points = PATCH_POINTS * PATCH_DIMS;
    let mut patch = Vec::with_capacity(b * points);
    for &i in index {
        patch.extend_from_slice(&samples.patch[i * points..(i + 1) * points]);
        x.extend_from_slice(&samples.x[i * CANDIDATES * FEATURES..(i + 1) * CANDIDATES * FEATURES]);
        mask.extend_from_slice(&samples.mask[i * CANDIDATES..(i + 1) * CANDIDATES]);
        target.extend_from_slice(&samples.target[i * CANDIDATES..(i + 1) * CANDIDATES]);
        deform.extend_from_slice(&samples.deform[i * CANDIDATES * DEFORM..(i + 1) * CANDIDATES * DEFORM]);
    }
    Batch {
        x: Tensor::from_data(TensorData::new(x, [b, CANDIDATES, FEATURES]), device),
        mask: Tensor::from_data(TensorData::new(mask, [b, CANDIDATES]), device),
        target: Tensor::from_data(TensorData::new(target, [b, CANDIDATES]), device),
        deform: Tensor::from_data(TensorData::new(deform, [b, CANDIDATES, DEFORM]), device),
        patch: Tensor::from_data(TensorData::new(patch, [b, PATCH_POINTS, PATCH_DIMS]), device),
    }
}

/// `(total, kl, deform)` loss tensors (each of one element) of a batch.
fn losses(net: &Net, batch: Batch, deform_weight: f32) -> (Tensor<1>, Tensor<1>, Tensor<1>) {
    let [b, k] = batch.mask.dims();
    let log_p = net.log_probs(batch.x, batch.mask, batch.patch);
    let kl = (batch.target.clone() * log_p.clone()).sum_dim(1).neg().mean();
    // Rows without GT mass in the candidates have an all-zero target: no deformation term.
    let valid = batch.target.clone().sum_dim(1).reshape([b, 1, 1]);
    let diff = (log_p.exp() - batch.target).reshape([b, k, 1]);
    let moved = (diff * batch.deform).sum_dim(1).reshape([b, POSES, 3]);
    let err = (moved.powi_scalar(2).sum_dim(2) + 1e-10).sqrt() * valid;
    let deform = err.mean();
    let total = kl.clone() + deform.clone() * deform_weight;
    (total, kl, deform)
}

fn scalar(t: Tensor<1>) -> f32 {
    tensor_values(t.into_data()).first().copied().unwrap_or(f32::NAN)
}

/// Mean losses of `net` over (up to `limit` evenly spaced) samples, without gradients, on the
/// device the network lives on.
pub fn evaluate(net: &Net, samples: &Samples, deform_weight: f32, limit: usize) -> Losses {
    let device = net.device();
    let n = samples.len();
    if n == 0 {
        return Losses::default();
    }
    let take = limit.clamp(1, n);
    let index: Vec<usize> = (0..take).map(|i| i * n / take).collect();
    let mut sum = Losses::default();
    let mut count = 0.0f32;
    for chunk in index.chunks(4096) {
        let (total, kl, deform) = losses(net, batch(samples, chunk, &device), deform_weight);
        let w = chunk.len() as f32;
        sum.total += scalar(total) * w;
        sum.kl += scalar(kl) * w;
        sum.deform += scalar(deform) * w;
        count += w;
    }
    Losses {
        total: sum.total / count,
        kl: sum.kl / count,
        deform: sum.deform / count,
    }
}

/// How batch samples are drawn: uniformly over all samples, or a group by its weight and then
/// one of its samples ([`TrainConfig::groups`], [`TrainConfig::group_balance`]).
enum Draw {
    Uniform(usize),
    Grouped {
        members: Vec<Vec<usize>>,
        /// Running sum of the groups' weights (the last is the total).
        cumulative: Vec<f64>,
    },
}

impl Draw {
    fn new(train: &Samples, groups: &[u32], balance: f32) -> Result<Draw, LearnError> {
        if groups.is_empty() {
            return Ok(Draw::Uniform(train.len()));
        }
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (i, &asset) in train.asset.iter().enumerate() {
            let group = *groups.get(asset as usize).ok_or_else(|| {
                LearnError::Train(format!(
                    "sample {i} comes from asset {asset}, but groups are given for {} assets",
                    groups.len()
                ))
            })? as usize;
            if members.len() <= group {
                members.resize(group + 1, Vec::new());
            }
            members[group].push(i);
        }
        members.retain(|m| !m.is_empty());
        let exponent = 1.0 - f64::from(balance);
        let cumulative = members
            .iter()
            .scan(0.0, |sum, m| {
                *sum += (m.len() as f64).powf(exponent);
                Some(*sum)
            })
            .collect();
        Ok(Draw::Grouped { members, cumulative })
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> usize {
        match self {
            Draw::Uniform(n) => rng.random_range(0..*n),
            Draw::Grouped { members, cumulative } => {
                let total = cumulative[cumulative.len() - 1];
                let at = rng.random_range(0.0..total);
                let g = cumulative.partition_point(|&c| c <= at).min(members.len() - 1);
                let group = &members[g];
                group[rng.random_range(0..group.len())]
            }
        }
    }
}

/// Train a network on `train` (validating on `val`). `resume` continues from a saved model
/// (its weights and step count; the optimiser moments restart from zero). `metadata` is
/// stored in every model emitted. `on_event` may stop the run by returning an error.
pub fn train(
    train: &Samples,
    val: Option<&Samples>,
    config: &TrainConfig,
    resume: Option<&ModelFile>,
    metadata: &HashMap<String, String>,
    on_event: &mut dyn FnMut(TrainEvent) -> Result<(), LearnError>,
) -> Result<(ModelFile, History), LearnError> {
    if train.is_empty() {
        return Err(LearnError::Train("no training samples".into()));
    }
    for (what, samples) in [("training", Some(train)), ("validation", val)] {
        if samples.is_some_and(|s| !s.is_whole()) {
            return Err(LearnError::Train(format!(
                "the {what} samples' arrays do not all describe the same samples"
            )));
        }
    }
    config.validate()?;
    let device = training_device()?.autodiff();
    // The backend's random source is one per process: seeding it and drawing the initial
    // parameters happen under one lock, so that networks fitted on several threads at once
    // (`rigml train --jobs`) each start from their own seed's values.
    let init = INIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    device.seed(config.seed);
    let (mut net, first_step) = match resume {
        Some(model) => {
            let step = model.metadata.get(KEY_STEP).and_then(|s| s.parse().ok()).unwrap_or(0);
            (model.net(&device)?, step)
        }
        None => (
            Net::new(
                NetConfig {
                    hidden: config.hidden,
                    patch: config.patch,
                    prior: config.prior,
                    voxel_prior: config.voxel_prior,
                },
                &device,
            ),
            0,
        ),
    };
    if config.fixed_prior_scale {
        net = net.with_fixed_prior_scales();
    }
    drop(init);
    let mut optimizer = AdamConfig::new().init();
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x5eed_ba7c);
    let draw = Draw::new(train, &config.groups, config.group_balance)?;
    // A resumed run replays the batch stream so that it sees what an uninterrupted run would.
    for _ in 0..first_step * config.batch {
        draw.sample(&mut rng);
    }
    let model_at = |net: &Net, step: usize| {
        let mut meta = metadata.clone();
        meta.insert(KEY_STEP.into(), step.to_string());
        ModelFile::from_net(&net.valid(), meta)
    };
    let mut history = History::default();
    let val_limit = 20_000;
    for step in first_step..config.steps {
        let lr = crate::train::cosine_rate(config.learning_rate, step, config.steps);
        let index: Vec<usize> = (0..config.batch).map(|_| draw.sample(&mut rng)).collect();
        let (total, kl, deform) = losses(&net, batch(train, &index, &device), config.deform_weight);
        let grads = GradientsParams::from_grads(total.backward(), &net);
        net = optimizer.step(lr, net, grads);
        let losses = Losses {
            total: scalar(total),
            kl: scalar(kl),
            deform: scalar(deform),
        };
        if !losses.total.is_finite() {
            return Err(LearnError::Train(format!(
                "the loss became {} at step {step}",
                losses.total
            )));
        }
        history.train.push((step + 1, losses));
        on_event(TrainEvent::Step {
            step: step + 1,
            total: config.steps,
            losses,
        })?;
        let last = step + 1 == config.steps;
        if let Some(val) = val {
            if last || (config.val_every > 0 && (step + 1) % config.val_every == 0) {
                let losses = evaluate(&net.valid(), val, config.deform_weight, val_limit);
                history.val.push((step + 1, losses));
                on_event(TrainEvent::Val { step: step + 1, losses })?;
            }
        }
        if config.checkpoint_every > 0 && (step + 1) % config.checkpoint_every == 0 && !last {
            let model = model_at(&net, step + 1);
            on_event(TrainEvent::Checkpoint {
                step: step + 1,
                model: &model,
            })?;
        }
    }
    Ok((model_at(&net, config.steps.max(first_step)), history))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::MAX_HIDDEN;

    #[test]
    fn ragged_samples_are_refused() {
        let mut target = vec![0.0; CANDIDATES];
        target[0] = 1.0;
        let whole = Samples {
            x: vec![0.0; CANDIDATES * FEATURES],
            mask: vec![1.0; CANDIDATES],
            target,
            deform: vec![0.0; CANDIDATES * DEFORM],
            patch: vec![0.0; PATCH_POINTS * PATCH_DIMS],
            asset: vec![0],
            coverage_loss: vec![0.0],
        };
        assert!(whole.is_whole());
        let config = TrainConfig {
            steps: 1,
            batch: 1,
            hidden: 2,
            patch: 2,
            val_every: 0,
            checkpoint_every: 0,
            ..TrainConfig::default()
        };
        let run = |train: &Samples, val: Option<&Samples>| {
            super::train(train, val, &config, None, &HashMap::new(), &mut |_| Ok(())).map(|_| ())
        };
        assert!(run(&whole, Some(&whole)).is_ok());
        let mut ragged = whole.clone();
        ragged.patch.pop();
        assert!(!ragged.is_whole());
        assert!(matches!(run(&ragged, None), Err(LearnError::Train(_))));
        assert!(matches!(run(&whole, Some(&ragged)), Err(LearnError::Train(_))));
    }

    #[test]
    fn a_fixed_prior_scale_stays_at_one_and_a_free_one_is_learnt() {
        // Two candidates whose voxel shares (0.2, 0.8) disagree with the target (the first):
        // a learnt scale moves, a fixed one stays at 1 while the rest of the network trains.
        let mut x = vec![0.0; CANDIDATES * FEATURES];
        x[crate::features::VOXEL_SHARE] = 0.2;
        x[FEATURES + crate::features::VOXEL_SHARE] = 0.8;
        let mut mask = vec![0.0; CANDIDATES];
        mask[..2].fill(1.0);
        let mut target = vec![0.0; CANDIDATES];
        target[0] = 1.0;
        let samples = Samples {
            x,
            mask,
            target,
            deform: vec![0.0; CANDIDATES * DEFORM],
            patch: vec![0.0; PATCH_POINTS * PATCH_DIMS],
            asset: vec![0],
            coverage_loss: vec![0.0],
        };
        let scale_after = |fixed: bool| {
            let config = TrainConfig {
                steps: 20,
                batch: 4,
                hidden: 4,
                voxel_prior: true,
                fixed_prior_scale: fixed,
                val_every: 0,
                checkpoint_every: 0,
                ..TrainConfig::default()
            };
            let (model, _) = super::train(&samples, None, &config, None, &HashMap::new(), &mut |_| Ok(())).unwrap();
            crate::model::voxel_prior_scale(&model.weights).unwrap()
        };
        assert_eq!(scale_after(true), 1.0);
        assert!((scale_after(false) - 1.0).abs() > 1e-3);
        // Without a prior there is nothing to fix.
        let no_prior = TrainConfig {
            fixed_prior_scale: true,
            ..TrainConfig::default()
        };
        assert!(matches!(no_prior.validate(), Err(LearnError::Train(_))));
    }

    #[test]
    fn grouped_draws_weigh_every_group_the_same() {
        // Assets 0 and 1 form group 0 (90 samples), asset 2 group 1 (10 samples).
        let samples = Samples {
            asset: (0..100)
                .map(|i| {
                    if i < 45 {
                        0
                    } else if i < 90 {
                        1
                    } else {
                        2
                    }
                })
                .collect(),
            ..Samples::default()
        };
        let draw = Draw::new(&samples, &[0, 0, 1], 1.0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let small = (0..10_000).filter(|_| draw.sample(&mut rng) >= 90).count();
        assert!((4_700..5_300).contains(&small), "{small} of 10000 from the small group");
        assert!(matches!(Draw::new(&samples, &[0, 0], 1.0), Err(LearnError::Train(_))));
        let uniform = Draw::new(&samples, &[], 1.0).unwrap();
        let small = (0..10_000).filter(|_| uniform.sample(&mut rng) >= 90).count();
        assert!((800..1_200).contains(&small), "{small} of 10000 uniformly");
        // Balance 0 weighs groups by their size (as a uniform draw does); 0.5 by its square
        // root: 10^0.5 / (90^0.5 + 10^0.5) = 0.25 of the draws from the small group.
        let by_size = Draw::new(&samples, &[0, 0, 1], 0.0).unwrap();
        let small = (0..10_000).filter(|_| by_size.sample(&mut rng) >= 90).count();
        assert!((800..1_200).contains(&small), "{small} of 10000 balanced 0");
        let half = Draw::new(&samples, &[0, 0, 1], 0.5).unwrap();
        let small = (0..10_000).filter(|_| half.sample(&mut rng) >= 90).count();
        assert!((2_200..2_800).contains(&small), "{small} of 10000 balanced 0.5");
    }

    #[test]
    fn settings_that_cannot_train_are_refused() {
        assert!(TrainConfig::default().validate().is_ok());
        let bad = [
            TrainConfig {
                group_balance: 1.5,
                ..TrainConfig::default()
            },
            TrainConfig {
                group_balance: f32::NAN,
                ..TrainConfig::default()
            },
            TrainConfig {
                steps: 0,
                ..TrainConfig::default()
            },
            TrainConfig {
                batch: 0,
                ..TrainConfig::default()
            },
            TrainConfig {
                hidden: 0,
                ..TrainConfig::default()
            },
            TrainConfig {
                hidden: MAX_HIDDEN + 1,
                ..TrainConfig::default()
            },
            TrainConfig {
                learning_rate: 0.0,
                ..TrainConfig::default()
            },
            TrainConfig {
                learning_rate: -1e-3,
                ..TrainConfig::default()
            },
            TrainConfig {
                learning_rate: f64::NAN,
                ..TrainConfig::default()
            },
            TrainConfig {
                learning_rate: f64::INFINITY,
                ..TrainConfig::default()
            },
            TrainConfig {
                deform_weight: -0.5,
                ..TrainConfig::default()
            },
            TrainConfig {
                deform_weight: f32::NAN,
                ..TrainConfig::default()
            },
        ];
        for config in &bad {
            assert!(
                matches!(config.validate(), Err(LearnError::Train(_))),
                "{config:?} was accepted"
            );
        }
        // A zero deformation weight (KL only) is a valid choice.
        let kl_only = TrainConfig {
            deform_weight: 0.0,
            ..TrainConfig::default()
        };
        assert!(kl_only.validate().is_ok());
    }
}
