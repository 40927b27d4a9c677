//! Solver timings on generated tubes (the shapes of ALGORITHMS.md §2's Blender timings):
//! heat at 10k vertices / 20 bones (target ≤ 0.3 s) and 100k / 60 (target ≤ 5 s), nearest at
//! the same sizes; voxel at resolution 256 on 50k vertices (target ≤ 3 s).

use criterion::{criterion_group, criterion_main, Criterion};
use rigml_skin::synthetic::{closed_tube_chain, tube_chain};
use rigml_skin::{Heat, Nearest, SkinSolver, SolveOptions, Voxel};
use std::hint::black_box;
use std::time::Duration;

fn solvers(c: &mut Criterion) {
    let options = SolveOptions::default();
    // (bones, rings per bone, vertices around): 321 * 32 = 10 272 and 1561 * 64 = 99 904 vertices.
    for (bones, rings, around) in [(20, 16, 32), (60, 26, 64)] {
        let (mesh, skeleton) = tube_chain(bones, rings, around, 0.1, 0.5);
        let label = format!("{}k_verts_{bones}_bones", mesh.vertex_count() / 1000);
        let mut group = c.benchmark_group(label);
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(if bones > 20 { 30 } else { 8 }));
        let all: [Box<dyn SkinSolver>; 2] = [Box::new(Heat::default()), Box::new(Nearest::default())];
        for solver in all {
            group.bench_function(solver.name(), |b| {
                b.iter(|| black_box(solver.solve(&mesh, &skeleton, &options).expect("solve")))
            });
        }
        group.finish();
    }
    // Voxel binding at resolution 256 on a closed tube of 781 * 64 + 2 = 49 986 vertices whose
    // radius is a tenth of its length (about 25 voxels).
    let (mesh, skeleton) = closed_tube_chain(20, 39, 64, 1.0, 0.5);
    let mut group = c.benchmark_group(format!("{}k_verts_20_bones", mesh.vertex_count() / 1000));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    let voxel = Voxel::default();
    group.bench_function("voxel_256", |b| {
        b.iter(|| black_box(voxel.solve(&mesh, &skeleton, &options).expect("solve")))
    });
    group.finish();
}

criterion_group!(benches, solvers);
criterion_main!(benches);
