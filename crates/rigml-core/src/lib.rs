//! rigml's data model: one [`Character`] (mesh + skeleton + skin + clips) that every reader
//! produces and every algorithm consumes, plus the deformations (linear blend and
//! dual-quaternion skinning) and clip sampling that everything above builds on.
//!
//! No file I/O and no solvers live here (see `docs/ARCHITECTURE.md`). Index letters follow the
//! project style: `v` vertices, `j` joints, `f` frames, `t` triangles.

pub mod attachment;
pub mod character;
pub mod clip;
pub mod error;
pub mod material;
pub mod mesh;
pub mod pose;
pub mod sequence;
pub mod skeleton;
pub mod skin;
pub mod skinning;
pub mod subdivide;
pub mod transform;

pub use attachment::Attachment;
pub use character::{Character, Problem};
pub use clip::{continuous_rotations, Channel, ChannelValues, Clip, Interpolation};
pub use error::CoreError;
pub use material::{AlphaMode, Image, Material, Sampler, TextureSlot};
pub use mesh::{Mesh, MeshPart};
pub use pose::Pose;
pub use sequence::Sequence;
pub use skeleton::Skeleton;
pub use skin::{Influence, Skin, DEFAULT_MAX_INFLUENCES};
pub use skinning::{dqs, dqs_into, lbs, lbs_into, skinning_matrices};
pub use subdivide::subdivided;
pub use transform::Transform;

/// Re-export of the math crate used in every public signature.
pub use glam;
