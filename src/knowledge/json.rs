//! Reading JSON we do not control (release and advisory feeds, advisory files) into typed values
//! without building a `serde_json::Value` tree, so a hostile document costs about what we keep
//! of it, not many times its size:
//!
//! - members we do not read are skipped as [`IgnoredAny`], which keeps nothing;
//! - a member of an unexpected JSON type counts as absent (as `Value::as_str` and friends did),
//!   and is skipped the same way;
//! - lists are visited element by element ([`ForEach`]), so the caller keeps only what it
//!   converts, never one entry per element of a list of `{}`;
//! - strings are cut at [`MAX_STRING`] bytes.
//!
//! serde_json's recursion limit (128 levels) stays on for what we read, which has a fixed depth;
//! what we skip, serde_json skips with a loop, so deep nesting costs neither stack nor more
//! than a byte per level.

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// The longest string kept from a document; a longer one is cut at a character boundary.
pub const MAX_STRING: usize = 64 * 1024;

/// Visitor methods that take any scalar (null, boolean, number, string) and give `$value`.
macro_rules! skip_scalars {
    ($value:expr) => {
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// Visitor method that takes a string and gives `$value`.
macro_rules! skip_str {
    ($value:expr) => {
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// Visitor method that consumes an array, keeping nothing, and gives `$value`.
macro_rules! skip_seq {
    ($value:expr) => {
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            $crate::knowledge::json::drain_seq(seq)?;
            Ok($value)
        }
    };
}

/// Visitor method that consumes an object, keeping nothing, and gives `$value`.
macro_rules! skip_map {
    ($value:expr) => {
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            $crate::knowledge::json::drain_map(map)?;
            Ok($value)
        }
    };
}

pub(crate) use {skip_map, skip_scalars, skip_seq};

/// Consumes the rest of an array without keeping anything.
pub fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Consumes the rest of an object without keeping anything.
pub fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

fn cut(text: &str) -> String {
    if text.len() <= MAX_STRING {
        return text.to_string();
    }
    let mut end = MAX_STRING;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// A string member; any other JSON type reads as absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text(pub Option<String>);

impl Text {
    /// A string as read from a document (cut at `MAX_STRING`).
    pub fn new(text: &str) -> Text {
        Text(Some(cut(text)))
    }

    /// The text trimmed, `None` when absent, not a string or blank.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref().map(str::trim).filter(|s| !s.is_empty())
    }

    /// Whether the member was a string at all (even a blank one).
    pub fn is_string(&self) -> bool {
        self.0.is_some()
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(Some(cut(v))))
            }
            skip_scalars!(Text(None));
            skip_seq!(Text(None));
            skip_map!(Text(None));
        }
        d.deserialize_any(V)
    }
}

/// A boolean member; any other JSON type reads as absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flag(pub Option<bool>);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Flag, E> {
                Ok(Flag(Some(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Flag, E> {
                Ok(Flag(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Flag, E> {
                Ok(Flag(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Flag, E> {
                Ok(Flag(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Flag, E> {
                Ok(Flag(None))
            }
            skip_str!(Flag(None));
            skip_seq!(Flag(None));
            skip_map!(Flag(None));
        }
        d.deserialize_any(V)
    }
}

/// Whether a member holds anything but `null` (`withdrawn`, `withdrawn_at`); absent is false.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonNull(pub bool);

impl<'de> Deserialize<'de> for NonNull {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<NonNull, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NonNull;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<NonNull, E> {
                Ok(NonNull(false))
            }
            fn visit_none<E: de::Error>(self) -> Result<NonNull, E> {
                Ok(NonNull(false))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<NonNull, E> {
                Ok(NonNull(true))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<NonNull, E> {
                Ok(NonNull(true))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<NonNull, E> {
                Ok(NonNull(true))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<NonNull, E> {
                Ok(NonNull(true))
            }
            skip_str!(NonNull(true));
            skip_seq!(NonNull(true));
            skip_map!(NonNull(true));
        }
        d.deserialize_any(V)
    }
}

/// An object member read as `T` (a small `#[derive(Deserialize)]` struct of lenient members,
/// unknown members skipped); any other JSON type reads as absent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Obj<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
            skip_scalars!(Obj(None));
            skip_str!(Obj(None));
            skip_seq!(Obj(None));
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The JSON type of a value we do not read, for messages ("a JSON list").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind(pub &'static str);

/// Visits an array element by element: `each` gets every element as `seed` reads it, and
/// keeps what it wants. Any other JSON value is skipped. The value says whether it was an
/// array.
pub struct ForEach<S, F> {
    pub seed: S,
    pub each: F,
}

impl<'de, S, F> DeserializeSeed<'de> for ForEach<S, F>
where
    S: DeserializeSeed<'de> + Clone,
    F: FnMut(S::Value),
{
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S, F> Visitor<'de> for ForEach<S, F>
where
    S: DeserializeSeed<'de> + Clone,
    F: FnMut(S::Value),
{
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<bool, A::Error> {
        while let Some(value) = seq.next_element_seed(self.seed.clone())? {
            (self.each)(value);
        }
        Ok(true)
    }

    skip_scalars!(false);
    skip_str!(false);
    skip_map!(false);
}

/// An object key, borrowed from the document when it can be.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// An object read member by member with a context `C` (the product family, a budget...):
/// `member` reads the value of a key it knows and returns true, or returns false and the
/// value is skipped.
pub trait Members<C: Copy>: Default {
    fn member<'de, A: MapAccess<'de>>(
        &mut self,
        ctx: C,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error>;
}

/// Reads an object into `T` through [`Members`]; any other JSON value is skipped and its
/// [`Kind`] given instead.
pub struct ObjSeed<T, C> {
    ctx: C,
    marker: PhantomData<fn() -> T>,
}

impl<T, C: Copy> ObjSeed<T, C> {
    pub fn new(ctx: C) -> Self {
        ObjSeed {
            ctx,
            marker: PhantomData,
        }
    }
}

impl<T, C: Copy> Clone for ObjSeed<T, C> {
    fn clone(&self) -> Self {
        ObjSeed::new(self.ctx)
    }
}

impl<'de, T: Members<C>, C: Copy> DeserializeSeed<'de> for ObjSeed<T, C> {
    type Value = Result<T, Kind>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Result<T, Kind>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: Members<C>, C: Copy> Visitor<'de> for ObjSeed<T, C> {
    type Value = Result<T, Kind>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Result<T, Kind>, A::Error> {
        let mut value = T::default();
        each_member(map, |key, map| value.member(self.ctx, key, map))?;
        Ok(Ok(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Result<T, Kind>, E> {
        Ok(Err(Kind("JSON null")))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Result<T, Kind>, E> {
        Ok(Err(Kind("a JSON boolean")))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Result<T, Kind>, E> {
        Ok(Err(Kind("a JSON number")))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Result<T, Kind>, E> {
        Ok(Err(Kind("a JSON number")))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Result<T, Kind>, E> {
        Ok(Err(Kind("a JSON number")))
    }
    skip_str!(Err(Kind("a JSON string")));
    skip_seq!(Err(Kind("a JSON list")));
}

/// Visits an object's members in document order; `member` reads the values it wants (and
/// returns true), the others are skipped.
pub fn each_member<'de, A: MapAccess<'de>>(
    mut map: A,
    mut member: impl FnMut(&str, &mut A) -> Result<bool, A::Error>,
) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<Key<'de>>()? {
        if !member(&key.0, &mut map)? {
            map.next_value::<IgnoredAny>()?;
        }
    }
    Ok(())
}

/// Reads any JSON value into a `serde_json::Value`, counting every value (object, list,
/// scalar) against a budget shared by all the values read with it: past the budget the read
/// fails, so a document of a million `{}` never becomes a tree. For the few members whose
/// whole subtree we keep.
#[derive(Clone, Copy)]
pub struct BoundedValue<'b> {
    pub budget: &'b std::cell::Cell<usize>,
}

impl BoundedValue<'_> {
    fn spend<E: de::Error>(&self) -> Result<(), E> {
        match self.budget.get().checked_sub(1) {
            Some(left) => {
                self.budget.set(left);
                Ok(())
            }
            None => Err(E::custom("more values than the budget allows")),
        }
    }
}

impl<'de> DeserializeSeed<'de> for BoundedValue<'_> {
    type Value = serde_json::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BoundedValue<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<serde_json::Value, E> {
        self.spend()?;
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<serde_json::Value, E> {
        self.visit_unit()
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<serde_json::Value, E> {
        self.spend()?;
        Ok(serde_json::Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<serde_json::Value, E> {
        self.spend()?;
        Ok(serde_json::Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<serde_json::Value, E> {
        self.spend()?;
        Ok(serde_json::Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<serde_json::Value, E> {
        self.spend()?;
        // As serde_json reads it into a Value.
        Ok(serde_json::Number::from_f64(v)
            .map_or(serde_json::Value::Null, serde_json::Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<serde_json::Value, E> {
        self.spend()?;
        Ok(serde_json::Value::String(v.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<serde_json::Value, A::Error> {
        self.spend()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<serde_json::Value, A::Error> {
        self.spend()?;
        let mut members = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            members.insert(key, value);
        }
        Ok(serde_json::Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_values_read_like_serde_json_within_their_budget() {
        let text = r#"{"a": [1, -2, 2.5, "x", null, true], "b": {"c": {}}}"#;
        let budget = std::cell::Cell::new(100);
        let mut de = serde_json::Deserializer::from_str(text);
        let value = BoundedValue { budget: &budget }
            .deserialize(&mut de)
            .unwrap();
        assert_eq!(
            value,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        // 1 object + list + 6 items + object + object = 10 values.
        assert_eq!(budget.get(), 90);
        let budget = std::cell::Cell::new(9);
        let mut de = serde_json::Deserializer::from_str(text);
        assert!(
            BoundedValue { budget: &budget }
                .deserialize(&mut de)
                .is_err()
        );
        let many = format!("[{}{{}}]", "{},".repeat(1_000_000));
        let budget = std::cell::Cell::new(1000);
        let mut de = serde_json::Deserializer::from_str(&many);
        assert!(
            BoundedValue { budget: &budget }
                .deserialize(&mut de)
                .is_err()
        );
    }

    #[derive(Deserialize, Default, Debug)]
    #[serde(default)]
    struct Sample {
        name: Text,
        on: Flag,
        gone: NonNull,
        inner: Obj<Inner>,
    }

    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default)]
    struct Inner {
        value: Text,
    }

    #[test]
    fn members_of_another_type_read_as_absent() {
        let s: Sample =
            serde_json::from_str(r#"{"name": 5, "on": "yes", "gone": null, "inner": [1]}"#)
                .unwrap();
        assert_eq!(s.name, Text(None));
        assert_eq!(s.on, Flag(None));
        assert!(!s.gone.0);
        assert_eq!(s.inner, Obj(None));
        let s: Sample = serde_json::from_str(
            r#"{"name": " x ", "on": true, "gone": {"a": [1]}, "inner": {"value": "v", "x": {}},
                "other": [[{"deep": 1}]]}"#,
        )
        .unwrap();
        assert_eq!(s.name.get(), Some("x"));
        assert_eq!(s.on, Flag(Some(true)));
        assert!(s.gone.0);
        assert_eq!(s.inner.0.unwrap().value.get(), Some("v"));
        assert_eq!(Text(Some("  ".into())).get(), None);
        assert!(Text(Some("  ".into())).is_string());
    }

    #[test]
    fn long_strings_are_cut_at_a_character_boundary() {
        let long = format!("\"{}\"", "é".repeat(MAX_STRING));
        let t: Text = serde_json::from_str(&long).unwrap();
        let kept = t.0.unwrap();
        assert!(kept.len() <= MAX_STRING && kept.len() > MAX_STRING - 4);
    }

    #[test]
    fn for_each_visits_arrays_and_skips_the_rest() {
        let mut seen = Vec::new();
        let mut de = serde_json::Deserializer::from_str(r#"[{"value": "a"}, 1, {"value": 2}]"#);
        let was_list = ForEach {
            seed: PhantomData::<Obj<Inner>>,
            each: |o: Obj<Inner>| seen.push(o.0.map(|i| i.value.0)),
        }
        .deserialize(&mut de)
        .unwrap();
        assert!(was_list);
        assert_eq!(seen, [Some(Some("a".to_string())), None, Some(None)]);
        let mut de = serde_json::Deserializer::from_str(r#"{"a": [1, 2]}"#);
        let was_list = ForEach {
            seed: PhantomData::<Text>,
            each: |_| panic!("not a list"),
        }
        .deserialize(&mut de)
        .unwrap();
        assert!(!was_list);
    }

    #[test]
    fn nesting_is_skipped_without_recursion() {
        // What we skip, serde_json skips with a loop (one byte per level), so even nesting far
        // beyond its recursion limit costs no stack; what we read has a fixed depth.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(serde_json::from_str::<Text>(&deep).unwrap(), Text(None));
        let unbalanced = "[".repeat(100_000);
        assert!(serde_json::from_str::<Text>(&unbalanced).is_err());
    }
}
