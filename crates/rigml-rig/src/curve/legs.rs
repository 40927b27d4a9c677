//! Quadruped legs. The curve skeleton follows a leg's centre line, so its joints sit evenly down
//! a straight column from where the leg leaves the body. Artists rig a quadruped's leg
//! differently: the shoulder or hip joint up at the spine, the elbow or stifle in the body's
//! underside, the knee (carpus) or hock where the leg bends, then a foot and a toe joint at the
//! hoof or paw. When a shape stands on two mirrored pairs of end chains, each of those chains
//! is replaced by such joints, placed by the median proportions of the artists' legs in the
//! train split ([`FRONT_LEG`], [`BACK_LEG`], printed by the `quadruped_table` example).
//!
//! Which pair is in front is read from the shape: beyond the legs, the surface of the head end
//! (neck, head, ears, antlers) sits higher on average than that of the tail end.

use super::simplify::Joints;
use glam::Vec3;

/// One joint of a leg template, in a leg's own proportions ([`LegFrame`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegJoint {
    /// Height above the foot, as a share of the attachment's height above the foot.
    pub up: f32,
    /// Distance ahead of the foot (toward the head), in the same unit.
    pub ahead: f32,
    /// Distance from the mirror plane, as a share of the foot's distance from it.
    pub out: f32,
}

const fn joint(up: f32, ahead: f32, out: f32) -> LegJoint {
    LegJoint { up, ahead, out }
}

/// A front leg from the shoulder down: shoulder, upper leg (elbow), lower leg (carpus), foot,
/// toe. Medians over the front legs of the train split's quadrupeds (`quadruped_table`).
/// The joints in the lower half of the leg keep only their height: they go on the leg's own
/// chain, whose centre line follows the limb whatever the breed or the pose.
pub const FRONT_LEG: [LegJoint; 5] = [
    joint(0.83, -0.09, 0.60),
    joint(0.84, -0.09, 1.00),
    joint(0.44, -0.05, 1.00),
    joint(0.11, -0.08, 1.00),
    joint(0.03, -0.05, 1.00),
];

/// Names of the [`FRONT_LEG`] joints (the bone each one starts), as Blender's Rigify names a
/// quadruped's front leg; the placer adds `_L` or `_R`.
pub const FRONT_NAMES: [&str; 5] = ["shoulder", "upper_arm", "forearm", "hand", "front_toe"];

/// A back leg from the hip down: hip, thigh, upper leg (stifle), lower leg (hock), foot, toe.
/// Medians over the back legs of the train split's quadrupeds (`quadruped_table`). As for
/// [`FRONT_LEG`], the joints in the lower half of the leg keep only their height.
pub const BACK_LEG: [LegJoint; 6] = [
    joint(1.18, 0.14, 0.53),
    joint(1.19, 0.14, 0.96),
    joint(0.85, 0.32, 0.96),
    joint(0.49, -0.09, 0.96),
    joint(0.12, -0.05, 0.96),
    joint(0.03, -0.01, 0.96),
];

/// Names of the [`BACK_LEG`] joints, as [`FRONT_NAMES`].
pub const BACK_NAMES: [&str; 6] = ["pelvis", "thigh", "shin", "foot", "toe", "toe_end"];

/// The IK pole target of a front leg: a control joint in front of the leg, hanging from the
/// root, that an IK chain from shoulder to foot aims at. It carries no skin weight
/// ([`is_pole`]). Medians over the train split's Quaternius quadrupeds, whose rigs all have
/// one per leg (`PoleTarget.L/R`; `quadruped_table`).
pub const FRONT_POLE: LegJoint = joint(0.46, 0.86, 0.86);

/// The IK pole target of a back leg (`PoleTargetBack.L/R` in the artists' rigs), as
/// [`FRONT_POLE`]. The artists put it just ahead of the front leg's pole, in front of the
/// animal, so it is given **in the front leg's frame** (in the back leg's own, its distance
/// ahead spread from 2.3 to 4.2 leg heights over the train split; in the front leg's, 0.9 to
/// 1.7).
pub const BACK_POLE: LegJoint = joint(0.46, 1.04, 0.86);

/// Name of the [`FRONT_POLE`] joints; the placer adds `_L` or `_R`.
pub const FRONT_POLE_NAME: &str = "front_leg_pole";
/// Name of the [`BACK_POLE`] joints, as [`FRONT_POLE_NAME`].
pub const BACK_POLE_NAME: &str = "back_leg_pole";

/// Height of a four-legged shape's root (the ground root, [`crate::ground`]) above the floor, in
/// front-leg heights ([`LegJoint::up`]): the artists of the train split's Quaternius quadrupeds
/// put their weightless root (`Body`, parent of the spine and the poles) above the model's
/// origin at 0.25–0.33 (median printed by `quadruped_table`), where it turns the whole animal
/// about its middle rather than about a point on the floor.
pub const ROOT_HEIGHT: f32 = 0.29;

/// Whether `name` is one of the pole targets the leg templates add (`front_leg_pole_L` ...):
/// control joints that must get no skin weight.
pub fn is_pole(name: &str) -> bool {
    [FRONT_POLE_NAME, BACK_POLE_NAME].iter().any(|base| {
        name.strip_prefix(base)
            .is_some_and(|side| side.is_empty() || side == "_L" || side == "_R")
    })
}

/// A found leg's frame: its foot (the chain's tip), the joint it hangs from, and the
/// directions of the shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegFrame {
    /// A front leg (nearer the head) or a back leg.
    pub front: bool,
    /// The joint on the mirror plane the leg's chain hangs from.
    pub attach: Vec3,
    /// The tip of the leg's chain.
    pub foot: Vec3,
    /// Unit up direction (away from the floor the feet stand on).
    pub up: Vec3,
    /// Unit direction toward the head.
    pub ahead: Vec3,
    /// Mirror axis (0 = x, 1 = y, 2 = z) and the plane's coordinate on it.
    pub mirror: (usize, f32),
}

impl LegFrame {
    /// Height of the attachment above the foot: the unit of [`LegJoint::up`] and
    /// [`LegJoint::ahead`].
    pub fn height(&self) -> f32 {
        (self.attach - self.foot).dot(self.up)
    }

    /// Model-space position of a template joint.
    pub fn place(&self, j: &LegJoint) -> Vec3 {
        let h = self.height();
        let (axis, plane) = self.mirror;
        let mut p = self.foot + self.up * (j.up * h) + self.ahead * (j.ahead * h);
        p[axis] = plane + j.out * (self.foot[axis] - plane);
        p
    }

    /// The mirror image of a model-space point across the shape's mirror plane.
    pub fn mirror_image(&self, p: Vec3) -> Vec3 {
        let (axis, plane) = self.mirror;
        let mut q = p;
        q[axis] = 2.0 * plane - p[axis];
        q
    }

    /// Template coordinates of a model-space point: the inverse of [`LegFrame::place`] (for
    /// fitting templates to artists' joints).
    pub fn coordinates(&self, p: Vec3) -> LegJoint {
        let h = self.height();
        let (axis, plane) = self.mirror;
        let d = p - self.foot;
        LegJoint {
            up: d.dot(self.up) / h,
            ahead: d.dot(self.ahead) / h,
            out: (p[axis] - plane) / (self.foot[axis] - plane),
        }
    }
}

/// A leg found in a joint tree: its frame and its chain (joint indices from the attachment's
/// child down to the tip). [`find`] lists legs in mirrored pairs, the `+axis` one first.
#[derive(Debug, Clone, PartialEq)]
pub struct Leg {
    pub frame: LegFrame,
    /// Index of the joint the chain hangs from.
    pub attach: usize,
    pub chain: Vec<usize>,
}

/// A foot is on the floor when its tip is within this share of the shape's size of the lowest
/// point of the mesh.
const FLOOR: f32 = 0.06;
/// A leg hangs at least this share of the shape's size below its attachment.
const LEG_HEIGHT: f32 = 0.12;
/// A leg stands under the body: its foot is at most this many times its height out from the
/// mirror plane (legs splayed like a spider's are not a quadruped's).
const SPLAY: f32 = 0.6;
/// Template joints lower than this share of the leg's height go on the leg's own centre line
/// ([`on_limb`]; chosen on val: train CD-J2J of the non-humanoids 0.0684 -> 0.0681, val 0.0630
/// -> 0.0627, against 0.0693 / 0.0649 with every joint below 0.9 so placed).
const ON_LIMB_BELOW: f32 = 0.5;
/// The front and back attachments are at least this share of the size apart along the body.
const BODY_LENGTH: f32 = 0.1;
/// The two chains of a mirrored pair may hang from two joints on the plane this share of the
/// size apart.
const ATTACH_NEAR: f32 = 0.1;

/// A mirrored pair of end chains: each chain runs from the child of the joint it hangs from
/// down to its tip, every joint of it has a partner in the other chain and one child (the tip
/// none). `chain` is the one on the `+axis` side.
struct ChainPair {
    attach: usize,
    chain: Vec<usize>,
    partner_attach: usize,
    partner_chain: Vec<usize>,
}

/// The mirrored end chains hanging from joints on the mirror plane. The two chains of a pair
/// hang from the same joint, or from two unpaired joints within `near` of each other (a curve
/// skeleton can branch one side a joint later than the other).
fn mirrored_end_chains(joints: &Joints, pairs: &[Option<usize>], axis: usize, plane: f32, near: f32) -> Vec<ChainPair> {
    let n = joints.positions.len();
    let mut children = vec![0usize; n];
    for p in joints.parents.iter().flatten() {
        children[*p] += 1;
    }
    let walk = |tip: usize| -> Option<(usize, Vec<usize>)> {
        let mut chain = vec![tip];
        let mut j = joints.parents[tip]?;
        while pairs.get(j).copied().flatten().is_some() {
            if children[j] != 1 {
                return None;
            }
            chain.push(j);
            j = joints.parents[j]?;
        }
        chain.reverse();
        Some((j, chain))
    };
    (0..n)
        .filter(|&t| children[t] == 0 && joints.positions[t][axis] > plane)
        .filter_map(|t| {
            let partner = pairs.get(t).copied().flatten()?;
            let (attach, chain) = walk(t)?;
            let (partner_attach, partner_chain) = walk(partner)?;
            let mirrored = joints.positions[attach].distance(joints.positions[partner_attach]) <= near
                && partner_chain.len() == chain.len()
                && chain
                    .iter()
                    .zip(&partner_chain)
                    .all(|(&a, &b)| pairs.get(a).copied().flatten() == Some(b));
            mirrored.then_some(ChainPair {
                attach,
                chain,
                partner_attach,
                partner_chain,
            })
        })
        .collect()
}

/// The four legs of a shape that stands on two mirrored pairs of end chains, or `None`.
/// `mirror` is the mirror axis and plane; `lo`/`hi` bound the mesh; `size` is its longest side.
/// Exactly one of the four directions across the mirror plane must have two pairs of feet on
/// the floor, hanging from two different joints apart along the body, and one end of the body
/// must sit higher than the other beyond the legs (the head end), judged on `surface`: the
/// mesh's triangles as (centroid, area).
pub fn find(
    joints: &Joints,
    pairs: &[Option<usize>],
    surface: &[(Vec3, f32)],
    mirror: (usize, f32),
    lo: Vec3,
    hi: Vec3,
    size: f32,
) -> Option<Vec<Leg>> {
    let (axis, plane) = mirror;
    let chains = mirrored_end_chains(joints, pairs, axis, plane, ATTACH_NEAR * size);
    let pos = &joints.positions;
    let mut stances = Vec::new();
    for a in (0..3).filter(|&a| a != axis) {
        for sign in [1.0f32, -1.0] {
            let up = Vec3::AXES[a] * sign;
            let floor = if sign > 0.0 { lo[a] } else { -hi[a] };
            let standing: Vec<_> = chains
                .iter()
                .filter(|c| {
                    let tip = pos[*c.chain.last().unwrap_or(&c.attach)];
                    let hang = (pos[c.attach] - tip).dot(up);
                    tip.dot(up) - floor <= FLOOR * size
                        && hang >= LEG_HEIGHT * size
                        && (tip[axis] - plane).abs() <= SPLAY * hang
                })
                .collect();
            if standing.len() == 2 {
                stances.push((a, up, standing));
            }
        }
    }
    let [(up_axis, up, legs)] = <[_; 1]>::try_from(stances).ok()?;
    let along = 3 - axis - up_axis;
    let (a0, a1) = (legs[0].attach, legs[1].attach);
    if a0 == a1 || (pos[a0][along] - pos[a1][along]).abs() < BODY_LENGTH * size {
        return None;
    }
    // The head end: the end whose surface beyond the front-most or back-most attachment sits
    // higher on average (area-weighted, so a finely modelled head does not outweigh a coarse
    // one). The mean holds up in poses where the single highest point does not: a fox's raised
    // tail, a grazing cow's lowered head beside its hump (`quadruped_head_end` example).
    let (min_a, max_a) = (pos[a0][along].min(pos[a1][along]), pos[a0][along].max(pos[a1][along]));
    let (mut area, mut lift) = ([0.0f64; 2], [0.0f64; 2]);
    for &(centre, a) in surface {
        let end = if centre[along] > max_a {
            0
        } else if centre[along] < min_a {
            1
        } else {
            continue;
        };
        area[end] += f64::from(a);
        lift[end] += f64::from(a) * f64::from(centre.dot(up));
    }
    let mean = |e: usize| (area[e] > 0.0).then(|| lift[e] / area[e]);
    let plus_ahead = match (mean(0), mean(1)) {
        (Some(p), Some(m)) if p != m => p > m,
        // Nothing beyond one end (no tail, or no neck): the other end is the head.
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => return None,
    };
    let ahead = Vec3::AXES[along] * if plus_ahead { 1.0 } else { -1.0 };
    let front_attach = if pos[a0].dot(ahead) > pos[a1].dot(ahead) {
        a0
    } else {
        a1
    };
    let mut out = Vec::new();
    for pair in legs {
        // Both legs of a pair share the frame of the `+axis` one, mirrored: the attachment on
        // the plane, the partner's foot (its mirror image).
        let frame = LegFrame {
            front: pair.attach == front_attach,
            attach: pos[pair.attach],
            foot: pos[*pair.chain.last()?],
            up,
            ahead,
            mirror,
        };
        out.push(Leg {
            frame,
            attach: pair.attach,
            chain: pair.chain.clone(),
        });
        out.push(Leg {
            frame: LegFrame {
                foot: pos[*pair.partner_chain.last()?],
                ..frame
            },
            attach: pair.partner_attach,
            chain: pair.partner_chain.clone(),
        });
    }
    Some(out)
}

/// Where template joint `t` goes on `leg`: its place in the leg's frame, or, below
/// [`ON_LIMB_BELOW`], the point of the leg's own chain (`old` positions) at that height: the
/// lower leg is a limb of its own, and its centre line is where the joints belong whatever the
/// breed's proportions or the leg's pose.
fn on_limb(leg: &Leg, t: &LegJoint, old: &[Vec3]) -> Vec3 {
    let f = &leg.frame;
    let p = f.place(t);
    if t.up >= ON_LIMB_BELOW {
        return p;
    }
    let h = p.dot(f.up);
    let line: Vec<Vec3> = std::iter::once(f.attach)
        .chain(leg.chain.iter().map(|&j| old[j]))
        .collect();
    line.windows(2)
        .find_map(|w| {
            let (ha, hb) = (w[0].dot(f.up), w[1].dot(f.up));
            ((ha - h) * (hb - h) <= 0.0 && ha != hb).then(|| w[0].lerp(w[1], (ha - h) / (ha - hb)))
        })
        .unwrap_or(p)
}

/// Replace each leg's chain by the template joints ([`FRONT_LEG`] or [`BACK_LEG`]) placed in
/// its frame (the lower ones on the leg's own centre line, [`on_limb`]), mirrored pairs kept.
/// `legs` must come from [`find`] on these joints. Returns the name of each joint's role
/// ([`FRONT_NAMES`], [`BACK_NAMES`]; `None` for the other joints).
pub fn apply(joints: &mut Joints, pairs: &mut Vec<Option<usize>>, legs: &[Leg]) -> Vec<Option<&'static str>> {
    let old = joints.positions.clone();
    let mut alive = vec![true; old.len()];
    for leg in legs {
        for &j in &leg.chain {
            alive[j] = false;
        }
    }
    let index = super::support::keep(joints, pairs, &alive);
    let mut roles = vec![None; joints.positions.len()];
    // Legs come in mirrored pairs from `find`.
    for pair in legs.chunks(2) {
        let [left, right] = pair else { continue };
        let (Some(l_attach), Some(r_attach)) = (
            index.get(left.attach).copied().flatten(),
            index.get(right.attach).copied().flatten(),
        ) else {
            continue;
        };
        let (template, names): (&[LegJoint], &[&'static str]) = if left.frame.front {
            (&FRONT_LEG, &FRONT_NAMES)
        } else {
            (&BACK_LEG, &BACK_NAMES)
        };
        let (mut l_parent, mut r_parent) = (l_attach, r_attach);
        for (t, name) in template.iter().zip(names) {
            let (l, r) = (joints.positions.len(), joints.positions.len() + 1);
            // The right leg is the left one's mirror image, exactly.
            let lp = on_limb(left, t, &old);
            let rp = left.frame.mirror_image(lp);
            joints.positions.push(lp);
            joints.parents.push(Some(l_parent));
            joints.positions.push(rp);
            joints.parents.push(Some(r_parent));
            pairs.push(Some(r));
            pairs.push(Some(l));
            roles.extend([Some(*name), Some(*name)]);
            (l_parent, r_parent) = (l, r);
        }
    }
    roles
}

/// Add an IK pole target for each leg ([`FRONT_POLE`], [`BACK_POLE`], both placed in the
/// frame of the front leg on the `+axis` side) hanging from the root (joint 0), mirrored pairs
/// kept, and their roles to `roles` (as [`apply`] returns them). `legs` must come from
/// [`find`]; the poles lie outside the mesh, so call this after anything that pulls joints
/// inside.
pub fn add_poles(
    joints: &mut Joints,
    pairs: &mut Vec<Option<usize>>,
    roles: &mut Vec<Option<&'static str>>,
    legs: &[Leg],
) {
    // `find` lists each pair with its `+axis` leg first.
    let Some(front) = legs.chunks(2).find_map(|pair| pair.first().filter(|l| l.frame.front)) else {
        return;
    };
    if joints.positions.is_empty() {
        return;
    }
    roles.resize(joints.positions.len(), None);
    for pair in legs.chunks(2) {
        let [left, _] = pair else { continue };
        let (pole, name) = if left.frame.front {
            (&FRONT_POLE, FRONT_POLE_NAME)
        } else {
            (&BACK_POLE, BACK_POLE_NAME)
        };
        let lp = front.frame.place(pole);
        let rp = front.frame.mirror_image(lp);
        let l = joints.positions.len();
        joints.positions.extend([lp, rp]);
        joints.parents.extend([Some(0), Some(0)]);
        pairs.extend([Some(l + 1), Some(l)]);
        roles.extend([Some(name), Some(name)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A four-legged joint tree standing on y = 0, mirrored across x = 0: a spine along z at
    /// height 1 from the tail (z = -1) to the shoulders (z = 1), a neck rising at the `head_z`
    /// end, a tail drooping at the other, and `pairs` leg pairs hanging from spine joints at
    /// the given z.
    fn creature(head_z: f32, legs_at: &[f32]) -> (Joints, Vec<Option<usize>>) {
        let mut positions = vec![Vec3::new(0.0, 1.0, 0.0)];
        let mut parents = vec![None];
        let mut pairs = vec![None];
        let mut add = |p: Vec3, parent: usize, partner: Option<usize>, positions: &mut Vec<Vec3>| {
            positions.push(p);
            parents.push(Some(parent));
            pairs.push(partner);
            positions.len() - 1
        };
        // Spine joints at z = -1, -0.7, 0.7, 1 (root at 0).
        let back = add(Vec3::new(0.0, 1.0, -0.7), 0, None, &mut positions);
        let tail_root = add(Vec3::new(0.0, 1.0, -1.0), back, None, &mut positions);
        let front = add(Vec3::new(0.0, 1.0, 0.7), 0, None, &mut positions);
        let head_root = add(Vec3::new(0.0, 1.0, 1.0), front, None, &mut positions);
        let (head_end, tail_end) = if head_z > 0.0 {
            (head_root, tail_root)
        } else {
            (tail_root, head_root)
        };
        let s = head_z.signum();
        add(Vec3::new(0.0, 1.6, 1.4 * s), head_end, None, &mut positions);
        add(Vec3::new(0.0, 0.8, -1.4 * s), tail_end, None, &mut positions);
        for &z in legs_at {
            let attach = if z > 0.0 { front } else { back };
            let (mut left, mut right) = (attach, attach);
            for y in [0.6, 0.3, 0.0] {
                let l = positions.len();
                left = add(Vec3::new(0.2, y, z), left, Some(l + 1), &mut positions);
                right = add(Vec3::new(-0.2, y, z), right, Some(l), &mut positions);
            }
        }
        (Joints { positions, parents }, pairs)
    }

    /// A stand-in for a creature's surface: a unit of area at every joint.
    fn surface(joints: &Joints) -> Vec<(Vec3, f32)> {
        joints.positions.iter().map(|&p| (p, 1.0)).collect()
    }

    const LO: Vec3 = Vec3::new(-0.3, 0.0, -1.5);
    const HI: Vec3 = Vec3::new(0.3, 1.7, 1.5);

    #[test]
    fn place_and_coordinates_are_inverse() {
        let frame = LegFrame {
            front: true,
            attach: Vec3::new(0.0, 1.0, 0.7),
            foot: Vec3::new(-0.2, 0.0, 0.6),
            up: Vec3::Y,
            ahead: Vec3::Z,
            mirror: (0, 0.0),
        };
        assert_eq!(frame.height(), 1.0);
        for j in FRONT_LEG.iter().chain(&BACK_LEG) {
            let c = frame.coordinates(frame.place(j));
            assert!((c.up - j.up).abs() < 1e-5 && (c.ahead - j.ahead).abs() < 1e-5 && (c.out - j.out).abs() < 1e-5);
        }
        // A template joint at the foot's proportions is the foot itself.
        assert!(frame.place(&joint(0.0, 0.0, 1.0)).distance(frame.foot) < 1e-6);
    }

    #[test]
    fn four_standing_legs_are_found_with_the_head_end_in_front() {
        for head_z in [1.0f32, -1.0] {
            let (joints, pairs) = creature(head_z, &[0.7, -0.7]);
            let legs = find(&joints, &pairs, &surface(&joints), (0, 0.0), LO, HI, 3.0).expect("four legs");
            assert_eq!(legs.len(), 4);
            for leg in &legs {
                assert_eq!(leg.frame.up, Vec3::Y);
                assert_eq!(leg.frame.ahead, Vec3::Z * head_z);
                assert_eq!(
                    leg.frame.front,
                    leg.frame.attach.z * head_z > 0.0,
                    "front legs are at the head end"
                );
                assert_eq!(leg.chain.len(), 3);
            }
            // Mirrored pairs come together, the +x leg first, each chain the other's partner
            // joint for joint.
            for pair in legs.chunks(2) {
                assert!(pair[0].frame.foot.x > 0.0 && pair[1].frame.foot.x < 0.0);
                assert_eq!(pair[0].chain.len(), pair[1].chain.len());
                for (&a, &b) in pair[0].chain.iter().zip(&pair[1].chain) {
                    assert_eq!((pairs[a], pairs[b]), (Some(b), Some(a)));
                }
            }
        }
    }

    #[test]
    fn a_raised_tail_above_the_ears_does_not_make_its_end_the_head() {
        // A running fox: the tail's thin tip rises above the ears, but beyond the legs the
        // head end's surface (neck, head, snout, ears) sits higher on average. The tail's end
        // joint (the seventh, after root, spine, tail root, spine, head root, head) rises too.
        let (mut joints, pairs) = creature(1.0, &[0.7, -0.7]);
        joints.positions[6].y = 2.0;
        let mut surface: Vec<(Vec3, f32)> = [1.2, 1.6, 1.5, 1.9]
            .iter()
            .map(|&y| (Vec3::new(0.0, y, 1.2), 1.0))
            .collect();
        surface.push((Vec3::new(0.0, 1.0, -1.1), 1.0));
        surface.push((Vec3::new(0.0, 2.0, -1.4), 0.3));
        let legs = find(&joints, &pairs, &surface, (0, 0.0), LO, HI, 3.0).expect("four legs");
        assert!(legs.iter().all(|l| l.frame.ahead == Vec3::Z));
        // Nothing beyond the back legs (no tail): the end with something beyond is the head.
        let legs = find(&joints, &pairs, &surface[..4], (0, 0.0), LO, HI, 3.0).expect("four legs");
        assert!(legs.iter().all(|l| l.frame.ahead == Vec3::Z));
        // Nothing beyond either end: no head end, no quadruped.
        assert_eq!(find(&joints, &pairs, &[], (0, 0.0), LO, HI, 3.0), None);
    }

    #[test]
    fn two_legs_or_six_legs_or_a_lone_chain_are_not_a_quadruped() {
        for legs_at in [&[0.7][..], &[0.7, -0.7, 0.1], &[]] {
            let (joints, pairs) = creature(1.0, legs_at);
            assert_eq!(
                find(&joints, &pairs, &surface(&joints), (0, 0.0), LO, HI, 3.0),
                None,
                "legs at {legs_at:?}"
            );
        }
        // Legs splayed out like a spider's (feet twice their height from the plane) are not a
        // quadruped's.
        let (mut joints, pairs) = creature(1.0, &[0.7, -0.7]);
        for p in &mut joints.positions {
            p.x *= 10.0;
        }
        assert_eq!(find(&joints, &pairs, &surface(&joints), (0, 0.0), LO, HI, 3.0), None);
        // Legs that do not reach the floor (a shape lying on its back, feet up) are no stance.
        let (mut joints, pairs) = creature(1.0, &[0.7, -0.7]);
        for p in &mut joints.positions {
            p.y += 0.5;
        }
        assert_eq!(find(&joints, &pairs, &surface(&joints), (0, 0.0), LO, HI, 3.0), None);
    }

    #[test]
    fn the_leg_chains_become_the_templates_mirrored() {
        let (mut joints, mut pairs) = creature(1.0, &[0.7, -0.7]);
        let before = joints.positions.len();
        let old = joints.positions.clone();
        let legs = find(&joints, &pairs, &surface(&joints), (0, 0.0), LO, HI, 3.0).unwrap();
        let roles = apply(&mut joints, &mut pairs, &legs);
        assert_eq!(
            joints.positions.len(),
            before - 12 + 2 * (FRONT_LEG.len() + BACK_LEG.len())
        );
        assert_eq!(roles.len(), joints.positions.len());
        assert_eq!(roles.iter().filter(|r| r.is_some()).count(), 22);
        assert_eq!(roles.iter().filter(|r| **r == Some("thigh")).count(), 2);
        assert_eq!(pairs.len(), joints.positions.len());
        for (j, p) in joints.parents.iter().enumerate() {
            assert!(p.is_none_or(|p| p < j), "parents come first");
        }
        // Every new joint is paired with its mirror image; the front-left shoulder, high in the
        // leg, sits where the template puts it.
        for (j, partner) in pairs.iter().enumerate() {
            if let Some(k) = *partner {
                let (a, b) = (joints.positions[j], joints.positions[k]);
                assert!((a - Vec3::new(-b.x, b.y, b.z)).length() < 1e-5);
                assert_eq!(pairs[k], Some(j));
            }
        }
        let front_left = legs.iter().find(|l| l.frame.front && l.frame.foot.x > 0.0).unwrap();
        let shoulder = front_left.frame.place(&FRONT_LEG[0]);
        assert!(joints.positions.iter().any(|p| p.distance(shoulder) < 1e-6));
        let back_left = legs.iter().find(|l| !l.frame.front && l.frame.foot.x > 0.0).unwrap();
        // The toe is low on the leg: on the leg's own chain (x = 0.2, z = -0.7) at the
        // template's height.
        let toe = on_limb(back_left, &BACK_LEG[5], &old);
        let height = back_left.frame.place(&BACK_LEG[5]).y;
        assert!(toe.distance(Vec3::new(0.2, height, -0.7)) < 1e-5, "{toe}");
        let toe_joint = joints.positions.iter().position(|p| p.distance(toe) < 1e-6).unwrap();
        // The toe ends a chain of six hanging from the back spine joint.
        let mut depth = 0;
        let mut j = toe_joint;
        while pairs[j].is_some() {
            j = joints.parents[j].unwrap();
            depth += 1;
        }
        assert_eq!((depth, joints.positions[j]), (6, Vec3::new(0.0, 1.0, -0.7)));
    }

    #[test]
    fn each_leg_gets_a_mirrored_pole_target_in_front_hanging_from_the_root() {
        let (mut joints, mut pairs) = creature(-1.0, &[0.7, -0.7]);
        let legs = find(&joints, &pairs, &surface(&joints), (0, 0.0), LO, HI, 3.0).unwrap();
        let mut roles = apply(&mut joints, &mut pairs, &legs);
        let before = joints.positions.len();
        add_poles(&mut joints, &mut pairs, &mut roles, &legs);
        assert_eq!(joints.positions.len(), before + 4);
        assert_eq!((pairs.len(), roles.len()), (before + 4, before + 4));
        for j in before..before + 4 {
            assert_eq!(joints.parents[j], Some(0));
            let k = pairs[j].unwrap();
            assert_eq!(pairs[k], Some(j));
            let (a, b) = (joints.positions[j], joints.positions[k]);
            assert!((a - Vec3::new(-b.x, b.y, b.z)).length() < 1e-6);
            // The head is at -z: every pole is ahead of the front feet, off the floor.
            let front = legs
                .iter()
                .find(|l| l.frame.front && (l.frame.foot.x > 0.0) == (a.x > 0.0))
                .unwrap();
            assert!(a.z < front.frame.foot.z && a.y > 0.0, "{a} {:?}", front.frame);
        }
        // The back leg's pole stands just ahead of the front leg's.
        let z = |name| {
            (before..before + 4)
                .find(|&j| roles[j] == Some(name))
                .map(|j| joints.positions[j].z)
                .unwrap()
        };
        assert!(z(BACK_POLE_NAME) < z(FRONT_POLE_NAME));
        assert_eq!(
            roles[before..].iter().filter(|r| **r == Some(FRONT_POLE_NAME)).count(),
            2
        );
        assert_eq!(
            roles[before..].iter().filter(|r| **r == Some(BACK_POLE_NAME)).count(),
            2
        );
    }

    #[test]
    fn only_the_pole_names_are_poles() {
        for name in ["front_leg_pole_L", "back_leg_pole_R", "front_leg_pole"] {
            assert!(is_pole(name), "{name}");
        }
        for name in [
            "front_leg_pole_LL",
            "front_leg",
            "thigh_L",
            "PoleTarget.L",
            "back_leg_pole_X",
        ] {
            assert!(!is_pole(name), "{name}");
        }
    }
}
