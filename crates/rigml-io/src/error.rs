//! Errors of reading and writing: always the file, then the problem.

use rigml_core::CoreError;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What went wrong with a file. The message starts with the path so a user can find it:
/// `Ranger.glb: skins[0].joints[3]: node 41 does not exist`.
#[derive(Debug, Error)]
pub enum IoError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// The bytes do not follow the format; `message` points at the place (JSON path, line).
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    /// The file parsed but its content breaks a data-model invariant.
    #[error("{}: {source}", path.display())]
    Invalid { path: PathBuf, source: CoreError },
    #[error("{}: {reason}", path.display())]
    Unsupported { path: PathBuf, reason: String },
    #[error("{}: already exists (use --force to overwrite)", path.display())]
    Exists { path: PathBuf },
}

impl IoError {
    pub fn read(path: &Path, source: std::io::Error) -> Self {
        IoError::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn write(path: &Path, source: std::io::Error) -> Self {
        IoError::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn parse(path: &Path, message: impl Into<String>) -> Self {
        IoError::Parse {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    pub fn invalid(path: &Path, source: CoreError) -> Self {
        IoError::Invalid {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn unsupported(path: &Path, reason: &str) -> Self {
        IoError::Unsupported {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            IoError::Read { path, .. }
            | IoError::Write { path, .. }
            | IoError::Parse { path, .. }
            | IoError::Invalid { path, .. }
            | IoError::Unsupported { path, .. }
            | IoError::Exists { path } => path,
        }
    }
}

/// Read a whole file, mapping the OS error to an [`IoError`] naming it.
pub fn read_file(path: &Path) -> Result<Vec<u8>, IoError> {
    std::fs::read(path).map_err(|e| IoError::read(path, e))
}
