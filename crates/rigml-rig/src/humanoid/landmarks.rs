//! Landmarks of a standing humanoid, found in its voxel solid without clicks: the extremities
//! (head top, hand tips, toe tips), the curve skeleton joining them (a shortest-path tree from
//! the head top that keeps to the middle of the limbs), and along it the joints: where the legs
//! split, ankles at the corner of the foot, knees and elbows at mid-limb refined by the bend,
//! wrists at the narrowing before the hand, shoulders where the arm enters the torso, and the
//! neck at the narrowest section below the head. Every joint is centred in its limb's
//! cross-section.
//!
//! Coordinates are the character frame scaled to unit height: x left, y up (the mesh spans
//! `-0.5..0.5`), z forward.

use super::volume::{Volume, Voxel};
use glam::Vec3;

/// Joint positions of one side's limbs (character frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limbs {
    pub clavicle: Vec3,
    pub upper_arm: Vec3,
    pub elbow: Vec3,
    pub wrist: Vec3,
    pub hand_tip: Vec3,
    pub upper_leg: Vec3,
    pub knee: Vec3,
    pub ankle: Vec3,
    pub toe_base: Vec3,
    pub toe_tip: Vec3,
}

/// Everything the template needs (character frame).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Landmarks {
    pub hips: Vec3,
    /// Spine, Spine1, Spine2.
    pub spine: [Vec3; 3],
    pub neck: Vec3,
    pub head: Vec3,
    pub head_top: Vec3,
    pub left: Limbs,
    pub right: Limbs,
}

/// Why landmarks could not be found (the shape is not a standing humanoid).
pub(crate) type Refusal = String;

/// Cumulative arc length along a polyline.
fn arc_lengths(points: &[Vec3]) -> Vec<f32> {
    let mut out = Vec::with_capacity(points.len());
    let mut acc = 0.0;
    for (k, p) in points.iter().enumerate() {
        if k > 0 {
            acc += p.distance(points[k - 1]);
        }
        out.push(acc);
    }
    out
}

/// The point at arc length `s` along a polyline (clamped to its ends).
fn at_length(points: &[Vec3], lengths: &[f32], s: f32) -> Vec3 {
    let k = lengths.partition_point(|&l| l < s);
    match (k.checked_sub(1).and_then(|a| points.get(a)), points.get(k)) {
        (Some(&a), Some(&b)) => {
            let (la, lb) = (lengths[k - 1], lengths[k]);
            let t = if lb > la { (s - la) / (lb - la) } else { 0.0 };
            a.lerp(b, t.clamp(0.0, 1.0))
        }
        (None, Some(&b)) => b,
        (Some(&a), None) => a,
        (None, None) => Vec3::ZERO,
    }
}

/// Direction of the polyline around arc length `s` (over a window of `w` either side).
fn direction_at(points: &[Vec3], lengths: &[f32], s: f32, w: f32) -> Vec3 {
    (at_length(points, lengths, s + w) - at_length(points, lengths, s - w)).normalize_or(Vec3::Y)
}

/// Find every landmark. `Err` says which part of a humanoid is missing.
///
/// `symmetric`: the mesh mirrors itself across x = 0, so a limb that cannot be read on one
/// side (a prop in the hand, a strap under the arm) is taken from the other side, mirrored.
pub(crate) fn find(vol: &Volume, symmetric: bool) -> Result<Landmarks, Refusal> {
    let body = vol.main_body();
    let voxels: Vec<Voxel> = (0..vol.solid.len()).filter(|&v| body[v]).collect();
    let size = vol.grid.size;
    let point = |v: Voxel| vol.point(v);
    let by = |key: &dyn Fn(Vec3) -> f32, keep: &dyn Fn(Vec3) -> bool| -> Option<Voxel> {
        voxels
            .iter()
            .copied()
            .filter(|&v| keep(point(v)))
            .max_by(|&a, &b| key(point(a)).total_cmp(&key(point(b))))
    };
    let head_top = by(&|p| p.y, &|p| p.x.abs() < 0.05).ok_or("no solid near the mirror plane")?;
    let hand_l = by(&|p| p.x, &|_| true).ok_or("no left extremity")?;
    let hand_r = by(&|p| -p.x, &|_| true).ok_or("no right extremity")?;
    let floor = voxels.iter().map(|&v| point(v).y).fold(f32::MAX, f32::min);
    let toe = |sign: f32| by(&|p| p.z, &|p| p.y <= floor + 1.5 * size && p.x * sign > 0.0);
    let toe_l = toe(1.0).ok_or("no left foot on the ground")?;
    let toe_r = toe(-1.0).ok_or("no right foot on the ground")?;

    let tree = vol.medial_tree(head_top);
    let (lf, rf, lh, rh) = (tree.path(toe_l), tree.path(toe_r), tree.path(hand_l), tree.path(hand_r));
    let crotch = crotch(vol, &lf, &rf).ok_or("the legs never join")?;
    let leg_l = leg(vol, up_to(&lf, crotch), crotch)?;
    let leg_r = leg(vol, up_to(&rf, crotch), crotch)?;
    let arm_ok = |a: Result<Arm, Refusal>| {
        a.and_then(|a| {
            let length = a.1.distance(a.2) + a.2.distance(a.3);
            if length < MIN_ARM {
                Err(format!("an arm is too short ({length:.2} of the height)"))
            } else {
                Ok(a)
            }
        })
    };
    let (arm_l, arm_r) = match (arm_ok(arm(vol, &lh, 1.0)), arm_ok(arm(vol, &rh, -1.0))) {
        (Ok(l), Ok(r)) => (l, r),
        (Ok(l), Err(_)) if symmetric => (l, mirror_arm(l)),
        (Err(_), Ok(r)) if symmetric => (mirror_arm(r), r),
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    // Spine: from the hips (between the upper legs) up to the neck.
    let spine_points = tree.path(spine_root(vol, crotch, &lf, &rf));
    let at_height = |y: f32| -> Vec3 {
        spine_points
            .iter()
            .copied()
            .min_by(|a, b| (a.y - y).abs().total_cmp(&(b.y - y).abs()))
            .unwrap_or(Vec3::new(0.0, y, 0.0))
    };
    let centre = |y: f32| -> Vec3 {
        let p = at_height(y);
        let c = vol.section_centre(Vec3::new(0.0, y, p.z), Vec3::Y, 0.12);
        Vec3::new(0.0, y, c.z)
    };
    let hips_y = 0.5 * (leg_l.0.y + leg_r.0.y);
    let shoulder_y = 0.5 * (arm_l.1.y + arm_r.1.y);
    let top = point(head_top);
    // The neck: the narrowest section on the spine path above the shoulders.
    let head_y = spine_points
        .iter()
        .filter(|p| p.y > shoulder_y && p.y < shoulder_y + 0.5 * (top.y - shoulder_y))
        .filter_map(|p| Some((vol.depth[vol.solid_near(*p, 1)?], p.y)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(shoulder_y + 0.25 * (top.y - shoulder_y), |(_, y)| y);
    let neck_y = shoulder_y + 0.5 * (head_y - shoulder_y).max(0.0);
    let spine = [0.25, 0.5, 0.75].map(|t| centre(hips_y + t * (neck_y - hips_y)));
    let (l, r) = (limbs(arm_l, leg_l), limbs(arm_r, leg_r));
    Ok(Landmarks {
        hips: centre(hips_y),
        spine,
        neck: centre(neck_y),
        head: centre(head_y),
        head_top: Vec3::new(0.0, top.y, centre(head_y).z),
        left: l,
        right: r,
    })
}

/// The lowest height above the knees at which the two leg paths are joined by solid straight
/// across (the crotch); `None` when they never are.
fn crotch(vol: &Volume, left: &[Vec3], right: &[Vec3]) -> Option<f32> {
    let first_at = |path: &[Vec3], y: f32| path.iter().copied().find(|p| p.y >= y);
    let floor = left.first()?.y.min(right.first()?.y);
    let top = left.last()?.y;
    let step = vol.grid.size;
    let mut y = floor + 0.15 * (top - floor);
    while y < top {
        let (a, b) = (first_at(left, y)?, first_at(right, y)?);
        let (a, b) = (Vec3::new(a.x, y, a.z), Vec3::new(b.x, y, b.z));
        if a.x > b.x && vol.solid_segment(a, b) {
            return Some(y);
        }
        y += step;
    }
    None
}

/// The part of a path from its start up to height `y`.
fn up_to(path: &[Vec3], y: f32) -> &[Vec3] {
    let end = path.iter().position(|p| p.y >= y).unwrap_or(path.len());
    &path[..end.max(1)]
}

/// A solid voxel on the mirror plane just above the crotch: the spine path runs from it to the
/// head top.
fn spine_root(vol: &Volume, crotch: f32, left: &[Vec3], right: &[Vec3]) -> Voxel {
    let z = 0.5 * (up_to(left, crotch).last().map_or(0.0, |p| p.z) + up_to(right, crotch).last().map_or(0.0, |p| p.z));
    vol.solid_near(Vec3::new(0.0, crotch + vol.grid.size, z), 3)
        .unwrap_or(0)
}

/// Leg joints: (upper leg, knee, ankle, toe base, toe tip).
type Leg = (Vec3, Vec3, Vec3, Vec3, Vec3);
/// Arm joints: (hand tip, upper arm, elbow, wrist).
type Arm = (Vec3, Vec3, Vec3, Vec3);

/// One side's joints; the clavicle starts a third of the way out from the spine.
fn limbs(arm: Arm, leg: Leg) -> Limbs {
    let (hand_tip, upper_arm, elbow, wrist) = arm;
    Limbs {
        clavicle: Vec3::new(0.35 * upper_arm.x, upper_arm.y, upper_arm.z),
        upper_arm,
        elbow,
        wrist,
        hand_tip,
        upper_leg: leg.0,
        knee: leg.1,
        ankle: leg.2,
        toe_base: leg.3,
        toe_tip: leg.4,
    }
}

/// Leg joints along the medial path `points` from the toe tip up to the crotch.
fn leg(vol: &Volume, points: &[Vec3], crotch: f32) -> Result<Leg, Refusal> {
    if points.len() < 4 {
        return Err("a leg is too short".into());
    }
    let (tip, top) = (points[0], points[points.len() - 1]);
    let size = vol.grid.size;
    // Ankle: the corner of the L, farthest from the chord toe tip -> crotch, in the lower part
    // of the leg. A leg without a foot (a peg or blade, as on mechs) has no corner: what is
    // found then is a bend of the shin, which runs less than FOOT_CORNER times its height
    // towards the toe tip, and the ankle sits just above the ground.
    let chord = top - tip;
    let dist = |p: Vec3| (p - tip).cross(chord).length() / chord.length().max(1e-6);
    let lower = |p: &Vec3| p.y < tip.y + ANKLE_SEARCH * (top.y - tip.y);
    let corner = points
        .iter()
        .copied()
        .filter(lower)
        .max_by(|a, b| dist(*a).total_cmp(&dist(*b)))
        .unwrap_or(tip);
    let run = Vec3::new(tip.x - corner.x, 0.0, tip.z - corner.z).length();
    let corner = if run >= FOOT_CORNER * (corner.y - tip.y) {
        corner
    } else {
        let y = tip.y + 1.5 * size;
        points
            .iter()
            .copied()
            .min_by(|a, b| (a.y - y).abs().total_cmp(&(b.y - y).abs()))
            .unwrap_or(tip)
    };
    let ankle = vol.section_centre(corner, Vec3::Y, 0.08);
    let leg_at = |y: f32| -> Vec3 {
        let p = points
            .iter()
            .copied()
            .min_by(|a, b| (a.y - y).abs().total_cmp(&(b.y - y).abs()))
            .unwrap_or(top);
        vol.section_centre(p, Vec3::Y, 0.1)
    };
    // Upper leg: at the crotch, over the leg's centre a little below it.
    let thigh = leg_at(ankle.y + 0.8 * (crotch - ankle.y));
    let radius = vol.solid_near(thigh, 1).map_or(0.0, |v| vol.depth[v]) * size;
    let upper = Vec3::new(thigh.x, crotch + radius, thigh.z);
    // Knee: where the leg bends (the path point farthest from the chord ankle -> upper leg in
    // the middle part of the leg) when it clearly bends, else half-way.
    let (a, b) = (
        ankle.y + KNEE_RANGE.0 * (upper.y - ankle.y),
        ankle.y + KNEE_RANGE.1 * (upper.y - ankle.y),
    );
    let off = |p: Vec3| (p - ankle).cross(upper - ankle).length() / (upper - ankle).length().max(1e-6);
    let bend = points
        .iter()
        .copied()
        .filter(|p| (a..b).contains(&p.y))
        .max_by(|p, q| off(*p).total_cmp(&off(*q)));
    let knee = match bend {
        Some(p) if off(p) >= KNEE_BEND => vol.section_centre(p, Vec3::Y, 0.1),
        _ => leg_at(0.5 * (ankle.y + upper.y)),
    };
    let toe_dir = Vec3::new(tip.x - ankle.x, 0.0, tip.z - ankle.z);
    let ball = Vec3::new(
        ankle.x + 0.45 * toe_dir.x,
        tip.y + 0.3 * (ankle.y - tip.y),
        ankle.z + 0.45 * toe_dir.z,
    );
    let toe_base = vol.section_centre(ball, toe_dir, 0.05);
    Ok((upper, knee, ankle, toe_base, tip))
}

/// Arm joints along the medial path `points` from the hand tip towards the head; `side` is the
/// sign of x on this arm's side.
fn arm(vol: &Volume, points: &[Vec3], side: f32) -> Result<Arm, Refusal> {
    let size = vol.grid.size;
    // Shoulder: at the armpit, where the underside of the limb (the bottom of the solid run
    // below the path) drops from the arm's underside to far down the side of the trunk.
    let inside = points.iter().position(|p| p.x * side <= 0.0).unwrap_or(points.len());
    let underside: Vec<f32> = points[..inside]
        .iter()
        .map(|p| p.y - vol.solid_near(*p, 1).map_or(0.0, |v| vol.run_down(v)))
        .collect();
    let all_lengths = arc_lengths(&points[..inside]);
    let past_hand = all_lengths.partition_point(|&l| l < HAND_LENGTH + 0.02).max(1);
    // The trunk: the first big drop (6 % of the height within four steps); the armpit: where
    // the steep descent into it starts (more than a voxel lower per step).
    let big = (past_hand..underside.len())
        .find(|&k| {
            let before = underside[k.saturating_sub(4)..k]
                .iter()
                .copied()
                .fold(f32::MIN, f32::max);
            underside[k] < before - 0.06
        })
        .ok_or("no shoulder: the arm never meets the trunk")?;
    let mut entry_k = big;
    while entry_k > past_hand && underside[entry_k - 1] > underside[entry_k] + size {
        entry_k -= 1;
    }
    // No armpit away from the mirror plane (a chest as low as the arms, as on mechs whose arms
    // leave the top of a wide chest): the shoulder at the typical share of the arm's reach.
    let reach = points[0].x * side;
    let armpit = points[entry_k].x * side >= MIN_SHOULDER * reach;
    if !armpit {
        entry_k = points[..inside]
            .iter()
            .position(|p| p.x * side <= SHOULDER_REACH * reach)
            .unwrap_or(entry_k);
    }
    if entry_k < 4 {
        return Err("an arm is too short".into());
    }
    // The arm's radius: half its thickness below the path, over the half next to the shoulder.
    let mut half: Vec<f32> = (entry_k / 2..entry_k).map(|k| points[k].y - underside[k]).collect();
    half.sort_by(f32::total_cmp);
    let radius = half.get(half.len() / 2).copied().unwrap_or(0.0).max(size);
    let points = &points[..inside];
    let lengths = arc_lengths(points);
    let w = 2.0 * size;
    // The cut across the arm `s` along the path from the hand tip: its point and direction.
    let cut = |s: f32| (at_length(points, &lengths, s), direction_at(points, &lengths, s, w));
    let section = |s: f32| {
        let (p, axis) = cut(s);
        vol.section(p, axis, ARM_SECTION)
    };
    // Wrist: the smallest whole cross-section 7-16 % of the height in from the hand tip. A
    // section through separate fingers is no wrist: there the arm's own piece holds only part
    // of the solid around it (big hands, as on mechs, reach into the window).
    let mut wrist = section(HAND_LENGTH).0;
    let mut best = usize::MAX;
    let mut s = 0.07;
    while s < 0.16_f32.min(0.6 * lengths[entry_k]) {
        let (p, axis) = cut(s);
        let (c, area) = vol.section(p, axis, ARM_SECTION);
        let around = vol.slab_count(p, axis, ARM_SECTION);
        if area < best && area as f32 >= WHOLE_SECTION * around as f32 {
            (best, wrist) = (area, c);
        }
        s += size;
    }
    let wrist_s = lengths[points
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.distance(wrist).total_cmp(&b.1.distance(wrist)))
        .map_or(0, |(k, _)| k)];
    // The upper arm sits half the arm's radius inside the armpit (at the ball when none).
    let total = lengths[entry_k] + if armpit { 0.5 * radius } else { 0.0 };
    let upper = section(total).0;
    let elbow = section(0.5 * (wrist_s + total)).0;
    Ok((points[0], upper, elbow, wrist))
}

/// Shortest arm (shoulder to wrist, share of the height) taken as an arm.
pub(crate) const MIN_ARM: f32 = 0.08;

/// The same arm on the other side.
fn mirror_arm(a: Arm) -> Arm {
    let m = |p: Vec3| Vec3::new(-p.x, p.y, p.z);
    (m(a.0), m(a.1), m(a.2), m(a.3))
}

/// Share of the leg (from the ground up) searched for the ankle's corner.
const ANKLE_SEARCH: f32 = 0.5;
/// Least horizontal run from the ankle's corner to the toe tip, per unit of the corner's height
/// above it, for the leg to have a foot (a foot is long and low; a shin's bend is not).
const FOOT_CORNER: f32 = 0.6;
/// Part of the leg (shares from the ankle to the upper leg) searched for the knee's bend.
const KNEE_RANGE: (f32, f32) = (0.35, 0.65);
/// Least bend (distance from the chord ankle -> upper leg, share of the height) taken as the
/// knee.
const KNEE_BEND: f32 = 0.04;

/// Least distance of the armpit from the mirror plane (share of the hand tip's distance) for it
/// to be taken as the shoulder.
const MIN_SHOULDER: f32 = 0.1;
/// Distance of the shoulder from the mirror plane (share of the hand tip's) where no armpit is
/// found.
const SHOULDER_REACH: f32 = 0.25;

/// Reach of an arm's cross-sections from the path (share of the height).
const ARM_SECTION: f32 = 0.08;

/// Least share of the solid around a section that the section's own piece holds for it to be
/// taken as the wrist (less: the cut runs through separate fingers).
const WHOLE_SECTION: f32 = 0.7;

/// Typical hand length (wrist to finger tip) as a share of the height.
const HAND_LENGTH: f32 = 0.105;
