//! Auto-rigging end to end on a 20k-vertex humanoid (the procedural demo humanoid subdivided,
//! `rigml_skin::synthetic::large_humanoid`), target ≤ 3 s on the 2-core machine (issue 10):
//! - `place_detect`: the default placer of `rigml rig` (the humanoid template when the shape is
//!   a standing humanoid, else the general one), and `place_auto`: the general placer (the
//!   curve skeleton guided by the learned skeleton model), beside `baseline_place_curve` (the
//!   curve skeleton alone, to read off the guidance's share);
//! - `place_detect_and_skin_learned`, `place_auto_and_skin_learned`: placement + the learned
//!   skin, i.e. `rigml rig` without file reading and writing;
//! - baselines of the same run: the nearest solver on the detected skeleton
//!   (`baseline_detect_skin_nearest`, the cheapest skin, so the learned skin's share can be read
//!   off) and the learned solver on the humanoid's own procedural skeleton
//!   (`baseline_skin_learned`, skinning alone).

use criterion::{criterion_group, criterion_main, Criterion};
use rigml_learn::Learned;
use rigml_rig::{Auto, CurveSkeleton, Detect, SkeletonPlacer};
use rigml_skin::synthetic::large_humanoid;
use rigml_skin::{Nearest, SkinSolver, SolveOptions};
use std::hint::black_box;
use std::time::Duration;

fn rig(c: &mut Criterion) {
    // One subdivision level below 20k vertices plus one more lands at ~19k (20_000 would give ~76k).
    let (mesh, skeleton) = large_humanoid(15_000).expect("humanoid");
    let options = SolveOptions::default();
    let learned = Learned::embedded().expect("embedded model");
    let nearest = Nearest::default();
    let auto = Auto::embedded().expect("embedded skeleton model");
    let detect = Detect::embedded().expect("embedded skeleton model");
    let (template, placed) = detect.choose(&mesh).expect("detect");
    let detected = placed.to_skeleton().expect("skeleton");
    let auto_joints = auto.place(&mesh).expect("place").len();
    let mut group = c.benchmark_group(format!("{}k_verts_humanoid", mesh.vertex_count() / 1000));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function(format!("place_detect_{template}"), |b| {
        b.iter(|| black_box(detect.place(&mesh).expect("place")))
    });
    group.bench_function(
        format!(
            "place_detect_{template}_and_skin_learned_{}_joints",
            detected.joint_count()
        ),
        |b| b.iter(|| black_box(rigml_rig::rig("bench", mesh.clone(), &detect, &learned, &options).expect("rig"))),
    );
    group.bench_function(
        format!("baseline_detect_skin_nearest_{}_joints", detected.joint_count()),
        |b| b.iter(|| black_box(nearest.solve(&mesh, &detected, &options).expect("solve"))),
    );
    group.bench_function("place_auto", |b| {
        b.iter(|| black_box(auto.place(&mesh).expect("place")))
    });
    let curve = CurveSkeleton::default();
    group.bench_function("baseline_place_curve", |b| {
        b.iter(|| black_box(curve.place(&mesh).expect("place")))
    });
    group.bench_function(format!("place_auto_and_skin_learned_{auto_joints}_joints"), |b| {
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
