//! Evaluation results and their files: `per_asset.csv` (deterministic: fixed columns, rows
//! sorted by asset then method, fixed float format, no timings), `timing.csv` (wall time and
//! peak RSS, which vary run to run), `summary.md` and PNG plots ([`crate::plots`]).

use crate::deformation::{percentile_nearest_rank, DeformScores};
use crate::robustness::{bin_label, Failure};
use crate::skeleton_metrics::SkeletonScores;
use crate::skin_metrics::SkinScores;
use std::fmt::Write as _;

/// One method on one asset.
#[derive(Debug, Clone, PartialEq)]
pub struct AssetResult {
    pub asset: String,
    pub method: String,
    pub vertices: usize,
    pub joints: usize,
    /// Unskinned GT vertices (left out of the weight metrics).
    pub unskinned: usize,
    /// More than 1 % unskinned: listed, left out of aggregates.
    pub data_issue: bool,
    /// §4 failures; any one leaves the asset out of the accuracy means.
    pub failures: Vec<Failure>,
    pub wall_s: Option<f64>,
    pub peak_rss_mib: Option<f64>,
    pub raw: Option<SkinScores>,
    pub top4: Option<SkinScores>,
    /// `(P_pool, R_pool)`.
    pub pool: Option<(f64, f64)>,
    /// Pose set (a).
    pub deform_random: Option<DeformScores>,
    /// Pose set (b).
    pub deform_clips: Option<DeformScores>,
    /// Skeleton metrics (§5) of a rigger.
    pub skeleton: Option<SkeletonScores>,
    /// End-to-end deformation error of a skinned rigger ([`crate::rig_deformation`]), pose set (a).
    pub rig_deform_random: Option<DeformScores>,
    /// The same over pose set (b).
    pub rig_deform_clips: Option<DeformScores>,
    /// Things worth knowing that are not failures (a metric that could not be computed).
    pub notes: Vec<String>,
}

impl AssetResult {
    /// An empty result (no metric yet).
    pub fn new(asset: &str, method: &str, vertices: usize, joints: usize, unskinned: usize, data_issue: bool) -> Self {
        AssetResult {
            asset: asset.to_string(),
            method: method.to_string(),
            vertices,
            joints,
            unskinned,
            data_issue,
            failures: Vec::new(),
            wall_s: None,
            peak_rss_mib: None,
            raw: None,
            top4: None,
            pool: None,
            deform_random: None,
            deform_clips: None,
            skeleton: None,
            rig_deform_random: None,
            rig_deform_clips: None,
            notes: Vec::new(),
        }
    }

    /// Counted in the accuracy aggregates: no failure and no data issue.
    pub fn counts(&self) -> bool {
        self.failures.is_empty() && !self.data_issue
    }
}

/// An asset whose ground truth could not be used.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFailure {
    pub asset: String,
    pub message: String,
}

/// Everything one evaluation produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Method names in the order given.
    pub methods: Vec<String>,
    pub results: Vec<AssetResult>,
    pub load_failures: Vec<LoadFailure>,
    /// Each scored asset's family (asset id -> family; [`crate::dataset::family_of`]).
    pub families: std::collections::BTreeMap<String, String>,
}

/// A per-asset metric: name, unit note, and how to read it from a result.
pub struct Metric {
    pub name: &'static str,
    pub better: &'static str,
    pub get: fn(&AssetResult) -> Option<f64>,
}

/// Every metric of the summary and the CSV, in column order.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "precision_raw",
        better: "higher",
        get: |r| r.raw.map(|s| s.precision),
    },
    Metric {
        name: "recall_raw",
        better: "higher",
        get: |r| r.raw.map(|s| s.recall),
    },
    Metric {
        name: "l1_raw",
        better: "lower",
        get: |r| r.raw.map(|s| s.l1),
    },
    Metric {
        name: "precision_top4",
        better: "higher",
        get: |r| r.top4.map(|s| s.precision),
    },
    Metric {
        name: "recall_top4",
        better: "higher",
        get: |r| r.top4.map(|s| s.recall),
    },
    Metric {
        name: "l1_top4",
        better: "lower",
        get: |r| r.top4.map(|s| s.l1),
    },
    Metric {
        name: "p_pool",
        better: "higher",
        get: |r| r.pool.map(|p| p.0),
    },
    Metric {
        name: "r_pool",
        better: "higher",
        get: |r| r.pool.map(|p| p.1),
    },
    Metric {
        name: "deform_a_mean",
        better: "lower",
        get: |r| r.deform_random.map(|d| d.mean),
    },
    Metric {
        name: "deform_a_max",
        better: "lower",
        get: |r| r.deform_random.map(|d| d.max),
    },
    Metric {
        name: "deform_a_p95",
        better: "lower",
        get: |r| r.deform_random.map(|d| d.p95),
    },
    Metric {
        name: "deform_b_mean",
        better: "lower",
        get: |r| r.deform_clips.map(|d| d.mean),
    },
    Metric {
        name: "deform_b_max",
        better: "lower",
        get: |r| r.deform_clips.map(|d| d.max),
    },
    Metric {
        name: "deform_b_p95",
        better: "lower",
        get: |r| r.deform_clips.map(|d| d.p95),
    },
    Metric {
        name: "cd_j2j",
        better: "lower",
        get: |r| r.skeleton.map(|s| s.cd_j2j),
    },
    Metric {
        name: "cd_j2b",
        better: "lower",
        get: |r| r.skeleton.and_then(|s| s.cd_j2b),
    },
    Metric {
        name: "cd_b2b",
        better: "lower",
        get: |r| r.skeleton.and_then(|s| s.cd_b2b),
    },
    Metric {
        name: "joint_count_error_abs",
        better: "lower",
        get: |r| r.skeleton.map(|s| s.joint_count_error.unsigned_abs() as f64),
    },
    Metric {
        name: "joint_count_error",
        better: "closer to 0",
        get: |r| r.skeleton.map(|s| s.joint_count_error as f64),
    },
    Metric {
        name: "rig_deform_a_mean",
        better: "lower",
        get: |r| r.rig_deform_random.map(|d| d.mean),
    },
    Metric {
        name: "rig_deform_a_max",
        better: "lower",
        get: |r| r.rig_deform_random.map(|d| d.max),
    },
    Metric {
        name: "rig_deform_a_p95",
        better: "lower",
        get: |r| r.rig_deform_random.map(|d| d.p95),
    },
    Metric {
        name: "rig_deform_b_mean",
        better: "lower",
        get: |r| r.rig_deform_clips.map(|d| d.mean),
    },
    Metric {
        name: "rig_deform_b_max",
        better: "lower",
        get: |r| r.rig_deform_clips.map(|d| d.max),
    },
    Metric {
        name: "rig_deform_b_p95",
        better: "lower",
        get: |r| r.rig_deform_clips.map(|d| d.p95),
    },
];

/// Fixed float format of every file: 6 decimals, empty when absent.
fn num(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v:.6}"))
}

/// Statistics of one metric for one method over the counted assets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub mean: f64,
    /// Middle value (mean of the two middle ones for an even count).
    pub median: f64,
    /// Nearest-rank 90th percentile.
    pub p90: f64,
    pub assets: usize,
}

/// Mean / median / p90 of `values`; `None` when empty.
pub fn stats(values: &[f64]) -> Option<Stats> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    let p90 = percentile_nearest_rank(&mut v, 0.9)?;
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    };
    Some(Stats {
        mean: v.iter().sum::<f64>() / n as f64,
        median,
        p90,
        assets: n,
    })
}

impl Report {
    /// Sort results by asset then method name (the CSV order).
    pub fn sort(&mut self) {
        self.results
            .sort_by(|a, b| a.asset.cmp(&b.asset).then(a.method.cmp(&b.method)));
        self.load_failures.sort_by(|a, b| a.asset.cmp(&b.asset));
    }

    /// Add the assets of `other` (another part of the same evaluation, e.g. another fold of a
    /// cross-validation, scored by the same methods) and sort.
    pub fn absorb(&mut self, other: Report) {
        if self.methods.is_empty() {
            self.methods = other.methods;
        }
        self.results.extend(other.results);
        self.load_failures.extend(other.load_failures);
        self.families.extend(other.families);
        self.sort();
    }

    /// Results of one method.
    pub fn of<'a>(&'a self, method: &'a str) -> impl Iterator<Item = &'a AssetResult> + 'a {
        self.results.iter().filter(move |r| r.method == method)
    }

    /// Values of `metric` for `method` over counted assets (no failure, no data issue).
    pub fn values(&self, method: &str, metric: &Metric) -> Vec<f64> {
        self.of(method).filter(|r| r.counts()).filter_map(metric.get).collect()
    }

    /// Assets where `method` failed.
    pub fn failure_count(&self, method: &str) -> usize {
        self.of(method).filter(|r| !r.failures.is_empty()).count()
    }

    /// `per_asset.csv`: byte-identical for the same inputs.
    pub fn per_asset_csv(&self) -> String {
        let mut s = String::from("asset,method,vertices,joints,bin,unskinned,data_issue,failed,failure_causes");
        for m in METRICS {
            s.push(',');
            s.push_str(m.name);
        }
        s.push_str(",deform_a_poses,deform_b_poses\n");
        for r in &self.results {
            let causes: Vec<&str> = r.failures.iter().map(Failure::cause).collect();
            let _ = write!(
                s,
                "{},{},{},{},{},{},{},{},{}",
                csv_field(&r.asset),
                csv_field(&r.method),
                r.vertices,
                r.joints,
                csv_field(bin_label(r.vertices)),
                r.unskinned,
                r.data_issue,
                !r.failures.is_empty(),
                causes.join(";")
            );
            for m in METRICS {
                s.push(',');
                s.push_str(&num((m.get)(r)));
            }
            let poses = |d: Option<DeformScores>| d.map_or(String::new(), |d| d.poses.to_string());
            // Pose counts of §3, or of the end-to-end rig deformation for a rigger.
            let _ = writeln!(
                s,
                ",{},{}",
                poses(r.deform_random.or(r.rig_deform_random)),
                poses(r.deform_clips.or(r.rig_deform_clips))
            );
        }
        s
    }

    /// `timing.csv`: wall time and peak RSS per (asset, method).
    pub fn timing_csv(&self) -> String {
        let mut s = String::from("asset,method,vertices,bin,wall_s,peak_rss_mib\n");
        for r in &self.results {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{}",
                csv_field(&r.asset),
                csv_field(&r.method),
                r.vertices,
                csv_field(bin_label(r.vertices)),
                num(r.wall_s),
                num(r.peak_rss_mib)
            );
        }
        s
    }
}

/// Quote a CSV field when it holds a comma, quote or newline.
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(asset: &str, method: &str, l1: f64) -> AssetResult {
        let mut r = AssetResult::new(asset, method, 100, 3, 0, false);
        r.raw = Some(SkinScores {
            precision: 1.0,
            recall: 0.5,
            l1,
            vertices: 100,
            empty_predictions: 0,
        });
        r
    }

    #[test]
    fn stats_hand_computed() {
        // [1,2,3,4]: mean 2.5, median (2+3)/2, p90 nearest-rank ceil(3.6)-1 = 3 -> 4.
        let s = stats(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.mean, s.median, s.p90, s.assets), (2.5, 2.5, 4.0, 4));
        assert_eq!(stats(&[7.0]).unwrap().median, 7.0);
        assert!(stats(&[]).is_none());
    }

    #[test]
    fn csv_is_sorted_and_fixed() {
        let mut rep = Report {
            methods: vec!["b".into(), "a".into()],
            results: vec![result("z", "b", 0.25), result("y", "a", 1.0 / 3.0)],
            ..Report::default()
        };
        rep.results[0].failures.push(Failure::ZeroWeight { vertex: 1 });
        rep.sort();
        let csv = rep.per_asset_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[1].starts_with("y,a,100,3,\"[0,5k)\",0,false,false,,1.000000,0.500000,0.333333,"),
            "{}",
            lines[1]
        );
        assert!(lines[2].starts_with("z,b,100,3,\"[0,5k)\",0,false,true,zero_weight,"));
        // Every row has the header's field count when commas inside quotes are not separators.
        let fields = |line: &str| {
            let mut quoted = false;
            1 + line
                .chars()
                .filter(|&c| {
                    if c == '"' {
                        quoted = !quoted;
                    }
                    c == ',' && !quoted
                })
                .count()
        };
        assert!(lines.iter().all(|l| fields(l) == fields(lines[0])), "{csv}");
        assert_eq!(csv, rep.clone().per_asset_csv());
        // The failed asset is out of the means.
        assert!(rep.values("b", &METRICS[2]).is_empty());
        assert_eq!(rep.values("a", &METRICS[2]), vec![1.0 / 3.0]);
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }
}
