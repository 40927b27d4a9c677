//! Robustness, METRICS.md §4: the failure checks on a method's output and a record of its wall
//! time and peak resident memory.

use crate::skin_metrics::Row;
use rigml_core::Skeleton;
use std::fmt;
use std::time::{Duration, Instant};

/// Zero-weight threshold of a vertex's total weight.
pub const ZERO_SUM: f64 = 1e-8;
/// Largest allowed `|sum - 1|` of a vertex's weights.
pub const SUM_TOLERANCE: f64 = 1e-4;

/// Why a method failed on an asset. The label is the CSV/summary cause name.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The method returned an error, panicked or was killed.
    Error(String),
    /// A NaN or ±Inf weight.
    NonFinite { vertex: usize },
    /// A vertex with total weight below `1e-8`.
    ZeroWeight { vertex: usize },
    /// A vertex whose weights do not sum to 1 within `1e-4`.
    SumNotOne { vertex: usize, sum: f64 },
    /// More non-zero influences than the declared cap.
    CapExceeded { vertex: usize, count: usize, cap: usize },
    /// A declared-ignored zero-length end-site carries weight.
    EndSiteWeighted { joint: usize },
    /// Wall time over the vertex-count bin's limit.
    TimeLimit { seconds: f64, limit: f64 },
    /// Output rows do not match the mesh (vertex count or joint range).
    Shape(String),
    /// A rigger returned a skeleton without joints (§5: an empty generation).
    NoJoints,
    /// A rigger placed a joint at a NaN or infinite position.
    NonFiniteJoint { joint: usize },
}

impl Failure {
    /// Short cause label, stable across runs (used as a column/row key).
    pub fn cause(&self) -> &'static str {
        match self {
            Failure::Error(_) => "error",
            Failure::NonFinite { .. } => "non_finite",
            Failure::ZeroWeight { .. } => "zero_weight",
            Failure::SumNotOne { .. } => "sum_not_one",
            Failure::CapExceeded { .. } => "cap_exceeded",
            Failure::EndSiteWeighted { .. } => "end_site_weighted",
            Failure::TimeLimit { .. } => "time_limit",
            Failure::Shape(_) => "shape",
            Failure::NoJoints => "no_joints",
            Failure::NonFiniteJoint { .. } => "non_finite_joint",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Error(e) => write!(f, "method error: {e}"),
            Failure::NonFinite { vertex } => write!(f, "vertex {vertex}: non-finite weight"),
            Failure::ZeroWeight { vertex } => write!(f, "vertex {vertex}: total weight below 1e-8"),
            Failure::SumNotOne { vertex, sum } => write!(f, "vertex {vertex}: weights sum to {sum}"),
            Failure::CapExceeded { vertex, count, cap } => {
                write!(f, "vertex {vertex}: {count} influences, cap {cap}")
            }
            Failure::EndSiteWeighted { joint } => write!(f, "zero-length end-site joint {joint} carries weight"),
            Failure::TimeLimit { seconds, limit } => write!(f, "took {seconds:.1} s, limit {limit:.0} s"),
            Failure::Shape(e) => write!(f, "output shape: {e}"),
            Failure::NoJoints => write!(f, "the skeleton has no joints"),
            Failure::NonFiniteJoint { joint } => write!(f, "joint {joint}: non-finite position"),
        }
    }
}

/// Time limit of the vertex-count bin of an `n`-vertex asset (project choice, §4).
pub fn time_limit(n: usize) -> Duration {
    Duration::from_secs(match n {
        0..5_000 => 30,
        5_000..20_000 => 120,
        20_000..100_000 => 600,
        _ => 3600,
    })
}

/// Vertex-count bin label of §4 (`[0,5k)`, `[5k,20k)`, `[20k,100k)`, `[100k,1M]`).
pub fn bin_label(n: usize) -> &'static str {
    match n {
        0..5_000 => "[0,5k)",
        5_000..20_000 => "[5k,20k)",
        20_000..100_000 => "[20k,100k)",
        _ => "[100k,1M]",
    }
}

/// What a method declares about its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// Most non-zero influences per vertex the method promises.
    pub cap: usize,
    /// The method says it gives no weight to zero-length end-sites.
    pub ignores_end_sites: bool,
}

/// Leaf joints whose bone (parent → joint, bind pose) is shorter than `1e-6` normalised units
/// ([`Skeleton::zero_length_end_sites`]); `scale` maps model lengths to normalised units.
pub fn zero_length_end_sites(skeleton: &Skeleton, scale: f32) -> Vec<usize> {
    let ignored = skeleton.zero_length_end_sites(1.0 / scale);
    (0..ignored.len()).filter(|&j| ignored[j]).collect()
}

/// Checks 2–6 of §4 on raw output rows (as emitted, before any renormalisation). Returns the
/// first failure of each cause, in check order; empty = passed.
///
/// `gt_unskinned` (empty = none) marks vertices that are unskinned in the ground truth: the
/// zero-weight check (3) skips them, since §1 leaves them out of every weight metric and a
/// method that also leaves them unweighted (a weapon mesh, say) matches the GT there. Every
/// other check applies to all vertices.
pub fn check_rows(
    rows: &[Row],
    vertex_count: usize,
    joint_count: usize,
    declared: Declared,
    end_sites: &[usize],
    gt_unskinned: &[bool],
) -> Vec<Failure> {
    let mut out = Vec::new();
    if rows.len() != vertex_count {
        out.push(Failure::Shape(format!(
            "{} rows for {vertex_count} vertices",
            rows.len()
        )));
        return out;
    }
    let mut push = |f: Failure| {
        if !out.iter().any(|o: &Failure| o.cause() == f.cause()) {
            out.push(f);
        }
    };
    for (v, row) in rows.iter().enumerate() {
        if row.iter().any(|e| !e.1.is_finite()) {
            push(Failure::NonFinite { vertex: v });
            continue;
        }
        if let Some(&(j, _)) = row.iter().find(|e| e.0 as usize >= joint_count) {
            push(Failure::Shape(format!("vertex {v} uses joint {j} of {joint_count}")));
        }
        let sum: f64 = row.iter().map(|e| f64::from(e.1)).sum();
        if sum < ZERO_SUM {
            if !gt_unskinned.get(v).copied().unwrap_or(false) {
                push(Failure::ZeroWeight { vertex: v });
            }
        } else if (sum - 1.0).abs() > SUM_TOLERANCE {
            push(Failure::SumNotOne { vertex: v, sum });
        }
        let mut joints: Vec<u32> = row.iter().filter(|e| e.1 != 0.0).map(|e| e.0).collect();
        joints.sort_unstable();
        joints.dedup();
        if joints.len() > declared.cap {
            push(Failure::CapExceeded {
                vertex: v,
                count: joints.len(),
                cap: declared.cap,
            });
        }
        if declared.ignores_end_sites {
            if let Some(&(j, _)) = row.iter().find(|e| e.1 != 0.0 && end_sites.contains(&(e.0 as usize))) {
                push(Failure::EndSiteWeighted { joint: j as usize });
            }
        }
    }
    out
}

/// Check 7 of §4.
pub fn check_time(wall: Duration, vertex_count: usize) -> Option<Failure> {
    let limit = time_limit(vertex_count);
    (wall > limit).then_some(Failure::TimeLimit {
        seconds: wall.as_secs_f64(),
        limit: limit.as_secs_f64(),
    })
}

/// Wall time and peak memory of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunRecord {
    pub wall_s: f64,
    /// Peak resident set size during the run, MiB. When the kernel's peak counter could not be
    /// reset it is the process peak so far (an upper bound); `None` where it cannot be read.
    pub peak_rss_mib: Option<f64>,
}

/// Reset the kernel's peak-RSS counter of this process (`/proc/self/clear_refs`, value 5).
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Peak RSS of this process in KiB: `VmHWM` from `/proc/self/status`, else
/// `getrusage(RUSAGE_SELF).ru_maxrss` (KiB on Linux).
pub fn peak_rss_self_kib() -> Option<u64> {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(kib) = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
        {
            return Some(kib);
        }
    }
    rusage_max_kib(libc::RUSAGE_SELF)
}

/// `getrusage(RUSAGE_CHILDREN).ru_maxrss` in KiB: the largest finished child process.
pub fn peak_rss_children_kib() -> Option<u64> {
    rusage_max_kib(libc::RUSAGE_CHILDREN)
}

fn rusage_max_kib(who: libc::c_int) -> Option<u64> {
    // SAFETY: getrusage writes one `rusage` into the zeroed struct we own; no other memory.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    (rc == 0).then(|| u64::try_from(usage.ru_maxrss).unwrap_or(0))
}

/// Run `f`, catching a panic as [`Failure::Error`], and record wall time and peak RSS.
pub fn measure<T>(f: impl FnOnce() -> Result<T, String>) -> (Result<T, Failure>, RunRecord) {
    reset_peak_rss();
    let start = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    let wall_s = start.elapsed().as_secs_f64();
    let peak_rss_mib = peak_rss_self_kib().map(|k| k as f64 / 1024.0);
    let result = match result {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Failure::Error(e)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(Failure::Error(format!("panicked: {msg}")))
        }
    };
    (result, RunRecord { wall_s, peak_rss_mib })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FREE: Declared = Declared {
        cap: 4,
        ignores_end_sites: true,
    };

    fn causes(f: &[Failure]) -> Vec<&'static str> {
        f.iter().map(Failure::cause).collect()
    }

    #[test]
    fn clean_rows_pass() {
        let rows = vec![vec![(0, 0.5), (1, 0.5)], vec![(1, 1.0)]];
        assert!(check_rows(&rows, 2, 2, FREE, &[], &[]).is_empty());
    }

    #[test]
    fn each_check_fires() {
        let rows = vec![
            vec![(0, f32::NAN)],
            vec![(0, 0.0)],
            vec![(0, 0.5), (1, 0.4)],
            vec![(0, 0.2), (1, 0.2), (2, 0.2), (3, 0.2), (4, 0.2)],
            vec![(5, 1.0)],
        ];
        let f = check_rows(&rows, 5, 6, FREE, &[5], &[]);
        assert_eq!(
            causes(&f),
            vec![
                "non_finite",
                "zero_weight",
                "sum_not_one",
                "cap_exceeded",
                "end_site_weighted"
            ]
        );
        // |0.9 - 1| = 0.1 > 1e-4; within tolerance passes.
        assert!(check_rows(&[vec![(0, 0.99995)]], 1, 1, FREE, &[], &[]).is_empty());
        assert_eq!(causes(&check_rows(&[], 1, 1, FREE, &[], &[])), vec!["shape"]);
        let no_claim = Declared {
            cap: 4,
            ignores_end_sites: false,
        };
        assert!(check_rows(&[vec![(5, 1.0)]], 1, 6, no_claim, &[5], &[]).is_empty());
        // An empty row where the GT is unskinned too is not a zero-weight failure.
        let rows = vec![vec![], vec![(0, 1.0)]];
        assert!(check_rows(&rows, 2, 1, FREE, &[], &[true, false]).is_empty());
        assert_eq!(
            causes(&check_rows(&rows, 2, 1, FREE, &[], &[false, false])),
            vec!["zero_weight"]
        );
    }

    #[test]
    fn time_bins() {
        assert_eq!(time_limit(4_999), Duration::from_secs(30));
        assert_eq!(time_limit(5_000), Duration::from_secs(120));
        assert_eq!(time_limit(99_999), Duration::from_secs(600));
        assert_eq!(time_limit(1_000_000), Duration::from_secs(3600));
        assert!(check_time(Duration::from_secs(31), 10).is_some());
        assert!(check_time(Duration::from_secs(29), 10).is_none());
        assert_eq!(bin_label(20_000), "[20k,100k)");
    }

    #[test]
    fn measure_catches_errors_and_panics() {
        let (r, rec) = measure(|| Ok::<_, String>(3));
        assert_eq!(r, Ok(3));
        assert!(rec.wall_s >= 0.0);
        assert!(rec.peak_rss_mib.is_some_and(|m| m > 0.0));
        let (r, _) = measure(|| Err::<(), _>("bad".to_string()));
        assert_eq!(r, Err(Failure::Error("bad".into())));
        let (r, _) = measure(|| -> Result<(), String> { panic!("boom") });
        assert!(matches!(r, Err(Failure::Error(m)) if m.contains("boom")));
    }

    #[test]
    fn end_sites_found() {
        use crate::deformation::tests::chain;
        let mut s = chain();
        // Move the tip onto the mid joint: a zero-length leaf.
        s.rest_local[2].translation = glam::Vec3::ZERO;
        s.inverse_bind = s.rest_world().iter().map(|m| m.inverse()).collect();
        assert_eq!(zero_length_end_sites(&s, 1.0), vec![2]);
        assert!(zero_length_end_sites(&super::super::deformation::tests::chain(), 1.0).is_empty());
    }
}
