//! What the PTX the build produced must and must not contain, for every
//! kernel of every family: one module for what each build targets, one for
//! the entry points, one for the memory spaces and one for the
//! instructions the lessons name, the two builds and how to find an entry
//! point's body in a module of their own.

mod builds;
mod entries;
mod instructions;
mod memory;
mod targets;
