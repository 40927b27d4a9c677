//! Measurement: for standing humanoids, an artist's rig from the library carried onto a new
//! mesh by the humanoid template's joints (each artist joint keeps its place relative to the
//! nearest template bone of its own character), against the humanoid template alone. CD-J2J
//! (METRICS.md §5) against the character's own rig, on train (leaving each family out, and
//! leaving each character out) and val. Test rows are never read.
//!
//! `cargo run --release -p rigml-rig --example humanoid_library` prints, per mode and
//! threshold, the shipped path (`rigml_rig::library::humanoid_match`) against the template
//! (`VERBOSE=1`: each val character it changes). `EXPLORE=1` measures the variants of
//! docs/experiments/2026-12-07-humanoid-conventions.md with this file's own carrying: how many
//! rigs vote (k), the template voting too; `STYLE=0` turns offsets with the bone, `1` does not,
//! `2` carries by the nearest template joint; `SNAP=r` moves every carried joint mutually
//! nearest a template joint within r of the size onto it (`SNAPONLY=Foot,Toe`: those template
//! joints only); `TOP=ID` prints, for characters whose id holds ID, the five most alike rigs
//! and each carried joint's distance to the artist's joint of the same name.

use glam::{Quat, Vec3};
use rigml_eval::dataset::family_of;
use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet};
use rigml_learn::skeleton::library::{Anchors, Descriptor, LibraryRig, RigLibrary};
use rigml_rig::{Humanoid, PlacedSkeleton, SkeletonPlacer};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A candidate rig: joints, parents, its CD-J2J.
type Candidate<'a> = (&'a [Vec3], &'a [Option<usize>], f64);

fn data_dir() -> PathBuf {
    std::env::var_os("RIGML_DATA").map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
}

struct Character {
    id: String,
    split: String,
    family: String,
    descriptor: Descriptor,
    template: PlacedSkeleton,
    joints: Vec<Vec3>,
    gtnames: Vec<String>,
    parents: Vec<Option<usize>>,
    gt: JointSet,
    centre: Vec3,
    scale: f32,
    height: f32,
    mesh: rigml_core::Mesh,
    /// Its rig as the library stores it, anchors included.
    rig: LibraryRig,
}

/// Template bones as (child index, parent index) pairs.
fn bones(t: &PlacedSkeleton) -> Vec<(usize, usize)> {
    t.parents
        .iter()
        .enumerate()
        .filter_map(|(j, p)| p.map(|p| (j, p)))
        .collect()
}

/// `from`'s artist joints carried onto `to` by the template joints both share.
fn carry_raw(from: &Character, to: &Character, global_scale: bool) -> Vec<Vec3> {
    let index: BTreeMap<&str, usize> = to
        .template
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let shared: Vec<(usize, usize, usize, usize)> = bones(&from.template)
        .into_iter()
        .filter_map(|(c, p)| {
            let tc = *index.get(from.template.names[c].as_str())?;
            let tp = *index.get(from.template.names[p].as_str())?;
            Some((p, c, tp, tc))
        })
        .collect();
    let size = to.height / from.height;
    from.joints
        .iter()
        .map(|&a| {
            let th = &from.template.heads;
            let best = shared
                .iter()
                .map(|&(p, c, tp, tc)| {
                    let (s, e) = (th[p], th[c]);
                    let d = e - s;
                    let t = if d.length_squared() > 1e-12 {
                        ((a - s).dot(d) / d.length_squared()).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    ((a - (s + t * d)).length(), t, p, c, tp, tc)
                })
                .min_by(|x, y| x.0.total_cmp(&y.0));
            let Some((_, t, p, c, tp, tc)) = best else {
                return from.descriptor.move_to(a, &to.descriptor);
            };
            let (s, e) = (from.template.heads[p], from.template.heads[c]);
            let (s2, e2) = (to.template.heads[tp], to.template.heads[tc]);
            let (d, d2) = (e - s, e2 - s2);
            let offset = a - (s + t * d);
            let style: u32 = std::env::var("STYLE").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
            if style == 2 {
                // nearest anchor joint, translated, global scale
                let (j, tj) = if t < 0.5 { (p, tp) } else { (c, tc) };
                return to.template.heads[tj] + (a - from.template.heads[j]) * size;
            }
            if style == 1 {
                return s2 + t * d2 + (a - (s + t * d)) * size;
            }
            let (rot, k) = if d.length() > 1e-6 && d2.length() > 1e-6 {
                (
                    Quat::from_rotation_arc(d.normalize(), d2.normalize()),
                    if global_scale { size } else { d2.length() / d.length() },
                )
            } else {
                (Quat::IDENTITY, size)
            };
            s2 + t * d2 + rot * offset * k
        })
        .collect()
}

/// Carried joints; with SNAP=r, each template joint and its mutually nearest carried joint
/// closer than r of the size: the carried joint moves onto the template joint.
fn carry(from: &Character, to: &Character, global_scale: bool) -> Vec<Vec3> {
    let mut j = carry_raw(from, to, global_scale);
    let r: f32 = std::env::var("SNAP").ok().and_then(|v| v.parse().ok()).unwrap_or(0.0);
    if r > 0.0 {
        let only: Vec<String> = std::env::var("SNAPONLY")
            .map(|v| v.split(',').map(String::from).collect())
            .unwrap_or_default();
        let nearest = |p: Vec3, set: &[Vec3]| {
            set.iter()
                .enumerate()
                .map(|(i, q)| (i, q.distance(p)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let th = &to.template.heads;
        let mut moves = Vec::new();
        for (k, t) in th.iter().enumerate() {
            if !only.is_empty() && !only.iter().any(|o| to.template.names[k].contains(o.as_str())) {
                continue;
            }
            let Some((i, d)) = nearest(*t, &j) else { continue };
            if d < r * to.height && nearest(j[i], th).is_some_and(|(kk, _)| kk == k) {
                moves.push((i, *t));
            }
        }
        for (i, t) in moves {
            j[i] = t;
        }
    }
    j
}

fn cd(positions: &[Vec3], parents: &[Option<usize>], target: &Character) -> f64 {
    let pred = JointSet {
        positions: positions.iter().map(|p| (*p - target.centre) * target.scale).collect(),
        parents: parents.to_vec(),
    };
    score(&pred, &target.gt).map_or(f64::NAN, |s| s.cd_j2j)
}

fn main() {
    let data = data_dir();
    let text = std::fs::read_to_string(data.join("manifest.tsv")).expect("manifest.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    let (id_c, kind_c, split_c, path_c) = (col("id"), col("kind"), col("split"), col("path"));
    let humanoid = Humanoid::default();
    let mut chars = Vec::new();
    for f in lines.map(|l| l.split('\t').collect::<Vec<_>>()) {
        if f[kind_c] != "character" || !(f[split_c] == "train" || f[split_c] == "val") {
            continue;
        }
        let Ok(character) = rigml_io::load(&data.join(f[path_c])) else {
            continue;
        };
        let (mesh, s) = (&character.mesh, &character.skeleton);
        if s.is_empty() {
            continue;
        }
        let (Some((centre, scale)), Some(descriptor)) = (
            normalisation(&mesh.positions),
            Descriptor::of(&mesh.positions, &mesh.triangles),
        ) else {
            continue;
        };
        let Ok(template) = humanoid.place(mesh) else {
            continue;
        };
        let height = descriptor.extent.max_element();
        let template_copy = template.clone();
        chars.push(Character {
            id: f[id_c].to_string(),
            split: f[split_c].to_string(),
            family: family_of(f[path_c]),
            descriptor,
            template,
            joints: s.bind_positions(),
            gtnames: s.names.clone(),
            parents: s.parents.clone(),
            gt: JointSet::from_skeleton(s, centre, scale),
            centre,
            scale,
            height,
            rig: {
                let mut library = RigLibrary::default();
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
                let mut rig = library.rigs.remove(0);
                rig.anchors = Some(
                    Anchors::new(template_copy.names, template_copy.parents, template_copy.heads).expect("anchors"),
                );
                rig
            },
            mesh: mesh.clone(),
        });
    }
    eprintln!("{} humanoids", chars.len());
    if std::env::var("EXPLORE").is_err() {
        shipped(&chars);
        return;
    }
    // Per mode and target: the template's CD-J2J, and the allowed library rigs by similarity
    // with their carried joints.
    struct Row<'a> {
        mode: &'static str,
        target: &'a Character,
        base: f64,
        /// (similarity, rig, carried joints, its CD-J2J)
        found: Vec<(f32, &'a Character, Vec<Vec3>, f64)>,
    }
    let mut rows: Vec<Row> = Vec::new();
    for t in &chars {
        let base = cd(&t.template.heads, &t.template.parents, t);
        let modes: Vec<&'static str> = if t.split == "val" {
            vec!["val"]
        } else {
            vec!["train-lofo", "train-loo"]
        };
        for mode in modes {
            let mut all: Vec<(f32, &Character)> = library_for(chars.as_slice(), t, mode)
                .map(|r| (t.descriptor.similarity(&r.descriptor), r))
                .collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
            let found = all
                .into_iter()
                .take(8)
                .map(|(s, r)| {
                    let j = carry(r, t, true);
                    let c = cd(&j, &r.parents, t);
                    (s, r, j, c)
                })
                .collect();
            rows.push(Row {
                mode,
                target: t,
                base,
                found,
            });
        }
    }
    // Symmetric CD-J2J between two joint sets in the target's normalised units.
    let between = |a: (&[Vec3], &[Option<usize>]), b: (&[Vec3], &[Option<usize>]), t: &Character| {
        let set = |p: &[Vec3], q: &[Option<usize>]| JointSet {
            positions: p.iter().map(|x| (*x - t.centre) * t.scale).collect(),
            parents: q.to_vec(),
        };
        score(&set(a.0, a.1), &set(b.0, b.1)).map_or(f64::INFINITY, |s| s.cd_j2j)
    };
    if let Ok(v) = std::env::var("TOP") {
        for t in chars.iter().filter(|t| t.id.contains(&v)) {
            let mut all: Vec<(f32, &Character)> = chars
                .iter()
                .filter(|r| r.split == "train" && r.id != t.id)
                .map(|r| (t.descriptor.similarity(&r.descriptor), r))
                .collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
            let gtn: BTreeMap<&str, Vec3> = t
                .gtnames
                .iter()
                .map(String::as_str)
                .zip(t.joints.iter().copied())
                .collect();
            for (n, g) in t.gtnames.iter().zip(&t.joints) {
                let (k, d) = t
                    .template
                    .heads
                    .iter()
                    .enumerate()
                    .map(|(k, h)| (k, h.distance(*g) * t.scale))
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                    .unwrap();
                eprintln!("   gt {n} nearest template {} {d:.4}", t.template.names[k]);
            }
            for (s, r) in all.iter().take(2) {
                let j = carry(r, t, true);
                eprintln!("  {} <- {} {s:.3} {:.4}", t.id, r.id, cd(&j, &r.parents, t));
                for (n, p) in r.gtnames.iter().zip(&j) {
                    if let Some(g) = gtn.get(n.as_str()) {
                        eprintln!("    {n}\t{:.4}", g.distance(*p) * t.scale);
                    }
                }
            }
        }
        return;
    }
    let verbose = std::env::var("VERBOSE").is_ok();
    eprintln!("mode\tk\ttemplate_votes\tthreshold\tfired\tbetter\tworse\ttemplate\tchosen\t(over families)");
    for mode in ["train-lofo", "train-loo", "val"] {
        for k in [1usize, 3, 5, 8] {
            for with_template in [false, true] {
                if k == 1 && with_template {
                    continue;
                }
                for threshold in [0.4f32, 0.5, 0.6, 0.7] {
                    let mut fam: BTreeMap<&str, [f64; 3]> = BTreeMap::new();
                    let (mut fired, mut better, mut worse) = (0, 0, 0);
                    for r in rows.iter().filter(|r| r.mode == mode) {
                        let t = r.target;
                        let cands: Vec<_> = r.found.iter().filter(|f| f.0 >= threshold).take(k).collect();
                        // candidate sets: carried rigs, then (optionally) the template
                        let mut sets: Vec<Candidate> = cands
                            .iter()
                            .map(|f| (f.2.as_slice(), f.1.parents.as_slice(), f.3))
                            .collect();
                        if with_template && !sets.is_empty() {
                            sets.push((&t.template.heads, &t.template.parents, r.base));
                        }
                        let chosen = if sets.is_empty() {
                            r.base
                        } else if sets.len() == 1 || !with_template && k == 1 {
                            sets[0].2
                        } else {
                            let cost = |i: usize| {
                                (0..sets.len())
                                    .filter(|&j| j != i)
                                    .map(|j| between((sets[i].0, sets[i].1), (sets[j].0, sets[j].1), t))
                                    .sum::<f64>()
                            };
                            let best = (0..sets.len())
                                .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
                                .unwrap_or(0);
                            sets[best].2
                        };
                        if chosen != r.base {
                            fired += 1;
                            better += usize::from(chosen < r.base);
                            worse += usize::from(chosen > r.base);
                        }
                        if verbose && mode == "val" && threshold == 0.6 && k == 5 && !with_template {
                            eprintln!("  k{k} tpl{with_template} {} {:.4} -> {chosen:.4}", t.id, r.base);
                        }
                        let e = fam.entry(t.family.as_str()).or_default();
                        e[0] += r.base;
                        e[1] += chosen;
                        e[2] += 1.0;
                    }
                    eprintln!(
                        "{mode}\t{k}\t{with_template}\t{threshold}\t{}",
                        summary(&fam, fired, better, worse)
                    );
                }
            }
        }
    }
}

/// The shipped path (`rigml_rig::library::humanoid_match`: the five most alike anchored rigs at
/// or above the threshold, the one the others agree with, the template's ankles and toes kept)
/// against the humanoid template, per mode and threshold.
fn shipped(chars: &[Character]) {
    eprintln!("mode\tthreshold\tfired\tbetter\tworse\ttemplate\tshipped\t(over families: template shipped)");
    for mode in ["train-lofo", "train-loo", "val"] {
        for threshold in [0.5f32, 0.6, 0.7] {
            let mut fam: BTreeMap<&str, [f64; 3]> = BTreeMap::new();
            let (mut fired, mut better, mut worse) = (0, 0, 0);
            for t in chars.iter().filter(|t| (t.split == "val") == (mode == "val")) {
                let library = RigLibrary {
                    rigs: library_for(chars, t, mode).map(|r| r.rig.clone()).collect(),
                    threshold,
                };
                let base = cd(&t.template.heads, &t.template.parents, t);
                let chosen = match rigml_rig::library::humanoid_match(&library, &t.mesh, &t.template) {
                    Ok(Some(m)) => {
                        let c = cd(&m.skeleton.heads, &m.skeleton.parents, t);
                        fired += 1;
                        better += usize::from(c < base);
                        worse += usize::from(c > base);
                        if std::env::var("VERBOSE").is_ok() && threshold == 0.6 {
                            eprintln!(
                                "  {mode} {} <- {} ({:.3}): {base:.4} -> {c:.4}",
                                t.id, m.id, m.similarity
                            );
                        }
                        c
                    }
                    _ => base,
                };
                let e = fam.entry(t.family.as_str()).or_default();
                e[0] += base;
                e[1] += chosen;
                e[2] += 1.0;
            }
            eprintln!("{mode}\t{threshold}\t{}", summary(&fam, fired, better, worse));
        }
    }
}

/// `fired/n better worse`, then the template's and the other's mean CD-J2J over characters and
/// (in brackets) over families, from per-family sums `[template, other, count]`.
fn summary(fam: &BTreeMap<&str, [f64; 3]>, fired: usize, better: usize, worse: usize) -> String {
    let n: f64 = fam.values().map(|e| e[2]).sum();
    let mean = |i: usize| fam.values().map(|e| e[i]).sum::<f64>() / n;
    let over = |i: usize| fam.values().map(|e| e[i] / e[2]).sum::<f64>() / fam.len() as f64;
    format!(
        "{fired}/{n}\t{better}\t{worse}\t{:.4}\t{:.4}\t({:.4} {:.4})",
        mean(0),
        mean(1),
        over(0),
        over(1)
    )
}

/// The train characters `t`'s library may hold in `mode`: without its family
/// (`train-lofo`), without itself (`train-loo`), all of them (`val`).
fn library_for<'a>(
    chars: &'a [Character],
    t: &'a Character,
    mode: &'a str,
) -> impl Iterator<Item = &'a Character> + 'a {
    chars.iter().filter(move |r| {
        r.split == "train"
            && match mode {
                "train-lofo" => r.family != t.family,
                "train-loo" => r.id != t.id,
                _ => true,
            }
    })
}
