//! Learned skin weights (ALGORITHMS.md §4): per (vertex, candidate bone) features in
//! bone-relative, scale-normalised coordinates ([`features`]), a small `burn` network scoring
//! every pair ([`model`]), training on skinned characters with a weight KL loss plus an LBS
//! deformation loss under random poses ([`train`], samples and pose augmentation in
//! [`sample`]), and inference as a [`rigml_skin::SkinSolver`] ([`Learned`], with the default
//! model embedded in the binary).
//!
//! Inference always runs on the CPU, in hand-written forward passes over the saved weights
//! ([`forward`], [`skeleton::forward`]): it needs no deep-learning framework. Training needs
//! `burn` (autodiff and the Adam optimiser), which only the `train` cargo feature builds: burn is
//! about half of a cold build, and a user who only rigs and skins does not pay for it. Without
//! the feature, [`train::train`] and [`skeleton::train::train`] return
//! [`LearnError::NoTraining`]. With it, training runs on `training_device`: burn's CPU
//! (ndarray) backend, or a GPU with the `wgpu` feature (not built in CI; burn's CubeCL wgpu
//! runtime over Vulkan, Metal or DX12).

pub mod curves;
pub mod features;
pub mod forward;
pub mod infer;
pub mod model;
#[cfg(feature = "train")]
pub mod net;
pub mod sample;
pub mod skeleton;
pub mod train;

pub use infer::Learned;
pub use model::{ModelFile, NetConfig};
#[cfg(feature = "train")]
pub use net::Net;
pub use sample::{SampleOptions, Samples};
pub use train::{TrainConfig, TrainEvent};

use thiserror::Error;

/// What can go wrong while learning or applying a model.
#[derive(Debug, Error)]
pub enum LearnError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: not a usable rigml model: {problem}")]
    ModelFile { path: String, problem: String },
    #[error("model: {0}")]
    Model(String),
    #[error("{0}")]
    Data(String),
    #[error("training: {0}")]
    Train(String),
    #[error(
        "training: this rigml was built without training (the `train` cargo feature, which \
         builds burn); build it with `cargo build --release --features train` or \
         `cargo install --path crates/rigml-cli --features train`"
    )]
    NoTraining,
}

/// What `training_device` is, as a summary names it (e.g. `Device<NdArray(Cpu)>`), or
/// [`LearnError::NoTraining`] in a build without the `train` feature. A wgpu build on a machine
/// where wgpu finds no adapter gets its error here, before any work.
pub fn training_device_name() -> Result<String, LearnError> {
    #[cfg(feature = "train")]
    {
        Ok(format!("{:?}", training_device()?))
    }
    #[cfg(not(feature = "train"))]
    {
        Err(LearnError::NoTraining)
    }
}

/// burn's CPU device (the ndarray backend): where a loaded model is evaluated during training,
/// and where the default training build fits.
#[cfg(feature = "train")]
#[allow(deprecated)] // burn 0.22 marks ndarray for later removal; it is the CPU backend built here
pub fn device() -> burn::tensor::Device {
    burn::tensor::Device::ndarray()
}

/// The device `rigml train` and `rigml train-skeleton` fit on: in a build with the `wgpu`
/// feature, the adapter wgpu rates best (a high-power GPU first; `CUBECL_WGPU_DEFAULT_DEVICE`
/// overrides it, e.g. `IntegratedGpu(0)` or `Cpu`), otherwise the CPU of [`device`]. A GPU run
/// is not bit-for-bit reproducible with its seed; a CPU run is. A wgpu build on a machine where
/// wgpu finds no adapter gets an error here, before any work, instead of a panic mid-run.
#[cfg(feature = "train")]
pub fn training_device() -> Result<burn::tensor::Device, LearnError> {
    #[cfg(feature = "wgpu")]
    {
        let device = burn::tensor::Device::wgpu(burn::tensor::DeviceKind::DefaultDevice);
        let probe = device.clone();
        // burn reports a missing adapter by panicking on first use; silence that panic's
        // message for the probe and answer with an error.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let usable = std::panic::catch_unwind(move || {
            burn::tensor::Tensor::<1>::zeros([1], &probe).into_data();
        });
        std::panic::set_hook(hook);
        match usable {
            Ok(()) => Ok(device),
            Err(_) => Err(LearnError::Train(
                "this rigml is built with the wgpu feature, but wgpu could open no adapter (none \
                 found, or not the one CUBECL_WGPU_DEFAULT_DEVICE names); a default (CPU) build \
                 trains anywhere"
                    .into(),
            )),
        }
    }
    #[cfg(not(feature = "wgpu"))]
    {
        Ok(device())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(feature = "train", not(feature = "wgpu")))]
    fn the_default_build_trains_on_the_cpu_it_infers_on() {
        assert_eq!(super::training_device().unwrap(), super::device());
    }

    #[test]
    #[cfg(not(feature = "train"))]
    fn a_build_without_training_says_how_to_get_it() {
        let e = super::training_device_name().unwrap_err().to_string();
        assert!(e.contains("--features train"), "{e}");
    }
}
