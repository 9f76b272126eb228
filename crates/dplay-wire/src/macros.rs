//! `open_enum!`: protocol codes as open newtypes with named constants (STYLE.md §3).
//!
//! Unknown values still parse and can be reported; `name()` gives the spec's spelling.

/// Declares `struct Name(pub int)` with named constants, `name()`, `ALL`, `Debug`, `Display`
/// and `Serialize` (the name when known, else the number).
#[macro_export]
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident($int:ty) {
            $( $(#[$cmeta:meta])* $konst:ident = $val:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        $vis struct $name(pub $int);

        impl $name {
            $( $(#[$cmeta])* pub const $konst: Self = Self($val); )*

            /// Every named value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$konst),*];

            /// The spec's name for this value, or `None` for a value the spec does not define.
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $val => Some(stringify!($konst)), )*
                    _ => None,
                }
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "{}({:#x})", stringify!($name), self.0),
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(self, f)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self.name() {
                    Some(n) => s.serialize_str(n),
                    None => s.serialize_u64(self.0 as u64),
                }
            }
        }
    };
}
