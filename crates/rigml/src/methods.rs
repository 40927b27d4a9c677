//! Skin-weight methods by name: the registry the CLI's `--method`, `rigml eval --methods` and
//! the Python package's `method=` all read, so that one name means one solver everywhere.

use crate::error::{invalid, Result};
use rigml_skin::{Heat, Nearest, SkinSolver, Voxel};
use std::path::Path;

/// The solvers a method name can be: `learned` (the trained network), `nearest` (distance to
/// bones), `heat` (bone heat diffusion, Blender's automatic weights), `voxel` (geodesic voxel
/// binding, Maya's).
pub const METHODS: &[&str] = &["learned", "nearest", "heat", "voxel"];

/// Settings of a method that are not part of its name.
#[derive(Debug, Clone, Default)]
pub struct MethodSettings<'a> {
    /// Voxel grid resolution along the longest side (`voxel`; `None`: its default, 256).
    pub resolution: Option<usize>,
    /// A model file from `rigml train` for `learned` (`None`: the model embedded in rigml).
    pub model: Option<&'a Path>,
}

/// The solver called `name`, with `settings`.
///
/// `A+B:S` (e.g. `learned+voxel:0.3`) is the blend of solvers A and B with a share S of B in
/// every row ([`rigml_skin::Blend`]).
///
/// ```
/// let solver = rigml::solver("heat", &rigml::MethodSettings::default()).unwrap();
/// assert_eq!(solver.name(), "heat");
/// assert!(rigml::solver("paint", &Default::default()).is_err());
/// ```
pub fn solver(name: &str, settings: &MethodSettings) -> Result<Box<dyn SkinSolver + Send>> {
    if let Some((first, rest)) = name.split_once('+') {
        let (second, share) = rest.split_once(':').ok_or_else(|| {
            invalid(format!(
                "method {name:?}: a blend is written A+B:SHARE, e.g. learned+voxel:0.3"
            ))
        })?;
        let share: f32 = share
            .parse()
            .map_err(|_| invalid(format!("method {name:?}: blend share {share:?} is not a number")))?;
        let first = solver(first, settings)?;
        let second = solver(second, settings)?;
        let blend =
            rigml_skin::Blend::new(first, second, share).map_err(|e| invalid(format!("method {name:?}: {e}")))?;
        return Ok(Box::new(blend));
    }
    Ok(match name {
        "learned" => Box::new(match settings.model {
            Some(path) => rigml_learn::Learned::from_file(path)?,
            None => rigml_learn::Learned::embedded()?,
        }),
        "nearest" => Box::new(Nearest::default()),
        "heat" => Box::new(Heat::default()),
        "voxel" => {
            let mut voxel = Voxel::default();
            if let Some(r) = settings.resolution {
                voxel.resolution = r;
            }
            Box::new(voxel)
        }
        other => {
            return Err(invalid(format!(
                "unknown method {other:?} (choose one of {})",
                METHODS.join(", ")
            )))
        }
    })
}
