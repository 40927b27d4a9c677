//! Load time of the largest character file in the manifest (by size on disk) through
//! [`rigml_io::load`]: read, parse, build the character, validate.
//!
//! A second bench in the same group times the `gltf` crate parsing the same file's JSON
//! document, as a floor to compare with.
//!
//! Run with `cargo bench -p rigml-io --bench load -- --quick` (set `RIGML_DATA` when the
//! checkout does not sit beside `shared/`).

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::PathBuf;
use std::time::Duration;

/// The largest character file that `rigml_io::load` reads, with its size in bytes. Files whose
/// format has no reader yet are skipped (their error is printed), so the bench measures the
/// biggest file that actually loads.
fn largest_loadable() -> (PathBuf, u64) {
    let mut files: Vec<(PathBuf, u64)> = common::manifest()
        .into_iter()
        .filter(|r| r.get("kind") == "character")
        .map(|r| r.path())
        .filter_map(|p| std::fs::metadata(&p).ok().map(|m| (p, m.len())))
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    for (path, size) in files {
        match rigml_io::load(&path) {
            Ok(_) => return (path, size),
            Err(e) => eprintln!("skipping (does not load): {e}"),
        }
    }
    panic!("no character in the manifest loads");
}

fn bench_load(c: &mut Criterion) {
    let (path, size) = largest_loadable();
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let character = rigml_io::load(&path).expect("loaded once already");
    println!(
        "largest loadable character: {} ({size} bytes, {} vertices, {} joints, {} clips)",
        path.display(),
        character.mesh.positions.len(),
        character.skeleton.joint_count(),
        character.clips.len()
    );
    let mut group = c.benchmark_group("load");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .throughput(Throughput::Bytes(size));
    group.bench_function(&name, |b| b.iter(|| rigml_io::load(&path).expect("loads")));
    // Reference in the same run: the `gltf` crate reading the file and parsing its JSON
    // document (no accessor decoding, no character built), a floor for any glTF reader.
    group.bench_function(format!("{name} (gltf crate: document only)"), |b| {
        b.iter(|| gltf::Gltf::from_slice(&std::fs::read(&path).expect("readable")).expect("parses"))
    });
    group.finish();
}

criterion_group!(benches, bench_load);
criterion_main!(benches);
