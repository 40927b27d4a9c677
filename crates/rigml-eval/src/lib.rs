//! rigml-eval: the numbers of `docs/METRICS.md`, one function per metric, and the runner that
//! scores methods over a manifest split and writes `per_asset.csv`, `summary.md` and plots.
//!
//! Library entry points: [`run`] (manifest → [`Report`]), [`runner::evaluate`] (rows →
//! [`Report`]) and [`Report::write_to`].
//!
//! Intended `rigml eval` flags (wired by the CLI crate):
//! - `--data DIR|MANIFEST` — the manifest (default `../shared/data`), see [`Dataset::open`];
//! - `--split val|test|train|all` — which `character` rows to score (default `val`);
//! - `--method NAME` (repeatable) — a skin solver, adapted to a [`Method::solver`] closure with
//!   its declared influence cap and end-site behaviour;
//! - `--weights-from DIR[=NAME]` (repeatable) — external results, one file per asset named
//!   `<asset id>.npz` (`weights` N×J + `joint_names`) or `<asset id>.<glb|fbx|…>` with the GT's
//!   vertex order, aligned to the GT joints by name ([`ExternalFiles::from_dir`],
//!   [`Method::external`]); a missing file is a failure of that asset, not an error of the run;
//! - `--no-pictures` — skip [`pictures::write_pictures`] (each method's worst and best asset);
//! - `--out DIR` and `--force` — [`Report::write_to`]; `--no-deformation` —
//!   [`Options::deformation`]; `--puppeteer-filter X` — [`Options::puppeteer_filter`];
//! - `--rig-skin NAME` — the solver that skins a `rig-*` method's skeleton for the end-to-end
//!   deformation error ([`rig_deformation`], [`Method::skinned_rigger`]);
//! - a progress bar driven by the [`Progress`] callback.
//!
//! [`pictures`] draws each method's worst and best asset (artist vs method weights) for
//! `summary.md`.
//!
//! `external::write_npz` exports any skin (the GT, say) in the same `.npz` layout for tools
//! outside rigml.

pub mod bone_match;
pub mod dataset;
pub mod deformation;
pub mod error;
pub mod external;
pub mod families;
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
pub use report::Report;
pub use runner::{evaluate, run, run_fold, ExternalFiles, Method, Options, Progress};
