//! Auto-rigging end to end on a 20k-vertex humanoid (the procedural demo humanoid subdivided,
//! `rigml_skin::synthetic::large_humanoid`): the general placer alone, and place + learned
//! skinning (target ≤ 3 s on the 2-core machine, issue 10). The learned solver on the
//! humanoid's own artist-free procedural skeleton is the baseline of the same run, so the
//! placement's share of the total can be read off.

use criterion::{criterion_group, criterion_main, Criterion};
use rigml_learn::Learned;
use rigml_rig::{Auto, SkeletonPlacer};
use rigml_skin::synthetic::large_humanoid;
use rigml_skin::{SkinSolver, SolveOptions};
use std::hint::black_box;
use std::time::Duration;

fn rig(c: &mut Criterion) {
    let (mesh, skeleton) = large_humanoid(20_000).expect("humanoid");
    let options = SolveOptions::default();
    let learned = Learned::embedded().expect("embedded model");
    let auto = Auto::default();
    let joints = auto.place(&mesh).expect("place").len();
    let mut group = c.benchmark_group(format!("{}k_verts_humanoid", mesh.vertex_count() / 1000));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("place_auto", |b| {
        b.iter(|| black_box(auto.place(&mesh).expect("place")))
    });
    group.bench_function(format!("place_auto_and_skin_learned_{joints}_joints"), |b| {
        b.iter(|| black_box(rigml_rig::rig("bench", mesh.clone(), &auto, &learned, &options).expect("rig")))
    });
    group.bench_function(
        format!("baseline_skin_learned_{}_joints", skeleton.joint_count()),
        |b| b.iter(|| black_box(learned.solve(&mesh, &skeleton, &options).expect("solve"))),
    );
    group.finish();
}

criterion_group!(benches, rig);
criterion_main!(benches);
