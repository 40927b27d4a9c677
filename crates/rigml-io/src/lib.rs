//! Reading and writing the files riggers use, into and out of [`rigml_core::Character`].
//!
//! One module per format. Every reader preserves the file's vertex and joint order, returns a
//! validated character, and reports problems as [`IoError`]s that name the file and the place
//! in it; no input makes a reader panic. Writers go through [`save`], which writes atomically
//! (temporary file + rename) and refuses to overwrite without `force`.

pub mod alembic;
pub mod atomic;
pub mod bvh;
pub mod error;
pub mod fbx;
pub mod gltf;
pub mod makehuman;
pub mod obj;
pub mod rignet;
pub mod sequence;

pub use error::IoError;

use rigml_core::Character;
use std::path::Path;

/// File formats rigml reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// glTF 2.0 JSON with external or embedded buffers.
    Gltf,
    /// Binary glTF 2.0 (also `.vrm`).
    Glb,
    Fbx,
    Obj,
    Bvh,
    /// RigNet `rig.txt` (its mesh is the `.obj` beside it).
    RigNet,
    /// MakeHuman / MPFB rig JSON (`rig_*.json`, with `base.obj` and `weights_*.json` beside it).
    MakeHuman,
    /// Alembic (Ogawa) `.abc`: a mesh sequence, read by [`sequence::load_sequence`] (see
    /// [`alembic`]); not a character, so [`load`] and [`save`] refuse it.
    Alembic,
}

impl Format {
    /// The format a path names, from its extension (and file name for RigNet/MakeHuman).
    pub fn from_path(path: &Path) -> Result<Format, IoError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        Ok(match ext.as_str() {
            "gltf" => Format::Gltf,
            "glb" | "vrm" => Format::Glb,
            "fbx" => Format::Fbx,
            "obj" => Format::Obj,
            "bvh" => Format::Bvh,
            "txt" => Format::RigNet,
            "json" | "mhskel" => Format::MakeHuman,
            "abc" => Format::Alembic,
            _ => {
                return Err(IoError::unsupported(
                    path,
                    "unknown extension (expected .glb, .gltf, .vrm, .fbx, .obj, .bvh, RigNet .txt, MakeHuman .json \
                     or an Alembic .abc mesh sequence)",
                ))
            }
        })
    }
}

/// Options for [`save`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SaveOptions {
    /// Replace an existing file.
    pub force: bool,
}

/// A character read from a file, with what the reader had to repair on the way.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub character: Character,
    /// One line per repair or left-out item, naming the place in the file (e.g. glTF vertices
    /// whose weights are NaN, loaded as unskinned), and a line when the file holds nothing to
    /// rig (no mesh, no skeleton). Empty for clean files.
    pub warnings: Vec<String>,
}

/// Read any supported file into a validated character. Repairable damage (NaN skin weights,
/// clamped FBX indices, invalid UTF-8 in names, ...) is repaired and content rigml does not
/// keep (points, lines, clips that drive no joint) is left out; use [`load_with_warnings`] to
/// learn what was repaired or left out.
pub fn load(path: &Path) -> Result<Character, IoError> {
    load_with_warnings(path).map(|loaded| loaded.character)
}

/// [`load`], also returning the reader's warnings.
pub fn load_with_warnings(path: &Path) -> Result<Loaded, IoError> {
    let mut warnings = Vec::new();
    let character = match Format::from_path(path)? {
        Format::Gltf | Format::Glb => {
            let outcome = gltf::read_with(path, gltf::ReadOptions { repair: true })?;
            warnings = outcome.warnings;
            outcome.character
        }
        Format::Fbx => {
            let (character, repairs) = fbx::read_with_warnings(path)?;
            warnings = repairs;
            character
        }
        Format::Obj => {
            let (character, repairs) = obj::read_with_warnings(path)?;
            warnings = repairs;
            character
        }
        Format::Bvh => {
            let (character, repairs) = bvh::read_with_warnings(path)?;
            warnings = repairs;
            character
        }
        Format::RigNet => rignet::read(path)?,
        Format::MakeHuman => makehuman::read(path)?,
        Format::Alembic => {
            return Err(IoError::unsupported(
                path,
                "an Alembic file is a mesh sequence, not a character: use `rigml decompose` to rig it",
            ))
        }
    };
    character.validate().map_err(|e| IoError::invalid(path, e))?;
    if character.mesh.vertex_count() == 0 && character.skeleton.joint_count() == 0 {
        warnings.push("holds no mesh and no skeleton: nothing to rig".to_string());
    }
    Ok(Loaded { character, warnings })
}

/// Write a character in the format its path names (glTF/GLB, binary FBX 7.4, BVH, OBJ, or
/// RigNet `.txt` with its `.obj` mesh beside it), atomically.
pub fn save(character: &Character, path: &Path, options: SaveOptions) -> Result<(), IoError> {
    character.validate().map_err(|e| IoError::invalid(path, e))?;
    match Format::from_path(path)? {
        Format::Glb => atomic::write(path, &gltf::to_glb(character, path)?, options.force),
        Format::Fbx => atomic::write(path, &fbx::to_fbx(character, path)?, options.force),
        Format::Gltf => gltf::write_gltf(character, path, options.force),
        Format::Bvh => atomic::write(path, bvh::to_bvh(character, path)?.as_bytes(), options.force),
        Format::Obj => atomic::write(path, obj::to_obj(character).as_bytes(), options.force),
        Format::RigNet => rignet::write(character, path, options.force),
        other => Err(IoError::unsupported(
            path,
            &format!("writing {other:?} is not supported (write .glb, .gltf, .fbx, .bvh, .obj or RigNet .txt)"),
        )),
    }
}
