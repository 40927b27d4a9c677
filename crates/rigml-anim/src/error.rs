//! Errors of the animation algorithms. Each names the asset (skeleton, clip or file) and the
//! place at fault; the CLI adds nothing but the exit code.

use thiserror::Error;

/// Anything that stops a mapping, encoding, decoding or retargeting step.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum AnimError {
    /// Humanoid roles that could not be matched to joints, one reason per role.
    #[error("{asset}: could not map the skeleton to a humanoid: {}", .problems.join("; "))]
    Unmapped { asset: String, problems: Vec<String> },
    /// A `--map` override file line that cannot be used.
    #[error("{file}: line {line}: {message}")]
    MapFile { file: String, line: usize, message: String },
    /// A skeleton unusable for the operation (e.g. a hip height that is not positive).
    #[error("{asset}: {message}")]
    Skeleton { asset: String, message: String },
    /// An IK-Rig encoding that does not fit (wrong column count, non-finite values).
    #[error("{asset}: {place}: {message}")]
    Encoding {
        asset: String,
        place: String,
        message: String,
    },
    /// A clip that cannot be used (no frames, bad frame rate).
    #[error("{asset}: clip {clip}: {message}")]
    Clip {
        asset: String,
        clip: String,
        message: String,
    },
}
