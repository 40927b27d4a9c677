//! Score the humanoid placer against the artists' rigs (METRICS.md §5) on the humanoids of the
//! manifest: `cargo run --release -p rigml-rig --example humanoid_table [-- --split val] [--dump ID]`.
//! `--roles` places without the artist offsets and prints, per joint, the median offset from the
//! artist's joint of the same role, then the `ARTIST_OFFSETS` table of `template.rs` fitted on
//! the train rows.
//! By default train and val only; test rows are scored only with `--split test` (final report).

use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet};
use rigml_rig::{Humanoid, SkeletonPlacer};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn data_dir() -> PathBuf {
    std::env::var_os("RIGML_DATA").map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|k| args.get(k + 1))
            .cloned()
    };
    let splits: Vec<String> = opt("--split").map_or(vec!["train".into(), "val".into()], |s| vec![s]);
    let only = opt("--only");
    let dump = opt("--dump");
    let placer = Humanoid {
        end_sites: args.iter().any(|a| a == "--end-sites"),
        raw_landmarks: args.iter().any(|a| a == "--roles"),
        ground_root: false,
    };
    let data = data_dir();
    let text = std::fs::read_to_string(data.join("manifest.tsv")).expect("manifest.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    let (id_c, kind_c, split_c, path_c, notes_c) = (col("id"), col("kind"), col("split"), col("path"), col("notes"));
    println!(
        "{:42} {:5} {:>6} {:>7} {:>7} {:>7} {:>5} {:>5} {:>8} {:>5} {:>5}",
        "asset", "split", "verts", "J2J", "J2B", "B2B", "Jpr", "Jgt", "place_ms", "maps", "frame"
    );
    let mut sums = std::collections::BTreeMap::<String, (f64, usize)>::new();
    let mut roles = std::collections::BTreeMap::<(String, String), Vec<[f32; 5]>>::new();
    let mut families: Vec<String> = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let get = |c: usize| f.get(c).copied().unwrap_or("");
        let cat = get(notes_c).rsplit("cat=").next().unwrap_or("");
        let others = args.iter().any(|a| a == "--non-humanoids");
        if get(kind_c) != "character" || !splits.iter().any(|s| s == get(split_c)) || cat.contains("humanoid") == others
        {
            continue;
        }
        let id = get(id_c);
        if only.as_deref().is_some_and(|o| !id.contains(o)) {
            continue;
        }
        let character = match rigml_io::load(&data.join(get(path_c))) {
            Ok(c) => c,
            Err(e) => {
                println!("{id:42} load error: {e}");
                continue;
            }
        };
        let mesh = &character.mesh;
        let Some((centre, scale)) = normalisation(&mesh.positions) else {
            continue;
        };
        let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
        let frame = frame_check(&character);
        let start = Instant::now();
        let placed = placer.place(mesh);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let placed = match placed {
            Ok(p) => p,
            Err(e) => {
                println!("{id:42} {:5} FAILED: {e}", get(split_c));
                if let Ok(check) = rigml_rig::looks_humanoid(mesh) {
                    println!("    {:?}", check.orientation);
                }
                if dump.as_deref() == Some(id) {
                    picture(
                        Path::new(&format!("/tmp/righum/{id}.ppm")),
                        &mesh.positions,
                        centre,
                        scale,
                        &[],
                        &gt.positions,
                    );
                }
                continue;
            }
        };
        let pred = JointSet {
            positions: placed.heads.iter().map(|p| (*p - centre) * scale).collect(),
            parents: placed.parents.clone(),
        };
        let s = score(&pred, &gt).expect("non-empty");
        let maps = placed
            .to_skeleton()
            .ok()
            .and_then(|k| rigml_anim::humanoid::map_humanoid(&k).ok())
            .is_some();
        println!(
            "{id:42} {:5} {:>6} {:7.4} {:7.4} {:7.4} {:>5} {:>5} {:8.1} {:>5} {:>5}",
            get(split_c),
            mesh.positions.len(),
            s.cd_j2j,
            s.cd_j2b.unwrap_or(f64::NAN),
            s.cd_b2b.unwrap_or(f64::NAN),
            pred.positions.len(),
            gt.positions.len(),
            ms,
            if maps { "yes" } else { "NO" },
            frame
        );
        if args.iter().any(|a| a == "--roles") {
            let family = family_of(id);
            let index = families.iter().position(|f| *f == family).unwrap_or_else(|| {
                families.push(family);
                families.len() - 1
            });
            role_deltas(&character, &placed, centre, get(split_c), &mut roles, index as f32);
        }
        let e = sums.entry(get(split_c).to_string()).or_default();
        e.0 += s.cd_j2j;
        e.1 += 1;
        if dump.as_deref() == Some(id) {
            let nearest =
                |p: &glam::Vec3, set: &[glam::Vec3]| set.iter().map(|q| q.distance(*p)).fold(f32::MAX, f32::min);
            for (n, p) in placed.names.iter().zip(&pred.positions) {
                println!(
                    "  pred {n:20} {:7.3} {:7.3} {:7.3}  nearest gt {:.3}",
                    p.x,
                    p.y,
                    p.z,
                    nearest(p, &gt.positions)
                );
            }
            for (n, p) in character.skeleton.names.iter().zip(&gt.positions) {
                println!(
                    "  gt   {n:20} {:7.3} {:7.3} {:7.3}  nearest pred {:.3}",
                    p.x,
                    p.y,
                    p.z,
                    nearest(p, &pred.positions)
                );
            }
            picture(
                Path::new(&format!("/tmp/righum/{id}.ppm")),
                &mesh.positions,
                centre,
                scale,
                &pred.positions,
                &gt.positions,
            );
        }
    }
    for v in roles.values_mut() {
        // Weight of an asset: one over the square root of the number of assets of its family
        // with this joint, so that the largest family's conventions do not decide alone.
        let mut counts = std::collections::BTreeMap::<u32, f32>::new();
        for d in v.iter() {
            *counts.entry(d[4].to_bits()).or_default() += 1.0;
        }
        for d in v.iter_mut() {
            d[4] = 1.0 / counts[&d[4].to_bits()].sqrt();
        }
    }
    for ((split, joint), v) in &roles {
        let median = |k: usize| weighted_median(v.iter().map(|d| (d[k], d[4])).collect());
        println!(
            "role {split:5} {joint:16} n {:2} median |d| {:.4} up {:+.4} out {:+.4} fwd {:+.4}",
            v.len(),
            median(0),
            median(1),
            median(2),
            median(3)
        );
    }
    if !roles.is_empty() {
        println!("ARTIST_OFFSETS (template.rs), from the train rows:");
        for (k, name) in rigml_rig::humanoid::JOINT_NAMES.iter().enumerate() {
            let Some(v) = roles.get(&("train".to_string(), name.to_string())) else {
                continue;
            };
            let median = |k: usize| weighted_median(v.iter().map(|d| (d[k], d[4])).collect());
            // (template.rs leaves out the upper spine and the feet, and says why.)
            if !name.starts_with("Right") && !["Spine1", "Spine2", "LeftFoot", "LeftToeBase"].contains(name) {
                // Trunk joints sit on the mirror plane: no outward offset.
                let out = if k < 6 { 0.0 } else { median(2) };
                println!("    ({k}, [{:.4}, {out:.4}, {:.4}]), // {name}", median(1), median(3));
            }
        }
    }
    for (split, (sum, n)) in sums {
        println!("mean CD-J2J {split}: {:.4} over {n}", sum / n as f64);
    }
}

/// Whether the detected frame agrees with the artist's rig: up from the hips to the head, left
/// toward the joints named left (rigml-anim's mapping of the GT skeleton). "ok", "UP" (up
/// wrong), "FWD" (left/right, so forward, swapped) or "?" (no mapping of the GT).
fn frame_check(character: &rigml_core::Character) -> &'static str {
    use rigml_anim::humanoid::{map_humanoid, ChainKind, Role};
    let Ok(o) = rigml_rig::orient::detect(&character.mesh.positions, &character.mesh.triangles) else {
        return "?";
    };
    let Ok(map) = map_humanoid(&character.skeleton) else {
        return "?";
    };
    let bind = character.skeleton.bind_positions();
    let mean = |kinds: &[ChainKind]| -> glam::Vec3 {
        let js: Vec<usize> = kinds.iter().flat_map(|k| map.chain(*k).iter().copied()).collect();
        js.iter().map(|&j| bind[j]).sum::<glam::Vec3>() / js.len().max(1) as f32
    };
    let left = mean(&[ChainKind::LeftArm, ChainKind::LeftLeg]) - mean(&[ChainKind::RightArm, ChainKind::RightLeg]);
    let (Some(hips), Some(head)) = (map.joint(Role::Hips), map.joint(Role::Head)) else {
        return "?";
    };
    if o.up.dot(bind[head] - bind[hips]) <= 0.0 {
        "UP"
    } else if o.left.dot(left) <= 0.0 {
        "FWD"
    } else {
        "ok"
    }
}

/// Front (x,y), side (z,y) and top (x,z) views of the normalised mesh points (grey), predicted
/// joints (red) and GT joints (green), as a PPM.
fn picture(path: &Path, mesh: &[glam::Vec3], centre: glam::Vec3, scale: f32, pred: &[glam::Vec3], gt: &[glam::Vec3]) {
    let (w, h) = (1200usize, 400usize);
    let mut img = vec![[255u8; 3]; w * h];
    let views: [(usize, usize); 3] = [(0, 1), (2, 1), (0, 2)];
    let mut plot = |p: glam::Vec3, view: usize, colour: [u8; 3], r: i32| {
        let (a, b) = views[view];
        let x = (view * 400) as f32 + 200.0 + p[a] * 380.0;
        let y = 200.0 - p[b] * 380.0;
        for dy in -r..=r {
            for dx in -r..=r {
                let (px, py) = (x as i32 + dx, y as i32 + dy);
                if px >= 0 && py >= 0 && (px as usize) < w && (py as usize) < h {
                    img[py as usize * w + px as usize] = colour;
                }
            }
        }
    };
    for v in 0..3 {
        for p in mesh {
            plot((*p - centre) * scale, v, [190, 190, 190], 0);
        }
        for p in gt {
            plot(*p, v, [0, 160, 0], 2);
        }
        for p in pred {
            plot(*p, v, [220, 0, 0], 1);
        }
    }
    let mut out = format!("P6 {w} {h} 255\n").into_bytes();
    out.extend(img.iter().flatten());
    let _ = std::fs::write(path, out);
}

/// Median of (value, weight) pairs: the value where the running weight passes half the total.
fn weighted_median(mut x: Vec<(f32, f32)>) -> f32 {
    x.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = 0.5 * x.iter().map(|p| p.1).sum::<f32>();
    let mut acc = 0.0;
    x.iter()
        .find(|p| {
            acc += p.1;
            acc >= half
        })
        .map_or(0.0, |p| p.0)
}

/// Per placed joint whose humanoid role is also in the artist's rig: distance, and the offset
/// placed − artist along up, outward (away from the mirror plane) and forward, in shares of the
/// character's height (as the placer works), with the index of the asset's family as a fifth
/// number (turned into its weight before the medians).
fn role_deltas(
    character: &rigml_core::Character,
    placed: &rigml_rig::PlacedSkeleton,
    centre: glam::Vec3,
    split: &str,
    out: &mut std::collections::BTreeMap<(String, String), Vec<[f32; 5]>>,
    family: f32,
) {
    use rigml_anim::humanoid::{map_humanoid, Role};
    let Ok(o) = rigml_rig::orient::detect(&character.mesh.positions, &character.mesh.triangles) else {
        return;
    };
    let (Ok(gt), Ok(pred_skeleton)) = (map_humanoid(&character.skeleton), placed.to_skeleton()) else {
        return;
    };
    let Ok(pr) = map_humanoid(&pred_skeleton) else { return };
    let bind = character.skeleton.bind_positions();
    // Offsets in shares of the character's height, as the placer works.
    let heights = character.mesh.positions.iter().map(|p| p.dot(o.up));
    let height = heights.clone().fold(f32::MIN, f32::max) - heights.fold(f32::MAX, f32::min);
    for role in Role::ALL {
        let (Some(g), Some(p)) = (gt.joint(role), pr.joint(role)) else {
            continue;
        };
        let d = (placed.heads[p] - bind[g]) / height;
        let side = (bind[g] - centre).dot(o.left).signum();
        out.entry((split.to_string(), placed.names[p].clone()))
            .or_default()
            .push([d.length(), d.dot(o.up), d.dot(o.left) * side, d.dot(o.forward), family]);
    }
}

/// The asset family: the id up to its first '-', KayKit's versions merged (`kaykit2-ranger`
/// and `kaykit1-knight` are both `kaykit`).
fn family_of(id: &str) -> String {
    let head = id.split('-').next().unwrap_or(id);
    head.trim_end_matches(|c: char| c.is_ascii_digit()).to_string()
}
