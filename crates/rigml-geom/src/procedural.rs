//! A procedural humanoid built from our own geometry code: the `rigml demo` character.
//!
//! The figure is 1.8 m tall, Y up, facing +Z (glTF convention), in an A-pose. Its skeleton uses
//! the standard humanoid bone names (VRM / Unity `HumanBodyBones`: `hips`, `spine`, `chest`,
//! `neck`, `head`, `leftUpperArm`, …). The mesh is seven closed tubes (torso with head, two
//! arms, two legs, two feet), each one continuous surface across the joints it spans, so bends
//! at elbows and knees stay welded. Skin weights come from the generation itself: each ring of
//! a tube belongs to the joint whose stretch of the limb it lies on and blends smoothly into the
//! next joint around each boundary (at most two influences per vertex, exactly normalised).
//! A one-second in-place walk cycle is attached.

mod cuboid;
mod tube;
mod walk;

pub use cuboid::{append_cuboid, cuboid};
pub use walk::WALK_CLIP_NAME;

use glam::{Mat4, Vec3};
use rigml_core::skin::SkinBuilder;
use rigml_core::{Character, CoreError, Mesh, Skeleton, Transform};
use tube::Tube;

/// Name of the demo character.
pub const DEMO_NAME: &str = "rigml-demo";

/// Joint indices of the demo skeleton.
pub(crate) mod joint {
    pub const HIPS: usize = 0;
    pub const SPINE: usize = 1;
    pub const CHEST: usize = 2;
    pub const NECK: usize = 3;
    pub const HEAD: usize = 4;

    /// The joints of one side of the body.
    pub struct Side {
        pub shoulder: usize,
        pub upper_arm: usize,
        pub lower_arm: usize,
        pub hand: usize,
        pub upper_leg: usize,
        pub lower_leg: usize,
        pub foot: usize,
        pub toes: usize,
    }

    pub const LEFT: Side = Side {
        shoulder: 5,
        upper_arm: 6,
        lower_arm: 7,
        hand: 8,
        upper_leg: 13,
        lower_leg: 14,
        foot: 15,
        toes: 16,
    };

    pub const RIGHT: Side = Side {
        shoulder: 9,
        upper_arm: 10,
        lower_arm: 11,
        hand: 12,
        upper_leg: 17,
        lower_leg: 18,
        foot: 19,
        toes: 20,
    };
}

/// Joint names in skeleton order (parents first).
pub const JOINT_NAMES: [&str; 21] = [
    "hips",
    "spine",
    "chest",
    "neck",
    "head",
    "leftShoulder",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightShoulder",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "leftToes",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
    "rightToes",
];

/// Body measurements in metres (left side; the right side mirrors x).
mod body {
    /// Arms hang this many degrees below horizontal in the rest A-pose.
    pub const ARM_DROP_DEGREES: f32 = 40.0;
    pub const UPPER_ARM: f32 = 0.27;
    pub const LOWER_ARM: f32 = 0.25;
    pub const HAND: f32 = 0.16;
    /// How far the arm tube reaches back from the shoulder joint into the chest.
    pub const ARM_ROOT: f32 = 0.10;
    pub const HIP_SOCKET: [f32; 3] = [0.09, 0.91, 0.0];
    pub const KNEE_HEIGHT: f32 = 0.50;
    pub const ANKLE_HEIGHT: f32 = 0.09;
    /// How far the leg tube reaches up into the pelvis above the hip socket.
    pub const LEG_ROOT: f32 = 0.06;
    /// How far the leg tube continues below the ankle (into the foot).
    pub const LEG_TIP: f32 = 0.05;
    pub const HEEL: [f32; 3] = [0.09, 0.045, -0.03];
    pub const BALL_Z: f32 = 0.12;
    pub const TOE_TIP: [f32; 3] = [0.09, 0.03, 0.16];
    /// Bottom and top of the torso tube's body (caps extend beyond).
    pub const TORSO_BOTTOM: f32 = 0.86;
    pub const TORSO_TOP: f32 = 1.72;
}

/// Model-space rest positions of the joints, in [`JOINT_NAMES`] order.
fn joint_positions() -> [Vec3; 21] {
    let mut p = [Vec3::ZERO; 21];
    p[joint::HIPS] = Vec3::new(0.0, 0.95, 0.0);
    p[joint::SPINE] = Vec3::new(0.0, 1.05, 0.0);
    p[joint::CHEST] = Vec3::new(0.0, 1.25, 0.0);
    p[joint::NECK] = Vec3::new(0.0, 1.46, 0.0);
    p[joint::HEAD] = Vec3::new(0.0, 1.56, 0.0);
    for (side, mirror) in [(&joint::LEFT, 1.0), (&joint::RIGHT, -1.0)] {
        let m = Vec3::new(mirror, 1.0, 1.0);
        let arm = arm_direction(mirror);
        p[side.shoulder] = Vec3::new(0.04, 1.41, 0.0) * m;
        p[side.upper_arm] = Vec3::new(0.19, 1.41, 0.0) * m;
        p[side.lower_arm] = p[side.upper_arm] + arm * body::UPPER_ARM;
        p[side.hand] = p[side.lower_arm] + arm * body::LOWER_ARM;
        let hip = Vec3::from_array(body::HIP_SOCKET) * m;
        p[side.upper_leg] = hip;
        p[side.lower_leg] = Vec3::new(hip.x, body::KNEE_HEIGHT, 0.0);
        p[side.foot] = Vec3::new(hip.x, body::ANKLE_HEIGHT, 0.0);
        p[side.toes] = Vec3::new(hip.x, 0.03, body::BALL_Z);
    }
    p
}

/// Unit direction of the left (`mirror` = 1) or right (−1) arm in the rest A-pose.
fn arm_direction(mirror: f32) -> Vec3 {
    let a = body::ARM_DROP_DEGREES.to_radians();
    Vec3::new(mirror * a.cos(), -a.sin(), 0.0)
}

/// The demo skeleton: 21 joints, rest = bind, identity local rotations.
pub fn skeleton() -> Skeleton {
    let world = joint_positions();
    let mut parents = vec![None; JOINT_NAMES.len()];
    for (j, p) in [
        (joint::SPINE, joint::HIPS),
        (joint::CHEST, joint::SPINE),
        (joint::NECK, joint::CHEST),
    ] {
        parents[j] = Some(p);
    }
    parents[joint::HEAD] = Some(joint::NECK);
    for side in [&joint::LEFT, &joint::RIGHT] {
        parents[side.shoulder] = Some(joint::CHEST);
        parents[side.upper_arm] = Some(side.shoulder);
        parents[side.lower_arm] = Some(side.upper_arm);
        parents[side.hand] = Some(side.lower_arm);
        parents[side.upper_leg] = Some(joint::HIPS);
        parents[side.lower_leg] = Some(side.upper_leg);
        parents[side.foot] = Some(side.lower_leg);
        parents[side.toes] = Some(side.foot);
    }
    let rest_local = parents
        .iter()
        .zip(&world)
        .map(|(parent, &w)| Transform::from_translation(w - parent.map_or(Vec3::ZERO, |p| world[p])))
        .collect();
    let mut skeleton = Skeleton {
        names: JOINT_NAMES.iter().map(|n| n.to_string()).collect(),
        parents,
        rest_local,
        inverse_bind: vec![Mat4::IDENTITY; JOINT_NAMES.len()],
    };
    skeleton.bind_to_rest();
    skeleton
}

/// The tubes making up the body, in mesh part order.
fn tubes() -> Vec<Tube> {
    let p = joint_positions();
    let j = |i: usize| i as u32;
    let torso_length = body::TORSO_TOP - body::TORSO_BOTTOM;
    let above = |y: f32| y - body::TORSO_BOTTOM;
    let mut tubes = vec![Tube {
        name: "torso",
        start: Vec3::new(0.0, body::TORSO_BOTTOM, 0.0),
        direction: Vec3::Y,
        length: torso_length,
        front: Vec3::Z,
        // (height above the tube start, half-width, half-depth): pelvis, waist, chest,
        // shoulders, neck, head.
        profile: vec![
            (0.00, 0.14, 0.10),
            (0.09, 0.16, 0.11),
            (0.22, 0.135, 0.095),
            (0.39, 0.155, 0.105),
            (0.52, 0.17, 0.10),
            (0.59, 0.08, 0.065),
            (0.64, 0.05, 0.05),
            (0.71, 0.08, 0.095),
            (0.79, 0.09, 0.105),
            (0.86, 0.07, 0.08),
        ],
        joints: [joint::HIPS, joint::SPINE, joint::CHEST, joint::NECK, joint::HEAD]
            .iter()
            .map(|&i| (j(i), if i == joint::HIPS { 0.0 } else { above(p[i].y) }))
            .collect(),
        parent: None,
        around: 24,
        spacing: 0.02,
    }];
    for (side, mirror, arm_name, leg_name, foot_name) in [
        (&joint::LEFT, 1.0, "leftArm", "leftLeg", "leftFoot"),
        (&joint::RIGHT, -1.0, "rightArm", "rightLeg", "rightFoot"),
    ] {
        let arm = arm_direction(mirror);
        let elbow = body::ARM_ROOT + body::UPPER_ARM;
        let wrist = elbow + body::LOWER_ARM;
        tubes.push(Tube {
            name: arm_name,
            start: p[side.upper_arm] - arm * body::ARM_ROOT,
            direction: arm,
            length: wrist + body::HAND,
            front: Vec3::Z,
            // (distance along the arm, half-thickness in the arm's vertical plane,
            // half-width front to back): shoulder, biceps, elbow, forearm, wrist, flat hand.
            profile: vec![
                (0.00, 0.05, 0.05),
                (body::ARM_ROOT, 0.05, 0.05),
                (0.20, 0.045, 0.045),
                (elbow, 0.035, 0.035),
                (elbow + 0.08, 0.038, 0.036),
                (wrist, 0.027, 0.022),
                (wrist + 0.08, 0.017, 0.04),
                (wrist + body::HAND, 0.015, 0.035),
            ],
            joints: vec![
                (j(side.upper_arm), body::ARM_ROOT),
                (j(side.lower_arm), elbow),
                (j(side.hand), wrist),
            ],
            parent: Some(j(side.shoulder)),
            around: 16,
            spacing: 0.02,
        });
        let hip = p[side.upper_leg];
        let knee = body::LEG_ROOT + (hip.y - body::KNEE_HEIGHT);
        let ankle = body::LEG_ROOT + (hip.y - body::ANKLE_HEIGHT);
        tubes.push(Tube {
            name: leg_name,
            start: hip + Vec3::Y * body::LEG_ROOT,
            direction: Vec3::NEG_Y,
            length: ankle + body::LEG_TIP,
            front: Vec3::Z,
            // Thigh, knee, calf, ankle.
            profile: vec![
                (0.00, 0.085, 0.085),
                (body::LEG_ROOT, 0.085, 0.085),
                (0.25, 0.07, 0.07),
                (knee, 0.05, 0.052),
                (knee + 0.10, 0.055, 0.058),
                (ankle - 0.08, 0.038, 0.04),
                (ankle + body::LEG_TIP, 0.04, 0.045),
            ],
            joints: vec![
                (j(side.upper_leg), body::LEG_ROOT),
                (j(side.lower_leg), knee),
                (j(side.foot), ankle),
            ],
            parent: Some(j(joint::HIPS)),
            around: 16,
            spacing: 0.02,
        });
        let m = Vec3::new(mirror, 1.0, 1.0);
        let (heel, tip) = (Vec3::from_array(body::HEEL) * m, Vec3::from_array(body::TOE_TIP) * m);
        let length = (tip - heel).length();
        let ball = length * (body::BALL_Z - heel.z) / (tip.z - heel.z);
        tubes.push(Tube {
            name: foot_name,
            start: heel,
            direction: (tip - heel) / length,
            length,
            front: Vec3::Y,
            // (distance from the heel, half-width, half-height).
            profile: vec![
                (0.00, 0.04, 0.035),
                (0.05, 0.045, 0.04),
                (ball, 0.045, 0.025),
                (length, 0.04, 0.02),
            ],
            joints: vec![(j(side.foot), 0.0), (j(side.toes), ball)],
            parent: None,
            around: 12,
            spacing: 0.02,
        });
    }
    tubes
}

/// The complete demo character: mesh (one part per tube, with normals), skeleton, skin and
/// the walk clip, validated.
pub fn demo_humanoid() -> Result<Character, CoreError> {
    let skeleton = skeleton();
    let mut mesh = Mesh::default();
    let mut skin = SkinBuilder::new(skeleton.joint_count(), 2)?;
    for tube in tubes() {
        let (part, rows) = tube.build();
        mesh.append(&part, tube.name);
        for row in &rows {
            skin.push_row(row)?;
        }
    }
    mesh.normals = mesh.compute_normals();
    let clip = walk::walk(&skeleton);
    let character = Character {
        name: DEMO_NAME.to_string(),
        mesh,
        skeleton,
        skin: Some(skin.finish()),
        clips: vec![clip],
        attachments: Vec::new(),
    };
    character.validate()?;
    Ok(character)
}

#[cfg(test)]
mod tests;
