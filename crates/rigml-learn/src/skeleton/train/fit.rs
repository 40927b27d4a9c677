//! The skeleton network's training loop in burn (the `train` feature).

use super::{Config, Event, History, Losses, KEY_STEP, OFFSET_WEIGHT, SPACING_WEIGHT};
use crate::model::ModelFile;
use crate::net::tensor_values;
use crate::skeleton::data::Shape;
use crate::skeleton::net::{to_file, SkeletonNet};
use crate::skeleton::points::{FEATURES, POINTS, TARGETS};
use crate::{training_device, LearnError};
use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Tensor, TensorData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

fn batch(shapes: &[Shape], index: &[usize], device: &Device) -> Result<(Tensor<3>, Tensor<3>), LearnError> {
    let b = index.len();
    let mut x = Vec::with_capacity(b * POINTS * FEATURES);
    let mut t = Vec::with_capacity(b * POINTS * TARGETS);
    for &i in index {
        let s = shapes
            .get(i)
            .filter(|s| s.features.len() == POINTS * FEATURES && s.targets.len() == POINTS * TARGETS)
            .ok_or_else(|| LearnError::Train(format!("training cloud {i} is malformed")))?;
        x.extend_from_slice(&s.features);
        t.extend_from_slice(&s.targets);
    }
    Ok((
        Tensor::from_data(TensorData::new(x, [b, POINTS, FEATURES]), device),
        Tensor::from_data(TensorData::new(t, [b, POINTS, TARGETS]), device),
    ))
}

/// `(total, offset, confidence, spacing)` loss tensors of one element each.
fn losses(net: &SkeletonNet, x: Tensor<3>, t: Tensor<3>) -> [Tensor<1>; 4] {
    let out = net.forward(x);
    let offset = (out.clone().narrow(2, 0, 3) - t.clone().narrow(2, 0, 3))
        .abs()
        .sum_dim(2)
        .mean();
    let logit = out.clone().narrow(2, 3, 1);
    let target = t.clone().narrow(2, 3, 1);
    let bce = (logit.clone().clamp_min(0.0) - logit.clone() * target + logit.abs().neg().exp().log1p()).mean();
    let spacing = (out.narrow(2, 4, 1) - t.narrow(2, 4, 1)).abs().mean();
    let total = offset.clone() * OFFSET_WEIGHT + bce.clone() + spacing.clone() * SPACING_WEIGHT;
    [total, offset, bce, spacing]
}

fn scalar(t: Tensor<1>) -> f32 {
    tensor_values(t.into_data()).first().copied().unwrap_or(f32::NAN)
}

fn to_losses(l: [Tensor<1>; 4]) -> Losses {
    let [total, offset, confidence, spacing] = l.map(scalar);
    Losses {
        total,
        offset,
        confidence,
        spacing,
    }
}

/// Mean losses of `net` over `shapes` (no gradients), on the device the network lives on.
pub fn evaluate(net: &SkeletonNet, shapes: &[Shape]) -> Result<Losses, LearnError> {
    let device = net.device();
    let mut sum = Losses::default();
    let n = shapes.len();
    if n == 0 {
        return Ok(sum);
    }
    for i in 0..n {
        let (x, t) = batch(shapes, &[i], &device)?;
        let l = to_losses(losses(net, x, t));
        sum.total += l.total;
        sum.offset += l.offset;
        sum.confidence += l.confidence;
        sum.spacing += l.spacing;
    }
    let k = n as f32;
    Ok(Losses {
        total: sum.total / k,
        offset: sum.offset / k,
        confidence: sum.confidence / k,
        spacing: sum.spacing / k,
    })
}

/// Train on `train` (validating on `val`). `resume` continues from a saved model (weights and
/// step count; the optimiser moments restart). `metadata` goes into every model emitted.
/// `on_event` may stop the run by returning an error.
pub fn train(
    train: &[Shape],
    val: &[Shape],
    config: &Config,
    resume: Option<&ModelFile>,
    metadata: &HashMap<String, String>,
    on_event: &mut dyn FnMut(Event) -> Result<(), LearnError>,
) -> Result<(ModelFile, History), LearnError> {
    if train.is_empty() {
        return Err(LearnError::Train("no training clouds".into()));
    }
    config.validate()?;
    let device = training_device()?.autodiff();
    device.seed(config.seed);
    let (mut net, first_step) = match resume {
        Some(model) => {
            let step = model.metadata.get(KEY_STEP).and_then(|s| s.parse().ok()).unwrap_or(0);
            (SkeletonNet::from_weights(&model.weights, &device)?, step)
        }
        None => (SkeletonNet::new(config.hidden, &device), 0),
    };
    let mut optimizer = AdamConfig::new().init();
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x5ce1_e7a1);
    for _ in 0..first_step * config.batch {
        let _: usize = rng.random_range(0..train.len());
    }
    let model_at = |net: &SkeletonNet, step: usize| {
        let mut meta = metadata.clone();
        meta.insert(KEY_STEP.into(), step.to_string());
        to_file(&net.valid(), meta)
    };
    let mut history = History::default();
    for step in first_step..config.steps {
        let lr = crate::train::cosine_rate(config.learning_rate, step, config.steps);
        let index: Vec<usize> = (0..config.batch).map(|_| rng.random_range(0..train.len())).collect();
        let (x, t) = batch(train, &index, &device)?;
        let l = losses(&net, x, t);
        let grads = GradientsParams::from_grads(l[0].backward(), &net);
        net = optimizer.step(lr, net, grads);
        let losses = to_losses(l);
        if !losses.total.is_finite() {
            return Err(LearnError::Train(format!(
                "the loss became {} at step {step}",
                losses.total
            )));
        }
        history.train.push((step + 1, losses));
        on_event(Event::Step {
            step: step + 1,
            total: config.steps,
            losses,
        })?;
        let last = step + 1 == config.steps;
        if !val.is_empty() && (last || (config.val_every > 0 && (step + 1) % config.val_every == 0)) {
            let losses = evaluate(&net.valid(), val)?;
            history.val.push((step + 1, losses));
            on_event(Event::Val { step: step + 1, losses })?;
        }
        if config.checkpoint_every > 0 && (step + 1) % config.checkpoint_every == 0 && !last {
            let model = model_at(&net, step + 1);
            on_event(Event::Checkpoint {
                step: step + 1,
                model: &model,
            })?;
        }
    }
    Ok((model_at(&net, config.steps.max(first_step)), history))
}
