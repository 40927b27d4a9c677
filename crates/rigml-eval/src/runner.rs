//! The evaluation loop: every method on every asset, METRICS.md §1–§4 per (asset, method).
//! What a method is, and how its weights are obtained, is [`crate::method`].

use crate::dataset::AssetRow;
use crate::deformation::{self, DeformScores};
use crate::method::{predict, Method, RigFn, SolveFn, Source};
use crate::report::{AssetResult, LoadFailure, Report};
use crate::rig_deformation;
use crate::robustness::{self, Declared, Failure};
use crate::skeleton_metrics::{self, JointSet};
use crate::skin_metrics::{self, Mode, PreparedGt, Row};
use crate::EvalError;
use rigml_core::{Character, Skeleton, Skin};
use std::path::Path;

/// Evaluation switches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Compute the deformation error (§3); the slowest part.
    pub deformation: bool,
    /// Relative filter of the pooled Puppeteer variant.
    pub puppeteer_filter: f32,
    /// Score every method on a denser copy of each asset: its triangles split in four this
    /// many times, the artist's weights interpolated ([`rigml_core::subdivided`]). Meshes from
    /// other tools are often much denser than the data set's; this shows how a method's
    /// weights depend on density.
    pub subdivide: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            deformation: true,
            puppeteer_filter: skin_metrics::PUPPETEER_FILTER,
            subdivide: 0,
        }
    }
}

/// Progress events for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress<'a> {
    /// Asset `index` of `total` starts.
    Asset { index: usize, total: usize, id: &'a str },
    /// Every asset is done.
    Done,
}

/// GT of one asset, prepared once for all methods.
struct Prepared {
    character: Character,
    gt: PreparedGt,
    gt_top4: Skin,
    skinned: Vec<bool>,
    scale: f32,
    /// §1 normalisation of the stored (bind-pose) mesh, where riggers place joints.
    bind_centre: glam::Vec3,
    bind_scale: f32,
    end_sites: Vec<usize>,
    random_poses: Vec<rigml_core::Pose>,
    clip_poses: Vec<rigml_core::Pose>,
}

fn prepare(row: &AssetRow, options: &Options) -> Result<Prepared, String> {
    let mut character = rigml_io::load(&row.path).map_err(|e| e.to_string())?;
    for _ in 0..options.subdivide {
        character = rigml_core::subdivided(&character).map_err(|e| format!("subdividing: {e}"))?;
    }
    let skin = character.skin.as_ref().ok_or("no ground-truth skin")?;
    let gt = PreparedGt::new(&skin_metrics::rows_of(skin));
    let joints = character.skeleton.joint_count();
    let gt_top4 = top4_skin(&gt.top4, joints).map_err(|e| format!("ground truth: {e}"))?;
    let skinned: Vec<bool> = gt.full.iter().map(Option::is_some).collect();
    // Bind space (the stored mesh) for bone lengths; rest-posed space for deformation.
    let (bind_centre, bind_scale) = deformation::normalisation(&character.mesh.positions)
        .ok_or("mesh has no extent (empty, flat to a point or not finite)")?;
    let (_, scale) = deformation::rest_normalisation(&character.mesh.positions, &character.skeleton, skin, &skinned)?
        .ok_or("rest-posed mesh has no extent (flat to a point or not finite)")?;
    let end_sites = robustness::zero_length_end_sites(&character.skeleton, bind_scale);
    let (random_poses, clip_poses) = if options.deformation {
        (
            deformation::random_poses(&row.id, &character.skeleton),
            deformation::clip_poses(&character.clips, &character.skeleton),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(Prepared {
        character,
        gt,
        gt_top4,
        skinned,
        scale,
        bind_centre,
        bind_scale,
        end_sites,
        random_poses,
        clip_poses,
    })
}

fn top4_skin(rows: &[Option<Row>], joints: usize) -> Result<Skin, String> {
    let empty: Row = Vec::new();
    Skin::from_rows(rows.iter().map(|r| r.as_ref().unwrap_or(&empty).as_slice()), joints, 4).map_err(|e| e.to_string())
}

/// Run a rigger on the bare mesh of a prepared asset and score its skeleton (§5, §4).
fn run_rigger(
    row: &AssetRow,
    p: &Prepared,
    method: &Method,
    rig: &RigFn,
    skin: Option<&SolveFn>,
    options: &Options,
) -> AssetResult {
    let n = p.character.mesh.vertex_count();
    let joints = p.character.skeleton.joint_count();
    let bare = Character {
        name: p.character.name.clone(),
        mesh: p.character.mesh.clone(),
        ..Character::default()
    };
    let (output, run) = robustness::measure(|| rig(&bare));
    let mut result = AssetResult::new(&row.id, &method.name, n, joints, p.gt.unskinned, p.gt.is_data_issue());
    result.wall_s = Some(run.wall_s);
    result.peak_rss_mib = run.peak_rss_mib;
    let skeleton = match output {
        Ok(s) => s,
        Err(f) => {
            result.failures.push(f);
            return result;
        }
    };
    let skeleton_ok = !skeleton.is_empty() && skeleton.bind_positions().iter().all(|q| q.is_finite());
    let gt = JointSet::from_skeleton(&p.character.skeleton, p.bind_centre, p.bind_scale);
    let pred = JointSet::from_skeleton(&skeleton, p.bind_centre, p.bind_scale);
    if let Some(j) = pred.positions.iter().position(|q| !q.is_finite()) {
        result.failures.push(Failure::NonFiniteJoint { joint: j });
    } else {
        match skeleton_metrics::score(&pred, &gt) {
            Some(scores) => result.skeleton = Some(scores),
            None if pred.positions.is_empty() => result.failures.push(Failure::NoJoints),
            None => result
                .notes
                .push("skeleton metrics: the ground truth has no joint".into()),
        }
    }
    if let Some(f) = robustness::check_time(std::time::Duration::from_secs_f64(run.wall_s), n) {
        result.failures.push(f);
    }
    if let (Some(skin), true, true) = (skin, options.deformation, skeleton_ok) {
        rig_deformation(p, bare, skeleton, skin, &mut result);
    }
    result
}

/// Skin the placed `skeleton` on the bare mesh and score the end-to-end deformation error
/// ([`crate::rig_deformation`]) over both pose sets. A skin that fails or does not pass the §4
/// weight checks leaves the columns empty with a note (the rigger's §5 scores stand).
fn rig_deformation(p: &Prepared, bare: Character, skeleton: Skeleton, skin: &SolveFn, result: &mut AssetResult) {
    let n = p.character.mesh.vertex_count();
    let joints = skeleton.joint_count();
    let rigged = Character { skeleton, ..bare };
    let rows = match skin(&rigged) {
        Ok(s) => skin_metrics::rows_of(&s),
        Err(e) => {
            result.notes.push(format!("rig skin: {e}"));
            return;
        }
    };
    let declared = Declared {
        cap: usize::MAX,
        ignores_end_sites: false,
    };
    let gt_unskinned: Vec<bool> = p.skinned.iter().map(|s| !s).collect();
    if let Some(f) = robustness::check_rows(&rows, n, joints, declared, &[], &gt_unskinned).first() {
        result.notes.push(format!("rig skin: {f}"));
        return;
    }
    let top4: Vec<Option<Row>> = rows
        .iter()
        .map(|r| skin_metrics::top_k(r, skin_metrics::TOP_K))
        .collect();
    let pred = match top4_skin(&top4, joints) {
        Ok(s) => s,
        Err(e) => {
            result.notes.push(format!("rig skin: {e}"));
            return;
        }
    };
    let mut score = |poses: &[rigml_core::Pose]| -> Option<DeformScores> {
        rig_deformation::rig_deformation_error(
            &p.character.mesh.positions,
            &p.character.skeleton,
            &p.gt_top4,
            &rigged.skeleton,
            &pred,
            &p.skinned,
            poses,
            p.scale,
        )
        .unwrap_or_else(|e| {
            result.notes.push(format!("rig deformation: {e}"));
            None
        })
    };
    let a = score(&p.random_poses);
    let b = score(&p.clip_poses);
    result.rig_deform_random = a;
    result.rig_deform_clips = b;
}

/// Run one method on one prepared asset.
fn run_method(row: &AssetRow, p: &Prepared, method: &Method, options: &Options) -> AssetResult {
    let n = p.character.mesh.vertex_count();
    let joints = p.character.skeleton.joint_count();
    let input = match &method.source {
        Source::Solver(_) => Some(Character {
            skin: None,
            ..p.character.clone()
        }),
        Source::External(_) => None,
        Source::Rigger(rig, skin) => return run_rigger(row, p, method, rig.as_ref(), skin.as_deref(), options),
    };
    let (output, run) = robustness::measure(|| predict(&row.id, input.as_ref().unwrap_or(&p.character), method));
    let mut result = AssetResult::new(&row.id, &method.name, n, joints, p.gt.unskinned, p.gt.is_data_issue());
    result.wall_s = Some(run.wall_s);
    result.peak_rss_mib = run.peak_rss_mib;
    let rows = match output {
        Ok(rows) => rows,
        Err(f) => {
            result.failures.push(f);
            return result;
        }
    };
    let gt_unskinned: Vec<bool> = p.skinned.iter().map(|s| !s).collect();
    result.failures = robustness::check_rows(&rows, n, joints, method.declared, &p.end_sites, &gt_unskinned);
    if let Some(f) = robustness::check_time(std::time::Duration::from_secs_f64(run.wall_s), n) {
        result.failures.push(f);
    }
    if result.failures.iter().any(|f| matches!(f, Failure::Shape(_))) {
        return result;
    }
    result.raw = skin_metrics::score(&rows, &p.gt, Mode::Raw).ok();
    result.top4 = skin_metrics::score(&rows, &p.gt, Mode::Top4).ok();
    result.pool = skin_metrics::score_pool(&rows, &p.gt, options.puppeteer_filter).ok();
    if options.deformation {
        let pr_rows: Vec<Option<Row>> = rows
            .iter()
            .map(|r| skin_metrics::top_k(r, skin_metrics::TOP_K))
            .collect();
        match top4_skin(&pr_rows, joints) {
            Ok(pred) => {
                let mut score = |poses: &[rigml_core::Pose]| -> Option<DeformScores> {
                    deformation::deformation_error(
                        &p.character.mesh.positions,
                        &p.character.skeleton,
                        &p.gt_top4,
                        &pred,
                        &p.skinned,
                        poses,
                        p.scale,
                    )
                    .unwrap_or_else(|e| {
                        result.notes.push(format!("deformation: {e}"));
                        None
                    })
                };
                let a = score(&p.random_poses);
                let b = score(&p.clip_poses);
                result.deform_random = a;
                result.deform_clips = b;
            }
            Err(e) => result.notes.push(format!("deformation: {e}")),
        }
    }
    result
}

/// Score every method on every row. Rows whose GT cannot be loaded or prepared are listed in
/// [`Report::load_failures`] and skipped. `progress` is called before each asset.
pub fn evaluate(
    rows: &[&AssetRow],
    methods: &[Method],
    options: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Report {
    let mut report = Report {
        methods: methods.iter().map(|m| m.name.clone()).collect(),
        ..Report::default()
    };
    for (index, row) in rows.iter().enumerate() {
        report.families.insert(row.id.clone(), row.family.clone());
        progress(Progress::Asset {
            index,
            total: rows.len(),
            id: &row.id,
        });
        let prepared = match prepare(row, options) {
            Ok(p) => p,
            Err(message) => {
                report.load_failures.push(LoadFailure {
                    asset: row.id.clone(),
                    message,
                });
                continue;
            }
        };
        for method in methods {
            report.results.push(run_method(row, &prepared, method, options));
        }
    }
    progress(Progress::Done);
    report.sort();
    report
}

/// Open the manifest at `data` (folder or file), take the `character` rows of `split`
/// (`None` = all) and [`evaluate`] them.
pub fn run(
    data: &Path,
    split: Option<&str>,
    methods: &[Method],
    options: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, EvalError> {
    run_fold(data, split, None, methods, options, progress)
}

/// [`run`] on the held-out families of one fold of a family-grouped cross-validation over the
/// split's characters ([`crate::Dataset::select_fold`]); `None` scores the whole split.
pub fn run_fold(
    data: &Path,
    split: Option<&str>,
    fold: Option<crate::Fold>,
    methods: &[Method],
    options: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, EvalError> {
    let dataset = crate::Dataset::open(data)?;
    let rows = match fold {
        Some(fold) => dataset.select_fold(Some("character"), split, fold, true)?,
        None => dataset.select(Some("character"), split),
    };
    Ok(evaluate(&rows, methods, options, progress))
}
