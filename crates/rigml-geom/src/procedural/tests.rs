use super::*;
use rigml_core::{lbs, skinning_matrices, Character, Skin};
use std::collections::{HashMap, HashSet};

fn demo() -> Character {
    demo_humanoid().expect("the demo character is valid")
}

fn skin(c: &Character) -> &Skin {
    c.skin.as_ref().expect("the demo character is skinned")
}

/// Every undirected edge of the mesh once, as `(a, b)` with `a < b`.
fn edges(mesh: &Mesh) -> Vec<(usize, usize)> {
    let mut set = HashSet::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (t[k] as usize, t[(k + 1) % 3] as usize);
            set.insert((a.min(b), a.max(b)));
        }
    }
    let mut edges: Vec<_> = set.into_iter().collect();
    edges.sort_unstable();
    edges
}

#[test]
fn mesh_is_valid_closed_and_human_sized() {
    let c = demo();
    let mesh = &c.mesh;
    mesh.validate().unwrap();
    assert!(
        (2000..=8000).contains(&mesh.vertex_count()),
        "{} vertices",
        mesh.vertex_count()
    );
    assert_eq!(mesh.parts.len(), 7);
    assert_eq!(mesh.normals.len(), mesh.vertex_count());
    assert!(c.problems().is_empty(), "{:?}", c.problems());

    // Each part is one closed surface: every directed edge once, its reverse once.
    for part in &mesh.parts {
        let mut directed = HashMap::new();
        for t in &mesh.triangles[part.triangles.clone()] {
            for k in 0..3 {
                *directed.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
                assert!(
                    part.vertices.contains(&(t[k] as usize)),
                    "{}: triangle leaves part",
                    part.name
                );
            }
        }
        for (&(a, b), &n) in &directed {
            assert_eq!(n, 1, "{}: edge {a}-{b} used {n} times", part.name);
            assert!(directed.contains_key(&(b, a)), "{}: open edge {a}-{b}", part.name);
        }
    }

    let (lo, hi) = mesh.bounds().unwrap();
    assert!((1.7..1.9).contains(&hi.y), "top of head at {}", hi.y);
    assert!((-0.01..0.03).contains(&lo.y), "soles at {}", lo.y);
    assert!((lo.x + hi.x).abs() < 1e-4, "not symmetric: {lo} {hi}");
    // Outward normals: on the top of the head the normal points up.
    let top = (0..mesh.vertex_count())
        .max_by(|&a, &b| mesh.positions[a].y.total_cmp(&mesh.positions[b].y))
        .unwrap();
    assert!(mesh.normals[top].y > 0.9, "normal at the top {}", mesh.normals[top]);
}

#[test]
fn weights_are_normalised_and_every_joint_used() {
    let c = demo();
    let skin = skin(&c);
    assert_eq!(skin.vertex_count(), c.mesh.vertex_count());
    assert_eq!(skin.unskinned_count(), 0);
    assert!(skin.influences_max() <= 2);
    let mut used = vec![0.0f32; c.skeleton.joint_count()];
    for row in skin.rows() {
        let sum: f32 = row.iter().map(|i| i.weight).sum();
        assert!((sum - 1.0).abs() < 1e-5, "row sums to {sum}");
        for i in row {
            used[i.joint as usize] += i.weight;
        }
    }
    for (j, w) in used.iter().enumerate() {
        assert!(*w > 1.0, "joint {} carries only {w}", c.skeleton.names[j]);
    }
    // Smooth blending exists: some vertices are shared between two joints.
    assert!(skin.influence_histogram().get(2).copied().unwrap_or(0) > 100);
}

#[test]
fn extremities_belong_to_the_right_joints() {
    let c = demo();
    let skin = skin(&c);
    let p = &c.mesh.positions;
    let extreme = |key: &dyn Fn(Vec3) -> f32| (0..p.len()).max_by(|&a, &b| key(p[a]).total_cmp(&key(p[b]))).unwrap();
    let heaviest = |v: usize| c.skeleton.names[skin.influences(v)[0].joint as usize].as_str();
    assert_eq!(heaviest(extreme(&|x| x.y)), "head");
    assert_eq!(heaviest(extreme(&|x| x.x)), "leftHand");
    assert_eq!(heaviest(extreme(&|x| -x.x)), "rightHand");
    assert_eq!(heaviest(extreme(&|x| x.z + 0.01 * x.x)), "leftToes");
    assert_eq!(heaviest(extreme(&|x| -x.z - 0.01 * x.x - 10.0 * x.y)), "rightFoot");
    // A vertex at mid-thigh height on the outside of the left leg.
    assert_eq!(heaviest(extreme(&|x| x.x - 10.0 * (x.y - 0.7).abs())), "leftUpperLeg");
}

#[test]
fn walk_deforms_without_tearing() {
    let c = demo();
    let skin = skin(&c);
    let clip = &c.clips[0];
    assert_eq!(clip.name, WALK_CLIP_NAME);
    clip.validate(c.skeleton.joint_count()).unwrap();
    assert!((clip.duration() - 1.0).abs() < 1e-6);

    let rest = &c.mesh.positions;
    let edges = edges(&c.mesh);
    let rest_len: Vec<f32> = edges.iter().map(|&(a, b)| (rest[a] - rest[b]).length()).collect();
    assert!(rest_len.iter().all(|&l| l > 1e-5), "zero-length rest edge");
    let (mut max_stretch, mut min_stretch, mut max_move) = (0.0f32, f32::INFINITY, 0.0f32);
    for f in 0..=24 {
        let t = clip.duration() * f as f32 / 24.0;
        let matrices = skinning_matrices(&c.skeleton, &clip.sample(&c.skeleton, t)).unwrap();
        let posed = lbs(rest, skin, &matrices);
        assert!(posed.iter().all(|x| x.is_finite()));
        for (&(a, b), &l) in edges.iter().zip(&rest_len) {
            let ratio = (posed[a] - posed[b]).length() / l;
            max_stretch = max_stretch.max(ratio);
            min_stretch = min_stretch.min(ratio);
        }
        for (x, y) in posed.iter().zip(rest) {
            max_move = max_move.max((*x - *y).length());
        }
    }
    // A tear or a vertex bound to the wrong joint shows as an edge stretched many times over.
    assert!(max_stretch < 2.0, "an edge stretches {max_stretch}x");
    assert!(min_stretch > 0.2, "an edge shrinks to {min_stretch}x");
    assert!(max_move > 0.15, "the walk barely moves the mesh ({max_move} m)");
}

#[test]
fn walk_loops() {
    let c = demo();
    let clip = &c.clips[0];
    let first = clip.sample(&c.skeleton, 0.0);
    let last = clip.sample(&c.skeleton, clip.duration());
    for (a, b) in first.local.iter().zip(&last.local) {
        assert!((a.translation - b.translation).length() < 1e-5);
        assert!(a.rotation.dot(b.rotation).abs() > 1.0 - 1e-5);
    }
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(demo(), demo());
}
