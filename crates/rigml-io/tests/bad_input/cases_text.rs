//! Hand-made breakage of the text formats: OBJ, BVH and RigNet `rig.txt`.

use super::harness::{Case, Expect, Source};
use super::words::{CYCLE, EMPTY, NON_FINITE, OUT_OF_RANGE};

/// A quad as two triangles, in one object.
pub const OBJ: &str = "# quad\no body\nv 0 0 0\nv 1 0 0\nv 0 2 0\nv 1 2 0\nvt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\nf 1/1 2/2 3/3\nf 3/3 2/2 4/4\n";

fn obj(label: &str, text: &str, expect: Expect) -> Case {
    Case::new(label, "mesh.obj", text.as_bytes(), expect)
}

pub fn obj_cases() -> Vec<Case> {
    let with = |from: &str, to: &str| OBJ.replacen(from, to, 1);
    vec![
        obj(
            "NaN coordinate",
            &with("v 1 0 0", "v nan 0 0"),
            Expect::Error(NON_FINITE),
        ),
        obj(
            "infinite coordinate",
            &with("v 1 0 0", "v 1 inf 0"),
            Expect::Error(NON_FINITE),
        ),
        obj(
            "coordinate overflowing f32",
            &with("v 1 0 0", "v 1e39 0 0"),
            Expect::Error(NON_FINITE),
        ),
        obj(
            "face index 0",
            &with("f 1/1 2/2 3/3", "f 0 2 3"),
            Expect::Error(&["index", "invalid", "zero"]),
        ),
        obj(
            "face index beyond the vertices",
            &with("f 1/1 2/2 3/3", "f 1 2 99"),
            Expect::Error(OUT_OF_RANGE),
        ),
        obj(
            "relative index before the first vertex",
            &with("f 1/1 2/2 3/3", "f -9 1 2"),
            Expect::Error(OUT_OF_RANGE),
        ),
        obj(
            "face index overflowing every integer",
            &with("f 1/1 2/2 3/3", "f 1 2 99999999999999999999999"),
            Expect::Error(&["index", "range", "invalid", "overflow", "number"]),
        ),
        obj(
            "texture index beyond the vt lines",
            &with("f 1/1 2/2 3/3", "f 1/9 2/2 3/3"),
            Expect::Error(OUT_OF_RANGE),
        ),
        obj("not a number", &with("v 1 0 0", "v 1 abc 0"), Expect::Error(&["line"])),
        obj(
            "vertex with two coordinates",
            &with("v 1 0 0", "v 1 0"),
            Expect::Error(&["line"]),
        ),
        obj("face with two corners", &with("f 1/1 2/2 3/3", "f 1 2"), Expect::Either),
        obj("face with no corners", &with("f 1/1 2/2 3/3", "f"), Expect::Either),
        obj("empty file", "", Expect::Error(EMPTY)),
        obj("only comments", "# nothing here\n# at all\n", Expect::Error(EMPTY)),
        Case::new(
            "raw invalid UTF-8 bytes",
            "mesh.obj",
            b"v 0 0 0\nv 1 0 0\nv 0 1 0\no \xff\xfe\nf 1 2 3\n".to_vec(),
            Expect::Either,
        ),
    ]
}

/// Two joints and an End Site, two frames; the root has 6 channels, Spine 3 (ZXY).
pub const BVH: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 0 0 0 0 0 0 0 0
0 0.5 0 10 0 0 5 0 0
";

fn bvh(label: &str, text: &str, expect: Expect) -> Case {
    Case::new(label, "walk.bvh", text.as_bytes(), expect)
}

pub fn bvh_cases() -> Vec<Case> {
    let with = |from: &str, to: &str| BVH.replacen(from, to, 1);
    let deep_frames = with("Frames: 2", "Frames: 99999999999");
    vec![
        bvh(
            "joint without CHANNELS",
            &with("    CHANNELS 3 Zrotation Xrotation Yrotation\n", ""),
            Expect::Error(&["channel", "value"]),
        ),
        bvh(
            "CHANNELS count larger than the names",
            &with("CHANNELS 3 Zrotation", "CHANNELS 4 Zrotation"),
            Expect::Error(&["channel"]),
        ),
        bvh(
            "unknown channel name",
            &with("CHANNELS 3 Zrotation", "CHANNELS 3 Wrotation"),
            Expect::Error(&["channel", "wrotation"]),
        ),
        bvh(
            "huge CHANNELS count",
            &with("CHANNELS 3 Zrotation", "CHANNELS 4000000000 Zrotation"),
            Expect::Error(&["channel"]),
        ),
        bvh(
            "frame with too few values",
            &with("0 0.5 0 10 0 0 5 0 0", "0 0.5 0 10 0 0 5 0"),
            Expect::Error(&["line"]),
        ),
        bvh(
            "frame with too many values",
            &with("0 0.5 0 10 0 0 5 0 0", "0 0.5 0 10 0 0 5 0 0 7"),
            Expect::Error(&["line"]),
        ),
        bvh(
            "NaN in a frame",
            &with("0 0.5 0 10 0 0 5 0 0", "0 0.5 0 nan 0 0 5 0 0"),
            Expect::Error(NON_FINITE),
        ),
        bvh(
            "infinity in a frame",
            &with("0 0.5 0 10 0 0 5 0 0", "0 0.5 0 10 0 0 inf 0 0"),
            Expect::Error(NON_FINITE),
        ),
        bvh(
            "NaN offset",
            &with("OFFSET 0 1 0\n    CHANNELS", "OFFSET 0 nan 0\n    CHANNELS"),
            Expect::Error(NON_FINITE),
        ),
        bvh(
            "fewer frame lines than Frames",
            &with("Frames: 2", "Frames: 5"),
            Expect::Error(&["frame"]),
        ),
        bvh(
            "Frames far beyond the frame lines",
            &deep_frames,
            Expect::Error(&["frame"]),
        ),
        bvh(
            "0 frames",
            &with("Frames: 2", "Frames: 0").replace("0 0 0 0 0 0 0 0 0\n0 0.5 0 10 0 0 5 0 0\n", ""),
            Expect::Either,
        ),
        bvh(
            "Frame Time 0",
            &with("Frame Time: 0.033333", "Frame Time: 0"),
            Expect::Either,
        ),
        bvh(
            "negative Frame Time",
            &with("Frame Time: 0.033333", "Frame Time: -0.1"),
            Expect::Error(&["time", "frame"]),
        ),
        bvh(
            "NaN Frame Time",
            &with("Frame Time: 0.033333", "Frame Time: nan"),
            Expect::Error(&["time", "frame"]),
        ),
        bvh(
            "no MOTION section",
            &BVH[..BVH.find("MOTION").unwrap_or(BVH.len())],
            Expect::Either,
        ),
        bvh(
            "missing closing brace",
            &BVH.replacen("}\nMOTION", "MOTION", 1),
            Expect::Error(&[]),
        ),
        bvh("empty file", "", Expect::Error(&["empty", "hierarchy", "no joints"])),
        bvh("CRLF line endings", &BVH.replace('\n', "\r\n"), Expect::Ok),
    ]
}

/// The RigNet rig beside [`OBJ`]: hip -> spine -> head, four skinned vertices.
pub const RIG: &str = "joints hip 0 0 0
joints spine 0 1 0
joints head 0 2 0
root hip
hier hip spine
hier spine head
skin 0 hip 1.0
skin 1 hip 1.0
skin 2 hip 0.5 spine 0.5
skin 3 head 1.0
";

/// A `<id>_rig.txt` case with its `<id>.obj` beside it.
pub fn rignet(label: &str, text: &str, expect: Expect) -> Case {
    Case::new(label, "model_rig.txt", text.as_bytes(), expect)
        .beside("model.obj", Source::Bytes(OBJ.as_bytes().to_vec()))
}

pub fn rignet_cases() -> Vec<Case> {
    let with = |from: &str, to: &str| RIG.replacen(from, to, 1);
    vec![
        rignet(
            "hier cycle apart from the root",
            &with("hier hip spine\n", "hier head spine\n"),
            Expect::Error(CYCLE),
        ),
        rignet(
            "hier cycle through the root",
            &with("hier spine head\n", "hier spine head\nhier head hip\n"),
            Expect::Error(&["cycle", "root"]),
        ),
        rignet(
            "hier names an unknown joint",
            &with("hier spine head", "hier spine neck"),
            Expect::Error(&["neck"]),
        ),
        rignet(
            "skin names an unknown joint",
            &with("skin 2 hip 0.5 spine 0.5", "skin 2 hip 0.5 tail 0.5"),
            Expect::Error(&["tail"]),
        ),
        rignet(
            "root is an unknown joint",
            &with("root hip", "root pelvis"),
            Expect::Error(&["pelvis"]),
        ),
        rignet(
            "skin vertex beyond the mesh",
            &with("skin 3 head 1.0", "skin 99 head 1.0"),
            Expect::Error(&["99"]),
        ),
        rignet(
            "NaN joint position",
            &with("joints spine 0 1 0", "joints spine 0 nan 0"),
            Expect::Error(NON_FINITE),
        ),
        rignet(
            "NaN weight",
            &with("skin 3 head 1.0", "skin 3 head nan"),
            Expect::Error(NON_FINITE),
        ),
        rignet(
            "skin line with a missing weight",
            &with("skin 3 head 1.0", "skin 3 head"),
            Expect::Error(&["line"]),
        ),
        rignet(
            "joint declared twice",
            &format!("{RIG}joints hip 5 5 5\n"),
            Expect::Error(&["hip"]),
        ),
        rignet("empty rig", "", Expect::Either),
        Case::new("rig without its mesh", "lonely_rig.txt", RIG.as_bytes(), Expect::Either),
    ]
}
