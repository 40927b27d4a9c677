//! rigml geometry: procedural shapes now; adjacency, normals, bounds and the other mesh
//! algorithms the solvers share as they arrive (see `docs/ARCHITECTURE.md`).

pub mod procedural;
