//! obj reader (not yet implemented).

use crate::IoError;
use rigml_core::Character;
use std::path::Path;

/// Read a obj file.
pub fn read(path: &Path) -> Result<Character, IoError> {
    Err(IoError::unsupported(path, "obj reading is not implemented yet"))
}

/// The mesh as OBJ text.
pub fn to_obj(_character: &Character) -> String {
    String::new()
}
