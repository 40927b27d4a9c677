//! Triangle meshes: the surface a skin deforms.

use crate::{CoreError, Image, Material};
use glam::{Vec2, Vec3};
use std::ops::Range;

/// A contiguous block of a [`Mesh`] that came from one source primitive (a glTF primitive, an
/// FBX mesh, an OBJ group). Writers use parts to give back one primitive per source primitive,
/// so vertex order is preserved end to end.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshPart {
    /// Source name (node or mesh name), for people; may be empty.
    pub name: String,
    /// Vertices of this part, as a range into [`Mesh::positions`].
    pub vertices: Range<usize>,
    /// Triangles of this part, as a range into [`Mesh::triangles`].
    pub triangles: Range<usize>,
    /// Index into [`Mesh::materials`]; `None` draws with the viewer's default material.
    pub material: Option<usize>,
}

/// A triangle mesh in the character's bind (model) space, units of the source file.
///
/// Vertex order is the file's own (METRICS.md §1): parts are concatenated in source order and
/// never welded or re-ordered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mesh {
    /// Vertex positions, one per vertex.
    pub positions: Vec<Vec3>,
    /// Unit vertex normals, one per vertex, or empty when the source had none.
    pub normals: Vec<Vec3>,
    /// Texture coordinates, one per vertex, or empty when the source had none.
    pub uvs: Vec<Vec2>,
    /// Triangles as vertex indices, counter-clockwise front faces.
    pub triangles: Vec<[u32; 3]>,
    /// Source primitives, covering all vertices and triangles in order; empty means one part.
    pub parts: Vec<MeshPart>,
    /// The parts' materials (carried through unchanged; see [`crate::material`]).
    pub materials: Vec<Material>,
    /// Texture images the materials use.
    pub images: Vec<Image>,
}

impl Mesh {
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The parts of the mesh; a mesh without explicit parts is one part covering everything.
    pub fn parts_or_whole(&self) -> Vec<MeshPart> {
        if self.parts.is_empty() {
            vec![MeshPart {
                name: String::new(),
                vertices: 0..self.positions.len(),
                triangles: 0..self.triangles.len(),
                material: None,
            }]
        } else {
            self.parts.clone()
        }
    }

    /// Axis-aligned bounds `(min, max)`, or `None` for an empty mesh.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let first = *self.positions.first()?;
        Some(
            self.positions
                .iter()
                .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p))),
        )
    }

    /// Append another mesh as a new part, shifting its indices.
    pub fn append(&mut self, other: &Mesh, name: &str) {
        let v0 = self.positions.len();
        let t0 = self.triangles.len();
        if self.parts.is_empty() && v0 > 0 {
            self.parts = self.parts_or_whole();
        }
        // Optional attributes stay consistent: if either side lacks one, fill with zeros.
        merge_attribute(&mut self.normals, &other.normals, v0, other.positions.len(), Vec3::ZERO);
        merge_attribute(&mut self.uvs, &other.uvs, v0, other.positions.len(), Vec2::ZERO);
        self.positions.extend_from_slice(&other.positions);
        let shift = v0 as u32;
        self.triangles.extend(
            other
                .triangles
                .iter()
                .map(|t| [t[0] + shift, t[1] + shift, t[2] + shift]),
        );
        self.parts.push(MeshPart {
            name: name.to_string(),
            vertices: v0..self.positions.len(),
            triangles: t0..self.triangles.len(),
            material: None,
        });
    }

    /// Area-weighted vertex normals computed from the triangles (zero for isolated vertices).
    pub fn compute_normals(&self) -> Vec<Vec3> {
        let mut normals = vec![Vec3::ZERO; self.positions.len()];
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| i as usize);
            if a >= normals.len() || b >= normals.len() || c >= normals.len() {
                continue;
            }
            let n = (self.positions[b] - self.positions[a]).cross(self.positions[c] - self.positions[a]);
            normals[a] += n;
            normals[b] += n;
            normals[c] += n;
        }
        normals.iter().map(|n| n.normalize_or_zero()).collect()
    }

    /// Check the invariants: finite positions, triangle indices in range, attribute lengths,
    /// parts within bounds, and materials and texture images that exist.
    pub fn validate(&self) -> Result<(), CoreError> {
        self.validate_with_materials(self.materials.len())?;
        crate::material::validate(&self.materials, &self.images)
    }

    /// [`Mesh::validate`] with the parts' materials checked against `material_count` materials
    /// kept elsewhere (an [`crate::Attachment`]'s parts use the character's), and no check of
    /// this mesh's own materials.
    pub fn validate_with_materials(&self, material_count: usize) -> Result<(), CoreError> {
        let n = self.positions.len();
        if let Some(vertex) = self.positions.iter().position(|p| !p.is_finite()) {
            return Err(CoreError::NonFinitePosition { vertex });
        }
        for (triangle, tri) in self.triangles.iter().enumerate() {
            if let Some(&index) = tri.iter().find(|&&i| i as usize >= n) {
                return Err(CoreError::TriangleIndexOutOfRange {
                    triangle,
                    index,
                    vertex_count: n,
                });
            }
        }
        check_len("normals", self.normals.len(), n)?;
        check_len("uvs", self.uvs.len(), n)?;
        for (part, p) in self.parts.iter().enumerate() {
            if p.vertices.end > n || p.vertices.start > p.vertices.end {
                return Err(CoreError::PartOutOfRange {
                    part,
                    start: p.vertices.start,
                    end: p.vertices.end,
                    vertex_count: n,
                });
            }
            if let Some(material) = p.material.filter(|&m| m >= material_count) {
                return Err(CoreError::MaterialOutOfRange {
                    part,
                    material,
                    material_count,
                });
            }
        }
        Ok(())
    }
}

fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), CoreError> {
    if got != 0 && got != expected {
        return Err(CoreError::AttributeLength { what, got, expected });
    }
    Ok(())
}

fn merge_attribute<T: Copy>(mine: &mut Vec<T>, theirs: &[T], my_len: usize, their_len: usize, zero: T) {
    match (mine.is_empty() && my_len > 0, theirs.is_empty()) {
        (_, true) if mine.is_empty() => {}
        (_, true) => mine.extend(std::iter::repeat_n(zero, their_len)),
        (true, false) => {
            mine.resize(my_len, zero);
            mine.extend_from_slice(theirs);
        }
        (false, false) => mine.extend_from_slice(theirs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triangle() -> Mesh {
        Mesh {
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            triangles: vec![[0, 1, 2]],
            ..Default::default()
        }
    }

    #[test]
    fn append_shifts_indices_and_records_parts() {
        let mut m = triangle();
        m.append(&triangle(), "second");
        assert_eq!(m.triangles[1], [3, 4, 5]);
        assert_eq!(m.parts.len(), 2);
        assert_eq!(m.parts[1].vertices, 3..6);
        m.validate().unwrap();
    }

    #[test]
    fn validate_rejects_bad_index_and_nan() {
        let mut m = triangle();
        m.triangles[0][2] = 7;
        assert!(matches!(
            m.validate(),
            Err(CoreError::TriangleIndexOutOfRange { index: 7, .. })
        ));
        let mut m = triangle();
        m.positions[1].y = f32::NAN;
        assert_eq!(m.validate(), Err(CoreError::NonFinitePosition { vertex: 1 }));
    }

    #[test]
    fn normals_point_along_face_normal() {
        let n = triangle().compute_normals();
        assert!((n[0] - Vec3::Z).length() < 1e-6);
    }
}
