//! Robustness of every solver on generated meshes with the defects that make Blender's bone heat
//! fail (ALGORITHMS.md §2 pitfalls): each case must give a skin with no METRICS.md §4 failure,
//! every vertex weighted.

use glam::Vec3;
use rigml_core::{Mesh, Skeleton, Skin};
use rigml_skin::post::Prepared;
use rigml_skin::synthetic::tube_chain;
use rigml_skin::{check, Heat, Nearest, SkinSolver, SolveOptions, Voxel};

fn solvers() -> Vec<Box<dyn SkinSolver>> {
    let voxel = Voxel {
        resolution: 64,
        ..Default::default()
    };
    vec![Box::new(Nearest::default()), Box::new(Heat::default()), Box::new(voxel)]
}

/// Solve with every solver and assert the skins pass; returns them.
fn solve_all(mesh: &Mesh, skeleton: &Skeleton, case: &str) -> Vec<Skin> {
    let options = SolveOptions::default();
    let bones = Prepared::new(mesh, skeleton).expect("prepare").bones;
    solvers()
        .iter()
        .map(|s| {
            let skin = s
                .solve(mesh, skeleton, &options)
                .unwrap_or_else(|e| panic!("{case}: {} failed: {e}", s.name()));
            let problems = check::failures(&skin, mesh.vertex_count(), options.max_influences, &bones);
            assert!(problems.is_empty(), "{case}: {}: {problems:?}", s.name());
            assert_eq!(skin.unskinned_count(), 0, "{case}: {}", s.name());
            skin
        })
        .collect()
}

fn tube() -> (Mesh, Skeleton) {
    tube_chain(4, 6, 10, 0.15, 1.0)
}

#[test]
fn degenerate_faces() {
    let (mut mesh, skeleton) = tube();
    let n = mesh.vertex_count() as u32;
    // Repeated corners, collinear corners, and a zero-area sliver on real vertices.
    mesh.positions.extend([
        Vec3::new(0.0, 0.5, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(0.0, 1.5, 0.0),
    ]);
    mesh.triangles
        .extend([[0, 0, 1], [n, n + 1, n + 2], [0, 1, 1], [2, 2, 2]]);
    solve_all(&mesh, &skeleton, "degenerate faces");
}

#[test]
fn duplicate_vertices_triangle_soup() {
    // Every triangle with its own three vertices, as after a flat-shaded export.
    let (tube, skeleton) = tube();
    let mut soup = Mesh::default();
    for t in &tube.triangles {
        let base = soup.positions.len() as u32;
        soup.positions.extend(t.map(|i| tube.positions[i as usize]));
        soup.triangles.push([base, base + 1, base + 2]);
    }
    let skins = solve_all(&soup, &skeleton, "triangle soup");
    // Welding makes copies of one position agree exactly.
    let heat = &skins[1];
    let first = soup.positions.iter().position(|p| *p == soup.positions[1]).unwrap();
    for (v, p) in soup.positions.iter().enumerate() {
        if *p == soup.positions[1] {
            assert_eq!(heat.influences(v), heat.influences(first));
        }
    }
}

#[test]
fn non_manifold_edges() {
    let (mut mesh, skeleton) = tube();
    // Fins: extra triangles on existing edges, pointing outwards, three or four faces per edge.
    let count = mesh.triangles.len();
    for t in 0..count {
        if t % 7 != 0 {
            continue;
        }
        let [a, b, _] = mesh.triangles[t];
        let mid = (mesh.positions[a as usize] + mesh.positions[b as usize]) * 0.5;
        mesh.positions.push(mid * Vec3::new(2.0, 1.0, 2.0));
        let fin = mesh.positions.len() as u32 - 1;
        mesh.triangles.push([a, b, fin]);
        mesh.triangles.push([b, a, fin]);
    }
    solve_all(&mesh, &skeleton, "non-manifold edges");
}

#[test]
fn disconnected_islands_and_isolated_vertices() {
    let (mut mesh, skeleton) = tube();
    // A small closed island (an eye) away from the tube, and a loose vertex in no triangle.
    let (island, _) = tube_chain(1, 2, 6, 0.05, 0.1);
    let mut island = island;
    island.positions.iter_mut().for_each(|p| *p += Vec3::new(1.0, 3.5, 0.0));
    mesh.append(&island, "eye");
    mesh.positions.push(Vec3::new(-2.0, 2.0, 0.0));
    let skins = solve_all(&mesh, &skeleton, "islands");
    let loose = mesh.vertex_count() - 1;
    for skin in &skins {
        assert!(!skin.influences(loose).is_empty());
        // The eye sits at y = 3.5, beside bone 3.
        let eye = mesh.parts[1].vertices.clone();
        assert!(
            eye.clone().all(|v| skin.influences(v)[0].joint == 3),
            "{:?}",
            skin.influences(eye.start)
        );
    }
}

#[test]
fn open_patch() {
    // A flat open square patch over a two-bone chain lying in its plane.
    let (mut mesh, skeleton) = tube();
    let n = 12u32;
    mesh.positions.clear();
    mesh.triangles.clear();
    for y in 0..=n {
        for x in 0..=n {
            mesh.positions
                .push(Vec3::new(x as f32 / n as f32 - 0.5, 4.0 * y as f32 / n as f32, 0.1));
        }
    }
    for y in 0..n {
        for x in 0..n {
            let i = y * (n + 1) + x;
            mesh.triangles.push([i, i + 1, i + n + 2]);
            mesh.triangles.push([i, i + n + 2, i + n + 1]);
        }
    }
    solve_all(&mesh, &skeleton, "open patch");
}

fn scaled(mesh: &Mesh, skeleton: &Skeleton, s: f32) -> (Mesh, Skeleton) {
    let mut mesh = mesh.clone();
    mesh.positions.iter_mut().for_each(|p| *p *= s);
    let mut skeleton = skeleton.clone();
    skeleton.rest_local.iter_mut().for_each(|t| t.translation *= s);
    skeleton.bind_to_rest();
    (mesh, skeleton)
}

#[test]
fn scale_invariance_from_1e_minus_3_to_1e3() {
    let (mesh, skeleton) = tube();
    let reference = solve_all(&mesh, &skeleton, "unit scale");
    for s in [1e-3, 1e3] {
        let (m, k) = scaled(&mesh, &skeleton, s);
        let skins = solve_all(&m, &k, &format!("scale {s}"));
        for (a, b) in skins.iter().zip(&reference) {
            let (da, db) = (a.to_dense(k.joint_count()), b.to_dense(k.joint_count()));
            let worst = da.iter().zip(&db).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
            assert!(worst < 2e-2, "scale {s}: weights differ by {worst}");
        }
    }
}

#[test]
fn bones_outside_the_mesh() {
    let (mesh, mut skeleton) = tube();
    // Move the whole chain sideways, outside the tube: no bone is visible from any vertex.
    skeleton.rest_local[0].translation += Vec3::new(1.0, 0.0, 0.0);
    skeleton.bind_to_rest();
    let skins = solve_all(&mesh, &skeleton, "bones outside");
    // Still ordered along the chain: the top ring follows the last bones, the bottom the first.
    for skin in &skins {
        assert!(skin.influences(0)[0].joint <= 1);
        assert!(skin.influences(mesh.vertex_count() - 1)[0].joint >= 3);
    }
}

#[test]
fn empty_mesh_and_empty_skeleton_are_errors() {
    let (mesh, skeleton) = tube();
    for s in solvers() {
        assert!(s.solve(&Mesh::default(), &skeleton, &SolveOptions::default()).is_err());
        assert!(s.solve(&mesh, &Skeleton::default(), &SolveOptions::default()).is_err());
    }
}
