//! Alembic archives built by hand (the layout AbcCoreOgawa writes), read back whole and broken.

use super::ogawa::build::{file, Node};
use super::*;
use glam::Vec3;
use std::path::PathBuf;

const POLYMESH: &str = "schema=AbcGeom_PolyMesh_v1;schemaBaseType=AbcGeom_GeomBase_v1";
const XFORM: &str = "schema=AbcGeom_Xform_v3";

/// A property: its header bytes (in its parent's header block) and its group.
struct Prop {
    header: Vec<u8>,
    node: Node,
}

/// How a property's samples are stored.
#[derive(Clone, Copy)]
struct Stored {
    num_samples: u32,
    first: u32,
    last: u32,
}

impl Stored {
    /// `n` samples, all stored (the usual animated property).
    fn all(n: u32) -> Stored {
        Stored {
            num_samples: n,
            first: 1.min(n),
            last: n.saturating_sub(1),
        }
    }
}

/// One header as WritePropertyInfo lays it out, with u32 sizes (size hint 2) or u8 (hint 0).
fn header(kind: u32, pod: u32, extent: u32, stored: Stored, ts: u32, name: &str, hint: u32) -> Vec<u8> {
    let mut info = kind | hint << 2;
    let mut out = Vec::new();
    let put = |v: u32, out: &mut Vec<u8>| match hint {
        0 => out.push(v as u8),
        _ => out.extend_from_slice(&v.to_le_bytes()),
    };
    let mut rest = Vec::new();
    if kind != 0 {
        info |= pod << 4 | extent << 12;
        put(stored.num_samples, &mut rest);
        let default = (1.min(stored.num_samples), stored.num_samples.saturating_sub(1));
        if stored.first == 0 && stored.last == 0 {
            info |= 0x800;
        } else if (stored.first, stored.last) != default {
            info |= 0x200;
            put(stored.first, &mut rest);
            put(stored.last, &mut rest);
        }
        if ts != 0 {
            info |= 0x100;
            put(ts, &mut rest);
        }
    }
    put(name.len() as u32, &mut rest);
    rest.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&info.to_le_bytes());
    out.extend_from_slice(&rest);
    out
}

/// A sample's data block: a 16-byte digest, then the values.
fn block(values: &[u8]) -> Node {
    let mut d = vec![0xab; 16];
    d.extend_from_slice(values);
    Node::Data(d)
}

fn scalar(name: &str, pod: u32, extent: u32, samples: Vec<Vec<u8>>, stored: Stored, ts: u32) -> Prop {
    Prop {
        header: header(1, pod, extent, stored, ts, name, 0),
        node: Node::Group(samples.iter().map(|s| block(s)).collect()),
    }
}

fn array(name: &str, pod: u32, extent: u32, samples: Vec<Vec<u8>>, stored: Stored, ts: u32) -> Prop {
    let mut children = Vec::new();
    for (k, s) in samples.iter().enumerate() {
        children.push(block(s));
        // Dimensions: written for some samples, left empty (derived from the size) for others.
        let count = (s.len() / 4 / extent as usize) as u64;
        children.push(if k % 2 == 0 {
            Node::EmptyData
        } else {
            Node::Data(count.to_le_bytes().to_vec())
        });
    }
    Prop {
        header: header(2, pod, extent, stored, ts, name, 2),
        node: Node::Group(children),
    }
}

/// A compound property with inline metadata `md`.
fn compound(name: &str, md: &str, props: Vec<Prop>) -> Prop {
    let mut h = header(0, 0, 0, Stored::all(0), 0, name, 2);
    h[2] |= 0xf0; // metadata index 0xff (bits 20-27): inline
    h[3] |= 0x0f;
    h.extend_from_slice(&(md.len() as u32).to_le_bytes());
    h.extend_from_slice(md.as_bytes());
    Prop {
        header: h,
        node: compound_group(props),
    }
}

fn compound_group(props: Vec<Prop>) -> Node {
    let mut headers = Vec::new();
    let mut children = Vec::new();
    for p in props {
        headers.extend_from_slice(&p.header);
        children.push(p.node);
    }
    children.push(Node::Data(headers));
    Node::Group(children)
}

/// An object group: properties, children (name, inline metadata, group), headers + digests.
fn object(props: Vec<Prop>, children: Vec<(&str, &str, Node)>) -> Node {
    let mut headers = Vec::new();
    let mut nodes = vec![compound_group(props)];
    for (name, md, node) in children {
        headers.extend_from_slice(&(name.len() as u32).to_le_bytes());
        headers.extend_from_slice(name.as_bytes());
        headers.push(0xff);
        headers.extend_from_slice(&(md.len() as u32).to_le_bytes());
        headers.extend_from_slice(md.as_bytes());
        nodes.push(node);
    }
    headers.extend_from_slice(&[0x5a; 32]);
    nodes.push(Node::Data(headers));
    Node::Group(nodes)
}

/// The whole archive: sampling 0 (default) and sampling 1 (24 fps from 1/24 s).
fn archive(top: Node) -> Vec<u8> {
    let mut ts = Vec::new();
    for (tpc, t0) in [(1.0f64, 0.0f64), (1.0 / 24.0, 1.0 / 24.0)] {
        ts.extend_from_slice(&400u32.to_le_bytes());
        ts.extend_from_slice(&tpc.to_le_bytes());
        ts.extend_from_slice(&1u32.to_le_bytes());
        ts.extend_from_slice(&t0.to_le_bytes());
    }
    let md = b"\x17schema=AbcGeom_Xform_v3".to_vec();
    file(&Node::Group(vec![
        Node::Data(0i32.to_le_bytes().to_vec()),
        Node::Data(10709i32.to_le_bytes().to_vec()),
        top,
        Node::Data(b"_ai_Application=test".to_vec()),
        Node::Data(ts),
        Node::Data(md),
    ]))
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Five vertices, a quad and a triangle; frame k moves every vertex by k/10 in Y.
const BASE: [[f32; 3]; 5] = [[0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.], [2., 0., 0.]];

fn frame(k: usize) -> Vec<f32> {
    BASE.iter().flat_map(|v| [v[0], v[1] + k as f32 / 10.0, v[2]]).collect()
}

/// A PolyMesh with `frames` samples of P (as `stored`), counts and indices as given.
fn mesh(frames: usize, stored: Stored, counts: &[i32], indices: &[i32]) -> Node {
    let p = array(
        "P",
        10,
        3,
        (0..frames).map(|k| f32_bytes(&frame(k))).collect(),
        stored,
        1,
    );
    let constant = Stored {
        num_samples: stored.num_samples,
        first: 0,
        last: 0,
    };
    let fi = array(".faceIndices", 6, 1, vec![i32_bytes(indices)], constant, 1);
    let fc = array(".faceCounts", 6, 1, vec![i32_bytes(counts)], constant, 1);
    let geom = compound(".geom", POLYMESH, vec![p, fi, fc]);
    object(vec![geom], vec![])
}

/// An Xform with ops and per-sample values (one sample: constant).
fn xform(ops: &[u8], vals: Vec<Vec<f64>>, child: (&str, &str, Node)) -> Node {
    let n = vals.len() as u32;
    let channels = vals[0].len() as u32;
    let stored = if n == 1 {
        Stored {
            num_samples: 1,
            first: 0,
            last: 0,
        }
    } else {
        Stored::all(n)
    };
    let one = Stored {
        num_samples: 1,
        first: 0,
        last: 0,
    };
    let props = vec![
        scalar(".inherits", 0, 1, vec![vec![1]], one, 0),
        scalar(".ops", 1, ops.len() as u32, vec![ops.to_vec()], one, 0),
        scalar(
            ".vals",
            11,
            channels,
            vals.iter().map(|v| f64_bytes(v)).collect(),
            stored,
            1,
        ),
    ];
    object(vec![compound(".xform", XFORM, props)], vec![child])
}

const COUNTS: [i32; 2] = [4, 3];
const INDICES: [i32; 7] = [0, 1, 2, 3, 1, 4, 2];

fn good_file() -> Vec<u8> {
    let m = mesh(3, Stored::all(3), &COUNTS, &INDICES);
    // Translate (1, 2, 3), then scale 2: a point p lands at 2p + (1, 2, 3).
    let x = xform(&[0x10, 0x00], vec![vec![1., 2., 3., 2., 2., 2.]], ("Mesh", POLYMESH, m));
    archive(object(vec![], vec![("Root", XFORM, x)]))
}

fn path() -> PathBuf {
    PathBuf::from("t.abc")
}

#[test]
fn reads_frames_topology_transforms_and_times() {
    let r = read_bytes(&good_file(), &path()).unwrap();
    assert_eq!(r.object, "/Root/Mesh");
    assert_eq!(r.sequence.name, "t");
    assert_eq!(r.sequence.frames.len(), 3);
    // Clockwise quad 0 1 2 3 and triangle 1 4 2, fanned from their first corners and flipped.
    assert_eq!(r.sequence.triangles, vec![[0, 2, 1], [0, 3, 2], [1, 2, 4]]);
    for (k, f) in r.sequence.frames.iter().enumerate() {
        for (v, p) in f.iter().enumerate() {
            let b = Vec3::from(BASE[v]) + Vec3::new(0.0, k as f32 / 10.0, 0.0);
            assert!((*p - (2.0 * b + Vec3::new(1., 2., 3.))).length() < 1e-6, "{k} {v} {p}");
        }
    }
    assert!((r.sequence.fps.unwrap() - 24.0).abs() < 1e-4);
    assert!((r.times[2] - 3.0 / 24.0).abs() < 1e-12);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn repeated_samples_and_animated_xforms() {
    // Five samples, stored 0..=2: samples 3 and 4 repeat sample 2.
    let stored = Stored {
        num_samples: 5,
        first: 1,
        last: 2,
    };
    let m = mesh(3, stored, &COUNTS, &INDICES);
    // Translation animated over five samples: X = sample index.
    let vals = (0..5).map(|k| vec![k as f64, 0., 0.]).collect();
    let x = xform(&[0x10], vals, ("Mesh", POLYMESH, m));
    let bytes = archive(object(vec![], vec![("Root", XFORM, x)]));
    let r = read_bytes(&bytes, &path()).unwrap();
    assert_eq!(r.sequence.frames.len(), 5);
    for (k, f) in r.sequence.frames.iter().enumerate() {
        let expected = Vec3::from(BASE[3]) + Vec3::new(k as f32, k.min(2) as f32 / 10.0, 0.0);
        assert!((f[3] - expected).length() < 1e-6, "frame {k}: {} vs {expected}", f[3]);
    }
}

#[test]
fn polygons_with_fewer_corners_are_left_out_with_a_warning() {
    let m = mesh(2, Stored::all(2), &[4, 2, 3], &[0, 1, 2, 3, 0, 4, 1, 4, 2]);
    let bytes = archive(object(vec![], vec![("Mesh", POLYMESH, m)]));
    let r = read_bytes(&bytes, &path()).unwrap();
    assert_eq!(r.sequence.triangles.len(), 3);
    assert!(
        r.warnings[0].contains("1 face(s) with fewer than 3 corners"),
        "{:?}",
        r.warnings
    );
}

fn error_of(bytes: &[u8]) -> String {
    read_bytes(bytes, &path()).unwrap_err().to_string()
}

#[test]
fn bad_meshes_are_errors_naming_the_place() {
    let one = |m: Node| archive(object(vec![], vec![("Mesh", POLYMESH, m)]));
    let e = error_of(&one(mesh(2, Stored::all(2), &COUNTS, &[0, 1, 2, 3, 1, 5, 2])));
    assert!(
        e.starts_with("t.abc: object /Mesh: property .geom/.faceIndices: corner 5 names vertex 5"),
        "{e}"
    );
    let e = error_of(&one(mesh(2, Stored::all(2), &[4, 4], &INDICES)));
    assert!(e.contains("face counts add up to 8 corners"), "{e}");
    let e = error_of(&one(mesh(2, Stored::all(2), &[4, -3], &INDICES)));
    assert!(e.contains("face 1 has -3 corners"), "{e}");
    // A static mesh is no sequence; no mesh at all neither.
    let still = Stored {
        num_samples: 2,
        first: 0,
        last: 0,
    };
    let e = error_of(&one(mesh(1, still, &COUNTS, &INDICES)));
    assert!(e.contains("no animated PolyMesh: 1 static mesh(es) (/Mesh)"), "{e}");
    let e = error_of(&archive(object(vec![], vec![])));
    assert!(e.contains("no PolyMesh object"), "{e}");
    // A sample count whose repeated frames would take far more memory than the file.
    let huge = Stored {
        num_samples: u32::MAX,
        first: 1,
        last: 1,
    };
    let e = error_of(&one(mesh(2, huge, &COUNTS, &INDICES)));
    assert!(e.contains("times the file's size in memory"), "{e}");
    // Topology that changes over time.
    let p = array(
        "P",
        10,
        3,
        vec![f32_bytes(&frame(0)), f32_bytes(&frame(1))],
        Stored::all(2),
        1,
    );
    let fi = array(
        ".faceIndices",
        6,
        1,
        vec![i32_bytes(&INDICES), i32_bytes(&[0, 1, 2, 3, 4, 1, 2])],
        Stored::all(2),
        1,
    );
    let fc = array(".faceCounts", 6, 1, vec![i32_bytes(&COUNTS)], Stored::all(1), 1);
    let m = object(vec![compound(".geom", POLYMESH, vec![p, fi, fc])], vec![]);
    let e = error_of(&one(m));
    assert!(
        e.contains("property .geom/.faceIndices sample 1: the topology changes"),
        "{e}"
    );
    // P of the wrong type.
    let p = array("P", 11, 3, vec![f64_bytes(&[0.0; 15]); 2], Stored::all(2), 1);
    let m = object(vec![compound(".geom", POLYMESH, vec![p])], vec![]);
    let e = error_of(&one(m));
    assert!(e.contains("property .geom/P: Array F64×3, expected Array F32×3"), "{e}");
}

#[test]
fn hdf5_and_cycles_are_refused() {
    let mut hdf5 = super::ogawa::HDF5_MAGIC.to_vec();
    hdf5.resize(64, 0);
    assert!(error_of(&hdf5).contains("HDF5 Alembic is not supported; re-export as Ogawa"));
    // Point the top object's child entry back at the top object.
    let mut bytes = good_file();
    let a = schema::Archive::open(&bytes).unwrap();
    let top = a.top as usize;
    let entry = top + 8 + 8;
    bytes[entry..entry + 8].copy_from_slice(&(top as u64).to_le_bytes());
    let e = error_of(&bytes);
    assert!(
        e.contains("object /: its child \"Root\"") && e.contains("reached twice"),
        "{e}"
    );
}

#[test]
fn every_truncation_is_an_error() {
    let good = good_file();
    for n in 0..good.len() {
        let e = read_bytes(&good[..n], &path());
        assert!(e.is_err(), "a {n}-byte prefix read as a sequence");
        assert!(e.unwrap_err().to_string().starts_with("t.abc: "));
    }
}

#[test]
fn no_damaged_byte_makes_the_reader_panic() {
    let good = good_file();
    for i in 0..good.len() {
        for value in [0x00, 0xff, 0x7f, good[i] ^ 0x01, good[i] ^ 0x80] {
            let mut b = good.clone();
            b[i] = value;
            // Either reads (the byte was in a name, a digest, a value) or is an error.
            if let Ok(r) = read_bytes(&b, &path()) {
                assert!(r.sequence.validate().is_ok());
            }
        }
    }
}

#[test]
fn a_damaged_sample_is_named_by_object_property_and_sample() {
    let mut bytes = good_file();
    // Find P's third stored sample through the reader's own layers and make its size huge.
    let offset = {
        let a = schema::Archive::open(&bytes).unwrap();
        let root = a.object(a.top).unwrap();
        let xform = a.object(root.children[0].group).unwrap();
        let mesh = a.object(xform.children[0].group).unwrap();
        let props = a.compound(mesh.properties, "").unwrap();
        let geom = a.sub_compound(props.get(".geom").unwrap()).unwrap();
        let p = geom.get("P").unwrap();
        let children = a.ogawa.group(p.group).unwrap();
        children[4].data("P sample 2").unwrap() as usize
    };
    bytes[offset..offset + 8].copy_from_slice(&(1u64 << 50).to_le_bytes());
    let e = error_of(&bytes);
    assert!(
        e.starts_with("t.abc: object /Root/Mesh: property .geom/P sample 2: data at byte")
            && e.contains("runs past the end of the file"),
        "{e}"
    );
}

#[test]
fn other_animated_meshes_are_reported() {
    let a = mesh(2, Stored::all(2), &COUNTS, &INDICES);
    let b = mesh(2, Stored::all(2), &COUNTS, &INDICES);
    let bytes = archive(object(vec![], vec![("A", POLYMESH, a), ("B", POLYMESH, b)]));
    let r = read_bytes(&bytes, &path()).unwrap();
    assert_eq!(r.object, "/A");
    assert_eq!(
        r.warnings,
        ["1 other animated mesh(es) left out (/B): rigml reads the first"]
    );
}
