//! The Xform objects above the mesh: `.xform/.ops`, `.vals` and `.inherits`, composed into the
//! matrix that takes the mesh's points to the world, per frame when a `.vals` changes.

use super::schema::{f64s, Archive, Kind, Pod, Property, Samples, TimeSampling};
use super::{path, Node};
use glam::{DMat4, DVec3};

pub(super) fn is_xform(schema: &str) -> bool {
    schema.starts_with("AbcGeom_Xform_v")
}

/// One Xform above the mesh: its op codes and where its values are.
struct Xform<'a> {
    /// The Xform's object.
    node: usize,
    ops: Vec<u8>,
    /// `.vals`: a scalar of f64 × channels, or (past 256 channels) an array of f64; with the
    /// time sampling of its samples.
    vals: Option<(Samples<'a>, TimeSampling)>,
    inherits: bool,
}

/// The Xforms from the top down to the mesh's parent.
pub(super) struct Chain<'a> {
    xforms: Vec<Xform<'a>>,
    /// The product when nothing is animated.
    constant: Option<DMat4>,
}

impl Chain<'_> {
    /// The world matrix at time `t`; errors name the Xform (objects `nodes`).
    pub(super) fn at(&self, t: f64, nodes: &[Node]) -> Result<DMat4, String> {
        if let Some(m) = self.constant {
            return Ok(m);
        }
        self.compose(Some(t))
            .map_err(|(k, e)| format!("parent Xform {}: {e}", path(nodes, k)))
    }

    /// Compose the chain at time `t` (`None`: sample 0 of each); an error comes with the
    /// object of the Xform it is in.
    fn compose(&self, t: Option<f64>) -> Result<DMat4, (usize, String)> {
        let mut world = DMat4::IDENTITY;
        for x in &self.xforms {
            let local = match &x.vals {
                None => DMat4::IDENTITY,
                Some((vals, sampling)) => {
                    let count = vals.property.num_samples as usize;
                    let i = t.map_or(0, |t| sampling.nearest_index(t, count));
                    let values = xform_values(vals, i as u32).map_err(|e| (x.node, e))?;
                    xform_matrix(&x.ops, &values).map_err(|e| (x.node, e))?
                }
            };
            world = if x.inherits { world * local } else { local };
        }
        Ok(world)
    }
}

/// The Xforms above object `index`, read and checked; their product when none is animated.
pub(super) fn chain<'a>(archive: &Archive<'a>, nodes: &[Node], index: usize) -> Result<Chain<'a>, String> {
    let mut above = Vec::new();
    let mut at = nodes[index].parent;
    while let Some(i) = at {
        above.push(i);
        at = nodes[i].parent;
    }
    let mut xforms = Vec::new();
    for &i in above.iter().rev() {
        if is_xform(&nodes[i].schema) {
            let x = read_xform(archive, nodes, i).map_err(|e| format!("parent Xform {}: {e}", path(nodes, i)))?;
            xforms.push(x);
        }
    }
    let mut chain = Chain { xforms, constant: None };
    let animated = chain
        .xforms
        .iter()
        .any(|x| x.vals.as_ref().is_some_and(|(v, _)| v.property.is_animated()));
    if !animated {
        let m = chain
            .compose(None)
            .map_err(|(k, e)| format!("parent Xform {}: {e}", path(nodes, k)))?;
        chain.constant = Some(m);
    }
    Ok(chain)
}

fn read_xform<'a>(archive: &Archive<'a>, nodes: &[Node], index: usize) -> Result<Xform<'a>, String> {
    let props = archive.compound(nodes[index].properties, "")?;
    let Some(xform) = props.get(".xform") else {
        return Err("Xform schema without a .xform compound property".into());
    };
    let xform = archive.sub_compound(xform)?;
    let constant = |p: &Property| {
        if p.is_animated() {
            Err(format!(
                "property {}: changes over time, which is not supported",
                p.path
            ))
        } else {
            Ok(())
        }
    };
    let mut ops = Vec::new();
    if let Some(p) = xform.get(".ops") {
        p.expect(Kind::Scalar, Pod::U8, None)?;
        constant(p)?;
        if p.num_samples > 0 {
            ops = archive.samples(p)?.scalar(0)?.to_vec();
        }
    }
    let mut inherits = true;
    if let Some(p) = xform.get(".inherits") {
        p.expect(Kind::Scalar, Pod::Bool, Some(1))?;
        constant(p)?;
        if p.num_samples > 0 {
            inherits = archive.samples(p)?.scalar(0)? != [0];
        }
    }
    let channels: usize = ops
        .iter()
        .map(|&op| op_channels(op).ok_or(format!("property .xform/.ops: op code {op:#04x} is not defined")))
        .sum::<Result<usize, String>>()?;
    let vals = match xform.get(".vals") {
        Some(p) if p.num_samples > 0 && channels > 0 => {
            if p.pod != Pod::F64 || p.kind == Kind::Compound {
                return Err(format!(
                    "property {}: {:?} {:?}, expected f64 values",
                    p.path, p.kind, p.pod
                ));
            }
            let samples = archive.samples(p)?;
            let values = xform_values(&samples, 0)?;
            if values.len() != channels {
                return Err(format!(
                    "property {}: {} values, the ops take {channels}",
                    p.path,
                    values.len()
                ));
            }
            Some((samples, archive.time_samplings[p.time_sampling].clone()))
        }
        // No values: every op at its default, the identity.
        _ => None,
    };
    Ok(Xform {
        node: index,
        ops,
        vals,
        inherits,
    })
}

/// Sample `i` of `.vals`, scalar or array.
fn xform_values(vals: &Samples, i: u32) -> Result<Vec<f64>, String> {
    let bytes = match vals.property.kind {
        Kind::Array => vals.array(i)?,
        _ => vals.scalar(i)?,
    };
    let values: Vec<f64> = f64s(bytes).collect();
    if values.iter().any(|v| !v.is_finite()) {
        return Err(format!(
            "property {} sample {i}: a value is not finite",
            vals.property.path
        ));
    }
    Ok(values)
}

/// Channels an Xform op takes: its type is the high nibble (the low one is a hint).
fn op_channels(op: u8) -> Option<usize> {
    match op >> 4 {
        0 | 1 => Some(3), // scale, translate
        2 => Some(4),     // rotate about an axis: axis, angle
        3 => Some(16),    // matrix
        4..=6 => Some(1), // rotate about X, Y, Z
        _ => None,
    }
}

/// The matrix of an op list with its channel values: ops compose outermost first, so
/// `translate, rotate, scale` maps a point by T·R·S (Imath's row-vector product, transposed).
fn xform_matrix(ops: &[u8], values: &[f64]) -> Result<DMat4, String> {
    let mut m = DMat4::IDENTITY;
    let mut at = 0;
    for &op in ops {
        let n = op_channels(op).ok_or(format!("op code {op:#04x} is not defined"))?;
        let c = values
            .get(at..at + n)
            .ok_or(format!("{} values, the ops take more", values.len()))?;
        at += n;
        let v3 = || DVec3::new(c[0], c[1], c[2]);
        let local = match op >> 4 {
            0 => DMat4::from_scale(v3()),
            1 => DMat4::from_translation(v3()),
            2 => {
                let axis = v3();
                if c[3] == 0.0 {
                    DMat4::IDENTITY
                } else if axis.length_squared() == 0.0 {
                    return Err(format!("rotation of {}° about a zero axis", c[3]));
                } else {
                    DMat4::from_axis_angle(axis.normalize(), c[3].to_radians())
                }
            }
            // Imath stores row-major for row vectors: the same 16 numbers are glam's columns.
            3 => DMat4::from_cols_slice(c),
            4 => DMat4::from_rotation_x(c[0].to_radians()),
            5 => DMat4::from_rotation_y(c[0].to_radians()),
            _ => DMat4::from_rotation_z(c[0].to_radians()),
        };
        m *= local;
    }
    Ok(m)
}
