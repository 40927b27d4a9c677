//! `rigml inspect FILE [--json]`: what a character file holds and what looks wrong with it.

use anyhow::Result;
use rigml_core::{Character, Problem, Skeleton};
use rigml_io::Format;
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;

/// Parts listed one by one in the text report; the rest are counted (JSON lists all).
const PARTS_SHOWN: usize = 12;

/// Summarise a character file: mesh, joints, skin weights, clips, bounds and problems.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml inspect rigml-demo.glb
  rigml inspect ../shared/data/characters/khronos/Fox.glb --json | jq .skin")]
pub struct Args {
    /// The file to read (.glb, .gltf, .vrm, .fbx, .obj, .bvh, RigNet .txt, MakeHuman .json).
    pub file: PathBuf,
    /// Print one machine-readable JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Everything `inspect` reports; its JSON form is the `--json` output.
#[derive(Serialize)]
struct Report {
    file: String,
    format: &'static str,
    name: String,
    mesh: MeshReport,
    skeleton: SkeletonReport,
    /// Absent when the file has no skin.
    skin: Option<SkinReport>,
    clips: Vec<ClipReport>,
    /// Meshes that joints carry rigidly (props, hats), outside the skinned mesh.
    attachments: Vec<AttachmentReport>,
    /// Bounding box of the mesh as it stands in the rest pose in world units (a skinned mesh
    /// posed by its skeleton), or of the joints when there is no mesh.
    bounds: Option<Bounds>,
    /// Longest side of `bounds`: how big the character is in the scene.
    world_size: f32,
    /// Longest side of the bind-pose box of mesh and joints (the scale metrics normalise by);
    /// differs from `world_size` when the armature is scaled above the root joint.
    size: f32,
    /// Non-fatal problems (`Character::problems`), as sentences.
    problems: Vec<String>,
    /// What the reader repaired (e.g. NaN skin weights loaded as unskinned), one line each.
    repairs: Vec<String>,
}

#[derive(Serialize)]
struct AttachmentReport {
    name: String,
    /// The joint carrying it.
    joint: String,
    vertices: usize,
    triangles: usize,
}

#[derive(Serialize)]
struct MeshReport {
    vertices: usize,
    triangles: usize,
    has_normals: bool,
    has_uvs: bool,
    parts: Vec<PartReport>,
    /// Materials (carried through by every command that writes the mesh back).
    materials: Vec<MaterialReport>,
    /// Texture images the materials use.
    images: usize,
}

#[derive(Serialize)]
struct MaterialReport {
    name: String,
    /// Linear RGBA.
    base_color: [f32; 4],
    /// Texture slots in use (base colour, metallic-roughness, normal, occlusion, emissive).
    textures: usize,
    unlit: bool,
}

#[derive(Serialize)]
struct PartReport {
    name: String,
    vertices: usize,
    triangles: usize,
    /// Index into the materials list.
    material: Option<usize>,
}

#[derive(Serialize)]
struct SkeletonReport {
    joints: usize,
    /// Names of the joints without a parent.
    roots: Vec<String>,
    /// Joints on the longest root-to-leaf chain (1 for a lone root, 0 without joints).
    depth: usize,
    /// Control joints that carry no weight by design (a ground root above the hips, IK pole
    /// targets: what `rigml rig` adds, and game rigs' root): not counted as joints without
    /// weight among the problems.
    controls: Vec<String>,
}

#[derive(Serialize)]
struct SkinReport {
    /// The influence cap the skin was read with.
    cap: usize,
    /// The most influences any vertex has.
    influences_max: usize,
    /// `influence_histogram[k]` = vertices with exactly `k` influences (`[0]` = unskinned).
    influence_histogram: Vec<usize>,
    unskinned: usize,
}

#[derive(Serialize)]
struct ClipReport {
    name: String,
    /// First and last key time in seconds.
    start: f32,
    duration: f32,
    /// Keys on the longest channel.
    keys: usize,
    channels: usize,
    /// Distinct joints the clip animates.
    joints_animated: usize,
}

#[derive(Serialize)]
struct Bounds {
    /// `"mesh"` or `"joints"`: what the box encloses.
    of: &'static str,
    min: [f32; 3],
    max: [f32; 3],
    extent: [f32; 3],
}

/// Load the file and describe it, as text or JSON.
pub fn run(args: &Args) -> Result<String> {
    let format = Format::from_path(&args.file)?;
    let loaded = rigml_io::load_with_warnings(&args.file)?;
    let mut report = Report::new(&args.file.display().to_string(), format, &loaded.character);
    report.repairs = loaded.warnings;
    if args.json {
        Ok(serde_json::to_string_pretty(&report)? + "\n")
    } else {
        Ok(report.text())
    }
}

/// Short lower-case name of a format, as users type the extension.
pub fn format_name(format: Format) -> &'static str {
    match format {
        Format::Gltf => "gltf",
        Format::Glb => "glb",
        Format::Fbx => "fbx",
        Format::Obj => "obj",
        Format::Bvh => "bvh",
        Format::RigNet => "rignet",
        Format::MakeHuman => "makehuman",
        Format::Alembic => "abc",
    }
}

impl Report {
    fn new(file: &str, format: Format, c: &Character) -> Report {
        let mesh = &c.mesh;
        let controls = weightless_controls(c);
        let problems = problems(c, controls.len());
        let world = bounds(c);
        Report {
            file: file.to_string(),
            format: format_name(format),
            name: c.name.clone(),
            mesh: MeshReport {
                vertices: mesh.vertex_count(),
                triangles: mesh.triangle_count(),
                has_normals: !mesh.normals.is_empty(),
                has_uvs: !mesh.uvs.is_empty(),
                parts: if mesh.is_empty() {
                    Vec::new()
                } else {
                    mesh.parts_or_whole()
                        .into_iter()
                        .map(|p| PartReport {
                            name: p.name,
                            vertices: p.vertices.len(),
                            triangles: p.triangles.len(),
                            material: p.material,
                        })
                        .collect()
                },
                materials: mesh
                    .materials
                    .iter()
                    .map(|m| MaterialReport {
                        name: m.name.clone(),
                        base_color: m.base_color,
                        textures: m.textures().count(),
                        unlit: m.unlit,
                    })
                    .collect(),
                images: mesh.images.len(),
            },
            skeleton: SkeletonReport {
                joints: c.skeleton.joint_count(),
                roots: (0..c.skeleton.joint_count())
                    .filter(|&j| c.skeleton.parents.get(j).copied().flatten().is_none())
                    .filter_map(|j| c.skeleton.names.get(j).cloned())
                    .collect(),
                depth: depth(&c.skeleton),
                controls,
            },
            skin: c.skin.as_ref().map(|skin| SkinReport {
                cap: skin.max_influences(),
                influences_max: skin.influences_max(),
                influence_histogram: skin.influence_histogram(),
                unskinned: skin.unskinned_count(),
            }),
            attachments: c
                .attachments
                .iter()
                .map(|a| AttachmentReport {
                    name: a.name.clone(),
                    joint: c.skeleton.names.get(a.joint).cloned().unwrap_or_default(),
                    vertices: a.mesh.vertex_count(),
                    triangles: a.mesh.triangle_count(),
                })
                .collect(),
            clips: c
                .clips
                .iter()
                .map(|clip| {
                    let mut joints: Vec<usize> = clip.channels.iter().map(|ch| ch.joint).collect();
                    joints.sort_unstable();
                    joints.dedup();
                    ClipReport {
                        name: clip.name.clone(),
                        start: clip.start(),
                        duration: clip.duration(),
                        keys: clip.key_count(),
                        channels: clip.channels.len(),
                        joints_animated: joints.len(),
                    }
                })
                .collect(),
            world_size: world.as_ref().map_or(1.0, |b| {
                let side = b.extent.iter().fold(0.0f32, |m, &e| m.max(e));
                if side > 0.0 && side.is_finite() {
                    side
                } else {
                    c.size()
                }
            }),
            bounds: world,
            size: c.size(),
            problems,
            repairs: Vec::new(),
        }
    }

    /// The human-readable report.
    fn text(&self) -> String {
        let mut s = String::new();
        // Writing into a String cannot fail; the results are ignored for that reason.
        let _ = writeln!(s, "file       {} ({})", self.file, self.format);
        if !self.name.is_empty() {
            let _ = writeln!(s, "name       {}", self.name);
        }
        let m = &self.mesh;
        let attributes: Vec<&str> = [(m.has_normals, "normals"), (m.has_uvs, "uvs")]
            .iter()
            .filter(|(has, _)| *has)
            .map(|(_, name)| *name)
            .collect();
        let _ = writeln!(
            s,
            "mesh       {} vertices, {} triangles, {} parts{}",
            m.vertices,
            m.triangles,
            m.parts.len(),
            if attributes.is_empty() {
                String::new()
            } else {
                format!(" (with {})", attributes.join(", "))
            }
        );
        for (i, p) in m.parts.iter().take(PARTS_SHOWN).enumerate() {
            let name = if p.name.is_empty() { "(unnamed)" } else { &p.name };
            let _ = writeln!(
                s,
                "  part {i:<3} {name}: {} vertices, {} triangles",
                p.vertices, p.triangles
            );
        }
        if m.parts.len() > PARTS_SHOWN {
            let _ = writeln!(s, "  … {} more parts (--json lists all)", m.parts.len() - PARTS_SHOWN);
        }
        if !m.materials.is_empty() {
            let textured = m.materials.iter().filter(|x| x.textures > 0).count();
            let _ = writeln!(
                s,
                "materials  {} ({textured} textured, {} images)",
                m.materials.len(),
                m.images
            );
        }
        if !self.attachments.is_empty() {
            let _ = writeln!(s, "attached   {} meshes carried by joints", self.attachments.len());
            for a in self.attachments.iter().take(PARTS_SHOWN) {
                let _ = writeln!(s, "  {} on {}: {} vertices", a.name, a.joint, a.vertices);
            }
            if self.attachments.len() > PARTS_SHOWN {
                let _ = writeln!(
                    s,
                    "  … {} more (--json lists all)",
                    self.attachments.len() - PARTS_SHOWN
                );
            }
        }
        match &self.bounds {
            Some(b) => {
                let _ = writeln!(
                    s,
                    "bounds     {} min {} max {}, extent {} (size {:.4})",
                    b.of,
                    vec3(b.min),
                    vec3(b.max),
                    vec3(b.extent),
                    self.world_size
                );
                if (self.world_size - self.size).abs() > 0.01 * self.world_size.max(self.size) {
                    let _ = writeln!(
                        s,
                        "           bind-pose size {:.4} (the rest pose makes the mesh {:.1}x that; metrics normalise by the bind-pose size)",
                        self.size,
                        self.world_size / self.size
                    );
                }
            }
            None => {
                let _ = writeln!(s, "bounds     none (no vertices, no joints)");
            }
        }
        let k = &self.skeleton;
        let _ = writeln!(
            s,
            "skeleton   {} joints, depth {}, {} root{}: {}",
            k.joints,
            k.depth,
            k.roots.len(),
            if k.roots.len() == 1 { "" } else { "s" },
            abbreviate(&k.roots)
        );
        if !k.controls.is_empty() {
            let _ = writeln!(
                s,
                "  control joints without weight (by design): {}",
                abbreviate(&k.controls)
            );
        }
        match &self.skin {
            Some(skin) => {
                let histogram: Vec<String> = skin
                    .influence_histogram
                    .iter()
                    .enumerate()
                    .skip(1)
                    .filter(|(_, &n)| n > 0)
                    .map(|(k, n)| format!("{k}: {n}"))
                    .collect();
                let _ = writeln!(
                    s,
                    "skin       up to {} influences per vertex (cap {}), {} unskinned",
                    skin.influences_max, skin.cap, skin.unskinned
                );
                let _ = writeln!(s, "  vertices by influence count: {}", histogram.join(", "));
            }
            None => {
                let _ = writeln!(s, "skin       none");
            }
        }
        let _ = writeln!(s, "clips      {}", self.clips.len());
        for c in &self.clips {
            let name = if c.name.is_empty() { "(unnamed)" } else { &c.name };
            let _ = writeln!(
                s,
                "  {name}: {:.3} s (keys {:.3} to {:.3} s, {} on the longest channel), {} channels on {} joints",
                c.duration - c.start,
                c.start,
                c.duration,
                c.keys,
                c.channels,
                c.joints_animated
            );
        }
        if self.problems.is_empty() {
            let _ = writeln!(s, "problems   none found");
        } else {
            let _ = writeln!(s, "problems   {} found", self.problems.len());
            for p in &self.problems {
                let _ = writeln!(s, "  - {p}");
            }
        }
        if !self.repairs.is_empty() {
            let _ = writeln!(s, "repairs    {} made while reading", self.repairs.len());
            for r in &self.repairs {
                let _ = writeln!(s, "  - {r}");
            }
        }
        s
    }
}

/// Names of the control joints (`rigml_rig::controls`: a ground root, IK pole targets) that no
/// vertex is weighted to; all of them when the file has no skin.
fn weightless_controls(c: &Character) -> Vec<String> {
    let joints = c.skeleton.joint_count();
    let used = c
        .skin
        .as_ref()
        .map_or_else(|| vec![false; joints], |s| s.joints_used(joints));
    rigml_rig::controls(&c.skeleton)
        .into_iter()
        .zip(&c.skeleton.names)
        .zip(used)
        .filter(|((control, _), used)| *control && !used)
        .map(|((_, name), _)| name.clone())
        .collect()
}

/// `Character::problems` as sentences, the `controls` weightless control joints not counted
/// as joints without weight (they are listed in the skeleton's report instead).
fn problems(c: &Character, controls: usize) -> Vec<String> {
    c.problems()
        .into_iter()
        .filter_map(|p| match p {
            Problem::UnusedJoints { count } if c.skin.is_some() => {
                let count = count.saturating_sub(controls);
                (count > 0).then_some(Problem::UnusedJoints { count })
            }
            other => Some(other),
        })
        .map(|p| p.to_string())
        .collect()
}

/// Joints on the longest root-to-leaf chain. Parents come first (a validated skeleton), so
/// one pass suffices; a parent index that is not earlier is treated as a root.
fn depth(skeleton: &Skeleton) -> usize {
    let mut depth: Vec<usize> = Vec::with_capacity(skeleton.joint_count());
    for (j, parent) in skeleton.parents.iter().enumerate() {
        let d = match parent {
            Some(p) if *p < j => depth.get(*p).copied().unwrap_or(0) + 1,
            _ => 1,
        };
        depth.push(d);
    }
    depth.into_iter().max().unwrap_or(0)
}

/// The box around the character as it stands in its rest pose, in world units: a skinned mesh
/// is posed by its skeleton (an armature scaled ×100 above the root, as many Blender exports
/// are, scales the mesh too), other meshes as stored; without a mesh, the joints.
fn bounds(c: &Character) -> Option<Bounds> {
    let posed = c.skin.as_ref().and_then(|skin| {
        let matrices = rigml_core::skinning_matrices(&c.skeleton, &rigml_core::Pose::rest(&c.skeleton)).ok()?;
        let points = rigml_core::lbs(&c.mesh.positions, skin, &matrices);
        let first = *points.first()?;
        Some(
            points
                .iter()
                .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p))),
        )
    });
    let (of, (lo, hi)) = match posed.or_else(|| c.mesh.bounds()) {
        Some(b) => ("mesh", b),
        None => {
            let points = c.skeleton.bind_positions();
            let first = *points.first()?;
            let b = points
                .iter()
                .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p)));
            ("joints", b)
        }
    };
    Some(Bounds {
        of,
        min: lo.to_array(),
        max: hi.to_array(),
        extent: (hi - lo).to_array(),
    })
}

fn vec3(v: [f32; 3]) -> String {
    format!("({:.4}, {:.4}, {:.4})", v[0], v[1], v[2])
}

fn abbreviate(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", … ({} more)", names.len() - SHOWN));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_of_the_demo_character() {
        let c = rigml_geom::procedural::demo_humanoid().unwrap();
        let r = Report::new("demo.glb", Format::Glb, &c);
        assert_eq!(r.mesh.vertices, c.mesh.vertex_count());
        assert_eq!(r.skeleton.roots, vec!["hips".to_string()]);
        // hips, spine, chest, shoulder, upper arm, lower arm, hand.
        assert_eq!(r.skeleton.depth, 7);
        let skin = r.skin.as_ref().unwrap();
        assert_eq!(skin.influence_histogram.iter().sum::<usize>(), c.mesh.vertex_count());
        assert_eq!(skin.influence_histogram[0], 0);
        assert_eq!(r.clips[0].joints_animated, 13);
        let text = r.text();
        assert!(text.contains("21 joints, depth 7, 1 root: hips"), "{text}");
        assert!(text.contains("problems   none found"), "{text}");
        assert_eq!(r.bounds.as_ref().unwrap().of, "mesh");
    }

    #[test]
    fn skeleton_only_files_are_bounded_by_their_joints() {
        let mut c = rigml_geom::procedural::demo_humanoid().unwrap();
        c.mesh = Default::default();
        c.skin = None;
        let r = Report::new("walk.bvh", Format::Bvh, &c);
        assert!(r.mesh.parts.is_empty());
        let b = r.bounds.as_ref().unwrap();
        assert_eq!(b.of, "joints");
        // Joints span from the hips' children to the hands, not the surface.
        assert!(b.extent[1] > 1.0 && b.extent[1] < 1.8, "{:?}", b.extent);
        let text = r.text();
        assert!(text.contains("mesh       0 vertices, 0 triangles, 0 parts"), "{text}");
        assert!(text.contains("skin       none"), "{text}");
        assert!(Report::new("empty.obj", Format::Obj, &Character::default())
            .bounds
            .is_none());
    }

    #[test]
    fn depth_of_chains_and_forests() {
        let mut s = Skeleton::default();
        assert_eq!(depth(&s), 0);
        s.parents = vec![None, Some(0), Some(1), None, Some(3)];
        assert_eq!(depth(&s), 3);
    }
}
