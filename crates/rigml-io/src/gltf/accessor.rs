//! Accessor data with our own bounds checks: every byte offset, stride and count is checked
//! against the buffer before it is read, sparse substitutions included, so short or lying
//! buffers give an error naming the accessor instead of a panic.

use super::container;
use super::json::Value;
use super::json::{self, at, fail, Fail, Here, Obj};
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
    pub root: &'a Obj<'a>,
    pub accessors: &'a [Value<'a>],
    pub buffer_views: &'a [Value<'a>],
    pub buffers: &'a [Value<'a>],
    pub nodes: &'a [Value<'a>],
    pub meshes: &'a [Value<'a>],
    pub skins: &'a [Value<'a>],
    pub animations: &'a [Value<'a>],
    pub scenes: &'a [Value<'a>],
    /// Length of `materials` (primitives' `material` indices are checked against it).
    pub material_count: usize,
    glb_bin: Option<&'a [u8]>,
    /// Where relative URIs point.
    pub base_dir: &'a Path,
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
    pub fn new(
        root: &'a Obj<'a>,
        glb_bin: Option<&'a [u8]>,
        base_dir: &'a Path,
        file_size: usize,
    ) -> Result<Self, Fail> {
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
            material_count: list("materials")?.len(),
            glb_bin,
            base_dir,
            loaded: buffers.iter().map(|_| OnceCell::new()).collect(),
            decoded: Cell::new(0),
            budget: Cell::new(DECODE_ALLOWANCE.saturating_add(file_size.saturating_mul(DECODE_PER_BYTE))),
        })
    }

    /// Accessor `index` as floats (normalised integers mapped to [0,1] / [-1,1]), checking its
    /// type is one of `types` (`"VEC3"`, …). `referrer` is the JSON path that named it.
    pub fn floats(&self, index: usize, referrer: impl Here, types: &[&str]) -> Result<Values<f32>, Fail> {
        let (data, width, _) = self.raw(index, referrer, types, |component, normalized| {
            move |r| if normalized { component.normalize(r) } else { r } as f32
        })?;
        Ok(Values { data, width })
    }

    /// Accessor `index` as unsigned integers (indices, joints); float components are refused.
    pub fn ints(&self, index: usize, referrer: impl Here, types: &[&str]) -> Result<Values<u32>, Fail> {
        let (data, width, component) = self.raw(index, referrer, types, |_, _| |r| r as u32)?;
        if matches!(component, Component::F32 | Component::I8 | Component::I16) {
            return Err(fail(format!(
                "accessors[{index}] ({referrer}): component type {component:?} where unsigned integers are required"
            )));
        }
        Ok(Values { data, width })
    }

    /// Decode accessor `index`, turning each raw component value (exact in f64) into a `T`
    /// with the conversion `convert` makes for the accessor's component type and `normalized`.
    fn raw<T: Copy, C: Fn(f64) -> T>(
        &self,
        index: usize,
        referrer: impl Here,
        types: &[&str],
        convert: impl FnOnce(Component, bool) -> C,
    ) -> Result<(Vec<T>, usize, Component), Fail> {
        let acc = json::item(self.accessors, index, "accessor", referrer)?;
        let here = at(move |f| write!(f, "accessors[{index}] ({referrer})"));
        let code = json::req_index(acc, "componentType", here)?;
        let component = Component::from_code(code)
            .ok_or_else(|| fail(format!("{here}.componentType: {code} is not a glTF component type")))?;
        let ty = json::opt_str(acc, "type", here)?.ok_or_else(|| fail(format!("{here}: missing \"type\"")))?;
        if !types.contains(&ty) {
            return Err(fail(format!(
                "{here}.type: {ty} where {} is required",
                types.join(" or ")
            )));
        }
        let normalized = json::flag(acc, "normalized", here)?;
        let convert = convert(component, normalized);
        let layout = layout(ty, component, json::req_index(acc, "count", here)?, here)?;
        let byte_offset = json::opt_index(acc, "byteOffset", here)?.unwrap_or(0);
        let mut data = match json::opt_index(acc, "bufferView", here)? {
            Some(view) => {
                let (bytes, stride) = self.view(view, json::join(here, "bufferView"))?;
                let stride = stride.unwrap_or(layout.elem_size);
                if stride < layout.elem_size {
                    return Err(fail(format!(
                        "{here}: byteStride {stride} is smaller than one {ty} element ({} bytes)",
                        layout.elem_size
                    )));
                }
                read_elements(bytes, byte_offset, stride, &layout, component, here, &convert)?
            }
            None => {
                let n = layout.count.saturating_mul(layout.width);
                if n > MAX_ZERO_FILLED {
                    return Err(fail(format!("{here}: {n} components without a bufferView")));
                }
                vec![convert(0.0); n]
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
            self.apply_sparse(
                sparse,
                &layout,
                component,
                &mut data,
                json::join(here, "sparse"),
                &convert,
            )?;
        }
        Ok((data, layout.width, component))
    }

    fn apply_sparse<T: Copy>(
        &self,
        sparse: &Value<'_>,
        layout: &Layout,
        component: Component,
        data: &mut [T],
        here: impl Here,
        convert: impl Fn(f64) -> T,
    ) -> Result<(), Fail> {
        let sparse = json::object(sparse, here)?;
        let count = json::req_index(sparse, "count", here)?;
        let part = |key: &'static str| -> Result<&Obj<'_>, Fail> {
            let v = sparse
                .get(key)
                .ok_or_else(|| fail(format!("{here}: missing \"{key}\"")))?;
            json::object(v, json::join(here, key))
        };
        let (indices, ipath) = (part("indices")?, json::join(here, "indices"));
        let code = json::req_index(indices, "componentType", ipath)?;
        let icomp = Component::from_code(code)
            .filter(|c| matches!(c, Component::U8 | Component::U16 | Component::U32))
            .ok_or_else(|| fail(format!("{ipath}.componentType: {code} is not an index type")))?;
        let ilayout = Layout {
            count,
            width: 1,
            elem_size: icomp.size(),
            offsets: vec![0],
        };
        let (ibytes, _) = self.view(json::req_index(indices, "bufferView", ipath)?, ipath)?;
        let ioff = json::opt_index(indices, "byteOffset", ipath)?.unwrap_or(0);
        let targets = read_elements(ibytes, ioff, icomp.size(), &ilayout, icomp, ipath, &|r| r)?;
        let (values, vpath) = (part("values")?, json::join(here, "values"));
        let (vbytes, _) = self.view(json::req_index(values, "bufferView", vpath)?, vpath)?;
        let voff = json::opt_index(values, "byteOffset", vpath)?.unwrap_or(0);
        let vlayout = Layout {
            count,
            width: layout.width,
            elem_size: layout.elem_size,
            offsets: layout.offsets.clone(),
        };
        let replacement = read_elements(vbytes, voff, layout.elem_size, &vlayout, component, vpath, &convert)?;
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

    /// The bytes of buffer view `index` (images: encoded files stored in the buffer).
    pub fn view_bytes(&self, index: usize, referrer: impl Here) -> Result<&[u8], Fail> {
        Ok(self.view(index, referrer)?.0)
    }

    /// The bytes of buffer view `index` and its byte stride.
    fn view(&self, index: usize, referrer: impl Here) -> Result<(&[u8], Option<usize>), Fail> {
        let view = json::item(self.buffer_views, index, "bufferView", referrer)?;
        let here = at(move |f| write!(f, "bufferViews[{index}]"));
        let buffer = json::req_index(view, "buffer", here)?;
        let offset = json::opt_index(view, "byteOffset", here)?.unwrap_or(0);
        let length = json::req_index(view, "byteLength", here)?;
        let stride = json::opt_index(view, "byteStride", here)?;
        let data = self.buffer(buffer, json::join(here, "buffer"))?;
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
    fn buffer(&self, index: usize, referrer: impl Here) -> Result<&[u8], Fail> {
        let cell = self
            .loaded
            .get(index)
            .ok_or_else(|| fail(format!("{referrer}: buffer {index} does not exist")))?;
        if let Some(bytes) = cell.get() {
            return Ok(bytes);
        }
        {
            let buffer = json::item(self.buffers, index, "buffer", referrer)?;
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

fn layout(ty: &str, component: Component, count: usize, here: impl Here) -> Result<Layout, Fail> {
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

/// Read `layout.count` elements starting at `offset`, `stride` bytes apart, converting each
/// component with `convert`. The whole range is checked once up front, so the loop cannot
/// read past `bytes`.
fn read_elements<T>(
    bytes: &[u8],
    offset: usize,
    stride: usize,
    layout: &Layout,
    component: Component,
    here: impl Here,
    convert: &impl Fn(f64) -> T,
) -> Result<Vec<T>, Fail> {
    let mut out = Vec::new();
    if layout.count == 0 {
        return Ok(out);
    }
    let end = (layout.count - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(offset))
        .and_then(|x| x.checked_add(layout.elem_size));
    let Some(body) = end.and_then(|end| bytes.get(offset..end)) else {
        return Err(fail(format!(
            "{here}: {} elements of {} bytes (stride {stride}, offset {offset}) do not fit in its {}-byte buffer view",
            layout.count,
            layout.elem_size,
            bytes.len()
        )));
    };
    out.reserve_exact(layout.count * layout.width);
    // One loop per component type, so the type is not matched again for every value.
    let size = component.size();
    let mut run = Decode {
        out: &mut out,
        body,
        stride,
        layout,
        size,
    };
    match component {
        Component::I8 => run.all(here, |b| f64::from(b[0] as i8), convert),
        Component::U8 => run.all(here, |b| f64::from(b[0]), convert),
        Component::I16 => run.all(here, |b| f64::from(i16::from_le_bytes([b[0], b[1]])), convert),
        Component::U16 => run.all(here, |b| f64::from(u16::from_le_bytes([b[0], b[1]])), convert),
        Component::U32 => run.all(
            here,
            |b| f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            convert,
        ),
        Component::F32 => run.all(
            here,
            |b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            convert,
        ),
    }?;
    Ok(out)
}

/// The element loop of [`read_elements`] for one component type.
struct Decode<'r, T> {
    out: &'r mut Vec<T>,
    /// Exactly the bytes of the elements: count-1 full strides plus one element.
    body: &'r [u8],
    stride: usize,
    layout: &'r Layout,
    /// Bytes per component.
    size: usize,
}

impl<T> Decode<'_, T> {
    fn all(&mut self, here: impl Here, get: impl Fn(&[u8]) -> f64, convert: &impl Fn(f64) -> T) -> Result<(), Fail> {
        for (i, element) in self.body.chunks(self.stride.max(1)).take(self.layout.count).enumerate() {
            for &o in &self.layout.offsets {
                // In range by construction of `body`; checked anyway, never indexed blindly.
                let b = element
                    .get(o..o + self.size)
                    .ok_or_else(|| fail(format!("{here}: element {i} is out of bounds")))?;
                self.out.push(convert(get(b)));
            }
        }
        Ok(())
    }
}
