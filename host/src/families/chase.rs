//! The latency lesson's pointer chase: its shapes, the chain and the
//! reference. The chain is one random cycle through every line of the
//! buffer, so that hops land on lines no hop before them touched, with no
//! pattern a prefetcher could follow; the reference walks it on the CPU.

use kernels::chase::{Args, KERNELS, LINE, Problem};
use rand::Rng;

use crate::families::prelude::*;

shape! {
    /// A chain of n elements, `hops` links followed from element `start`.
    pub struct ChaseShape {
        pub n: usize,
        #[option("hops", "HOPS", "4096", "Links the latency lesson's chase follows")]
        pub hops: usize,
        #[option("start", "ELEMENT", "0", "Where the latency lesson's chase starts: the first element of a line")]
        pub start: usize,
    }
    shown("{n} hops={hops} from {start}"), side(n)
}

/// Where `hops` links of `chain` lead from `start`.
fn walk(chain: &[u32], start: usize, hops: usize) -> u32 {
    (0..hops).fold(start as u32, |at, _| chain[at as usize])
}

family! {
    pub struct Chase("chase", Memory, "n (elements of the chain)") {
        size: SizeSyntax::n("Elements of the latency lesson's chain, 32 a line", &[1 << 26], &[4096], "262144,67108864"),
        shape: ChaseShape, inputs: Vec<u32>, layout: Arrays<2>, buffers: InputOutput<B, u32>,
        cpu: "the same walk, one core",
    }
}

impl Family for Chase {
    /// A whole number of lines, every index within u32, a start on a
    /// line's first element inside the chain, and hops within u32.
    fn problem(shape: ChaseShape) -> Result<Problem> {
        let n = nonzero("n (elements of the chain)", shape.n)?;
        let why = "the chain's hops land on the first element of a 128-byte line";
        multiple_of("n (elements of the chain)", shape.n, LINE as usize, why)?;
        at_most("hops", shape.hops as u128, u32::MAX)?;
        at_most("the chase's start", shape.start as u128, n - 1)?;
        multiple_of("the chase's start", shape.start, LINE as usize, why)?;
        Ok(Problem)
    }

    /// One line and none, one and many hops; a walk longer than the cycle;
    /// starts past the first line.
    fn test_shapes() -> Vec<ChaseShape> {
        [
            (32, 0, 0),
            (32, 3, 0),
            (64, 5, 32),
            (3200, 1000, 0),
            (3200, 250, 1600),
            (1 << 15, 3000, 4096),
        ]
        .map(ChaseShape::from)
        .to_vec()
    }

    /// No arithmetic; a word read a hop and one written.
    fn work(shape: ChaseShape) -> Work {
        Work::new(Op::None, 0.0, 4.0 * shape.hops as f64, 4.0)
    }

    /// The whole chain: a walk may start anywhere in it.
    fn footprint(shape: ChaseShape) -> f64 {
        4.0 * shape.n as f64
    }

    fn host_bytes(shape: ChaseShape) -> f64 {
        8.0 * shape.n as f64
    }

    /// Sattolo's shuffle of the lines: one cycle through all of them, each
    /// line's first element holding the index of the next line's; the
    /// rest of each line never read, and random.
    fn inputs(shape: ChaseShape, rng: &mut SmallRng) -> Result<Vec<u32>> {
        Self::problem(shape)?;
        let lines = shape.n / LINE as usize;
        let mut order: Vec<u32> = (0..lines as u32).collect();
        for i in (1..lines).rev() {
            order.swap(i, rng.random_range(0..i));
        }
        let mut chain: Vec<u32> = (0..shape.n)
            .map(|_| rng.random_range(0..shape.n as u32))
            .collect();
        for (&from, &to) in order.iter().zip(order.iter().cycle().skip(1)) {
            chain[(from * LINE) as usize] = to * LINE;
        }
        Ok(chain)
    }

    fn layout(shape: ChaseShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(["chain", "reached"], [shape.n, 1]))
    }

    /// Exact: an index.
    fn reference(shape: ChaseShape, chain: &Vec<u32>) -> Expected {
        Expected::exact(vec![f64::from(walk(chain, shape.start, shape.hops))])
    }

    fn cpu(shape: ChaseShape, chain: &Vec<u32>) -> CpuOutput {
        CpuOutput::U32(vec![walk(chain, shape.start, shape.hops)])
    }

    /// Every index of the chain lies inside it and the start on its cycle
    /// (`inputs` and `problem`); `reached` has its element.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.shape.start as u32, on.shape.hops as u32)
    }
}
