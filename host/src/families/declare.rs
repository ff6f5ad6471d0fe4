//! The declaration every family makes: its names, sizes and types, in the
//! few lines [`family!`] takes, so that a family's file shows them at a
//! glance and spends the rest on what is particular to its problem.

/// Declares a family: the unit struct `$name(NAME, BOUND, SQUARE_AXIS)`
/// and its [`Declaration`](crate::family::Declaration). Its kernels are the
/// `Args`, `Problem` and `KERNELS` its file imports from its kernels'
/// module; `bound` names a [`Bound`](crate::family::Bound); `buffers` may
/// name the backend `B`; a family that the bench times says `benched: true`.
macro_rules! family {
    (
        $(#[$doc:meta])*
        pub struct $name:ident($id:literal, $bound:ident, $axis:expr) {
            size: $size:expr,
            shape: $shape:ty, inputs: $inputs:ty, layout: $layout:ty, buffers: $buffers:ty,
            cpu: $cpu:expr $(, benched: $benched:literal)? $(,)?
        }
    ) => {
        $(#[$doc])*
        pub struct $name;

        impl $crate::family::Declaration for $name {
            const NAME: &'static str = $id;
            const SIZE: $crate::family::SizeSyntax = $size;
            const BOUND: $crate::family::Bound = $crate::family::Bound::$bound;
            const SQUARE_AXIS: &'static str = $axis;
            $(const BENCHED: bool = $benched;)?

            type Args = Args;
            type Problem = Problem;
            const KERNELS: &'static $crate::family::Kernels<Self> = KERNELS;

            type Shape = $shape;
            type Inputs = $inputs;
            type Layout = $layout;
            type Buffers<B: ::gpu_host::backend::Backend> = $buffers;

            const CPU: &'static str = $cpu;
        }
    };
}

pub(crate) use family;
