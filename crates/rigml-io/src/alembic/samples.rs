//! Reading a property's samples: the stored index of a sample, its data block with the
//! 16-byte digest removed, array dimensions checked, and typed views of the values.

use super::ogawa::{Child, Ogawa};
use super::schema::Property;

/// Bytes of the digest that opens every sample's data.
const SAMPLE_KEY: usize = 16;

/// A scalar or array property's stored samples, ready to read.
#[derive(Debug, Clone)]
pub(crate) struct Samples<'a> {
    ogawa: Ogawa<'a>,
    pub property: Property,
    children: Vec<Child>,
}

impl<'a> Samples<'a> {
    /// The samples of `property`, whose group holds `children`.
    pub(crate) fn new(ogawa: Ogawa<'a>, property: Property, children: Vec<Child>) -> Samples<'a> {
        Samples {
            ogawa,
            property,
            children,
        }
    }

    /// The data block at `child` of the property's group, for sample `i`.
    fn block(&self, i: u32, child: usize, per_sample: usize) -> Result<&'a [u8], String> {
        let p = &self.property;
        let place = || format!("property {} sample {i}", p.path);
        if i >= p.num_samples {
            return Err(format!("{}: the property has {} samples", place(), p.num_samples));
        }
        let Some(entry) = self.children.get(child) else {
            return Err(format!(
                "{}: stored sample {} is missing (the property group holds {} stored samples)",
                place(),
                child / per_sample,
                self.children.len() / per_sample
            ));
        };
        let offset = entry.data(&place())?;
        self.ogawa.data(offset).map_err(|e| format!("{}: {e}", place()))
    }

    /// The values of sample `i` of a scalar property (its digest removed).
    pub(crate) fn scalar(&self, i: u32) -> Result<&'a [u8], String> {
        let p = &self.property;
        let block = self.block(i, p.stored_index(i), 1)?;
        let values = strip_key(block).map_err(|e| format!("property {} sample {i}: {e}", p.path))?;
        let expected = p.pod.size() * p.extent;
        if p.pod.size() > 0 && values.len() != expected {
            return Err(format!(
                "property {} sample {i}: {} bytes of values, a {:?}×{} scalar has {expected}",
                p.path,
                values.len(),
                p.pod,
                p.extent
            ));
        }
        Ok(values)
    }

    /// The values of sample `i` of a numeric array property (its digest removed), checked
    /// against its dimensions: a whole number of elements of `pod` × `extent`.
    pub(crate) fn array(&self, i: u32) -> Result<&'a [u8], String> {
        let p = &self.property;
        let place = || format!("property {} sample {i}", p.path);
        let stored = p.stored_index(i);
        let element = p.pod.size() * p.extent;
        if element == 0 {
            return Err(format!("{}: string arrays are not read", place()));
        }
        let values = strip_key(self.block(i, 2 * stored, 2)?).map_err(|e| format!("{}: {e}", place()))?;
        let dims = self.block(i, 2 * stored + 1, 2)?;
        if values.len() % element != 0 {
            return Err(format!(
                "{}: {} bytes of values are not whole {:?}×{} elements",
                place(),
                values.len(),
                p.pod,
                p.extent
            ));
        }
        if !dims.is_empty() {
            if dims.len() % 8 != 0 {
                return Err(format!(
                    "{}: dimensions are {} bytes, not whole u64s",
                    place(),
                    dims.len()
                ));
            }
            let count = dims
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .try_fold(1u64, |acc, d| acc.checked_mul(d));
            if count != Some((values.len() / element) as u64) {
                return Err(format!(
                    "{}: dimensions give {} elements, the data holds {}",
                    place(),
                    count.map_or("too many".to_string(), |c| c.to_string()),
                    values.len() / element
                ));
            }
        }
        Ok(values)
    }
}

/// A sample's values without the 16-byte digest that opens them (empty data: no values).
fn strip_key(block: &[u8]) -> Result<&[u8], String> {
    match block.len() {
        0 => Ok(block),
        n if n < SAMPLE_KEY => Err(format!(
            "data of {n} bytes is shorter than its {SAMPLE_KEY}-byte digest"
        )),
        _ => Ok(&block[SAMPLE_KEY..]),
    }
}

/// Values of a little-endian f32 buffer.
pub(crate) fn f32s(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap_or_default()))
}

/// Values of a little-endian i32 buffer.
pub(crate) fn i32s(bytes: &[u8]) -> impl Iterator<Item = i32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap_or_default()))
}

/// Values of a little-endian f64 buffer.
pub(crate) fn f64s(bytes: &[u8]) -> impl Iterator<Item = f64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
}
