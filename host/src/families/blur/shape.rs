//! The blur's shape: an image's width, height and channels, and the
//! radius of its window.

use std::fmt;

use clap::{Arg, ArgMatches, value_parser};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::family::{Parameter, Shape, dims, indexable, nonzero, option};

/// An image of `width × height` pixels of `channels` samples each, blurred
/// over a (2·radius+1)² window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlurShape {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub radius: u32,
}

impl BlurShape {
    pub fn new(width: usize, height: usize, channels: usize, radius: u32) -> Self {
        Self {
            width,
            height,
            channels,
            radius,
        }
    }

    /// The number of samples, once every dimension is non-zero and every
    /// index fits in `u32`.
    pub fn checked_len(self) -> Result<usize> {
        let width = nonzero("image width", self.width)?;
        let height = nonzero("image height", self.height)?;
        let channels = nonzero("image channels", self.channels)?;
        indexable("image (width×height×channels)", &[width, height, channels])
    }
}

impl fmt::Display for BlurShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            width,
            height,
            channels,
            radius,
        } = self;
        write!(f, "{width}×{height}×{channels} r={radius}")
    }
}

impl Shape for BlurShape {
    fn side(&self) -> f64 {
        (self.width as f64 * self.height as f64).sqrt()
    }

    fn short(&self) -> String {
        if self.width == self.height {
            self.width.to_string()
        } else {
            format!("{}×{}", self.width, self.height)
        }
    }

    fn parameter(&self) -> Option<Parameter> {
        let plural = if self.channels == 1 { "" } else { "s" };
        Some(Parameter {
            name: "radius r (the window is (2r+1)×(2r+1))",
            value: f64::from(self.radius),
            series: format!("{} channel{plural}", self.channels),
        })
    }

    /// Lists, so that one run or bench covers several; the bench's defaults
    /// sweep the radius at 1 and 3 channels.
    fn options(sweep: bool) -> Vec<Arg> {
        let (channels, radii) = if sweep {
            ("3,1", "3,1,8,32")
        } else {
            ("3", "3")
        };
        let channels_help =
            "Blur channels: 1 for grayscale, 3 for RGB; comma-separated for several";
        let radius_help = "Blur radius: the window is (2r+1)×(2r+1); comma-separated for several \
                           (a bench plots its throughput against size at the first radius and \
                           channel count, and its time against every radius at its largest size)";
        [
            option(
                "channels",
                "channels",
                value_parser!(usize),
                channels,
                channels_help,
            ),
            option("radius", "radius", value_parser!(u32), radii, radius_help),
        ]
        .map(|arg| arg.value_delimiter(','))
        .to_vec()
    }
    /// Every channel count at every radius, channels outermost.
    fn parse(sizes: &[usize], options: &ArgMatches) -> Vec<BlurShape> {
        let [width, height] = dims(sizes);
        let radii: Vec<u32> = options
            .get_many("radius")
            .expect("the option has a default")
            .copied()
            .collect();
        options
            .get_many::<usize>("channels")
            .expect("the option has a default")
            .flat_map(|&channels| {
                radii
                    .iter()
                    .map(move |&radius| BlurShape::new(width, height, channels, radius))
            })
            .collect()
    }
}
