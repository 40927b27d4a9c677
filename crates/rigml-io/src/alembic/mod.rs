//! Alembic (Ogawa) mesh caches, read as a [`Sequence`]: the animated mesh a VFX pipeline
//! exchanges (Dem Bones' `Bone_Anim.abc`), one frame per sample.
//!
//! # What is read
//!
//! - The Ogawa container (submodule `ogawa`) and AbcCoreOgawa's archive layout on it (`schema`,
//!   `samples`, `time`): objects, compound / scalar / array properties, repeated samples, time
//!   samplings, indexed metadata.
//! - The first PolyMesh object (schema `AbcGeom_PolyMesh_v1`; a SubD's control cage,
//!   `AbcGeom_SubD_v1`, is read the same way) whose `P` changes over time, in depth-first
//!   file order: every sample of `P`, and `.faceCounts` / `.faceIndices`. Polygons are
//!   triangulated as a fan from their first corner, and turned from Alembic's clockwise winding
//!   to the counter-clockwise winding rigml uses (a quad `a b c d` gives `a d c`, `a c b`), as
//!   Blender's importer and Maya's FBX export of the same mesh wind them (`mesh`).
//! - The Xform objects above it (`.xform/.ops`, `.vals`, `.inherits`): their matrices (scale,
//!   translate, axis-angle and single-axis rotations in degrees, 4×4 matrices, composed in op
//!   order) are applied to every frame. An animated Xform is applied per frame, with its sample
//!   nearest in time to the frame's (`xform`).
//! - The time sampling of `P`: frame times in seconds, and the sequence's frame rate (none for
//!   the default sampling 0, which has no time base).
//!
//! Positions are kept in the file's units and axes (Alembic has no unit; Maya writes
//! centimetres, Y up), as Blender's importer does before its Y-up → Z-up turn.
//!
//! # What is not read, or refused
//!
//! Normals, UVs, velocities, face sets, user properties, bounds, visibility, and every other
//! object (cameras, curves, points, NuPatches, other meshes) are not read; other animated
//! meshes are reported in [`AbcSequence::warnings`]. Faces with fewer than three corners are
//! left out (with a warning). These are refused with an error naming the object and property:
//! HDF5 archives (Alembic before 1.5: "HDF5 Alembic is not supported; re-export as Ogawa");
//! Ogawa files the writer did not finish; archive versions other than 0; files without a
//! PolyMesh whose `P` changes; topology that changes over time (`.faceCounts`,
//! `.faceIndices` or the vertex count); face indices out of range; non-finite positions or
//! transform values; `.ops` or `.inherits` that change over time; and a sample count whose
//! frames would take more than 16 times the file's size in memory. Every offset, count and
//! size is checked against the file, so no input makes the reader panic or allocate more than
//! the file justifies.

mod mesh;
mod ogawa;
mod samples;
mod schema;
mod time;
mod xform;

use crate::error::read_file;
use crate::IoError;
use rigml_core::Sequence;
use schema::{metadata_value, Archive, ObjectHeader};
use std::collections::HashSet;
use std::path::Path;

/// Deepest object nesting read (real files have a handful of levels).
const MAX_DEPTH: usize = 4096;

/// A mesh sequence read from an Alembic file.
#[derive(Debug, Clone)]
pub struct AbcSequence {
    /// One frame per sample of `P`, named after the file; `fps` from the time sampling.
    pub sequence: Sequence,
    /// The object read, as a full Alembic path (`/Bone/BoneShape`).
    pub object: String,
    /// Time of each frame in seconds.
    pub times: Vec<f64>,
    /// What was left out: other animated meshes, faces with fewer than three corners.
    pub warnings: Vec<String>,
}

/// Read the first animated PolyMesh of an Alembic file as a sequence (see the module docs).
pub fn read(path: &Path) -> Result<AbcSequence, IoError> {
    read_bytes(&read_file(path)?, path)
}

/// [`read`] on bytes already in memory; `path` names the file in errors and names the sequence.
pub fn read_bytes(bytes: &[u8], path: &Path) -> Result<AbcSequence, IoError> {
    let mut out = parse(bytes).map_err(|m| IoError::parse(path, m))?;
    out.sequence.name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.sequence.validate().map_err(|e| IoError::invalid(path, e))?;
    Ok(out)
}

/// An object found walking the archive, in depth-first order (parents before children).
struct Node {
    /// The object's name (empty for the top object).
    name: String,
    parent: Option<usize>,
    /// The object's property compound group.
    properties: u64,
    schema: String,
}

/// The full Alembic path of object `i` (`/Bone/BoneShape`), built only when needed: storing
/// every object's full path would copy long names into every descendant.
fn path(nodes: &[Node], i: usize) -> String {
    let mut names = Vec::new();
    let mut at = Some(i);
    while let Some(k) = at {
        if nodes[k].parent.is_some() {
            names.push(nodes[k].name.as_str());
        }
        at = nodes[k].parent;
    }
    if names.is_empty() {
        return "/".into();
    }
    names.iter().rev().map(|n| format!("/{n}")).collect()
}

/// At most this many objects are named in one message.
const NAMED: usize = 5;

fn parse(bytes: &[u8]) -> Result<AbcSequence, String> {
    let archive = Archive::open(bytes)?;
    let nodes = walk(&archive)?;
    let mut chosen = None;
    let (mut statics, mut others) = (Vec::new(), Vec::new());
    for (i, node) in nodes.iter().enumerate() {
        if !is_mesh(&node.schema) {
            continue;
        }
        let p = mesh::positions(&archive, node).map_err(|e| format!("object {}: {e}", path(&nodes, i)))?;
        match (p.is_animated(), chosen) {
            (true, None) => chosen = Some(i),
            (true, Some(_)) => others.push(i),
            (false, _) => statics.push(i),
        }
    }
    let names = |list: &[usize]| {
        let mut text = list
            .iter()
            .take(NAMED)
            .map(|&i| path(&nodes, i))
            .collect::<Vec<_>>()
            .join(", ");
        if list.len() > NAMED {
            text += &format!(" and {} more", list.len() - NAMED);
        }
        text
    };
    let Some(chosen) = chosen else {
        return Err(if statics.is_empty() {
            "no PolyMesh object: nothing to read as a mesh sequence".to_string()
        } else {
            format!(
                "no animated PolyMesh: {} static mesh(es) ({}); a sequence needs P to change over time",
                statics.len(),
                names(&statics)
            )
        });
    };
    let mut out = mesh::read(&archive, &nodes, chosen).map_err(|e| format!("object {}: {e}", path(&nodes, chosen)))?;
    if !others.is_empty() {
        out.warnings.push(format!(
            "{} other animated mesh(es) left out ({}): rigml reads the first",
            others.len(),
            names(&others)
        ));
    }
    Ok(out)
}

fn is_mesh(schema: &str) -> bool {
    schema == "AbcGeom_PolyMesh_v1" || schema == "AbcGeom_SubD_v1"
}

/// Every object, depth first in file order. A group reached twice (a cycle, or an object
/// shared by two parents, which AbcCoreOgawa never writes) is an error, so the walk is linear
/// in the file.
fn walk(archive: &Archive) -> Result<Vec<Node>, String> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut seen = HashSet::from([archive.top]);
    // Objects still to visit: parent, header (name, metadata, group), depth.
    let top = ObjectHeader {
        name: String::new(),
        metadata: String::new(),
        group: archive.top,
    };
    let mut stack = vec![(None, top, 0usize)];
    while let Some((parent, header, depth)) = stack.pop() {
        let i = nodes.len();
        nodes.push(Node {
            name: header.name,
            parent,
            properties: 0,
            schema: metadata_value(&header.metadata, "schema").unwrap_or("").to_string(),
        });
        let object = archive
            .object(header.group)
            .map_err(|e| format!("object {}: {e}", path(&nodes, i)))?;
        nodes[i].properties = object.properties;
        for child in object.children.into_iter().rev() {
            if child.group != 0 && !seen.insert(child.group) {
                return Err(format!(
                    "object {}: its child {:?} (group at byte {}) is reached twice: a cycle or a shared object",
                    path(&nodes, i),
                    child.name,
                    child.group
                ));
            }
            if depth + 1 > MAX_DEPTH {
                return Err(format!(
                    "object {}: nested more than {MAX_DEPTH} levels deep",
                    path(&nodes, i)
                ));
            }
            stack.push((Some(i), child, depth + 1));
        }
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests;
