//! BVH reader/writer (not yet implemented).

use crate::IoError;
use rigml_core::Character;
use std::path::Path;

/// Read a BVH file.
pub fn read(path: &Path) -> Result<Character, IoError> {
    Err(IoError::unsupported(path, "BVH reading is not implemented yet"))
}

/// The skeleton and first clip as BVH text.
pub fn to_bvh(_character: &Character, path: &Path) -> Result<String, IoError> {
    Err(IoError::unsupported(path, "BVH writing is not implemented yet"))
}
