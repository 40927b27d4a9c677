//! Pictures for the report: for each method, its worst and best counted asset (by Deform p95 on
//! pose set (a), or by raw L1 when the deformation error was not computed) drawn with
//! `rigml_viz::render_compare`: the artist's weights, the method's, and their difference, for
//! the joint where the two differ most (largest summed |Δw| over the vertices). `summary.md`
//! links the PNGs, written next to it.
//!
//! The method's weights are computed again for the pictured assets (two per method) rather
//! than kept for every asset during the run: memory stays flat on large splits.

use crate::dataset::Dataset;
use crate::method::{predict, Method};
use crate::report::{AssetResult, Report};
use crate::skin_metrics::Row;
use crate::EvalError;
use rigml_core::{Character, Skin};
use rigml_viz::{render_compare, RenderOptions, View, WeightMode};
use std::path::Path;

/// Panel side of report pictures in pixels (2 views × 3 rows).
pub const PICTURE_SIZE: u32 = 256;

/// One picture of the report (or why it could not be drawn).
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub method: String,
    /// `"worst"` or `"best"`.
    pub which: &'static str,
    pub asset: String,
    /// The ranking metric and the asset's value of it.
    pub metric: &'static str,
    pub value: f64,
    /// File name inside the report folder, or the reason there is none.
    pub file: Result<String, String>,
    /// The joint drawn (where artist and method differ most) and that joint's largest
    /// per-vertex weight difference.
    pub joint: Option<(String, f32)>,
}

/// The ranking metric of `method`: Deform p95 (a) when the method has it on any counted asset,
/// else raw L1.
fn ranking(report: &Report, method: &str) -> (&'static str, fn(&AssetResult) -> Option<f64>) {
    let deform = |r: &AssetResult| r.deform_random.map(|d| d.p95);
    if report.of(method).filter(|r| r.counts()).any(|r| deform(r).is_some()) {
        ("deform_a_p95", deform)
    } else {
        ("l1_raw", |r: &AssetResult| r.raw.map(|s| s.l1))
    }
}

/// `(method, which, asset, metric, value)` for each method's worst and best counted asset
/// (ties broken by asset id); one entry when a method has a single counted asset.
pub fn choose(report: &Report) -> Vec<(String, &'static str, String, &'static str, f64)> {
    let mut picks = Vec::new();
    for method in &report.methods {
        let (metric, get) = ranking(report, method);
        let mut scored: Vec<(f64, &str)> = report
            .of(method)
            .filter(|r| r.counts())
            .filter_map(|r| get(r).filter(|v| v.is_finite()).map(|v| (v, r.asset.as_str())))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let (Some(worst), Some(best)) = (scored.first(), scored.last()) else {
            continue;
        };
        picks.push((method.clone(), "worst", worst.1.to_string(), metric, worst.0));
        if scored.len() > 1 {
            picks.push((method.clone(), "best", best.1.to_string(), metric, best.0));
        }
    }
    picks
}

/// `name` reduced to letters, digits, `-` and `_` (method names come from the command line).
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect()
}

/// The joint whose weights differ most between `a` and `b` (summed |Δw| over vertices), with
/// its largest per-vertex difference; `None` when the skins are identical or have no joints.
pub fn most_different_joint(a: &Skin, b: &Skin, joint_count: usize) -> Option<(usize, f32)> {
    let mut sum = vec![0f64; joint_count];
    let mut max = vec![0f32; joint_count];
    let mut dense = vec![0f32; joint_count];
    for v in 0..a.vertex_count().min(b.vertex_count()) {
        for i in a.influences(v) {
            if let Some(w) = dense.get_mut(i.joint as usize) {
                *w += i.weight;
            }
        }
        for i in b.influences(v) {
            if let Some(w) = dense.get_mut(i.joint as usize) {
                *w -= i.weight;
            }
        }
        for i in a.influences(v).iter().chain(b.influences(v)) {
            let j = i.joint as usize;
            if let (Some(d), Some(s), Some(m)) = (dense.get_mut(j), sum.get_mut(j), max.get_mut(j)) {
                *s += f64::from(d.abs());
                *m = m.max(d.abs());
                // Counted once: zero it so the other skin's entry for j adds nothing.
                *d = 0.0;
            }
        }
    }
    let (j, &total) = sum.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1))?;
    (total > 0.0).then(|| (j, max.get(j).copied().unwrap_or(0.0)))
}

/// A picture drawn in memory.
struct Drawn {
    png: Vec<u8>,
    /// File name inside the report folder.
    name: String,
    /// The joint drawn and its largest per-vertex weight difference.
    joint: (String, f32),
}

/// Draw `method_name`'s picture of `asset` (`which` = worst or best).
fn draw(
    dataset: &Dataset,
    methods: &[Method],
    method_name: &str,
    which: &str,
    asset: &str,
    dir: &Path,
) -> Result<Drawn, String> {
    let row = dataset
        .rows
        .iter()
        .find(|r| r.id == asset)
        .ok_or_else(|| format!("asset `{asset}` is not in the manifest"))?;
    let method = methods
        .iter()
        .find(|m| m.name == method_name)
        .ok_or_else(|| format!("method `{method_name}` was not given"))?;
    let character = rigml_io::load(&row.path).map_err(|e| e.to_string())?;
    let gt = character.skin.clone().ok_or("no ground-truth skin")?;
    let input = Character {
        skin: None,
        ..character.clone()
    };
    let rows: Vec<Row> = predict(&row.id, &input, method)?;
    let joints = character.skeleton.joint_count();
    let cap = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let predicted =
        Skin::from_rows(rows.iter().map(Vec::as_slice), joints, cap).map_err(|e| format!("{method_name}: {e}"))?;
    let (j, max_difference) = most_different_joint(&gt, &predicted, joints).unwrap_or((0, 0.0));
    let options = RenderOptions {
        mode: WeightMode::Joint(j),
        size: PICTURE_SIZE,
        views: vec![View::Front, View::Side],
        ..RenderOptions::default()
    };
    let comparison = render_compare(&character, &gt, &predicted, &options).map_err(|e| e.to_string())?;
    let name = format!("pictures_{}_{which}.png", file_safe(method_name));
    let png = rigml_viz::encode_png(&dir.join(&name), &comparison.image).map_err(|e| e.to_string())?;
    let joint_name = character.skeleton.names.get(j).cloned().unwrap_or_default();
    Ok(Drawn {
        png,
        name,
        joint: (joint_name, max_difference),
    })
}

/// Draw the pictures [`choose`] picks into `dir`, reading the assets through the manifest at
/// `data` and computing each method's weights again. A picture that cannot be drawn (the
/// method fails this time, the mesh has no triangles...) is reported in its [`Picture::file`],
/// not as an error; only a file that cannot be written is an error.
pub fn write_pictures(
    data: &Path,
    report: &Report,
    methods: &[Method],
    dir: &Path,
    force: bool,
) -> Result<Vec<Picture>, EvalError> {
    let dataset = Dataset::open(data)?;
    let mut pictures = Vec::new();
    for (method_name, which, asset, metric, value) in choose(report) {
        let mut picture = Picture {
            method: method_name.clone(),
            which,
            asset: asset.clone(),
            metric,
            value,
            file: Err(String::new()),
            joint: None,
        };
        let drawn = draw(&dataset, methods, &method_name, which, &asset, dir);
        match drawn {
            Ok(d) => {
                rigml_io::atomic::write(&dir.join(&d.name), &d.png, force)?;
                picture.file = Ok(d.name);
                picture.joint = Some(d.joint);
            }
            Err(why) => picture.file = Err(why),
        }
        pictures.push(picture);
    }
    Ok(pictures)
}

/// The `summary.md` section linking the pictures (empty when there are none).
pub fn markdown(pictures: &[Picture]) -> String {
    use std::fmt::Write as _;
    if pictures.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n## Pictures: worst and best asset per method\n\n\
         Ranked by deform_a_p95 (raw L1 when the deformation error was not computed) over counted \
         assets. Rows: the artist's weights, the method's, and their difference (grey = none, red \
         ≥ 0.5), for the joint where the two differ most; columns: front and side views of the \
         rest pose.\n\n",
    );
    for p in pictures {
        let _ = write!(
            s,
            "- {} / {}: {} ({} {:.4})",
            p.method, p.which, p.asset, p.metric, p.value
        );
        match (&p.file, &p.joint) {
            (Ok(file), Some((joint, max))) => {
                let _ = writeln!(
                    s,
                    ", joint {joint} (max |Δw| {max:.3})\n\n  ![{} {} {}]({file})",
                    p.method, p.which, p.asset
                );
            }
            (Ok(file), None) => {
                let _ = writeln!(s, "\n\n  ![{} {} {}]({file})", p.method, p.which, p.asset);
            }
            (Err(why), _) => {
                let _ = writeln!(s, ": not drawn ({})", why.replace('\n', " "));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skin_metrics::SkinScores;

    fn result(asset: &str, method: &str, l1: f64, failed: bool) -> AssetResult {
        let mut r = AssetResult::new(asset, method, 10, 2, 0, false);
        r.raw = Some(SkinScores {
            precision: 1.0,
            recall: 1.0,
            l1,
            vertices: 10,
            empty_predictions: 0,
        });
        if failed {
            r.failures.push(crate::robustness::Failure::ZeroWeight { vertex: 0 });
        }
        r
    }

    #[test]
    fn picks_worst_and_best_counted_assets() {
        let report = Report {
            methods: vec!["m".into(), "lonely".into()],
            results: vec![
                result("a", "m", 0.5, false),
                result("b", "m", 0.1, false),
                result("c", "m", 0.9, true),
                result("d", "m", 0.3, false),
                result("a", "lonely", 0.2, false),
            ],
            ..Report::default()
        };
        let picks = choose(&report);
        let short: Vec<(&str, &str, &str)> = picks.iter().map(|p| (p.0.as_str(), p.1, p.2.as_str())).collect();
        // c failed: not counted, so a (0.5) is the worst.
        assert_eq!(
            short,
            vec![("m", "worst", "a"), ("m", "best", "b"), ("lonely", "worst", "a")]
        );
        assert_eq!(picks[0].3, "l1_raw");
        assert_eq!(file_safe("my method/2"), "my_method_2");
    }

    #[test]
    fn finds_the_joint_that_differs_most() {
        let a = Skin::from_rows([&[(0u32, 1.0f32)][..], &[(0, 0.5), (1, 0.5)], &[(2, 1.0)]], 3, 4).unwrap();
        let b = Skin::from_rows([&[(0u32, 1.0f32)][..], &[(1, 1.0)], &[(2, 0.25), (1, 0.75)]], 3, 4).unwrap();
        // joint 0: |0.5| = 0.5; joint 1: |-0.5| + |-0.75| = 1.25; joint 2: 0.75.
        let (j, max) = most_different_joint(&a, &b, 3).unwrap();
        assert_eq!(j, 1);
        assert!((max - 0.75).abs() < 1e-6);
        assert_eq!(most_different_joint(&a, &a, 3), None);
    }
}
