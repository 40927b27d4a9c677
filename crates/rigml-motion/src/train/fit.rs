//! The motion model's training loop in burn (the `train` feature).

use super::{draw_kind, window, Draw, MotionLosses, MotionTrainConfig, Window};
use crate::data::{statistics, Prepared};
use crate::features::{CONTACTS, FEATURES};
use crate::model::{KEY_BLEND, KEY_FLOOR, OUTPUTS};
use crate::net::MotionNet;
use crate::{MotionError, MotionModel};
use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::{sigmoid, softplus};
use burn::tensor::{Device, Tensor, TensorData};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rigml_learn::train::{History, KEY_STEP};
use rigml_learn::{ModelFile, TrainEvent};
use std::collections::HashMap;

struct Batch {
    input: Tensor<3>,
    target: Tensor<3>,
    contacts: Tensor<3>,
    /// A blending model's terms `[B, W, 3 · FEATURES]` ([`Window::blend`]).
    blend: Option<Tensor<3>>,
}

fn batch(windows: &[Window], w: usize, device: &Device) -> Batch {
    let b = windows.len();
    let channels = windows.first().map_or(1, |x| x.input.len() / w.max(1));
    let cat = |f: &dyn Fn(&Window) -> &Vec<f32>| windows.iter().flat_map(|x| f(x).iter().copied()).collect::<Vec<_>>();
    Batch {
        input: Tensor::from_data(TensorData::new(cat(&|x| &x.input), [b, w, channels]), device),
        target: Tensor::from_data(TensorData::new(cat(&|x| &x.target), [b, w, FEATURES]), device),
        contacts: Tensor::from_data(TensorData::new(cat(&|x| &x.contacts), [b, w, CONTACTS]), device),
        blend: windows
            .first()
            .is_some_and(|x| !x.blend.is_empty())
            .then(|| Tensor::from_data(TensorData::new(cat(&|x| &x.blend), [b, w, 3 * FEATURES]), device)),
    }
}

/// `(total, motion, contacts)` loss tensors of a batch.
fn losses(net: &MotionNet, batch: Batch, contact_weight: f32) -> (Tensor<1>, Tensor<1>, Tensor<1>) {
    let [b, w, _] = batch.input.dims();
    let out = net.forward(batch.input.clone());
    let correction = out.clone().slice([0..b, 0..w, 0..FEATURES]);
    let logits = out.slice([0..b, 0..w, FEATURES..OUTPUTS]);
    let motion = match batch.blend {
        // The error at the clip's rate of keeping a share β of the prefilter's residual:
        // A β² + 2 B β + C per feature (data::blend_terms).
        Some(terms) => {
            let keep = sigmoid(correction);
            let term = |i: usize| terms.clone().slice([0..b, 0..w, i * FEATURES..(i + 1) * FEATURES]);
            (term(0) * keep.clone().powi_scalar(2) + term(1) * keep * 2.0 + term(2)).mean()
        }
        None => {
            let given = batch.input.slice([0..b, 0..w, 0..FEATURES]);
            (given + correction - batch.target).powi_scalar(2).mean()
        }
    };
    let contacts = (softplus(logits.clone(), 1.0) - logits * batch.contacts).mean();
    let total = motion.clone() + contacts.clone() * contact_weight;
    (total, motion, contacts)
}

fn scalar(t: Tensor<1>) -> f32 {
    rigml_learn::net::tensor_values(t.into_data())
        .first()
        .copied()
        .unwrap_or(f32::NAN)
}

/// Mean losses of `net` over `windows` (batches of 16), without gradients.
fn evaluate(net: &MotionNet, windows: &[Window], w: usize, contact_weight: f32, device: &Device) -> MotionLosses {
    let mut sum = MotionLosses::default();
    let mut n = 0.0;
    for chunk in windows.chunks(16) {
        let (t, m, c) = losses(net, batch(chunk, w, device), contact_weight);
        let k = chunk.len() as f32;
        sum.total += scalar(t) * k;
        sum.motion += scalar(m) * k;
        sum.contacts += scalar(c) * k;
        n += k;
    }
    MotionLosses {
        total: sum.total / n,
        motion: sum.motion / n,
        contacts: sum.contacts / n,
    }
}

/// Flushes denormal floats to zero on this thread while it lives (x86-64; elsewhere nothing),
/// restoring the previous mode when dropped. Adam's second moments of rarely-moved weights decay
/// can decay into the denormal range, and x86 arithmetic on denormals is many times slower. On
/// this machine a 4000-step run without it averaged 0.62 s per step over its first 500 steps
/// (other work ran beside it part of that time), one with it 0.15 s per step throughout.
struct FlushDenormals {
    #[cfg(target_arch = "x86_64")]
    saved: u32,
}

impl FlushDenormals {
    #[allow(deprecated)] // _mm_getcsr/_mm_setcsr: the only stable way to set FTZ/DAZ from Rust
    fn new() -> FlushDenormals {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: reading and writing MXCSR is always defined on x86-64 (SSE is baseline);
            // 0x8040 sets flush-to-zero (bit 15) and denormals-are-zero (bit 6) only.
            let saved = unsafe { std::arch::x86_64::_mm_getcsr() };
            unsafe { std::arch::x86_64::_mm_setcsr(saved | 0x8040) };
            FlushDenormals { saved }
        }
        #[cfg(not(target_arch = "x86_64"))]
        FlushDenormals {}
    }
}

impl Drop for FlushDenormals {
    #[allow(deprecated)]
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: restores the value read in `new`.
        unsafe {
            std::arch::x86_64::_mm_setcsr(self.saved)
        };
    }
}

/// Train a motion model on `train` (validating on `val`), resuming from `resume` (its
/// normalisation is kept), storing `metadata` in every file emitted.
pub fn train(
    train: &[Prepared],
    val: Option<&[Prepared]>,
    config: &MotionTrainConfig,
    resume: Option<&MotionModel>,
    metadata: &HashMap<String, String>,
    on_event: &mut dyn FnMut(TrainEvent<MotionLosses>) -> Result<(), MotionError>,
) -> Result<(ModelFile, History<MotionLosses>), MotionError> {
    config.validate()?;
    let _flush = FlushDenormals::new();
    let draw = Draw::new(train, config.window)?;
    let device = rigml_learn::training_device()?.autodiff();
    device.seed(config.seed);
    let inputs = config.inputs;
    if let Some(m) = resume.filter(|m| super::Inputs::of(m) != inputs) {
        let reads = |i: super::Inputs| {
            format!(
                "{} the noise evidence and {} heights above the clip's floor{}",
                if i.evidence { "reads" } else { "does not read" },
                if i.floor { "reads" } else { "does not read" },
                if i.blend { ", and blends" } else { "" }
            )
        };
        return Err(MotionError::Train(format!(
            "the model resumed {} where these settings' model {}: give the same input settings (--noise-evidence, --floor-relative, --blend)",
            reads(super::Inputs::of(m)),
            reads(inputs)
        )));
    }
    let unprepared = |data: &[Prepared]| data.iter().any(|p| p.blend.len() != p.noisy.len());
    if inputs.blend && (unprepared(train) || val.is_some_and(unprepared)) {
        return Err(MotionError::Train(
            "a blending model trains on clips prepared with their blend terms (data::prepare_with(.., true))".into(),
        ));
    }
    let (levelled_train, levelled_val);
    let (train, val) = if inputs.floor {
        levelled_train = super::on_their_floors(train);
        levelled_val = val.map(super::on_their_floors);
        (levelled_train.as_slice(), levelled_val.as_deref())
    } else {
        (train, val)
    };
    let (mean, std) = match resume {
        Some(m) => (m.mean.clone(), m.std.clone()),
        None => statistics(train, config.min_spread),
    };
    let (mut net, first_step) = match resume {
        Some(m) => (
            MotionNet::from_model(m, &device),
            m.metadata.get(KEY_STEP).and_then(|s| s.parse().ok()).unwrap_or(0),
        ),
        None => (
            MotionNet::new(config.hidden, &config.dilations, inputs.channels(), &device),
            0,
        ),
    };
    let w = config.window;
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x6d6f_7469_6f6e);
    let next = |rng: &mut ChaCha8Rng| {
        let (clip, start) = draw.sample(rng);
        let (variant, keys) = draw_kind(rng, &train[clip], w, config.infill);
        window(&train[clip], start, w, variant, keys, &mean, &std, &inputs)
    };
    // A resumed run replays the window stream so that it sees what an uninterrupted run would.
    for _ in 0..first_step * config.batch {
        next(&mut rng);
    }
    // Validation: a fixed set of windows, denoising and in-filling in the training's shares (a
    // denoising-only model was once validated on half in-filling windows, whose loss it was
    // never taught to lower).
    let val_windows: Vec<Window> = match val {
        Some(v) => {
            let vd = Draw::new(v, w)?;
            let mut vr = ChaCha8Rng::seed_from_u64(7);
            vd.spread(128)
                .into_iter()
                .map(|(clip, start)| {
                    let (variant, keys) = draw_kind(&mut vr, &v[clip], w, config.infill);
                    window(&v[clip], start, w, variant, keys, &mean, &std, &inputs)
                })
                .collect()
        }
        None => Vec::new(),
    };
    let mut optimizer = AdamConfig::new().init();
    let file_at = |net: &MotionNet, step: usize| {
        let mut meta = metadata.clone();
        meta.insert(KEY_STEP.into(), step.to_string());
        if inputs.floor {
            meta.insert(KEY_FLOOR.into(), "1".into());
        }
        if inputs.blend {
            meta.insert(KEY_BLEND.into(), "1".into());
        }
        net.valid().to_file(&mean, &std, &meta)
    };
    let mut history = History::default();
    for step in first_step..config.steps {
        let lr = rigml_learn::train::cosine_rate(config.learning_rate, step, config.steps);
        let windows: Vec<Window> = (0..config.batch).map(|_| next(&mut rng)).collect();
        let (total, motion, contacts) = losses(&net, batch(&windows, w, &device), config.contact_weight);
        let grads = GradientsParams::from_grads(total.backward(), &net);
        net = optimizer.step(lr, net, grads);
        let losses = MotionLosses {
            total: scalar(total),
            motion: scalar(motion),
            contacts: scalar(contacts),
        };
        if !losses.total.is_finite() {
            return Err(MotionError::Train(format!(
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
        if !val_windows.is_empty() && (last || (config.val_every > 0 && (step + 1) % config.val_every == 0)) {
            let valid = net.valid();
            let device = valid.input.weight.val().device();
            let losses = evaluate(&valid, &val_windows, w, config.contact_weight, &device);
            history.val.push((step + 1, losses));
            on_event(TrainEvent::Val { step: step + 1, losses })?;
        }
        if config.checkpoint_every > 0 && (step + 1) % config.checkpoint_every == 0 && !last {
            let model = file_at(&net, step + 1);
            on_event(TrainEvent::Checkpoint {
                step: step + 1,
                model: &model,
            })?;
        }
    }
    Ok((file_at(&net, config.steps.max(first_step)), history))
}
