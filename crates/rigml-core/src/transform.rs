//! Translation-rotation-scale transforms, the form joints and clips are stored in.

use glam::{Mat4, Quat, Vec3};

/// A local joint transform: `M = T · R · S` (glTF order), column vectors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    pub translation: Vec3,
    /// Unit quaternion.
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    pub fn from_translation(translation: Vec3) -> Self {
        Self {
            translation,
            ..Self::IDENTITY
        }
    }

    /// The 4×4 matrix `T · R · S`.
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Decompose a matrix into TRS. Shear is lost; a negative determinant is carried by the
    /// scale's x component, as glam does.
    pub fn from_mat4(m: &Mat4) -> Self {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        Self {
            translation,
            rotation: rotation.normalize(),
            scale,
        }
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trs_round_trips_through_matrix() {
        let t = Transform {
            translation: Vec3::new(1.0, -2.0, 3.0),
            rotation: Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
            scale: Vec3::new(2.0, 0.5, 1.5),
        };
        let back = Transform::from_mat4(&t.to_mat4());
        assert!((back.translation - t.translation).length() < 1e-5);
        assert!(back.rotation.dot(t.rotation).abs() > 1.0 - 1e-6);
        assert!((back.scale - t.scale).length() < 1e-5);
    }
}
