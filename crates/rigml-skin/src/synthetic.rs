//! Generated test meshes for the solvers' tests and benchmarks: open tubes around a straight
//! joint chain (the shape Blender's timings in ALGORITHMS.md §2 were measured on), and the
//! procedural demo humanoid subdivided to any size (the 1M-vertex memory runs of issue 3).

use glam::{Mat4, Vec3};
use rigml_core::{CoreError, Mesh, Skeleton, Transform};

/// A tube of `radius` around a chain of `bones` bones of `bone_length` along +Y.
///
/// The skeleton has `bones + 1` joints at `y = k * bone_length` (the last one a leaf with a real
/// bone); the tube has `bones * rings_per_bone + 1` rings of `around` vertices, open at both
/// ends. Vertex count = `(bones * rings_per_bone + 1) * around`.
pub fn tube_chain(
    bones: usize,
    rings_per_bone: usize,
    around: usize,
    radius: f32,
    bone_length: f32,
) -> (Mesh, Skeleton) {
    let bones = bones.max(1);
    let rings = bones * rings_per_bone.max(1) + 1;
    let around = around.max(3);
    let height = bones as f32 * bone_length;
    let mut positions = Vec::with_capacity(rings * around);
    for r in 0..rings {
        let y = height * r as f32 / (rings - 1) as f32;
        for a in 0..around {
            let phi = std::f32::consts::TAU * a as f32 / around as f32;
            positions.push(Vec3::new(radius * phi.cos(), y, radius * phi.sin()));
        }
    }
    let mut triangles = Vec::with_capacity((rings - 1) * around * 2);
    let idx = |r: usize, a: usize| (r * around + a % around) as u32;
    for r in 0..rings - 1 {
        for a in 0..around {
            // Counter-clockwise seen from outside.
            triangles.push([idx(r, a), idx(r + 1, a), idx(r, a + 1)]);
            triangles.push([idx(r, a + 1), idx(r + 1, a), idx(r + 1, a + 1)]);
        }
    }
    let mesh = Mesh {
        positions,
        triangles,
        ..Default::default()
    };
    let joints = bones + 1;
    let mut skeleton = Skeleton {
        names: (0..joints).map(|j| format!("bone{j}")).collect(),
        parents: (0..joints).map(|j| j.checked_sub(1)).collect(),
        rest_local: (0..joints)
            .map(|j| Transform::from_translation(if j == 0 { Vec3::ZERO } else { Vec3::Y * bone_length }))
            .collect(),
        inverse_bind: vec![Mat4::IDENTITY; joints],
    };
    skeleton.bind_to_rest();
    (mesh, skeleton)
}

/// [`tube_chain`] closed by a fan at each end (two extra vertices on the axis), so that it
/// encloses a volume.
pub fn closed_tube_chain(
    bones: usize,
    rings_per_bone: usize,
    around: usize,
    radius: f32,
    bone_length: f32,
) -> (Mesh, Skeleton) {
    let (mut mesh, skeleton) = tube_chain(bones, rings_per_bone, around, radius, bone_length);
    let around = around.max(3) as u32;
    let last_ring = mesh.vertex_count() as u32 - around;
    let height = bones.max(1) as f32 * bone_length;
    let bottom = mesh.vertex_count() as u32;
    mesh.positions.push(Vec3::ZERO);
    mesh.positions.push(Vec3::Y * height);
    let top = bottom + 1;
    for a in 0..around {
        let b = (a + 1) % around;
        mesh.triangles.push([bottom, a, b]);
        mesh.triangles.push([top, last_ring + b, last_ring + a]);
    }
    (mesh, skeleton)
}

/// One round of midpoint subdivision: every triangle split into four through its edge
/// midpoints (shared between the two triangles of an edge, so the surface stays connected).
/// About four times the vertices of a closed mesh; normals, UVs and parts are dropped.
pub fn subdivide(mesh: &Mesh) -> Mesh {
    let (triangles, corners) = rigml_core::subdivide::split_triangles(mesh.positions.len(), &mesh.triangles);
    let mut positions = mesh.positions.clone();
    positions.reserve(corners.len());
    for (a, b) in corners {
        let at = |v: u32| positions.get(v as usize).copied().unwrap_or(Vec3::NAN);
        let p = (at(a) + at(b)) * 0.5;
        positions.push(p);
    }
    Mesh {
        positions,
        triangles,
        ..Default::default()
    }
}

/// The procedural demo humanoid ([`rigml_geom::procedural::demo_humanoid`]: 21 joints, one
/// tube per body part) subdivided until it has at least `min_vertices` vertices.
pub fn large_humanoid(min_vertices: usize) -> Result<(Mesh, Skeleton), CoreError> {
    let character = rigml_geom::procedural::demo_humanoid()?;
    let mut mesh = character.mesh;
    while mesh.vertex_count() < min_vertices && !mesh.triangles.is_empty() {
        mesh = subdivide(&mesh);
    }
    Ok((mesh, character.skeleton))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdivision_quadruples_a_closed_mesh_and_keeps_it_closed() {
        let (closed, _) = closed_tube_chain(2, 2, 8, 0.1, 1.0);
        let finer = subdivide(&closed);
        finer.validate().unwrap();
        assert_eq!(finer.triangle_count(), 4 * closed.triangle_count());
        // Euler: V - E + F = 2 with E = 3F / 2, so V' = V + E.
        assert_eq!(
            finer.vertex_count(),
            closed.vertex_count() + closed.triangle_count() * 3 / 2
        );
        assert_eq!(finer.bounds(), closed.bounds());
        let (humanoid, skeleton) = large_humanoid(20_000).unwrap();
        assert!(humanoid.vertex_count() >= 20_000);
        humanoid.validate().unwrap();
        assert_eq!(skeleton.joint_count(), 21);
    }

    #[test]
    fn counts_and_validity() {
        let (mesh, skeleton) = tube_chain(20, 16, 32, 0.1, 0.5);
        assert_eq!(mesh.vertex_count(), 321 * 32);
        assert_eq!(mesh.triangle_count(), 320 * 32 * 2);
        mesh.validate().unwrap();
        skeleton.validate().unwrap();
        assert_eq!(skeleton.joint_count(), 21);
        assert!((skeleton.bind_positions()[20].y - 10.0).abs() < 1e-4);
        let (closed, _) = closed_tube_chain(2, 2, 8, 0.1, 1.0);
        closed.validate().unwrap();
        // Closed: every edge has exactly two faces.
        let mut edges = std::collections::HashMap::new();
        for t in &closed.triangles {
            for k in 0..3 {
                let (a, b) = (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]));
                *edges.entry((a, b)).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&c| c == 2));
    }
}
