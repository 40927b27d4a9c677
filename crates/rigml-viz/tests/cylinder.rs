//! Renders of a generated two-joint skinned cylinder: pixel statistics that must hold, with
//! no golden images.

use glam::{Mat4, Quat, Vec3};
use rigml_core::{Character, Mesh, Pose, Skeleton, Skin, Transform};
use rigml_viz::colormap::heat_value;
use rigml_viz::{
    render_compare, render_pose_sheet, render_weights, render_weights_frame, RenderOptions, RgbaImage, View, VizError,
    WeightMode, NO_TRIANGLE,
};

const RINGS: usize = 21;
const SEGMENTS: usize = 16;

/// A vertical cylinder (y in 0..2, radius 0.3) with joint 0 at the base and joint 1 at y = 1;
/// joint 1's weight ramps from 0 to 1 over y in 0.8..1.2.
fn cylinder() -> Character {
    let mut positions = Vec::new();
    let mut rows = Vec::new();
    for r in 0..RINGS {
        let y = 2.0 * r as f32 / (RINGS - 1) as f32;
        let w1 = ((y - 0.8) / 0.4).clamp(0.0, 1.0);
        for s in 0..SEGMENTS {
            let a = std::f32::consts::TAU * s as f32 / SEGMENTS as f32;
            positions.push(Vec3::new(0.3 * a.cos(), y, 0.3 * a.sin()));
            rows.push(vec![(0u32, 1.0 - w1), (1u32, w1)]);
        }
    }
    let mut triangles = Vec::new();
    for r in 0..RINGS - 1 {
        for s in 0..SEGMENTS {
            let v = |r: usize, s: usize| (r * SEGMENTS + s % SEGMENTS) as u32;
            triangles.push([v(r, s), v(r + 1, s), v(r + 1, s + 1)]);
            triangles.push([v(r, s), v(r + 1, s + 1), v(r, s + 1)]);
        }
    }
    let rest_local = vec![Transform::default(), Transform::from_translation(Vec3::Y)];
    let skeleton = Skeleton {
        names: vec!["root".into(), "mid".into()],
        parents: vec![None, Some(0)],
        inverse_bind: vec![Mat4::IDENTITY, Mat4::from_translation(-Vec3::Y)],
        rest_local,
    };
    let rows: Vec<Vec<(u32, f32)>> = rows;
    let skin = {
        let mut b = rigml_core::skin::SkinBuilder::new(2, 4).unwrap();
        for row in &rows {
            b.push_row(row).unwrap();
        }
        b.finish()
    };
    let character = Character {
        name: "cylinder".into(),
        mesh: Mesh {
            positions,
            triangles,
            ..Mesh::default()
        },
        skeleton,
        skin: Some(skin),
        clips: Vec::new(),
        attachments: Vec::new(),
    };
    character.validate().unwrap();
    character
}

fn options(mode: WeightMode) -> RenderOptions {
    RenderOptions {
        mode,
        size: 128,
        ..RenderOptions::default()
    }
}

/// Mean weight of joint `j` over the corners of triangle `t`.
fn triangle_weight(c: &Character, t: u32, j: u32) -> f32 {
    let skin = c.skin.as_ref().unwrap();
    let tri = c.mesh.triangles[t as usize];
    tri.iter()
        .map(|&v| {
            skin.influences(v as usize)
                .iter()
                .find(|i| i.joint == j)
                .map_or(0.0, |i| i.weight)
        })
        .sum::<f32>()
        / 3.0
}

/// (mean heat where the triangle's weight for `j` > 0.5, mean heat elsewhere on the model,
/// pixel counts of both).
fn heat_split(c: &Character, j: usize, size: u32) -> (f32, f32, usize, usize) {
    let frame = render_weights_frame(
        c,
        &RenderOptions {
            mode: WeightMode::Joint(j),
            size,
            ..RenderOptions::default()
        },
    )
    .unwrap();
    let (mut hot, mut cold) = (Vec::new(), Vec::new());
    for (k, &t) in frame.triangle.iter().enumerate() {
        if t == NO_TRIANGLE {
            continue;
        }
        let (x, y) = ((k as u32) % frame.image.width(), (k as u32) / frame.image.width());
        let h = heat_value(frame.image.pixel(x, y).unwrap()).unwrap();
        if triangle_weight(c, t, j as u32) > 0.5 {
            hot.push(h);
        } else {
            cold.push(h);
        }
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
    (mean(&hot), mean(&cold), hot.len(), cold.len())
}

#[test]
fn selected_joint_region_is_hot() {
    let c = cylinder();
    for j in 0..2 {
        let (hot, cold, n_hot, n_cold) = heat_split(&c, j, 128);
        assert!(
            n_hot > 500 && n_cold > 500,
            "joint {j}: {n_hot} hot, {n_cold} cold pixels"
        );
        assert!(hot > 0.75 && cold < 0.25, "joint {j}: hot {hot:.3}, cold {cold:.3}");
    }
}

#[test]
fn background_is_empty_and_model_is_opaque() {
    let c = cylinder();
    let frame = render_weights_frame(&c, &options(WeightMode::Dominant)).unwrap();
    assert_eq!((frame.image.width(), frame.image.height()), (3 * 128, 128));
    let mut covered = 0;
    for (k, &t) in frame.triangle.iter().enumerate() {
        let px = frame.image.as_bytes()[k * 4..k * 4 + 4].to_vec();
        if t == NO_TRIANGLE {
            assert_eq!(px, [0, 0, 0, 0], "pixel {k}");
        } else {
            assert_eq!(px[3], 255, "pixel {k}");
            covered += 1;
        }
    }
    // A 0.6 x 2 cylinder fitted to 90% of the panel height covers about 0.3 * 0.9^2 of each
    // of the three panels.
    let share = covered as f32 / frame.triangle.len() as f32;
    assert!((0.18..0.3).contains(&share), "covered share {share}");
    for (x, y) in [(0, 0), (127, 127), (128, 0), (383, 127)] {
        assert_eq!(frame.image.pixel(x, y), Some([0, 0, 0, 0]));
    }
}

#[test]
fn same_input_gives_same_bytes() {
    let c = cylinder();
    for mode in [WeightMode::Joint(1), WeightMode::Dominant, WeightMode::All] {
        let a = render_weights(&c, &options(mode)).unwrap();
        let b = render_weights(&c, &options(mode)).unwrap();
        assert_eq!(a, b);
        let pa = rigml_viz::encode_png(std::path::Path::new("a.png"), &a).unwrap();
        let pb = rigml_viz::encode_png(std::path::Path::new("b.png"), &b).unwrap();
        assert_eq!(pa, pb);
    }
    // Dominant and All differ on the blended band only; Joint differs everywhere.
    let dominant = render_weights(&c, &options(WeightMode::Dominant)).unwrap();
    let all = render_weights(&c, &options(WeightMode::All)).unwrap();
    assert_ne!(dominant, all);
}

/// Pixel bounding box (x0, y0, x1, y1) of the opaque pixels of `image`.
fn opaque_box(image: &RgbaImage) -> (u32, u32, u32, u32) {
    let mut b = (u32::MAX, u32::MAX, 0, 0);
    for y in 0..image.height() {
        for x in 0..image.width() {
            if image.pixel(x, y).unwrap()[3] != 0 {
                b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
            }
        }
    }
    b
}

#[test]
fn pose_sheet_panels_show_the_poses() {
    let c = cylinder();
    let bind = Pose::bind(&c.skeleton);
    let mut bent = bind.clone();
    bent.local[1].rotation = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2);
    let opts = RenderOptions {
        views: vec![View::Front, View::Side],
        ..options(WeightMode::Dominant)
    };
    let sheet = render_pose_sheet(&c, &[bind.clone(), bent.clone()], &opts).unwrap();
    assert_eq!((sheet.width(), sheet.height()), (2 * 128, 2 * 128));
    let front_bind = sheet.crop(0, 0, 128, 128);
    let front_bent = sheet.crop(128, 0, 128, 128);
    assert_ne!(front_bind, front_bent);
    // Bind: a tall narrow column. Bent 90 degrees about z: the upper half points sideways,
    // so the front silhouette becomes wider and shorter.
    let (x0, y0, x1, y1) = opaque_box(&front_bind);
    assert!(y1 - y0 > 2 * (x1 - x0), "bind box {:?}", (x0, y0, x1, y1));
    let (x0, y0, x1, y1) = opaque_box(&front_bent);
    assert!(x1 - x0 > (y1 - y0) / 2, "bent box {:?}", (x0, y0, x1, y1));
    // The bind column is the same whichever pose is beside it, and the same pose twice gives
    // identical panels.
    let twice = render_pose_sheet(&c, &[bind.clone(), bind], &opts).unwrap();
    assert_eq!(twice.crop(0, 0, 128, 128), twice.crop(128, 0, 128, 128));
    // A pose for another skeleton is refused with its index.
    let short = Pose {
        local: vec![Transform::default()],
    };
    let err = render_pose_sheet(&c, &[bent, short], &opts).unwrap_err();
    assert!(matches!(err, VizError::BadPose { index: 1, .. }), "{err}");
}

#[test]
fn compare_identical_skins_shows_no_difference() {
    let c = cylinder();
    let skin = c.skin.clone().unwrap();
    let opts = options(WeightMode::Dominant);
    let cmp = render_compare(&c, &skin, &skin, &opts).unwrap();
    assert_eq!(cmp.max_difference, 0.0);
    assert_eq!((cmp.image.width(), cmp.image.height()), (3 * 128, 3 * 128));
    assert_eq!(
        cmp.image.crop(0, 0, 384, 128),
        cmp.image.crop(0, 128, 384, 128),
        "A and B rows"
    );
    let diff_row = cmp.image.crop(0, 256, 384, 128);
    let mut opaque = 0;
    for y in 0..128 {
        for x in 0..384 {
            let p = diff_row.pixel(x, y).unwrap();
            if p[3] != 0 {
                opaque += 1;
                assert!(p[0] == p[1] && p[1] == p[2], "grey expected, got {p:?}");
            }
        }
    }
    assert!(opaque > 1000);
}

#[test]
fn compare_swapped_joints_shows_difference_where_they_blend() {
    let c = cylinder();
    let a = c.skin.clone().unwrap();
    // B: every vertex fully on its dominant joint of A (a rigid skin).
    let rigid: Vec<u32> = (0..a.vertex_count())
        .map(|v| {
            let row = a.influences(v);
            row.iter()
                .max_by(|x, y| x.weight.total_cmp(&y.weight))
                .map_or(0, |i| i.joint)
        })
        .collect();
    let b = Skin::rigid(&rigid, 2).unwrap();
    let cmp = render_compare(&c, &a, &b, &options(WeightMode::Joint(1))).unwrap();
    assert!(
        cmp.max_difference > 0.4 && cmp.max_difference <= 0.5,
        "{}",
        cmp.max_difference
    );
    // Red-ish pixels (r well above b) appear in the difference row only.
    let reddish = |img: &RgbaImage| {
        (0..img.height())
            .flat_map(|y| (0..img.width()).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = img.pixel(x, y).unwrap();
                p[3] != 0 && p[0] as i32 > p[2] as i32 + 60
            })
            .count()
    };
    assert!(reddish(&cmp.image.crop(0, 256, 384, 128)) > 100);
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let c = cylinder();
    let err = render_weights(&c, &options(WeightMode::Joint(2))).unwrap_err();
    assert!(err.to_string().contains("cylinder: joint 2 does not exist"), "{err}");
    let mut no_skin = c.clone();
    no_skin.skin = None;
    assert!(matches!(
        render_weights(&no_skin, &options(WeightMode::Dominant)),
        Err(VizError::NoSkin { .. })
    ));
    for size in [0, 8, 100_000] {
        let opts = RenderOptions {
            size,
            ..options(WeightMode::Dominant)
        };
        assert!(matches!(render_weights(&c, &opts), Err(VizError::BadSize { .. })));
    }
    let huge = RenderOptions {
        size: 4096,
        views: vec![View::Front; 5],
        ..options(WeightMode::Dominant)
    };
    assert!(matches!(render_weights(&c, &huge), Err(VizError::BadSize { .. })));
    let no_views = RenderOptions {
        views: vec![],
        ..options(WeightMode::Dominant)
    };
    assert!(matches!(render_weights(&c, &no_views), Err(VizError::BadSize { .. })));
    let mut nan = c.clone();
    nan.mesh.positions[3] = Vec3::NAN;
    let _ = render_weights(&nan, &options(WeightMode::Dominant)); // error or image, never a panic
    let mut no_tris = c.clone();
    no_tris.mesh.triangles.clear();
    assert!(matches!(
        render_weights(&no_tris, &options(WeightMode::Dominant)),
        Err(VizError::Empty { .. })
    ));
    let mut bad_index = c.clone();
    bad_index.mesh.triangles[0] = [0, 1, 9999];
    assert!(matches!(
        render_weights(&bad_index, &options(WeightMode::Dominant)),
        Err(VizError::Invalid { .. })
    ));
    let other = Skin::rigid(&[0, 1], 2).unwrap();
    let err = render_compare(&c, c.skin.as_ref().unwrap(), &other, &options(WeightMode::Dominant)).unwrap_err();
    assert!(err.to_string().contains("weight set B"), "{err}");
    assert!(rigml_viz::poses_from_clip(&c, 0, 3).is_err());
}
