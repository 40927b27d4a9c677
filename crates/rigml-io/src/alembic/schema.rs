//! AbcCoreOgawa's layout on the Ogawa container: the archive, objects, properties, samples,
//! time samplings and metadata.
//!
//! - The root group holds: the archive version (int32 data, 0), the Alembic library version
//!   (int32 data), the top object's group, the archive metadata, the time samplings and the
//!   indexed metadata (data blocks).
//! - An object group holds its properties' compound group first, one group per child object,
//!   and last the child objects' headers (name, metadata) followed by two 16-byte digests.
//! - A compound property group holds one group per property and last the property headers,
//!   each opening with a packed u32: property type (bits 0-1: compound, scalar, array,
//!   scalar-like array), size hint of the integers that follow (bits 2-3: u8, u16, u32), POD
//!   type (bits 4-7), has-time-sampling-index (8), needs-first/last-changed (9), homogeneous
//!   (10), constant (11: first = last changed = 0), extent (12-19), metadata index (20-27,
//!   0xff: written inline).
//! - A scalar property's group holds one data block per stored sample; an array property's
//!   holds two per stored sample: the data, then its dimensions (empty: one dimension, from the
//!   data size). Every data block opens with a 16-byte digest of the sample. Sample `i` is
//!   stored at index `i` up to the last changed index; later samples repeat the last stored one,
//!   and samples before the first changed index repeat sample 0.
//!
//! Every header is read with its bounds checked; errors say which object or property they are
//! in (the caller prefixes the object).

use super::ogawa::Ogawa;
pub(crate) use super::samples::{f32s, f64s, i32s, Samples};
pub(crate) use super::time::TimeSampling;

/// The first Alembic archive version stored by AbcCoreOgawa, the only one there is.
const ARCHIVE_VERSION: i32 = 0;
/// Bytes of the digests that follow the object headers (properties' and children's).
const OBJECT_DIGESTS: usize = 32;

/// The plain-old-data type of a property's values (Alembic::Util::PlainOldDataType).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pod {
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
    String,
    WString,
}

impl Pod {
    fn from_code(code: u32) -> Option<Pod> {
        use Pod::*;
        [
            Bool, U8, I8, U16, I16, U32, I32, U64, I64, F16, F32, F64, String, WString,
        ]
        .get(code as usize)
        .copied()
    }

    /// Bytes per value (strings: none fixed, reported as 0).
    pub(crate) fn size(self) -> usize {
        use Pod::*;
        match self {
            Bool | U8 | I8 => 1,
            U16 | I16 | F16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
            String | WString => 0,
        }
    }
}

/// What a property holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Compound,
    Scalar,
    Array,
}

/// The archive: its Ogawa tree, time samplings, indexed metadata and top object.
#[derive(Debug)]
pub(crate) struct Archive<'a> {
    pub ogawa: Ogawa<'a>,
    pub time_samplings: Vec<TimeSampling>,
    /// Metadata strings objects and properties refer to by index (index 0: empty).
    pub metadata: Vec<String>,
    /// The group of the top object (`/`).
    pub top: u64,
}

/// A child object as its parent lists it.
#[derive(Debug, Clone)]
pub(crate) struct ObjectHeader {
    pub name: String,
    pub metadata: String,
    /// The object's group.
    pub group: u64,
}

/// An object: its properties (a compound group) and its children.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    pub properties: u64,
    pub children: Vec<ObjectHeader>,
}

/// A property header with where its samples are.
#[derive(Debug, Clone)]
pub(crate) struct Property {
    /// The property's name within its parent compound, with the parents above it (`.geom/P`).
    pub path: String,
    pub kind: Kind,
    pub pod: Pod,
    pub extent: usize,
    pub num_samples: u32,
    pub first_changed: u32,
    pub last_changed: u32,
    pub time_sampling: usize,
    /// The property's group (samples, or sub-properties of a compound).
    pub group: u64,
}

impl Property {
    /// The index among stored samples that holds sample `i`.
    pub(crate) fn stored_index(&self, i: u32) -> usize {
        (if i > self.last_changed {
            self.last_changed
        } else if i < self.first_changed {
            0
        } else {
            i
        }) as usize
    }

    /// An error unless the time sampling exists and the changed samples are within the samples.
    fn check(&self, time_samplings: usize) -> Result<(), String> {
        if self.kind == Kind::Compound {
            return Ok(());
        }
        if self.time_sampling >= time_samplings {
            return Err(format!(
                "property {}: time sampling {}, the archive has {time_samplings}",
                self.path, self.time_sampling
            ));
        }
        let (first, last, n) = (self.first_changed, self.last_changed, self.num_samples);
        if n > 0 && last >= n {
            return Err(format!(
                "property {}: changed samples {first}..={last} are not within its {n} samples",
                self.path
            ));
        }
        Ok(())
    }

    /// Whether samples differ over time (more than one sample stored).
    pub(crate) fn is_animated(&self) -> bool {
        self.last_changed > 0
    }

    /// An error unless the property is of `kind` with values `pod` × `extent` (any extent if
    /// `None`).
    pub(crate) fn expect(&self, kind: Kind, pod: Pod, extent: Option<usize>) -> Result<(), String> {
        if self.kind != kind || self.pod != pod || extent.is_some_and(|e| e != self.extent) {
            return Err(format!(
                "property {}: {:?} {:?}×{}, expected {kind:?} {pod:?}{}",
                self.path,
                self.kind,
                self.pod,
                self.extent,
                extent.map(|e| format!("×{e}")).unwrap_or_default()
            ));
        }
        Ok(())
    }
}

/// A compound property's children.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compound {
    pub properties: Vec<Property>,
}

impl Compound {
    pub(crate) fn get(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.path.rsplit('/').next() == Some(name))
    }
}

/// The value of `key` in Alembic metadata (`key=value;key=value`).
pub(crate) fn metadata_value<'m>(metadata: &'m str, key: &str) -> Option<&'m str> {
    metadata
        .split(';')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// A cursor over a header buffer: reads with bounds checks, errors naming what was read.
struct Cursor<'b> {
    buf: &'b [u8],
    pos: usize,
}

impl<'b> Cursor<'b> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'b [u8], String> {
        match self.buf.get(self.pos..self.pos.saturating_add(n)) {
            Some(b) if self.pos.checked_add(n).is_some() => {
                self.pos += n;
                Ok(b)
            }
            _ => Err(format!(
                "{what} ({n} bytes at {}) runs past the end of its {}-byte header block",
                self.pos,
                self.buf.len()
            )),
        }
    }

    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap_or_default()))
    }

    fn f64(&mut self, what: &str) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.take(8, what)?.try_into().unwrap_or_default()))
    }

    /// An unsigned integer of the header's size hint (0: u8, 1: u16, 2: u32).
    fn sized(&mut self, hint: u32, what: &str) -> Result<u32, String> {
        Ok(match hint {
            0 => u32::from(self.u8(what)?),
            1 => u32::from(u16::from_le_bytes(self.take(2, what)?.try_into().unwrap_or_default())),
            _ => self.u32(what)?,
        })
    }

    fn string(&mut self, n: usize, what: &str) -> Result<String, String> {
        Ok(String::from_utf8_lossy(self.take(n, what)?).into_owned())
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

impl<'a> Archive<'a> {
    /// Read the archive's root group: version, time samplings, indexed metadata, top object.
    pub(crate) fn open(bytes: &'a [u8]) -> Result<Archive<'a>, String> {
        let ogawa = Ogawa::open(bytes)?;
        let root = ogawa.group(ogawa.root).map_err(|e| format!("archive root: {e}"))?;
        if root.len() < 6 {
            return Err(format!(
                "archive root holds {} entries, AbcCoreOgawa writes 6 (version, library version, \
                 top object, metadata, time samplings, indexed metadata)",
                root.len()
            ));
        }
        let entry = |i: usize, what: &str| -> Result<&'a [u8], String> {
            let offset = root[i].data(&format!("archive {what}"))?;
            ogawa.data(offset).map_err(|e| format!("archive {what}: {e}"))
        };
        let version = entry(0, "version")?;
        let version = match version.try_into() {
            Ok(b) => i32::from_le_bytes(b),
            Err(_) => return Err(format!("archive version is {} bytes, expected 4", version.len())),
        };
        if version != ARCHIVE_VERSION {
            return Err(format!(
                "Alembic archive version {version}; this reader knows version {ARCHIVE_VERSION}"
            ));
        }
        let top = root[2].group("archive top object")?;
        let time_samplings =
            parse_time_samplings(entry(4, "time samplings")?).map_err(|e| format!("archive time samplings: {e}"))?;
        let metadata =
            parse_indexed_metadata(entry(5, "indexed metadata")?).map_err(|e| format!("archive metadata: {e}"))?;
        Ok(Archive {
            ogawa,
            time_samplings,
            metadata,
            top,
        })
    }

    /// The object whose group is at `group`: its properties and its children's headers.
    pub(crate) fn object(&self, group: u64) -> Result<Object, String> {
        let children = self.ogawa.group(group)?;
        let (Some(&first), Some(&last)) = (children.first(), children.last()) else {
            return Ok(Object {
                properties: 0,
                children: Vec::new(),
            });
        };
        let headers = self.ogawa.data(last.data("object headers")?)?;
        let properties = match (children.len(), first) {
            (1, _) => 0,
            (_, c) => c.group("object properties")?,
        };
        let headers = headers
            .get(..headers.len().saturating_sub(OBJECT_DIGESTS))
            .unwrap_or(&[]);
        let mut cursor = Cursor { buf: headers, pos: 0 };
        let mut out = Vec::new();
        while !cursor.done() {
            let i = out.len();
            let what = format!("child object header {i}");
            let len = cursor.u32(&what)? as usize;
            let name = cursor.string(len, &what)?;
            let index = cursor.u8(&what)?;
            let metadata = if index == 0xff {
                let len = cursor.u32(&what)? as usize;
                cursor.string(len, &what)?
            } else {
                self.indexed(u32::from(index))
                    .map_err(|e| format!("child object {name:?}: {e}"))?
            };
            // Child i is group entry i + 1 (entry 0: properties; last: these headers).
            let group = match children.get(i + 1) {
                Some(c) if i + 2 < children.len() => c.group(&format!("child object {name:?}"))?,
                _ => {
                    return Err(format!(
                        "headers name child object {name:?} (number {i}), the group holds {} child objects",
                        children.len().saturating_sub(2)
                    ))
                }
            };
            out.push(ObjectHeader { name, metadata, group });
        }
        Ok(Object {
            properties,
            children: out,
        })
    }

    /// The properties of the compound group at `group`; `parent` prefixes their paths.
    pub(crate) fn compound(&self, group: u64, parent: &str) -> Result<Compound, String> {
        let place = if parent.is_empty() {
            "properties".to_string()
        } else {
            format!("property {parent}")
        };
        let children = self.ogawa.group(group).map_err(|e| format!("{place}: {e}"))?;
        let Some(&last) = children.last() else {
            return Ok(Compound::default());
        };
        let headers = last
            .data(&format!("{place}: headers"))
            .and_then(|offset| self.ogawa.data(offset))
            .map_err(|e| format!("{place}: headers: {e}"))?;
        let mut cursor = Cursor { buf: headers, pos: 0 };
        let mut properties = Vec::new();
        while !cursor.done() {
            let i = properties.len();
            let mut p = self
                .property_header(&mut cursor, parent)
                .map_err(|e| format!("{place}: header {i}: {e}"))?;
            p.check(self.time_samplings.len())?;
            p.group = match children.get(i) {
                Some(c) if i + 1 < children.len() => c.group(&format!("property {}", p.path))?,
                _ => {
                    return Err(format!(
                        "headers name property {} (number {i}), the group holds {} properties",
                        p.path,
                        children.len() - 1
                    ))
                }
            };
            properties.push(p);
        }
        Ok(Compound { properties })
    }

    /// The compound property `p`'s children.
    pub(crate) fn sub_compound(&self, p: &Property) -> Result<Compound, String> {
        if p.kind != Kind::Compound {
            return Err(format!("property {}: {:?}, expected a compound", p.path, p.kind));
        }
        self.compound(p.group, &p.path)
    }

    fn property_header(&self, cursor: &mut Cursor, parent: &str) -> Result<Property, String> {
        let info = cursor.u32("info word")?;
        let hint = (info >> 2) & 0x3;
        if hint == 3 {
            return Err(format!("info word {info:#x}: size hint 3 is not defined"));
        }
        let kind = match info & 0x3 {
            0 => Kind::Compound,
            1 => Kind::Scalar,
            _ => Kind::Array,
        };
        let pod_code = (info >> 4) & 0xf;
        let pod = Pod::from_code(pod_code).ok_or(format!("info word {info:#x}: POD type {pod_code} is not defined"))?;
        let extent = ((info >> 12) & 0xff) as usize;
        let (mut num_samples, mut first_changed, mut last_changed, mut time_sampling) = (0, 0, 0, 0);
        if kind != Kind::Compound {
            if extent == 0 {
                return Err(format!("info word {info:#x}: extent 0"));
            }
            num_samples = cursor.sized(hint, "sample count")?;
            if info & 0x200 != 0 {
                first_changed = cursor.sized(hint, "first changed index")?;
                last_changed = cursor.sized(hint, "last changed index")?;
            } else if info & 0x800 == 0 && num_samples > 1 {
                // Not written: every sample after the first is stored (one sample: constant).
                first_changed = 1;
                last_changed = num_samples - 1;
            }
            if first_changed > last_changed {
                // AbcCoreOgawa reads every sample as sample 0 then.
                (first_changed, last_changed) = (0, 0);
            }
            if info & 0x100 != 0 {
                time_sampling = cursor.sized(hint, "time sampling index")? as usize;
            }
        }
        let len = cursor.sized(hint, "name length")? as usize;
        let name = cursor.string(len, "name")?;
        let path = if parent.is_empty() {
            name.clone()
        } else {
            format!("{parent}/{name}")
        };
        let index = (info >> 20) & 0xff;
        if index == 0xff {
            let len = cursor.sized(hint, "metadata length")? as usize;
            cursor.take(len, "metadata")?;
        } else {
            self.indexed(index).map_err(|e| format!("property {path}: {e}"))?;
        }
        Ok(Property {
            path,
            kind,
            pod,
            extent,
            num_samples,
            first_changed,
            last_changed,
            time_sampling,
            group: 0,
        })
    }

    fn indexed(&self, index: u32) -> Result<String, String> {
        self.metadata.get(index as usize).cloned().ok_or(format!(
            "metadata index {index}, the archive has {}",
            self.metadata.len()
        ))
    }

    /// The samples of property `p` (its group read once).
    pub(crate) fn samples(&self, p: &Property) -> Result<Samples<'a>, String> {
        let children = self
            .ogawa
            .group(p.group)
            .map_err(|e| format!("property {}: {e}", p.path))?;
        Ok(Samples::new(self.ogawa, p.clone(), children))
    }
}

/// The archive's time samplings: per sampling, u32 max sample, f64 time per cycle, u32 time
/// count and that many f64 times.
fn parse_time_samplings(buf: &[u8]) -> Result<Vec<TimeSampling>, String> {
    let mut cursor = Cursor { buf, pos: 0 };
    let mut out = Vec::new();
    while !cursor.done() {
        let what = format!("time sampling {}", out.len());
        let _max_sample = cursor.u32(&what)?;
        let time_per_cycle = cursor.f64(&what)?;
        let count = cursor.u32(&what)? as usize;
        let bytes = cursor.take(count.saturating_mul(8), &what)?;
        let times: Vec<f64> = bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let ts = TimeSampling { time_per_cycle, times };
        if !time_per_cycle.is_finite() || time_per_cycle <= 0.0 || ts.times.iter().any(|t| !t.is_finite()) {
            return Err(format!(
                "{what}: time per cycle {time_per_cycle} or a time is not a positive finite number"
            ));
        }
        if !ts.is_acyclic() && ts.times.is_empty() {
            return Err(format!("{what}: no times"));
        }
        out.push(ts);
    }
    if out.is_empty() {
        // Sampling 0 is always written; tolerate its absence as the default (1 s per sample).
        out.push(TimeSampling {
            time_per_cycle: 1.0,
            times: vec![0.0],
        });
    }
    Ok(out)
}

/// The indexed metadata: index 0 is empty, then per entry a u8 length and the text.
fn parse_indexed_metadata(buf: &[u8]) -> Result<Vec<String>, String> {
    let mut cursor = Cursor { buf, pos: 0 };
    let mut out = vec![String::new()];
    while !cursor.done() {
        let what = format!("entry {}", out.len());
        let len = cursor.u8(&what)? as usize;
        out.push(cursor.string(len, &what)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_values() {
        let md = "schema=AbcGeom_PolyMesh_v1;schemaBaseType=AbcGeom_GeomBase_v1";
        assert_eq!(metadata_value(md, "schema"), Some("AbcGeom_PolyMesh_v1"));
        assert_eq!(metadata_value(md, "nothing"), None);
        assert_eq!(metadata_value("", "schema"), None);
    }

    #[test]
    fn header_blocks_are_bounds_checked() {
        assert!(parse_time_samplings(&[1, 0, 0, 0])
            .unwrap_err()
            .contains("runs past the end"));
        // Claims 2^32-1 times in a few bytes: refused without allocating them.
        let mut b = 1u32.to_le_bytes().to_vec();
        b.extend_from_slice(&1.0f64.to_le_bytes());
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_time_samplings(&b).unwrap_err().contains("runs past the end"));
        let mut b = 1u32.to_le_bytes().to_vec();
        b.extend_from_slice(&f64::NAN.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        assert!(parse_time_samplings(&b).unwrap_err().contains("finite"));
        assert_eq!(parse_indexed_metadata(&[2, b'a', b'b']).unwrap(), ["", "ab"]);
        assert!(parse_indexed_metadata(&[5, b'a']).is_err());
    }
}
