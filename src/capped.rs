//! Reading documents we do not control (instance answers, feeds, advisory files, the
//! operator's configuration, policy and baseline files) into typed values without building a
//! tree of them, so a hostile document costs about what we keep of it, not many times its size.
//!
//! serde's visitor is written once, in [`Read`]: a reader says what it does with a
//! [`Shallow`] value (a scalar, or a list or mapping it does not look into) and, when it wants
//! to, with a list or a mapping ([`Reader`]). On that, the wrappers that `#[derive(Deserialize)]`
//! structs use:
//!
//! - [`Text`], [`Flag`], [`NonNull`], [`Obj`]: a member of an unexpected type counts as absent
//!   (as `Value::as_str` and friends did), and is skipped unread; a kept string is cut at
//!   [`MAX_STRING`] bytes (a [`Shallow`] string is copied whole, one at a time, and cut where
//!   it is kept);
//! - [`ForEach`] visits a list element by element, so the caller keeps only what it converts,
//!   never one entry per element of a list of `{}`; [`Listed`] keeps at most `N` elements;
//! - [`BoundedValue`] keeps a whole subtree within a budget of values;
//! - [`each_member`] and [`ObjSeed`] read an object member by member where the members depend
//!   on a context (or where a later member of the same name must win, which derive refuses).
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

/// A value as far as a reader looks at it by itself: a scalar as written, a list or a mapping
/// only by its kind (its contents skipped unread).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Shallow {
    /// `null`, or YAML's empty value; also what an absent member reads as.
    #[default]
    Null,
    Bool(bool),
    /// As JSON writes it (`4`, `0.5`, `3.0`).
    Number(String),
    Text(String),
    List,
    Mapping,
}

impl Shallow {
    /// The kind of value, for messages (`minimum_rating is a list, not an integer`).
    pub fn kind(&self) -> &'static str {
        match self {
            Shallow::Null => "empty",
            Shallow::Bool(_) => "a boolean",
            Shallow::Number(_) => "a number",
            Shallow::Text(_) => "text",
            Shallow::List => "a list",
            Shallow::Mapping => "a mapping",
        }
    }

    /// A scalar as text (`true`, `4`, `0.5`, the string itself); `None` for null, a list or a
    /// mapping.
    pub fn into_plain(self) -> Option<String> {
        match self {
            Shallow::Bool(b) => Some(b.to_string()),
            Shallow::Number(text) | Shallow::Text(text) => Some(text),
            Shallow::Null | Shallow::List | Shallow::Mapping => None,
        }
    }
}

impl<'de> Deserialize<'de> for Shallow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shallow, D::Error> {
        struct AsIs;
        impl Reader<'_> for AsIs {
            type Value = Shallow;
            fn shallow<E: de::Error>(self, value: Shallow) -> Result<Shallow, E> {
                Ok(value)
            }
        }
        read(d, AsIs)
    }
}

/// What a reader does with a value of any type. By default a list or mapping is skipped and
/// handed to [`Reader::shallow`] as [`Shallow::List`] or [`Shallow::Mapping`].
pub trait Reader<'de>: Sized {
    type Value;

    fn shallow<E: de::Error>(self, value: Shallow) -> Result<Self::Value, E>;

    fn list<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        self.shallow(Shallow::List)
    }

    fn mapping<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        self.shallow(Shallow::Mapping)
    }
}

/// Reads one value of any type with `reader`.
pub fn read<'de, D: Deserializer<'de>, R: Reader<'de>>(
    d: D,
    reader: R,
) -> Result<R::Value, D::Error> {
    d.deserialize_any(Read(reader))
}

/// The one serde visitor: hands every value to its [`Reader`].
pub struct Read<R>(pub R);

impl<'de, R: Reader<'de>> DeserializeSeed<'de> for Read<R> {
    type Value = R::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<R::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, R: Reader<'de>> Visitor<'de> for Read<R> {
    type Value = R::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Null)
    }
    /// YAML gives a present value this way.
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<R::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Number(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Number(v.to_string()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Number(v.to_string()))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Number(v.to_string()))
    }
    /// As JSON writes it (`3.0`, never `3`); a non-finite float (no JSON number, and refused
    /// by `files::yaml_options`) would read as text.
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<R::Value, E> {
        self.0.shallow(match serde_json::Number::from_f64(v) {
            Some(n) => Shallow::Number(n.to_string()),
            None => Shallow::Text(v.to_string()),
        })
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Text(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<R::Value, E> {
        self.0.shallow(Shallow::Text(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<R::Value, A::Error> {
        self.0.list(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<R::Value, A::Error> {
        self.0.mapping(map)
    }
}

fn cut(mut text: String) -> String {
    if text.len() > MAX_STRING {
        let mut end = MAX_STRING;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.shrink_to_fit();
    }
    text
}

/// A string member (cut at [`MAX_STRING`]); any other type reads as absent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "Shallow")]
pub struct Text(pub Option<String>);

impl From<Shallow> for Text {
    fn from(value: Shallow) -> Text {
        match value {
            Shallow::Text(text) => Text(Some(cut(text))),
            _ => Text(None),
        }
    }
}

impl Text {
    /// A string as read from a document (cut at `MAX_STRING`).
    pub fn new(text: &str) -> Text {
        Text::from(Shallow::Text(text.to_string()))
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

/// A boolean member; any other type reads as absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "Shallow")]
pub struct Flag(pub Option<bool>);

impl From<Shallow> for Flag {
    fn from(value: Shallow) -> Flag {
        match value {
            Shallow::Bool(b) => Flag(Some(b)),
            _ => Flag(None),
        }
    }
}

/// Whether a member holds anything but `null` (`withdrawn`, `withdrawn_at`); absent is false.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "Shallow")]
pub struct NonNull(pub bool);

impl From<Shallow> for NonNull {
    fn from(value: Shallow) -> NonNull {
        NonNull(value != Shallow::Null)
    }
}

/// An object member read as `T` (a small `#[derive(Deserialize)]` struct of lenient members,
/// unknown members skipped); any other type reads as absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Obj<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Obj<T>, D::Error> {
        struct AsObj<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Reader<'de> for AsObj<T> {
            type Value = Obj<T>;
            fn shallow<E: de::Error>(self, _: Shallow) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
        }
        read(d, AsObj(PhantomData))
    }
}

/// A list of at most `N` elements read as `T`, the rest skipped unread; or the value that
/// stands there instead.
#[derive(Debug, PartialEq)]
pub enum Listed<T, const N: usize> {
    List {
        items: Vec<T>,
        /// The list had more than `N` elements.
        more: bool,
    },
    Other(Shallow),
}

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Listed<T, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct AsList<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> Reader<'de> for AsList<T, N> {
            type Value = Listed<T, N>;
            fn shallow<E: de::Error>(self, value: Shallow) -> Result<Listed<T, N>, E> {
                Ok(Listed::Other(value))
            }
            fn list<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Listed<T, N>, A::Error> {
                let mut items = Vec::new();
                while items.len() < N {
                    match seq.next_element()? {
                        Some(item) => items.push(item),
                        None => return Ok(Listed::List { items, more: false }),
                    }
                }
                let more = seq.next_element::<IgnoredAny>()?.is_some();
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Listed::List { items, more })
            }
        }
        read(d, AsList(PhantomData))
    }
}

/// Visits a list element by element: `each` gets every element as `seed` reads it, and
/// keeps what it wants. Any other value is skipped: the value is `None` for a list, else what
/// stood there instead.
pub struct ForEach<S, F> {
    pub seed: S,
    pub each: F,
}

impl<'de, S, F> DeserializeSeed<'de> for ForEach<S, F>
where
    S: DeserializeSeed<'de> + Clone,
    F: FnMut(S::Value),
{
    type Value = Option<Shallow>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Shallow>, D::Error> {
        read(d, self)
    }
}

impl<'de, S, F> Reader<'de> for ForEach<S, F>
where
    S: DeserializeSeed<'de> + Clone,
    F: FnMut(S::Value),
{
    type Value = Option<Shallow>;

    fn shallow<E: de::Error>(self, value: Shallow) -> Result<Option<Shallow>, E> {
        Ok(Some(value))
    }

    fn list<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Option<Shallow>, A::Error> {
        while let Some(value) = seq.next_element_seed(self.seed.clone())? {
            (self.each)(value);
        }
        Ok(None)
    }
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

/// Reads an object into `T` through [`Members`]; any other value is skipped and given as
/// what it was instead.
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
    type Value = Result<T, Shallow>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Result<T, Shallow>, D::Error> {
        read(d, self)
    }
}

impl<'de, T: Members<C>, C: Copy> Reader<'de> for ObjSeed<T, C> {
    type Value = Result<T, Shallow>;

    fn shallow<E: de::Error>(self, value: Shallow) -> Result<Result<T, Shallow>, E> {
        Ok(Err(value))
    }

    fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<Result<T, Shallow>, A::Error> {
        let mut value = T::default();
        each_member(map, |key, map| value.member(self.ctx, key, map))?;
        Ok(Ok(value))
    }
}

/// Reads the members named `keys` of a JSON document's top-level object as `T` (a lenient
/// reader: another JSON type reads as absent), skipping every other member unread; a later
/// member of the same name wins, as in an object read whole. All `T::default()` when the
/// document is JSON but not an object; `None` when the body is not JSON.
pub fn json_members<T, const N: usize>(body: &[u8], keys: [&str; N]) -> Option<[T; N]>
where
    T: for<'de> Deserialize<'de> + Default,
{
    struct Members<'k, T, const N: usize>(&'k [&'k str; N], PhantomData<T>);
    impl<'de, T, const N: usize> Reader<'de> for Members<'_, T, N>
    where
        T: for<'a> Deserialize<'a> + Default,
    {
        type Value = [T; N];
        fn shallow<E: de::Error>(self, _: Shallow) -> Result<[T; N], E> {
            Ok(std::array::from_fn(|_| T::default()))
        }
        fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<[T; N], A::Error> {
            let mut values: [T; N] = std::array::from_fn(|_| T::default());
            each_member(map, |key, map| {
                match self.0.iter().position(|k| *k == key) {
                    Some(i) => values[i] = map.next_value()?,
                    None => return Ok(false),
                }
                Ok(true)
            })?;
            Ok(values)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let values = read(&mut de, Members(&keys, PhantomData)).ok()?;
    de.end().ok()?;
    Some(values)
}

/// Reads any value into a `serde_json::Value`, counting every value (object, list, scalar)
/// against a budget shared by all the values read with it: past the budget the read fails, so
/// a document of a million `{}` never becomes a tree. For the few members whose whole subtree
/// we keep.
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
        read(d, self)
    }
}

impl<'de> Reader<'de> for BoundedValue<'_> {
    type Value = serde_json::Value;

    fn shallow<E: de::Error>(self, value: Shallow) -> Result<serde_json::Value, E> {
        use serde_json::Value;
        self.spend()?;
        Ok(match value {
            Shallow::Null | Shallow::List | Shallow::Mapping => Value::Null,
            Shallow::Bool(b) => Value::Bool(b),
            Shallow::Number(n) => n.parse().map_or(Value::Null, Value::Number),
            Shallow::Text(text) => Value::String(text),
        })
    }

    fn list<A: SeqAccess<'de>>(self, mut seq: A) -> Result<serde_json::Value, A::Error> {
        self.spend()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn mapping<A: MapAccess<'de>>(self, mut map: A) -> Result<serde_json::Value, A::Error> {
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
        let other = ForEach {
            seed: PhantomData::<Obj<Inner>>,
            each: |o: Obj<Inner>| seen.push(o.0.map(|i| i.value.0)),
        }
        .deserialize(&mut de)
        .unwrap();
        assert_eq!(other, None);
        assert_eq!(seen, [Some(Some("a".to_string())), None, Some(None)]);
        let mut de = serde_json::Deserializer::from_str(r#"{"a": [1, 2]}"#);
        let other = ForEach {
            seed: PhantomData::<Text>,
            each: |_| panic!("not a list"),
        }
        .deserialize(&mut de)
        .unwrap();
        assert_eq!(other, Some(Shallow::Mapping));
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

    #[test]
    fn shallow_values_keep_scalars_as_written_and_only_name_the_rest() {
        let read = |text: &str| serde_json::from_str::<Shallow>(text).unwrap();
        assert_eq!(read("null"), Shallow::Null);
        assert_eq!(read("true"), Shallow::Bool(true));
        assert_eq!(read("-4"), Shallow::Number("-4".into()));
        assert_eq!(read("3.0"), Shallow::Number("3.0".into()));
        assert_eq!(read("\"x\""), Shallow::Text("x".into()));
        assert_eq!(read("[[1], {}]"), Shallow::List);
        assert_eq!(read("{\"a\": [1]}"), Shallow::Mapping);
        let yaml = |text: &str| {
            serde_saphyr::from_str_with_options::<Shallow>(text, crate::files::yaml_options())
                .unwrap()
        };
        assert_eq!(yaml("0.5"), Shallow::Number("0.5".into()));
        assert_eq!(yaml("~"), Shallow::Null);
        assert_eq!(Shallow::Bool(false).into_plain().as_deref(), Some("false"));
        assert_eq!(Shallow::List.into_plain(), None);
    }

    #[test]
    fn listed_keeps_at_most_n_and_skips_the_rest() {
        let many = format!("[{}{{}}]", "{},".repeat(1_000_000));
        let listed: Listed<Shallow, 3> = serde_json::from_str(&many).unwrap();
        assert_eq!(
            listed,
            Listed::List {
                items: vec![Shallow::Mapping; 3],
                more: true
            }
        );
        let listed: Listed<Shallow, 3> = serde_json::from_str("[1, \"a\"]").unwrap();
        assert!(matches!(listed, Listed::List { ref items, more: false } if items.len() == 2));
        let listed: Listed<Shallow, 3> = serde_json::from_str("{}").unwrap();
        assert_eq!(listed, Listed::Other(Shallow::Mapping));
    }
}
