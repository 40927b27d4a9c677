//! The native module `rigml._rigml` behind the Python package `rigml`: numpy arrays in and out,
//! rigml's messages raised as `ValueError`, the GIL released while solvers run, and no Rust
//! panic ever reaching Python (caught at the boundary and raised as `RuntimeError`).
//!
//! The thin Python layer (`python/rigml/__init__.py`) documents the API users see; what is here
//! converts arrays and calls the `rigml` library crate, the same front door the CLI uses.

mod convert;

use convert::{rows_from_padded, skeleton_from_arrays, skin_to_padded, triangles_from, vec3s_from};
use numpy::{AllowTypeChange, IntoPyArray, PyArray1, PyArray2, PyArrayLike2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rigml::{Character, Mesh, SkinRequest, Stage};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Instant;

/// Run `f`, turning a panic into a `RuntimeError` that names it as rigml's fault.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "rigml internal error (please report it): {message}"
            )))
        }
    }
}

/// A rigml error as the `ValueError` Python code expects from bad input.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A character: mesh, skeleton, skin weights and clips, as read from a file or made by `rig`.
#[pyclass(module = "rigml._rigml", name = "Character")]
pub struct PyCharacter {
    inner: Character,
}

#[pymethods]
impl PyCharacter {
    /// The character's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// Vertex positions, float32 (N, 3), in the file's model space (metres, Y up).
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let flat: Vec<f32> = self.inner.mesh.positions.iter().flat_map(|p| p.to_array()).collect();
        convert::array2(py, flat, 3)
    }

    /// Triangles as vertex indices, int64 (M, 3).
    #[getter]
    fn triangles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let flat: Vec<i64> = self
            .inner
            .mesh
            .triangles
            .iter()
            .flatten()
            .map(|&i| i64::from(i))
            .collect();
        convert::array2(py, flat, 3)
    }

    /// Joint names, parents first.
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.inner.skeleton.names.clone()
    }

    /// Each joint's parent index, -1 for a root, int64 (J,).
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let parents: Vec<i64> = self
            .inner
            .skeleton
            .parents
            .iter()
            .map(|p| p.map_or(-1, |p| p as i64))
            .collect();
        parents.into_pyarray(py)
    }

    /// Joint positions in the bind pose (where the mesh was skinned), float32 (J, 3).
    #[getter]
    fn joint_positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let flat: Vec<f32> = self
            .inner
            .skeleton
            .bind_positions()
            .iter()
            .flat_map(|p| p.to_array())
            .collect();
        convert::array2(py, flat, 3)
    }

    /// The skin weights as `(joints, weights)`: int32 and float32 arrays (N, K), K the widest
    /// row, unused slots joint -1 and weight 0; `None` when the character has no skin.
    #[getter]
    #[allow(clippy::type_complexity)]
    fn weights<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyArray2<i32>>, Bound<'py, PyArray2<f32>>)>> {
        self.inner
            .skin
            .as_ref()
            .map(|s| skin_to_padded(py, s, None))
            .transpose()
    }

    /// Names of the animation clips.
    #[getter]
    fn clip_names(&self) -> Vec<String> {
        self.inner.clips.iter().map(|c| c.name.clone()).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "<rigml.Character {:?}: {} vertices, {} triangles, {} joints, {}, {} clips>",
            self.inner.name,
            self.inner.mesh.vertex_count(),
            self.inner.mesh.triangles.len(),
            self.inner.skeleton.joint_count(),
            if self.inner.skin.is_some() {
                "skinned"
            } else {
                "no skin"
            },
            self.inner.clips.len()
        )
    }
}

/// The result of `skin_weights`.
#[pyclass(module = "rigml._rigml", name = "SkinResult", get_all)]
pub struct SkinResult {
    /// int32 (N, K): joint of each influence, -1 in unused slots.
    joints: Py<PyArray2<i32>>,
    /// float32 (N, K): weight of each influence, rows summing to 1 (0 for an unweighted vertex).
    weights: Py<PyArray2<f32>>,
    /// Per joint: whether it received solved weights (deforming and not locked).
    solved_joints: Vec<bool>,
    /// Vertices left without weight.
    unweighted: usize,
    /// Rows whose locked influences alone filled `max_influences` (they hold one more).
    over_cap: usize,
    /// Seconds the solve took.
    seconds: f64,
    /// The solver's name.
    method: String,
}

#[pymethods]
impl SkinResult {
    fn __repr__(&self) -> String {
        format!(
            "<rigml.SkinResult {}: {} vertices unweighted, {:.3} s>",
            self.method, self.unweighted, self.seconds
        )
    }
}

/// Read a character file (.glb, .gltf, .vrm, .fbx, .obj, .bvh, ...).
#[pyfunction]
fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyCharacter> {
    guarded(|| {
        let inner = py.detach(|| rigml::load(&path)).map_err(value_error)?;
        Ok(PyCharacter { inner })
    })
}

/// Write a character; the format follows the extension.
#[pyfunction]
#[pyo3(signature = (character, path, force = false))]
fn save(py: Python<'_>, character: &PyCharacter, path: PathBuf, force: bool) -> PyResult<()> {
    guarded(|| {
        py.detach(|| rigml::save(&character.inner, &path, rigml::SaveOptions { force }))
            .map_err(value_error)
    })
}

/// A flag that stops a solve in progress when another thread calls `cancel()` (the solve
/// releases the GIL, so a UI or a watchdog thread can).
#[pyclass(module = "rigml._rigml", name = "Cancel")]
#[derive(Default)]
struct Cancel(rigml::Cancel);

#[pymethods]
impl Cancel {
    #[new]
    fn new() -> Cancel {
        Cancel::default()
    }

    /// Ask every solve given this flag to stop (it ends with ValueError "cancelled").
    fn cancel(&self) {
        self.0.cancel();
    }

    /// Whether `cancel()` was called.
    #[getter]
    fn cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// Skin weights for a mesh bound to a skeleton (see the Python docstring).
#[pyfunction]
#[pyo3(signature = (
    vertices, triangles, joint_names, parents, joint_positions, *,
    method = "learned", max_influences = 4, deform = None, tails = None, locked = None,
    existing = None, locked_vertices = None, model = None, resolution = None, progress = None,
    cancel = None
))]
#[allow(clippy::too_many_arguments)]
fn skin_weights(
    py: Python<'_>,
    vertices: PyArrayLike2<'_, f32, AllowTypeChange>,
    triangles: PyArrayLike2<'_, i64, AllowTypeChange>,
    joint_names: Vec<String>,
    parents: Vec<i64>,
    joint_positions: PyArrayLike2<'_, f32, AllowTypeChange>,
    method: &str,
    max_influences: usize,
    deform: Option<Vec<bool>>,
    tails: Option<PyArrayLike2<'_, f32, AllowTypeChange>>,
    locked: Option<Vec<bool>>,
    existing: Option<(
        PyArrayLike2<'_, i64, AllowTypeChange>,
        PyArrayLike2<'_, f32, AllowTypeChange>,
    )>,
    locked_vertices: Option<Vec<bool>>,
    model: Option<PathBuf>,
    resolution: Option<usize>,
    progress: Option<Py<PyAny>>,
    cancel: Option<PyRef<'_, Cancel>>,
) -> PyResult<SkinResult> {
    guarded(|| {
        let positions = vec3s_from(&vertices.as_array(), "vertices")?;
        let tris = triangles_from(&triangles.as_array(), positions.len())?;
        let joint_heads = vec3s_from(&joint_positions.as_array(), "joint_positions")?;
        let joints = skeleton_from_arrays(joint_names, &parents, &joint_heads)?;
        let tails = tails.map(|t| vec3s_from(&t.as_array(), "tails")).transpose()?;
        let existing = existing
            .map(|(j, w)| {
                rows_from_padded(
                    "existing",
                    &j.as_array(),
                    &w.as_array(),
                    positions.len(),
                    &joints.to_rigml,
                )
            })
            .transpose()?;
        let mesh = Mesh {
            positions,
            triangles: tris,
            ..Mesh::default()
        };
        let request = SkinRequest {
            max_influences,
            deform: joints.reorder(deform, "deform")?,
            tails: joints.reorder(tails, "tails")?,
            existing,
            locked_joints: joints.reorder(locked, "locked")?,
            locked_vertices,
            cancel: cancel.as_ref().map(|c| c.0.clone()),
        };
        let skeleton = &joints.skeleton;
        let settings = rigml::MethodSettings {
            resolution,
            model: model.as_deref(),
        };
        let solver = rigml::solver(method, &settings).map_err(value_error)?;
        let started = Instant::now();
        let result = py.detach(|| {
            let mut hook = |stage: Stage| match &progress {
                None => true,
                Some(callback) => Python::attach(|py| {
                    let name = format!("{stage:?}").to_lowercase();
                    match callback.call1(py, (name, stage.fraction())) {
                        Ok(answer) => !answer.bind(py).is(&*pyo3::types::PyBool::new(py, false)),
                        Err(e) => {
                            e.restore(py);
                            false
                        }
                    }
                }),
            };
            rigml::skin_weights(&mesh, skeleton, solver.as_ref(), &request, &mut hook)
        });
        if let Some(e) = PyErr::take(py) {
            return Err(e);
        }
        let out = result.map_err(value_error)?;
        let (padded_joints, weights) = skin_to_padded(py, &out.skin, Some(&joints.to_caller))?;
        let mut solved_joints = vec![false; out.solved_joints.len()];
        for (r, &solved) in out.solved_joints.iter().enumerate() {
            solved_joints[joints.to_caller[r]] = solved;
        }
        Ok(SkinResult {
            joints: padded_joints.unbind(),
            weights: weights.unbind(),
            solved_joints,
            unweighted: out.unweighted,
            over_cap: out.over_cap,
            seconds: started.elapsed().as_secs_f64(),
            method: solver.name().to_string(),
        })
    })
}

/// A character from arrays: a mesh, optionally joints (bind pose = rest pose, no rotation) and
/// weights, to save or to pass around.
#[pyfunction]
#[pyo3(signature = (vertices, triangles, joint_names = None, parents = None, joint_positions = None, weights = None, *, name = "character"))]
#[allow(clippy::too_many_arguments)]
fn character(
    vertices: PyArrayLike2<'_, f32, AllowTypeChange>,
    triangles: PyArrayLike2<'_, i64, AllowTypeChange>,
    joint_names: Option<Vec<String>>,
    parents: Option<Vec<i64>>,
    joint_positions: Option<PyArrayLike2<'_, f32, AllowTypeChange>>,
    weights: Option<(
        PyArrayLike2<'_, i64, AllowTypeChange>,
        PyArrayLike2<'_, f32, AllowTypeChange>,
    )>,
    name: &str,
) -> PyResult<PyCharacter> {
    guarded(|| {
        let positions = vec3s_from(&vertices.as_array(), "vertices")?;
        let tris = triangles_from(&triangles.as_array(), positions.len())?;
        let vertex_count = positions.len();
        let mut inner = Character {
            name: name.to_string(),
            mesh: Mesh {
                positions,
                triangles: tris,
                ..Mesh::default()
            },
            ..Character::default()
        };
        match (joint_names, parents, joint_positions) {
            (Some(names), Some(parents), Some(heads)) => {
                let heads = vec3s_from(&heads.as_array(), "joint_positions")?;
                let joints = skeleton_from_arrays(names, &parents, &heads)?;
                if let Some((j, w)) = weights {
                    let rows =
                        rows_from_padded("weights", &j.as_array(), &w.as_array(), vertex_count, &joints.to_rigml)?;
                    let widest = rows.iter().map(Vec::len).max().unwrap_or(1).max(1);
                    let skin =
                        rigml::Skin::from_rows(rows.iter().map(Vec::as_slice), joints.skeleton.joint_count(), widest)
                            .map_err(value_error)?;
                    inner.skin = Some(skin);
                }
                inner.skeleton = joints.skeleton;
            }
            (None, None, None) if weights.is_none() => {}
            _ => {
                return Err(PyValueError::new_err(
                    "character: give joint_names, parents and joint_positions together (weights need them)",
                ))
            }
        }
        Ok(PyCharacter { inner })
    })
}

/// Auto-rig a bare mesh: place a skeleton (template) and skin it (method).
#[pyfunction]
#[pyo3(signature = (vertices, triangles, *, template = "detect", method = "learned", max_influences = 4, name = "rigged"))]
fn rig(
    py: Python<'_>,
    vertices: PyArrayLike2<'_, f32, AllowTypeChange>,
    triangles: PyArrayLike2<'_, i64, AllowTypeChange>,
    template: &str,
    method: &str,
    max_influences: usize,
    name: &str,
) -> PyResult<(PyCharacter, String)> {
    guarded(|| {
        let positions = vec3s_from(&vertices.as_array(), "vertices")?;
        let tris = triangles_from(&triangles.as_array(), positions.len())?;
        let mesh = Mesh {
            positions,
            triangles: tris,
            ..Mesh::default()
        };
        let rigged = py
            .detach(|| rigml::rig(name, mesh, template, method, max_influences))
            .map_err(value_error)?;
        Ok((
            PyCharacter {
                inner: rigged.character,
            },
            rigged.template.to_string(),
        ))
    })
}

/// Score methods on one character file against its own weights, as `rigml eval` does.
#[pyfunction]
#[pyo3(signature = (path, methods, *, asset_id = None, deformation = true, model = None, rig_skin = "learned", weights = None, max_influences = 4))]
#[allow(clippy::too_many_arguments)]
fn evaluate<'py>(
    py: Python<'py>,
    path: PathBuf,
    methods: Vec<String>,
    asset_id: Option<String>,
    deformation: bool,
    model: Option<PathBuf>,
    rig_skin: &str,
    weights: Option<(
        PyArrayLike2<'_, i64, AllowTypeChange>,
        PyArrayLike2<'_, f32, AllowTypeChange>,
    )>,
    max_influences: usize,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    guarded(|| {
        let id = asset_id.unwrap_or_else(|| {
            path.file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned())
        });
        let settings = rigml::EvalSettings {
            model: model.as_deref(),
            skeleton_model: None,
            rig_skin,
            deformation,
        };
        let methods = match weights {
            // Weights computed already (by skin_weights): scored as the one method named.
            Some((joints, values)) => {
                let [name] = methods.as_slice() else {
                    return Err(PyValueError::new_err(format!(
                        "weights: given weights are scored as one method, but {} were named",
                        methods.len()
                    )));
                };
                let (joints, values) = (joints.as_array(), values.as_array());
                let widest = joints.iter().copied().max().unwrap_or(-1).max(-1) + 1;
                let identity: Vec<usize> = (0..widest as usize).collect();
                let rows = rows_from_padded("weights", &joints, &values, joints.nrows(), &identity)?;
                vec![rigml::given_weights(name, rows, max_influences)]
            }
            None => methods
                .iter()
                .map(|m| rigml::eval_method(m, &settings))
                .collect::<Result<Vec<_>, _>>()
                .map_err(value_error)?,
        };
        let options = rigml_eval::Options {
            deformation,
            ..rigml_eval::Options::default()
        };
        let results = py
            .detach(|| rigml::evaluate_file(&path, &id, &methods, &options))
            .map_err(value_error)?;
        results
            .iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("asset", &r.asset)?;
                d.set_item("method", &r.method)?;
                d.set_item("vertices", r.vertices)?;
                d.set_item("joints", r.joints)?;
                d.set_item("unskinned", r.unskinned)?;
                d.set_item("data_issue", r.data_issue)?;
                let failures: Vec<&str> = r.failures.iter().map(|f| f.cause()).collect();
                d.set_item("failures", failures)?;
                d.set_item("wall_s", r.wall_s)?;
                d.set_item("notes", r.notes.clone())?;
                for (name, value) in rigml::metrics(r) {
                    d.set_item(name, value)?;
                }
                Ok(d)
            })
            .collect()
    })
}

/// The method, template and metric names rigml knows.
#[pyfunction]
fn names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("methods", rigml::METHODS.to_vec())?;
    d.set_item("templates", rigml::TEMPLATES.to_vec())?;
    let metrics: Vec<&str> = rigml_eval::report::METRICS.iter().map(|m| m.name).collect();
    d.set_item("metrics", metrics)?;
    Ok(d)
}

#[pymodule]
fn _rigml(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCharacter>()?;
    m.add_class::<SkinResult>()?;
    m.add_class::<Cancel>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(skin_weights, m)?)?;
    m.add_function(wrap_pyfunction!(rig, m)?)?;
    m.add_function(wrap_pyfunction!(character, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(names, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
