//! A method under evaluation and how its weights are obtained.
//!
//! A method is either a solver closure (`Fn(&Character) -> Result<Skin, String>`; the CLI adapts
//! skin solvers to it, so this crate does not depend on them), an external weight set read from
//! files, or a rigger (`Fn(&Character) -> Result<Skeleton, String>`, an auto-rigging placer given
//! the bare mesh) scored with the skeleton metrics of METRICS.md §5. External files are matched
//! to assets by **file stem = asset id** (`kaykit2-ranger.npz` scores asset `kaykit2-ranger`);
//! [`ExternalFiles::from_pairs`] takes an explicit list instead.

use crate::external;
use crate::robustness::Declared;
use crate::skin_metrics::{self, Row};
use crate::EvalError;
use rigml_core::{Character, Skeleton, Skin};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A solver as the evaluation sees it. It receives the character **without** its GT skin.
pub type SolveFn = dyn Fn(&Character) -> Result<Skin, String> + Send + Sync;

/// A rigger as the evaluation sees it: it receives the character's mesh only (no skeleton, skin
/// or clips) and returns a skeleton whose bind pose is in the mesh's space.
pub type RigFn = dyn Fn(&Character) -> Result<Skeleton, String> + Send + Sync;

/// Where external weights come from: asset id → file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExternalFiles {
    pub files: BTreeMap<String, PathBuf>,
}

impl ExternalFiles {
    /// Every file in `dir` whose stem is an asset id (`.npz` or any character format). Two files
    /// with the same stem are an error (which one is meant is unclear).
    pub fn from_dir(dir: &Path) -> Result<ExternalFiles, EvalError> {
        let entries = std::fs::read_dir(dir).map_err(|source| EvalError::File {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut files = BTreeMap::new();
        for entry in entries {
            let path = entry
                .map_err(|source| EvalError::File {
                    path: dir.to_path_buf(),
                    source,
                })?
                .path();
            if !path.is_file() {
                continue;
            }
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if let Some(old) = files.insert(stem.to_string(), path.clone()) {
                return Err(EvalError::weights(
                    dir,
                    format!("both {} and {} claim asset `{stem}`", old.display(), path.display()),
                ));
            }
        }
        Ok(ExternalFiles { files })
    }

    /// An explicit `(asset id, file)` list.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, PathBuf)>) -> ExternalFiles {
        ExternalFiles {
            files: pairs.into_iter().collect(),
        }
    }
}

/// What produces a method's weights.
pub enum Source {
    Solver(Box<SolveFn>),
    External(ExternalFiles),
    /// A skeleton placer, scored against the GT skeleton (METRICS.md §5), and optionally the
    /// solver that skins its skeleton, for the end-to-end deformation error
    /// ([`crate::rig_deformation`]).
    Rigger(Box<RigFn>, Option<Box<SolveFn>>),
}

/// A named method under evaluation.
pub struct Method {
    pub name: String,
    pub source: Source,
    /// Its declared cap and end-site behaviour (§4 checks 5–6).
    pub declared: Declared,
}

impl Method {
    /// A solver closure.
    pub fn solver(
        name: &str,
        declared: Declared,
        f: impl Fn(&Character) -> Result<Skin, String> + Send + Sync + 'static,
    ) -> Method {
        Method {
            name: name.to_string(),
            source: Source::Solver(Box::new(f)),
            declared,
        }
    }

    /// A rigger: skeleton metrics (§5) instead of weight metrics; failures are errors, no or
    /// non-finite joints, and the time limit (§4).
    pub fn rigger(name: &str, f: impl Fn(&Character) -> Result<Skeleton, String> + Send + Sync + 'static) -> Method {
        Method {
            name: name.to_string(),
            source: Source::Rigger(Box::new(f), None),
            declared: Declared {
                cap: usize::MAX,
                ignores_end_sites: false,
            },
        }
    }

    /// A rigger whose skeleton is then skinned by `skin` (given the bare mesh with the placed
    /// skeleton), so that besides §5 the end-to-end deformation error of the whole rig
    /// ([`crate::rig_deformation`]) is scored when [`Options::deformation`] is on.
    pub fn skinned_rigger(
        name: &str,
        place: impl Fn(&Character) -> Result<Skeleton, String> + Send + Sync + 'static,
        skin: impl Fn(&Character) -> Result<Skin, String> + Send + Sync + 'static,
    ) -> Method {
        let mut method = Method::rigger(name, place);
        if let Source::Rigger(_, s) = &mut method.source {
            *s = Some(Box::new(skin));
        }
        method
    }

    /// Weights read from files; the cap is not declared (any count passes check 5).
    pub fn external(name: &str, files: ExternalFiles) -> Method {
        Method {
            name: name.to_string(),
            source: Source::External(files),
            declared: Declared {
                cap: usize::MAX,
                ignores_end_sites: false,
            },
        }
    }
}

/// The weight rows `method` gives for asset `id`: the solver run on `character` (which must
/// not carry the GT skin), or the external file aligned to the character's joints by name.
pub(crate) fn predict(id: &str, character: &Character, method: &Method) -> Result<Vec<Row>, String> {
    match &method.source {
        Source::Solver(f) => f(character).map(|s| skin_metrics::rows_of(&s)),
        Source::Rigger(..) => Err(format!("{} is a rigger: it makes skeletons, not weights", method.name)),
        Source::External(files) => {
            let path = files
                .files
                .get(id)
                .ok_or_else(|| format!("no weights file for asset `{id}`"))?;
            let ext = external::read(path).map_err(|e| e.to_string())?;
            external::align_by_name(&ext, &character.skeleton.names, character.mesh.vertex_count())
                .map_err(|e| e.to_string())
        }
    }
}
