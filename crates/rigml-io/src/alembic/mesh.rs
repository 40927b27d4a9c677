//! The chosen PolyMesh: topology from `.faceCounts` / `.faceIndices`, every sample of `P`, the
//! parent Xforms applied, frame times and rate.

use super::schema::{f32s, i32s, Archive, Compound, Kind, Pod, Property, Samples};
use super::{path, xform, AbcSequence, Node};
use glam::{DMat4, Vec3};
use rigml_core::Sequence;

/// The frames may take at most this many times the file's size in memory (samples after the
/// last change repeat without taking space in the file).
const MAX_EXPANSION: u64 = 16;

/// The mesh's `.geom` compound.
fn geom(archive: &Archive, node: &Node) -> Result<Compound, String> {
    let props = archive.compound(node.properties, "")?;
    let geom = props
        .get(".geom")
        .ok_or("mesh schema without a .geom compound property")?;
    archive.sub_compound(geom)
}

/// The header of the mesh's `P`, checked to be an array of float triples.
pub(super) fn positions(archive: &Archive, node: &Node) -> Result<Property, String> {
    let geom = geom(archive, node)?;
    let p = geom.get("P").ok_or("mesh without P (positions)")?;
    p.expect(Kind::Array, Pod::F32, Some(3))?;
    Ok(p.clone())
}

/// Read the chosen mesh: topology, every frame, parent transforms, times.
pub(super) fn read(archive: &Archive, nodes: &[Node], index: usize) -> Result<AbcSequence, String> {
    let node = &nodes[index];
    let geom = geom(archive, node)?;
    let p = geom.get("P").ok_or("mesh without P (positions)")?;
    let counts = geom.get(".faceCounts").ok_or("mesh without .faceCounts")?;
    let indices = geom.get(".faceIndices").ok_or("mesh without .faceIndices")?;
    counts.expect(Kind::Array, Pod::I32, Some(1))?;
    indices.expect(Kind::Array, Pod::I32, Some(1))?;
    let mut warnings = Vec::new();

    let positions = archive.samples(p)?;
    let mut raw = decode_positions(&positions, 0)?;
    let vertex_count = raw.len();
    if vertex_count == 0 {
        return Err(format!("property {} sample 0: no vertices", p.path));
    }
    let frame_count = p.num_samples as usize;
    // Per frame: its points and a vector header (and a time).
    let frame_bytes = vertex_count as u64 * 12 + 32;
    let budget = MAX_EXPANSION.saturating_mul(archive.ogawa.len());
    if (frame_count as u64).saturating_mul(frame_bytes) > budget {
        return Err(format!(
            "property {}: {frame_count} samples of {vertex_count} vertices would take more than \
             {MAX_EXPANSION} times the file's size in memory",
            p.path
        ));
    }
    let triangles = topology(archive, counts, indices, vertex_count, &mut warnings)?;
    let sampling = &archive.time_samplings[p.time_sampling];
    let times = (0..frame_count)
        .map(|i| sampling.time(i))
        .collect::<Option<Vec<f64>>>()
        .ok_or(format!(
            "property {}: its time sampling lists {} times for {frame_count} samples",
            p.path,
            sampling.times.len()
        ))?;
    let chain = xform::chain(archive, nodes, index)?;
    let mut frames: Vec<Vec<Vec3>> = Vec::with_capacity(frame_count);
    let mut last_stored = 0;
    for (i, &t) in times.iter().enumerate() {
        // Samples that repeat a stored one (before the first change, after the last) are
        // decoded once.
        let stored = p.stored_index(i as u32);
        if stored != last_stored {
            raw = decode_positions(&positions, i as u32)?;
            last_stored = stored;
            if raw.len() != vertex_count {
                return Err(format!(
                    "property {} sample {i}: {} vertices, sample 0 has {vertex_count}: the topology must not change",
                    p.path,
                    raw.len()
                ));
            }
        }
        let mut frame = raw.clone();
        let m = chain.at(t, nodes)?;
        if m != DMat4::IDENTITY {
            for v in &mut frame {
                *v = m.transform_point3(v.as_dvec3()).as_vec3();
            }
            if frame.iter().any(|v| !v.is_finite()) {
                return Err(format!("frame {i}: a transformed position is not finite"));
            }
        }
        frames.push(frame);
    }
    let fps = match p.time_sampling {
        0 => None,
        _ if sampling.is_uniform() => Some(1.0 / sampling.time_per_cycle),
        _ => match (times.first(), times.last()) {
            (Some(a), Some(b)) if b > a => Some((times.len() - 1) as f64 / (b - a)),
            _ => None,
        },
    };
    Ok(AbcSequence {
        sequence: Sequence {
            name: String::new(),
            triangles,
            frames,
            fps: fps.map(|f| f as f32).filter(|f| f.is_finite() && *f > 0.0),
        },
        object: path(nodes, index),
        times,
        warnings,
    })
}

/// Sample `i` of `P` as points, each checked to be finite.
fn decode_positions(positions: &Samples, i: u32) -> Result<Vec<Vec3>, String> {
    let p = &positions.property;
    let bytes = positions.array(i)?;
    let values: Vec<f32> = f32s(bytes).collect();
    let points: Vec<Vec3> = values.chunks_exact(3).map(Vec3::from_slice).collect();
    if let Some(v) = points.iter().position(|v| !v.is_finite()) {
        return Err(format!("property {} sample {i}: vertex {v} is not finite", p.path));
    }
    Ok(points)
}

/// The triangles of `.faceCounts` / `.faceIndices` (sample 0, checked to stay the same in
/// every stored sample): fans from each face's first corner, turned counter-clockwise.
fn topology(
    archive: &Archive,
    counts: &Property,
    indices: &Property,
    vertex_count: usize,
    warnings: &mut Vec<String>,
) -> Result<Vec<[u32; 3]>, String> {
    let mut samples = Vec::new();
    for prop in [counts, indices] {
        if prop.num_samples == 0 {
            return Err(format!("property {}: no samples", prop.path));
        }
        let samples_of = archive.samples(prop)?;
        let first = samples_of.array(0)?;
        for i in prop.first_changed.max(1)..=prop.last_changed {
            if samples_of.array(i)? != first {
                return Err(format!(
                    "property {} sample {i}: the topology changes over time; a sequence needs one topology",
                    prop.path
                ));
            }
        }
        samples.push(first);
    }
    let counts_values: Vec<i32> = i32s(samples[0]).collect();
    let index_values: Vec<i32> = i32s(samples[1]).collect();
    let mut total = 0usize;
    for (f, &c) in counts_values.iter().enumerate() {
        if c < 0 {
            return Err(format!("property {}: face {f} has {c} corners", counts.path));
        }
        total += c as usize;
    }
    if total != index_values.len() {
        return Err(format!(
            "property {}: face counts add up to {total} corners, {} holds {}",
            counts.path,
            indices.path,
            index_values.len()
        ));
    }
    if let Some(k) = index_values.iter().position(|&v| v < 0 || v as usize >= vertex_count) {
        return Err(format!(
            "property {}: corner {k} names vertex {}, P has {vertex_count}",
            indices.path, index_values[k]
        ));
    }
    let mut triangles = Vec::with_capacity(total.saturating_sub(2 * counts_values.len()));
    let (mut start, mut skipped) = (0usize, 0usize);
    for &c in &counts_values {
        let face = &index_values[start..start + c as usize];
        start += c as usize;
        if face.len() < 3 {
            skipped += 1;
            continue;
        }
        for k in 1..face.len() - 1 {
            triangles.push([face[0] as u32, face[k + 1] as u32, face[k] as u32]);
        }
    }
    if skipped > 0 {
        warnings.push(format!(
            "property {}: {skipped} face(s) with fewer than 3 corners left out",
            counts.path
        ));
    }
    Ok(triangles)
}
