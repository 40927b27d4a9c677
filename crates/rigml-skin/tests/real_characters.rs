//! Every solver on every train/val character of the shared manifest (`$RIGML_DATA` or the
//! `shared/data` folder above the workspace), loaded with `rigml_io::load`: no failure as
//! METRICS.md §4 defines it (no error, no NaN, sums 1 within 1e-4, cap respected, no zero row,
//! no weight on an ignored end-site), with wall times printed per asset.

use rigml_core::{Character, Skin};
use rigml_skin::post::Prepared;
use rigml_skin::{check, Heat, Nearest, SkinSolver, SolveOptions, Voxel};
use std::collections::HashMap;

use std::time::Instant;

// The manifest reader the rigml-io integration tests use (one copy, shared by path).
#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use common::data_dir;

/// Mean over GT-skinned vertices of `sum_j |w_pred - w_gt|`, both top-4 (METRICS.md §2 Avg L1,
/// top-4 mode); `None` when the file has no skin.
fn mean_l1(pred: &Skin, gt: Option<&Skin>) -> Option<f64> {
    let gt = gt?.pruned(4).ok()?;
    let pred = pred.pruned(4).ok()?;
    let (mut total, mut count) = (0.0f64, 0usize);
    for (p, g) in pred.rows().zip(gt.rows()) {
        if g.is_empty() {
            continue;
        }
        let mut l1: f32 = 0.0;
        for i in g {
            let w = p.iter().find(|x| x.joint == i.joint).map_or(0.0, |x| x.weight);
            l1 += (w - i.weight).abs();
        }
        l1 += p
            .iter()
            .filter(|x| !g.iter().any(|i| i.joint == x.joint))
            .map(|x| x.weight)
            .sum::<f32>();
        total += f64::from(l1);
        count += 1;
    }
    (count > 0).then(|| total / count as f64)
}

fn manifest() -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(data_dir().join("manifest.tsv")).expect("manifest.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("manifest header").split('\t').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t'))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// Voxel resolution for this whole-manifest test: 128 keeps the run to minutes on 2 cores
/// (the default 256 costs about 8x the voxels; time it with the `skin_time` example).
const VOXEL_RESOLUTION: usize = 128;

#[test]
fn every_solver_passes_metrics_robustness_on_train_and_val_characters() {
    let rows: Vec<_> = manifest()
        .into_iter()
        .filter(|r| r["kind"] == "character" && (r["split"] == "train" || r["split"] == "val"))
        .collect();
    assert!(rows.len() >= 60, "manifest lists {} train/val characters", rows.len());
    let solvers: Vec<Box<dyn SkinSolver>> = vec![
        Box::new(Nearest::default()),
        Box::new(Heat::default()),
        Box::new(Voxel {
            resolution: VOXEL_RESOLUTION,
            ..Default::default()
        }),
    ];
    let options = SolveOptions::default();
    let mut failures = Vec::new();
    let mut totals = vec![0.0f64; solvers.len()];
    let mut l1_sums = vec![(0.0f64, 0usize); solvers.len()];
    println!(
        "{:<40} {:>7} {:>5} {:>9} {:>9} {:>9}",
        "id", "verts", "jnts", "nearest s", "heat s", "voxel s"
    );
    for row in &rows {
        let path = data_dir().join(&row["path"]);
        let character: Character = match rigml_io::load(&path) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: load failed: {e}", row["id"]));
                continue;
            }
        };
        let bones = Prepared::new(&character.mesh, &character.skeleton).map(|p| p.bones);
        let mut times = Vec::new();
        for (k, solver) in solvers.iter().enumerate() {
            let start = Instant::now();
            let result = solver.solve(&character.mesh, &character.skeleton, &options);
            let seconds = start.elapsed().as_secs_f64();
            totals[k] += seconds;
            times.push(seconds);
            match (&result, &bones) {
                (Ok(skin), Ok(bones)) => {
                    if let Some(l1) = mean_l1(skin, character.skin.as_ref()) {
                        l1_sums[k].0 += l1;
                        l1_sums[k].1 += 1;
                    }
                    for problem in check::failures(skin, character.mesh.vertex_count(), options.max_influences, bones) {
                        failures.push(format!("{} {}: {problem}", row["id"], solver.name()));
                    }
                }
                (Err(e), _) => failures.push(format!("{} {}: {e}", row["id"], solver.name())),
                (_, Err(e)) => failures.push(format!("{}: bones: {e}", row["id"])),
            }
        }
        println!(
            "{:<40} {:>7} {:>5} {:>9.3} {:>9.3} {:>9.3}",
            row["id"],
            character.mesh.vertex_count(),
            character.skeleton.joint_count(),
            times[0],
            times[1],
            times[2]
        );
    }
    println!(
        "total seconds: nearest {:.2}, heat {:.2}, voxel {:.2} over {} characters",
        totals[0],
        totals[1],
        totals[2],
        rows.len()
    );
    for (solver, (sum, n)) in solvers.iter().zip(&l1_sums) {
        let mean = sum / (*n).max(1) as f64;
        println!(
            "{}: mean top-4 L1 against the files' own weights {mean:.3} over {n} characters",
            solver.name()
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
