//! Errors of the renderer: each names the character (or output file) and what is wrong.

use rigml_core::CoreError;
use std::path::PathBuf;

/// Why a render or a PNG write failed. `name` is the character's name (usually its file).
#[derive(Debug, thiserror::Error)]
pub enum VizError {
    /// The character breaks an invariant (bad indices, NaN weights...).
    #[error("{name}: {source}")]
    Invalid { name: String, source: CoreError },
    /// A weight render or pose sheet needs a skin and the character has none.
    #[error("{name}: has no skin; weight renders and pose sheets need one")]
    NoSkin { name: String },
    /// `WeightMode::Joint(j)` names a joint the skeleton does not have.
    #[error("{name}: joint {joint} does not exist (the skeleton has {joint_count} joints)")]
    NoJoint {
        name: String,
        joint: usize,
        joint_count: usize,
    },
    /// Nothing to draw: no triangles, or no finite vertex position.
    #[error("{name}: nothing to render ({what})")]
    Empty { name: String, what: String },
    /// A skin given to `render_compare` does not fit the character.
    #[error("{name}: weight set {which}: {source}")]
    BadSkin {
        name: String,
        which: &'static str,
        source: CoreError,
    },
    /// A pose given to `render_pose_sheet` does not fit the skeleton.
    #[error("{name}: pose {index}: {source}")]
    BadPose {
        name: String,
        index: usize,
        source: CoreError,
    },
    /// A clip index or pose count that cannot be used.
    #[error("{name}: {what}")]
    BadRequest { name: String, what: String },
    /// Panel size or panel count outside what the renderer accepts.
    #[error("render size: {what}")]
    BadSize { what: String },
    /// The viewer's server could not listen or accept.
    #[error("viewer: {what}: {source}")]
    Serve { what: String, source: std::io::Error },
    /// The PNG encoder refused the image.
    #[error("{path}: PNG encoding failed: {message}", path = .path.display())]
    Encode { path: PathBuf, message: String },
}
