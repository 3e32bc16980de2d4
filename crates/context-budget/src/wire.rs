//! How the option enums are spelled outside Rust: one spelling for JSON, command-line
//! values and messages. serde's `rename_all` is the source; `FromStr`/`Display` and
//! `NAMES` here repeat it, and a test checks that the two agree.

use std::fmt;
use std::str::FromStr;

use crate::files::FileSort;
use crate::files::pack::{Detail, PackFormat, PackOrder};
use crate::fit::Strategy;
use crate::spec::SortOrder;

/// A name that is not one of `expected`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unknown value `{value}`; expected one of: {}", .expected.join(", "))]
pub struct UnknownName {
    pub value: String,
    pub expected: &'static [&'static str],
}

/// An enum with a fixed set of wire names.
pub trait WireName: Sized + Copy + 'static {
    /// Every value, in documentation order.
    const ALL: &'static [Self];
    /// Every value's name, in the order of [`Self::ALL`].
    const NAMES: &'static [&'static str];
    fn wire_name(self) -> &'static str;
}

macro_rules! wire_names {
    ($type:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl WireName for $type {
            const ALL: &'static [Self] = &[$(<$type>::$variant),+];
            const NAMES: &'static [&'static str] = &[$($name),+];
            fn wire_name(self) -> &'static str {
                match self {
                    $(<$type>::$variant => $name),+
                }
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.wire_name())
            }
        }

        impl FromStr for $type {
            type Err = UnknownName;
            fn from_str(value: &str) -> Result<Self, UnknownName> {
                match value {
                    $($name => Ok(<$type>::$variant),)+
                    _ => Err(UnknownName {
                        value: value.to_string(),
                        expected: <$type as WireName>::NAMES,
                    }),
                }
            }
        }
    };
}

wire_names!(Strategy { Last => "last", First => "first" });
wire_names!(SortOrder { Tokens => "tokens", Name => "name" });
wire_names!(FileSort { Tokens => "tokens", Path => "path" });
wire_names!(PackOrder {
    Given => "given",
    Smallest => "smallest",
    Path => "path",
    Mentioned => "mentioned",
    Recent => "recent",
});
wire_names!(PackFormat { Xml => "xml", Markdown => "markdown", Plain => "plain" });
wire_names!(Detail { Full => "full", Outline => "outline", Path => "path", Auto => "auto" });

#[cfg(test)]
mod tests {
    use super::*;

    fn agrees_with_serde<T>()
    where
        T: WireName
            + FromStr<Err = UnknownName>
            + fmt::Display
            + serde::Serialize
            + fmt::Debug
            + PartialEq,
    {
        for (value, name) in T::ALL.iter().zip(T::NAMES) {
            assert_eq!(serde_json::to_value(value).ok(), Some((*name).into()));
            assert_eq!(value.to_string(), *name);
            assert_eq!(name.parse::<T>().as_ref(), Ok(value));
        }
        assert_eq!(T::ALL.len(), T::NAMES.len());
        let unknown = "sideways".parse::<T>().expect_err("unknown");
        assert!(
            unknown.to_string().contains(&T::NAMES.join(", ")),
            "{unknown}"
        );
    }

    #[test]
    fn names_are_serde_names_and_parse_back() {
        agrees_with_serde::<Strategy>();
        agrees_with_serde::<SortOrder>();
        agrees_with_serde::<FileSort>();
        agrees_with_serde::<PackOrder>();
        agrees_with_serde::<PackFormat>();
        agrees_with_serde::<Detail>();
    }
}
