//! Midpoint subdivision of a skinned character: every triangle split in four, the skin (and
//! normals and UVs) interpolated linearly at the new vertices.
//!
//! What it is for: a denser copy of the same binding. Training characters are mostly low-poly;
//! meshes from other tools are often dense and smooth. The skin model's training can add such
//! copies (density augmentation) and `rigml eval --subdivide` scores every method on them, so
//! that a method's dependence on mesh density shows as a number.

use crate::{Character, CoreError, Skin};
use std::collections::HashMap;

/// `character` with each triangle split in four at its edge midpoints: one new vertex per
/// distinct index pair (shared by the triangles on both sides; a UV seam's two copies of an edge
/// get two, as the original has two vertices there), appended after the original vertices,
/// which keep their indices. A new vertex takes the mean of its two corners' positions, UVs,
/// normals (renormalised) and skin rows, as the artist's weights vary across a triangle when
/// drawn; its row may hold up to twice the original's most influences. Triangles keep their
/// order (four per original, the corner ones first) and winding. Mesh parts are dropped (their
/// vertex ranges no longer hold); skeleton, clips and attachments are kept.
pub fn subdivided(character: &Character) -> Result<Character, CoreError> {
    character.validate()?;
    let mesh = &character.mesh;
    let mut positions = mesh.positions.clone();
    let mut normals = mesh.normals.clone();
    let mut uvs = mesh.uvs.clone();
    let mut rows: Vec<Vec<(u32, f32)>> = character
        .skin
        .as_ref()
        .map(|s| {
            s.rows()
                .map(|r| r.iter().map(|i| (i.joint, i.weight)).collect())
                .collect()
        })
        .unwrap_or_default();
    let mut midpoint: HashMap<(u32, u32), u32> = HashMap::with_capacity(mesh.triangles.len() * 2);
    let mut triangles = Vec::with_capacity(mesh.triangles.len() * 4);
    for t in &mesh.triangles {
        let mut m = [0u32; 3];
        for (e, slot) in m.iter_mut().enumerate() {
            let (a, b) = (t[e], t[(e + 1) % 3]);
            *slot = *midpoint.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let (a, b) = (a as usize, b as usize);
                positions.push((positions[a] + positions[b]) * 0.5);
                if !normals.is_empty() {
                    normals.push((normals[a] + normals[b]).normalize_or_zero());
                }
                if !uvs.is_empty() {
                    uvs.push((uvs[a] + uvs[b]) * 0.5);
                }
                if !rows.is_empty() {
                    let row = rows[a].iter().chain(&rows[b]).map(|&(j, w)| (j, 0.5 * w)).collect();
                    rows.push(row);
                }
                (positions.len() - 1) as u32
            });
        }
        triangles.push([t[0], m[0], m[2]]);
        triangles.push([t[1], m[1], m[0]]);
        triangles.push([t[2], m[2], m[1]]);
        triangles.push(m);
    }
    let skin = match &character.skin {
        Some(s) => Some(Skin::from_rows(
            rows.iter().map(Vec::as_slice),
            character.skeleton.joint_count(),
            s.influences_max().max(1) * 2,
        )?),
        None => None,
    };
    let mut out = character.clone();
    out.mesh.positions = positions;
    out.mesh.normals = normals;
    out.mesh.uvs = uvs;
    out.mesh.triangles = triangles;
    out.mesh.parts.clear();
    out.skin = skin;
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
