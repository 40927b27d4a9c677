//! Skinning throughput against this machine's memory bandwidth.
//!
//! **What is measured.** Linear blend skinning ([`lbs_into`]) and dual-quaternion skinning
//! ([`dqs_into`]) of a generated tube mesh (100k vertices, 60 joints in a chain, exactly 4
//! seeded influences per vertex), on a rayon pool of 1 thread and on one of all threads. A 1M
//! vertex tube is measured too: its working set (~60 MB) is larger than the last-level cache,
//! while the 100k one (~6 MB) fits in it. Throughput is in vertices.
//!
//! **The bound.** Skinning streams every vertex's data through the core once; the joint
//! matrices (60 × 48 B) stay in L1. Per vertex it reads the bind position (12 B), the CSR row
//! offset (4 B) and 4 influences (4 × 8 B), and writes the posed position (12 B): 60 B, or 72 B
//! when the write allocates its cache line first (no streaming stores), which is what a plain
//! store does. A STREAM-like copy and triad on arrays much larger than the caches (3 × 128 MiB)
//! measure the bandwidth `B` the machine sustains; skinning cannot run faster than `B / 72 B`
//! vertices per second once its data lives in DRAM. The summary printed at the end measures `B`
//! (triad, best of a few runs) and the LBS/DQS rates again with plain timers and prints each
//! rate as a fraction of that bound. The 100k case can beat the DRAM bound because it runs out
//! of cache; the 1M case is the honest comparison.
//!
//! Run with `cargo bench -p rigml-core --bench skinning -- --quick`, on an otherwise idle
//! machine: other processes take both cores and memory bandwidth, and the ratios mean nothing.

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use glam::{Quat, Vec3};
use rayon::prelude::*;
use rigml_core::{dqs_into, lbs_into, skinning_matrices, Pose, Skeleton, Skin, Transform};
use std::hint::black_box;
use std::time::{Duration, Instant};

const JOINTS: usize = 60;
const INFLUENCES: usize = 4;
/// Vertices around each ring of the tube.
const RING: usize = 100;
/// f32 elements per bandwidth array: 128 MiB each, 4× the 32 MiB L3 of the machine it was tuned on.
const STREAM_LEN: usize = 32 << 20;

/// Deterministic generator (SplitMix64), so every run skins the same mesh.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// A skinned tube along +y: `vertices` positions, a 60-joint chain one unit apart, and per
/// vertex the 4 joints nearest in height with seeded, distance-falling weights. Also a posed
/// skeleton's skinning matrices (every joint bent by a seeded small rotation).
struct Scene {
    positions: Vec<Vec3>,
    skin: Skin,
    matrices: Vec<glam::Mat4>,
}

fn scene(vertices: usize, seed: u64) -> Scene {
    let mut rng = SplitMix(seed);
    let rings = vertices.div_ceil(RING);
    let height = JOINTS as f32;
    let positions: Vec<Vec3> = (0..vertices)
        .map(|v| {
            let (r, k) = (v / RING, v % RING);
            let a = k as f32 / RING as f32 * std::f32::consts::TAU;
            let y = r as f32 / rings as f32 * height;
            Vec3::new(0.5 * a.cos(), y, 0.5 * a.sin())
        })
        .collect();
    let rows: Vec<[(u32, f32); INFLUENCES]> = positions
        .iter()
        .map(|p| {
            let nearest = (p.y.floor() as i64 - 1).clamp(0, (JOINTS - INFLUENCES) as i64) as u32;
            std::array::from_fn(|i| {
                let j = nearest + i as u32;
                let d = (p.y - j as f32).abs();
                (j, 1.0 / (1.0 + d * d) + 0.1 * rng.unit())
            })
        })
        .collect();
    let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), JOINTS, INFLUENCES).expect("generated skin is valid");
    let mut skeleton = Skeleton {
        names: (0..JOINTS).map(|j| format!("j{j}")).collect(),
        parents: (0..JOINTS).map(|j| j.checked_sub(1)).collect(),
        rest_local: (0..JOINTS)
            .map(|j| Transform::from_translation(if j == 0 { Vec3::ZERO } else { Vec3::Y }))
            .collect(),
        inverse_bind: vec![],
    };
    skeleton.bind_to_rest();
    let mut pose = Pose::rest(&skeleton);
    for t in &mut pose.local {
        let axis = Vec3::new(rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5).normalize_or(Vec3::X);
        t.rotation = Quat::from_axis_angle(axis, 0.3 * rng.unit());
        t.scale = Vec3::splat(1.0);
    }
    let matrices = skinning_matrices(&skeleton, &pose).expect("pose matches skeleton");
    Scene {
        positions,
        skin,
        matrices,
    }
}

/// Bytes one vertex moves through memory in LBS/DQS (see the module doc): position in,
/// row offset, influences, position out, and the write-allocate read of the output line.
fn bytes_per_vertex() -> usize {
    let position = std::mem::size_of::<Vec3>();
    let offset = std::mem::size_of::<u32>();
    let influence = std::mem::size_of::<rigml_core::Influence>();
    position + offset + INFLUENCES * influence + 2 * position
}

fn pools() -> Vec<(String, rayon::ThreadPool)> {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts = vec![1];
    if all > 1 {
        counts.push(all);
    }
    counts
        .into_iter()
        .map(|n| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .expect("thread pool");
            (format!("{n}thr"), pool)
        })
        .collect()
}

fn bench_skinning(c: &mut Criterion) {
    let pools = pools();
    let mut group = c.benchmark_group("skinning");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    for vertices in [100_000, 1_000_000] {
        let s = scene(vertices, 7);
        let mut out = vec![Vec3::ZERO; vertices];
        group.throughput(Throughput::Elements(vertices as u64));
        for (threads, pool) in &pools {
            let id = format!("{vertices}v/{threads}");
            group.bench_function(BenchmarkId::new("lbs", &id), |b| {
                b.iter(|| pool.install(|| lbs_into(&s.positions, &s.skin, &s.matrices, black_box(&mut out))))
            });
            group.bench_function(BenchmarkId::new("dqs", &id), |b| {
                b.iter(|| pool.install(|| dqs_into(&s.positions, &s.skin, &s.matrices, black_box(&mut out))))
            });
        }
    }
    group.finish();
}

/// STREAM copy `a = b` (reads and writes one array each).
fn copy(a: &mut [f32], b: &[f32]) {
    a.par_chunks_mut(1 << 16)
        .zip(b.par_chunks(1 << 16))
        .for_each(|(a, b)| a.copy_from_slice(b));
}

/// STREAM triad `a = b + s·c` (reads two arrays, writes one).
fn triad(a: &mut [f32], b: &[f32], c: &[f32], s: f32) {
    a.par_chunks_mut(1 << 16)
        .zip(b.par_chunks(1 << 16))
        .zip(c.par_chunks(1 << 16))
        .for_each(|((a, b), c)| {
            for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                *a = b + s * c;
            }
        });
}

struct Stream {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

impl Stream {
    fn new() -> Self {
        // Written, not just allocated, so every page is mapped before timing.
        Self {
            a: vec![0.0; STREAM_LEN],
            b: (0..STREAM_LEN).map(|i| (i % 1024) as f32).collect(),
            c: (0..STREAM_LEN).map(|i| (i % 512) as f32).collect(),
        }
    }
}

/// Bytes counted per element: what the code reads plus what it writes (STREAM's convention,
/// which does not count the write-allocate read).
const COPY_BYTES: u64 = 2 * 4;
const TRIAD_BYTES: u64 = 3 * 4;

fn bench_memory(c: &mut Criterion) {
    let pools = pools();
    let mut st = Stream::new();
    let mut group = c.benchmark_group("memory");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10);
    for (threads, pool) in &pools {
        group.throughput(Throughput::Bytes(COPY_BYTES * STREAM_LEN as u64));
        group.bench_function(BenchmarkId::new("copy", threads), |bench| {
            bench.iter(|| pool.install(|| copy(black_box(&mut st.a), &st.b)))
        });
        group.throughput(Throughput::Bytes(TRIAD_BYTES * STREAM_LEN as u64));
        group.bench_function(BenchmarkId::new("triad", threads), |bench| {
            bench.iter(|| pool.install(|| triad(black_box(&mut st.a), &st.b, &st.c, 3.0)))
        });
    }
    group.finish();
}

/// Best (shortest) of `runs` timings of `f`, in seconds.
fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Measure the triad bandwidth and the skinning rates with plain timers and print each rate as
/// a fraction of the memory-bandwidth bound. Criterion's own numbers are printed above it.
fn summary() {
    let bytes = bytes_per_vertex();
    println!("\n== skinning vs memory-bandwidth bound ({bytes} B/vertex incl. write-allocate) ==");
    let mut st = Stream::new();
    for (threads, pool) in pools() {
        let secs = best_of(5, || pool.install(|| triad(&mut st.a, &st.b, &st.c, 3.0)));
        // The bound counts the write-allocate read too, so use the bytes the triad really moves.
        let moved = (TRIAD_BYTES + 4) * STREAM_LEN as u64;
        let bandwidth = moved as f64 / secs;
        let bound = bandwidth / bytes as f64;
        println!(
            "{threads}: triad {:.2} GB/s (STREAM count {:.2} GB/s) -> bound {:.1} Mvert/s",
            bandwidth / 1e9,
            (TRIAD_BYTES * STREAM_LEN as u64) as f64 / secs / 1e9,
            bound / 1e6
        );
        for vertices in [100_000, 1_000_000] {
            let s = scene(vertices, 7);
            let mut out = vec![Vec3::ZERO; vertices];
            let runs = if vertices > 100_000 { 20 } else { 100 };
            let lbs = best_of(runs, || {
                pool.install(|| lbs_into(&s.positions, &s.skin, &s.matrices, &mut out))
            });
            let dqs = best_of(runs, || {
                pool.install(|| dqs_into(&s.positions, &s.skin, &s.matrices, &mut out))
            });
            for (name, secs) in [("lbs", lbs), ("dqs", dqs)] {
                let rate = vertices as f64 / secs;
                println!(
                    "  {name} {vertices:>7}v: {:7.1} Mvert/s, {:5.2} GB/s, {:.2}x of bound",
                    rate / 1e6,
                    rate * bytes as f64 / 1e9,
                    rate / bound
                );
            }
        }
    }
}

criterion_group!(benches, bench_skinning, bench_memory);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo test --benches` runs this binary with `--bench` absent: skip the slow summary there.
    if std::env::args().any(|a| a == "--bench") {
        summary();
    }
}
