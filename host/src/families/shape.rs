//! The shape most families have: a struct of plain fields, its dimensions
//! first, read from the size in order, then its options, each read from
//! an option of the command line. Declared once here, so that a family's
//! file shows only its fields, their options and how they read.

/// Declares a shape: the struct as written, `Copy` and serialisable with
/// its fields' names, and buildable from a tuple of its fields in order;
/// its `Display`, the `format!` arguments `shown`; and its
/// [`Shape`](crate::family::Shape): its side the expression `side`, its
/// short form, where given, the expression `short`, its options the fields
/// marked `#[option(ID, VALUE_NAME, DEFAULT, HELP)]` (read as the field's
/// type, or by the value parser that follows HELP). Each expression and
/// format string names the fields as variables.
macro_rules! shape {
    (
        $(#[$doc:meta])*
        pub struct $name:ident {
            $(pub $dim:ident: usize,)+
            $(
                #[option($id:literal, $value_name:literal, $default:literal, $help:expr
                    $(, $parser:expr)?)]
                pub $option:ident: $type:ty,
            )*
        }
        shown($($shown:tt)+), side($side:expr) $(, short($short:expr))? $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(pub $dim: usize,)+
            $(pub $option: $type,)*
        }

        impl From<($($crate::families::shape::shape!(@usize $dim),)+ $($type,)*)> for $name {
            fn from(($($dim,)+ $($option,)*): ($($crate::families::shape::shape!(@usize $dim),)+ $($type,)*)) -> Self {
                Self { $($dim,)+ $($option,)* }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                #[allow(unused_variables)]
                let Self { $($dim,)+ $($option,)* } = *self;
                write!(f, $($shown)+)
            }
        }

        impl $crate::family::Shape for $name {
            #[allow(clippy::unnecessary_cast)]
            fn side(&self) -> f64 {
                #[allow(unused_variables)]
                let Self { $($dim,)+ $($option,)* } = *self;
                ($side) as f64
            }

            $crate::families::shape::shape!(@short [$($dim,)+ $($option,)*] $($short)?);

            fn options(_: bool) -> Vec<::clap::Arg> {
                vec![$($crate::family::option(
                    $id,
                    $value_name,
                    $crate::families::shape::shape!(@parser $type $(, $parser)?),
                    $default,
                    $help,
                )),*]
            }

            fn parse(dims: &[usize], options: &::clap::ArgMatches) -> Vec<Self> {
                let _ = options;
                let [$($dim),+] = $crate::family::dims(dims);
                vec![Self { $($dim,)+ $($option: $crate::family::value(options, $id),)* }]
            }
        }
    };
    (@short [$($field:ident,)+]) => {};
    (@short [$($field:ident,)+] $short:expr) => {
        fn short(&self) -> String {
            #[allow(unused_variables)]
            let Self { $($field,)+ } = *self;
            $short
        }
    };
    (@usize $dim:ident) => { usize };
    (@parser $type:ty) => { ::clap::value_parser!($type) };
    (@parser $type:ty, $parser:expr) => { $parser };
}

pub(crate) use shape;
