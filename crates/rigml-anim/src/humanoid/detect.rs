//! Finding humanoid roles from joint names, with a topology and rest-pose fallback.

use super::Role;
use glam::Vec3;
use rigml_core::Skeleton;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Left,
    Right,
}

/// Left/right from a joint name, and the name with the side marker removed (lower case,
/// alphanumerics only).
pub(super) fn side_and_stem(name: &str) -> (Option<Side>, String) {
    // Drop namespaces like "mixamorig:" or "Armature|".
    let base = name.rsplit([':', '|']).next().unwrap_or(name);
    let chars: Vec<char> = base.chars().collect();
    let lower = base.to_ascii_lowercase();
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    for (word, side) in [("left", Side::Left), ("right", Side::Right)] {
        if let Some(at) = lower.find(word) {
            let stem = format!("{}{}", &lower[..at], &lower[at + word.len()..]);
            return (Some(side), clean(&stem));
        }
    }
    // Separated single letters: "hand.l", "Hand_R", "arm_joint_L_1", "L_Hand", "hand l".
    let tokens: Vec<String> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    if tokens.len() > 1 {
        for (letter, side) in [("l", Side::Left), ("r", Side::Right)] {
            if tokens.iter().any(|t| t == letter) {
                let stem: String = tokens.iter().filter(|t| *t != letter).cloned().collect();
                return (Some(side), stem);
            }
        }
    }
    // CamelCase prefix: "lThigh", "LHipJoint", "rShldr".
    if chars.len() > 2 && chars[1].is_ascii_uppercase() && chars[2].is_ascii_lowercase() {
        let side = match chars[0] {
            'l' | 'L' => Some(Side::Left),
            'r' | 'R' => Some(Side::Right),
            _ => None,
        };
        if side.is_some() {
            return (side, clean(&base[1..]));
        }
    }
    (None, clean(base))
}

const FINGER_WORDS: [&str; 10] = [
    "thumb", "index", "middle", "mid", "ring", "pinky", "little", "finger", "slot", "palm",
];
/// Helper joints that are never a body bone: end sites, IK poles/targets, twist bones.
pub(super) fn is_helper(stem: &str) -> bool {
    stem.ends_with("end")
        || stem.ends_with("nub")
        || stem.starts_with("ik")
        || stem.ends_with("ik")
        || stem.contains("pole")
        || stem.contains("target")
        || stem.contains("twist")
        || stem.contains("control")
        || stem.contains("ctrl")
}

fn has_any(stem: &str, words: &[&str]) -> bool {
    words.iter().any(|w| stem.contains(w))
}

fn is_hand_name(stem: &str) -> bool {
    (stem.contains("hand") || stem.contains("wrist")) && !has_any(stem, &FINGER_WORDS) && !is_helper(stem)
}

fn is_foot_name(stem: &str) -> bool {
    (stem.contains("foot") || stem.contains("ankle"))
        && !stem.contains("forefoot")
        && !stem.contains("toe")
        && !is_helper(stem)
}

fn is_upper_arm_name(stem: &str) -> bool {
    stem.contains("upperarm") || stem.contains("shldr") || stem == "arm"
}

fn is_lower_arm_name(stem: &str) -> bool {
    stem.contains("lowerarm") || stem.contains("forearm") || stem.contains("elbow")
}

fn is_upper_leg_name(stem: &str) -> bool {
    stem.contains("upperleg") || stem.contains("upleg") || stem.contains("thigh")
}

fn is_lower_leg_name(stem: &str) -> bool {
    stem.contains("lowerleg")
        || stem.contains("calf")
        || stem.contains("shin")
        || stem.contains("knee")
        || stem == "leg"
}

fn is_head_name(stem: &str) -> bool {
    stem.contains("head") && !is_helper(stem) && !stem.contains("top")
}

fn is_hips_name(stem: &str) -> bool {
    matches!(stem, "hips" | "hip" | "pelvis" | "bip01pelvis" | "cog")
}

struct Info {
    sides: Vec<Option<Side>>,
    stems: Vec<String>,
    depth: Vec<usize>,
    children: Vec<Vec<usize>>,
    rest: Vec<Vec3>,
}

impl Info {
    fn new(skeleton: &Skeleton) -> Info {
        let n = skeleton.joint_count();
        let (sides, stems) = skeleton.names.iter().map(|n| side_and_stem(n)).unzip();
        let mut depth = vec![0; n];
        for j in 0..n {
            if let Some(p) = skeleton.parents[j] {
                depth[j] = depth.get(p).copied().unwrap_or(0) + 1;
            }
        }
        let rest = skeleton.rest_world().iter().map(|m| m.w_axis.truncate()).collect();
        Info {
            sides,
            stems,
            depth,
            children: skeleton.children(),
            rest,
        }
    }

    /// The shallowest joint on `side` whose stem satisfies `pred` (ties: lowest index).
    fn shallowest(&self, side: Option<Side>, pred: impl Fn(&str) -> bool) -> Option<usize> {
        (0..self.stems.len())
            .filter(|&j| self.sides[j] == side && pred(&self.stems[j]))
            .min_by_key(|&j| (self.depth[j], j))
    }
}

pub(super) fn parent(skeleton: &Skeleton, j: usize) -> Option<usize> {
    skeleton.parents.get(j).copied().flatten()
}

/// The strict ancestors of `j`, nearest first.
pub(super) fn ancestors(skeleton: &Skeleton, j: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(parent(skeleton, j), move |&a| parent(skeleton, a))
}

/// Is `a` an ancestor of (or equal to) `b`?
pub(crate) fn is_ancestor(skeleton: &Skeleton, a: usize, b: usize) -> bool {
    let mut at = Some(b);
    while let Some(j) = at {
        if j == a {
            return true;
        }
        at = parent(skeleton, j);
    }
    false
}

/// Joints from `top` down to `bottom`, both included, if `top` is an ancestor of `bottom`.
pub(super) fn path(skeleton: &Skeleton, top: usize, bottom: usize) -> Option<Vec<usize>> {
    let mut out = vec![bottom];
    let mut at = bottom;
    while at != top {
        at = parent(skeleton, at)?;
        out.push(at);
    }
    out.reverse();
    Some(out)
}

pub(super) fn lowest_common_ancestor(skeleton: &Skeleton, a: usize, b: usize) -> Option<usize> {
    let mut at = Some(a);
    while let Some(j) = at {
        if is_ancestor(skeleton, j, b) {
            return Some(j);
        }
        at = parent(skeleton, j);
    }
    None
}

/// Fill the unset entries of `table` from names and topology. Never fails: what stays unset is
/// reported by [`build`].
pub(super) fn detect(skeleton: &Skeleton, table: &mut [Option<usize>; 22]) {
    let info = Info::new(skeleton);
    let set = |table: &mut [Option<usize>; 22], role: Role, j: Option<usize>| {
        if table[role.index()].is_none() {
            table[role.index()] = j;
        }
    };
    let limbs = [
        (
            Side::Left,
            [Role::LeftUpperLeg, Role::LeftLowerLeg, Role::LeftFoot, Role::LeftToes],
            true,
        ),
        (
            Side::Right,
            [
                Role::RightUpperLeg,
                Role::RightLowerLeg,
                Role::RightFoot,
                Role::RightToes,
            ],
            true,
        ),
        (
            Side::Left,
            [
                Role::LeftShoulder,
                Role::LeftUpperArm,
                Role::LeftLowerArm,
                Role::LeftHand,
            ],
            false,
        ),
        (
            Side::Right,
            [
                Role::RightShoulder,
                Role::RightUpperArm,
                Role::RightLowerArm,
                Role::RightHand,
            ],
            false,
        ),
    ];
    // Limb ends first: the hand or foot, from names, else from the rest pose.
    for (side, roles, is_leg) in limbs {
        let end_role = roles[if is_leg { 2 } else { 3 }];
        let named = if is_leg {
            info.shallowest(Some(side), is_foot_name)
        } else {
            info.shallowest(Some(side), is_hand_name)
        };
        let end = table[end_role.index()]
            .or(named)
            .or_else(|| {
                (!is_leg)
                    .then(|| hand_from_finger_roots(skeleton, &info, side))
                    .flatten()
            })
            .or_else(|| fallback_end(skeleton, &info, side, is_leg, table));
        let Some(end) = end else { continue };
        set(table, end_role, Some(end));
        let lower_role = roles[if is_leg { 1 } else { 2 }];
        let upper_role = roles[if is_leg { 0 } else { 1 }];
        // Prefer joints named like the segment (split or twist-segmented limbs), shallowest
        // first, on this side above the end; else the end's parent and grandparent.
        let above: Vec<usize> = ancestors(skeleton, end)
            .take_while(|&a| info.sides[a] == Some(side))
            .collect();
        let named_in = |pred: fn(&str) -> bool| above.iter().rev().copied().find(|&a| pred(&info.stems[a]));
        let (upper_named, lower_named) = if is_leg {
            (named_in(is_upper_leg_name), named_in(is_lower_leg_name))
        } else {
            (named_in(is_upper_arm_name), named_in(is_lower_arm_name))
        };
        let named_pair = match (upper_named, lower_named) {
            (Some(u), Some(l)) if u != l && is_ancestor(skeleton, u, l) => Some((u, l)),
            _ => None,
        }
        .or_else(|| {
            let given = table[lower_role.index()].is_some() || table[upper_role.index()].is_some();
            (!given)
                .then(|| detached_segments(skeleton, &info, side, is_leg, end))
                .flatten()
        });
        let lower = table[lower_role.index()]
            .or(named_pair.map(|p| p.1))
            .or_else(|| parent(skeleton, end));
        set(table, lower_role, lower);
        let upper = table[upper_role.index()]
            .or(named_pair.map(|p| p.0))
            .or_else(|| lower.and_then(|l| parent(skeleton, l)));
        set(table, upper_role, upper);
        if is_leg {
            // Toes: the foot's first child, preferring one named like a toe or ball.
            let kids = info.children.get(end).cloned().unwrap_or_default();
            let toe = kids
                .iter()
                .copied()
                .find(|&k| info.stems[k].contains("toe") || info.stems[k].contains("ball"))
                .or_else(|| kids.iter().copied().find(|&k| !is_helper(&info.stems[k])));
            set(table, roles[3], toe);
        } else if let Some(up) = upper {
            // Shoulder (clavicle): the upper arm's parent when it is still on this side.
            let shoulder = parent(skeleton, up).filter(|&s| info.sides[s] == Some(side));
            set(table, roles[0], shoulder);
        }
    }
    // Hips: a hips-named joint above both legs, else the legs' common ancestor.
    let legs = (table[Role::LeftUpperLeg.index()], table[Role::RightUpperLeg.index()]);
    // Hips: a hips-named joint outside the legs (above them, or beside them under a common
    // root as in Quaternius rigs), else the legs' common ancestor.
    let in_legs = |j: usize| match legs {
        (Some(l), Some(r)) => is_ancestor(skeleton, l, j) || is_ancestor(skeleton, r, j),
        _ => false,
    };
    let hips = info
        .shallowest(None, is_hips_name)
        .filter(|&j| !in_legs(j))
        .or_else(|| match legs {
            (Some(l), Some(r)) => lowest_common_ancestor(skeleton, l, r),
            _ => None,
        });
    set(table, Role::Hips, hips);
    // Head: a head-named joint, else the highest non-side joint above the arms' branch.
    let branch = match (table[Role::LeftUpperArm.index()], table[Role::RightUpperArm.index()]) {
        (Some(l), Some(r)) => lowest_common_ancestor(skeleton, l, r),
        _ => None,
    };
    let head = info
        .shallowest(None, is_head_name)
        .filter(|&h| branch.is_none_or(|b| is_ancestor(skeleton, b, h) && b != h))
        .or_else(|| {
            let b = branch?;
            (0..skeleton.joint_count())
                .filter(|&j| j != b && info.sides[j].is_none() && is_ancestor(skeleton, b, j))
                .filter(|&j| {
                    ![Role::LeftUpperArm, Role::RightUpperArm]
                        .iter()
                        .any(|r| table[r.index()].is_some_and(|a| is_ancestor(skeleton, a, j)))
                })
                .max_by(|&a, &b| info.rest[a].y.total_cmp(&info.rest[b].y))
        });
    set(table, Role::Head, head);
}

/// The upper and lower segments of a limb whose end does not hang below them: rigs that drive a
/// foot or hand by IK often parent it to the root (Quaternius' `Foot.L` beside `Body`, while
/// `UpperLeg.L` → `LowerLeg.L` hang from `Body`). The segments are the shallowest joints on
/// `side` named like them, the lower below the upper, with `end` below neither and, at rest,
/// continuing the limb past the knee or elbow.
fn detached_segments(skeleton: &Skeleton, info: &Info, side: Side, is_leg: bool, end: usize) -> Option<(usize, usize)> {
    type NameTest = fn(&str) -> bool;
    let (upper_name, lower_name): (NameTest, NameTest) = if is_leg {
        (is_upper_leg_name, is_lower_leg_name)
    } else {
        (is_upper_arm_name, is_lower_arm_name)
    };
    let upper = info.shallowest(Some(side), |s| upper_name(s) && !is_helper(s))?;
    let lower = (0..skeleton.joint_count())
        .filter(|&j| {
            j != upper
                && info.sides[j] == Some(side)
                && lower_name(&info.stems[j])
                && !is_helper(&info.stems[j])
                && is_ancestor(skeleton, upper, j)
        })
        .min_by_key(|&j| (info.depth[j], j))?;
    // At rest the end must continue the limb: about as far past the lower joint as that is past
    // the upper one, and not off to the side (an elbow's or knee's pole target is not a hand).
    let (thigh, shin) = (info.rest[lower] - info.rest[upper], info.rest[end] - info.rest[lower]);
    let ratio = shin.length() / thigh.length().max(f32::MIN_POSITIVE);
    let along = thigh.normalize_or_zero().dot(shin.normalize_or_zero()) > 0.0;
    (!is_ancestor(skeleton, upper, end) && (0.4..=2.5).contains(&ratio) && along).then_some((upper, lower))
}

/// Is `stem` a finger's (or palm's) name, and not a helper's?
pub(super) fn is_finger_name(stem: &str) -> bool {
    has_any(stem, &FINGER_WORDS) && !is_helper(stem)
}

/// The hand of an arm that has no hand joint: Quaternius' Ultimate Monsters, mechs and cowboy
/// hang their finger chains (and a palm) straight from the forearm (`LowerArm.L` → `Index1.L`,
/// `Middle1.L`, `Thumb1.L`), so the forearm is the lower arm and a finger root stands for the
/// hand: the one named like a palm, else like the middle finger, else the non-thumb root nearest
/// the middle of all of them at rest. Needs a joint on `side` named like a forearm with at least
/// two finger-named children (taking the forearm itself for the hand, as the rest-pose fallback
/// does, would shift the whole arm one joint up: the clavicle as the upper arm).
fn hand_from_finger_roots(skeleton: &Skeleton, info: &Info, side: Side) -> Option<usize> {
    let fingers_of = |j: usize| -> Vec<usize> {
        info.children[j]
            .iter()
            .copied()
            .filter(|&k| is_finger_name(&info.stems[k]))
            .collect()
    };
    let forearm = (0..skeleton.joint_count())
        .filter(|&j| {
            info.sides[j] == Some(side)
                && is_lower_arm_name(&info.stems[j])
                && !is_helper(&info.stems[j])
                && fingers_of(j).len() >= 2
        })
        .min_by_key(|&j| (info.depth[j], j))?;
    let fingers = fingers_of(forearm);
    let named = |word: &str| fingers.iter().copied().find(|&k| info.stems[k].contains(word));
    named("palm").or_else(|| named("middle")).or_else(|| {
        let centre = fingers.iter().map(|&k| info.rest[k]).sum::<Vec3>() / fingers.len() as f32;
        fingers
            .iter()
            .copied()
            .filter(|&k| !info.stems[k].contains("thumb"))
            .min_by(|&a, &b| info.rest[a].distance(centre).total_cmp(&info.rest[b].distance(centre)))
    })
}

/// Limb end from the rest pose when no name matches: among joints on `side` (by name, else by
/// the sign of x relative to the skeleton's centre), the leaf chain that reaches lowest (legs)
/// or farthest sideways (arms), excluding joints already in a leg. On that chain the end is,
/// for arms, the first joint with several children (a hand with fingers); otherwise the joint
/// ending the longest two consecutive bones. Assumes a Y-up, +Z-facing rest pose.
fn fallback_end(
    skeleton: &Skeleton,
    info: &Info,
    side: Side,
    is_leg: bool,
    table: &[Option<usize>; 22],
) -> Option<usize> {
    let n = skeleton.joint_count();
    if n == 0 {
        return None;
    }
    let centre_x = info.rest.iter().map(|p| p.x).sum::<f32>() / n as f32;
    let on_side = |j: usize| match info.sides[j] {
        Some(s) => s == side,
        None => {
            let dx = info.rest[j].x - centre_x;
            // glTF characters face +Z, so their left is +X.
            if side == Side::Left {
                dx > 0.0
            } else {
                dx < 0.0
            }
        }
    };
    let in_leg = |j: usize| {
        [Role::LeftUpperLeg, Role::RightUpperLeg]
            .iter()
            .filter_map(|r| table[r.index()])
            .any(|u| is_ancestor(skeleton, u, j))
    };
    let leaves = (0..n).filter(|&j| info.children[j].is_empty() && on_side(j) && (is_leg || !in_leg(j)));
    let leaf = if is_leg {
        leaves.min_by(|&a, &b| info.rest[a].y.total_cmp(&info.rest[b].y))?
    } else {
        leaves.max_by(|&a, &b| {
            (info.rest[a].x - centre_x)
                .abs()
                .total_cmp(&(info.rest[b].x - centre_x).abs())
        })?
    };
    // This side's chain, from where it leaves the trunk down to the leaf.
    let mut chain = vec![leaf];
    let mut at = leaf;
    while let Some(p) = parent(skeleton, at) {
        if !on_side(p) || info.children[p].len() > 1 && info.sides[p].is_none() {
            break;
        }
        chain.push(p);
        at = p;
    }
    chain.reverse();
    if !is_leg {
        if let Some(hand) = chain.iter().copied().find(|&j| info.children[j].len() > 1) {
            return Some(hand);
        }
    }
    // The limb's two long bones (thigh + shin, upper arm + forearm) are the longest
    // consecutive pair; the foot or hand ends them.
    let bone = |j: usize| parent(skeleton, j).map_or(0.0, |p| info.rest[j].distance(info.rest[p]));
    chain
        .windows(2)
        .max_by(|a, b| (bone(a[0]) + bone(a[1])).total_cmp(&(bone(b[0]) + bone(b[1]))))
        .map(|w| w[1])
        .or(Some(leaf))
}
