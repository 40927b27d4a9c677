//! A JSON tree that borrows from the file's text: keys and strings without escapes are slices
//! of the JSON chunk, objects are small vectors. The glTF JSON of an animated character holds
//! tens of thousands of small objects (accessors, buffer views, channels); building and
//! dropping `serde_json::Value` for them (a `String` per key, a B-tree per object) cost more
//! than all the reading done afterwards.
//!
//! Parsing is still serde_json's (same syntax errors, same nesting limit); only the tree built
//! from it differs. Lookups behave as `serde_json::Value`'s: with a duplicated key the last
//! one wins, and [`fmt::Display`] writes compact JSON with object keys sorted, as
//! `serde_json::Value` does, so error messages quoting a value are unchanged.

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;
use std::borrow::Cow;
use std::fmt;

/// One JSON value borrowing from the text it was parsed from.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    Object(Obj<'a>),
}

/// A JSON object: its members in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Obj<'a>(Vec<(Cow<'a, str>, Value<'a>)>);

impl<'a> Obj<'a> {
    /// The member named `key` (the last one when the key is repeated, as serde_json keeps).
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'a> Value<'a> {
    /// `self[key]` when `self` is an object.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.as_object().and_then(|o| o.get(key))
    }

    pub fn as_object(&self) -> Option<&Obj<'a>> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A non-negative integer. JSON does not tell integers from floats, so a number written
    /// `1.0`, `1e0` or `10e-1` is the integer 1 too (glTF validator `integer_written_as_float`);
    /// a fraction, a negative number or one past 2^53 (where f64 stops holding every integer,
    /// e.g. `1e+300`) is not.
    pub fn as_u64(&self) -> Option<u64> {
        /// 2^53: every integer up to here is exact in an f64.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        match self {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|x| x.fract() == 0.0 && (0.0..=EXACT).contains(x))
                    .map(|x| x as u64)
            }),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }
}

/// Compact JSON, object keys sorted and repeated keys collapsed to the last, exactly as
/// `serde_json::Value` prints.
impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{n}"),
            Value::String(s) => write_string(f, s),
            Value::Array(items) => {
                f.write_str("[")?;
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Object(obj) => {
                let mut keys: Vec<&str> = obj.0.iter().map(|(k, _)| k.as_ref()).collect();
                keys.sort_unstable();
                keys.dedup();
                f.write_str("{")?;
                for (k, key) in keys.iter().enumerate() {
                    if k > 0 {
                        f.write_str(",")?;
                    }
                    write_string(f, key)?;
                    f.write_str(":")?;
                    if let Some(v) = obj.get(key) {
                        write!(f, "{v}")?;
                    }
                }
                f.write_str("}")
            }
        }
    }
}

fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    // serde_json's own escaping; serialising a `str` cannot fail.
    f.write_str(&serde_json::to_string(s).unwrap_or_default())
}

/// Parse JSON text into a borrowed tree (serde_json's parser and error messages).
pub(super) fn parse(text: &[u8]) -> Result<Value<'_>, serde_json::Error> {
    serde_json::from_slice(text)
}

impl<'de> Deserialize<'de> for Value<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value<'de>, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value<'de>, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value<'de>, E> {
        Ok(Value::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value<'de>, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value<'de>, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value<'de>, E> {
        // serde_json's Value also turns a non-finite number (not producible from JSON text) into null.
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Value<'de>, E> {
        Ok(Value::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value<'de>, E> {
        Ok(Value::String(Cow::Owned(s.to_string())))
    }

    fn visit_string<E>(self, s: String) -> Result<Value<'de>, E> {
        Ok(Value::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value<'de>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value()?;
            members.push((key, value));
        }
        Ok(Value::Object(Obj(members)))
    }
}

/// Object keys, borrowed from the text when they hold no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_serde_json_value() {
        let texts = [
            r#"{"b":[1,2.5,-3,true,null],"a":"x\"y\u00e9\n","c":{"z":1,"y":{}}}"#,
            r#"{"k":1,"k":2}"#,
            r#"[1e300,0.1,-0.0,18446744073709551615,-9223372036854775808]"#,
        ];
        for text in texts {
            let ours = parse(text.as_bytes()).unwrap();
            let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
        }
    }

    #[test]
    fn lookups_borrow_and_last_key_wins() {
        let v = parse(br#"{"a":{"b":"plain","c":"esc\taped"},"a2":3,"a2":4}"#).unwrap();
        let a = v.get("a").unwrap();
        assert!(matches!(a.get("b"), Some(Value::String(Cow::Borrowed("plain")))));
        assert_eq!(a.get("c").and_then(Value::as_str), Some("esc\taped"));
        assert_eq!(v.get("a2").and_then(Value::as_u64), Some(4));
        assert_eq!(v.get("missing"), None);
        assert!(parse(b"{\"a\":").is_err());
    }

    #[test]
    fn integers_written_as_floats_are_integers() {
        let v = parse(br#"[1.0, 1e0, 10e-1, 30e-1, 0.1e1, -0.0, 1.5, -1.0, 1e+300, 1e16]"#).unwrap();
        let got: Vec<Option<u64>> = v.as_array().unwrap().iter().map(Value::as_u64).collect();
        assert_eq!(
            got,
            vec![
                Some(1),
                Some(1),
                Some(1),
                Some(3),
                Some(1),
                Some(0),
                None,
                None,
                None,
                None
            ]
        );
    }
}
