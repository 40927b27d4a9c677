//! Which end of a four-legged shape is its head, judged on the train and val quadrupeds caught
//! in their own clips (walks, runs, grazing, attacks), not only in their bind pose:
//! `cargo run --release -p rigml-rig --example quadruped_head_end [FRAMES_PER_CLIP]`.
//!
//! Every clip of every train/val character marked `cat=quadruped` in the manifest is baked at
//! a few even frames (its own skin); the general template places a skeleton on each frame, and
//! where it finds four legs the front pair is checked against the artist's head joint in that
//! frame (the front attachment nearer the head). Besides the placer's own answer, a few other
//! head-end rules are scored on the same frames, each read from the frame's mesh beyond the
//! front-most and back-most leg attachments, so that a rule is judged over families and poses.
//! The Khronos fox's `Run` clip is skipped: it is the test sequence `fox_run`.
//! Test rows are never read.

use glam::Vec3;
mod common;

use rigml_eval::Dataset;
use rigml_rig::Auto;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    std::env::var_os("RIGML_DATA").map_or_else(|| PathBuf::from("../shared/data"), PathBuf::from)
}

/// The rules scored: the placer's own answer (whatever rule it ships with), then rules on the
/// mesh beyond the legs. The placer was changed to the last rule after this table was measured
/// (docs/experiments/2026-12-03-quadruped-head-end.md); before it, it took the end with the
/// highest non-leg joint.
const RULES: [&str; 8] = [
    "placer (as shipped)",
    "mesh: highest vertex beyond",
    "mesh: mean height beyond",
    "mesh: more vertices beyond",
    "mesh: higher 90th-percentile height beyond",
    "mesh: wider beyond (mean distance from the axis)",
    "mesh: more surface area beyond",
    "mesh: higher area-weighted mean height beyond",
];

#[derive(Default)]
struct Tally {
    frames: usize,
    legs: usize,
    right: [usize; RULES.len()],
}

fn main() {
    let per_clip: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(6);
    let data = Dataset::open(&data_dir()).unwrap_or_else(|e| panic!("{e}"));
    let auto = Auto::embedded().expect("embedded skeleton model");
    let mut by_family: BTreeMap<String, Tally> = BTreeMap::new();
    for row in data.select(Some("character"), None) {
        if !(row.split == "train" || row.split == "val") || !row.notes.contains("cat=quadruped") {
            continue;
        }
        let Ok(character) = rigml_io::load(&row.path) else {
            println!("{}: could not be read", row.id);
            continue;
        };
        // The truth: the artist's head joint, or (rigs with numbered bones) the IK targets of
        // the front feet against those of the back feet.
        let names = &character.skeleton.names;
        let find = |pred: &dyn Fn(&str) -> bool| -> Vec<usize> {
            names
                .iter()
                .enumerate()
                .filter(|(_, n)| pred(&n.to_lowercase()))
                .map(|(j, _)| j)
                .collect()
        };
        let heads = find(&|n| n.contains("head"));
        let (toward, away) = if let Some(&h) = heads.first() {
            (vec![h], Vec::new())
        } else {
            (find(&|n| n.starts_with("ikfront")), find(&|n| n.starts_with("ikback")))
        };
        if toward.is_empty() {
            println!("{}: no joint named like a head or a front IK target", row.id);
            continue;
        }
        let bind = character.skeleton.bind_positions();
        let tally = by_family.entry(row.family.clone()).or_default();
        let mut line = Vec::new();
        let mut mine = [0usize; RULES.len()];
        let mut mine_legs = 0;
        for (clip, baked) in common::baked_clips(&character, &row.id, &row.path, per_clip) {
            let mut marks = String::new();
            for (f, frame) in baked.sequence.frames.iter().enumerate() {
                tally.frames += 1;
                let mut mesh = character.mesh.clone();
                mesh.positions.clone_from(frame);
                let Ok(detail) = auto.place_detail(&mesh) else {
                    marks.push('x');
                    continue;
                };
                if detail.legs.len() != 4 {
                    marks.push('.');
                    continue;
                }
                tally.legs += 1;
                let posed = |js: &[usize]| -> Option<Vec3> {
                    (!js.is_empty()).then(|| {
                        js.iter()
                            .map(|&j| baked.skinning[f][j].transform_point3(bind[j]))
                            .sum::<Vec3>()
                            / js.len() as f32
                    })
                };
                let mid = detail.legs.iter().map(|l| l.attach).sum::<Vec3>() / 4.0;
                let toward_at = posed(&toward).unwrap_or(mid);
                let away_at = posed(&away).unwrap_or(mid);
                let head_plus = (toward_at - away_at).dot(detail.legs[0].ahead) > 0.0;
                let verdicts = judge(&detail.legs, &mesh, head_plus);
                mine_legs += 1;
                for (k, v) in verdicts.iter().enumerate() {
                    tally.right[k] += usize::from(*v);
                    mine[k] += usize::from(*v);
                }
                marks.push(if verdicts[0] { '+' } else { '-' });
            }
            line.push(format!("{}:{marks}", clip.name));
        }
        println!("{:44} {:5} {mine_legs:3} with legs, right {mine:?}", row.id, row.split);
        println!("    {}", line.join(" "));
    }
    println!();
    println!(
        "right / frames with four legs, per family (families: {})",
        by_family.len()
    );
    let mut means = [0.0f64; RULES.len()];
    let mut counted = 0;
    for (family, t) in &by_family {
        let shares: Vec<String> = t.right.iter().map(|r| format!("{r:3}")).collect();
        println!("{family:44} {:3}/{:3} frames   {}", t.legs, t.frames, shares.join(" "));
        if t.legs > 0 {
            counted += 1;
            for (m, r) in means.iter_mut().zip(&t.right) {
                *m += *r as f64 / t.legs as f64;
            }
        }
    }
    println!();
    for (rule, m) in RULES.iter().zip(means) {
        println!("{rule:50} mean over families {:.3}", m / counted.max(1) as f64);
    }
}

/// For each of [`RULES`], whether it puts the head where the artist's head joint is.
/// `head_plus`: the truth, the head at `+ahead` of the legs' frame (the placer's front).
fn judge(legs: &[rigml_rig::curve::legs::LegFrame], mesh: &rigml_core::Mesh, head_plus: bool) -> [bool; RULES.len()] {
    let ahead = legs[0].ahead;
    let up = legs[0].up;
    let (axis, plane) = legs[0].mirror;
    let front: Vec<Vec3> = legs.iter().filter(|l| l.front).map(|l| l.attach).collect();
    let back: Vec<Vec3> = legs.iter().filter(|l| !l.front).map(|l| l.attach).collect();
    let placer_right = head_plus;
    let (f, b) = (front[0].dot(ahead), back[0].dot(ahead));
    let (hi_a, lo_a) = (f.max(b), f.min(b));
    let positions = &mesh.positions;
    // Triangles by their centroids: (area, height) at each end.
    let (mut area, mut lift) = ([0.0f32; 2], [0.0f32; 2]);
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        let (centre, w) = ((a + b + c) / 3.0, 0.5 * (b - a).cross(c - a).length());
        let end = if centre.dot(ahead) > hi_a {
            0
        } else if centre.dot(ahead) < lo_a {
            1
        } else {
            continue;
        };
        area[end] += w;
        lift[end] += w * centre.dot(up);
    }
    let lift_mean = |e: usize| {
        if area[e] > 0.0 {
            lift[e] / area[e]
        } else {
            f32::NEG_INFINITY
        }
    };
    let plus: Vec<Vec3> = positions.iter().copied().filter(|p| p.dot(ahead) > hi_a).collect();
    let minus: Vec<Vec3> = positions.iter().copied().filter(|p| p.dot(ahead) < lo_a).collect();
    let heights = |v: &[Vec3]| {
        let mut h: Vec<f32> = v.iter().map(|p| p.dot(up)).collect();
        h.sort_by(f32::total_cmp);
        h
    };
    let (hp, hm) = (heights(&plus), heights(&minus));
    let max = |h: &[f32]| h.last().copied().unwrap_or(f32::NEG_INFINITY);
    let mean = |h: &[f32]| {
        if h.is_empty() {
            f32::NEG_INFINITY
        } else {
            h.iter().sum::<f32>() / h.len() as f32
        }
    };
    let pct = |h: &[f32]| {
        if h.is_empty() {
            f32::NEG_INFINITY
        } else {
            h[(h.len() * 9 / 10).min(h.len() - 1)]
        }
    };
    let width = |v: &[Vec3]| {
        if v.is_empty() {
            return f32::NEG_INFINITY;
        }
        v.iter().map(|p| (p[axis] - plane).abs()).sum::<f32>() / v.len() as f32
    };
    // `plus_wins` for a rule means the rule puts the head at +ahead.
    let says = |plus_wins: bool| plus_wins == head_plus;
    [
        placer_right,
        says(max(&hp) > max(&hm)),
        says(mean(&hp) > mean(&hm)),
        says(plus.len() > minus.len()),
        says(pct(&hp) > pct(&hm)),
        says(width(&plus) > width(&minus)),
        says(area[0] > area[1]),
        says(lift_mean(0) > lift_mean(1)),
    ]
}
