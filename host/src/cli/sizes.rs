//! Each family's size option and its own options, made from the family
//! list rather than written out, so that a new family brings its own; and
//! the parser of a size, `A`, `AxB` or `AxBxC`.

use std::collections::HashMap;

use clap::{Arg, ArgMatches, Args, Command as ClapCommand, FromArgMatches};

use crate::error::Result;
use crate::families::{self, Visitor};
use crate::family::{Family, Shape, Sizes, Target};

/// Each family's size option and its own options, made from the family
/// list: `--NAME SIZE` for a run, `--NAME-sizes SIZES` (a sweep) for the
/// bench when `SWEEP`.
#[derive(Clone, Debug)]
pub struct FamilySizes<const SWEEP: bool> {
    matches: ArgMatches,
}

/// The size option's id and flag for family `name`.
fn size_option(name: &'static str, sweep: bool) -> String {
    if sweep {
        format!("{name}-sizes")
    } else {
        name.to_string()
    }
}

impl<const SWEEP: bool> FamilySizes<SWEEP> {
    /// No size given, every option at its default.
    pub(super) fn unset() -> Self {
        let command = Self::augment_args(ClapCommand::new("locality"));
        Self {
            matches: command.get_matches_from(["locality"]),
        }
    }

    /// The default sizes for `target`, with the options given.
    pub(super) fn defaults(&self, target: Target) -> Sizes {
        Sizes::new(HashMap::new(), self.matches.clone(), target)
    }

    /// Whether any family's size was given.
    pub(super) fn any_given(&self) -> bool {
        self.sizes(Target::Gpu).any_given()
    }

    /// The sizes given for each family, its defaults for `target` where none
    /// was.
    pub(super) fn sizes(&self, target: Target) -> Sizes {
        struct Given<'a> {
            matches: &'a ArgMatches,
            sweep: bool,
            given: HashMap<String, Vec<Vec<usize>>>,
        }
        impl Visitor for Given<'_> {
            fn visit<F: Family>(&mut self) -> Result<()> {
                let id = size_option(F::NAME, self.sweep);
                if let Some(sizes) = self.matches.get_many::<Vec<usize>>(&id) {
                    self.given
                        .insert(F::NAME.to_string(), sizes.cloned().collect());
                }
                Ok(())
            }
        }
        let mut given = Given {
            matches: &self.matches,
            sweep: SWEEP,
            given: HashMap::new(),
        };
        families::visit(&mut given).expect("reading options cannot fail");
        Sizes::new(given.given, self.matches.clone(), target)
    }
}

impl<const SWEEP: bool> FromArgMatches for FamilySizes<SWEEP> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self {
            matches: matches.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.matches = matches.clone();
        Ok(())
    }
}

impl<const SWEEP: bool> Args for FamilySizes<SWEEP> {
    fn augment_args(command: ClapCommand) -> ClapCommand {
        struct Options {
            sweep: bool,
            args: Vec<Arg>,
        }
        impl Visitor for Options {
            fn visit<F: Family>(&mut self) -> Result<()> {
                let id = size_option(F::NAME, self.sweep);
                let known = |args: &[Arg], id: &str| args.iter().any(|arg| arg.get_id() == id);
                if known(&self.args, &id) {
                    return Ok(());
                }
                let dims = F::SIZE.dims();
                let parse = move |text: &str| parse_dims(text, dims);
                let show = |dims: &[usize]| {
                    dims.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join("x")
                };
                let size = Arg::new(id.clone())
                    .long(id)
                    .value_name(F::SIZE.value_name)
                    .value_parser(parse);
                let size = if self.sweep {
                    size.value_delimiter(',')
                        .default_value(F::SIZE.sweep)
                        .help(format!("{}; comma-separated for a sweep", F::SIZE.help))
                } else {
                    size.help(format!(
                        "{} [default: {} on the GPU, {} emulated]",
                        F::SIZE.help,
                        show(F::SIZE.on_gpu),
                        show(F::SIZE.emulated)
                    ))
                };
                self.args.push(size);
                for option in F::Shape::options(self.sweep) {
                    if !known(&self.args, option.get_id().as_str()) {
                        self.args.push(option);
                    }
                }
                Ok(())
            }
        }
        let mut options = Options {
            sweep: SWEEP,
            args: Vec::new(),
        };
        families::visit(&mut options).expect("listing options cannot fail");
        command.args(options.args)
    }

    fn augment_args_for_update(command: ClapCommand) -> ClapCommand {
        Self::augment_args(command)
    }
}

/// Parses `A`, `AxB` or `AxBxC` (`×` allowed too) into `dims` dimensions or
/// one, which stands for all of them.
pub(super) fn parse_dims(text: &str, dims: usize) -> Result<Vec<usize>, String> {
    let parts: Vec<usize> = text
        .split(['x', '×'])
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .map_err(|e| format!("'{part}' is not a size: {e}"))
        })
        .collect::<Result<_, _>>()?;
    match parts.len() {
        1 => Ok(vec![parts[0]; dims]),
        n if n == dims => Ok(parts),
        n => Err(format!(
            "expected 1 or {dims} sizes separated by 'x', got {n}"
        )),
    }
}
