//! The skeleton network: a PointNet-style per-point MLP with two max-pooled global contexts
//! (each point's features are concatenated with the max over the whole cloud, twice), giving
//! per point the offset to its nearest joint, a confidence logit and the log joint spacing.
//! Weights are stored as named f32 tensors in a safetensors file with the clustering settings
//! in its metadata. This module reads such files; the burn network that trains them (and the
//! writing of a trained one) is built only with the `train` feature. Inference runs the same
//! layers by hand ([`super::forward`]).

use crate::model::ModelFile;
use crate::LearnError;
#[cfg(feature = "train")]
use {
    super::points::{FEATURES, TARGETS},
    crate::model::checked_tensor,
    crate::net::tensor_values,
    burn::module::{Module, Param},
    burn::nn::{Linear, LinearConfig},
    burn::tensor::activation::relu,
    burn::tensor::{Device, Tensor, TensorData},
    std::collections::HashMap,
};

/// Version of the skeleton features and network layout; model files carry it.
pub const SKELETON_VERSION: u32 = 1;
/// Metadata key of [`SKELETON_VERSION`].
pub const KEY_VERSION: &str = "rigml.skeleton.version";

/// Point MLP with global context. Input `[B, N, FEATURES]`, output `[B, N, TARGETS]`.
#[cfg(feature = "train")]
#[derive(Module, Debug)]
pub struct SkeletonNet {
    pub embed: Linear,
    pub lift: Linear,
    pub mix: Linear,
    pub mix2: Linear,
    pub out: Linear,
}

/// Layer names, inputs and outputs for a hidden width `h`.
#[cfg(feature = "train")]
fn layout(h: usize) -> [(&'static str, usize, usize); 5] {
    [
        ("embed", FEATURES, h),
        ("lift", h, h),
        ("mix", 2 * h, h),
        ("mix2", 2 * h, h),
        ("out", h, TARGETS),
    ]
}

#[cfg(feature = "train")]
impl SkeletonNet {
    /// A freshly initialised network (the device's seed decides the values).
    pub fn new(hidden: usize, device: &Device) -> SkeletonNet {
        let [a, b, c, d, e] = layout(hidden.max(1)).map(|(_, i, o)| LinearConfig::new(i, o).init(device));
        SkeletonNet {
            embed: a,
            lift: b,
            mix: c,
            mix2: d,
            out: e,
        }
    }

    /// Hidden width.
    pub fn hidden(&self) -> usize {
        self.embed.weight.val().dims()[1]
    }

    /// The device holding the network's parameters.
    pub fn device(&self) -> Device {
        self.embed.weight.val().device()
    }

    /// Per-point outputs `[B, N, TARGETS]` for features `[B, N, FEATURES]`.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let [b, n, _] = x.dims();
        let h = self.hidden();
        let e = relu(self.lift.forward(relu(self.embed.forward(x))));
        let g = e.clone().max_dim(1).expand([b, n, h]);
        let m = relu(self.mix.forward(Tensor::cat(vec![e, g], 2)));
        let g2 = m.clone().max_dim(1).expand([b, n, h]);
        let m2 = relu(self.mix2.forward(Tensor::cat(vec![m.clone(), g2], 2))) + m;
        self.out.forward(m2)
    }

    /// Every parameter by name, as `(shape, values)`.
    pub fn named_weights(&self) -> HashMap<String, (Vec<usize>, Vec<f32>)> {
        let mut out = HashMap::new();
        for (name, layer) in [
            ("embed", &self.embed),
            ("lift", &self.lift),
            ("mix", &self.mix),
            ("mix2", &self.mix2),
            ("out", &self.out),
        ] {
            let w = layer.weight.val();
            out.insert(
                format!("{name}.weight"),
                (w.dims().to_vec(), tensor_values(w.into_data())),
            );
            if let Some(bias) = &layer.bias {
                let b = bias.val();
                out.insert(
                    format!("{name}.bias"),
                    (b.dims().to_vec(), tensor_values(b.into_data())),
                );
            }
        }
        out
    }

    /// Rebuild a network from named weights (as written by [`SkeletonNet::named_weights`]),
    /// checking every shape and value.
    pub fn from_weights(
        weights: &HashMap<String, (Vec<usize>, Vec<f32>)>,
        device: &Device,
    ) -> Result<SkeletonNet, LearnError> {
        let hidden = weights
            .get("embed.weight")
            .and_then(|(shape, _)| shape.get(1).copied())
            .filter(|&h| h > 0 && h <= crate::train::MAX_HIDDEN)
            .ok_or_else(|| LearnError::Model("no usable `embed.weight` tensor".into()))?;
        let get = |key: String, shape: &[usize]| checked_tensor(weights, &key, shape).map_err(LearnError::Model);
        let mut layers = Vec::new();
        for (name, input, output) in layout(hidden) {
            let w = get(format!("{name}.weight"), &[input, output])?;
            let b = get(format!("{name}.bias"), &[output])?;
            layers.push(Linear {
                weight: Param::from_tensor(Tensor::from_data(TensorData::new(w, [input, output]), device)),
                bias: Some(Param::from_tensor(Tensor::from_data(
                    TensorData::new(b, [output]),
                    device,
                ))),
            });
        }
        let mut it = layers.into_iter();
        let mut next = || it.next().ok_or_else(|| LearnError::Model("missing layer".into()));
        Ok(SkeletonNet {
            embed: next()?,
            lift: next()?,
            mix: next()?,
            mix2: next()?,
            out: next()?,
        })
    }

    /// Outputs `[n * TARGETS]` for one cloud's features `[n * FEATURES]` (no gradients).
    pub fn predict(&self, features: &[f32], device: &Device) -> Result<Vec<f32>, LearnError> {
        let n = features.len() / FEATURES;
        if n == 0 || features.len() != n * FEATURES {
            return Err(LearnError::Model(format!(
                "{} feature values do not describe whole points",
                features.len()
            )));
        }
        let x = Tensor::<3>::from_data(TensorData::new(features.to_vec(), [1, n, FEATURES]), device);
        Ok(tensor_values(self.forward(x).into_data()))
    }
}

/// A skeleton model file: the network's weights plus metadata (training facts, clustering
/// settings chosen on val).
#[cfg(feature = "train")]
pub fn to_file(net: &SkeletonNet, mut metadata: HashMap<String, String>) -> ModelFile {
    metadata.insert(KEY_VERSION.into(), SKELETON_VERSION.to_string());
    ModelFile {
        weights: net.named_weights(),
        metadata,
    }
}

/// Parse skeleton model bytes; `origin` names the source in errors. Refuses files that are not
/// safetensors, skin models, and models of another skeleton version.
pub fn from_bytes(bytes: &[u8], origin: &str) -> Result<ModelFile, LearnError> {
    let model = ModelFile::read(bytes, origin)?;
    let version = model.metadata.get(KEY_VERSION).map(String::as_str);
    if version != Some(SKELETON_VERSION.to_string().as_str()) {
        return Err(LearnError::ModelFile {
            path: origin.to_string(),
            problem: format!(
                "not a skeleton model of version {SKELETON_VERSION} (its {KEY_VERSION} is {})",
                version.unwrap_or("missing")
            ),
        });
    }
    Ok(model)
}
