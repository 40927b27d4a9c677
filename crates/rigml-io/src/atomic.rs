//! Atomic output: write a temporary file beside the target, then rename it into place, so a
//! crash or a full disk never leaves a half-written file under the user's name.

use crate::IoError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically. Refuses to replace an existing file unless `force`.
pub fn write(path: &Path, bytes: &[u8], force: bool) -> Result<(), IoError> {
    if !force && path.exists() {
        return Err(IoError::Exists {
            path: path.to_path_buf(),
        });
    }
    let tmp = temp_path(path);
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(IoError::write(path, e));
    }
    Ok(())
}

/// A hidden temporary name in the same directory (same filesystem, so rename is atomic).
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_clobber_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write(&path, b"one", false).unwrap();
        assert!(matches!(write(&path, b"two", false), Err(IoError::Exists { .. })));
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        write(&path, b"two", true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
