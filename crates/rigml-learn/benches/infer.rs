//! Learned-solver inference (features + network + post-processing) on a generated character of
//! 20 094 vertices and 60 joints (target ≤ 1 s on the 2-core machine), with the nearest solver
//! on the same mesh as the baseline of the same run. The stages (preparation + features, the
//! network alone) are timed separately to show where the time goes.

use criterion::{criterion_group, criterion_main, Criterion};
use rigml_learn::{features, Learned};
use rigml_skin::post::Prepared;
use rigml_skin::synthetic::tube_chain;
use rigml_skin::{Nearest, SkinSolver, SolveOptions};
use std::hint::black_box;
use std::time::Duration;

fn infer(c: &mut Criterion) {
    // 59 bones -> 60 joints; (59 * 10 + 1) * 34 = 20 094 vertices.
    let (mesh, skeleton) = tube_chain(59, 10, 34, 0.1, 0.5);
    let options = SolveOptions::default();
    let learned = Learned::embedded().expect("embedded model");
    // The layout the embedded model reads (its metadata), as inference extracts it.
    let version = learned.model().feature_version().unwrap_or(features::FEATURE_VERSION);
    let mut group = c.benchmark_group(format!(
        "{}k_verts_{}_joints",
        mesh.vertex_count() / 1000,
        skeleton.joint_count()
    ));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("learned", |b| {
        b.iter(|| black_box(learned.solve(&mesh, &skeleton, &options).expect("solve")))
    });
    group.bench_function("learned_features", |b| {
        b.iter(|| {
            let prep = Prepared::new(&mesh, &skeleton).expect("prepare");
            black_box(features::extract(&prep, &skeleton.parents, version))
        })
    });
    let prep = Prepared::new(&mesh, &skeleton).expect("prepare");
    let feats = features::extract(&prep, &skeleton.parents, version);
    group.bench_function("learned_network", |b| {
        b.iter(|| black_box(learned.probabilities(&feats).expect("network")))
    });
    let nearest = Nearest::default();
    group.bench_function("nearest", |b| {
        b.iter(|| black_box(nearest.solve(&mesh, &skeleton, &options).expect("solve")))
    });
    group.finish();
}

criterion_group!(benches, infer);
criterion_main!(benches);
