//! Skeleton templates by name: the registry behind `rigml rig --template`, `rigml eval
//! --methods rig-<template>` and the Python package's `template=`.

use crate::error::{invalid, Result};
use rigml_rig::SkeletonPlacer;
use std::path::Path;

/// The templates a name can be. `detect` (the default) is `humanoid` when the shape is a
/// standing humanoid (carrying the rig library's alike humanoids' conventions onto its
/// landmarks when there are such), else the skeleton model's rig library when the shape is like one of its
/// characters, else `auto` (the curve skeleton less the end chains the learned placer finds no
/// joint near); `curve` is the curve skeleton alone, `learned` the learned placer alone and
/// `library` the library's most alike rig however alike.
pub const TEMPLATES: &[&str] = &["detect", "humanoid", "auto", "curve", "learned", "library"];

/// Which weightless control joints the templates add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Controls {
    /// IK pole targets in front of a quadruped's legs (general template).
    pub poles: bool,
    /// A ground root above the placed root (humanoid and general templates).
    pub ground_root: bool,
    /// `detect` gives a standing humanoid the artists' conventions of the rig library's alike
    /// humanoids, carried onto the template's landmarks ([`rigml_rig::library::humanoid_match`]).
    /// Off for `rig-seq`, which fits poses to the template's own joints.
    pub humanoid_conventions: bool,
}

impl Default for Controls {
    fn default() -> Self {
        Controls {
            poles: false,
            ground_root: true,
            humanoid_conventions: true,
        }
    }
}

/// The skeleton placer of `template`, adding the `controls` asked for.
///
/// ```
/// let placer = rigml::placer("humanoid", rigml::Controls::default()).unwrap();
/// assert_eq!(placer.name(), "humanoid");
/// assert!(rigml::placer("biped", rigml::Controls::default()).is_err());
/// ```
pub fn placer(template: &str, controls: Controls) -> Result<Box<dyn SkeletonPlacer + Send>> {
    placer_with_model(template, controls, None)
}

/// [`placer`] with the skeleton model read from `skeleton_model` (a file from `rigml
/// train-skeleton`) instead of the embedded one, for the templates that use it (`detect`,
/// `auto`, `learned`, `library`); `humanoid` and `curve` use no model and ignore it. This is
/// how a user's own skeleton model (and rig library), or a cross-validation fold's, places
/// joints.
pub fn placer_with_model(
    template: &str,
    controls: Controls,
    skeleton_model: Option<&Path>,
) -> Result<Box<dyn SkeletonPlacer + Send>> {
    let learned = || -> Result<rigml_rig::LearnedPlacer> {
        Ok(match skeleton_model {
            Some(path) => rigml_rig::LearnedPlacer::from_file(path)?,
            None => rigml_rig::LearnedPlacer::embedded()?,
        })
    };
    let mut curve = rigml_rig::CurveSkeleton::default();
    curve.params.leg_poles = controls.poles;
    curve.params.ground_root = controls.ground_root;
    let humanoid = rigml_rig::Humanoid {
        ground_root: controls.ground_root,
        ..rigml_rig::Humanoid::default()
    };
    Ok(match template {
        "auto" => Box::new(rigml_rig::Auto {
            curve,
            learned: learned()?,
        }),
        "curve" => Box::new(curve),
        "humanoid" => Box::new(humanoid),
        "detect" => Box::new(rigml_rig::Detect {
            humanoid,
            auto: rigml_rig::Auto {
                curve,
                learned: learned()?,
            },
            // The controls are the templates': asking for other controls asks for the templates.
            library: !controls.poles && controls.ground_root,
            humanoid_conventions: controls.humanoid_conventions,
        }),
        "learned" => Box::new(learned()?),
        "library" => Box::new(rigml_rig::LibraryPlacer { learned: learned()? }),
        other => {
            return Err(invalid(format!(
                "unknown template {other:?} (choose one of {})",
                TEMPLATES.join(", ")
            )))
        }
    })
}
