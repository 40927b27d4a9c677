//! Animated mesh sequences: a folder of OBJ frames with one topology, an Alembic (Ogawa) mesh
//! cache (see [`crate::alembic`]), or a skinned animation (glTF/GLB/FBX) baked to frames with
//! its own skin.
//!
//! Two ways in. [`load_sequence`] returns a whole [`Sequence`] in memory. [`ObjFrames`] opens a
//! folder once (file list, topology of the first frame) and then reads any frame on demand, so a
//! caller can stream a long sequence with one frame in memory at a time ([`ObjFrames::frames`]),
//! or re-read it per pass. Every frame read is checked against the first frame's vertex count and
//! triangle list; a mismatch is an error naming the file.
//!
//! glTF morph-target animation is not read: the glTF reader does not parse `targets` or weight
//! channels yet, so such files load as their skinned clips only (an error when they have none).

use crate::obj;
use crate::IoError;
use glam::{Mat4, Vec3};
use rigml_core::{skinning_matrices, Character, Sequence};
use std::path::{Path, PathBuf};

/// The rest mesh an OBJ folder may hold beside its frames; never read as a frame.
pub const REFERENCE_NAME: &str = "reference.obj";

/// How to turn a file into frames.
#[derive(Debug, Clone, Copy, Default)]
pub struct SequenceOptions {
    /// Skinned animations: which clip to bake (index into the file's clips).
    pub clip: usize,
    /// Skinned animations: sample this many frames evenly over the clip instead of its keys.
    pub frames: Option<usize>,
}

/// A folder of OBJ frames, opened: the frame files in order and the first frame's topology.
#[derive(Debug, Clone)]
pub struct ObjFrames {
    pub dir: PathBuf,
    /// Frame files in natural order (`frame_2` before `frame_10`).
    pub files: Vec<PathBuf>,
    /// `reference.obj` (a rest mesh) when the folder has one.
    pub reference: Option<PathBuf>,
    /// Triangles of the first frame; every frame must have the same.
    pub triangles: Vec<[u32; 3]>,
    pub vertex_count: usize,
}

impl ObjFrames {
    /// List the `.obj` files of `dir` (except `reference.obj`) and read the first for topology.
    pub fn open(dir: &Path) -> Result<ObjFrames, IoError> {
        let entries = std::fs::read_dir(dir).map_err(|e| IoError::read(dir, e))?;
        let mut files = Vec::new();
        let mut reference = None;
        for entry in entries {
            let path = entry.map_err(|e| IoError::read(dir, e))?.path();
            let is_obj = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("obj"));
            if !is_obj || !path.is_file() {
                continue;
            }
            if path.file_name().is_some_and(|n| n == REFERENCE_NAME) {
                reference = Some(path);
            } else {
                files.push(path);
            }
        }
        files.sort_by_key(|p| {
            natural_key(
                &p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )
        });
        let Some(first) = files.first() else {
            return Err(IoError::parse(dir, "no .obj frames in this folder"));
        };
        let mesh = obj::read(first)?.mesh;
        Ok(ObjFrames {
            dir: dir.to_path_buf(),
            vertex_count: mesh.vertex_count(),
            triangles: mesh.triangles,
            files,
            reference,
        })
    }

    pub fn frame_count(&self) -> usize {
        self.files.len()
    }

    /// The positions of frame `f`, checked against the first frame's topology.
    pub fn read_frame(&self, f: usize) -> Result<Vec<Vec3>, IoError> {
        let Some(path) = self.files.get(f) else {
            return Err(IoError::parse(
                &self.dir,
                format!("frame {f} requested, the folder has {}", self.files.len()),
            ));
        };
        let mesh = obj::read(path)?.mesh;
        if mesh.vertex_count() != self.vertex_count {
            return Err(IoError::parse(
                path,
                format!(
                    "{} vertices, the first frame ({}) has {}: frames must share one topology",
                    mesh.vertex_count(),
                    self.first_name(),
                    self.vertex_count
                ),
            ));
        }
        if mesh.triangles != self.triangles {
            let t = mesh
                .triangles
                .iter()
                .zip(&self.triangles)
                .position(|(a, b)| a != b)
                .unwrap_or(mesh.triangles.len().min(self.triangles.len()));
            return Err(IoError::parse(
                path,
                format!(
                    "triangle list differs from the first frame ({}) at triangle {t} ({} vs {} triangles): \
                     frames must share one topology",
                    self.first_name(),
                    mesh.triangles.len(),
                    self.triangles.len()
                ),
            ));
        }
        Ok(mesh.positions)
    }

    /// Frames in order, read one at a time (memory: one frame).
    pub fn frames(&self) -> impl Iterator<Item = Result<Vec<Vec3>, IoError>> + '_ {
        (0..self.frame_count()).map(|f| self.read_frame(f))
    }

    /// Read every frame into a [`Sequence`] named after the folder.
    pub fn load_all(&self) -> Result<Sequence, IoError> {
        let frames = self.frames().collect::<Result<Vec<_>, _>>()?;
        Ok(Sequence {
            name: self
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            triangles: self.triangles.clone(),
            frames,
            // OBJ folders store no frame rate.
            fps: None,
        })
    }

    fn first_name(&self) -> String {
        self.files
            .first()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// A skinned clip baked to frames: the deformed vertices and, per frame, every joint's skinning
/// matrix (bind space → posed space), the ground truth a decomposition can be compared with.
#[derive(Debug, Clone)]
pub struct Baked {
    pub sequence: Sequence,
    /// Key times in seconds, one per frame.
    pub times: Vec<f32>,
    /// `skinning[f][j]`: world(pose_f)_j · inverse_bind_j.
    pub skinning: Vec<Vec<Mat4>>,
}

/// Bake clip `options.clip` of a skinned character with its own skin (linear blend skinning)
/// at the clip's key times, or at `options.frames` even steps. `path` names the file in errors.
pub fn bake(character: &Character, options: &SequenceOptions, path: &Path) -> Result<Baked, IoError> {
    let skin = character
        .skin
        .as_ref()
        .ok_or_else(|| IoError::unsupported(path, "has no skin, so its animation cannot be baked to frames"))?;
    let clip = character.clips.get(options.clip).ok_or_else(|| {
        IoError::unsupported(
            path,
            &format!(
                "clip {} requested, the file has {} clips",
                options.clip,
                character.clips.len()
            ),
        )
    })?;
    let times = frame_times(clip, options.frames);
    if times.is_empty() {
        return Err(IoError::unsupported(path, &format!("clip {:?} has no keys", clip.name)));
    }
    let mut frames = Vec::with_capacity(times.len());
    let mut skinning = Vec::with_capacity(times.len());
    for &t in &times {
        let pose = clip.sample(&character.skeleton, t);
        let m = skinning_matrices(&character.skeleton, &pose).map_err(|e| IoError::invalid(path, e))?;
        frames.push(rigml_core::lbs(&character.mesh.positions, skin, &m));
        skinning.push(m);
    }
    let fps = match (times.first(), times.last()) {
        (Some(a), Some(b)) if times.len() > 1 && b > a => Some((times.len() - 1) as f32 / (b - a)),
        _ => None,
    };
    Ok(Baked {
        sequence: Sequence {
            name: format!("{}-{}", character.name, clip.name),
            triangles: character.mesh.triangles.clone(),
            frames,
            fps,
        },
        times,
        skinning,
    })
}

/// The times to bake: the keys of the channel with the most keys, or `count` even steps from
/// the clip's start to its end.
fn frame_times(clip: &rigml_core::Clip, count: Option<usize>) -> Vec<f32> {
    match count {
        Some(n) if n > 1 => {
            let (a, b) = (clip.start(), clip.duration());
            (0..n).map(|i| a + (b - a) * i as f32 / (n - 1) as f32).collect()
        }
        Some(1) => vec![clip.start()],
        Some(_) => Vec::new(),
        None => clip
            .channels
            .iter()
            .max_by_key(|c| c.times.len())
            .map(|c| c.times.clone())
            .unwrap_or_default(),
    }
}

/// Read a sequence: a folder of OBJ frames, the first animated PolyMesh of an Alembic `.abc`
/// (with its frame rate; [`crate::alembic::read`] also gives times and warnings), or a skinned
/// glTF/GLB/FBX animation baked with [`bake`]. A single OBJ file is refused (it is one frame;
/// pass its folder).
pub fn load_sequence(path: &Path, options: &SequenceOptions) -> Result<Sequence, IoError> {
    if path.is_dir() {
        let sequence = ObjFrames::open(path)?.load_all()?;
        sequence.validate().map_err(|e| IoError::invalid(path, e))?;
        return Ok(sequence);
    }
    match crate::Format::from_path(path)? {
        crate::Format::Gltf | crate::Format::Glb | crate::Format::Fbx => {
            let character = crate::load(path)?;
            Ok(bake(&character, options, path)?.sequence)
        }
        crate::Format::Alembic => Ok(crate::alembic::read(path)?.sequence),
        crate::Format::Obj => Err(IoError::unsupported(
            path,
            "one OBJ file is one frame: pass the folder holding all frames",
        )),
        _ => Err(IoError::unsupported(
            path,
            "not a sequence: pass a folder of OBJ frames, an Alembic .abc or a skinned .glb/.gltf/.fbx animation",
        )),
    }
}

/// Sort key that orders embedded numbers by value: `frame_2` < `frame_10`.
fn natural_key(name: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((std::mem::take(&mut text), digits.parse().unwrap_or(u64::MAX)));
                digits.clear();
            }
            text.push(c);
        }
    }
    key.push((text, digits.parse().unwrap_or(0)));
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    const TRI: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";

    #[test]
    fn natural_order_and_reference_skipped() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["f10.obj", "f2.obj", "f1.obj", REFERENCE_NAME] {
            write(dir.path(), name, TRI);
        }
        write(dir.path(), "notes.txt", "x");
        let frames = ObjFrames::open(dir.path()).unwrap();
        let names: Vec<String> = frames
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["f1.obj", "f2.obj", "f10.obj"]);
        assert!(frames.reference.is_some());
        let seq = frames.load_all().unwrap();
        assert_eq!(seq.frames.len(), 3);
        assert_eq!(seq.frames[1][1], Vec3::X);
    }

    #[test]
    fn topology_mismatch_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.obj", TRI);
        write(dir.path(), "b.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 3 2\n");
        write(dir.path(), "c.obj", "v 0 0 0\nv 1 0 0\nf 1 2 2\n");
        let frames = ObjFrames::open(dir.path()).unwrap();
        let e = frames.read_frame(1).unwrap_err().to_string();
        assert!(e.contains("b.obj") && e.contains("triangle 0"), "{e}");
        let e = frames.read_frame(2).unwrap_err().to_string();
        assert!(e.contains("c.obj") && e.contains("2 vertices"), "{e}");
        assert!(frames.read_frame(3).is_err());
        assert!(load_sequence(dir.path(), &SequenceOptions::default()).is_err());
    }

    #[test]
    fn empty_folder_and_single_obj_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = ObjFrames::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("no .obj frames"), "{e}");
        write(dir.path(), "a.obj", TRI);
        let e = load_sequence(&dir.path().join("a.obj"), &SequenceOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("pass the folder"), "{e}");
    }
}
