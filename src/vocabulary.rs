//! Fixed vocabularies: an enum and the names its values are written as, stated once
//! ([`vocabulary!`]). An option's choices, its parser and the enum it fills come from that one
//! list, so they cannot disagree or drift out of order.

/// A fixed set of values, each with the name an operator or a document writes.
pub trait Vocabulary: Copy + PartialEq + Sized + 'static {
    /// The values that have a name, in the order of [`Self::NAMES`].
    const NAMED: &'static [Self];
    /// Their names (an option row's `choices`).
    const NAMES: &'static [&'static str];

    /// The name of a value; `None` for a value that has none (a default nobody chooses).
    fn name(self) -> Option<&'static str> {
        let at = Self::NAMED.iter().position(|v| *v == self)?;
        Some(Self::NAMES[at])
    }

    fn from_name(name: &str) -> Option<Self> {
        let at = Self::NAMES.iter().position(|n| *n == name)?;
        Some(Self::NAMED[at])
    }
}

/// Declares an enum and its [`Vocabulary`]: `Variant = "name"`, or `Variant` alone for a value
/// nobody chooses by name (the monitoring output, which is the default).
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident $(= $text:literal)?),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$variant_meta])* $variant),*
        }

        impl $crate::vocabulary::Vocabulary for $name {
            // Each named value, once per name (the name is what repeats here).
            const NAMED: &'static [Self] = &[$($({
                let _ = $text;
                $name::$variant
            },)?)*];
            const NAMES: &'static [&'static str] = &[$($($text,)?)*];
        }

        impl $name {
            /// Its name; empty for a value nobody names.
            pub fn as_str(self) -> &'static str {
                $crate::vocabulary::Vocabulary::name(self).unwrap_or_default()
            }
        }

        /// Its name (nothing for a value without one).
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use vocabulary;

/// Writes and reads a vocabulary in documents by its names, `""` standing for its `Default`
/// (a value nobody names, such as "not stated"), and describes it to the JSON Schema as
/// exactly those strings: for names serde's renames cannot spell ("reverse proxy").
macro_rules! written_by_name {
    ($name:ident) => {
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use $crate::vocabulary::Vocabulary;
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                match $name::from_name(&text) {
                    Some(value) => Ok(value),
                    None if text.is_empty() => Ok($name::default()),
                    None => Err(serde::de::Error::unknown_variant(&text, $name::NAMES)),
                }
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                use $crate::vocabulary::Vocabulary;
                let mut names: Vec<&str> = $name::NAMES.to_vec();
                names.push("");
                schemars::json_schema!({ "type": "string", "enum": names })
            }
        }
    };
}
pub(crate) use written_by_name;

#[cfg(test)]
mod tests {
    use super::Vocabulary;
    use crate::output::Format;

    #[test]
    fn names_and_values_are_one_list() {
        assert_eq!(Format::NAMED.len(), Format::NAMES.len());
        for (value, name) in Format::NAMED.iter().zip(Format::NAMES) {
            assert_eq!(value.name(), Some(*name));
            assert_eq!(Format::from_name(name), Some(*value));
            assert_eq!(value.to_string(), *name);
        }
        // The default nobody chooses by name.
        assert_eq!(Vocabulary::name(Format::Monitoring), None);
        assert_eq!(Format::from_name("monitoring"), None);
        assert_eq!(Format::from_name("JSON"), None);
    }
}
