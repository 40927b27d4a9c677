//! Wavefront OBJ: triangle meshes without a skeleton.
//!
//! The reader keeps the file's vertex order exactly: mesh vertex `v` is the `v`-th `v` line.
//! Polygons are fan-triangulated (`f a b c d` → `a b c`, `a c d`); negative (relative) indices
//! are resolved against the vertices defined so far. A statement whose line ends in `\`
//! continues on the next line. Texture coordinates and normals are kept only when every face
//! corner of a vertex names the same value (a one-to-one map), because the mesh stores one
//! attribute per vertex and splitting vertices would break the vertex order.
//! `o`/`g` statements become mesh parts when each group owns a contiguous block of `v` lines
//! (what exporters write per object); the vertices each group's faces use are always available
//! in [`ObjFile::groups`] (MakeHuman's joint cubes are found this way).
//!
//! # Repairs and refusals
//!
//! These are repaired or left out, and [`read_with_warnings`] reports each kind once, with a
//! count and its first line:
//! - bytes that are not UTF-8 (a Latin-1 `æ`) in a name statement (`mtllib`, `usemtl`, `o`,
//!   `g`, `s`) are read as U+FFFD (a comment is never read, so bytes there need no repair);
//! - faces with 1 or 2 vertices are skipped;
//! - a face corner naming a normal that is not defined drops the normals of the whole mesh;
//! - line (`l`) and point (`p`) elements and free-form geometry (`cstype`, `curv`, `curv2`,
//!   `surf`, `parm`, `vp`, … `end`) are left out; the `v` vertices they use stay, as loose
//!   vertices, so the vertex order still follows the file;
//! - tinyobjloader's `vw` skin-weight lines are ignored: an OBJ has no skeleton to bind them to.
//!
//! Materials, smoothing groups and other statements the mesh cannot hold are skipped without
//! a warning. These are refused, with an error naming the line: UTF-16 text (a byte-order mark
//! or NUL bytes); bytes that are not UTF-8 in any other statement, where they could hide
//! geometry; numbers that do not parse or are not finite; a face with no vertices; vertex or
//! texture coordinate indices that are malformed, 0 or out of range; a normal index that is
//! malformed or 0; and a file with no `v` line.

use crate::error::read_file;
use crate::IoError;
use glam::{Vec2, Vec3};
use rigml_core::{Character, Mesh, MeshPart};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// A parsed OBJ file: its mesh, the vertex groups named by `g`/`o` statements, and what the
/// reader repaired or left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjFile {
    pub mesh: Mesh,
    /// For every distinct `g`/`o` name, in order of first appearance, the sorted, distinct
    /// vertices used by faces under that name.
    pub groups: Vec<(String, Vec<u32>)>,
    /// One line per kind of repair, in the order of their first lines, each naming its line
    /// but not the file (`line 15: 2 faces with fewer than 3 vertices skipped (first at line
    /// 15)`). Empty for a clean file.
    pub warnings: Vec<String>,
}

impl ObjFile {
    /// Vertices used by the faces of the group with this name.
    pub fn group(&self, name: &str) -> Option<&[u32]> {
        self.groups.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
    }
}

/// Read an OBJ file as a character with a mesh and no skeleton; [`read_with_warnings`] also
/// says what was repaired.
pub fn read(path: &Path) -> Result<Character, IoError> {
    read_with_warnings(path).map(|(character, _)| character)
}

/// Read an OBJ file as a character with a mesh and no skeleton, with one line per kind of
/// repair (see the module docs); each line names its place in the file, not the file.
pub fn read_with_warnings(path: &Path) -> Result<(Character, Vec<String>), IoError> {
    from_bytes_with_warnings(&read_file(path)?, path)
}

/// Parse OBJ bytes (`path` only names the file in errors) into a character.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Character, IoError> {
    from_bytes_with_warnings(bytes, path).map(|(character, _)| character)
}

/// [`from_bytes`], also returning the warnings of [`read_with_warnings`].
pub fn from_bytes_with_warnings(bytes: &[u8], path: &Path) -> Result<(Character, Vec<String>), IoError> {
    let file = parse(bytes, path)?;
    if file.mesh.positions.is_empty() {
        return Err(IoError::parse(path, "empty: no `v` lines, so no vertices"));
    }
    let character = Character {
        name: stem(path),
        mesh: file.mesh,
        ..Default::default()
    };
    Ok((character, file.warnings))
}

/// The bytes as UTF-8 text, or an error naming the line of the first bad byte.
pub(crate) fn utf8<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str, IoError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = line_of(bytes, e.valid_up_to());
        IoError::parse(path, format!("line {line}: not valid UTF-8 text"))
    })
}

/// The 1-based line that byte `at` of `bytes` is on.
fn line_of(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The file name without its extension (character and clip names).
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Statements whose arguments are only names (material files, materials, objects, groups,
/// smoothing groups): bytes that are not UTF-8 there cannot change geometry, so they are read
/// lossily instead of refusing the file.
const NAME_STATEMENTS: [&str; 5] = ["mtllib", "usemtl", "o", "g", "s"];

/// Free-form geometry statements: curves and surfaces, their parameter vertices, bases,
/// parameters, trimming loops and bodies. rigml keeps only polygon faces.
const FREE_FORM_STATEMENTS: [&str; 17] = [
    "vp", "cstype", "deg", "bmat", "step", "curv", "curv2", "surf", "parm", "trim", "hole", "scrv", "sp", "end", "con",
    "ctech", "stech",
];

/// One face corner: vertex, optional texture coordinate and normal (all 0-based), and the
/// index as written when the corner names a normal that is not defined.
#[derive(Clone, Copy)]
struct Corner {
    v: u32,
    vt: Option<u32>,
    vn: Option<u32>,
    undefined_normal: Option<i64>,
}

/// A run of statements under one `o`/`g` name: where its vertices and triangles begin.
struct Segment {
    name: String,
    v_start: usize,
    t_start: usize,
}

/// How often one kind of repair was made, and on which line first.
#[derive(Default, Clone, Copy)]
struct Tally {
    count: usize,
    first_line: usize,
}

impl Tally {
    fn add(&mut self, line: usize) {
        if self.count == 0 {
            self.first_line = line;
        }
        self.count += 1;
    }
}

/// Everything the reader repaired or left out, counted per kind.
#[derive(Default)]
struct Repairs {
    /// Physical lines of name statements with bytes that are not UTF-8.
    lossy_names: Tally,
    /// Faces with 1 or 2 vertices.
    short_faces: Tally,
    /// Faces with a corner naming a normal that is not defined.
    undefined_normals: Tally,
    /// The first such normal index as written, and how many normals were defined there.
    first_undefined_normal: (i64, usize),
    lines: Tally,
    points: Tally,
    free_form: Tally,
    /// `curv`/`curv2` and `surf` statements among the free-form ones.
    curves: usize,
    surfaces: usize,
    skin_weights: Tally,
}

/// "1 face" or "3 faces".
fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl Repairs {
    /// One line per kind of repair made, ordered by first line.
    fn warnings(&self) -> Vec<String> {
        let mut out: Vec<(usize, String)> = Vec::new();
        let mut push = |t: Tally, what: String| {
            if t.count > 0 {
                out.push((t.first_line, format!("line {}: {what}", t.first_line)));
            }
        };
        let t = self.lossy_names;
        push(
            t,
            format!(
                "{} (mtllib, usemtl, o, g, s) with bytes that are not UTF-8 read with U+FFFD in their place (first at line {})",
                count(t.count, "name statement line", "name statement lines"),
                t.first_line
            ),
        );
        let t = self.short_faces;
        push(
            t,
            format!(
                "{} with fewer than 3 vertices skipped (first at line {})",
                count(t.count, "face", "faces"),
                t.first_line
            ),
        );
        let t = self.undefined_normals;
        let (index, defined) = self.first_undefined_normal;
        push(
            t,
            format!(
                "{} a normal that is not defined, so the mesh's normals were dropped (first at line {}: \
                 normal index {index}, {defined} defined so far)",
                count(t.count, "face names", "faces name"),
                t.first_line
            ),
        );
        for (t, what) in [
            (self.lines, ("line element (l)", "line elements (l)")),
            (self.points, ("point element (p)", "point elements (p)")),
        ] {
            push(
                t,
                format!(
                    "{} left out, vertices kept (first at line {})",
                    count(t.count, what.0, what.1),
                    t.first_line
                ),
            );
        }
        let t = self.free_form;
        push(
            t,
            format!(
                "{} (cstype, curv, surf, parm, ...) left out, holding {} and {} (first at line {})",
                count(t.count, "free-form geometry statement", "free-form geometry statements"),
                count(self.curves, "curve", "curves"),
                count(self.surfaces, "surface", "surfaces"),
                t.first_line
            ),
        );
        let t = self.skin_weights;
        push(
            t,
            format!(
                "{} ignored: an OBJ has no skeleton to bind them to (first at line {})",
                count(t.count, "`vw` skin-weight line", "`vw` skin-weight lines"),
                t.first_line
            ),
        );
        out.sort_by_key(|(line, _)| *line);
        out.into_iter().map(|(_, w)| w).collect()
    }
}

/// Refuse UTF-16 text (a byte-order mark, or the NUL bytes UTF-16 writes beside every ASCII
/// character) and binary data: no OBJ statement holds a NUL byte.
fn refuse_utf16(bytes: &[u8], path: &Path) -> Result<(), IoError> {
    let problem = if bytes.starts_with(&[0xFE, 0xFF]) || bytes.starts_with(&[0xFF, 0xFE]) {
        Some((1, "a UTF-16 byte-order mark; save the file as UTF-8"))
    } else {
        bytes
            .iter()
            .position(|&b| b == 0)
            .map(|at| (line_of(bytes, at), "a NUL byte: UTF-16 or binary data"))
    };
    match problem {
        Some((line, why)) => Err(IoError::parse(
            path,
            format!("line {line}: not valid UTF-8 text ({why})"),
        )),
        None => Ok(()),
    }
}

/// One physical line's statement text (its comment already cut off) as UTF-8. Bytes that are
/// not UTF-8 are replaced by U+FFFD (an owned result) in a name statement; `continued` is the
/// keyword of the statement this line continues, if any. `None` for any other statement.
fn decode<'a>(data: &'a [u8], continued: Option<&str>) -> Option<Cow<'a, str>> {
    if let Ok(text) = std::str::from_utf8(data) {
        return Some(Cow::Borrowed(text));
    }
    let keyword = match continued {
        Some(k) => k.as_bytes(),
        None => data
            .split(|b| b.is_ascii_whitespace())
            .find(|w| !w.is_empty())
            .unwrap_or(b""),
    };
    NAME_STATEMENTS
        .iter()
        .any(|k| k.as_bytes() == keyword)
        .then(|| String::from_utf8_lossy(data))
}

/// Parse OBJ bytes into an [`ObjFile`]. Errors name the file and line; repairs are listed in
/// [`ObjFile::warnings`].
pub fn parse(bytes: &[u8], path: &Path) -> Result<ObjFile, IoError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    refuse_utf16(bytes, path)?;
    let mut builder = Builder::new();
    // A statement continued with `\`: its first line and its text so far.
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let data = raw.iter().position(|&b| b == b'#').map_or(raw, |hash| &raw[..hash]);
        let continued = pending.as_ref().and_then(|(_, text)| text.split_whitespace().next());
        let Some(text) = decode(data, continued) else {
            return Err(IoError::parse(path, format!("line {line_no}: not valid UTF-8 text")));
        };
        if let Cow::Owned(_) = text {
            builder.repairs.lossy_names.add(line_no);
        }
        if let Some(head) = text.trim_end().strip_suffix('\\') {
            let (_, joined) = pending.get_or_insert_with(|| (line_no, String::new()));
            joined.push_str(head);
            joined.push(' ');
            continue;
        }
        let (at, result) = match pending.take() {
            Some((first, mut joined)) => {
                joined.push_str(&text);
                (first, builder.statement(first, &joined))
            }
            None => (line_no, builder.statement(line_no, &text)),
        };
        result.map_err(|m| IoError::parse(path, format!("line {at}: {m}")))?;
    }
    if let Some((first, joined)) = pending {
        builder
            .statement(first, &joined)
            .map_err(|m| IoError::parse(path, format!("line {first}: {m}")))?;
    }
    Ok(builder.finish())
}

/// The state of [`parse`] between statements.
struct Builder {
    positions: Vec<Vec3>,
    texcoords: Vec<Vec2>,
    normals_in: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    /// Attribute indices of each triangle's corners, parallel to `triangles`.
    corner_attrs: Vec<[(Option<u32>, Option<u32>); 3]>,
    segments: Vec<Segment>,
    group_index: HashMap<String, usize>,
    groups: Vec<(String, Vec<u32>)>,
    current_group: Option<usize>,
    /// The corners of the face being read (kept to reuse its allocation).
    corners: Vec<Corner>,
    repairs: Repairs,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            positions: Vec::new(),
            texcoords: Vec::new(),
            normals_in: Vec::new(),
            triangles: Vec::new(),
            corner_attrs: Vec::new(),
            segments: vec![Segment {
                name: String::new(),
                v_start: 0,
                t_start: 0,
            }],
            group_index: HashMap::new(),
            groups: Vec::new(),
            current_group: None,
            corners: Vec::new(),
            repairs: Repairs::default(),
        }
    }

    /// Read one statement (comment removed, continuation lines joined) that starts on line
    /// `line_no`; the error is the problem without the place.
    fn statement(&mut self, line_no: usize, content: &str) -> Result<(), String> {
        let content = content.trim();
        let mut words = content.split_whitespace();
        let Some(keyword) = words.next() else {
            return Ok(());
        };
        match keyword {
            "v" => self.positions.push(read_vec3(&mut words)?),
            "vn" => self.normals_in.push(read_vec3(&mut words)?),
            "vt" => {
                let u = read_float(words.next(), "u")?;
                let v = match words.next() {
                    Some(w) => read_float(Some(w), "v")?,
                    None => 0.0,
                };
                self.texcoords.push(Vec2::new(u, v));
            }
            "f" => self.face(line_no, words)?,
            "o" | "g" => self.group(content[keyword.len()..].trim()),
            "l" => self.repairs.lines.add(line_no),
            "p" => self.repairs.points.add(line_no),
            "vw" => self.repairs.skin_weights.add(line_no),
            k if FREE_FORM_STATEMENTS.contains(&k) => {
                self.repairs.free_form.add(line_no);
                match k {
                    "curv" | "curv2" => self.repairs.curves += 1,
                    "surf" => self.repairs.surfaces += 1,
                    _ => {}
                }
            }
            // Materials, smoothing groups, subdivision tags and render attributes carry
            // nothing the mesh stores.
            _ => {}
        }
        Ok(())
    }

    /// An `f` statement: fan-triangulated, or skipped with a repair when it has 1 or 2
    /// vertices.
    fn face<'a>(&mut self, line_no: usize, words: impl Iterator<Item = &'a str>) -> Result<(), String> {
        self.corners.clear();
        for word in words {
            let corner = read_corner(word, self.positions.len(), self.texcoords.len(), self.normals_in.len())?;
            self.corners.push(corner);
        }
        match self.corners.len() {
            0 => return Err("face has 0 vertices, at least 3 needed".to_string()),
            1 | 2 => {
                self.repairs.short_faces.add(line_no);
                return Ok(());
            }
            _ => {}
        }
        if let Some(index) = self.corners.iter().find_map(|c| c.undefined_normal) {
            if self.repairs.undefined_normals.count == 0 {
                self.repairs.first_undefined_normal = (index, self.normals_in.len());
            }
            self.repairs.undefined_normals.add(line_no);
        }
        if let Some(g) = self.current_group {
            if let Some((_, members)) = self.groups.get_mut(g) {
                members.extend(self.corners.iter().map(|c| c.v));
            }
        }
        let first = self.corners[0];
        for pair in self.corners[1..].windows(2) {
            let tri = [first, pair[0], pair[1]];
            self.triangles.push(tri.map(|c| c.v));
            self.corner_attrs.push(tri.map(|c| (c.vt, c.vn)));
        }
        Ok(())
    }

    /// An `o` or `g` statement: starts a segment (a mesh part candidate) and a vertex group.
    fn group(&mut self, name: &str) {
        let last = self.segments.len() - 1;
        let seg = &mut self.segments[last];
        if seg.v_start == self.positions.len() && seg.t_start == self.triangles.len() {
            seg.name = name.to_string();
        } else {
            self.segments.push(Segment {
                name: name.to_string(),
                v_start: self.positions.len(),
                t_start: self.triangles.len(),
            });
        }
        let next = self.groups.len();
        let g = *self.group_index.entry(name.to_string()).or_insert(next);
        if g == next {
            self.groups.push((name.to_string(), Vec::new()));
        }
        self.current_group = Some(g);
    }

    fn finish(mut self) -> ObjFile {
        for (_, members) in &mut self.groups {
            members.sort_unstable();
            members.dedup();
        }
        let n = self.positions.len();
        let uvs = one_to_one(n, &self.corner_attrs, &self.triangles, |a| a.0, &self.texcoords);
        let normals = if self.repairs.undefined_normals.count > 0 {
            Vec::new()
        } else {
            one_to_one(n, &self.corner_attrs, &self.triangles, |a| a.1, &self.normals_in)
                .into_iter()
                .map(|v| v.normalize_or_zero())
                .collect()
        };
        let parts = clean_parts(&self.segments, n, &self.triangles);
        ObjFile {
            mesh: Mesh {
                positions: self.positions,
                normals,
                uvs,
                triangles: self.triangles,
                parts,
                ..Mesh::default()
            },
            groups: self.groups,
            warnings: self.repairs.warnings(),
        }
    }
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

/// Why an OBJ index cannot be used.
enum BadIndex {
    /// Not an index, or 0: the message says which.
    Malformed(String),
    /// A well-formed index (as written) that names an item not defined so far.
    OutOfRange(i64, String),
}

impl BadIndex {
    fn message(self) -> String {
        match self {
            BadIndex::Malformed(m) | BadIndex::OutOfRange(_, m) => m,
        }
    }
}

/// Resolve a 1-based (or negative, relative) OBJ index against `count` items defined so far.
fn resolve(word: &str, count: usize, what: &str) -> Result<u32, BadIndex> {
    let i: i64 = word
        .parse()
        .map_err(|_| BadIndex::Malformed(format!("'{word}' is not a {what} index")))?;
    let resolved = if i > 0 {
        i - 1
    } else if i < 0 {
        count as i64 + i
    } else {
        return Err(BadIndex::Malformed(format!("{what} index 0 (OBJ indices start at 1)")));
    };
    if resolved < 0 || resolved >= count as i64 || resolved > u32::MAX as i64 {
        return Err(BadIndex::OutOfRange(
            i,
            format!("{what} index {i} is out of range ({count} defined so far)"),
        ));
    }
    Ok(resolved as u32)
}

fn read_corner(word: &str, nv: usize, nvt: usize, nvn: usize) -> Result<Corner, String> {
    let mut fields = word.split('/');
    let v = resolve(fields.next().unwrap_or(""), nv, "vertex").map_err(BadIndex::message)?;
    let vt = match fields.next() {
        Some("") | None => None,
        Some(w) => Some(resolve(w, nvt, "texture coordinate").map_err(BadIndex::message)?),
    };
    let (vn, undefined_normal) = match fields.next() {
        Some("") | None => (None, None),
        Some(w) => match resolve(w, nvn, "normal") {
            Ok(i) => (Some(i), None),
            Err(BadIndex::OutOfRange(i, _)) => (None, Some(i)),
            Err(bad @ BadIndex::Malformed(_)) => return Err(bad.message()),
        },
    };
    if fields.next().is_some() {
        return Err(format!("face corner '{word}' has more than 3 fields"));
    }
    Ok(Corner {
        v,
        vt,
        vn,
        undefined_normal,
    })
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
            ("v 0 0 0\nf\n", "line 2: face has 0 vertices"),
            ("v 0 0 0\nf 1 2\n", "line 2: vertex index 2 is out of range"),
            ("v 0 0 0\nvn 0 0 1\nf 1//0 1//1 1//1\n", "line 3: normal index 0"),
            ("v 0 0 0\nf 1//x 1 1\n", "line 2: 'x' is not a normal index"),
            (
                "v 0 0 0\nvt 0 0\nf 1/2 1/1 1/1\n",
                "line 3: texture coordinate index 2 is out of range",
            ),
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

    /// Parse `text` and return the mesh and the warnings.
    fn warned(text: &[u8]) -> (Mesh, Vec<String>) {
        let f = parse(text, p()).unwrap();
        (f.mesh, f.warnings)
    }

    const TRI: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";

    #[test]
    fn clean_files_have_no_warnings() {
        let (m, w) = warned(b"# caf\xe9 in a comment is never read\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 # \xff\n");
        assert_eq!(m.triangles.len(), 1);
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn names_that_are_not_utf8_are_read_lossily_with_one_warning() {
        let mut text = b"mtllib material\xff.mtl\n".to_vec();
        text.extend_from_slice(TRI.as_bytes());
        text.extend_from_slice(b"o Terraind\xe6k\nusemtl Terraind\xe6k\ns 1\nf 1 2 3\ng \\\n  tail\xe9\n");
        let f = parse(&text, p()).unwrap();
        assert_eq!(f.mesh.triangles.len(), 1);
        assert_eq!(f.groups[0].0, "Terraind\u{fffd}k");
        assert_eq!(f.groups[1].0, "tail\u{fffd}", "a continuation line of a name statement");
        assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
        let w = &f.warnings[0];
        assert!(
            w.starts_with("line 1: 4 name statement lines ") && w.ends_with("(first at line 1)"),
            "{w}"
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_in_data_or_utf16_are_refused() {
        let cases: [(&[u8], &str); 7] = [
            (b"v 0 0 0\nv 1 \xff 0\n", "line 2: not valid UTF-8 text"),
            (
                b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 \xe93\n",
                "line 4: not valid UTF-8 text",
            ),
            (b"v 0 0 0\n\xe6v 1 0 0\n", "line 2: not valid UTF-8 text"),
            (b"v 0 0 0\nf 1 \\\n \xff\n", "line 3: not valid UTF-8 text"),
            (
                b"\xfe\xff\x00v\x00 \x001",
                "line 1: not valid UTF-8 text (a UTF-16 byte-order mark",
            ),
            (
                b"\xff\xfev\x00 \x001\x00",
                "line 1: not valid UTF-8 text (a UTF-16 byte-order mark",
            ),
            (b"v 0 0 0\nv\x00 \x001\x00", "line 2: not valid UTF-8 text (a NUL byte"),
        ];
        for (text, expected) in cases {
            let e = parse(text, p()).unwrap_err().to_string();
            assert!(e.starts_with("test.obj: ") && e.contains(expected), "{e}");
        }
        // A NUL byte is refused even in a name or a comment: UTF-16 without a byte-order mark.
        assert!(parse(b"v 0 0 0\no a\x00b\n", p()).is_err());
        assert!(parse(b"#\x00 x\nv 0 0 0\n", p()).is_err());
    }

    #[test]
    fn utf8_byte_order_mark_is_skipped() {
        let mut text = b"\xEF\xBB\xBF".to_vec();
        text.extend_from_slice(TRI.as_bytes());
        let (m, w) = warned(&text);
        assert_eq!(m.positions.len(), 3, "the first `v` line is read");
        assert!(w.is_empty());
    }

    #[test]
    fn faces_with_one_or_two_vertices_are_skipped_with_one_warning() {
        let text = format!("{TRI}f 1\nf 1 2 3\nf 3 2\n");
        let (m, w) = warned(text.as_bytes());
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        assert_eq!(
            w,
            vec!["line 4: 2 faces with fewer than 3 vertices skipped (first at line 4)"]
        );
        // Groups do not list the vertices of a skipped face.
        let f = parse(format!("{TRI}v 1 1 0\ng a\nf 4 2\nf 1 2 3\n").as_bytes(), p()).unwrap();
        assert_eq!(f.group("a"), Some(&[0u32, 1, 2][..]));
    }

    #[test]
    fn undefined_normals_drop_the_mesh_normals_with_one_warning() {
        // No `vn` at all (tinyobjloader's catmark_torus_creases0).
        let text = format!("{TRI}vt 0 0\nf 1/1/1 2/1/2 3/1/3\nf 1//1 2//2 3//3\n");
        let (m, w) = warned(text.as_bytes());
        assert_eq!(m.triangles.len(), 2);
        assert!(m.normals.is_empty());
        assert_eq!(m.uvs.len(), 0, "the second face has no uvs, so none are kept");
        assert_eq!(
            w,
            vec![
                "line 5: 2 faces name a normal that is not defined, so the mesh's normals were dropped \
                 (first at line 5: normal index 1, 0 defined so far)"
            ]
        );
        // Some normals defined, one face names one past them (or too far back): all are dropped.
        let text = format!("{TRI}vn 0 0 1\nf 1//1 2//1 3//1\nf 1//-2 2//1 3//1\n");
        let (m, w) = warned(text.as_bytes());
        assert!(m.normals.is_empty());
        assert!(
            w[0].starts_with("line 6: 1 face names") && w[0].contains("normal index -2, 1 defined"),
            "{w:?}"
        );
        // Texture coordinates on the same corners are kept.
        let text = format!("{TRI}vt 0 0\nvt 1 0\nvt 0 1\nf 1/1/7 2/2/7 3/3/7\n");
        let (m, w) = warned(text.as_bytes());
        assert_eq!(m.uvs.len(), 3);
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn lines_points_and_free_form_are_left_out_with_one_warning_each() {
        let text = format!(
            "{TRI}v 1 1 0\nf 1 2 3\nl 1 2\nl 2/1 3/1 4/1\np 4\nvw 0 0 1.0\np 1 2\nvw 1 0 0.5 1 0.5\n\
             cstype bspline\ndeg 2\nvp 0.5 0.5\ncurv 0 1 1 2 \\\n 3 4\nparm u 0 0 0 1 1 1\nend\n\
             surf 0 1 0 1 1 2 3 4\nend\nl 3 4\n"
        );
        let (m, w) = warned(text.as_bytes());
        assert_eq!(m.positions.len(), 4, "every `v` vertex is kept");
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        assert_eq!(
            w,
            vec![
                "line 6: 3 line elements (l) left out, vertices kept (first at line 6)",
                "line 8: 2 point elements (p) left out, vertices kept (first at line 8)",
                "line 9: 2 `vw` skin-weight lines ignored: an OBJ has no skeleton to bind them to (first at line 9)",
                "line 12: 8 free-form geometry statements (cstype, curv, surf, parm, ...) left out, \
                 holding 1 curve and 1 surface (first at line 12)",
            ]
        );
        // A file of lines only still loads, as loose vertices, with the warning.
        let (c, w) = from_bytes_with_warnings(format!("{TRI}l 1 2 3\n").as_bytes(), p()).unwrap();
        assert_eq!((c.mesh.positions.len(), c.mesh.triangles.len()), (3, 0));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn continued_lines_are_one_statement_named_by_their_first_line() {
        let text = format!("{TRI}f 1 \\\n  2 \\\n 3\nf \\\n 1 2 0\n");
        let e = parse(text.as_bytes(), p()).unwrap_err().to_string();
        assert!(e.ends_with("line 7: vertex index 0 (OBJ indices start at 1)"), "{e}");
        // Line numbers after a continued statement stay physical; a file may end with `\`.
        let text = format!("{TRI}f 1 \\\r\n 2 3\r\nf 1 2 x\n");
        let e = parse(text.as_bytes(), p()).unwrap_err().to_string();
        assert!(e.ends_with("line 6: 'x' is not a vertex index"), "{e}");
        let m = parse(format!("{TRI}f 1 2 3 \\").as_bytes(), p()).unwrap().mesh;
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        // A `\` in a comment does not continue the line.
        let m = parse(format!("{TRI}# C:\\dir\\\nf 1 2 3\n").as_bytes(), p())
            .unwrap()
            .mesh;
        assert_eq!(m.triangles.len(), 1);
    }

    #[test]
    fn read_with_warnings_reads_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.obj");
        std::fs::write(&path, format!("{TRI}f 1 2 3\nf 1 2\n")).unwrap();
        let (c, w) = read_with_warnings(&path).unwrap();
        assert_eq!(c.name, "lines");
        assert_eq!(c.mesh.triangles.len(), 1);
        assert_eq!(
            w,
            vec!["line 5: 1 face with fewer than 3 vertices skipped (first at line 5)"]
        );
        assert_eq!(read(&path).unwrap().mesh, c.mesh);
        let e = read_with_warnings(&dir.path().join("missing.obj")).unwrap_err();
        assert!(e.to_string().contains("missing.obj"));
    }
}
