//! The general placer on generated shapes (joints inside, one per limb end, a valid tree) and
//! on real train characters (CD-J2J of METRICS.md §5 under a measured bound).

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use glam::Vec3;
use rigml_core::Mesh;
use rigml_eval::skeleton_metrics::{score, JointSet, SkeletonScores};
use rigml_geom::Bvh;
use rigml_rig::curve::legs::LegFrame;
use rigml_rig::{Auto, CurveParams, CurveSkeleton, LearnedPlacer, PlacedSkeleton, RigError, SkeletonPlacer};

/// A closed tube of `radius` from `a` to `b` (`around` vertices per ring, capped by fans).
fn tube(mesh: &mut Mesh, a: Vec3, b: Vec3, radius: f32, rings: usize, around: usize) {
    let axis = (b - a).normalize();
    let side = if axis.y.abs() < 0.9 { Vec3::Y } else { Vec3::X };
    let u = axis.cross(side).normalize();
    let v = axis.cross(u);
    let base = mesh.positions.len() as u32;
    for r in 0..=rings {
        let c = a.lerp(b, r as f32 / rings as f32);
        for k in 0..around {
            let phi = std::f32::consts::TAU * k as f32 / around as f32;
            mesh.positions.push(c + (u * phi.cos() + v * phi.sin()) * radius);
        }
    }
    let ring = |r: usize, k: usize| base + (r * around + k % around) as u32;
    for r in 0..rings {
        for k in 0..around {
            mesh.triangles.push([ring(r, k), ring(r + 1, k), ring(r + 1, k + 1)]);
            mesh.triangles.push([ring(r, k), ring(r + 1, k + 1), ring(r, k + 1)]);
        }
    }
    let (start, end) = (mesh.positions.len() as u32, mesh.positions.len() as u32 + 1);
    mesh.positions.push(a);
    mesh.positions.push(b);
    for k in 0..around {
        mesh.triangles.push([start, ring(0, k + 1), ring(0, k)]);
        mesh.triangles.push([end, ring(rings, k), ring(rings, k + 1)]);
    }
}

/// A star: a ball-ish hub (short fat tube) and `arms` tubes leaving it in the XY plane, mirror
/// symmetric about x = 0 for even counts.
fn star(arms: usize) -> (Mesh, Vec<Vec3>) {
    let mut mesh = Mesh::default();
    tube(
        &mut mesh,
        Vec3::new(0.0, 0.0, -0.2),
        Vec3::new(0.0, 0.0, 0.2),
        0.22,
        4,
        24,
    );
    let mut tips = Vec::new();
    for i in 0..arms {
        let angle = std::f32::consts::TAU * (i as f32 + 0.5) / arms as f32;
        let dir = Vec3::new(angle.sin(), angle.cos(), 0.0);
        let tip = dir * 1.5;
        tube(&mut mesh, dir * 0.1, tip, 0.08, 20, 12);
        tips.push(tip);
    }
    (mesh, tips)
}

/// Inside test by ray parity along a few directions (majority vote; rays that graze edges can
/// miscount once). The tubes interpenetrate, so parity is counted per closed part (triangle
/// ranges of `parts`) and a point is inside when it is inside any part.
fn inside(bvh: &Bvh, parts: &[std::ops::Range<u32>], p: Vec3) -> bool {
    let dirs = [
        Vec3::new(0.31, 0.87, 0.38),
        Vec3::new(-0.62, 0.21, 0.75),
        Vec3::new(0.11, -0.45, -0.88),
    ];
    let mut hits = Vec::new();
    let votes = dirs
        .iter()
        .filter(|d| {
            hits.clear();
            bvh.all_hits(p, d.normalize(), 0.0, f32::MAX, &mut hits);
            parts
                .iter()
                .any(|r| hits.iter().filter(|h| r.contains(&h.triangle)).count() % 2 == 1)
        })
        .count();
    votes >= 2
}

fn leaves(s: &PlacedSkeleton) -> Vec<usize> {
    (0..s.len()).filter(|&j| !s.parents.contains(&Some(j))).collect()
}

#[test]
fn star_of_tubes_gets_one_joint_per_arm_tip_all_inside() {
    for arms in [3, 4, 6] {
        let (mesh, tips) = star(arms);
        let skeleton = CurveSkeleton::default().place(&mesh).unwrap();
        skeleton.validate().unwrap();
        skeleton.to_skeleton().unwrap();
        let bvh = Bvh::new(&mesh.positions, &mesh.triangles);
        // Hub then arms, each the same number of triangles: 2·rings·around + 2·around.
        let hub = (2 * 4 * 24 + 2 * 24) as u32;
        let arm = (2 * 20 * 12 + 2 * 12) as u32;
        let parts: Vec<std::ops::Range<u32>> = std::iter::once(0..hub)
            .chain((0..arms as u32).map(|i| hub + i * arm..hub + (i + 1) * arm))
            .collect();
        assert_eq!(parts.last().unwrap().end as usize, mesh.triangles.len());
        for (j, h) in skeleton.heads.iter().enumerate() {
            assert!(
                inside(&bvh, &parts, *h),
                "{arms} arms: joint {} at {h} is outside",
                skeleton.names[j]
            );
        }
        let leaves = leaves(&skeleton);
        assert_eq!(leaves.len(), arms, "{arms} arms: leaves {leaves:?} in {skeleton:?}");
        for tip in &tips {
            let near = leaves
                .iter()
                .map(|&j| skeleton.heads[j].distance(*tip))
                .fold(f32::MAX, f32::min);
            assert!(near < 0.2, "{arms} arms: no leaf joint near the tip {tip} ({near})");
        }
    }
}

#[test]
fn symmetric_star_gets_mirrored_left_right_pairs() {
    let (mesh, _) = star(4);
    let detail = CurveSkeleton::default().place_detail(&mesh).unwrap();
    let (axis, plane) = detail.mirror.expect("the star is mirror symmetric about x = 0");
    assert_eq!(axis, 0);
    assert!(plane.abs() < 0.05, "{plane}");
    let s = &detail.skeleton;
    let lefts: Vec<usize> = (0..s.len()).filter(|&j| s.names[j].ends_with("_L")).collect();
    assert!(lefts.len() >= 4, "{:?}", s.names);
    for &j in &lefts {
        let partner = s.names[j].replace("_L", "_R");
        let k = s.names.iter().position(|n| *n == partner).unwrap();
        let image = Vec3::new(2.0 * plane - s.heads[k].x, s.heads[k].y, s.heads[k].z);
        assert!(
            s.heads[j].distance(image) < 1e-4,
            "{} vs mirrored {partner}",
            s.names[j]
        );
        assert!(s.heads[j].x > plane);
    }
}

#[test]
fn bad_meshes_are_refused() {
    let auto = CurveSkeleton::default();
    assert!(auto.place(&Mesh::default()).is_err());
    let flat = Mesh {
        positions: vec![Vec3::ONE; 3],
        triangles: vec![[0, 1, 2]],
        ..Default::default()
    };
    assert!(auto.place(&flat).is_err());
    let nan = Mesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::NAN],
        triangles: vec![[0, 1, 2]],
        ..Default::default()
    };
    assert!(auto.place(&nan).is_err());
    // A cube collapsed to a point at y = 2, its bounds a few units in the last place wide (a
    // clip's first frame that scales the character up from nothing): no extent to rig.
    let (cube, triangles) = rigml_geom::procedural::cuboid(Vec3::ZERO, Vec3::ONE);
    let point = Mesh {
        positions: cube.iter().map(|v| Vec3::new(0.0, 2.0, 0.0) + *v * 2.4e-7).collect(),
        triangles,
        ..Default::default()
    };
    assert!(
        matches!(auto.place(&point), Err(RigError::Degenerate)),
        "{:?}",
        auto.place(&point)
    );
}

/// Score `placed` against the character's own bind-pose skeleton in §1 units (normalised by
/// the stored mesh's bounding box, as `rigml eval` does).
fn scores(character: &rigml_core::Character, placed: &PlacedSkeleton) -> SkeletonScores {
    let (centre, scale) = rigml_eval::deformation::normalisation(&character.mesh.positions).unwrap();
    let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
    let pred = JointSet {
        positions: placed.heads.iter().map(|p| (*p - centre) * scale).collect(),
        parents: placed.parents.clone(),
    };
    score(&pred, &gt).unwrap()
}

/// The general template with `params` and the skeleton model `learned`.
fn guided(learned: &LearnedPlacer, params: CurveParams) -> Auto {
    Auto {
        curve: CurveSkeleton { params },
        learned: learned.clone(),
    }
}

/// A train character of the manifest, loaded.
fn train_character(id: &str) -> rigml_core::Character {
    let row = common::manifest().into_iter().find(|r| r.id() == id).unwrap();
    assert_eq!(row.get("split"), "train");
    rigml_io::load(&row.path()).unwrap()
}

#[test]
fn train_quadruped_and_creature_score_under_measured_bounds() {
    // Bounds: CD-J2J measured with the default parameters (fox 0.0469, rat 0.0382) plus a
    // margin.
    for (id, bound) in [
        ("quaternius-animals-fox", 0.055),
        ("quaternius-easy-enemies-rat", 0.045),
    ] {
        let character = train_character(id);
        let placed = CurveSkeleton::default().place(&character.mesh).unwrap();
        let s = scores(&character, &placed);
        assert!(s.cd_j2j < bound, "{id}: CD-J2J {} >= {bound}", s.cd_j2j);
    }
}

#[test]
fn the_learned_model_takes_a_fishs_fins_off_its_curve_skeleton() {
    // Measured: goldfish (6 artist joints, a straight spine) 39 joints CD-J2J 0.1384 from the
    // curve skeleton, 10 joints 0.0768 guided; the fox is not pruned at all (0.0469 both), and
    // neither is the cow, whose tail the learned placer misses (4 of 38 joints, below the
    // share the pruning needs).
    let learned = LearnedPlacer::embedded().unwrap();
    let guided = Auto {
        curve: CurveSkeleton::default(),
        learned,
    };
    for (id, bound) in [
        ("quaternius-cute-fish-goldfish", 0.09),
        ("quaternius-animals-fox", 0.055),
        ("quaternius-animals-cow", 0.065),
    ] {
        let character = train_character(id);
        let curve = CurveSkeleton::default().place(&character.mesh).unwrap();
        let detail = guided.place_detail(&character.mesh).unwrap();
        detail.skeleton.validate().unwrap();
        let (before, after) = (
            scores(&character, &curve).cd_j2j,
            scores(&character, &detail.skeleton).cd_j2j,
        );
        assert!(after < bound, "{id}: CD-J2J {after} >= {bound}");
        if id.contains("fish") {
            assert!(
                detail.unsupported > 20 && after < before - 0.03,
                "{id}: {detail:?} {before} -> {after}"
            );
        } else {
            assert_eq!(detail.skeleton, curve, "{id}: nothing to prune");
        }
        // Names stay unique and mirrored pairs complete.
        for name in detail.skeleton.names.iter().filter(|n| n.ends_with("_L")) {
            let partner = format!("{}_R", name.trim_end_matches("_L"));
            assert!(
                detail.skeleton.names.contains(&partner),
                "{id}: {name} without {partner}"
            );
        }
    }
}

#[test]
fn four_legged_train_animals_get_the_artists_leg_joints() {
    // Measured (CD-J2J, guided, leg templates off -> on): deer 0.0665 -> 0.0512, husky 0.0806
    // -> 0.0732; a hooved animal and a dog.
    let learned = LearnedPlacer::embedded().unwrap();
    let placer = |quadruped_legs| {
        guided(
            &learned,
            CurveParams {
                quadruped_legs,
                ..CurveParams::default()
            },
        )
    };
    for (id, gain) in [("quaternius-animals-deer", 0.01), ("quaternius-animals-husky", 0.005)] {
        let character = train_character(id);
        let without = placer(false).place_detail(&character.mesh).unwrap();
        let with = placer(true).place_detail(&character.mesh).unwrap();
        with.skeleton.validate().unwrap();
        assert_eq!(with.legs.len(), 4, "{id}: four legs");
        // The front legs are the pair nearer the artist's head.
        let head = character.skeleton.bind_positions()[character.skeleton.index_of("Head").unwrap()];
        let (front, back): (Vec<&LegFrame>, Vec<&LegFrame>) = with.legs.iter().partition(|l| l.front);
        assert_eq!((front.len(), back.len()), (2, 2));
        assert!(
            head.distance(front[0].attach) < head.distance(back[0].attach),
            "{id}: head end"
        );
        for name in ["shoulder_L", "hand_R", "thigh_L", "toe_end_R"] {
            assert!(with.skeleton.names.iter().any(|n| n == name), "{id}: no {name}");
        }
        let (before, after) = (
            scores(&character, &without.skeleton).cd_j2j,
            scores(&character, &with.skeleton).cd_j2j,
        );
        assert!(after < before - gain, "{id}: CD-J2J {before} -> {after}");
    }
}

#[test]
fn short_limbs_of_a_thick_body_come_back_where_the_learned_model_rigs_them() {
    // Measured (CD-J2J, guided, grafting off -> on, the skeleton model of 2026-11-27): the T-rex
    // 0.0464 -> 0.0378, its short arms back (27 -> 31 joints). (With the model before it, the
    // apatosaurus: 0.0522 -> 0.0437; the new model rigs its legs without grafting, 0.0487.)
    let learned = LearnedPlacer::embedded().unwrap();
    let placer = |loose_thickness| {
        guided(
            &learned,
            CurveParams {
                loose_thickness,
                ..CurveParams::default()
            },
        )
    };
    // A val character, as a test (no setting is chosen on it here).
    let row = common::manifest()
        .into_iter()
        .find(|r| r.id() == "quaternius-dinosaurs-trex")
        .unwrap();
    let character = rigml_io::load(&row.path()).unwrap();
    let without = placer(0.0).place_detail(&character.mesh).unwrap();
    let with = placer(CurveParams::default().loose_thickness)
        .place_detail(&character.mesh)
        .unwrap();
    with.skeleton.validate().unwrap();
    assert!(with.skeleton.len() > without.skeleton.len());
    // The grafted chains come in mirrored pairs: as many _L joints as _R ones.
    let side = |s: &str| with.skeleton.names.iter().filter(|n| n.ends_with(s)).count();
    assert_eq!(side("_L"), side("_R"));
    assert!(side("_L") > without.skeleton.names.iter().filter(|n| n.ends_with("_L")).count());
    let (before, after) = (
        scores(&character, &without.skeleton).cd_j2j,
        scores(&character, &with.skeleton).cd_j2j,
    );
    assert!(after < before - 0.005, "CD-J2J {before} -> {after}");
}

#[test]
fn quadrupeds_get_weightless_pole_targets_near_the_artists() {
    // Measured (CD-J2J, guided, poles off -> on): deer 0.0512 -> 0.0334; its poles land
    // 0.05-0.06 from the artist's (normalised units).
    let learned = LearnedPlacer::embedded().unwrap();
    // Without the ground root, which is also weightless (tested below).
    let placer = |leg_poles| {
        guided(
            &learned,
            CurveParams {
                leg_poles,
                ground_root: false,
                ..CurveParams::default()
            },
        )
    };
    let character = train_character("quaternius-animals-deer");
    let without = placer(false).place_detail(&character.mesh).unwrap().skeleton;
    let with = placer(true).place_detail(&character.mesh).unwrap().skeleton;
    with.validate().unwrap();
    // The poles come last, hanging from the root; the other joints are untouched.
    assert_eq!(with.len(), without.len() + 4);
    assert_eq!(&with.heads[..without.len()], &without.heads[..]);
    let (_, scale) = rigml_eval::deformation::normalisation(&character.mesh.positions).unwrap();
    let artist = character.skeleton.bind_positions();
    for (ours, theirs) in [
        ("front_leg_pole_L", "PoleTarget.L"),
        ("front_leg_pole_R", "PoleTarget.R"),
        ("back_leg_pole_L", "PoleTargetBack.L"),
        ("back_leg_pole_R", "PoleTargetBack.R"),
    ] {
        let j = with
            .names
            .iter()
            .position(|n| n == ours)
            .unwrap_or_else(|| panic!("no {ours}"));
        assert_eq!(with.parents[j], Some(0));
        let t = artist[character.skeleton.index_of(theirs).unwrap()];
        let d = with.heads[j].distance(t) * scale;
        assert!(d < 0.1, "{ours}: {d} from {theirs}");
    }
    let (before, after) = (scores(&character, &without).cd_j2j, scores(&character, &with).cd_j2j);
    assert!(after < before - 0.005, "CD-J2J {before} -> {after}");
    // Skinned as `rigml rig` skins: the poles get no weight, and every other joint the weights
    // the skeleton without poles gets.
    let skeleton = with.to_skeleton().unwrap();
    let bare = without.to_skeleton().unwrap();
    let control = rigml_rig::controls(&skeleton);
    assert_eq!(control.iter().filter(|c| **c).count(), 4);
    let solver = rigml_learn::Learned::embedded().unwrap();
    let options = rigml_skin::SolveOptions::default();
    let skin = rigml_rig::skin_placed(&character.mesh, &skeleton, &solver, &options).unwrap();
    assert!(skin.rows().flatten().all(|i| !control[i.joint as usize]));
    let plain = rigml_skin::SkinSolver::solve(&solver, &character.mesh, &bare, &options).unwrap();
    assert_eq!(skin, plain);
}

/// CD-J2J against the artist's joints that carry skin weight (pole targets and other control
/// joints left out; not a METRICS.md number).
fn deforming_cd(character: &rigml_core::Character, placed: &PlacedSkeleton) -> f32 {
    let (centre, scale) = rigml_eval::deformation::normalisation(&character.mesh.positions).unwrap();
    let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
    let mut used = vec![false; gt.positions.len()];
    if let Some(skin) = &character.skin {
        for row in skin.rows() {
            for i in row {
                if i.weight > 0.0 {
                    used[i.joint as usize] = true;
                }
            }
        }
    }
    let gt: Vec<Vec3> = gt
        .positions
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(p, _)| *p)
        .collect();
    let pred: Vec<Vec3> = placed.heads.iter().map(|p| (*p - centre) * scale).collect();
    let one_way = |a: &[Vec3], b: &[Vec3]| {
        a.iter()
            .map(|p| b.iter().map(|q| q.distance(*p)).fold(f32::MAX, f32::min))
            .sum::<f32>()
            / a.len() as f32
    };
    0.5 * (one_way(&pred, &gt) + one_way(&gt, &pred))
}

/// Each joint of both skeletons with the distance to the other's nearest joint (§1 units).
fn dump(character: &rigml_core::Character, placed: &PlacedSkeleton) {
    let (centre, scale) = rigml_eval::deformation::normalisation(&character.mesh.positions).unwrap();
    let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
    let pred: Vec<Vec3> = placed.heads.iter().map(|p| (*p - centre) * scale).collect();
    let nearest = |p: Vec3, set: &[Vec3]| set.iter().map(|q| q.distance(p)).fold(f32::MAX, f32::min);
    for (name, p) in placed.names.iter().zip(&pred) {
        println!(
            "  pred {name:24} {:7.3} {:7.3} {:7.3}  {:.3}",
            p.x,
            p.y,
            p.z,
            nearest(*p, &gt.positions)
        );
    }
    for (name, p) in character.skeleton.names.iter().zip(&gt.positions) {
        println!(
            "  gt   {name:24} {:7.3} {:7.3} {:7.3}  {:.3}",
            p.x,
            p.y,
            p.z,
            nearest(*p, &pred)
        );
    }
}

/// Parameter sweep helper (not part of the suite): `RIGML_AUTO="spacing=0.06,band=2"
/// RIGML_SPLITS=train,val cargo test -p rigml-rig --release --test auto -- --ignored --nocapture`.
/// With `RIGML_SKIP_HUMANOIDS=1` only the shapes the default template sends to the general
/// placer (those the humanoid placer refuses) are scored; `RIGML_DEFORMING=1` also prints
/// CD-J2J against the artist's joints that carry skin weight (without IK pole targets and other
/// controls: a diagnostic, not a METRICS.md number); `RIGML_DUMP=ID` lists that asset's joints;
/// `RIGML_GUIDED=1` places with [`Auto`] (these parameters, the embedded skeleton model;
/// `RIGML_MIN_MASS=X` changes that model's clustering threshold `min_mass`).
#[test]
#[ignore]
fn sweep() {
    let mut params = CurveParams::default();
    if let Ok(spec) = std::env::var("RIGML_AUTO") {
        for kv in spec.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap();
            let x: f32 = v.parse().unwrap();
            match k {
                "resolution" => params.resolution = x as usize,
                "band" => params.band = x,
                "min_branch" => params.chains.min_branch = x,
                "thickness" => params.chains.thickness = x,
                "spacing" => params.chains.spacing = x,
                "bend" => params.chains.bend = x,
                "min_bone" => params.chains.min_bone = x,
                "tip_trim" => params.chains.tip_trim = x,
                "loose_thickness" => params.loose_thickness = x,
                "loose_apart" => params.loose_apart = x,
                "loose_reach" => params.loose_reach = x,
                "symmetry" => params.symmetry = x,
                "pair" => params.pair = x,
                "central" => params.central = x,
                "support_reach" => params.support_reach = x,
                "support_fill" => params.support_fill = x,
                "support_share" => params.support_share = x,
                _ => panic!("unknown parameter {k}"),
            }
        }
    }
    let splits = std::env::var("RIGML_SPLITS").unwrap_or_else(|_| "train,val".into());
    let curve = CurveSkeleton { params };
    let guided = std::env::var_os("RIGML_GUIDED").map(|_| {
        let mut predictor = LearnedPlacer::embedded().unwrap().predictor().clone();
        if let Some(x) = std::env::var("RIGML_MIN_MASS").ok().and_then(|s| s.parse().ok()) {
            predictor.settings.min_mass = x;
        }
        Auto {
            curve,
            learned: LearnedPlacer::new(predictor),
        }
    });
    let skip_humanoids = std::env::var_os("RIGML_SKIP_HUMANOIDS").is_some();
    let mut by_split: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for row in common::manifest() {
        if row.get("kind") != "character" || !splits.split(',').any(|s| s == row.get("split")) {
            continue;
        }
        assert_ne!(row.get("split"), "test", "the sweep never looks at test");
        let character = match rigml_io::load(&row.path()) {
            Ok(c) => c,
            Err(e) => {
                println!("{:45} load error {e}", row.id());
                continue;
            }
        };
        if skip_humanoids && rigml_rig::Humanoid::default().place(&character.mesh).is_ok() {
            continue;
        }
        let started = std::time::Instant::now();
        let placed = match &guided {
            Some(g) => g.place_detail(&character.mesh),
            None => curve.place_detail(&character.mesh),
        };
        match placed {
            Ok(d) => {
                let s = scores(&character, &d.skeleton);
                if std::env::var_os("RIGML_DEFORMING").is_some() {
                    println!("    deforming-only CD-J2J {:.4}", deforming_cd(&character, &d.skeleton));
                }
                if std::env::var("RIGML_DUMP").is_ok_and(|id| id == row.id()) {
                    dump(&character, &d.skeleton);
                }
                println!(
                    "{:45} {:5} {:8.4} {:8.4} {:8.4} {:4} joints (gt {:3}) sym {:.2}{} bridges {} pruned {} filled {} {:.2}s",
                    row.id(),
                    row.get("split"),
                    s.cd_j2j,
                    s.cd_j2b.unwrap_or(f64::NAN),
                    s.cd_b2b.unwrap_or(f64::NAN),
                    d.skeleton.len(),
                    character.skeleton.joint_count(),
                    d.symmetry_score,
                    if d.mirror.is_some() { "*" } else { " " },
                    d.bridges,
                    d.unsupported,
                    d.filled,
                    started.elapsed().as_secs_f64()
                );
                by_split
                    .entry(row.get("split").to_string())
                    .or_default()
                    .push((s.cd_j2j, s.joint_count_error.unsigned_abs() as f64));
            }
            Err(e) => println!("{:45} FAILED {e}", row.id()),
        }
    }
    for (split, v) in by_split {
        let n = v.len() as f64;
        println!(
            "{split}: {} assets, mean CD-J2J {:.4}, mean |joint count error| {:.1}",
            v.len(),
            v.iter().map(|x| x.0).sum::<f64>() / n,
            v.iter().map(|x| x.1).sum::<f64>() / n
        );
    }
}

#[test]
fn a_quadrupeds_root_stands_where_the_artists_body_joint_is() {
    // The Quaternius quadrupeds' weightless root `Body` stands above the model's origin,
    // 0.25-0.33 front-leg heights up (`legs::ROOT_HEIGHT`). Measured on the train deer: 0.0105
    // from it (normalised units).
    let learned = LearnedPlacer::embedded().unwrap();
    let character = train_character("quaternius-animals-deer");
    let placed = guided(&learned, CurveParams::default())
        .place_detail(&character.mesh)
        .unwrap()
        .skeleton;
    assert_eq!(placed.names[0], "root");
    assert_eq!(placed.names[1], "body");
    assert_eq!(placed.parents[1], Some(0));
    let (_, scale) = rigml_eval::deformation::normalisation(&character.mesh.positions).unwrap();
    let artist = character.skeleton.bind_positions()[character.skeleton.index_of("Body").unwrap()];
    let d = placed.heads[0].distance(artist) * scale;
    assert!(d < 0.02, "root {d} from the artist's Body");
    let skeleton = placed.to_skeleton().unwrap();
    let control = rigml_rig::controls(&skeleton);
    assert!(control[0], "the root is a control joint");
    let solver = rigml_learn::Learned::embedded().unwrap();
    let skin = rigml_rig::skin_placed(
        &character.mesh,
        &skeleton,
        &solver,
        &rigml_skin::SolveOptions::default(),
    )
    .unwrap();
    assert!(skin.rows().flatten().all(|i| !control[i.joint as usize]));
}

#[test]
fn symmetric_shapes_get_their_central_chains_on_the_mirror_plane() {
    // Before central chains were put on the plane, the alpaca and the flatfish each had four
    // joints more than 0.01 off it without a partner (32 over the train and val shapes the
    // general template places; 11 are left).
    let learned = LearnedPlacer::embedded().unwrap();
    for id in ["quaternius-animals-alpaca", "quaternius-cute-fish-flatfish"] {
        let mesh = train_character(id).mesh;
        let detail = guided(&learned, CurveParams::default()).place_detail(&mesh).unwrap();
        let (axis, plane) = detail.mirror.expect("symmetric");
        let s = &detail.skeleton;
        let (lo, hi) = mesh.bounds().unwrap();
        let size = (hi - lo).max_element();
        for (name, head) in s.names.iter().zip(&s.heads) {
            let paired = name.ends_with("_L") || name.ends_with("_R");
            assert!(
                paired || (head[axis] - plane).abs() <= 0.01 * size,
                "{id}: {name} at {head} is off the plane without a partner"
            );
        }
    }
}
