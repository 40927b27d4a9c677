//! Measurement of the rig library (docs/experiments/2026-12-07-rig-library.md): for every
//! train and val character, the library's most alike rig among the train characters, moved
//! onto it by the two boxes, and its CD-J2J (METRICS.md §5) against the character's own rig.
//! Val characters search the whole train library; train characters search it without their
//! own family (`train-lofo`: how the library does on families it has never seen) and without
//! themselves only (`train-loo`: a studio's next character of a family it has rigged). Test
//! rows are never read.
//!
//! `cargo run --release -p rigml-rig --example skeleton_retrieval [-- --cells]` prints one row
//! per character and mode: mode, id, family, match, match family, similarity, CD-J2J. With
//! `--baseline DIR:DIR`, `rigml eval` reports (per_asset.csv) of `rig-detect` without the
//! library on val and train, it then prints, per threshold, what `detect` would score taking
//! the library's rig from that similarity on: means over characters and over families. With
//! `--auto DIR:DIR` as well (the same reports of `rig-auto`), characters `detect` rigs as
//! standing humanoids keep its skeleton, as the shipped `detect` does.

use glam::Vec3;
use rigml_eval::dataset::family_of;
use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet};
use rigml_learn::skeleton::library::{Descriptor, LibraryRig, RigLibrary};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    std::env::var_os("RIGML_DATA").map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
}

/// Which library rigs a search may return.
type Allowed<'a> = Box<dyn Fn(&LibraryRig) -> bool + 'a>;

struct Target {
    id: String,
    split: String,
    family: String,
    descriptor: Descriptor,
    /// The character's own joints in §1 units.
    gt: JointSet,
    centre: Vec3,
    scale: f32,
}

/// CD-J2J of `rig` moved onto `target`.
fn moved_score(rig: &LibraryRig, target: &Target) -> f64 {
    let pred = JointSet {
        positions: rig
            .joints
            .iter()
            .map(|p| (rig.descriptor.move_to(*p, &target.descriptor) - target.centre) * target.scale)
            .collect(),
        parents: rig.parents.clone(),
    };
    score(&pred, &target.gt).map_or(f64::NAN, |s| s.cd_j2j)
}

/// The fields of one CSV line (quoted fields may hold commas; no escaped quotes in these files).
fn csv_fields(line: &str) -> Vec<&str> {
    let (mut out, mut start, mut quoted) = (Vec::new(), 0, false);
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(&line[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&line[start..]);
    out
}

/// `asset -> cd_j2j` of `method` in a `rigml eval` per_asset.csv.
fn baseline(dir: &Path, method: &str) -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(dir.join("per_asset.csv")).expect("per_asset.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    let (a, m, c) = (col("asset"), col("method"), col("cd_j2j"));
    lines
        .map(csv_fields)
        .filter(|f| f[m] == method)
        .filter_map(|f| Some((f[a].to_string(), f[c].parse().ok()?)))
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = data_dir();
    let text = std::fs::read_to_string(data.join("manifest.tsv")).expect("manifest.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    let (id_c, kind_c, split_c, path_c) = (col("id"), col("kind"), col("split"), col("path"));
    let mut library = RigLibrary::default();
    let mut targets = Vec::new();
    for f in lines.map(|l| l.split('\t').collect::<Vec<_>>()) {
        if f[kind_c] != "character" || !(f[split_c] == "train" || f[split_c] == "val") {
            continue;
        }
        let Ok(character) = rigml_io::load(&data.join(f[path_c])) else {
            continue;
        };
        let (mesh, s) = (&character.mesh, &character.skeleton);
        let (Some((centre, scale)), Some(descriptor)) = (
            normalisation(&mesh.positions),
            Descriptor::of(&mesh.positions, &mesh.triangles),
        ) else {
            continue;
        };
        if s.is_empty() {
            continue;
        }
        if f[split_c] == "train" {
            library
                .add(
                    f[id_c],
                    &mesh.positions,
                    &mesh.triangles,
                    &s.names,
                    &s.parents,
                    &s.bind_positions(),
                )
                .expect("a rig");
        }
        targets.push(Target {
            id: f[id_c].to_string(),
            split: f[split_c].to_string(),
            family: family_of(f[path_c]),
            descriptor,
            gt: JointSet::from_skeleton(s, centre, scale),
            centre,
            scale,
        });
    }
    let family: BTreeMap<&str, &str> = targets.iter().map(|t| (t.id.as_str(), t.family.as_str())).collect();
    // (mode, id, family, similarity, moved CD-J2J)
    let mut rows: Vec<(&str, &Target, f32, f64)> = Vec::new();
    println!("mode\tid\tfamily\tmatch\tmatch_family\tsimilarity\tcd_j2j");
    for t in &targets {
        let modes: Vec<(&str, Allowed)> = if t.split == "val" {
            vec![("val", Box::new(|_: &LibraryRig| true))]
        } else {
            vec![
                (
                    "train-lofo",
                    Box::new(|r: &LibraryRig| family.get(r.id.as_str()) != Some(&t.family.as_str())),
                ),
                ("train-loo", Box::new(|r: &LibraryRig| r.id != t.id)),
            ]
        };
        for (mode, allowed) in modes {
            let best = library
                .rigs
                .iter()
                .filter(|r| allowed(r))
                .map(|r| (t.descriptor.similarity(&r.descriptor), r))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((s, r)) = best {
                let cd = moved_score(r, t);
                println!(
                    "{mode}\t{}\t{}\t{}\t{}\t{s:.4}\t{cd:.4}",
                    t.id,
                    t.family,
                    r.id,
                    family.get(r.id.as_str()).unwrap_or(&"")
                );
                rows.push((mode, t, s, cd));
            }
        }
    }
    let Some(dirs) = args
        .iter()
        .position(|a| a == "--baseline")
        .and_then(|k| args.get(k + 1))
    else {
        return;
    };
    let (val_dir, train_dir) = dirs.split_once(':').expect("--baseline VAL_DIR:TRAIN_DIR");
    let mut detect = baseline(Path::new(val_dir), "rig-detect");
    detect.extend(baseline(Path::new(train_dir), "rig-detect"));
    // With `--auto VAL_DIR:TRAIN_DIR` (reports of `rig-auto`), the shapes `detect` took for
    // standing humanoids (its skeleton differs from `auto`'s) keep theirs: the library as shipped.
    let humanoids: Vec<String> = match args.iter().position(|a| a == "--auto").and_then(|k| args.get(k + 1)) {
        Some(dirs) => {
            let (v, t) = dirs.split_once(':').expect("--auto VAL_DIR:TRAIN_DIR");
            let mut auto = baseline(Path::new(v), "rig-auto");
            auto.extend(baseline(Path::new(t), "rig-auto"));
            detect
                .iter()
                .filter(|(id, d)| auto.get(*id).is_some_and(|a| (a - *d).abs() > 1e-7))
                .map(|(id, _)| id.clone())
                .collect()
        }
        None => Vec::new(),
    };
    eprintln!("mode\tthreshold\tfired\tbetter\tmean\tmean_over_families\tdetect_mean\tdetect_over_families");
    for mode in ["train-lofo", "train-loo", "val"] {
        for threshold in [0.4f32, 0.5, 0.6, 0.7, 0.8, 2.0] {
            let (mut fired, mut better) = (0, 0);
            let mut by_family: BTreeMap<&str, (f64, f64, usize)> = BTreeMap::new();
            for (_, t, s, cd) in rows.iter().filter(|r| r.0 == mode) {
                let Some(&d) = detect.get(&t.id) else { continue };
                let mixed = if *s >= threshold && !humanoids.contains(&t.id) {
                    fired += 1;
                    better += usize::from(*cd < d);
                    *cd
                } else {
                    d
                };
                let e = by_family.entry(t.family.as_str()).or_default();
                e.0 += mixed;
                e.1 += d;
                e.2 += 1;
            }
            let n: usize = by_family.values().map(|e| e.2).sum();
            let mean = |k: usize| by_family.values().map(|e| if k == 0 { e.0 } else { e.1 }).sum::<f64>() / n as f64;
            let over = |k: usize| {
                by_family
                    .values()
                    .map(|e| if k == 0 { e.0 } else { e.1 } / e.2 as f64)
                    .sum::<f64>()
                    / by_family.len() as f64
            };
            eprintln!(
                "{mode}\t{threshold}\t{fired}\t{better}\t{:.4}\t{:.4}\t{:.4}\t{:.4}",
                mean(0),
                over(0),
                mean(1),
                over(1)
            );
        }
    }
}
