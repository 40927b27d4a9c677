//! Errors of the evaluation: every one names the file (or asset) and the place at fault.

use rigml_io::IoError;
use std::path::PathBuf;
use thiserror::Error;

/// Anything that stops an evaluation step.
#[derive(Debug, Error)]
pub enum EvalError {
    /// A manifest line that cannot be used.
    #[error("{}: line {line}: {message}", path.display())]
    Manifest {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A file that could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A character file that did not load.
    #[error(transparent)]
    Io(#[from] IoError),
    /// An external weight set that does not fit the ground truth it is scored against.
    #[error("{}: {message}", path.display())]
    Weights { path: PathBuf, message: String },
    /// Inputs of a metric that do not fit together (lengths, indices, empty sets).
    #[error("{asset}: {message}")]
    Mismatch { asset: String, message: String },
    /// A plot that could not be drawn.
    #[error("{}: plot: {message}", path.display())]
    Plot { path: PathBuf, message: String },
    /// A cross-validation fold that holds no family of the split (more folds than families).
    #[error("fold {fold}: {message}")]
    Fold { fold: String, message: String },
}

impl EvalError {
    /// A [`EvalError::Mismatch`] for `asset`.
    pub fn mismatch(asset: &str, message: impl Into<String>) -> Self {
        EvalError::Mismatch {
            asset: asset.to_string(),
            message: message.into(),
        }
    }

    /// A [`EvalError::Weights`] for the file at `path`.
    pub fn weights(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        EvalError::Weights {
            path: path.into(),
            message: message.into(),
        }
    }
}
