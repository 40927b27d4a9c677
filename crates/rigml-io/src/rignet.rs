//! RigNet `rig.txt`: joint positions, hierarchy and skin weights for the OBJ mesh beside it.
//!
//! Lines (0-based vertex ids, joints by name, positions in model space):
//! `joints NAME x y z`, `root NAME`, `hier PARENT CHILD`, `skin VID J1 W1 J2 W2 ...`.
//! RigNet ships `obj/<id>.obj` with `rig_info/<id>.txt`; rigml also writes and reads the flat
//! layout `<id>.obj` beside `<id>_rig.txt`. The skeleton has no rotations: each joint's rest
//! translation is its position minus its parent's, and the bind pose is the rest pose.

use crate::error::read_file;
use crate::obj::{self, stem};
use crate::IoError;
use glam::{Mat4, Vec3};
use rigml_core::{Character, Mesh, Skeleton, Transform, DEFAULT_MAX_INFLUENCES};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Read a rig file and the OBJ mesh found beside it (see [`mesh_candidates`]).
pub fn read(path: &Path) -> Result<Character, IoError> {
    let candidates = mesh_candidates(path);
    let Some(mesh_path) = candidates.iter().find(|p| p.is_file()) else {
        let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        return Err(IoError::parse(
            path,
            format!("no mesh for this rig; looked for {}", tried.join(", ")),
        ));
    };
    read_with_mesh(path, mesh_path)
}

/// Read a rig file with an explicitly named OBJ mesh.
pub fn read_with_mesh(rig_path: &Path, mesh_path: &Path) -> Result<Character, IoError> {
    let mesh = obj::parse(&read_file(mesh_path)?, mesh_path)?.mesh;
    let text = read_file(rig_path)?;
    let text = obj::utf8(&text, rig_path)?;
    from_text(text, mesh, rig_path)
}

/// Where [`read`] looks for the mesh of `<dir>/<stem>.txt`, in order: `<dir>/<id>.obj` where
/// the stem is `<id>_rig`, `<dir>/<stem>.obj`, and RigNet's `<dir>/../obj/<stem>.obj`.
pub fn mesh_candidates(rig_path: &Path) -> Vec<PathBuf> {
    let dir = rig_path.parent().unwrap_or(Path::new(""));
    let stem = stem(rig_path);
    let mut out = Vec::new();
    if let Some(id) = stem.strip_suffix("_rig") {
        out.push(dir.join(format!("{id}.obj")));
    }
    out.push(dir.join(format!("{stem}.obj")));
    out.push(dir.join("..").join("obj").join(format!("{stem}.obj")));
    out
}

/// The mesh path [`write`] uses for a rig path: `<id>.obj` for `<id>_rig.txt`, else `<stem>.obj`.
pub fn mesh_path_for(rig_path: &Path) -> PathBuf {
    let stem = stem(rig_path);
    let id = stem.strip_suffix("_rig").unwrap_or(&stem);
    rig_path.with_file_name(format!("{id}.obj"))
}

/// Build a character from rig text and its mesh; `path` names the rig file in errors.
pub fn from_text(text: &str, mesh: Mesh, path: &Path) -> Result<Character, IoError> {
    let mut names: Vec<String> = Vec::new();
    let mut positions: Vec<Vec3> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut parents: Vec<Option<usize>> = Vec::new();
    let mut root: Option<(usize, String)> = None;
    // (line, words) of hier and skin lines, resolved once every joint is known.
    let mut hier: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut skin_lines: Vec<(usize, Vec<&str>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let err = |msg: String| IoError::parse(path, format!("line {line_no}: {msg}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            None => {}
            Some("joints") => {
                let [_, name, x, y, z] = words[..] else {
                    return Err(err(format!(
                        "expected 'joints NAME x y z', found {} words",
                        words.len()
                    )));
                };
                let p = Vec3::new(
                    number(x).map_err(err)?,
                    number(y).map_err(err)?,
                    number(z).map_err(err)?,
                );
                if index.insert(name.to_string(), names.len()).is_some() {
                    return Err(err(format!("joint '{name}' is defined twice")));
                }
                names.push(name.to_string());
                positions.push(p);
                parents.push(None);
            }
            Some("root") => {
                let [_, name] = words[..] else {
                    return Err(err("expected 'root NAME'".into()));
                };
                if root.is_some() {
                    return Err(err("second 'root' line".into()));
                }
                root = Some((line_no, name.to_string()));
            }
            Some("hier") => hier.push((line_no, words)),
            Some("skin") => skin_lines.push((line_no, words)),
            Some(other) => {
                return Err(err(format!(
                    "unknown line '{other}' (expected joints, root, hier or skin)"
                )))
            }
        }
    }
    let lookup = |line: usize, name: &str| {
        index.get(name).copied().ok_or_else(|| {
            IoError::parse(
                path,
                format!("line {line}: joint '{name}' is not defined by a 'joints' line"),
            )
        })
    };
    for (line, words) in &hier {
        let [_, parent, child] = words[..] else {
            return Err(IoError::parse(
                path,
                format!("line {line}: expected 'hier PARENT CHILD'"),
            ));
        };
        let (p, c) = (lookup(*line, parent)?, lookup(*line, child)?);
        if let Some(slot) = parents.get_mut(c) {
            if slot.is_some() {
                return Err(IoError::parse(
                    path,
                    format!("line {line}: joint '{child}' has a second parent"),
                ));
            }
            *slot = Some(p);
        }
    }
    if let Some((line, name)) = &root {
        let r = lookup(*line, name)?;
        if parents.get(r).copied().flatten().is_some() {
            return Err(IoError::parse(path, format!("line {line}: root '{name}' has a parent")));
        }
    }
    let rest_local: Vec<Transform> = positions
        .iter()
        .zip(&parents)
        .map(|(&p, parent)| {
            let base = parent.and_then(|q| positions.get(q)).copied().unwrap_or(Vec3::ZERO);
            Transform::from_translation(p - base)
        })
        .collect();
    let n = names.len();
    let (mut skeleton, new_index) = Skeleton::from_unordered(names, parents, rest_local, vec![Mat4::IDENTITY; n])
        .map_err(|e| IoError::invalid(path, e))?;
    skeleton.bind_to_rest();

    let skin = if skin_lines.is_empty() {
        None
    } else {
        let mut rows: Vec<Option<Vec<(u32, f32)>>> = vec![None; mesh.vertex_count()];
        for (line, words) in &skin_lines {
            let err = |msg: String| IoError::parse(path, format!("line {line}: {msg}"));
            let (v, pairs) = match &words[1..] {
                [v, pairs @ ..] if pairs.len() % 2 == 0 => (*v, pairs),
                _ => return Err(err("expected 'skin VERTEX JOINT WEIGHT [JOINT WEIGHT ...]'".into())),
            };
            let vertex: usize = v.parse().map_err(|_| err(format!("'{v}' is not a vertex id")))?;
            let Some(slot) = rows.get_mut(vertex) else {
                return Err(err(format!(
                    "vertex {vertex} does not exist (the mesh has {} vertices)",
                    mesh.vertex_count()
                )));
            };
            if slot.is_some() {
                return Err(err(format!("vertex {vertex} has a second skin line")));
            }
            let mut row = Vec::with_capacity(pairs.len() / 2);
            for pair in pairs.chunks_exact(2) {
                let j = lookup(*line, pair[0])?;
                let w = number(pair[1]).map_err(err)?;
                row.push((new_index.get(j).copied().unwrap_or(j) as u32, w));
            }
            *slot = Some(row);
        }
        let empty: Vec<(u32, f32)> = Vec::new();
        let skin = rigml_core::Skin::from_rows(
            rows.iter().map(|r| r.as_deref().unwrap_or(&empty)),
            skeleton.joint_count(),
            DEFAULT_MAX_INFLUENCES,
        )
        .map_err(|e| IoError::invalid(path, e))?;
        Some(skin)
    };
    Ok(Character {
        name: stem(path).trim_end_matches("_rig").to_string(),
        mesh,
        skeleton,
        skin,
        clips: Vec::new(),
        attachments: Vec::new(),
    })
}

fn number(word: &str) -> Result<f32, String> {
    match word.parse::<f32>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!("'{word}' is not a finite number")),
    }
}

/// The skeleton (bind-pose joint positions) and skin as `rig.txt` text. Joint names may not
/// contain whitespace (the format splits on it). RigNet has one `root` line: the first root is
/// written there; any other roots are simply joints without a `hier` line.
pub fn to_rig_txt(character: &Character, path: &Path) -> Result<String, IoError> {
    let skeleton = &character.skeleton;
    character.validate().map_err(|e| IoError::invalid(path, e))?;
    if skeleton.is_empty() {
        return Err(IoError::unsupported(
            path,
            "rig.txt needs a skeleton, and this character has none",
        ));
    }
    if let Some(name) = skeleton
        .names
        .iter()
        .find(|n| n.is_empty() || n.chars().any(char::is_whitespace))
    {
        return Err(IoError::unsupported(
            path,
            &format!("joint name '{name}' is empty or contains whitespace, which rig.txt cannot hold"),
        ));
    }
    let mut out = String::new();
    for (name, p) in skeleton.names.iter().zip(skeleton.bind_positions()) {
        if !p.is_finite() {
            return Err(IoError::unsupported(
                path,
                &format!("joint '{name}' has a non-finite bind position"),
            ));
        }
        let _ = writeln!(out, "joints {name} {} {} {}", p.x, p.y, p.z);
    }
    if let Some(root) = skeleton
        .parents
        .iter()
        .position(Option::is_none)
        .and_then(|r| skeleton.names.get(r))
    {
        let _ = writeln!(out, "root {root}");
    }
    for (j, parent) in skeleton.parents.iter().enumerate() {
        if let (Some(p), Some(child)) = (parent, skeleton.names.get(j)) {
            let _ = writeln!(
                out,
                "hier {} {child}",
                skeleton.names.get(*p).map_or("", |s| s.as_str())
            );
        }
    }
    if let Some(skin) = &character.skin {
        for (v, row) in skin.rows().enumerate() {
            if row.is_empty() {
                continue;
            }
            let _ = write!(out, "skin {v}");
            for i in row {
                let name = skeleton.names.get(i.joint as usize).map_or("", |s| s.as_str());
                let _ = write!(out, " {name} {}", i.weight);
            }
            out.push('\n');
        }
    }
    Ok(out)
}

/// Write `rig.txt` at `path` and the mesh as OBJ at [`mesh_path_for`]`(path)`, atomically and
/// without replacing either file unless `force`.
pub fn write(character: &Character, path: &Path, force: bool) -> Result<(), IoError> {
    let mesh_path = mesh_path_for(path);
    if mesh_path == path {
        return Err(IoError::unsupported(
            path,
            "the rig and its mesh would have the same name",
        ));
    }
    let text = to_rig_txt(character, path)?;
    if !force {
        for p in [path, mesh_path.as_path()] {
            if p.exists() {
                return Err(IoError::Exists { path: p.to_path_buf() });
            }
        }
    }
    crate::atomic::write(&mesh_path, obj::to_obj(character).as_bytes(), force)?;
    crate::atomic::write(path, text.as_bytes(), force)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::Skin;

    /// A bent three-joint chain over a strip of six vertices, joints listed child-first.
    fn fixture() -> (String, Mesh) {
        let mesh = Mesh {
            positions: (0..6).map(|i| Vec3::new((i % 2) as f32, (i / 2) as f32, 0.0)).collect(),
            triangles: vec![[0, 1, 2], [1, 3, 2], [2, 3, 4], [3, 5, 4]],
            ..Default::default()
        };
        let rig = "joints tip 0.5 2.5 0.25\njoints hips 0.5 0 0\njoints spine 0.5 1.25 0\nroot hips\n\
                   hier hips spine\nhier spine tip\nskin 0 hips 1.0\nskin 1 hips 0.5 spine 0.5\n\
                   skin 2 spine 0.25 hips 0.25 tip 0.0\nskin 3 spine 2\nskin 5 tip 1\n"
            .to_string();
        (rig, mesh)
    }

    #[test]
    fn reads_joints_hierarchy_and_skin() {
        let (rig, mesh) = fixture();
        let c = from_text(&rig, mesh, Path::new("x_rig.txt")).unwrap();
        c.validate().unwrap();
        assert_eq!(c.name, "x");
        assert_eq!(c.skeleton.names, vec!["hips", "spine", "tip"], "parents first");
        assert_eq!(c.skeleton.parents, vec![None, Some(0), Some(1)]);
        let p = c.skeleton.bind_positions();
        assert!((p[2] - Vec3::new(0.5, 2.5, 0.25)).length() < 1e-6);
        let skin = c.skin.unwrap();
        assert_eq!(skin.influences(2).len(), 2, "zero weight dropped, rest normalised");
        assert!((skin.influences(2)[0].weight - 0.5).abs() < 1e-6);
        assert_eq!(skin.influences(3)[0].joint, 1);
        assert_eq!(skin.influences(5)[0].joint, 2);
        assert!(skin.influences(4).is_empty(), "vertex without a skin line is unskinned");
    }

    #[test]
    fn write_read_round_trip() {
        let (rig, mesh) = fixture();
        let c = from_text(&rig, mesh, Path::new("x_rig.txt")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_rig.txt");
        write(&c, &path, false).unwrap();
        assert!(dir.path().join("x.obj").is_file());
        let back = read(&path).unwrap();
        assert_eq!(back.skeleton, c.skeleton);
        assert_eq!(back.skin, c.skin);
        assert_eq!(back.mesh.positions, c.mesh.positions);
        assert_eq!(back.mesh.triangles, c.mesh.triangles);
        assert!(matches!(write(&c, &path, false), Err(IoError::Exists { .. })));
        write(&c, &path, true).unwrap();
        // Through the format dispatch: `.txt` saves as RigNet, and loads back.
        let other = dir.path().join("rig_info").join("y.txt");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        crate::save(&c, &other, crate::SaveOptions::default()).unwrap();
        assert_eq!(crate::load(&other).unwrap().skin, c.skin);
    }

    #[test]
    fn round_trip_of_an_unordered_multi_root_skeleton_with_dense_weights() {
        // Two roots, children listed before parents.
        let names: Vec<String> = ["a1", "b0", "a0", "b1"].iter().map(|s| s.to_string()).collect();
        let t = |x: f32, y: f32| Transform::from_translation(Vec3::new(x, y, 0.3));
        let (mut skeleton, _) = Skeleton::from_unordered(
            names,
            vec![Some(2), None, None, Some(1)],
            vec![t(0.0, 1.0), t(5.0, 0.0), t(0.0, 0.0), t(1.0, 1.0)],
            vec![Mat4::IDENTITY; 4],
        )
        .unwrap();
        skeleton.bind_to_rest();
        let mesh = Mesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            triangles: vec![[0, 1, 2]],
            ..Default::default()
        };
        let dense = [0.1, 0.2, 0.3, 0.4, 0.0, 0.0, 0.0, 0.0, 1.0 / 3.0, 0.0, 2.0 / 3.0, 0.0];
        let c = Character {
            name: "m".into(),
            mesh: mesh.clone(),
            skeleton,
            skin: Some(Skin::from_dense(&dense, 4, 4).unwrap()),
            clips: Vec::new(),
            attachments: Vec::new(),
        };
        let text = to_rig_txt(&c, Path::new("m.txt")).unwrap();
        let back = from_text(&text, mesh, Path::new("m.txt")).unwrap();
        assert_eq!(back.skeleton.names, c.skeleton.names);
        assert_eq!(back.skeleton.parents, c.skeleton.parents);
        for (a, b) in back.skeleton.bind_positions().iter().zip(c.skeleton.bind_positions()) {
            assert!((*a - b).length() < 1e-6);
        }
        let (sa, sb) = (back.skin.unwrap(), c.skin.unwrap());
        assert!(sa.rows().eq(sb.rows()), "same influences, same order");
    }

    #[test]
    fn bad_input_names_file_and_line() {
        let (rig, mesh) = fixture();
        let cases = [
            (
                rig.replace("skin 5 tip 1", "skin 6 tip 1"),
                "line 11: vertex 6 does not exist",
            ),
            (
                rig.replace("skin 5 tip 1", "skin 5 tail 1"),
                "line 11: joint 'tail' is not defined",
            ),
            (
                rig.replace("skin 5 tip 1", "skin 5 tip"),
                "line 11: expected 'skin VERTEX",
            ),
            (
                rig.replace("skin 5 tip 1", "skin 5 tip nan"),
                "line 11: 'nan' is not a finite number",
            ),
            (
                rig.replace("skin 5 tip 1", "skin 0 tip 1"),
                "line 11: vertex 0 has a second skin line",
            ),
            (
                rig.replace("skin 5 tip 1", "skin 5 tip -1"),
                "skin: vertex 5 has a non-finite or negative weight",
            ),
            (
                rig.replace("joints tip 0.5 2.5 0.25", "joints tip 0.5 2.5"),
                "line 1: expected 'joints NAME x y z'",
            ),
            (
                rig.replace("joints tip", "joints hips"),
                "line 2: joint 'hips' is defined twice",
            ),
            (
                rig.replace("root hips", "root spine"),
                "line 4: root 'spine' has a parent",
            ),
            (
                rig.replace("hier spine tip", "hier tip spine"),
                "line 6: joint 'spine' has a second parent",
            ),
            (
                rig.replace("hier hips spine", "hier tip spine"),
                "hierarchy has a cycle",
            ),
            (rig.replace("root hips", "bone hips"), "line 4: unknown line 'bone'"),
        ];
        for (text, expected) in cases {
            let e = from_text(&text, mesh.clone(), Path::new("x_rig.txt"))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("x_rig.txt: ") && e.contains(expected),
                "got {e}\nwanted {expected}"
            );
        }
        let e = read(Path::new("/nonexistent/dir/y_rig.txt")).unwrap_err().to_string();
        assert!(e.contains("no mesh for this rig") && e.contains("y.obj"), "{e}");
    }

    #[test]
    fn no_prefix_or_corruption_panics() {
        let (rig, mesh) = fixture();
        for end in 0..=rig.len() {
            let _ = from_text(&rig[..end], mesh.clone(), Path::new("x_rig.txt"));
        }
        let mut bytes = rig.into_bytes();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed % bytes.len() as u64) as usize;
            bytes[i] = b" 0-9.ejhsk\n"[(seed >> 32) as usize % b" 0-9.ejhsk\n".len()];
            let _ = from_text(&String::from_utf8_lossy(&bytes), mesh.clone(), Path::new("x_rig.txt"));
        }
    }

    #[test]
    fn writer_rejects_names_with_spaces() {
        let (rig, mesh) = fixture();
        let mut c = from_text(&rig, mesh, Path::new("x_rig.txt")).unwrap();
        c.skeleton.names[1] = "upper spine".into();
        let e = to_rig_txt(&c, Path::new("x_rig.txt")).unwrap_err().to_string();
        assert!(e.contains("'upper spine'"), "{e}");
    }
}
