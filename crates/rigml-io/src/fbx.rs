//! fbx reader (not yet implemented).

use crate::IoError;
use rigml_core::Character;
use std::path::Path;

/// Read a fbx file.
pub fn read(path: &Path) -> Result<Character, IoError> {
    Err(IoError::unsupported(path, "fbx reading is not implemented yet"))
}
