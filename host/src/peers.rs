//! The two-GPU lessons' kernels across two GPUs reaching each other's
//! memory: the one-shot all-reduce's sum, each GPU adding its own vector
//! and its peer's, read in place, and the latency lesson's chase through a
//! chain in the peer's memory, on either backend. `locality lessons`
//! without a GPU runs it on two emulated GPUs; the tests, on two GPUs too.

use gpu_emulator::{Diagnostic, Fault, Placement};
use gpu_host::Backend;
use gpu_host::Error as HostError;
use kernels::{chase, pair_sum};
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// Elements of each vector: whole fours and three past them.
pub const N: u32 = 4099;

/// Refuses peer access of a GPU to itself; where the first GPU does not
/// yet reach the second, checks that its kernel cannot take the second's
/// buffer; enables access both ways between `gpus`; has each sum its vector and the other's into a poisoned sum of
/// its own, after waiting for the other's uploads, and checks every
/// element of both sums, bit for bit, against the same sums on the CPU;
/// then chases a chain of the second GPU's from the first.
pub fn check_peers<B: Backend>(gpus: [&B; 2], seed: u64) -> Result<(), String> {
    let failed = |what: String| format!("{what} on the {}, seed {seed}", gpus[0].description());
    match gpus[0].enable_peer_access(gpus[0]) {
        Err(HostError::PeerUnreachable { from, to, .. }) if from == to => {}
        other => return Err(failed(format!("peer access to itself: {other:?}"))),
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let vectors: [Vec<f32>; 2] =
        std::array::from_fn(|_| (0..N).map(|_| rng.random_range(-1.0..1.0)).collect());
    if !gpus[0].reaches(gpus[1]) {
        check_refused(gpus).map_err(failed)?;
    }
    let run = || -> gpu_host::Result<[Vec<f32>; 2]> {
        gpus[0].enable_peer_access(gpus[1])?;
        gpus[1].enable_peer_access(gpus[0])?;
        let mine = [
            gpus[0].upload("mine", &vectors[0])?,
            gpus[1].upload("mine", &vectors[1])?,
        ];
        let mut sums = [
            gpus[0].alloc("sum", N as usize)?,
            gpus[1].alloc("sum", N as usize)?,
        ];
        gpus[0].wait_for(gpus[1])?;
        gpus[1].wait_for(gpus[0])?;
        let sum_pair = &pair_sum::KERNELS[0];
        for (rank, sum) in sums.iter_mut().enumerate() {
            let (own, theirs) = (&mine[rank], &mine[1 - rank]);
            // SAFETY: the three vectors hold N elements each, the sum
            // overlaps neither, and each GPU reaches the other's memory.
            unsafe {
                gpus[rank].launch(sum_pair, &pair_sum::Problem { n: N }, (own, theirs, sum, N))?
            };
        }
        Ok([gpus[0].download(&sums[0])?, gpus[1].download(&sums[1])?])
    };
    let sums = run().map_err(|e| failed(e.to_string()))?;
    for (rank, sum) in sums.iter().enumerate() {
        let wrong = (0..N as usize)
            .find(|&i| sum[i].to_bits() != (vectors[0][i] + vectors[1][i]).to_bits());
        if let Some(i) = wrong {
            return Err(failed(format!(
                "GPU {rank}'s sum: element {i} is {}, not {}",
                sum[i],
                vectors[0][i] + vectors[1][i]
            )));
        }
    }
    check_peer_chase(gpus, &mut rng).map_err(failed)
}

/// Before peer access, the first GPU's chase through a chain of the
/// second's: refused before it runs on the GPU, stopped at its first read
/// on the emulator.
fn check_refused<B: Backend>(gpus: [&B; 2]) -> Result<(), String> {
    let chain = gpus[1]
        .upload("chain", &[0u32; 32])
        .map_err(|e| e.to_string())?;
    let mut reached = gpus[0]
        .alloc::<u32>("reached", 1)
        .map_err(|e| e.to_string())?;
    // SAFETY: the chain's one link leads to itself; reaching the chain at
    // all is what is refused.
    let launched = unsafe {
        gpus[0].launch(
            &chase::KERNELS[0],
            &chase::Problem,
            (&chain, &mut reached, 0, 1),
        )
    };
    match launched {
        Err(HostError::PeerUnreachable { from: 0, to: 1, .. }) => Ok(()),
        Err(HostError::Emulator(Diagnostic {
            fault:
                Fault::GlobalUnreachable {
                    placement: Placement::PeerWithoutAccess,
                    ..
                },
            ..
        })) => Ok(()),
        other => Err(format!(
            "a chase through the peer's chain before peer access: {other:?}"
        )),
    }
}

/// The chase from the first GPU through a chain of four lines in the
/// second GPU's memory, 0 → 64 → 32 → 96 → 0, seven hops from line 32.
fn check_peer_chase<B: Backend>(gpus: [&B; 2], rng: &mut SmallRng) -> Result<(), String> {
    let mut chain: Vec<u32> = (0..128).map(|_| rng.random_range(0..128)).collect();
    for (from, to) in [(0, 64), (64, 32), (32, 96), (96, 0)] {
        chain[from] = to;
    }
    let run = || -> gpu_host::Result<Vec<u32>> {
        let chain = gpus[1].upload("chain", &chain)?;
        let mut reached = gpus[0].alloc::<u32>("reached", 1)?;
        gpus[0].wait_for(gpus[1])?;
        // SAFETY: every link lies in the chain, and the first GPU reaches
        // the second's memory; one thread.
        unsafe {
            gpus[0].launch(
                &chase::KERNELS[0],
                &chase::Problem,
                (&chain, &mut reached, 32, 7),
            )?
        };
        gpus[0].download(&reached)
    };
    match run().map_err(|e| e.to_string())?.as_slice() {
        // 32 → 96 → 0 → 64 → 32 → 96 → 0 → 64.
        [64] => Ok(()),
        other => Err(format!(
            "the chase through the peer's chain reached {other:?}, not [64]"
        )),
    }
}
