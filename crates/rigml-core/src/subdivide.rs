//! Midpoint subdivision of a skinned character: every triangle split in four, the skin (and
//! normals and UVs) interpolated linearly at the new vertices.
//!
//! What it is for: a denser copy of the same binding. Training characters are mostly low-poly;
//! meshes from other tools are often dense and smooth. The skin model's training can add such
//! copies (density augmentation) and `rigml eval --subdivide` scores every method on them, so
//! that a method's dependence on mesh density shows as a number.

use crate::{Character, CoreError, Skin};
use std::collections::HashMap;

/// One round of midpoint subdivision of a triangle list over `vertex_count` vertices: every
/// triangle split in four through its edge midpoints, one new vertex per distinct index pair
/// (shared by the triangles on both sides, so the surface stays connected; a UV seam's two
/// copies of an edge get two, as the original has two vertices there). New vertices are
/// numbered from `vertex_count` on, in the order they appear; returns the new triangles (four
/// per original, in order, winding kept: `[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]`)
/// and, per new vertex, the two corners it lies between. The caller interpolates whatever the
/// vertices carry.
pub fn split_triangles(vertex_count: usize, triangles: &[[u32; 3]]) -> (Vec<[u32; 3]>, Vec<(u32, u32)>) {
    let mut index: HashMap<(u32, u32), u32> = HashMap::with_capacity(triangles.len() * 3 / 2);
    let mut corners: Vec<(u32, u32)> = Vec::with_capacity(triangles.len() * 3 / 2);
    let mut out = Vec::with_capacity(triangles.len() * 4);
    for &[a, b, c] in triangles {
        let mut mid = |a: u32, b: u32| {
            *index.entry((a.min(b), a.max(b))).or_insert_with(|| {
                corners.push((a.min(b), a.max(b)));
                (vertex_count + corners.len() - 1) as u32
            })
        };
        let (ab, bc, ca) = (mid(a, b), mid(b, c), mid(c, a));
        out.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
    }
    (out, corners)
}

/// `character` with each triangle split in four at its edge midpoints ([`split_triangles`]);
/// the original vertices keep their indices. A new vertex takes the mean of its two corners'
/// positions, UVs, normals (renormalised) and skin rows, as the artist's weights vary across a
/// triangle when drawn; its row may hold up to twice the original's most influences. Mesh
/// parts are dropped (their vertex ranges no longer hold); skeleton, clips and attachments are
/// kept.
pub fn subdivided(character: &Character) -> Result<Character, CoreError> {
    character.validate()?;
    let mesh = &character.mesh;
    let (triangles, corners) = split_triangles(mesh.positions.len(), &mesh.triangles);
    let mut out = character.clone();
    let m = &mut out.mesh;
    m.positions.extend(
        corners
            .iter()
            .map(|&(a, b)| (mesh.positions[a as usize] + mesh.positions[b as usize]) * 0.5),
    );
    if !mesh.normals.is_empty() {
        let n = &mesh.normals;
        m.normals.extend(
            corners
                .iter()
                .map(|&(a, b)| (n[a as usize] + n[b as usize]).normalize_or_zero()),
        );
    }
    if !mesh.uvs.is_empty() {
        let uv = &mesh.uvs;
        m.uvs
            .extend(corners.iter().map(|&(a, b)| (uv[a as usize] + uv[b as usize]) * 0.5));
    }
    m.triangles = triangles;
    m.parts.clear();
    if let Some(skin) = &character.skin {
        let row = |v: u32| skin.influences(v as usize).iter().map(|i| (i.joint, 0.5 * i.weight));
        let rows: Vec<Vec<(u32, f32)>> = skin
            .rows()
            .map(|r| r.iter().map(|i| (i.joint, i.weight)).collect())
            .chain(corners.iter().map(|&(a, b)| row(a).chain(row(b)).collect()))
            .collect();
        out.skin = Some(Skin::from_rows(
            rows.iter().map(Vec::as_slice),
            character.skeleton.joint_count(),
            skin.influences_max().max(1) * 2,
        )?);
    }
    out.validate()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Mesh, Skeleton, Transform};
    use glam::{Vec2, Vec3};

    /// A unit square of two triangles over two joints: the left edge bound to joint 0, the
    /// right edge to joint 1.
    fn square() -> Character {
        let mesh = Mesh {
            positions: vec![
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
            ],
            uvs: vec![Vec2::ZERO, Vec2::X, Vec2::ONE, Vec2::Y],
            triangles: vec![[0, 1, 2], [0, 2, 3]],
            ..Mesh::default()
        };
        let skeleton = Skeleton {
            names: vec!["a".into(), "b".into()],
            parents: vec![None, Some(0)],
            rest_local: vec![Transform::IDENTITY, Transform::from_translation(Vec3::X)],
            inverse_bind: vec![glam::Mat4::IDENTITY, glam::Mat4::from_translation(-Vec3::X)],
        };
        let skin = Skin::rigid(&[0, 1, 1, 0], 2).unwrap();
        Character {
            name: "square".into(),
            mesh,
            skeleton,
            skin: Some(skin),
            clips: Vec::new(),
            attachments: Vec::new(),
        }
    }

    #[test]
    fn every_triangle_splits_in_four_and_the_skin_interpolates() {
        let c = square();
        let s = subdivided(&c).unwrap();
        // Five edges (the diagonal shared): five new vertices, eight triangles.
        assert_eq!(s.mesh.positions.len(), 9);
        assert_eq!(s.mesh.triangles.len(), 8);
        assert_eq!(&s.mesh.positions[..4], &c.mesh.positions[..]);
        assert_eq!(s.mesh.uvs.len(), 9);
        let skin = s.skin.as_ref().unwrap();
        let rows: Vec<Vec<(u32, f32)>> = skin
            .rows()
            .map(|r| r.iter().map(|i| (i.joint, i.weight)).collect())
            .collect();
        for (v, p) in s.mesh.positions.iter().enumerate() {
            // The artist's field here is linear in x: joint 1's weight is x.
            let w1: f32 = rows[v].iter().filter(|e| e.0 == 1).map(|e| e.1).sum();
            assert!((w1 - p.x).abs() < 1e-6, "vertex {v} at {p}: {:?}", rows[v]);
            assert!((s.mesh.uvs[v] - p.truncate()).length() < 1e-6);
        }
        // Same winding and area, face by face.
        let normal = |m: &Mesh| -> Vec3 {
            m.triangles
                .iter()
                .map(|t| {
                    let [a, b, c] = t.map(|i| m.positions[i as usize]);
                    (b - a).cross(c - a)
                })
                .sum()
        };
        assert!((normal(&s.mesh) - normal(&c.mesh)).length() < 1e-6);
        assert!(s.mesh.triangles.iter().all(|t| {
            let [a, b, c] = t.map(|i| s.mesh.positions[i as usize]);
            (b - a).cross(c - a).z > 0.0
        }));
    }

    #[test]
    fn a_bad_triangle_is_an_error_not_a_panic() {
        let mut c = square();
        c.mesh.triangles.push([0, 1, 7]);
        assert!(subdivided(&c).is_err());
    }
}
