//! The FBX reader on the real FBX files of the data set (`/work/shared/data`, found through the
//! `RIGML_DATA` environment variable or by looking for `shared/data` above the workspace):
//! counts against the manifest, the rest pose against the bind mesh, the joints against the GLB
//! of the same character, and animation against ufbx's own skinning.

use rigml_core::glam::{Mat4, Quat, Vec3};
use rigml_core::{lbs, skinning_matrices, Character, Pose};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod common;

use common::{data_dir, manifest, Row};

fn fbx_rows() -> Vec<Row> {
    let rows: Vec<_> = manifest().into_iter().filter(|r| r.get("format") == "fbx").collect();
    // Every FBX file under characters/ is a manifest row (the Dem Bones FBX are a sequence's).
    let files = common::files_with_extension(&data_dir().join("characters"), "fbx");
    assert!(!files.is_empty(), "no FBX characters in the data set");
    assert_eq!(
        rows.len(),
        files.len(),
        "FBX character rows against FBX files under characters/"
    );
    rows
}

fn load(rel: &str) -> Character {
    let path = data_dir().join(rel);
    rigml_io::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn number(row: &Row, column: &str) -> usize {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{}: column {column} = {:?}", row["id"], row[column]))
}

/// The GLB row of the same character, for the FBX rows whose notes name one ("same character
/// as ID (GLB)"); most FBX characters have none.
fn glb_twin<'a>(rows: &'a [Row], row: &Row) -> Option<&'a Row> {
    let glb_id = row["notes"]
        .split("same character as ")
        .nth(1)?
        .split(" (GLB)")
        .next()?;
    let twin = rows.iter().find(|r| r["id"] == glb_id);
    Some(twin.unwrap_or_else(|| panic!("{}: its notes name {glb_id}, which has no row", row["id"])))
}

#[test]
fn fbx_counts_match_the_manifest() {
    for row in fbx_rows() {
        let start = std::time::Instant::now();
        let c = load(&row["path"]);
        eprintln!("{}: loaded in {:.1} ms", row["id"], start.elapsed().as_secs_f64() * 1e3);
        let skin = c.skin.as_ref().expect("skinned");
        let got = [
            ("vertices", c.mesh.vertex_count()),
            ("triangles", c.mesh.triangle_count()),
            ("joints", c.skeleton.joint_count()),
            ("influences_max", skin.influences_max()),
            ("clips", c.clips.len()),
        ];
        eprintln!(
            "{}: {got:?}, {} parts, {} normals, {} uvs",
            row["id"],
            c.mesh.parts.len(),
            c.mesh.normals.len(),
            c.mesh.uvs.len()
        );
        for (column, value) in got {
            assert_eq!(value, number(&row, column), "{}: {column}", row["id"]);
        }
        // The notes say how many skinned meshes the file has: one part each.
        let meshes: usize = row["notes"]
            .split(';')
            .find_map(|n| n.strip_suffix("-skinned-meshes"))
            .and_then(|n| n.parse().ok())
            .expect("notes give the skinned mesh count");
        assert_eq!(c.mesh.parts.len(), meshes, "{}", row["id"]);
        // Every control point is weighted, except where the notes count some without weight
        // ("rigml: 1 vertex without skin weight": the Quaternius bird).
        let unweighted: usize = row["notes"]
            .split(';')
            .find_map(|n| n.strip_prefix("rigml: "))
            .and_then(|n| n.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert_eq!(
            skin.unskinned_count(),
            unweighted,
            "{}: control points without weight",
            row["id"]
        );
    }
}

/// Largest distance between the rest-pose LBS of the mesh and the mesh itself.
fn rest_deviation(c: &Character) -> f32 {
    let skin = c.skin.as_ref().expect("skinned");
    let matrices = skinning_matrices(&c.skeleton, &Pose::rest(&c.skeleton)).expect("rest matrices");
    let posed = lbs(&c.mesh.positions, skin, &matrices);
    posed
        .iter()
        .zip(&c.mesh.positions)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0, f32::max)
}

#[test]
fn fbx_rest_pose_reproduces_the_bind_mesh() {
    for row in fbx_rows() {
        let c = load(&row["path"]);
        let deviation = rest_deviation(&c);
        eprintln!(
            "{}: rest LBS max deviation {deviation:.3e} m (size {:.3} m)",
            row["id"],
            c.size()
        );
        assert!(deviation < 1e-4 * c.size(), "{}: {deviation}", row["id"]);
    }
}

/// World matrices of every node of a glTF file (from the node transforms in its JSON).
fn gltf_node_worlds(doc: &gltf::Document) -> HashMap<String, Mat4> {
    let mut out = HashMap::new();
    fn walk(node: gltf::Node, parent: Mat4, out: &mut HashMap<String, Mat4>) {
        let (t, r, s) = node.transform().decomposed();
        let world = parent * Mat4::from_scale_rotation_translation(Vec3::from(s), Quat::from_array(r), Vec3::from(t));
        if let Some(name) = node.name() {
            out.insert(name.to_string(), world);
        }
        for child in node.children() {
            walk(child, world, out);
        }
    }
    for scene in doc.scenes() {
        for node in scene.nodes() {
            walk(node, Mat4::IDENTITY, &mut out);
        }
    }
    out
}

#[test]
fn fbx_joints_sit_where_the_glb_joints_are() {
    let rows = manifest();
    let mut twins = 0;
    for row in fbx_rows() {
        let Some(glb_row) = glb_twin(&rows, &row) else {
            continue;
        };
        twins += 1;
        let glb_path = data_dir().join(&glb_row["path"]);
        let doc = gltf::Gltf::open(&glb_path).unwrap_or_else(|e| panic!("{}: {e}", glb_path.display()));
        let worlds = gltf_node_worlds(&doc);
        let c = load(&row["path"]);
        let mut worst = 0.0f32;
        for (j, p) in c.skeleton.bind_positions().iter().enumerate() {
            let name = &c.skeleton.names[j];
            let glb = worlds
                .get(name)
                .unwrap_or_else(|| panic!("{}: joint {name} not in {}", row["id"], glb_path.display()));
            worst = worst.max((glb.w_axis.truncate() - *p).length());
        }
        eprintln!("{}: max |FBX bind joint - GLB node| = {worst:.3e} m", row["id"]);
        assert!(worst < 1e-3, "{}: {worst}", row["id"]);
    }
    assert!(twins > 0, "no FBX character names a GLB twin in its notes");
}

/// Bone_All.fbx of the Dem Bones example: a skinned mesh in centimetres, two root joints, one
/// 400-frame animation stack.
fn dem_bones_path() -> PathBuf {
    dem_bones_file("Bone_All.fbx")
}

/// A file of the Dem Bones example folder.
fn dem_bones_file(name: &str) -> PathBuf {
    let rows = manifest();
    let row = rows
        .iter()
        .find(|r| r["id"] == "dem_bones_example")
        .expect("dem_bones_example row");
    data_dir().join(&row["path"]).parent().expect("folder").join(name)
}

#[test]
fn fbx_without_skin_keeps_mesh_bones_and_animation() {
    // Bone_Trans.fbx: the mesh, the six joints and their animation, but no skin deformer.
    let c = rigml_io::load(&dem_bones_file("Bone_Trans.fbx")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((c.mesh.vertex_count(), c.mesh.triangle_count()), (754, 1504));
    assert_eq!(c.skeleton.joint_count(), 6);
    assert!(c.skin.is_none());
    assert_eq!(c.clips.len(), 1);
    // Bone_Geom.fbx: only the mesh.
    let c = rigml_io::load(&dem_bones_file("Bone_Geom.fbx")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.mesh.vertex_count(), 754);
    assert!(c.skeleton.is_empty() && c.skin.is_none());
}

#[test]
fn dem_bones_fbx_loads_with_its_animation() {
    let path = dem_bones_path();
    let start = std::time::Instant::now();
    let c = rigml_io::load(&path).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "Bone_All.fbx: loaded (400 frames sampled) in {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(c.mesh.vertex_count(), 754);
    assert_eq!(c.mesh.triangle_count(), 1504);
    assert_eq!(c.skeleton.joint_count(), 6);
    let roots = c.skeleton.parents.iter().filter(|p| p.is_none()).count();
    assert_eq!(roots, 2, "joint1 and joint4 hang from the scene root");
    assert_eq!(c.clips.len(), 1);
    assert_eq!(c.clips[0].key_count(), 400, "1/24 s .. 16.67 s at 24 fps");
    // Normals are per control point in this file, so they are kept.
    assert_eq!(c.mesh.normals.len(), 754);
    let deviation = rest_deviation(&c);
    eprintln!(
        "Bone_All.fbx: rest LBS max deviation {deviation:.3e} m (size {:.4} m)",
        c.size()
    );
    assert!(deviation < 1e-4 * c.size());
}

#[test]
fn dem_bones_clip_deforms_like_ufbx() {
    let path = dem_bones_path();
    let c = rigml_io::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let clip = &c.clips[0];
    let skin = c.skin.as_ref().expect("skinned");

    let bytes = std::fs::read(&path).expect("read");
    let opts = ufbx::LoadOpts {
        target_axes: ufbx::CoordinateAxes {
            right: ufbx::CoordinateAxis::PositiveX,
            up: ufbx::CoordinateAxis::PositiveY,
            front: ufbx::CoordinateAxis::PositiveZ,
        },
        target_unit_meters: 1.0,
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        ..Default::default()
    };
    let scene = ufbx::load_memory(&bytes, opts).expect("ufbx loads it");
    let stack = &scene.anim_stacks[0];
    let mesh_node = scene.nodes.iter().find(|n| n.mesh.is_some()).expect("mesh node");
    let mut worst = 0.0f32;
    let mut moved = 0.0f32;
    for f in [0usize, 57, 200, 399] {
        let t = clip.channels[0].times[f];
        let pose = clip.sample(&c.skeleton, t);
        let ours = lbs(
            &c.mesh.positions,
            skin,
            &skinning_matrices(&c.skeleton, &pose).expect("matrices"),
        );
        let eval_opts = ufbx::EvaluateOpts {
            evaluate_skinning: true,
            ..Default::default()
        };
        let evaluated = ufbx::evaluate_scene(&scene, &stack.anim, t as f64, eval_opts).expect("evaluate");
        let node = &evaluated.nodes[mesh_node.element.typed_id as usize];
        let mesh = node.mesh.as_ref().expect("mesh");
        // skinned_position is per control point, in world space unless skinned_is_local.
        let to_world = if mesh.skinned_is_local {
            let m = &node.geometry_to_world;
            Mat4::from_cols_array(&[
                m.m00 as f32,
                m.m10 as f32,
                m.m20 as f32,
                0.0,
                m.m01 as f32,
                m.m11 as f32,
                m.m21 as f32,
                0.0,
                m.m02 as f32,
                m.m12 as f32,
                m.m22 as f32,
                0.0,
                m.m03 as f32,
                m.m13 as f32,
                m.m23 as f32,
                1.0,
            ])
        } else {
            Mat4::IDENTITY
        };
        for (v, p) in ours.iter().enumerate() {
            moved = moved.max((*p - c.mesh.positions[v]).length());
            let q = mesh.skinned_position.values[v];
            let q = to_world.transform_point3(Vec3::new(q.x as f32, q.y as f32, q.z as f32));
            worst = worst.max((q - *p).length());
        }
    }
    eprintln!(
        "Bone_All.fbx: max |our LBS - ufbx skinning| over 4 frames = {worst:.3e} m (size {:.4} m)",
        c.size()
    );
    eprintln!("Bone_All.fbx: largest vertex motion from the bind pose = {moved:.3e} m");
    assert!(moved > 0.05 * c.size(), "the clip moves the mesh ({moved})");
    assert!(worst < 1e-4 * c.size(), "{worst}");
}

#[test]
fn truncated_fbx_files_give_errors_naming_the_file() {
    let row = &fbx_rows()[0];
    let bytes = std::fs::read(data_dir().join(&row["path"])).expect("read");
    let name = Path::new("cut.fbx");
    for k in 0..16 {
        let len = bytes.len() * k / 16;
        match rigml_io::fbx::from_bytes(&bytes[..len], name) {
            Err(e) => {
                if k % 5 == 0 {
                    eprintln!("{len} bytes: {e}");
                }
                assert!(e.to_string().starts_with("cut.fbx: "), "{e}")
            }
            Ok(c) => panic!(
                "{len} of {} bytes loaded as {} vertices",
                bytes.len(),
                c.mesh.vertex_count()
            ),
        }
    }
}

#[test]
fn corrupted_fbx_bytes_never_panic() {
    let row = &fbx_rows()[0];
    let original = std::fs::read(data_dir().join(&row["path"])).expect("read");
    let name = Path::new("noise.fbx");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut ok, mut failed) = (0, 0);
    for _ in 0..60 {
        let mut bytes = original.clone();
        for _ in 0..8 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = next() as u8;
        }
        match rigml_io::fbx::from_bytes(&bytes, name) {
            Ok(c) => {
                c.validate().expect("a returned character is valid");
                ok += 1;
            }
            Err(e) => {
                assert!(e.to_string().starts_with("noise.fbx: "), "{e}");
                failed += 1;
            }
        }
    }
    eprintln!("corrupted copies: {ok} loaded, {failed} refused");
}

/// Skinned vertices of a GLB: position and weights by joint name (read straight from the file).
fn glb_skinned_vertices(path: &Path) -> Vec<(Vec3, Vec<(String, f32)>)> {
    let bytes = std::fs::read(path).expect("read GLB");
    let gltf = gltf::Gltf::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let blob = gltf.blob.as_deref().expect("GLB has a binary chunk");
    let mut out = Vec::new();
    for node in gltf.document.nodes() {
        let (Some(mesh), Some(skin)) = (node.mesh(), node.skin()) else {
            continue;
        };
        let joint_names: Vec<String> = skin.joints().map(|j| j.name().unwrap_or("").to_string()).collect();
        for primitive in mesh.primitives() {
            let reader = primitive.reader(|_| Some(blob));
            let positions: Vec<[f32; 3]> = reader.read_positions().expect("POSITION").collect();
            let joints: Vec<[u16; 4]> = reader.read_joints(0).expect("JOINTS_0").into_u16().collect();
            let weights: Vec<[f32; 4]> = reader.read_weights(0).expect("WEIGHTS_0").into_f32().collect();
            for ((p, j), w) in positions.iter().zip(&joints).zip(&weights) {
                let row = j
                    .iter()
                    .zip(w)
                    .filter(|(_, &w)| w > 0.0)
                    .map(|(&j, &w)| (joint_names[j as usize].clone(), w))
                    .collect();
                out.push((Vec3::from(*p), row));
            }
        }
    }
    out
}

#[test]
fn fbx_mesh_and_weights_match_the_glb() {
    let rows = manifest();
    let mut twins = 0;
    for row in fbx_rows() {
        let Some(glb_row) = glb_twin(&rows, &row) else {
            continue;
        };
        twins += 1;
        let glb = glb_skinned_vertices(&data_dir().join(&glb_row["path"]));
        let c = load(&row["path"]);
        // The GLBs carry JOINTS_0/WEIGHTS_0 only: their exporter kept the 4 largest weights
        // (Mage.fbx has 5 on some control points), so compare with the FBX skin pruned to 4.
        let skin = &c.skin.as_ref().expect("skinned").pruned(4).expect("prune");
        let (mut worst_distance, mut worst_weight, mut differing) = (0.0f32, 0.0f32, 0usize);
        for (p, glb_row_weights) in &glb {
            // Nearest FBX control point; among coincident ones (a seam between parts) the one
            // whose weights agree best.
            let nearest = c
                .mesh
                .positions
                .iter()
                .map(|q| (*q - *p).length())
                .fold(f32::INFINITY, f32::min);
            worst_distance = worst_distance.max(nearest);
            let weight_gap = |v: usize| {
                let fbx: HashMap<&str, f32> = skin
                    .influences(v)
                    .iter()
                    .map(|i| (c.skeleton.names[i.joint as usize].as_str(), i.weight))
                    .collect();
                let mut gap = 0.0f32;
                for (name, w) in glb_row_weights {
                    gap = gap.max((fbx.get(name.as_str()).copied().unwrap_or(0.0) - w).abs());
                }
                for (name, w) in &fbx {
                    if !glb_row_weights.iter().any(|(n, _)| n == name) {
                        gap = gap.max(*w);
                    }
                }
                gap
            };
            let best = (0..c.mesh.vertex_count())
                .filter(|&v| (c.mesh.positions[v] - *p).length() <= nearest + 1e-6)
                .map(weight_gap)
                .fold(f32::INFINITY, f32::min);
            worst_weight = worst_weight.max(best);
            if best > 1e-3 {
                differing += 1;
            }
        }
        // And the other way: every FBX control point is a GLB vertex.
        let back = c
            .mesh
            .positions
            .iter()
            .map(|q| {
                glb.iter()
                    .map(|(p, _)| (*q - *p).length())
                    .fold(f32::INFINITY, f32::min)
            })
            .fold(0.0f32, f32::max);
        eprintln!(
            "{}: {} GLB vertices; max distance to an FBX control point {worst_distance:.3e} m \
             (back {back:.3e} m); max weight difference {worst_weight:.3e}; {differing} vertices differ by > 1e-3",
            row["id"],
            glb.len()
        );
        assert!(
            worst_distance < 1e-4 && back < 1e-4,
            "{}: {worst_distance} {back}",
            row["id"]
        );
        assert!(worst_weight < 1e-4, "{}: {worst_weight}", row["id"]);
    }
    assert!(twins > 0, "no FBX character names a GLB twin in its notes");
}
