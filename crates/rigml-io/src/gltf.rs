//! glTF 2.0 reader/writer (not yet implemented).

use crate::IoError;
use rigml_core::Character;
use std::path::Path;

/// Read a .gltf or .glb file.
pub fn read(path: &Path) -> Result<Character, IoError> {
    Err(IoError::unsupported(path, "glTF reading is not implemented yet"))
}

/// The character as GLB bytes.
pub fn to_glb(_character: &Character, path: &Path) -> Result<Vec<u8>, IoError> {
    Err(IoError::unsupported(path, "glTF writing is not implemented yet"))
}

/// Write `.gltf` + `.bin` beside it, atomically.
pub fn write_gltf(_character: &Character, path: &Path, _force: bool) -> Result<(), IoError> {
    Err(IoError::unsupported(path, "glTF writing is not implemented yet"))
}
