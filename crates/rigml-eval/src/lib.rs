//! rigml-eval: the numbers of `docs/METRICS.md`, one function per metric, and the runner that
//! scores methods over a manifest split and writes `per_asset.csv`, `summary.md` and plots.
//!
//! Library entry points: [`run`] (manifest → [`Report`]), [`runner::evaluate`] (rows →
//! [`Report`]) and [`Report::write_to`].

pub mod dataset;
pub mod deformation;
pub mod error;
pub mod external;
pub mod plots;
pub mod report;
pub mod retarget_metrics;
pub mod robustness;
pub mod runner;
pub mod sequence_metrics;
pub mod skeleton_metrics;
pub mod skin_metrics;
pub mod summary;

pub use dataset::{AssetRow, Dataset};
pub use error::EvalError;
pub use report::Report;
pub use runner::{evaluate, run, ExternalFiles, Method, Options, Progress};
