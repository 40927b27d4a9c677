//! The standard humanoid skeleton: names, hierarchy, left/right mirroring of the landmarks and
//! the proportion checks that tell a standing humanoid from other shapes.

use super::hand::Finger;
use super::landmarks::{Landmarks, Limbs};
use crate::PlacedSkeleton;
use glam::Vec3;

/// Joint names (Mixamo convention, without the `mixamorig:` prefix), in placement order; the
/// five end sites come last and are only placed on request.
pub const JOINT_NAMES: [&str; 27] = [
    "Hips",
    "Spine",
    "Spine1",
    "Spine2",
    "Neck",
    "Head",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
    "LeftHandTip_End",
    "RightHandTip_End",
    "HeadTop_End",
    "LeftToe_End",
    "RightToe_End",
];

/// Parent of each joint of [`JOINT_NAMES`] (by index).
const PARENTS: [Option<usize>; 27] = [
    None,
    Some(0),
    Some(1),
    Some(2),
    Some(3),
    Some(4),
    Some(3),
    Some(6),
    Some(7),
    Some(8),
    Some(3),
    Some(10),
    Some(11),
    Some(12),
    Some(0),
    Some(14),
    Some(15),
    Some(16),
    Some(0),
    Some(18),
    Some(19),
    Some(20),
    Some(9),
    Some(13),
    Some(5),
    Some(17),
    Some(21),
];

/// Number of joints without end sites.
const CORE: usize = 22;

/// Mirror across the plane x = 0.
fn mirror(p: Vec3) -> Vec3 {
    Vec3::new(-p.x, p.y, p.z)
}

/// Make left and right exact mirror images (the average of each pair), and centre the trunk on
/// the mirror plane.
pub(crate) fn make_symmetric(m: &mut Landmarks) {
    let pair = |l: Vec3, r: Vec3| {
        let avg = 0.5 * (l + mirror(r));
        (avg, mirror(avg))
    };
    let (l, r) = (m.left, m.right);
    let mut left = l;
    let mut right = r;
    macro_rules! sym {
        ($($f:ident),*) => {$(
            let (a, b) = pair(l.$f, r.$f);
            left.$f = a;
            right.$f = b;
        )*};
    }
    sym!(clavicle, upper_arm, elbow, wrist, hand_tip, upper_leg, knee, ankle, toe_base, toe_tip);
    m.left = left;
    m.right = right;
    for p in [&mut m.hips, &mut m.neck, &mut m.head, &mut m.head_top]
        .into_iter()
        .chain(m.spine.iter_mut())
    {
        p.x = 0.0;
    }
}

/// Heads in [`JOINT_NAMES`] order.
fn heads(m: &Landmarks) -> Vec<Vec3> {
    let arm = |s: &Limbs| [s.clavicle, s.upper_arm, s.elbow, s.wrist];
    let leg = |s: &Limbs| [s.upper_leg, s.knee, s.ankle, s.toe_base];
    let mut out = vec![m.hips, m.spine[0], m.spine[1], m.spine[2], m.neck, m.head];
    out.extend(arm(&m.left));
    out.extend(arm(&m.right));
    out.extend(leg(&m.left));
    out.extend(leg(&m.right));
    out.extend([
        m.left.hand_tip,
        m.right.hand_tip,
        m.head_top,
        m.left.toe_tip,
        m.right.toe_tip,
    ]);
    out
}

/// How far the landmark rules put a joint from where artists put it, for the joints whose role
/// every rig agrees on (index in [`JOINT_NAMES`], left side): the median of (placed − artist)
/// over the train humanoids of the data set, in shares of the height, as (up, out, forward).
/// "Out" is away from the mirror plane, along the arm towards the hand tip for the arm's
/// joints. Each asset family (KayKit, Quaternius, MakeHuman, ...) weighs in by one over the
/// square root of its size, so that the largest family's conventions do not decide alone (the
/// plain median moved Mannequiny's elbows far off). Printed by `cargo run --release -p
/// rigml-rig --example humanoid_table -- --roles` (train rows fitted; val only checked: mean
/// CD-J2J 0.0276 -> 0.0266, train 0.0340 -> 0.0312). Left out: the spine above its first joint
/// (`Spine1`, `Spine2`), where rigs with two and with three spine joints disagree on what lies,
/// and the feet (`LeftFoot`, `LeftToeBase`): the artists' ankles are lower and further back
/// (0.011 and 0.010 of the height), and moving ours there made Mannequiny's retargeted soles
/// sink deeper than with its artist rig (mesh penetration 0.0292 H against 0.0217 H on the CMU
/// walk; 0.0122 H without), failing `tests/rig_then_retarget.rs`; with them val would be 0.0256.
const ARTIST_OFFSETS: [(usize, [f32; 3]); 10] = [
    (0, [0.0309, 0.0000, 0.0021]),    // Hips
    (1, [0.0280, 0.0000, 0.0056]),    // Spine
    (4, [-0.0238, 0.0000, 0.0072]),   // Neck
    (5, [-0.0243, 0.0000, 0.0023]),   // Head
    (6, [0.0029, -0.0148, -0.0053]),  // LeftShoulder
    (7, [-0.0047, -0.0048, 0.0021]),  // LeftArm
    (8, [-0.0003, 0.0113, 0.0060]),   // LeftForeArm
    (9, [-0.0016, 0.0159, 0.0019]),   // LeftHand
    (14, [-0.0096, -0.0005, 0.0020]), // LeftUpLeg
    (15, [0.0080, -0.0026, -0.0048]), // LeftLeg
];

/// Move the joints of [`ARTIST_OFFSETS`] (in [`heads`] order) by minus their offset, the right
/// side's joints by the mirror image of their left partner's.
fn correct_offsets(heads: &mut [Vec3], m: &Landmarks) {
    const LEFT_LIMBS: std::ops::RangeInclusive<usize> = 6..=17;
    const ARM: std::ops::RangeInclusive<usize> = 7..=9;
    for &(joint, [up, out, forward]) in &ARTIST_OFFSETS {
        let sides: &[(usize, &Limbs, f32)] = if LEFT_LIMBS.contains(&joint) {
            &[(joint, &m.left, 1.0), (joint + 4, &m.right, -1.0)]
        } else {
            &[(joint, &m.left, 0.0)]
        };
        for &(j, limbs, side) in sides {
            let outward = if ARM.contains(&joint) {
                (limbs.hand_tip - limbs.upper_arm).normalize_or_zero()
            } else {
                Vec3::X * side
            };
            heads[j] -= Vec3::Y * up + outward * out + Vec3::Z * forward;
        }
    }
}

/// Index of `LeftHand` and `RightHand` in [`JOINT_NAMES`].
const HANDS: [usize; 2] = [9, 13];

/// When both hands have the same fingers, make them mirror images (left and right averaged);
/// otherwise drop the fingers of both (a finger found on one side only is not trusted).
pub(crate) fn make_fingers_symmetric(fingers: &mut [Vec<Finger>; 2]) {
    let [left, right] = fingers;
    let same = left.len() == right.len() && left.iter().zip(right.iter()).all(|(a, b)| a.name == b.name);
    if !same {
        left.clear();
        right.clear();
        return;
    }
    for (a, b) in left.iter_mut().zip(right.iter_mut()) {
        for k in 0..3 {
            let avg = 0.5 * (a.joints[k] + mirror(b.joints[k]));
            a.joints[k] = avg;
            b.joints[k] = mirror(avg);
        }
    }
}

/// The placed skeleton in the character frame (forward = +z): the core joints, the end sites
/// when asked for, then each hand's fingers (`LeftHandIndex1`..`3`, ...). With `offsets` the
/// core joints are moved by [`ARTIST_OFFSETS`].
pub(crate) fn build(m: &Landmarks, end_sites: bool, offsets: bool, fingers: &[Vec<Finger>; 2]) -> PlacedSkeleton {
    let count = if end_sites { PARENTS.len() } else { CORE };
    let mut all = heads(m);
    if offsets {
        correct_offsets(&mut all, m);
    }
    let mut placed = PlacedSkeleton {
        names: JOINT_NAMES[..count].iter().map(|s| s.to_string()).collect(),
        parents: PARENTS[..count].to_vec(),
        heads: all[..count].to_vec(),
        forward: Vec3::Z,
    };
    for ((side, hand), list) in ["Left", "Right"].iter().zip(HANDS).zip(fingers) {
        for finger in list {
            let mut parent = hand;
            for (k, head) in finger.joints.iter().enumerate() {
                placed.names.push(format!("{side}Hand{}{}", finger.name, k + 1));
                placed.parents.push(Some(parent));
                placed.heads.push(*head);
                parent = placed.heads.len() - 1;
            }
        }
    }
    placed
}

/// Refuse landmarks that do not make a standing humanoid in a rest pose: the trunk must rise
/// from the hips to the head, the legs reach the ground below the hips with the feet under
/// them, the arms leave the trunk above the hips without the hands raised, and the limbs be
/// long enough. Heights are in units of the character's height.
pub(crate) fn check_proportions(m: &Landmarks) -> Result<(), String> {
    let trunk = m.head - m.hips;
    if trunk.y < 0.1 || trunk.y < 2.0 * Vec3::new(trunk.x, 0.0, trunk.z).length() {
        return Err(format!(
            "the trunk does not rise from the hips to the head (hips {:.2}, head {:.2} of the height)",
            m.hips.y + 0.5,
            m.head.y + 0.5
        ));
    }
    for (side, s) in [("left", &m.left), ("right", &m.right)] {
        let leg = s.upper_leg.distance(s.knee) + s.knee.distance(s.ankle);
        if leg < 0.06 || s.upper_leg.y < s.ankle.y + 0.04 {
            return Err(format!("the {side} leg is too short ({leg:.2} of the height)"));
        }
        let arm = s.upper_arm.distance(s.elbow) + s.elbow.distance(s.wrist);
        if arm < super::landmarks::MIN_ARM {
            return Err(format!("the {side} arm is too short ({arm:.2} of the height)"));
        }
        // Rest poses: feet under the hips (not splayed like a spider's legs), hands not raised
        // above the shoulders.
        if (s.ankle.x - s.upper_leg.x).abs() > 0.3 * leg {
            return Err(format!("the {side} foot is not under the hip"));
        }
        if s.wrist.y > s.upper_arm.y + 0.25 * arm {
            return Err(format!("the {side} hand is raised above the shoulder"));
        }
        if s.upper_arm.y < m.hips.y || s.upper_arm.y > m.head_top.y {
            return Err(format!("the {side} arm does not leave the trunk between hips and head"));
        }
    }
    if m.left.upper_arm.x <= m.right.upper_arm.x || m.left.upper_leg.x <= m.right.upper_leg.x {
        return Err("left and right limbs cross the mirror plane".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A T-pose figure of unit height (y from -0.5 to 0.5), left side at +x.
    fn figure() -> Landmarks {
        let side = |s: f32| Limbs {
            clavicle: Vec3::new(0.03 * s, 0.25, 0.0),
            upper_arm: Vec3::new(0.09 * s, 0.25, 0.0),
            elbow: Vec3::new(0.24 * s, 0.25, 0.0),
            wrist: Vec3::new(0.38 * s, 0.25, 0.0),
            hand_tip: Vec3::new(0.46 * s, 0.25, 0.0),
            upper_leg: Vec3::new(0.06 * s, 0.0, 0.0),
            knee: Vec3::new(0.07 * s, -0.23, 0.01),
            ankle: Vec3::new(0.08 * s, -0.45, -0.02),
            toe_base: Vec3::new(0.08 * s, -0.49, 0.04),
            toe_tip: Vec3::new(0.08 * s, -0.5, 0.09),
        };
        Landmarks {
            hips: Vec3::ZERO,
            spine: [0.07, 0.14, 0.21].map(|y| Vec3::new(0.0, y, 0.0)),
            neck: Vec3::new(0.0, 0.29, 0.0),
            head: Vec3::new(0.0, 0.33, 0.0),
            head_top: Vec3::new(0.0, 0.5, 0.0),
            left: side(1.0),
            right: side(-1.0),
        }
    }

    #[test]
    fn standing_figures_pass_and_other_shapes_are_refused() {
        assert_eq!(check_proportions(&figure()), Ok(()));
        let mut lying = figure();
        lying.head = Vec3::new(0.0, 0.02, 0.3);
        assert!(check_proportions(&lying).unwrap_err().contains("trunk"));
        let mut spider = figure();
        spider.left.ankle.x = 0.3;
        assert!(check_proportions(&spider).unwrap_err().contains("foot"));
        let mut raised = figure();
        raised.left.wrist.y = 0.45;
        assert!(check_proportions(&raised).unwrap_err().contains("raised"));
        let mut crossed = figure();
        crossed.left.upper_leg.x = -0.1;
        assert!(check_proportions(&crossed).is_err());
    }

    #[test]
    fn symmetric_landmarks_mirror_and_the_skeleton_is_well_formed() {
        let mut m = figure();
        m.left.elbow.y += 0.02;
        m.hips.x = 0.01;
        make_symmetric(&mut m);
        assert_eq!(m.left.elbow, mirror(m.right.elbow));
        assert!((m.left.elbow.y - 0.26).abs() < 1e-6 && m.hips.x == 0.0);
        let finger = Finger {
            name: "Index",
            joints: [
                Vec3::new(0.4, 0.25, 0.0),
                Vec3::new(0.42, 0.25, 0.0),
                Vec3::new(0.44, 0.25, 0.0),
            ],
        };
        let mut fingers = [vec![finger], vec![]];
        make_fingers_symmetric(&mut fingers);
        assert!(
            fingers.iter().all(Vec::is_empty),
            "a finger on one side only is dropped"
        );
        let mirrored = Finger {
            joints: finger.joints.map(mirror),
            ..finger
        };
        let mut fingers = [vec![finger], vec![mirrored]];
        make_fingers_symmetric(&mut fingers);
        let placed = build(&m, true, true, &fingers);
        placed.validate().unwrap();
        assert_eq!(placed.len(), JOINT_NAMES.len() + 6);
        let at = |name: &str| placed.names.iter().position(|n| n == name).unwrap();
        assert_eq!(placed.parents[at("LeftHandIndex1")], Some(at("LeftHand")));
        assert_eq!(placed.parents[at("RightHandIndex3")], Some(at("RightHandIndex2")));
        assert_eq!(placed.parents[at("HeadTop_End")], Some(at("Head")));
        assert_eq!(build(&m, false, true, &[vec![], vec![]]).len(), 22);
    }

    #[test]
    fn artist_offsets_keep_left_and_right_mirrored_and_move_only_the_listed_joints() {
        let m = figure();
        let none = [vec![], vec![]];
        let (raw, moved) = (build(&m, false, false, &none), build(&m, false, true, &none));
        for (l, r) in [
            ("LeftArm", "RightArm"),
            ("LeftHand", "RightHand"),
            ("LeftFoot", "RightFoot"),
        ] {
            let at = |name: &str| moved.heads[moved.names.iter().position(|n| n == name).unwrap()];
            assert!(at(l).distance(mirror(at(r))) < 1e-6, "{l}/{r} not mirrored");
        }
        for (j, (a, b)) in raw.heads.iter().zip(&moved.heads).enumerate() {
            let listed = ARTIST_OFFSETS
                .iter()
                .any(|&(k, _)| k == j || (6..=17).contains(&k) && k + 4 == j);
            assert_eq!(a != b, listed, "{}", raw.names[j]);
        }
        // The landmark rules put the head low (offset negative): the artists' head is higher.
        assert!(moved.heads[5].y > raw.heads[5].y);
    }
}
