//! The reader on a small hand-written ASCII FBX (a quad skinned to two bones, in centimetres,
//! with one animation stack) and on broken variants of it.

use super::from_bytes;
use crate::IoError;
use rigml_core::glam::{Quat, Vec3};
use rigml_core::{lbs, skinning_matrices, Pose};
use std::path::Path;

/// A 1 cm quad: control points 0, 1 on `Bone0` (at the origin), 2, 3 on `Bone1` (1 cm up, a
/// child of `Bone0`); the stack `Wave` turns `Bone1` 90° about Z over one second.
const QUAD: &str = r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}
GlobalSettings:  {
	Version: 1000
	Properties70:  {
		P: "UpAxis", "int", "Integer", "",1
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",2
		P: "FrontAxisSign", "int", "Integer", "",1
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",1
		P: "TimeMode", "enum", "", "",6
	}
}
Objects:  {
	Geometry: 1000, "Geometry::Quad", "Mesh" {
		Vertices: *12 {
			a: 0,0,0,1,0,0,1,1,0,0,1,0
		}
		PolygonVertexIndex: *4 {
			a: 0,1,2,-4
		}
		LayerElementUV: 0 {
			Version: 101
			Name: "map1"
			MappingInformationType: "ByPolygonVertex"
			ReferenceInformationType: "IndexToDirect"
			UV: *8 {
				a: 0,0,1,0,1,1,0,1
			}
			UVIndex: *4 {
				a: 0,1,2,3
			}
		}
		Layer: 0 {
			Version: 100
			LayerElement:  {
				Type: "LayerElementUV"
				TypedIndex: 0
			}
		}
	}
	Model: 2000, "Model::QuadMesh", "Mesh" {
		Version: 232
	}
	Model: 3000, "Model::Bone0", "LimbNode" {
		Version: 232
	}
	Model: 3001, "Model::Bone1", "LimbNode" {
		Version: 232
		Properties70:  {
			P: "Lcl Translation", "Lcl Translation", "", "A",0,1,0
		}
	}
	Deformer: 4000, "Deformer::Skin", "Skin" {
		Version: 101
	}
	Deformer: 4001, "SubDeformer::Cluster0", "Cluster" {
		Version: 100
		Indexes: *2 {
			a: 0,1
		}
		Weights: *2 {
			a: 1,1
		}
		Transform: *16 {
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1
		}
		TransformLink: *16 {
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1
		}
	}
	Deformer: 4002, "SubDeformer::Cluster1", "Cluster" {
		Version: 100
		Indexes: *2 {
			a: 2,3
		}
		Weights: *2 {
			a: 1,1
		}
		Transform: *16 {
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,-1,0,1
		}
		TransformLink: *16 {
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1
		}
	}
	AnimationStack: 5000, "AnimStack::Wave", "" {
		Properties70:  {
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",46186158000
		}
	}
	AnimationLayer: 5001, "AnimLayer::Base", "" {
	}
	AnimationCurveNode: 5002, "AnimCurveNode::R", "" {
		Properties70:  {
			P: "d|X", "Number", "", "A",0
			P: "d|Y", "Number", "", "A",0
			P: "d|Z", "Number", "", "A",0
		}
	}
	AnimationCurve: 5003, "AnimCurve::", "" {
		Default: 0
		KeyVer: 4008
		KeyTime: *2 {
			a: 0,46186158000
		}
		KeyValueFloat: *2 {
			a: 0,90
		}
		KeyAttrFlags: *1 {
			a: 260
		}
		KeyAttrDataFloat: *4 {
			a: 0,0,0,0
		}
		KeyAttrRefCount: *1 {
			a: 2
		}
	}
}
Connections:  {
	C: "OO",2000,0
	C: "OO",1000,2000
	C: "OO",3000,0
	C: "OO",3001,3000
	C: "OO",4000,1000
	C: "OO",4001,4000
	C: "OO",4002,4000
	C: "OO",3000,4001
	C: "OO",3001,4002
	C: "OO",5001,5000
	C: "OO",5002,5001
	C: "OP",5002,3001, "Lcl Rotation"
	C: "OP",5003,5002, "d|Z"
}
"#;

fn load(text: &str) -> Result<rigml_core::Character, IoError> {
    from_bytes(text.as_bytes(), Path::new("quad.fbx"))
}

#[test]
fn quad_loads_in_metres_with_two_joints() {
    let c = load(QUAD).unwrap();
    assert_eq!(c.name, "quad");
    assert_eq!(c.mesh.vertex_count(), 4);
    assert_eq!(c.mesh.triangle_count(), 2);
    assert_eq!(c.mesh.parts.len(), 1);
    assert_eq!(c.mesh.parts[0].name, "QuadMesh");
    // UnitScaleFactor 1 = centimetres: the 1-unit quad is 1 cm.
    assert!((c.mesh.positions[2] - Vec3::new(0.01, 0.01, 0.0)).length() < 1e-7);
    assert_eq!(c.skeleton.names, vec!["Bone0", "Bone1"]);
    assert_eq!(c.skeleton.parents, vec![None, Some(0)]);
    assert!((c.skeleton.bind_positions()[1] - Vec3::new(0.0, 0.01, 0.0)).length() < 1e-7);
    let skin = c.skin.as_ref().unwrap();
    let joints: Vec<u32> = skin.rows().map(|r| r[0].joint).collect();
    assert_eq!(joints, vec![0, 0, 1, 1]);
    // Counter-clockwise seen from +Z.
    for t in &c.mesh.triangles {
        let [a, b, d] = t.map(|i| c.mesh.positions[i as usize]);
        assert!((b - a).cross(d - a).z > 0.0);
    }
    let rest = lbs(
        &c.mesh.positions,
        skin,
        &skinning_matrices(&c.skeleton, &Pose::rest(&c.skeleton)).unwrap(),
    );
    for (p, q) in rest.iter().zip(&c.mesh.positions) {
        assert!((*p - *q).length() < 1e-7);
    }
}

#[test]
fn quad_clip_turns_the_second_bone() {
    let c = load(QUAD).unwrap();
    assert_eq!(c.clips.len(), 1);
    let clip = &c.clips[0];
    assert_eq!(clip.name, "Wave");
    // TimeMode 6 = 30 fps: 0 s .. 1 s is 31 frames.
    assert_eq!(clip.key_count(), 31);
    assert!((clip.duration() - 1.0).abs() < 1e-6);
    let end = clip.sample(&c.skeleton, 1.0);
    let turn = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    assert!(
        end.local[1].rotation.dot(turn).abs() > 1.0 - 1e-5,
        "{:?}",
        end.local[1].rotation
    );
    assert!(end.local[0].rotation.dot(Quat::IDENTITY).abs() > 1.0 - 1e-6);
    // Control point 2 (1 cm right of Bone1) swings up to (0, 2 cm).
    let skin = c.skin.as_ref().unwrap();
    let posed = lbs(&c.mesh.positions, skin, &skinning_matrices(&c.skeleton, &end).unwrap());
    assert!((posed[2] - Vec3::new(0.0, 0.02, 0.0)).length() < 1e-6, "{:?}", posed[2]);
}

/// The error text of a broken variant, which must name the file.
fn error_of(text: &str) -> String {
    let message = load(text).expect_err("broken file must not load").to_string();
    assert!(message.starts_with("quad.fbx: "), "{message}");
    eprintln!("{message}");
    message
}

#[test]
fn polygon_index_out_of_range_is_an_error() {
    // ufbx refuses this itself (with a generic message).
    error_of(&QUAD.replace("a: 0,1,2,-4", "a: 0,1,9,-4"));
}

fn repairs_of(text: &str) -> (rigml_core::Character, Vec<String>) {
    super::from_bytes_with_warnings(text.as_bytes(), Path::new("quad.fbx")).expect("repairable file must load")
}

#[test]
fn uv_index_out_of_range_is_clamped_with_a_warning() {
    let (c, repairs) = repairs_of(&QUAD.replace("a: 0,1,2,3\n", "a: 0,1,2,9\n"));
    assert_eq!(c.mesh.vertex_count(), 4);
    assert_eq!(repairs.len(), 1, "{repairs:?}");
    assert!(repairs[0].contains("index out of range"), "{repairs:?}");
    assert!(repairs_of(QUAD).1.is_empty(), "a clean file has no repairs");
}

#[test]
fn an_empty_take_is_not_a_clip() {
    let no_curves = QUAD
        .replace("\tC: \"OP\",5002,3001, \"Lcl Rotation\"\n", "")
        .replace("\tC: \"OO\",5002,5001\n", "");
    let (c, repairs) = repairs_of(&no_curves);
    assert!(
        c.clips.is_empty(),
        "{:?}",
        c.clips.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
    assert!(repairs.is_empty(), "{repairs:?}");
    assert_eq!(repairs_of(QUAD).0.clips.len(), 1);
}

#[test]
fn point_and_line_polygons_are_left_out_with_a_warning() {
    let text = QUAD.replace(
        "PolygonVertexIndex: *4 {\n\t\t\ta: 0,1,2,-4",
        "PolygonVertexIndex: *7 {\n\t\t\ta: -1,0,1,2,-4,1,-3",
    );
    let (c, repairs) = repairs_of(&text);
    assert_eq!(c.mesh.triangle_count(), 2, "the quad stays");
    assert!(
        repairs.iter().any(|r| r.contains("1 point and 1 line polygon(s)")),
        "{repairs:?}"
    );
}

#[test]
fn skin_index_out_of_range_is_an_error() {
    let message = error_of(&QUAD.replace("a: 2,3\n", "a: 2,7\n"));
    assert!(message.contains("control point 7"), "{message}");
}

#[test]
fn uvs_shared_by_all_corners_of_a_control_point_are_kept() {
    let c = load(QUAD).unwrap();
    assert_eq!(c.mesh.uvs.len(), 4);
    assert_eq!(c.mesh.uvs[2], rigml_core::glam::Vec2::new(1.0, 1.0));
    // No normals in the file: none invented.
    assert!(c.mesh.normals.is_empty());
}

#[test]
fn negative_weight_is_an_error_naming_the_mesh() {
    let message = error_of(&QUAD.replace(
        "a: 2,3\n\t\t}\n\t\tWeights: *2 {\n\t\t\ta: 1,1",
        "a: 2,3\n\t\t}\n\t\tWeights: *2 {\n\t\t\ta: 1,-5",
    ));
    assert!(message.contains("QuadMesh"), "{message}");
}

#[test]
fn a_slightly_negative_weight_is_noise_read_as_no_influence() {
    let text = QUAD.replace(
        "a: 2,3\n\t\t}\n\t\tWeights: *2 {\n\t\t\ta: 1,1",
        "a: 2,3\n\t\t}\n\t\tWeights: *2 {\n\t\t\ta: 1,-0.001",
    );
    let (c, repairs) = repairs_of(&text);
    assert_eq!(repairs.len(), 1, "{repairs:?}");
    assert!(repairs[0].contains("1 skin weight(s) slightly below 0"), "{repairs:?}");
    let skin = c.skin.expect("skinned");
    assert!(skin.rows().all(|r| r.iter().all(|i| i.weight >= 0.0)));
}

#[test]
fn huge_coordinates_are_an_error() {
    error_of(&QUAD.replace("a: 0,0,0,1,0,0", "a: 0,0,0,1e300,0,0"));
}

#[test]
fn truncated_text_is_an_error_or_loads_valid() {
    // ASCII FBX has no length fields: a cut file may still parse. Either way: no panic, and
    // anything returned is valid.
    for cut in (0..QUAD.len()).step_by(37) {
        match from_bytes(&QUAD.as_bytes()[..cut], Path::new("quad.fbx")) {
            Ok(c) => c.validate().unwrap(),
            Err(e) => assert!(e.to_string().starts_with("quad.fbx: "), "{e}"),
        }
    }
}

#[test]
fn hierarchy_loops_do_not_hang() {
    // Bone0 under Bone1 under Bone0: ufbx breaks the loop; the reader must not spin or panic.
    let looped = QUAD.replace("C: \"OO\",3000,0", "C: \"OO\",3000,3001");
    match load(&looped) {
        Ok(c) => {
            eprintln!("looped: {:?} {:?}", c.skeleton.names, c.skeleton.parents);
            c.validate().unwrap()
        }
        Err(e) => {
            eprintln!("looped: {e}");
            assert!(e.to_string().starts_with("quad.fbx: "), "{e}")
        }
    }
}

/// The quad with the skin deformer's `rigml_unskinned` property set to `list`.
fn with_unskinned_list(list: &str) -> String {
    QUAD.replace(
        "\tDeformer: 4000, \"Deformer::Skin\", \"Skin\" {\n\t\tVersion: 101\n",
        &format!(
            "\tDeformer: 4000, \"Deformer::Skin\", \"Skin\" {{\n\t\tVersion: 101\n\t\tProperties70:  {{\n\t\t\tP: \"{}\", \"KString\", \"\", \"U\", \"{list}\"\n\t\t}}\n",
            super::UNSKINNED_PROP
        ),
    )
}

#[test]
fn listed_unskinned_vertices_with_one_full_weight_read_back_unskinned() {
    let text = with_unskinned_list("1,2");
    assert!(text.contains(super::UNSKINNED_PROP));
    let (c, repairs) = repairs_of(&text);
    assert!(repairs.is_empty(), "{repairs:?}");
    let skin = c.skin.as_ref().unwrap();
    assert!(skin.influences(0).len() == 1 && skin.influences(3).len() == 1);
    assert!(skin.influences(1).is_empty() && skin.influences(2).is_empty());
}

#[test]
fn a_malformed_unskinned_list_is_ignored_with_a_warning() {
    for list in ["1,x", "1,4", "-1"] {
        let (c, repairs) = repairs_of(&with_unskinned_list(list));
        assert_eq!(repairs.len(), 1, "{list}: {repairs:?}");
        assert!(
            repairs[0].contains("rigml_unskinned") && repairs[0].contains("ignored"),
            "{repairs:?}"
        );
        let skin = c.skin.as_ref().unwrap();
        assert!(
            (0..4).all(|v| skin.influences(v).len() == 1),
            "{list}: the weights stand"
        );
    }
}
