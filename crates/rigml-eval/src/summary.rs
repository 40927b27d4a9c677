//! `summary.md`: one table per metric (methods as columns; mean with the failure count beside
//! it, median and nearest-rank p90 over counted assets), the headline metrics per family
//! ([`crate::families`]), robustness by cause, time and memory
//! per vertex-count bin, the worst 5 assets by Deform p95, data issues and load failures.

use crate::report::{stats, Report, METRICS};
use crate::robustness::bin_label;
use std::collections::BTreeMap;
use std::fmt::Write as _;

const BINS: [&str; 4] = ["[0,5k)", "[5k,20k)", "[20k,100k)", "[100k,1M]"];

fn header(s: &mut String, first: &str, methods: &[String]) {
    let _ = writeln!(s, "| {first} | {} |", methods.join(" | "));
    let _ = writeln!(s, "|---|{}", "---|".repeat(methods.len()));
}

fn median_max(values: &mut [f64]) -> String {
    if values.is_empty() {
        return "—".into();
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    };
    format!("{median:.3} / {:.3}", values[n - 1])
}

/// The markdown summary of a report.
pub fn summary_md(report: &Report) -> String {
    let methods = &report.methods;
    let mut s = String::from("# rigml evaluation summary\n\n");
    let assets: std::collections::BTreeSet<&str> = report.results.iter().map(|r| r.asset.as_str()).collect();
    let _ = writeln!(
        s,
        "{} assets scored, {} could not be loaded. Definitions: docs/METRICS.md. Means, medians and \
         p90 (nearest rank) are over assets where the method did not fail and the GT is not a data \
         issue; `(n fail)` beside the mean counts failed assets (§4). Distances are in normalised \
         units (longest rest AABB side = 1); skeleton metrics (§5: cd_*, joint counts) of riggers \
         compare the placed joints with the GT bind-pose joints in the stored mesh's space, \
         normalised by its AABB. rig_deform_* (riggers whose skeleton is also skinned) is the \
         end-to-end deformation error: the predicted rig, with its own weights, driven by the GT \
         poses (each joint turns like the GT bone covering it), against the GT-posed mesh; it is \
         not in METRICS.md and is defined in rigml-eval's `rig_deformation` module.\n",
        assets.len(),
        report.load_failures.len()
    );
    for metric in METRICS {
        let all: Vec<_> = methods.iter().map(|m| stats(&report.values(m, metric))).collect();
        // Weight metrics for riggers only, skeleton metrics for solvers only: leave out a
        // table no method has a value for.
        if all.iter().all(Option::is_none) {
            continue;
        }
        let _ = writeln!(s, "## {} ({} is better)\n", metric.name, metric.better);
        header(&mut s, "stat", methods);
        let row = |label: &str, f: &dyn Fn(usize) -> String| {
            let cells: Vec<String> = (0..methods.len()).map(f).collect();
            format!("| {label} | {} |\n", cells.join(" | "))
        };
        let fmt = |i: usize, g: fn(&crate::report::Stats) -> f64| {
            all[i].as_ref().map_or("—".into(), |x| format!("{:.4}", g(x)))
        };
        s += &row("mean", &|i| {
            format!("{} ({} fail)", fmt(i, |x| x.mean), report.failure_count(&methods[i]))
        });
        s += &row("median", &|i| fmt(i, |x| x.median));
        s += &row("p90", &|i| fmt(i, |x| x.p90));
        s += &row("assets", &|i| all[i].map_or(0, |x| x.assets).to_string());
        s.push('\n');
    }

    s += &crate::families::per_family_md(report);

    s += "## Robustness (§4): failed assets by cause\n\n";
    header(&mut s, "cause", methods);
    let mut causes: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, m) in methods.iter().enumerate() {
        for r in report.of(m) {
            let mut seen: Vec<&str> = r.failures.iter().map(|f| f.cause()).collect();
            seen.dedup();
            for c in seen {
                causes.entry(c).or_insert_with(|| vec![0; methods.len()])[i] += 1;
            }
        }
    }
    let totals: Vec<String> = methods
        .iter()
        .map(|m| {
            let n = report.of(m).count();
            let f = report.failure_count(m);
            format!(
                "{f} / {n} ({:.1} %)",
                if n == 0 { 0.0 } else { 100.0 * f as f64 / n as f64 }
            )
        })
        .collect();
    let _ = writeln!(s, "| any | {} |", totals.join(" | "));
    for (cause, counts) in &causes {
        let cells: Vec<String> = counts
            .iter()
            .zip(methods)
            .map(|(c, m)| {
                let n = report.of(m).count().max(1);
                format!("{c} ({:.1} %)", 100.0 * *c as f64 / n as f64)
            })
            .collect();
        let _ = writeln!(s, "| {cause} | {} |", cells.join(" | "));
    }

    s += "\n## Wall time (s) and peak RSS (MiB) per vertex bin: median / max\n\n";
    header(&mut s, "bin", methods);
    for bin in BINS {
        let cells: Vec<String> = methods
            .iter()
            .map(|m| {
                let rs: Vec<_> = report.of(m).filter(|r| bin_label(r.vertices) == bin).collect();
                let mut t: Vec<f64> = rs.iter().filter_map(|r| r.wall_s).collect();
                let mut m: Vec<f64> = rs.iter().filter_map(|r| r.peak_rss_mib).collect();
                format!("{} s; {} MiB", median_max(&mut t), median_max(&mut m))
            })
            .collect();
        let _ = writeln!(s, "| {bin} | {} |", cells.join(" | "));
    }

    s += "\n## Worst 5 assets by Deform p95 (pose set a; riggers: rig_deform_a_p95)\n\n";
    for m in methods {
        let mut worst: Vec<(f64, &str)> = report
            .of(m)
            .filter(|r| r.counts())
            .filter_map(|r| {
                r.deform_random
                    .or(r.rig_deform_random)
                    .map(|d| (d.p95, r.asset.as_str()))
            })
            .collect();
        worst.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let list: Vec<String> = worst.iter().take(5).map(|(v, a)| format!("{a} ({v:.4})")).collect();
        let _ = writeln!(
            s,
            "- {m}: {}",
            if list.is_empty() { "—".into() } else { list.join(", ") }
        );
    }

    let issues: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.data_issue)
        .map(|r| format!("{} ({} of {} vertices unskinned)", r.asset, r.unskinned, r.vertices))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    s += "\n## Data issues (> 1 % unskinned GT vertices; left out of aggregates)\n\n";
    s += &bullet_list(&issues);
    let failed: Vec<String> = report
        .results
        .iter()
        .flat_map(|r| {
            r.failures
                .iter()
                .map(move |f| format!("{} / {}: {f}", r.asset, r.method))
        })
        .collect();
    s += "\n## Failures\n\n";
    s += &bullet_list(&failed);
    let notes: Vec<String> = report
        .results
        .iter()
        .flat_map(|r| r.notes.iter().map(move |n| format!("{} / {}: {n}", r.asset, r.method)))
        .collect();
    s += "\n## Notes\n\n";
    s += &bullet_list(&notes);
    let loads: Vec<String> = report
        .load_failures
        .iter()
        .map(|l| format!("{}: {}", l.asset, l.message))
        .collect();
    s += "\n## Assets not loaded\n\n";
    s += &bullet_list(&loads);
    s
}

fn bullet_list(items: &[String]) -> String {
    if items.is_empty() {
        return "none\n".into();
    }
    items.iter().map(|i| format!("- {}\n", i.replace('\n', " "))).collect()
}
