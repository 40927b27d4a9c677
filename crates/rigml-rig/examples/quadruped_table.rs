//! Fit the quadruped leg templates of `curve/legs.rs` (`FRONT_LEG`, `BACK_LEG`, `FRONT_POLE`,
//! `BACK_POLE`) to the artists' rigs of the train split, and check the leg finding on val:
//! `cargo run --release -p rigml-rig --example quadruped_table`.
//!
//! For every character whose curve skeleton stands on four legs (the general template with the
//! leg templates off), each artist leg joint is written in its leg's frame (height above the
//! foot and distance ahead of it in units of the attachment's height, distance from the mirror
//! plane as a share of the foot's) and the medians over the train split's legs are printed as
//! the Rust tables. The artists' legs are read by the joint names of the Quaternius animal
//! rigs (`FrontShoulder.L` ... `FF.L`, `BackShoulder.L` ... `FFB.L`, and the IK pole targets
//! `PoleTarget.L` and `PoleTargetBack.L`), the only rigs of four-legged animals in the data;
//! characters without those names are listed and skipped. Test rows are never read.

use rigml_eval::Dataset;
use rigml_rig::curve::legs::{LegFrame, LegJoint};
use rigml_rig::{Auto, CurveParams, CurveSkeleton};
use std::path::PathBuf;

const FRONT: [&str; 5] = ["FrontShoulder", "FrontUpperLeg", "FrontLowerLeg", "IKFrontLeg", "FF"];
/// The artists' IK pole targets of a front and a back leg (`FRONT_POLE`, `BACK_POLE`), both
/// in front of the animal, written in the front leg's frame.
const POLES: [&str; 2] = ["PoleTarget", "PoleTargetBack"];
/// The artists' root joint (`ROOT_HEIGHT`): weightless, parent of the spine and the poles,
/// above the model's origin; its height is written in the front leg's frame.
const ROOT: &str = "Body";
const BACK: [&str; 6] = [
    "BackShoulder",
    "BackLeg",
    "BackUpperLeg",
    "BackLowerLeg",
    "IKBackLeg",
    "FFB",
];

fn data_dir() -> PathBuf {
    std::env::var_os("RIGML_DATA").map_or_else(|| PathBuf::from("../shared/data"), PathBuf::from)
}

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(f32::total_cmp);
    match v.len() {
        0 => f32::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

fn main() {
    let data = Dataset::open(&data_dir()).unwrap_or_else(|e| panic!("{e}"));
    let mut guided = Auto::embedded().expect("embedded skeleton model");
    guided.curve = CurveSkeleton {
        params: CurveParams {
            quadruped_legs: false,
            ..CurveParams::default()
        },
    };
    let mut front: Vec<Vec<LegJoint>> = vec![Vec::new(); FRONT.len()];
    let mut back: Vec<Vec<LegJoint>> = vec![Vec::new(); BACK.len()];
    let mut poles: Vec<Vec<LegJoint>> = vec![Vec::new(); POLES.len()];
    let mut roots: Vec<f32> = Vec::new();
    for row in data.select(Some("character"), None) {
        let (id, split) = (row.id.as_str(), row.split.as_str());
        if split != "train" && split != "val" {
            continue;
        }
        let Ok(character) = rigml_io::load(&row.path) else {
            continue;
        };
        let Ok(detail) = guided.place_detail(&character.mesh) else {
            continue;
        };
        if detail.legs.is_empty() {
            continue;
        }
        let skeleton = &character.skeleton;
        let bind = skeleton.bind_positions();
        let at = |name: &str| skeleton.index_of(name).map(|j| bind[j]);
        let head_ahead = at("Head").map(|h| {
            let mid = detail.legs.iter().map(|l| l.attach).sum::<glam::Vec3>() / detail.legs.len() as f32;
            (h - mid).dot(detail.legs[0].ahead) > 0.0
        });
        println!(
            "{id:40} {split:5} four legs found; head ahead: {}",
            head_ahead.map_or("no `Head` joint".to_string(), |b| b.to_string())
        );
        for leg in &detail.legs {
            let (axis, plane) = leg.mirror;
            let side = if leg.foot[axis] > plane { "L" } else { "R" };
            let (names, sink): (&[&str], &mut Vec<Vec<LegJoint>>) = if leg.front {
                (&FRONT, &mut front)
            } else {
                (&BACK, &mut back)
            };
            let coords: Option<Vec<LegJoint>> = names
                .iter()
                .map(|n| at(&format!("{n}.{side}")).map(|p| LegFrame::coordinates(leg, p)))
                .collect();
            let Some(coords) = coords else {
                println!("    no artist leg joints named like the Quaternius rigs: skipped");
                break;
            };
            let text: Vec<String> = coords
                .iter()
                .map(|c| format!("({:.2} {:.2} {:.2})", c.up, c.ahead, c.out))
                .collect();
            println!(
                "    {} {side}: {}",
                if leg.front { "front" } else { "back " },
                text.join(" ")
            );
            // Both poles stand in front of the animal: they are fitted in the front leg's frame.
            let pole_at: Vec<Option<LegJoint>> = POLES
                .iter()
                .map(|name| at(&format!("{name}.{side}")).map(|p| LegFrame::coordinates(leg, p)))
                .filter(|_| leg.front)
                .collect();
            for (name, c) in POLES.iter().zip(&pole_at) {
                if let Some(c) = c {
                    println!("      {name}: ({:.2} {:.2} {:.2})", c.up, c.ahead, c.out);
                }
            }
            // The root (`Body`, weightless, parent of the spine and the poles), its height in
            // the front leg's frame.
            let root_up = at(ROOT).filter(|_| leg.front).map(|p| LegFrame::coordinates(leg, p).up);
            if let Some(up) = root_up {
                println!("      {ROOT}: up {up:.2}");
            }
            if split == "train" {
                for (k, c) in coords.into_iter().enumerate() {
                    sink[k].push(c);
                }
                for (k, c) in pole_at.into_iter().enumerate() {
                    poles[k].extend(c);
                }
                roots.extend(root_up);
            }
        }
    }
    for (name, table, roles) in [("FRONT_LEG", &front, &FRONT[..]), ("BACK_LEG", &back, &BACK[..])] {
        println!("pub const {name}: [LegJoint; {}] = [", roles.len());
        for (role, samples) in roles.iter().zip(table) {
            println!("    {}, // {role} ({} legs)", median_joint(samples), samples.len());
        }
        println!("];");
    }
    for (name, samples, role) in [("FRONT_POLE", &poles[0], POLES[0]), ("BACK_POLE", &poles[1], POLES[1])] {
        println!(
            "pub const {name}: LegJoint = {}; // {role} ({} legs)",
            median_joint(samples),
            samples.len()
        );
    }
    println!(
        "pub const ROOT_HEIGHT: f32 = {:.2}; // {ROOT} ({} legs)",
        median(roots.clone()),
        roots.len()
    );
}

/// The median of each coordinate of `samples`, as the Rust expression `joint(up, ahead, out)`.
fn median_joint(samples: &[LegJoint]) -> String {
    let m = |f: fn(&LegJoint) -> f32| median(samples.iter().map(f).collect());
    format!("joint({:.2}, {:.2}, {:.2})", m(|c| c.up), m(|c| c.ahead), m(|c| c.out))
}
