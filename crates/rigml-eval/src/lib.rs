//! rigml-eval: the numbers of `docs/METRICS.md`, one function per metric, and the runner that
//! scores methods over a manifest split.
//!
//! Entry points: [`run`] (a manifest split → [`Report`]), [`run_fold`] (the held-out families
//! of one cross-validation fold), [`evaluate`] (rows → [`Report`]); [`output::write_report`]
//! puts a report on disk (`per_asset.csv`, `per_family.csv`, `timing.csv`, `summary.md`,
//! plots), and [`pictures::write_pictures`] draws each method's worst and best asset (artist
//! against method weights) for it.
//!
//! The layers, bottom up: the metrics (`skin_metrics`, `deformation`, `skeleton_metrics`,
//! `rig_deformation`, `retarget_metrics`, `sequence_metrics`, `robustness`) and the data
//! (`dataset`, `external`); [`method`] (what is evaluated and how its weights are obtained);
//! [`report`] (per-asset results as data, and their CSV); `runner` (the loop), `families`,
//! `summary`, `plots` and `pictures` (views of a report); [`output`] (the files).
//!
//! `external::write_npz` exports any skin (the GT, say) in the `.npz` layout that
//! [`method::ExternalFiles`] reads, for tools outside rigml.

pub mod bone_match;
pub mod dataset;
pub mod deformation;
pub mod error;
pub mod external;
pub mod families;
pub mod method;
pub mod output;
pub mod pictures;
pub mod plots;
pub mod report;
pub mod retarget_metrics;
pub mod rig_deformation;
pub mod robustness;
pub mod runner;
pub mod sequence_metrics;
pub mod skeleton_metrics;
pub mod skin_metrics;
pub mod summary;

pub use dataset::{family_folds, family_of, AssetRow, Dataset, Fold};
pub use error::EvalError;
pub use method::{ExternalFiles, Method};
pub use output::write_report;
pub use report::Report;
pub use runner::{evaluate, run, run_fold, Options, Progress};
