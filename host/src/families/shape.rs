//! The shape most families have: a struct of plain fields, shown as a
//! format string names them, its side one of them. Declared once here, so
//! that a family's file shows only its fields and how they read.

/// Declares a shape: the struct as written, `Copy` and serialisable with
/// its fields' names; its `Display`, the format string `shown`, which
/// names fields (and constants) as `format!` does; and its
/// [`Shape`](crate::family::Shape), whose side is the field `side` and
/// whose short form, where given, the format string `short`.
macro_rules! shape {
    (
        $(#[$doc:meta])*
        pub struct $name:ident {
            $(pub $field:ident: $type:ty),+ $(,)?
        }
        shown $shown:literal, side $side:ident $(, short $short:literal)?
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(pub $field: $type),+
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                // Every field by its name, for `shown` to name any of them.
                #[allow(unused_variables)]
                let Self { $($field),+ } = *self;
                write!(f, $shown)
            }
        }

        impl $crate::family::Shape for $name {
            fn side(&self) -> f64 {
                self.$side as f64
            }

            $crate::families::shape::shape!(@short [$($field),+] $($short)?);
        }
    };
    (@short [$($field:ident),+]) => {};
    (@short [$($field:ident),+] $short:literal) => {
        fn short(&self) -> String {
            #[allow(unused_variables)]
            let Self { $($field),+ } = *self;
            format!($short)
        }
    };
}

pub(crate) use shape;
