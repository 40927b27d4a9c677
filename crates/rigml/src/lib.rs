//! rigml as a library: the front door that the `rigml` command line and the Python package
//! both call.
//!
//! - [`load`] / [`save`] any supported format (glTF, FBX, OBJ, BVH, ...) as one [`Character`];
//! - [`solver`] by method name (`learned`, `heat`, `voxel`, `nearest`) and [`skin_weights`]
//!   with what DCC rigs need: a deform mask, explicit bone tails, locked weights ("selected
//!   bones only"), an influence cap, and a progress/cancel hook;
//! - [`placer`] by template name and [`rig`] for a bare mesh;
//! - [`eval_method`] / [`evaluate_file`] to score weights and skeletons as `rigml eval` does;
//! - [`train::train_skin`]: the skin model's training recipe, as `rigml train` runs it.
//!
//! # Quick start: load, skin, save
//!
//! ```no_run
//! use rigml::{load, save, skin_weights, SaveOptions, SkinRequest};
//! use std::path::Path;
//!
//! let mut character = load(Path::new("Ranger.glb"))?; // validated, bad input is an error
//! let solver = rigml::solver("learned", &Default::default())?; // or heat, voxel, nearest
//! let out = skin_weights(&character.mesh, &character.skeleton, solver.as_ref(), &SkinRequest::default(), &mut |_| true)?;
//! character.skin = Some(out.skin);
//! save(&character, Path::new("ranger-skinned.glb"), SaveOptions { force: true })?;
//! # Ok::<(), rigml::Error>(())
//! ```

/// The README's library quick start, compiled as a doctest so that it stays true to the API.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeQuickStart;

pub mod error;
pub mod evaluate;
pub mod methods;
pub mod skinning;
pub mod templates;
pub mod train;

pub use error::{Error, Result};
pub use evaluate::{eval_method, evaluate_file, given_weights, metrics, EvalSettings};
pub use methods::{solver, MethodSettings, METHODS};
pub use skinning::{skin_weights, SkinRequest, Skinned, Stage};
pub use templates::{placer, placer_with_model, Controls, TEMPLATES};

pub use rigml_core::{glam, Character, Mesh, Skeleton, Skin};
pub use rigml_io::{Format, SaveOptions};
pub use rigml_rig::{Rigged, SkeletonPlacer};
pub use rigml_skin::{Cancel, SkinSolver};

use std::path::Path;

/// Read a character from any supported format, checked on the way in.
pub fn load(path: &Path) -> Result<Character> {
    Ok(rigml_io::load(path)?)
}

/// Write a character; the format follows the extension. Atomic; an existing file is replaced
/// only with `options.force`.
pub fn save(character: &Character, path: &Path, options: SaveOptions) -> Result<()> {
    Ok(rigml_io::save(character, path, options)?)
}

/// Auto-rig a bare mesh: place a skeleton with the template called `template`, skin it with the
/// method called `method` (capped at `max_influences`), and return the rigged character named
/// `name` with the name of the template that placed it.
pub fn rig(name: &str, mesh: Mesh, template: &str, method: &str, max_influences: usize) -> Result<Rigged> {
    let placer = placer(template, Controls::default())?;
    let solver = solver(method, &MethodSettings::default())?;
    let options = rigml_skin::SolveOptions {
        max_influences,
        ..Default::default()
    };
    Ok(rigml_rig::rig_with_progress(
        name,
        mesh,
        placer.as_ref(),
        solver.as_ref(),
        &options,
        &mut |_| {},
    )?)
}
