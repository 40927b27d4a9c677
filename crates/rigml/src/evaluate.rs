//! Scoring by method name: the methods `rigml eval --methods` takes (skin solvers, blends and
//! `rig-<template>` auto-riggers), and one file scored as `rigml eval` scores a manifest row,
//! so that a batch run elsewhere (Python, Ray) gives the same numbers; [`given_weights`] scores
//! weights computed elsewhere.

use crate::error::{invalid, Result};
use crate::methods::{solver, MethodSettings, METHODS};
use crate::templates::{placer_with_model, Controls, TEMPLATES};
use rigml_eval::report::{AssetResult, METRICS};
use rigml_eval::robustness::Declared;
use rigml_eval::{AssetRow, Method, Options};
use rigml_skin::SolveOptions;
use std::path::Path;

/// How [`eval_method`] builds a method beyond its name.
#[derive(Debug, Clone)]
pub struct EvalSettings<'a> {
    /// The learned model file (`None`: the embedded one), for `learned` and for `rig_skin`.
    pub model: Option<&'a Path>,
    /// The skeleton model file for the `rig-*` methods that use one (`None`: the embedded one).
    pub skeleton_model: Option<&'a Path>,
    /// The skin method that skins a rigger's placed skeleton for the end-to-end deformation.
    pub rig_skin: &'a str,
    /// Whether deformation errors are computed (riggers then skin their skeleton).
    pub deformation: bool,
}

impl Default for EvalSettings<'_> {
    fn default() -> Self {
        EvalSettings {
            model: None,
            skeleton_model: None,
            rig_skin: "learned",
            deformation: true,
        }
    }
}

/// The evaluation method called `name`: a skin method ([`METHODS`] or a blend `A+B:S`) scored
/// on its weights, or `rig-TEMPLATE[:no-ground-root][:poles]` scored on its skeleton (and, with
/// deformation on, on the end-to-end deformation of its skeleton skinned by `rig_skin`).
pub fn eval_method(name: &str, settings: &EvalSettings) -> Result<Method> {
    let method_settings = MethodSettings {
        resolution: None,
        model: settings.model,
    };
    if let Some(spec) = name.strip_prefix("rig-") {
        // The template without or with a control rule, to measure what the rule is worth.
        let mut parts = spec.split(':');
        let template = parts.next().unwrap_or_default();
        let mut controls = Controls::default();
        for switch in parts {
            match switch {
                "no-ground-root" => controls.ground_root = false,
                "no-poles" => controls.poles = false,
                "poles" => controls.poles = true,
                other => {
                    return Err(invalid(format!(
                        "method {name}: unknown switch {other:?} (no-ground-root, poles, no-poles)"
                    )))
                }
            }
        }
        let placer = placer_with_model(template, controls, settings.skeleton_model)
            .map_err(|e| invalid(format!("method {name}: {e}")))?;
        let place = move |c: &rigml_core::Character| {
            placer
                .place(&c.mesh)
                .and_then(|p| p.to_skeleton())
                .map_err(|e| e.to_string())
        };
        if !settings.deformation {
            return Ok(Method::rigger(name, place));
        }
        let options = SolveOptions::default();
        let skinner = solver(settings.rig_skin, &method_settings)?;
        return Ok(Method::skinned_rigger(name, place, move |c| {
            rigml_rig::skin_placed(&c.mesh, &c.skeleton, skinner.as_ref(), &options).map_err(|e| e.to_string())
        }));
    }
    if !METHODS.contains(&name) && !name.contains('+') {
        let riggers: Vec<String> = TEMPLATES.iter().map(|t| format!("rig-{t}")).collect();
        return Err(invalid(format!(
            "unknown method {name:?} (choose from {}, {})",
            METHODS.join(", "),
            riggers.join(", ")
        )));
    }
    let options = SolveOptions::default();
    let solver = solver(name, &method_settings)?;
    let declared = Declared {
        cap: options.max_influences,
        ignores_end_sites: false,
    };
    Ok(Method::solver(name, declared, move |c| {
        solver.solve(&c.mesh, &c.skeleton, &options).map_err(|e| e.to_string())
    }))
}

/// A method called `name` that answers with weights computed elsewhere: `rows`, one raw
/// `(joint, weight)` row per vertex of the file's mesh, joints in the file's order, capped at
/// `cap` influences (what the method promised). [`evaluate_file`] with it scores weights a
/// caller already has (a batch that has just skinned the file) without solving again; a row
/// count or joint index that does not fit the file is the method's failure, named.
pub fn given_weights(name: &str, rows: Vec<Vec<(u32, f32)>>, cap: usize) -> Method {
    let declared = Declared {
        cap,
        ignores_end_sites: false,
    };
    Method::solver(name, declared, move |c| {
        let n = c.mesh.vertex_count();
        if rows.len() != n {
            return Err(format!("{} rows of weights given for {n} vertices", rows.len()));
        }
        rigml_core::Skin::from_rows(rows.iter().map(Vec::as_slice), c.skeleton.joint_count(), cap.max(1))
            .map_err(|e| format!("the given weights: {e}"))
    })
}

/// One character file scored against its own weights (and skeleton) by every method, exactly as
/// `rigml eval` scores a manifest row. `id` seeds the random poses of the deformation metric
/// (METRICS.md §3): pass the manifest's asset id to reproduce `rigml eval`'s numbers.
pub fn evaluate_file(path: &Path, id: &str, methods: &[Method], options: &Options) -> Result<Vec<AssetResult>> {
    let row = AssetRow::character(id, path);
    let report = rigml_eval::evaluate(&[&row], methods, options, &mut |_| {});
    if let Some(failure) = report.load_failures.first() {
        return Err(invalid(format!("{}: {}", path.display(), failure.message)));
    }
    Ok(report.results)
}

/// Every metric of a result by its `per_asset.csv` column name (absent metrics left out).
pub fn metrics(result: &AssetResult) -> Vec<(&'static str, f64)> {
    METRICS
        .iter()
        .filter_map(|m| (m.get)(result).map(|v| (m.name, v)))
        .collect()
}
