//! numpy arrays ⇄ rigml's types, with every shape, range and finiteness checked so that bad
//! input is a `ValueError` naming the argument, never a panic.

use numpy::ndarray::{Array2, ArrayView2};
use numpy::{Element, IntoPyArray, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rigml_core::glam::{Mat4, Vec3};
use rigml_core::{Skeleton, Skin, Transform};

fn bad(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// A row-major `(len / cols, cols)` numpy array.
pub fn array2<T: Element>(py: Python<'_>, flat: Vec<T>, cols: usize) -> PyResult<Bound<'_, PyArray2<T>>> {
    let rows = flat.len().checked_div(cols).unwrap_or(0);
    let array = Array2::from_shape_vec((rows, cols), flat).map_err(|e| bad(e.to_string()))?;
    Ok(array.into_pyarray(py))
}

/// Points from an `(n, 3)` array, all finite.
pub fn vec3s_from(a: &ArrayView2<'_, f32>, what: &str) -> PyResult<Vec<Vec3>> {
    if a.ncols() != 3 {
        return Err(bad(format!("{what}: expected shape (n, 3), got {:?}", a.shape())));
    }
    let points: Vec<Vec3> = a.rows().into_iter().map(|r| Vec3::new(r[0], r[1], r[2])).collect();
    if let Some(i) = points.iter().position(|p| !p.is_finite()) {
        return Err(bad(format!("{what}[{i}]: not finite ({:?})", points[i].to_array())));
    }
    Ok(points)
}

/// Triangles from an `(m, 3)` integer array, every index in `0..vertices`.
pub fn triangles_from(a: &ArrayView2<'_, i64>, vertices: usize) -> PyResult<Vec<[u32; 3]>> {
    if a.ncols() != 3 {
        return Err(bad(format!("triangles: expected shape (m, 3), got {:?}", a.shape())));
    }
    a.rows()
        .into_iter()
        .enumerate()
        .map(|(t, r)| {
            let mut tri = [0u32; 3];
            for (k, &i) in r.iter().enumerate() {
                if i < 0 || i as u64 >= vertices as u64 {
                    return Err(bad(format!(
                        "triangles[{t}][{k}]: vertex {i} does not exist ({vertices} vertices)"
                    )));
                }
                tri[k] = i as u32;
            }
            Ok(tri)
        })
        .collect()
}

/// A skeleton given as the caller lists it (any order, parents as indices, -1 for roots,
/// joint positions in model space), put in rigml's parents-first order.
pub struct Joints {
    pub skeleton: Skeleton,
    /// For each of the caller's joints, its index in `skeleton`.
    pub to_rigml: Vec<usize>,
    /// For each joint of `skeleton`, the caller's index.
    pub to_caller: Vec<usize>,
}

impl Joints {
    /// A per-joint list of the caller's, in `skeleton`'s order.
    pub fn reorder<T: Clone>(&self, values: Option<Vec<T>>, what: &str) -> PyResult<Option<Vec<T>>> {
        match values {
            None => Ok(None),
            Some(v) if v.len() != self.to_caller.len() => Err(bad(format!(
                "{what}: {} values for {} joints",
                v.len(),
                self.to_caller.len()
            ))),
            Some(v) => Ok(Some(self.to_caller.iter().map(|&c| v[c].clone()).collect())),
        }
    }
}

/// The skeleton of joints at `heads` (bind pose = rest pose, no rotation: only positions
/// matter to skin weights).
pub fn skeleton_from_arrays(names: Vec<String>, parents: &[i64], heads: &[Vec3]) -> PyResult<Joints> {
    let n = names.len();
    if parents.len() != n || heads.len() != n {
        return Err(bad(format!(
            "skeleton: {n} joint names, {} parents, {} joint positions",
            parents.len(),
            heads.len()
        )));
    }
    if n == 0 {
        return Err(bad("skeleton: no joints".into()));
    }
    let parents: Vec<Option<usize>> = parents
        .iter()
        .enumerate()
        .map(|(j, &p)| match p {
            -1 => Ok(None),
            p if p >= 0 && (p as usize) < n && p as usize != j => Ok(Some(p as usize)),
            p => Err(bad(format!(
                "parents[{j}] ({}): {p} is not -1 or another joint's index",
                names[j]
            ))),
        })
        .collect::<PyResult<_>>()?;
    let rest_local: Vec<Transform> = (0..n)
        .map(|j| Transform::from_translation(heads[j] - parents[j].map_or(Vec3::ZERO, |p| heads[p])))
        .collect();
    let inverse_bind: Vec<Mat4> = heads.iter().map(|&h| Mat4::from_translation(-h)).collect();
    let (skeleton, to_rigml) = Skeleton::from_unordered(names, parents, rest_local, inverse_bind)
        .map_err(|e| bad(format!("skeleton: {e}")))?;
    skeleton.validate().map_err(|e| bad(format!("skeleton: {e}")))?;
    let mut to_caller = vec![0; n];
    for (caller, &r) in to_rigml.iter().enumerate() {
        to_caller[r] = caller;
    }
    Ok(Joints {
        skeleton,
        to_rigml,
        to_caller,
    })
}

/// Raw weight rows from padded `(n, k)` joint and weight arrays (joint -1 or weight 0: an unused
/// slot), not normalised. `joint_map` turns the caller's joint indices into rigml's.
pub fn rows_from_padded(
    what: &str,
    joints: &ArrayView2<'_, i64>,
    weights: &ArrayView2<'_, f32>,
    vertices: usize,
    joint_map: &[usize],
) -> PyResult<Vec<Vec<(u32, f32)>>> {
    if joints.shape() != weights.shape() || joints.nrows() != vertices {
        return Err(bad(format!(
            "{what}: joints {:?} and weights {:?} must both be ({vertices}, k)",
            joints.shape(),
            weights.shape()
        )));
    }
    let mut rows = Vec::with_capacity(vertices);
    for (v, (js, ws)) in joints.rows().into_iter().zip(weights.rows()).enumerate() {
        let mut row = Vec::new();
        for (&j, &w) in js.iter().zip(ws.iter()) {
            if j == -1 || w == 0.0 {
                continue;
            }
            let Some(&mapped) = usize::try_from(j).ok().and_then(|j| joint_map.get(j)) else {
                return Err(bad(format!("{what}: vertex {v}: joint {j} does not exist")));
            };
            if !w.is_finite() || w < 0.0 {
                return Err(bad(format!(
                    "{what}: vertex {v}: weight {w} is not a finite weight >= 0"
                )));
            }
            row.push((mapped as u32, w));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// A skin as padded `(n, k)` int32 joints (-1 unused) and float32 weights (0 unused), joints
/// numbered by `joint_map` (the skin's index → the caller's).
#[allow(clippy::type_complexity)]
pub fn skin_to_padded<'py>(
    py: Python<'py>,
    skin: &Skin,
    joint_map: Option<&[usize]>,
) -> PyResult<(Bound<'py, PyArray2<i32>>, Bound<'py, PyArray2<f32>>)> {
    let k = skin.influences_max().max(1);
    let n = skin.vertex_count();
    let mut joints = vec![-1i32; n * k];
    let mut weights = vec![0f32; n * k];
    for (v, row) in skin.rows().enumerate() {
        for (slot, i) in row.iter().enumerate() {
            let j = joint_map.map_or(i.joint as usize, |m| m[i.joint as usize]);
            joints[v * k + slot] = j as i32;
            weights[v * k + slot] = i.weight;
        }
    }
    Ok((array2(py, joints, k)?, array2(py, weights, k)?))
}
