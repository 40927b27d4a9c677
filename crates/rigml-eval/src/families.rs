//! Scores per family: the unit generalisation is judged by. A family is a folder of related
//! characters (one artist's pack, often one rig shared by many meshes; see
//! [`crate::dataset::family_of`]), so a split's plain mean over assets is dominated by its largest
//! families. Here each family's mean over its counted assets comes first, then the mean over
//! families (every family weighs the same) and, per method, on how many families it is the best.
//!
//! `per_family.csv` holds every metric (rows sorted by family, then method; fixed float format,
//! byte-identical for the same inputs); `summary.md` gets a table for the headline metrics.

use crate::report::{csv_field, Metric, Report, METRICS};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Metrics that get a per-family table in `summary.md` (the CSV has all of them).
const HEADLINE: [&str; 6] = [
    "precision_top4",
    "recall_top4",
    "l1_top4",
    "deform_a_mean",
    "cd_j2j",
    "rig_deform_a_mean",
];

/// Family of an asset (its id when the report does not know it).
fn family<'a>(report: &'a Report, asset: &'a str) -> &'a str {
    report.families.get(asset).map_or(asset, String::as_str)
}

/// Family -> method -> mean of one metric.
pub type FamilyMeans = BTreeMap<String, BTreeMap<String, f64>>;

/// `means[family][method]` = mean of `metric` over the family's counted assets of that method
/// (absent where none has a value).
pub fn family_means(report: &Report, metric: &Metric) -> FamilyMeans {
    let mut sums: BTreeMap<String, BTreeMap<String, (f64, usize)>> = BTreeMap::new();
    for r in report.results.iter().filter(|r| r.counts()) {
        if let Some(v) = (metric.get)(r) {
            let slot = sums
                .entry(family(report, &r.asset).to_string())
                .or_default()
                .entry(r.method.clone())
                .or_default();
            slot.0 += v;
            slot.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(f, m)| (f, m.into_iter().map(|(k, (s, n))| (k, s / n as f64)).collect()))
        .collect()
}

/// Per method, from the [`family_means`] of `metric`: the mean over families of the family
/// means, the number of families, and the number of families where it is the best of the
/// methods that have a value there (ties count for each).
pub fn over_families(means: &FamilyMeans, metric: &Metric) -> BTreeMap<String, (f64, usize, usize)> {
    let higher = metric.better == "higher";
    let mut out: BTreeMap<String, (f64, usize, usize)> = BTreeMap::new();
    for by_method in means.values() {
        let best = by_method.values().copied().fold(None, |b: Option<f64>, v| match b {
            Some(b) if (higher && b >= v) || (!higher && b <= v) => Some(b),
            _ => Some(v),
        });
        for (method, v) in by_method {
            let e = out.entry(method.clone()).or_default();
            e.0 += v;
            e.1 += 1;
            e.2 += usize::from(Some(*v) == best);
        }
    }
    out.into_iter()
        .map(|(m, (sum, n, wins))| (m, (sum / n as f64, n, wins)))
        .collect()
}

/// `per_family.csv`: `family,method,assets,<every metric>`, a family mean per cell (empty where
/// the metric does not apply), then one `(mean over families)` row per method.
pub fn per_family_csv(report: &Report) -> String {
    let mut s = String::from("family,method,assets");
    for m in METRICS {
        s.push(',');
        s.push_str(m.name);
    }
    s.push('\n');
    let mut counted: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in report.results.iter().filter(|r| r.counts()) {
        *counted
            .entry((family(report, &r.asset).to_string(), r.method.clone()))
            .or_default() += 1;
    }
    let means: Vec<_> = METRICS.iter().map(|m| family_means(report, m)).collect();
    let cell = |v: Option<&f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
    for ((fam, method), n) in &counted {
        let _ = write!(s, "{},{},{n}", csv_field(fam), csv_field(method));
        for m in &means {
            s.push(',');
            s.push_str(&cell(m.get(fam).and_then(|x| x.get(method))));
        }
        s.push('\n');
    }
    let overall: Vec<_> = METRICS
        .iter()
        .zip(&means)
        .map(|(metric, means)| over_families(means, metric))
        .collect();
    for method in &report.methods {
        let families = counted.keys().filter(|(_, m)| m == method).count();
        let _ = write!(s, "(mean over families),{},{families}", csv_field(method));
        for o in &overall {
            s.push(',');
            s.push_str(&cell(o.get(method).map(|x| &x.0)));
        }
        s.push('\n');
    }
    s
}

/// The `summary.md` section: for each headline metric any method has, a table of family means
/// (families as rows, methods as columns, asset count beside the family), the mean over
/// families, and on how many families each method is best.
pub fn per_family_md(report: &Report) -> String {
    let methods = &report.methods;
    let mut s = String::new();
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for asset in report.families.keys() {
        *sizes.entry(family(report, asset)).or_default() += 1;
    }
    for metric in METRICS.iter().filter(|m| HEADLINE.contains(&m.name)) {
        let means = family_means(report, metric);
        if means.is_empty() {
            continue;
        }
        let overall = over_families(&means, metric);
        let _ = writeln!(
            s,
            "## Per family: {} ({} is better)\n\nEach family's mean over its counted assets; then \
             the mean over families (each family weighs the same) and the number of families where \
             the method is best.\n",
            metric.name, metric.better
        );
        let _ = writeln!(s, "| family (assets) | {} |", methods.join(" | "));
        let _ = writeln!(s, "|---|{}", "---|".repeat(methods.len()));
        for (fam, by_method) in &means {
            let cells: Vec<String> = methods
                .iter()
                .map(|m| by_method.get(m).map_or("—".into(), |v| format!("{v:.4}")))
                .collect();
            let n = sizes.get(fam.as_str()).copied().unwrap_or(0);
            let _ = writeln!(s, "| {fam} ({n}) | {} |", cells.join(" | "));
        }
        let mean: Vec<String> = methods
            .iter()
            .map(|m| overall.get(m).map_or("—".into(), |x| format!("**{:.4}**", x.0)))
            .collect();
        let wins: Vec<String> = methods
            .iter()
            .map(|m| overall.get(m).map_or("—".into(), |x| format!("{} of {}", x.2, x.1)))
            .collect();
        let _ = writeln!(s, "| mean over families | {} |", mean.join(" | "));
        let _ = writeln!(s, "| families best | {} |\n", wins.join(" | "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::AssetResult;
    use crate::skin_metrics::SkinScores;

    fn result(asset: &str, method: &str, l1: f64) -> AssetResult {
        let mut r = AssetResult::new(asset, method, 100, 3, 0, false);
        r.top4 = Some(SkinScores {
            precision: 1.0,
            recall: 1.0,
            l1,
            vertices: 100,
            empty_predictions: 0,
        });
        r
    }

    fn report() -> Report {
        // Family "big" has three assets, "small" one: a plain mean over assets would be
        // dominated by "big".
        let mut rep = Report {
            methods: vec!["a".into(), "b".into()],
            ..Report::default()
        };
        for (asset, fam, la, lb) in [
            ("x1", "big", 0.1, 0.2),
            ("x2", "big", 0.2, 0.3),
            ("x3", "big", 0.3, 0.4),
            ("y1", "small", 0.9, 0.5),
        ] {
            rep.results.push(result(asset, "a", la));
            rep.results.push(result(asset, "b", lb));
            rep.families.insert(asset.into(), fam.into());
        }
        rep
    }

    #[test]
    fn families_weigh_the_same() {
        let rep = report();
        let l1 = METRICS.iter().find(|m| m.name == "l1_top4").unwrap();
        let means = family_means(&rep, l1);
        assert!((means["big"]["a"] - 0.2).abs() < 1e-12);
        assert!((means["small"]["b"] - 0.5).abs() < 1e-12);
        let over = over_families(&means, l1);
        // a: (0.2 + 0.9) / 2, best on "big"; b: (0.3 + 0.5) / 2, best on "small".
        assert!((over["a"].0 - 0.55).abs() < 1e-12);
        assert!((over["b"].0 - 0.4).abs() < 1e-12);
        assert_eq!((over["a"].1, over["a"].2), (2, 1));
        assert_eq!((over["b"].1, over["b"].2), (2, 1));
    }

    #[test]
    fn csv_and_markdown_list_every_family() {
        let rep = report();
        let csv = per_family_csv(&rep);
        let lines: Vec<&str> = csv.lines().collect();
        // Header, 2 families x 2 methods, 2 mean rows.
        assert_eq!(lines.len(), 7, "{csv}");
        assert!(lines[1].starts_with("big,a,3,"), "{}", lines[1]);
        assert!(lines[5].starts_with("(mean over families),a,2,"), "{}", lines[5]);
        assert_eq!(csv, per_family_csv(&rep), "deterministic");
        let md = per_family_md(&rep);
        assert!(md.contains("| big (3) | 0.2000 | 0.3000 |"), "{md}");
        assert!(md.contains("| mean over families | **0.5500** | **0.4000** |"), "{md}");
        assert!(md.contains("| families best | 1 of 2 | 1 of 2 |"), "{md}");
    }
}
