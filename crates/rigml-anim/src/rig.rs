//! Per-character measurements the IK-Rig needs (hip height, chain lengths, rest facing), a
//! posable skeleton state with world-space setters, and clip sampling into frames.

use crate::humanoid::{hand_companions, ChainKind, HumanoidMap, Role};
use crate::AnimError;
use glam::{Mat4, Quat, Vec3};
use rigml_core::{Clip, Pose, Skeleton, Transform};

/// What encoding and decoding need to know about one humanoid skeleton.
#[derive(Debug, Clone)]
pub struct RigInfo {
    pub map: HumanoidMap,
    /// Height of the hips above the ground in the rest pose, along the skeleton's up axis
    /// (METRICS.md §7 `H`): the ground is y = 0 when the legs' lowest joint stands on or just
    /// above it (glTF characters), else that lowest joint (BVH rest poses).
    pub hip_height: f32,
    /// Rest length of each chain (sum of its bones), in [`ChainKind::ALL`] order.
    pub chain_lengths: [f32; 6],
    /// Rest facing: the rotation taking the canonical frame (x = character's left, y = up,
    /// z = forward) to the skeleton's world (a yaw for Y-up skeletons; also turns Z-up ones).
    pub facing: Quat,
    /// World rest rotation of every joint.
    pub rest_rotations: Vec<Quat>,
    /// World rest position of every joint.
    pub rest_positions: Vec<Vec3>,
    /// Per chain, in [`ChainKind::ALL`] order, the joints that turn with its end beside the end
    /// itself ([`crate::humanoid::hand_companions`]: the other finger roots of an arm with no
    /// hand joint), found once here rather than on every decoded frame.
    pub end_companions: [Vec<usize>; 6],
}

impl RigInfo {
    /// Measure a skeleton whose humanoid map is known. `asset` names it in errors.
    pub fn new(skeleton: &Skeleton, map: HumanoidMap, asset: &str) -> Result<RigInfo, AnimError> {
        let world = skeleton.rest_world();
        let rest_positions: Vec<Vec3> = world.iter().map(|m| m.w_axis.truncate()).collect();
        let rest_rotations: Vec<Quat> = world.iter().map(world_rotation).collect();
        let bad = |message: String| AnimError::Skeleton {
            asset: asset.to_string(),
            message,
        };
        let at = |r: Role| map.joint(r).and_then(|j| rest_positions.get(j).copied());
        let (Some(hips), Some(left), Some(right)) = (at(Role::Hips), at(Role::LeftUpperLeg), at(Role::RightUpperLeg))
        else {
            return Err(bad("the humanoid map has no hips or upper legs".into()));
        };
        // Up: the rest hips→head direction snapped to the nearest axis (BVH files may be Z-up).
        let head = at(Role::Head).unwrap_or(hips + Vec3::Y);
        let up = snap_to_axis(head - hips).ok_or_else(|| bad("the head sits on the hips in the rest pose".into()))?;
        // An upright biped: both feet hang below the hips along that axis (a quadruped with
        // humanoid joint names, like the glTF Fox, does not).
        for foot in [Role::LeftFoot, Role::RightFoot] {
            let down = at(foot).map_or(Vec3::ZERO, |f| f - hips);
            if down.dot(up) > -0.5 * down.length() || down.length() == 0.0 {
                return Err(bad(format!(
                    "not an upright humanoid in the rest pose: {} is not below the hips on the hips-to-head axis",
                    foot.name()
                )));
            }
        }
        // Facing from the hip line (left minus right), shoulders added, made level.
        let mut side = left - right;
        if let (Some(l), Some(r)) = (at(Role::LeftUpperArm), at(Role::RightUpperArm)) {
            side += l - r;
        }
        let side = (side - side.dot(up) * up)
            .try_normalize()
            .ok_or_else(|| bad("cannot tell left from right: the hips and shoulders are level across".into()))?;
        let forward = side.cross(up);
        let facing = Quat::from_mat3(&glam::Mat3::from_cols(side, up, forward)).normalize();
        // Lowest point of the legs along up: the feet and everything below them (toes, ends).
        let children = skeleton.children();
        let mut lowest = f32::INFINITY;
        for foot in [Role::LeftFoot, Role::RightFoot].iter().filter_map(|&r| map.joint(r)) {
            let mut stack = vec![foot];
            while let Some(j) = stack.pop() {
                lowest = lowest.min(rest_positions[j].dot(up));
                stack.extend(children.get(j).into_iter().flatten().copied());
            }
        }
        // The ground: y = 0 when the character stands on it (glTF convention: the lowest leg
        // joint sits at or a little above 0), else the lowest joint (BVH rest poses hang
        // around the origin).
        let ground = if lowest >= 0.0 && lowest < 0.25 * (hips.dot(up) - lowest) {
            0.0
        } else {
            lowest
        };
        let hip_height = hips.dot(up) - ground;
        if !(hip_height.is_finite() && hip_height > 0.0) {
            return Err(bad(format!(
                "hip height {hip_height} is not positive: the hips are not above the feet in the rest pose"
            )));
        }
        let mut chain_lengths = [0.0; 6];
        for (k, kind) in ChainKind::ALL.into_iter().enumerate() {
            let chain = map.chain(kind);
            chain_lengths[k] = chain
                .windows(2)
                .map(|w| rest_positions[w[0]].distance(rest_positions[w[1]]))
                .sum();
            if chain_lengths[k].is_nan() || chain_lengths[k] <= 1e-6 * hip_height {
                return Err(bad(format!("the {} chain has zero rest length", kind.name())));
            }
        }
        let end_companions = ChainKind::ALL.map(|kind| hand_companions(skeleton, map.chain(kind)));
        Ok(RigInfo {
            map,
            end_companions,
            hip_height,
            chain_lengths,
            facing,
            rest_rotations,
            rest_positions,
        })
    }

    /// Rest height of joint `j` above the ground, along up.
    pub fn ankle_clearance(&self, j: usize) -> f32 {
        let up = self.facing * Vec3::Y;
        let hips = self.map.joint(Role::Hips).unwrap_or(0);
        let ground = self.rest_positions[hips].dot(up) - self.hip_height;
        self.rest_positions.get(j).map_or(0.0, |p| p.dot(up) - ground)
    }

    /// Rest length of one chain.
    pub fn chain_length(&self, kind: ChainKind) -> f32 {
        self.chain_lengths[kind as usize]
    }
}

/// The principal axis (±x, ±y, ±z) nearest to `v`.
fn snap_to_axis(v: Vec3) -> Option<Vec3> {
    let a = v.abs();
    let axis = if a.x >= a.y && a.x >= a.z {
        Vec3::X * v.x.signum()
    } else if a.y >= a.z {
        Vec3::Y * v.y.signum()
    } else {
        Vec3::Z * v.z.signum()
    };
    (v.length() > 0.0 && v.is_finite()).then_some(axis)
}

/// The rotation part of a world matrix (scale removed).
pub(crate) fn world_rotation(m: &Mat4) -> Quat {
    let (_, r, _) = m.to_scale_rotation_translation();
    r.normalize()
}

/// A skeleton being posed: local transforms and their world matrices, kept in sync.
#[derive(Debug, Clone)]
pub(crate) struct Posed<'a> {
    pub skeleton: &'a Skeleton,
    pub local: Vec<Transform>,
    pub world: Vec<Mat4>,
}

impl<'a> Posed<'a> {
    pub fn new(skeleton: &'a Skeleton, local: Vec<Transform>) -> Posed<'a> {
        let world = skeleton.world_matrices(&local);
        Posed { skeleton, local, world }
    }

    pub fn position(&self, j: usize) -> Vec3 {
        self.world[j].w_axis.truncate()
    }

    pub fn rotation(&self, j: usize) -> Quat {
        world_rotation(&self.world[j])
    }

    fn parent_world(&self, j: usize) -> Mat4 {
        match self.skeleton.parents[j] {
            Some(p) => self.world[p],
            None => Mat4::IDENTITY,
        }
    }

    /// Recompute the world matrices of `j` and everything after it (children come later).
    fn refresh_from(&mut self, j: usize) {
        for k in j..self.local.len() {
            let m = self.local[k].to_mat4();
            self.world[k] = match self.skeleton.parents[k] {
                Some(p) => self.world[p] * m,
                None => m,
            };
        }
    }

    /// Give joint `j` this world rotation, keeping its local translation and scale.
    pub fn set_world_rotation(&mut self, j: usize, rotation: Quat) {
        let parent = world_rotation(&self.parent_world(j));
        self.local[j].rotation = (parent.inverse() * rotation).normalize();
        self.refresh_from(j);
    }

    /// Pre-multiply joint `j`'s world rotation by `delta`.
    pub fn rotate_world(&mut self, j: usize, delta: Quat) {
        let r = self.rotation(j);
        self.set_world_rotation(j, delta * r);
    }

    /// Move joint `j` to a world position (through its local translation).
    pub fn set_world_position(&mut self, j: usize, position: Vec3) {
        let parent = self.parent_world(j);
        self.local[j].translation = parent.inverse().transform_point3(position);
        self.refresh_from(j);
    }
}

/// Put the hips at a world rotation and position by moving the map's motion root (the hips
/// themselves, or the root the hips and legs share), so the legs come along.
pub(crate) fn place_hips(posed: &mut Posed, map: &HumanoidMap, rotation: Quat, position: Vec3) {
    let Some(hips) = map.joint(Role::Hips) else { return };
    let root = map.motion_root();
    let turn = (rotation * posed.rotation(hips).inverse()).normalize();
    posed.rotate_world(root, turn);
    let shift = position - posed.position(hips);
    let at = posed.position(root) + shift;
    posed.set_world_position(root, at);
}

/// A clip sampled at its own key times: the frame rate and one pose per frame.
#[derive(Debug, Clone)]
pub struct Frames {
    pub fps: f32,
    /// Key time of each frame, starting at the clip's first key.
    pub times: Vec<f32>,
    pub poses: Vec<Pose>,
}

/// Sample `clip` on `skeleton` at the key times of its longest channel (the frames of a baked
/// clip such as a BVH). Errors on a clip with no keys or a non-positive frame rate.
pub fn sample_frames(skeleton: &Skeleton, clip: &Clip, asset: &str) -> Result<Frames, AnimError> {
    let bad = |message: &str| AnimError::Clip {
        asset: asset.to_string(),
        clip: clip.name.clone(),
        message: message.to_string(),
    };
    clip.validate(skeleton.joint_count()).map_err(|e| bad(&e.to_string()))?;
    let times = clip
        .channels
        .iter()
        .max_by_key(|c| c.times.len())
        .map(|c| c.times.clone())
        .unwrap_or_default();
    if times.len() < 2 {
        return Err(bad("fewer than two keys; nothing to retarget"));
    }
    let span = times[times.len() - 1] - times[0];
    let fps = (times.len() - 1) as f32 / span;
    if !(fps.is_finite() && fps > 0.0) {
        return Err(bad("its keys span no time, so it has no frame rate"));
    }
    let poses = times.iter().map(|&t| clip.sample(skeleton, t)).collect();
    Ok(Frames { fps, times, poses })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::humanoid::map_humanoid;

    #[test]
    fn measures_a_t_posed_humanoid() {
        let s = crate::humanoid::test_skeleton();
        let info = RigInfo::new(&s, map_humanoid(&s).unwrap(), "t").unwrap();
        // Hips at 1.0, toe end at 1 - 0.05 - 0.45 - 0.42 - 0.06 = 0.02: standing on y = 0.
        assert!((info.hip_height - 1.0).abs() < 1e-5, "{}", info.hip_height);
        assert!((info.ankle_clearance(s.index_of("mixamorig:LeftFoot").unwrap()) - 0.08).abs() < 1e-5);
        assert!((info.chain_length(ChainKind::LeftLeg) - 0.87).abs() < 1e-5);
        // Left is +X, so the skeleton faces +Z: the canonical frame.
        assert!(info.facing.angle_between(Quat::IDENTITY) < 1e-5);
    }

    #[test]
    fn z_up_skeletons_get_a_turned_facing() {
        // The test humanoid turned Z-up (as some BVH files are): same H, up maps to +Z.
        let mut s = crate::humanoid::test_skeleton();
        let turn = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        s.rest_local[0].translation = turn * s.rest_local[0].translation;
        s.rest_local[0].rotation = turn;
        s.bind_to_rest();
        let info = RigInfo::new(&s, map_humanoid(&s).unwrap(), "t").unwrap();
        assert!((info.hip_height - 1.0).abs() < 1e-5, "{}", info.hip_height);
        assert!((info.facing * Vec3::Y).distance(Vec3::Z) < 1e-5);
        assert!((info.facing * Vec3::X).distance(Vec3::X) < 1e-5);
    }

    #[test]
    fn hanging_rest_poses_measure_from_the_feet() {
        // Lifted so the toes are 0.5 below the origin (a BVH rest pose): H from the toes.
        let mut s = crate::humanoid::test_skeleton();
        s.rest_local[0].translation.y = 0.48;
        s.bind_to_rest();
        let info = RigInfo::new(&s, map_humanoid(&s).unwrap(), "t").unwrap();
        assert!((info.hip_height - 0.98).abs() < 1e-5, "{}", info.hip_height);
    }

    #[test]
    fn posed_setters_hit_world_targets() {
        let s = crate::humanoid::test_skeleton();
        let mut p = Posed::new(&s, s.rest_local.clone());
        let j = s.index_of("mixamorig:LeftForeArm").unwrap();
        let q = Quat::from_rotation_z(0.7);
        p.set_world_rotation(j, q);
        assert!(p.rotation(j).angle_between(q) < 1e-5);
        p.set_world_position(0, Vec3::new(1.0, 2.0, 3.0));
        assert!(p.position(0).distance(Vec3::new(1.0, 2.0, 3.0)) < 1e-6);
        assert!(p.rotation(j).angle_between(q) < 1e-5);
    }
}
