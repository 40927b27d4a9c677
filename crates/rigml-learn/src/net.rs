//! The skin network in burn, for training (the `train` feature): the layout described in
//! [`crate::model`], its forward pass on tensors with autodiff, and its conversion to and from
//! the named weights of a [`ModelFile`]. Inference does not use it ([`crate::forward`]).

use crate::features::{CANDIDATES, FEATURES, FEATURE_VERSION, HEAT_SHARE, PATCH_DIMS, VOXEL_SHARE};
use crate::model::{
    checked_tensor, patch_width, prior_scale, voxel_prior_scale, ModelFile, NetConfig, Weights, PRIOR_FLOOR,
    PRIOR_SCALE, VOXEL_PRIOR_SCALE,
};
use crate::LearnError;
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::{log_softmax, relu};
use burn::tensor::{Device, Tensor, TensorData};
use std::collections::HashMap;

/// Logit added to padded candidate slots (softmax gives them ~0).
const PAD_LOGIT: f32 = -1.0e4;

/// The point encoder: `code = max over the patch's points of relu(second(relu(first(point))))`.
#[derive(Module, Debug)]
pub struct PatchEncoder {
    pub first: Linear,
    pub second: Linear,
}

impl PatchEncoder {
    /// Shape codes `[B, W]` of patches `[B, PATCH_POINTS, PATCH_DIMS]`.
    pub fn forward(&self, patch: Tensor<3>) -> Tensor<2> {
        let [b, _, _] = patch.dims();
        let hidden = relu(self.first.forward(patch));
        let code = relu(self.second.forward(hidden));
        let width = code.dims()[2];
        code.max_dim(1).reshape([b, width])
    }
}

/// Pair MLP + candidate pooling (+ the optional point encoder). Input `[B, K, F]` (and patches
/// `[B, PATCH_POINTS, PATCH_DIMS]`), output logits `[B, K]`.
#[derive(Module, Debug)]
pub struct Net {
    pub pair: Linear,
    pub mix: Linear,
    pub deep: Linear,
    pub out: Linear,
    pub patch: Option<PatchEncoder>,
    /// The learnt scale of the heat prior (`[1]`), for a network that corrects heat's row.
    pub prior: Option<Param<Tensor<1>>>,
    /// The learnt scale of the voxel-binding prior (`[1]`), for a network that corrects voxel's row.
    pub voxel_prior: Option<Param<Tensor<1>>>,
}

/// A learnt scale `[1]` starting at `value`.
fn scale_param(value: f32, device: &Device) -> Param<Tensor<1>> {
    Param::from_tensor(Tensor::from_data(TensorData::new(vec![value], [1]), device))
}

impl Net {
    /// A freshly initialised network (the device's seed decides the values).
    pub fn new(config: NetConfig, device: &Device) -> Net {
        let h = config.hidden.max(1);
        let w = config.patch;
        let patch = (w > 0).then(|| PatchEncoder {
            first: LinearConfig::new(PATCH_DIMS, w).init(device),
            second: LinearConfig::new(w, w).init(device),
        });
        Net {
            pair: LinearConfig::new(FEATURES + w, h).init(device),
            mix: LinearConfig::new(2 * h, h).init(device),
            deep: LinearConfig::new(h, h).init(device),
            out: LinearConfig::new(h, 1).init(device),
            patch,
            prior: config.prior.then(|| scale_param(1.0, device)),
            voxel_prior: config.voxel_prior.then(|| scale_param(1.0, device)),
        }
    }

    /// Hidden width.
    pub fn hidden(&self) -> usize {
        self.pair.weight.val().dims()[1]
    }

    /// The network with its prior scales kept out of training (no gradient reaches them, so the
    /// optimiser leaves them as they are; see [`crate::TrainConfig::fixed_prior_scale`]).
    pub fn with_fixed_prior_scales(self) -> Net {
        Net {
            prior: self.prior.map(|p| p.set_require_grad(false)),
            voxel_prior: self.voxel_prior.map(|p| p.set_require_grad(false)),
            ..self
        }
    }

    /// The device holding the network's parameters.
    pub fn device(&self) -> Device {
        self.pair.weight.val().device()
    }

    /// Logits `[B, K]` for features `[B, K, F]`, mask `[B, K]` (1 real, 0 padding) and
    /// patches `[B, PATCH_POINTS, PATCH_DIMS]` (read only by a network with a point encoder).
    pub fn forward(&self, x: Tensor<3>, mask: Tensor<2>, patch: Tensor<3>) -> Tensor<2> {
        let [b, k, _] = x.dims();
        let h = self.hidden();
        let term = |scale: &Param<Tensor<1>>, slot: usize| {
            let share = x.clone().slice([0..b, 0..k, slot..slot + 1]).reshape([b, k]);
            (share.clamp_min(0.0) + PRIOR_FLOOR).log() * scale.val().reshape([1, 1]).expand([b, k])
        };
        let heat = self.prior.as_ref().map(|scale| term(scale, HEAT_SHARE));
        let voxel = self.voxel_prior.as_ref().map(|scale| term(scale, VOXEL_SHARE));
        let base = match (heat, voxel) {
            (Some(h), Some(v)) => Some(h + v),
            (h, v) => h.or(v),
        };
        let x = match &self.patch {
            Some(encoder) => {
                let code = encoder.forward(patch);
                let w = code.dims()[1];
                Tensor::cat(vec![x, code.reshape([b, 1, w]).expand([b, k, w])], 2)
            }
            None => x,
        };
        let keep = mask.clone().unsqueeze_dim::<3>(2);
        let local = relu(self.pair.forward(x)) * keep.clone();
        // Padded slots are zeroed and ReLU outputs are >= 0, so they never win the max.
        let pooled = local.clone().max_dim(1).expand([b, k, h]);
        let mixed = relu(self.mix.forward(Tensor::cat(vec![local, pooled], 2)));
        let deep = relu(self.deep.forward(mixed.clone())) + mixed;
        let mut logits = self.out.forward(deep).reshape([b, k]);
        if let Some(base) = base {
            logits = logits + base;
        }
        logits * mask.clone() + (mask.neg() + 1.0) * PAD_LOGIT
    }

    /// Log-probabilities over the candidates, `[B, K]`.
    pub fn log_probs(&self, x: Tensor<3>, mask: Tensor<2>, patch: Tensor<3>) -> Tensor<2> {
        log_softmax(self.forward(x, mask, patch), 1)
    }

    /// Every parameter by name, as `(shape, values)`.
    pub fn named_weights(&self) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        let mut out = Vec::new();
        let mut layers = vec![
            ("pair", &self.pair),
            ("mix", &self.mix),
            ("deep", &self.deep),
            ("out", &self.out),
        ];
        if let Some(encoder) = &self.patch {
            layers.extend([("patch1", &encoder.first), ("patch2", &encoder.second)]);
        }
        for (name, layer) in layers {
            let w = layer.weight.val();
            out.push((
                format!("{name}.weight"),
                w.dims().to_vec(),
                tensor_values(w.into_data()),
            ));
            if let Some(bias) = &layer.bias {
                let b = bias.val();
                out.push((format!("{name}.bias"), b.dims().to_vec(), tensor_values(b.into_data())));
            }
        }
        if let Some(scale) = &self.prior {
            out.push((PRIOR_SCALE.into(), vec![1], tensor_values(scale.val().into_data())));
        }
        if let Some(scale) = &self.voxel_prior {
            out.push((
                VOXEL_PRIOR_SCALE.into(),
                vec![1],
                tensor_values(scale.val().into_data()),
            ));
        }
        out
    }

    /// Rebuild a network from named weights (as written by [`Net::named_weights`]).
    pub fn from_weights(weights: &Weights, device: &Device) -> Result<Net, String> {
        let hidden = weights
            .get("pair.weight")
            .and_then(|(shape, _)| shape.get(1).copied())
            .ok_or("no `pair.weight` tensor")?;
        let h = hidden;
        let layer = |name: &str, input: usize, output: usize| -> Result<Linear, String> {
            let w = checked_tensor(weights, &format!("{name}.weight"), &[input, output])?;
            let b = checked_tensor(weights, &format!("{name}.bias"), &[output])?;
            Ok(Linear {
                weight: Param::from_tensor(Tensor::from_data(TensorData::new(w, [input, output]), device)),
                bias: Some(Param::from_tensor(Tensor::from_data(
                    TensorData::new(b, [output]),
                    device,
                ))),
            })
        };
        let w = patch_width(weights);
        let patch = if w > 0 {
            Some(PatchEncoder {
                first: layer("patch1", PATCH_DIMS, w)?,
                second: layer("patch2", w, w)?,
            })
        } else {
            None
        };
        Ok(Net {
            pair: layer("pair", FEATURES + w, h)?,
            mix: layer("mix", 2 * h, h)?,
            deep: layer("deep", h, h)?,
            out: layer("out", h, 1)?,
            patch,
            prior: prior_scale(weights).map(|s| scale_param(s, device)),
            voxel_prior: voxel_prior_scale(weights).map(|s| scale_param(s, device)),
        })
    }
}

/// The f32 values of a tensor's data (empty if it is not f32, which our modules never are).
pub fn tensor_values(data: TensorData) -> Vec<f32> {
    data.as_slice::<f32>().map(<[f32]>::to_vec).unwrap_or_default()
}

impl ModelFile {
    /// Capture a network's weights with `metadata`; the shapes are added, and the feature
    /// version ([`FEATURE_VERSION`] unless `metadata` names one).
    pub fn from_net(net: &Net, mut metadata: HashMap<String, String>) -> ModelFile {
        metadata
            .entry(crate::model::KEY_FEATURE_VERSION.into())
            .or_insert_with(|| FEATURE_VERSION.to_string());
        metadata.insert("rigml.candidates".into(), CANDIDATES.to_string());
        metadata.insert("rigml.features".into(), FEATURES.to_string());
        let weights = net
            .named_weights()
            .into_iter()
            .map(|(name, shape, values)| (name, (shape, values)))
            .collect();
        ModelFile { weights, metadata }
    }

    /// The network on `device` (a single-network file only: training resumes one network).
    pub fn net(&self, device: &Device) -> Result<Net, LearnError> {
        let count = self.member_count()?;
        if count > 1 {
            return Err(LearnError::Model(format!(
                "holds an ensemble of {count} networks; only a single network can be resumed"
            )));
        }
        Net::from_weights(&self.weights, device).map_err(LearnError::Model)
    }
}
