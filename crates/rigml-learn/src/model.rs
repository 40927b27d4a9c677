//! A skin model file: the network's weights as named f32 tensors in a safetensors file, with
//! the inference settings and training facts in its metadata; one network or an ensemble.
//! The network itself: [`crate::forward`] runs it at inference, `crate::net` (burn, the `train`
//! feature) trains it. Its layout: a pair-feature MLP with a pooled per-vertex context (a
//! DeepSets layer over the candidates), giving one logit per (vertex, candidate); softmax over
//! the candidates gives the weights. Optionally a point encoder (a PointNet over the vertex's
//! surface patch: a shared two-layer MLP per point, max-pooled) adds a shape code to every
//! pair's input.

use crate::features::{holds_voxel_binding, FEATURE_VERSIONS};
use crate::LearnError;
use std::collections::HashMap;
use std::path::Path;

/// Shape of a network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetConfig {
    /// Width of every hidden layer.
    pub hidden: usize,
    /// Width of the point encoder's shape code (0: no point encoder, the pair MLP alone).
    pub patch: usize,
    /// Whether the network corrects the bone-heat solution instead of scoring from scratch: its
    /// logits are added to `s · ln(heat share + PRIOR_FLOOR)` (`s` learnt, from 1), so that a
    /// network that has nothing to say for a vertex gives heat's row ([`prior_logit`]).
    pub prior: bool,
    /// Whether the logits also add `s_v · ln(voxel share + PRIOR_FLOOR)` (`s_v` learnt, from 1):
    /// a network that corrects geodesic voxel binding, the best geometric solver on rigs of few
    /// joints. Needs a feature layout that holds voxel shares
    /// ([`crate::features::holds_voxel_binding`]).
    pub voxel_prior: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            hidden: 64,
            patch: 0,
            prior: false,
            voxel_prior: false,
        }
    }
}

/// Name of the learnt scale of the heat prior in a network's weights (shape `[1]`; absent: the
/// network has no prior term).
pub const PRIOR_SCALE: &str = "prior.scale";

/// Name of the learnt scale of the voxel-binding prior (shape `[1]`; absent: no voxel term).
pub const VOXEL_PRIOR_SCALE: &str = "prior_voxel.scale";

/// Added to a heat share before its logarithm, so that a candidate to which heat gives nothing
/// keeps a finite logit (`ln 1e-3 ≈ -6.9`: the network can still raise it).
pub const PRIOR_FLOOR: f32 = 1e-3;

/// The base logit of a candidate whose heat share is `share` (a residual network's logit adds to
/// `scale ·` this).
pub fn prior_logit(share: f32) -> f32 {
    (share.max(0.0) + PRIOR_FLOOR).ln()
}

/// The learnt scale of the heat prior in named weights, if they hold one.
pub fn prior_scale(weights: &Weights) -> Option<f32> {
    scale_named(weights, PRIOR_SCALE)
}

/// The learnt scale of the voxel-binding prior in named weights, if they hold one.
pub fn voxel_prior_scale(weights: &Weights) -> Option<f32> {
    scale_named(weights, VOXEL_PRIOR_SCALE)
}

/// A `[1]`-shaped tensor of named weights as a number.
fn scale_named(weights: &Weights, name: &str) -> Option<f32> {
    weights
        .get(name)
        .and_then(|(shape, values)| (shape.as_slice() == [1]).then(|| values.first().copied())?)
}

/// Width of the point encoder's code in named weights (0 when they hold no encoder): the
/// output width of `patch2.weight`.
pub fn patch_width(weights: &Weights) -> usize {
    weights
        .get("patch2.weight")
        .and_then(|(shape, _)| shape.get(1).copied())
        .unwrap_or(0)
}

/// Named f32 tensors: name -> (shape, values).
pub type Weights = HashMap<String, (Vec<usize>, Vec<f32>)>;

/// Metadata key of the number of networks in an ensemble file (absent: one network).
pub const KEY_MEMBERS: &str = "rigml.members";

/// Metadata key of the feature layout a model was trained on (one of
/// [`crate::features::FEATURE_VERSIONS`]; inference extracts that layout).
pub const KEY_FEATURE_VERSION: &str = "rigml.feature_version";

/// Most networks one model file may hold.
pub const MAX_MEMBERS: usize = 16;

/// A trained model: the network weights plus the inference settings chosen on val.
///
/// A file holds one network (tensors `pair.weight`, ...) or an *ensemble* of networks trained
/// with different seeds (tensors `member0.pair.weight`, `member1.pair.weight`, ... and
/// [`KEY_MEMBERS`] in the metadata); inference averages the members' probabilities. With 56
/// training characters one network's val scores move with its seed as much as with any setting;
/// the average of five seeds scored better on val than the best single seed.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFile {
    pub weights: Weights,
    /// Free-form `key = value` facts (training command, data, steps, thresholds).
    pub metadata: HashMap<String, String>,
}

impl ModelFile {
    /// The safetensors bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, LearnError> {
        let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = self
            .weights
            .iter()
            .map(|(name, (shape, values))| {
                (
                    name.clone(),
                    shape.clone(),
                    values.iter().flat_map(|v| v.to_le_bytes()).collect(),
                )
            })
            .collect();
        let mut views = Vec::new();
        for (name, shape, data) in &bytes {
            let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data)
                .map_err(|e| LearnError::Model(format!("tensor {name}: {e}")))?;
            views.push((name.clone(), view));
        }
        safetensors::serialize(views, Some(self.metadata.clone())).map_err(|e| LearnError::Model(e.to_string()))
    }

    /// Parse safetensors bytes; `origin` names the source in errors. Checks that the model was
    /// made for a feature layout this build extracts.
    pub fn from_bytes(bytes: &[u8], origin: &str) -> Result<ModelFile, LearnError> {
        let model = ModelFile::read(bytes, origin)?;
        if !model.feature_version().is_some_and(|v| FEATURE_VERSIONS.contains(&v)) {
            let version = model.metadata.get(KEY_FEATURE_VERSION).map(String::as_str);
            return Err(LearnError::ModelFile {
                path: origin.to_string(),
                problem: format!(
                    "made for feature version {}, this build reads {FEATURE_VERSIONS:?}",
                    version.unwrap_or("(none)")
                ),
            });
        }
        let voxel_prior = model.weights.keys().any(|name| name.ends_with(VOXEL_PRIOR_SCALE));
        if let Some(version) = model
            .feature_version()
            .filter(|&v| voxel_prior && !holds_voxel_binding(v))
        {
            return Err(LearnError::ModelFile {
                path: origin.to_string(),
                problem: format!("corrects voxel binding, but its feature version {version} holds no voxel shares"),
            });
        }
        Ok(model)
    }

    /// Parse safetensors bytes (f32 tensors and metadata) without checking what kind of model
    /// they hold; `origin` names the source in errors.
    pub fn read(bytes: &[u8], origin: &str) -> Result<ModelFile, LearnError> {
        let bad = |problem: String| LearnError::ModelFile {
            path: origin.to_string(),
            problem,
        };
        let (_, header) = safetensors::SafeTensors::read_metadata(bytes).map_err(|e| bad(e.to_string()))?;
        let metadata = header.metadata().clone().unwrap_or_default();
        let tensors = safetensors::SafeTensors::deserialize(bytes).map_err(|e| bad(e.to_string()))?;
        let mut weights = HashMap::new();
        for (name, view) in tensors.tensors() {
            if view.dtype() != safetensors::Dtype::F32 {
                return Err(bad(format!("tensor {name} is {:?}, expected F32", view.dtype())));
            }
            let values: Vec<f32> = view
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            weights.insert(name, (view.shape().to_vec(), values));
        }
        Ok(ModelFile { weights, metadata })
    }

    /// Read a model file.
    pub fn load(path: &Path) -> Result<ModelFile, LearnError> {
        let bytes = std::fs::read(path).map_err(|source| LearnError::Io {
            path: path.display().to_string(),
            source,
        })?;
        ModelFile::from_bytes(&bytes, &path.display().to_string())
    }

    /// How many networks the file holds (1 unless it is an ensemble).
    pub fn member_count(&self) -> Result<usize, LearnError> {
        match self.metadata.get(KEY_MEMBERS) {
            None => Ok(1),
            Some(text) => match text.parse::<usize>() {
                Ok(n) if (1..=MAX_MEMBERS).contains(&n) => Ok(n),
                _ => Err(LearnError::Model(format!(
                    "`{KEY_MEMBERS}` must be a count from 1 to {MAX_MEMBERS}, got {text:?}"
                ))),
            },
        }
    }

    /// The weights of member `index`, under the single-network names (`pair.weight`, ...).
    pub fn member_weights(&self, index: usize) -> Result<Weights, LearnError> {
        let count = self.member_count()?;
        if index >= count {
            return Err(LearnError::Model(format!(
                "no member {index} in an ensemble of {count}"
            )));
        }
        if !self.metadata.contains_key(KEY_MEMBERS) {
            return Ok(self.weights.clone());
        }
        let prefix = format!("member{index}.");
        Ok(self
            .weights
            .iter()
            .filter_map(|(name, tensor)| name.strip_prefix(&prefix).map(|n| (n.to_string(), tensor.clone())))
            .collect())
    }

    /// One file holding every network of `members` (each a single network of the same feature
    /// layout) as an ensemble, with `metadata` (the members' own metadata is dropped).
    pub fn ensemble(members: &[ModelFile], metadata: HashMap<String, String>) -> Result<ModelFile, LearnError> {
        if members.is_empty() || members.len() > MAX_MEMBERS {
            return Err(LearnError::Model(format!(
                "an ensemble holds 1 to {MAX_MEMBERS} networks, got {}",
                members.len()
            )));
        }
        let mut weights = HashMap::new();
        for (i, member) in members.iter().enumerate() {
            if member.member_count()? != 1 {
                return Err(LearnError::Model(format!("member {i} is itself an ensemble")));
            }
            for (name, tensor) in &member.weights {
                weights.insert(format!("member{i}.{name}"), tensor.clone());
            }
        }
        let mut model = ModelFile { weights, metadata };
        for key in [KEY_FEATURE_VERSION, "rigml.candidates", "rigml.features"] {
            if let Some(value) = members[0].metadata.get(key) {
                model.metadata.insert(key.into(), value.clone());
            }
        }
        model.metadata.insert(KEY_MEMBERS.into(), members.len().to_string());
        Ok(model)
    }

    /// The feature layout named in the metadata, if present and a number.
    pub fn feature_version(&self) -> Option<u32> {
        self.metadata.get(KEY_FEATURE_VERSION).and_then(|v| v.parse().ok())
    }

    /// A metadata value parsed as f32, if present and valid.
    pub fn setting(&self, key: &str) -> Option<f32> {
        self.metadata
            .get(key)
            .and_then(|v| v.parse().ok())
            .filter(|v: &f32| v.is_finite())
    }
}

/// The values of tensor `key` in `weights` (name -> (shape, values)), refused unless it exists,
/// has exactly `shape` and holds only finite values. Every network read from a model file
/// (training and inference, skin and skeleton) loads its tensors through this one check.
pub(crate) fn checked_tensor(weights: &Weights, key: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
    let (s, v) = weights.get(key).ok_or(format!("no `{key}` tensor"))?;
    if s.as_slice() != shape || v.len() != shape.iter().product::<usize>() {
        return Err(format!("`{key}` has shape {s:?}, expected {shape:?}"));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(format!("`{key}` holds a non-finite value"));
    }
    Ok(v.clone())
}

#[cfg(all(test, feature = "train"))]
mod tests {
    use super::*;
    use crate::Net;

    fn single(hidden: usize, seed: u64) -> ModelFile {
        let device = crate::device();
        device.seed(seed);
        ModelFile::from_net(
            &Net::new(
                NetConfig {
                    hidden,
                    ..NetConfig::default()
                },
                &device,
            ),
            HashMap::new(),
        )
    }

    #[test]
    fn an_ensemble_keeps_every_member_and_survives_a_round_trip() {
        let (a, b) = (single(8, 1), single(12, 2));
        let mut metadata = HashMap::new();
        metadata.insert("rigml.train.command".to_string(), "test".to_string());
        let both = ModelFile::ensemble(&[a.clone(), b.clone()], metadata).unwrap();
        let reloaded = ModelFile::from_bytes(&both.to_bytes().unwrap(), "memory").unwrap();
        assert_eq!(reloaded, both);
        assert_eq!(reloaded.member_count().unwrap(), 2);
        assert_eq!(reloaded.member_weights(0).unwrap(), a.weights);
        assert_eq!(reloaded.member_weights(1).unwrap(), b.weights);
        assert!(reloaded.member_weights(2).is_err());
        assert_eq!(a.member_count().unwrap(), 1);
        assert_eq!(a.member_weights(0).unwrap(), a.weights);
        // Training resumes one network, not an ensemble.
        assert!(reloaded.net(&crate::device()).is_err());
        assert!(a.net(&crate::device()).is_ok());
    }

    #[test]
    fn a_voxel_prior_is_read_only_with_a_layout_that_holds_voxel_shares() {
        let device = crate::device();
        device.seed(1);
        let net = Net::new(
            NetConfig {
                hidden: 4,
                voxel_prior: true,
                ..NetConfig::default()
            },
            &device,
        );
        let layout = |version: u32| {
            let metadata = HashMap::from([(KEY_FEATURE_VERSION.to_string(), version.to_string())]);
            ModelFile::from_net(&net, metadata)
        };
        for version in [5, 6] {
            let file = layout(version);
            assert_eq!(voxel_prior_scale(&file.weights), Some(1.0));
            assert!(ModelFile::from_bytes(&file.to_bytes().unwrap(), "memory").is_ok());
        }
        // Layout 3 holds the candidate's rank where the prior would read voxel's share; in an
        // ensemble too.
        let err = ModelFile::from_bytes(&layout(3).to_bytes().unwrap(), "v3.safetensors")
            .unwrap_err()
            .to_string();
        assert!(err.contains("v3.safetensors") && err.contains("voxel"), "{err}");
        let ensemble = ModelFile::ensemble(&[single(4, 2), layout(3)], HashMap::new()).unwrap();
        assert!(ModelFile::from_bytes(&ensemble.to_bytes().unwrap(), "memory").is_err());
    }

    #[test]
    fn impossible_ensembles_are_refused() {
        let a = single(4, 1);
        assert!(ModelFile::ensemble(&[], HashMap::new()).is_err());
        let too_many = vec![a.clone(); MAX_MEMBERS + 1];
        assert!(ModelFile::ensemble(&too_many, HashMap::new()).is_err());
        let pair = ModelFile::ensemble(&[a.clone(), a.clone()], HashMap::new()).unwrap();
        assert!(ModelFile::ensemble(&[pair.clone(), a], HashMap::new()).is_err());
        for count in ["0", "17", "two", "-1"] {
            let mut broken = pair.clone();
            broken.metadata.insert(KEY_MEMBERS.into(), count.into());
            assert!(broken.member_count().is_err(), "{count} accepted");
        }
    }
}
