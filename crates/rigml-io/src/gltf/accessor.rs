//! Accessor data with our own bounds checks: every byte offset, stride and count is checked
//! against the buffer before it is read, sparse substitutions included, so short or lying
//! buffers give an error naming the accessor instead of a panic.

use super::container;
use super::json::{self, fail, Fail, Obj};
use serde_json::Value;
use std::cell::{Cell, OnceCell};
use std::path::Path;

/// Accessors without a buffer view are filled with zeros; past this many components that
/// would be a memory bomb from a few bytes of JSON, so it is refused.
const MAX_ZERO_FILLED: usize = 1 << 22;

/// Components decoded in one read may exceed the file's own size this many times over (nodes
/// can share a mesh) plus a fixed allowance, and no more: a small file naming one big
/// accessor from thousands of nodes would otherwise exhaust memory.
const DECODE_PER_BYTE: usize = 16;
const DECODE_ALLOWANCE: usize = 1 << 24;

/// The parsed document plus lazily loaded buffers.
pub(super) struct Doc<'a> {
    pub root: &'a Obj,
    pub accessors: &'a [Value],
    pub buffer_views: &'a [Value],
    pub buffers: &'a [Value],
    pub nodes: &'a [Value],
    pub meshes: &'a [Value],
    pub skins: &'a [Value],
    pub animations: &'a [Value],
    pub scenes: &'a [Value],
    glb_bin: Option<&'a [u8]>,
    base_dir: &'a Path,
    loaded: Vec<OnceCell<Vec<u8>>>,
    /// Components decoded so far, and the most allowed.
    decoded: Cell<usize>,
    budget: Cell<usize>,
}

/// glTF component types.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Component {
    I8,
    U8,
    I16,
    U16,
    U32,
    F32,
}

impl Component {
    fn from_code(code: usize) -> Option<Self> {
        Some(match code {
            5120 => Self::I8,
            5121 => Self::U8,
            5122 => Self::I16,
            5123 => Self::U16,
            5125 => Self::U32,
            5126 => Self::F32,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::U32 | Self::F32 => 4,
        }
    }

    /// The raw value at `bytes[at..]`, exact in f64.
    fn read(self, bytes: &[u8], at: usize) -> Option<f64> {
        let b = bytes.get(at..at.checked_add(self.size())?)?;
        Some(match self {
            Self::I8 => f64::from(b[0] as i8),
            Self::U8 => f64::from(b[0]),
            Self::I16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
            Self::U16 => f64::from(u16::from_le_bytes([b[0], b[1]])),
            Self::U32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            Self::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        })
    }

    /// Normalised integer to float (glTF 2.0 §3.11, "Animations" / KHR_mesh_quantization).
    fn normalize(self, raw: f64) -> f64 {
        match self {
            Self::I8 => (raw / 127.0).max(-1.0),
            Self::U8 => raw / 255.0,
            Self::I16 => (raw / 32767.0).max(-1.0),
            Self::U16 => raw / 65535.0,
            Self::U32 | Self::F32 => raw,
        }
    }
}

/// Decoded accessor values, `width` per element.
pub(super) struct Values<T> {
    pub data: Vec<T>,
    pub width: usize,
}

impl<T: Copy> Values<T> {
    pub fn count(&self) -> usize {
        self.data.len().checked_div(self.width).unwrap_or(0)
    }

    /// Element `i` as a fixed-size array (the width was checked by the caller's `types`).
    pub fn get<const N: usize>(&self, i: usize) -> Option<[T; N]> {
        let s = self.data.get(i * self.width..i * self.width + N)?;
        s.try_into().ok()
    }
}

struct Layout {
    count: usize,
    width: usize,
    elem_size: usize,
    /// Byte offset of each component inside an element (matrix columns are 4-byte aligned).
    offsets: Vec<usize>,
}

impl<'a> Doc<'a> {
    /// `file_size` (bytes of the file read) sets the decoding budget.
    pub fn new(root: &'a Obj, glb_bin: Option<&'a [u8]>, base_dir: &'a Path, file_size: usize) -> Result<Self, Fail> {
        let list = |key| json::array(root, key, "");
        let buffers = list("buffers")?;
        Ok(Doc {
            root,
            accessors: list("accessors")?,
            buffer_views: list("bufferViews")?,
            buffers,
            nodes: list("nodes")?,
            meshes: list("meshes")?,
            skins: list("skins")?,
            animations: list("animations")?,
            scenes: list("scenes")?,
            glb_bin,
            base_dir,
            loaded: buffers.iter().map(|_| OnceCell::new()).collect(),
            decoded: Cell::new(0),
            budget: Cell::new(DECODE_ALLOWANCE.saturating_add(file_size.saturating_mul(DECODE_PER_BYTE))),
        })
    }

    /// Accessor `index` as floats (normalised integers mapped to [0,1] / [-1,1]), checking its
    /// type is one of `types` (`"VEC3"`, …). `referrer` is the JSON path that named it.
    pub fn floats(&self, index: usize, referrer: &str, types: &[&str]) -> Result<Values<f32>, Fail> {
        let (raw, width, component, normalized) = self.raw(index, referrer, types)?;
        let data = raw
            .into_iter()
            .map(|r| if normalized { component.normalize(r) } else { r } as f32)
            .collect();
        Ok(Values { data, width })
    }

    /// Accessor `index` as unsigned integers (indices, joints); float components are refused.
    pub fn ints(&self, index: usize, referrer: &str, types: &[&str]) -> Result<Values<u32>, Fail> {
        let (raw, width, component, _) = self.raw(index, referrer, types)?;
        if matches!(component, Component::F32 | Component::I8 | Component::I16) {
            return Err(fail(format!(
                "accessors[{index}] ({referrer}): component type {component:?} where unsigned integers are required"
            )));
        }
        let data = raw.into_iter().map(|r| r as u32).collect();
        Ok(Values { data, width })
    }

    fn raw(&self, index: usize, referrer: &str, types: &[&str]) -> Result<(Vec<f64>, usize, Component, bool), Fail> {
        let acc = json::item(self.accessors, index, "accessor", referrer)?;
        let here = format!("accessors[{index}] ({referrer})");
        let code = json::req_index(acc, "componentType", &here)?;
        let component = Component::from_code(code)
            .ok_or_else(|| fail(format!("{here}.componentType: {code} is not a glTF component type")))?;
        let ty = json::opt_str(acc, "type", &here)?.ok_or_else(|| fail(format!("{here}: missing \"type\"")))?;
        if !types.contains(&ty) {
            return Err(fail(format!(
                "{here}.type: {ty} where {} is required",
                types.join(" or ")
            )));
        }
        let normalized = json::flag(acc, "normalized", &here)?;
        let layout = layout(ty, component, json::req_index(acc, "count", &here)?, &here)?;
        let byte_offset = json::opt_index(acc, "byteOffset", &here)?.unwrap_or(0);
        let mut data = match json::opt_index(acc, "bufferView", &here)? {
            Some(view) => {
                let (bytes, stride) = self.view(view, &format!("{here}.bufferView"))?;
                let stride = stride.unwrap_or(layout.elem_size);
                if stride < layout.elem_size {
                    return Err(fail(format!(
                        "{here}: byteStride {stride} is smaller than one {ty} element ({} bytes)",
                        layout.elem_size
                    )));
                }
                read_elements(bytes, byte_offset, stride, &layout, component, &here)?
            }
            None => {
                let n = layout.count.saturating_mul(layout.width);
                if n > MAX_ZERO_FILLED {
                    return Err(fail(format!("{here}: {n} components without a bufferView")));
                }
                vec![0.0; n]
            }
        };
        // Checked after loading: the budget grows with the buffers loaded.
        let total = self
            .decoded
            .get()
            .saturating_add(layout.count.saturating_mul(layout.width));
        if total > self.budget.get() {
            return Err(fail(format!(
                "{here}: decoding would exceed {} values, {DECODE_PER_BYTE}x the file's size (is one large accessor used by very many nodes?)",
                self.budget.get()
            )));
        }
        self.decoded.set(total);
        if let Some(sparse) = acc.get("sparse") {
            self.apply_sparse(sparse, &layout, component, &mut data, &format!("{here}.sparse"))?;
        }
        Ok((data, layout.width, component, normalized))
    }

    fn apply_sparse(
        &self,
        sparse: &Value,
        layout: &Layout,
        component: Component,
        data: &mut [f64],
        here: &str,
    ) -> Result<(), Fail> {
        let sparse = json::object(sparse, here)?;
        let count = json::req_index(sparse, "count", here)?;
        let at = |key: &str| -> Result<(&Obj, String), Fail> {
            let path = json::join(here, key);
            let v = sparse
                .get(key)
                .ok_or_else(|| fail(format!("{here}: missing \"{key}\"")))?;
            Ok((json::object(v, &path)?, path))
        };
        let (indices, ipath) = at("indices")?;
        let code = json::req_index(indices, "componentType", &ipath)?;
        let icomp = Component::from_code(code)
            .filter(|c| matches!(c, Component::U8 | Component::U16 | Component::U32))
            .ok_or_else(|| fail(format!("{ipath}.componentType: {code} is not an index type")))?;
        let ilayout = Layout {
            count,
            width: 1,
            elem_size: icomp.size(),
            offsets: vec![0],
        };
        let (ibytes, _) = self.view(json::req_index(indices, "bufferView", &ipath)?, &ipath)?;
        let ioff = json::opt_index(indices, "byteOffset", &ipath)?.unwrap_or(0);
        let targets = read_elements(ibytes, ioff, icomp.size(), &ilayout, icomp, &ipath)?;
        let (values, vpath) = at("values")?;
        let (vbytes, _) = self.view(json::req_index(values, "bufferView", &vpath)?, &vpath)?;
        let voff = json::opt_index(values, "byteOffset", &vpath)?.unwrap_or(0);
        let vlayout = Layout {
            count,
            width: layout.width,
            elem_size: layout.elem_size,
            offsets: layout.offsets.clone(),
        };
        let replacement = read_elements(vbytes, voff, layout.elem_size, &vlayout, component, &vpath)?;
        for (k, &target) in targets.iter().enumerate() {
            let t = target as usize;
            let dst = data.get_mut(t * layout.width..(t + 1) * layout.width).ok_or_else(|| {
                fail(format!(
                    "{ipath}[{k}]: element {t} is past the accessor's {}",
                    layout.count
                ))
            })?;
            let src = replacement.get(k * layout.width..(k + 1) * layout.width).unwrap_or(&[]);
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    /// The bytes of buffer view `index` and its byte stride.
    fn view(&self, index: usize, referrer: &str) -> Result<(&[u8], Option<usize>), Fail> {
        let view = json::item(self.buffer_views, index, "bufferView", referrer)?;
        let here = format!("bufferViews[{index}]");
        let buffer = json::req_index(view, "buffer", &here)?;
        let offset = json::opt_index(view, "byteOffset", &here)?.unwrap_or(0);
        let length = json::req_index(view, "byteLength", &here)?;
        let stride = json::opt_index(view, "byteStride", &here)?;
        let data = self.buffer(buffer, &format!("{here}.buffer"))?;
        let bytes = offset
            .checked_add(length)
            .and_then(|end| data.get(offset..end))
            .ok_or_else(|| {
                fail(format!(
                    "{here}: bytes {offset}..{} are past the end of buffers[{buffer}] ({} bytes)",
                    offset.saturating_add(length),
                    data.len()
                ))
            })?;
        Ok((bytes, stride))
    }

    /// The bytes of buffer `index`, loaded on first use.
    fn buffer(&self, index: usize, referrer: &str) -> Result<&[u8], Fail> {
        let buffer = json::item(self.buffers, index, "buffer", referrer)?;
        let cell = self
            .loaded
            .get(index)
            .ok_or_else(|| fail(format!("{referrer}: buffer {index} does not exist")))?;
        if cell.get().is_none() {
            let here = format!("buffers[{index}]");
            let bytes = match json::opt_str(buffer, "uri", &here)? {
                Some(uri) => container::load_uri(uri, self.base_dir, &format!("{here}.uri"))?,
                None if index == 0 => self
                    .glb_bin
                    .ok_or_else(|| fail(format!("{here}: no uri and no GLB BIN chunk")))?
                    .to_vec(),
                None => {
                    return Err(fail(format!(
                        "{here}: no uri (only buffers[0] may use the GLB BIN chunk)"
                    )))
                }
            };
            let declared = json::req_index(buffer, "byteLength", &here)?;
            if bytes.len() < declared {
                return Err(fail(format!(
                    "{here}: byteLength is {declared} but only {} bytes are there (truncated?)",
                    bytes.len()
                )));
            }
            let size = bytes.len().saturating_mul(DECODE_PER_BYTE);
            self.budget.set(self.budget.get().saturating_add(size));
            let _ = cell.set(bytes);
        }
        Ok(cell.get().map(Vec::as_slice).unwrap_or(&[]))
    }
}

fn layout(ty: &str, component: Component, count: usize, here: &str) -> Result<Layout, Fail> {
    let (rows, cols) = match ty {
        "SCALAR" => (1, 1),
        "VEC2" => (2, 1),
        "VEC3" => (3, 1),
        "VEC4" => (4, 1),
        "MAT2" => (2, 2),
        "MAT3" => (3, 3),
        "MAT4" => (4, 4),
        _ => return Err(fail(format!("{here}.type: {ty:?} is not a glTF accessor type"))),
    };
    let size = component.size();
    // Matrix columns start on 4-byte boundaries (glTF 2.0 §3.6.2.4, "Data Alignment").
    let column = if cols > 1 {
        (rows * size).next_multiple_of(4)
    } else {
        rows * size
    };
    let offsets = (0..cols)
        .flat_map(|c| (0..rows).map(move |r| c * column + r * size))
        .collect();
    Ok(Layout {
        count,
        width: rows * cols,
        elem_size: column * cols,
        offsets,
    })
}

fn read_elements(
    bytes: &[u8],
    offset: usize,
    stride: usize,
    layout: &Layout,
    component: Component,
    here: &str,
) -> Result<Vec<f64>, Fail> {
    if layout.count > 0 {
        let end = (layout.count - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(offset))
            .and_then(|x| x.checked_add(layout.elem_size));
        if end.is_none_or(|end| end > bytes.len()) {
            return Err(fail(format!(
                "{here}: {} elements of {} bytes (stride {stride}, offset {offset}) do not fit in its {}-byte buffer view",
                layout.count,
                layout.elem_size,
                bytes.len()
            )));
        }
    }
    let mut out = Vec::with_capacity(layout.count * layout.width);
    for i in 0..layout.count {
        let base = offset + i * stride;
        for &o in &layout.offsets {
            out.push(
                component
                    .read(bytes, base + o)
                    .ok_or_else(|| fail(format!("{here}: element {i} is out of bounds")))?,
            );
        }
    }
    Ok(out)
}
