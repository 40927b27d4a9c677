//! One error type for everything the library front door does, so that a caller (the CLI, the
//! Python package) handles one type and shows one message.

use thiserror::Error;

/// Why a library call failed; its `Display` is the message to show a user (`file: place:
/// problem` for readers).
#[derive(Debug, Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] rigml_io::IoError),
    /// A skin solver failed.
    #[error(transparent)]
    Skin(#[from] rigml_skin::SkinError),
    /// Placing a skeleton failed.
    #[error(transparent)]
    Rig(#[from] rigml_rig::RigError),
    /// A learned model could not be loaded or run.
    #[error(transparent)]
    Learn(#[from] rigml_learn::LearnError),
    /// The data model refused the data (bad weights, bad joint indices).
    #[error(transparent)]
    Core(#[from] rigml_core::CoreError),
    /// Evaluation failed.
    #[error(transparent)]
    Eval(#[from] rigml_eval::EvalError),
    /// A request was malformed: an unknown method or template, arrays of the wrong length.
    #[error("{0}")]
    Invalid(String),
    /// The caller's progress hook asked to stop.
    #[error("cancelled")]
    Cancelled,
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An [`Error::Invalid`] from anything printable.
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::Invalid(message.into())
}
