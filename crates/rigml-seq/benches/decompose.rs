//! SSDR decomposition (`rigml_seq::decompose`) of Dem Bones' own example, the manifest's
//! `dem_bones_example` (Alembic, 400 frames × 754 vertices), at 5 and 20 bones with 8 influences
//! and 5 iterations (the per-iteration cost is what changes with the implementation; the CLI
//! runs 30). For comparisons, run the bench on two builds in one session and compare ratios.
//!
//! Run with `cargo bench -p rigml-seq --bench decompose -- --quick` (set `RIGML_DATA` when the
//! checkout does not sit beside `shared/`).

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use rigml_io::sequence::{load_sequence, SequenceOptions};
use rigml_seq::{decompose, Options};
use std::time::Duration;

fn bench_decompose(c: &mut Criterion) {
    let rows = common::rows_where("id", "dem_bones_example");
    let row = rows.first().expect("the manifest lists dem_bones_example");
    let sequence = load_sequence(&row.path(), &SequenceOptions::default()).expect("the example loads");
    let mut group = c.benchmark_group("decompose");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
        .sample_size(10);
    for bones in [5, 20] {
        let options = Options {
            bones,
            max_influences: 8,
            iterations: 5,
            ..Options::default()
        };
        group.bench_function(format!("dem_bones_example, {bones} bones, 5 iterations"), |b| {
            b.iter(|| decompose(&sequence, &options, &|_, _| {}).expect("decomposes"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_decompose);
criterion_main!(benches);
