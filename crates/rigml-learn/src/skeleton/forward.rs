//! Inference-only forward pass of the skeleton network (layout in [`super::net`]) over the
//! saved weights: plain f32 matrix products, no deep-learning framework, so that `rigml rig`
//! needs no burn (which only the `train` feature builds). The tests check it against the burn
//! network within 1e-4.

use super::points::{FEATURES, TARGETS};
use crate::forward::Layer;
use crate::model::Weights;
use crate::train::MAX_HIDDEN;
use crate::LearnError;

/// The skeleton network's five layers, ready for [`SkeletonForward::predict`].
#[derive(Debug, Clone, PartialEq)]
pub struct SkeletonForward {
    hidden: usize,
    embed: Layer,
    lift: Layer,
    mix: Layer,
    mix2: Layer,
    out: Layer,
}

impl SkeletonForward {
    /// Load and check the named weights of a skeleton model (the names and shapes
    /// `rigml train-skeleton` writes).
    pub fn from_weights(weights: &Weights) -> Result<SkeletonForward, LearnError> {
        let hidden = weights
            .get("embed.weight")
            .and_then(|(shape, _)| shape.get(1).copied())
            .filter(|&h| h > 0 && h <= MAX_HIDDEN)
            .ok_or_else(|| LearnError::Model("no usable `embed.weight` tensor".into()))?;
        let h = hidden;
        Ok(SkeletonForward {
            hidden,
            embed: Layer::load(weights, "embed", FEATURES, h)?,
            lift: Layer::load(weights, "lift", h, h)?,
            mix: Layer::load(weights, "mix", 2 * h, h)?,
            mix2: Layer::load(weights, "mix2", 2 * h, h)?,
            out: Layer::load(weights, "out", h, TARGETS)?,
        })
    }

    /// Outputs `[n * TARGETS]` (offset to the nearest joint, confidence logit, log spacing per
    /// point) for one cloud's features `[n * FEATURES]`.
    pub fn predict(&self, features: &[f32]) -> Result<Vec<f32>, LearnError> {
        let n = features.len() / FEATURES;
        if n == 0 || features.len() != n * FEATURES {
            return Err(LearnError::Model(format!(
                "{} feature values do not describe whole points",
                features.len()
            )));
        }
        let h = self.hidden;
        let mut a = vec![0.0; n * h];
        let mut e = vec![0.0; n * h];
        self.embed.relu(features, n, &mut a);
        self.lift.relu(&a, n, &mut e);
        // m = relu([e, max_n e] W_mix + b): the pooled half is one row, added to every point.
        let m = self.with_context(&self.mix, &e, n);
        // m2 = relu([m, max_n m] W_mix2 + b) + m.
        let mut m2 = self.with_context(&self.mix2, &m, n);
        m2.iter_mut().zip(&m).for_each(|(y, r)| *y += r);
        let mut out = vec![0.0; n * TARGETS];
        self.out.apply(&m2, n, h, 0, &mut out);
        for row in out.chunks_exact_mut(TARGETS) {
            row.iter_mut().zip(&self.out.bias).for_each(|(y, b)| *y += b);
        }
        Ok(out)
    }

    /// `relu([x, max over points of x] W + b)` for `x` `[n, hidden]`.
    fn with_context(&self, layer: &Layer, x: &[f32], n: usize) -> Vec<f32> {
        let h = self.hidden;
        let mut pooled = vec![f32::MIN; h];
        for row in x.chunks_exact(h) {
            pooled.iter_mut().zip(row).for_each(|(p, v)| *p = p.max(*v));
        }
        let mut context = vec![0.0; h];
        layer.apply(&pooled, 1, h, h, &mut context);
        context.iter_mut().zip(&layer.bias).for_each(|(c, b)| *c += b);
        let mut y = vec![0.0; n * h];
        layer.apply(x, n, h, 0, &mut y);
        for row in y.chunks_exact_mut(h) {
            row.iter_mut().zip(&context).for_each(|(v, c)| *v = (*v + c).max(0.0));
        }
        y
    }
}

// The comparison with the burn network needs the `train` feature (on in
// `cargo test --workspace` through rigml-cli's dev-dependencies).
#[cfg(all(test, feature = "train"))]
mod tests {
    use super::*;
    use crate::skeleton::net::SkeletonNet;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn matches_the_burn_network_within_1e_4() {
        let device = crate::device();
        device.seed(5);
        let net = SkeletonNet::new(24, &device);
        let plain = SkeletonForward::from_weights(&net.named_weights()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let n = 300;
        let features: Vec<f32> = (0..n * FEATURES).map(|_| rng.random_range(-1.0..1.0)).collect();
        let burn = net.predict(&features, &device).unwrap();
        let ours = plain.predict(&features).unwrap();
        assert_eq!(burn.len(), ours.len());
        let worst = burn
            .iter()
            .zip(&ours)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "largest difference {worst}");
    }

    #[test]
    fn broken_weights_and_ragged_inputs_are_refused() {
        let device = crate::device();
        let net = SkeletonNet::new(8, &device);
        let mut weights = net.named_weights();
        let plain = SkeletonForward::from_weights(&weights).unwrap();
        assert!(plain.predict(&[]).is_err());
        assert!(plain.predict(&[0.0; FEATURES + 1]).is_err());
        weights.get_mut("mix.weight").unwrap().1[3] = f32::NAN;
        assert!(SkeletonForward::from_weights(&weights).is_err());
        weights.remove("embed.weight");
        assert!(SkeletonForward::from_weights(&weights).is_err());
    }
}
