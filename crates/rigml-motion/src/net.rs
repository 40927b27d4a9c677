//! The motion network in burn, for training (the `train` feature): the layout of
//! [`crate::model`] as burn modules, and its conversion to and from a model file. Inference does
//! not use it ([`crate::model::MotionModel::forward`]).

use crate::model::{base_metadata, MotionModel, BLEND_VERSION, KEY_BLEND, KEY_VERSION, OUTPUTS};
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor, TensorData};
use rigml_learn::ModelFile;
use std::collections::HashMap;

// Why linear layers over shifted copies rather than burn's Conv1d: on burn's ndarray CPU backend
// a Conv1d step of this network took ~19 s (batch 16 × 96 frames, one core); the same
// arithmetic as one matrix product per layer over `[B·T, 3·C]` (the three taps' shifted copies
// side by side) takes a fraction of a second. Tensors here are channel-last, `[B, T, C]`.

/// One residual block: `x + b(relu(a(x)))`, `a` a 3-tap convolution of dilation `dilation`
/// (a linear layer over the frame and its neighbours `dilation` frames before and after), `b`
/// a per-frame linear layer.
#[derive(Module, Debug)]
pub struct Block {
    pub a: Linear,
    pub b: Linear,
    pub dilation: usize,
}

/// The network: `[B, T, inputs]` → `[B, T, OUTPUTS]`.
#[derive(Module, Debug)]
pub struct MotionNet {
    pub input: Linear,
    pub blocks: Vec<Block>,
    pub output: Linear,
}

/// `y[:, t] = x[:, t + s]` (zero where `t + s` is outside the frames).
fn shift(x: Tensor<3>, s: isize) -> Tensor<3> {
    let [b, t, c] = x.dims();
    let device = x.device();
    let k = s.unsigned_abs();
    if k == 0 {
        return x;
    }
    if k >= t {
        return Tensor::zeros([b, t, c], &device);
    }
    let zeros = Tensor::zeros([b, k, c], &device);
    if s > 0 {
        Tensor::cat(vec![x.slice([0..b, k..t, 0..c]), zeros], 1)
    } else {
        Tensor::cat(vec![zeros, x.slice([0..b, 0..t - k, 0..c])], 1)
    }
}

/// A linear layer with the given `[in, out]` weight and bias.
fn linear_with(weight: Vec<f32>, inputs: usize, outputs: usize, bias: Vec<f32>, device: &Device) -> Linear {
    Linear {
        weight: Param::from_tensor(Tensor::from_data(TensorData::new(weight, [inputs, outputs]), device)),
        bias: Some(Param::from_tensor(Tensor::from_data(
            TensorData::new(bias, [outputs]),
            device,
        ))),
    }
}

/// A conv weight `[out, in, taps]` as a linear weight `[taps·in, out]` (tap-major rows).
fn conv_to_linear(w: &[f32], outputs: usize, inputs: usize, taps: usize) -> Vec<f32> {
    let mut out = vec![0.0; taps * inputs * outputs];
    for o in 0..outputs {
        for i in 0..inputs {
            for k in 0..taps {
                out[(k * inputs + i) * outputs + o] = w[(o * inputs + i) * taps + k];
            }
        }
    }
    out
}

/// The inverse of [`conv_to_linear`].
fn linear_to_conv(w: &[f32], outputs: usize, inputs: usize, taps: usize) -> Vec<f32> {
    let mut out = vec![0.0; taps * inputs * outputs];
    for o in 0..outputs {
        for i in 0..inputs {
            for k in 0..taps {
                out[(o * inputs + i) * taps + k] = w[(k * inputs + i) * outputs + o];
            }
        }
    }
    out
}

impl MotionNet {
    /// A fresh network reading `inputs` channels ([`crate::model::INPUTS`] or
    /// [`crate::model::EVIDENCE_INPUTS`]; the device's seed decides the values); the output
    /// layer starts at zero, so the untrained model returns its input unchanged.
    pub fn new(hidden: usize, dilations: &[usize], inputs: usize, device: &Device) -> MotionNet {
        MotionNet {
            input: LinearConfig::new(inputs, hidden).init(device),
            blocks: dilations
                .iter()
                .map(|&d| Block {
                    a: LinearConfig::new(3 * hidden, hidden).init(device),
                    b: LinearConfig::new(hidden, hidden).init(device),
                    dilation: d,
                })
                .collect(),
            output: linear_with(vec![0.0; hidden * OUTPUTS], hidden, OUTPUTS, vec![0.0; OUTPUTS], device),
        }
    }

    /// The network holding a loaded model's weights (to resume training).
    pub fn from_model(model: &MotionModel, device: &Device) -> MotionNet {
        let linear = |c: &crate::model::Conv| {
            linear_with(
                conv_to_linear(&c.weight, c.outputs, c.inputs, c.taps),
                c.taps * c.inputs,
                c.outputs,
                c.bias.clone(),
                device,
            )
        };
        MotionNet {
            input: linear(&model.input),
            blocks: model
                .blocks
                .iter()
                .map(|(a, b)| Block {
                    a: linear(a),
                    b: linear(b),
                    dilation: a.dilation,
                })
                .collect(),
            output: linear(&model.output),
        }
    }

    /// Output `[B, T, OUTPUTS]` for input `[B, T, inputs]`.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let mut h = self.input.forward(x);
        for block in &self.blocks {
            let d = block.dilation as isize;
            let taps = Tensor::cat(vec![shift(h.clone(), -d), h.clone(), shift(h.clone(), d)], 2);
            h = h + block.b.forward(relu(block.a.forward(taps)));
        }
        self.output.forward(relu(h))
    }

    /// The model file of this network with normalisation `mean`, `std` and `metadata`.
    pub fn to_file(&self, mean: &[f32], std: &[f32], metadata: &HashMap<String, String>) -> ModelFile {
        let values = |t: Tensor<2>| rigml_learn::net::tensor_values(t.into_data());
        let mut weights = HashMap::new();
        let mut put = |name: &str, l: &Linear, taps: usize| {
            let w = l.weight.val();
            let [rows, outputs] = w.dims();
            let inputs = rows / taps;
            let conv = linear_to_conv(&values(w), outputs, inputs, taps);
            weights.insert(format!("{name}.weight"), (vec![outputs, inputs, taps], conv));
            let bias = l
                .bias
                .as_ref()
                .map(|b| rigml_learn::net::tensor_values(b.val().into_data()))
                .unwrap_or_else(|| vec![0.0; outputs]);
            weights.insert(format!("{name}.bias"), (vec![outputs], bias));
        };
        put("in", &self.input, 1);
        for (i, block) in self.blocks.iter().enumerate() {
            put(&format!("block{i}.a"), &block.a, 3);
            put(&format!("block{i}.b"), &block.b, 1);
        }
        put("out", &self.output, 1);
        weights.insert("norm.mean".into(), (vec![mean.len()], mean.to_vec()));
        weights.insert("norm.std".into(), (vec![std.len()], std.to_vec()));
        let dilations: Vec<usize> = self.blocks.iter().map(|b| b.dilation).collect();
        let mut meta = base_metadata(&dilations);
        for (k, v) in metadata {
            meta.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if meta.get(KEY_BLEND).is_some_and(|v| v == "1") {
            meta.insert(KEY_VERSION.into(), BLEND_VERSION.to_string());
        }
        ModelFile {
            weights,
            metadata: meta,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::FEATURES;
    use crate::model::{DILATIONS, INPUTS};

    /// burn's network and the plain-Rust inference give the same output.
    #[test]
    fn inference_matches_burn() {
        let device = rigml_learn::device();
        device.seed(3);
        let mut net = MotionNet::new(16, &DILATIONS, INPUTS, &device);
        // A non-zero output layer, so that the comparison means something.
        let w: Vec<f32> = (0..OUTPUTS * 16)
            .map(|i| ((i * 13 % 29) as f32 - 14.0) / 40.0)
            .collect();
        net.output = linear_with(w, 16, OUTPUTS, vec![0.1; OUTPUTS], &device);
        let file = net.to_file(&vec![0.0; FEATURES], &vec![1.0; FEATURES], &HashMap::new());
        let model = MotionModel::from_file(&file, "test").unwrap();
        let t = 50;
        let x: Vec<f32> = (0..INPUTS * t).map(|i| ((i * 7 % 23) as f32 - 11.0) / 10.0).collect();
        let ours = model.forward(&x, t);
        // Channel-major for ours, channel-last for burn's.
        let last: Vec<f32> = (0..t * INPUTS).map(|i| x[(i % INPUTS) * t + i / INPUTS]).collect();
        let theirs = net.forward(Tensor::from_data(TensorData::new(last, [1, t, INPUTS]), &device));
        let theirs = rigml_learn::net::tensor_values(theirs.into_data());
        let theirs: Vec<f32> = (0..OUTPUTS * t).map(|i| theirs[(i % t) * OUTPUTS + i / t]).collect();
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(&theirs) {
            assert!((a - b).abs() < 1e-4 * (1.0 + b.abs()), "{a} vs {b}");
        }
        // And back: a network rebuilt from the file gives the same again.
        let again = MotionNet::from_model(&model, &device).to_file(&model.mean, &model.std, &HashMap::new());
        assert_eq!(again.weights, file.weights);
    }
}
