//! Wavefront OBJ: triangle meshes without a skeleton.
//!
//! The reader keeps the file's vertex order exactly: mesh vertex `v` is the `v`-th `v` line.
//! Polygons are fan-triangulated (`f a b c d` → `a b c`, `a c d`); negative (relative) indices
//! are resolved against the vertices defined so far. Texture coordinates and normals are kept
//! only when every face corner of a vertex names the same value (a one-to-one map), because the
//! mesh stores one attribute per vertex and splitting vertices would break the vertex order.
//! `o`/`g` statements become mesh parts when each group owns a contiguous block of `v` lines
//! (what exporters write per object); the vertices each group's faces use are always available
//! in [`ObjFile::groups`] (MakeHuman's joint cubes are found this way).

use crate::error::read_file;
use crate::IoError;
use glam::{Vec2, Vec3};
use rigml_core::{Character, Mesh, MeshPart};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// A parsed OBJ file: its mesh plus the vertex groups named by `g`/`o` statements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjFile {
    pub mesh: Mesh,
    /// For every distinct `g`/`o` name, in order of first appearance, the sorted, distinct
    /// vertices used by faces under that name.
    pub groups: Vec<(String, Vec<u32>)>,
}

impl ObjFile {
    /// Vertices used by the faces of the group with this name.
    pub fn group(&self, name: &str) -> Option<&[u32]> {
        self.groups.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
    }
}

/// Read an OBJ file as a character with a mesh and no skeleton.
pub fn read(path: &Path) -> Result<Character, IoError> {
    from_bytes(&read_file(path)?, path)
}

/// Parse OBJ bytes (`path` only names the file in errors) into a character.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Character, IoError> {
    let file = parse(bytes, path)?;
    if file.mesh.positions.is_empty() {
        return Err(IoError::parse(path, "empty: no `v` lines, so no vertices"));
    }
    Ok(Character {
        name: stem(path),
        mesh: file.mesh,
        ..Default::default()
    })
}

/// The bytes as UTF-8 text, or an error naming the line of the first bad byte.
pub(crate) fn utf8<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str, IoError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        IoError::parse(path, format!("line {line}: not valid UTF-8 text"))
    })
}

/// The file name without its extension (character and clip names).
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// One face corner: vertex, optional texture coordinate and normal (all 0-based).
#[derive(Clone, Copy)]
struct Corner {
    v: u32,
    vt: Option<u32>,
    vn: Option<u32>,
}

/// A run of statements under one `o`/`g` name: where its vertices and triangles begin.
struct Segment {
    name: String,
    v_start: usize,
    t_start: usize,
}

/// Parse OBJ bytes into an [`ObjFile`]. Errors name the file and line.
pub fn parse(bytes: &[u8], path: &Path) -> Result<ObjFile, IoError> {
    let text = utf8(bytes, path)?;
    let mut positions: Vec<Vec3> = Vec::new();
    let mut texcoords: Vec<Vec2> = Vec::new();
    let mut normals_in: Vec<Vec3> = Vec::new();
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    // Attribute indices of each triangle's corners, parallel to `triangles`.
    let mut corner_attrs: Vec<[(Option<u32>, Option<u32>); 3]> = Vec::new();
    let mut segments = vec![Segment {
        name: String::new(),
        v_start: 0,
        t_start: 0,
    }];
    let mut group_index: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    let mut current_group: Option<usize> = None;
    let mut corners: Vec<Corner> = Vec::new();

    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let err = |msg: String| IoError::parse(path, format!("line {line_no}: {msg}"));
        let content = raw.split('#').next().unwrap_or("").trim();
        let mut words = content.split_whitespace();
        let Some(keyword) = words.next() else {
            continue;
        };
        match keyword {
            "v" => positions.push(read_vec3(&mut words).map_err(err)?),
            "vn" => normals_in.push(read_vec3(&mut words).map_err(err)?),
            "vt" => {
                let u = read_float(words.next(), "u").map_err(err)?;
                let v = match words.next() {
                    Some(w) => read_float(Some(w), "v").map_err(err)?,
                    None => 0.0,
                };
                texcoords.push(Vec2::new(u, v));
            }
            "f" => {
                corners.clear();
                for word in words {
                    corners.push(read_corner(word, positions.len(), texcoords.len(), normals_in.len()).map_err(err)?);
                }
                if corners.len() < 3 {
                    return Err(err(format!("face has {} vertices, at least 3 needed", corners.len())));
                }
                if let Some(g) = current_group {
                    if let Some((_, members)) = groups.get_mut(g) {
                        members.extend(corners.iter().map(|c| c.v));
                    }
                }
                let first = corners[0];
                for pair in corners[1..].windows(2) {
                    let tri = [first, pair[0], pair[1]];
                    triangles.push(tri.map(|c| c.v));
                    corner_attrs.push(tri.map(|c| (c.vt, c.vn)));
                }
            }
            "o" | "g" => {
                let name = content[keyword.len()..].trim().to_string();
                let last = segments.len() - 1;
                let seg = &mut segments[last];
                if seg.v_start == positions.len() && seg.t_start == triangles.len() {
                    seg.name = name.clone();
                } else {
                    segments.push(Segment {
                        name: name.clone(),
                        v_start: positions.len(),
                        t_start: triangles.len(),
                    });
                }
                let next = groups.len();
                let g = *group_index.entry(name.clone()).or_insert(next);
                if g == next {
                    groups.push((name, Vec::new()));
                }
                current_group = Some(g);
            }
            // Materials, smoothing groups, lines, points and free-form geometry carry nothing
            // the mesh stores; they are accepted and skipped.
            _ => {}
        }
    }
    for (_, members) in &mut groups {
        members.sort_unstable();
        members.dedup();
    }
    let n = positions.len();
    let uvs = one_to_one(n, &corner_attrs, &triangles, |a| a.0, &texcoords);
    let normals = one_to_one(n, &corner_attrs, &triangles, |a| a.1, &normals_in)
        .into_iter()
        .map(|v| v.normalize_or_zero())
        .collect();
    let parts = clean_parts(&segments, n, &triangles);
    Ok(ObjFile {
        mesh: Mesh {
            positions,
            normals,
            uvs,
            triangles,
            parts,
            ..Mesh::default()
        },
        groups,
    })
}

fn read_float(word: Option<&str>, what: &str) -> Result<f32, String> {
    let word = word.ok_or_else(|| format!("missing {what} value"))?;
    let x: f32 = word.parse().map_err(|_| format!("'{word}' is not a number"))?;
    if !x.is_finite() {
        return Err(format!("{what} value '{word}' is not finite"));
    }
    Ok(x)
}

fn read_vec3<'a>(words: &mut impl Iterator<Item = &'a str>) -> Result<Vec3, String> {
    Ok(Vec3::new(
        read_float(words.next(), "x")?,
        read_float(words.next(), "y")?,
        read_float(words.next(), "z")?,
    ))
}

/// Resolve a 1-based (or negative, relative) OBJ index against `count` items defined so far.
fn resolve(word: &str, count: usize, what: &str) -> Result<u32, String> {
    let i: i64 = word.parse().map_err(|_| format!("'{word}' is not a {what} index"))?;
    let resolved = if i > 0 {
        i - 1
    } else if i < 0 {
        count as i64 + i
    } else {
        return Err(format!("{what} index 0 (OBJ indices start at 1)"));
    };
    if resolved < 0 || resolved >= count as i64 || resolved > u32::MAX as i64 {
        return Err(format!("{what} index {i} is out of range ({count} defined so far)"));
    }
    Ok(resolved as u32)
}

fn read_corner(word: &str, nv: usize, nvt: usize, nvn: usize) -> Result<Corner, String> {
    let mut fields = word.split('/');
    let v = resolve(fields.next().unwrap_or(""), nv, "vertex")?;
    let vt = match fields.next() {
        Some("") | None => None,
        Some(w) => Some(resolve(w, nvt, "texture coordinate")?),
    };
    let vn = match fields.next() {
        Some("") | None => None,
        Some(w) => Some(resolve(w, nvn, "normal")?),
    };
    if fields.next().is_some() {
        return Err(format!("face corner '{word}' has more than 3 fields"));
    }
    Ok(Corner { v, vt, vn })
}

/// Per-vertex attribute when every corner of every face names one consistent value for its
/// vertex; empty otherwise (or when the file has none). Vertices no face uses get zero.
fn one_to_one<T: Copy + PartialEq + Default>(
    vertex_count: usize,
    attrs: &[[(Option<u32>, Option<u32>); 3]],
    triangles: &[[u32; 3]],
    pick: impl Fn(&(Option<u32>, Option<u32>)) -> Option<u32>,
    values: &[T],
) -> Vec<T> {
    if values.is_empty() || triangles.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Option<T>> = vec![None; vertex_count];
    for (tri, attr) in triangles.iter().zip(attrs) {
        for (&v, a) in tri.iter().zip(attr) {
            let Some(value) = pick(a).and_then(|i| values.get(i as usize)).copied() else {
                return Vec::new();
            };
            match out.get_mut(v as usize) {
                Some(slot @ None) => *slot = Some(value),
                Some(Some(existing)) if *existing == value => {}
                _ => return Vec::new(),
            }
        }
    }
    out.into_iter().map(|x| x.unwrap_or_default()).collect()
}

/// Parts from `o`/`g` runs, when every run's triangles use only the vertices defined in that
/// run (so each part is self-contained); otherwise no parts (the mesh is one part).
fn clean_parts(segments: &[Segment], vertex_count: usize, triangles: &[[u32; 3]]) -> Vec<MeshPart> {
    if segments.len() < 2 {
        return Vec::new();
    }
    let mut parts = Vec::with_capacity(segments.len());
    for (s, seg) in segments.iter().enumerate() {
        let (v_end, t_end) = segments
            .get(s + 1)
            .map_or((vertex_count, triangles.len()), |next| (next.v_start, next.t_start));
        let vertices = seg.v_start..v_end;
        let tris = seg.t_start..t_end;
        let inside = triangles[tris.clone()]
            .iter()
            .all(|t| t.iter().all(|&v| vertices.contains(&(v as usize))));
        if !inside {
            return Vec::new();
        }
        parts.push(MeshPart {
            name: seg.name.clone(),
            vertices,
            triangles: tris,
            material: None,
        });
    }
    parts
}

/// The mesh as OBJ text: one `o` per part, `v` lines in vertex order (so vertex order round
/// trips), `vt`/`vn` lines with the same indices when the mesh has them, triangles as faces.
pub fn to_obj(character: &Character) -> String {
    let mesh = &character.mesh;
    let mut out = String::with_capacity(mesh.positions.len() * 40 + mesh.triangles.len() * 24);
    out.push_str("# written by rigml\n");
    let has_uv = !mesh.uvs.is_empty() && mesh.uvs.len() == mesh.positions.len();
    let has_n = !mesh.normals.is_empty() && mesh.normals.len() == mesh.positions.len();
    let named_parts = !mesh.parts.is_empty();
    for (i, part) in mesh.parts_or_whole().iter().enumerate() {
        if named_parts {
            let name = part.name.trim();
            if name.is_empty() {
                let _ = writeln!(out, "o part{i}");
            } else {
                let _ = writeln!(out, "o {}", name.replace(['\n', '\r', '#'], "_"));
            }
        }
        for v in part.vertices.clone() {
            if let Some(p) = mesh.positions.get(v) {
                let _ = writeln!(out, "v {} {} {}", p.x, p.y, p.z);
            }
            if has_uv {
                if let Some(t) = mesh.uvs.get(v) {
                    let _ = writeln!(out, "vt {} {}", t.x, t.y);
                }
            }
            if has_n {
                if let Some(n) = mesh.normals.get(v) {
                    let _ = writeln!(out, "vn {} {} {}", n.x, n.y, n.z);
                }
            }
        }
        for t in part.triangles.clone() {
            let Some(tri) = mesh.triangles.get(t) else {
                continue;
            };
            out.push('f');
            for &v in tri {
                let k = v as u64 + 1;
                let _ = match (has_uv, has_n) {
                    (false, false) => write!(out, " {k}"),
                    (true, false) => write!(out, " {k}/{k}"),
                    (false, true) => write!(out, " {k}//{k}"),
                    (true, true) => write!(out, " {k}/{k}/{k}"),
                };
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("test.obj")
    }

    #[test]
    fn quads_fan_and_relative_indices() {
        let text = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nv 2 0 0\nf -1 -4 -5\n";
        let f = parse(text.as_bytes(), p()).unwrap();
        assert_eq!(f.mesh.triangles, vec![[0, 1, 2], [0, 2, 3], [4, 1, 0]]);
        assert!(f.mesh.uvs.is_empty() && f.mesh.normals.is_empty());
        f.mesh.validate().unwrap();
    }

    #[test]
    fn attributes_kept_only_when_one_to_one() {
        let shared = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nvn 0 0 2\nf 1/1/1 2/2/1 3/3/1\n";
        let m = parse(shared.as_bytes(), p()).unwrap().mesh;
        assert_eq!(m.uvs, vec![Vec2::ZERO, Vec2::X, Vec2::Y]);
        assert_eq!(m.normals, vec![Vec3::Z; 3], "normals are unit length");
        // Vertex 1 gets two different uvs from two faces: a seam, so no per-vertex uvs.
        let seam = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nvt 0.5 0.5\n\
                    f 1/1 2/2 3/3\nf 2/4 4/2 3/3\n";
        let m = parse(seam.as_bytes(), p()).unwrap().mesh;
        assert!(m.uvs.is_empty());
        assert_eq!(m.triangles.len(), 2);
    }

    #[test]
    fn groups_and_parts() {
        // Blender-style objects: each owns its vertices, so they become parts.
        let text = "o A\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\no B\nv 0 0 1\nv 1 0 1\nv 0 1 1\nf 4 5 6\n";
        let f = parse(text.as_bytes(), p()).unwrap();
        assert_eq!(f.mesh.parts.len(), 2);
        assert_eq!(f.mesh.parts[1].name, "B");
        assert_eq!(f.mesh.parts[1].vertices, 3..6);
        assert_eq!(f.mesh.parts[1].triangles, 1..2);
        assert_eq!(f.group("B"), Some(&[3u32, 4, 5][..]));
        // MakeHuman-style: all vertices first, then groups of faces: no parts, but groups.
        let text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\ng body\nf 1 2 3\ng joint-x\nf 2 4 3\ng body\nf 1 3 4\n";
        let f = parse(text.as_bytes(), p()).unwrap();
        assert!(f.mesh.parts.is_empty());
        assert_eq!(f.group("body"), Some(&[0u32, 1, 2, 3][..]));
        assert_eq!(f.group("joint-x"), Some(&[1u32, 2, 3][..]));
    }

    #[test]
    fn bad_input_names_the_line() {
        let cases = [
            ("v 0 0 0\nv 1 0 0\nf 1 2 3\n", "line 3: vertex index 3 is out of range"),
            ("v 0 0\n", "line 1: missing z value"),
            ("v 0 nan 0\n", "line 1: y value 'nan' is not finite"),
            ("v 0 0 0\nf 1 1\n", "line 2: face has 2 vertices"),
            ("v 0 0 0\nf 0 1 1\n", "line 2: vertex index 0"),
            ("v 0 0 0\nf 1/x 1 1\n", "line 2: 'x' is not a texture coordinate index"),
            ("v 0 0 0\nf -2 1 1\n", "line 2: vertex index -2 is out of range"),
        ];
        for (text, expected) in cases {
            let e = parse(text.as_bytes(), p()).unwrap_err().to_string();
            assert!(e.starts_with("test.obj: ") && e.contains(expected), "{e}");
        }
        assert!(parse(&[b'v', b' ', 0xff], p())
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
    }

    #[test]
    fn writer_round_trips_vertex_order_parts_and_attributes() {
        let text = "o A\nv 0 0 0\nvt 0 0\nv 1 0 0\nvt 1 0\nv 0 1 0\nvt 0 1\nf 1/1 2/2 3/3\n\
                    o B\nv 0.1 0.2 0.3\nvt 0.5 0.5\nv 1e-7 0 1\nvt 1 1\nv 0 1 1\nvt 0 0\nf 4/4 5/5 6/6\n";
        let c = from_bytes(text.as_bytes(), p()).unwrap();
        let written = to_obj(&c);
        let back = from_bytes(written.as_bytes(), p()).unwrap();
        assert_eq!(back.mesh, c.mesh);
        assert_eq!(back.mesh.uvs.len(), 6);
    }

    #[test]
    fn no_prefix_or_corruption_panics() {
        let text = "o A\nv 0 0 0\nvt 0 0\nvn 0 0 1\nv 1 0 0\nvt 1 0\nv 0 1 0\nf 1/1/1 2/2/1 3/1/1\n\
                    g B\nv 1 1 1\nf -1 -2 -3 1\n";
        for end in 0..=text.len() {
            let _ = parse(&text.as_bytes()[..end], p());
        }
        let mut bytes = text.as_bytes().to_vec();
        let mut seed = 0x51_7cc1_b727_220au64;
        for _ in 0..5000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed % bytes.len() as u64) as usize;
            bytes[i] = b" /-0123456789\nfvog"[(seed >> 32) as usize % b" /-0123456789\nfvog".len()];
            if let Ok(c) = from_bytes(&bytes, p()) {
                let _ = to_obj(&c);
            }
        }
    }

    #[test]
    fn comments_crlf_and_unknown_statements_are_skipped() {
        let text = "# c\r\nmtllib a.mtl\r\nv 0 0 0 1 0 0\r\nv 1 0 0\r\nv 0 1 0 # trailing\r\ns off\r\nusemtl skin\r\nf 1 2 3\r\n";
        let m = parse(text.as_bytes(), p()).unwrap().mesh;
        assert_eq!(m.positions.len(), 3);
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
    }
}
