//! Two GPUs of one host: peer access refused where it cannot be, and, on a
//! host of two, the one-shot all-reduce's sum and the latency lesson's
//! chase across them, and NCCL's all-reduce, each checked element by
//! element.

use clap::Parser;
use gpu_host::Error as HostError;
use gpu_host::gpu::Communicators;
use libtest_mimic::{Failed, Trial};
use locality::cli::Cli;
use locality::{Backend, Error, Gpu};
use rand::{Rng, SeedableRng, rngs::SmallRng};

use crate::devices::{failed, gpu};

/// GPU 1, opened once.
fn second() -> Result<&'static Gpu, Failed> {
    static GPU: std::sync::OnceLock<Result<Gpu, String>> = std::sync::OnceLock::new();
    GPU.get_or_init(|| locality::gpu::open(1).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| e.clone().into())
}

/// The trials any GPU runs, and those that need two, ignored on a host of
/// fewer (`pair` says whether this host has two).
pub fn peer_trials(pair: bool) -> Vec<Trial> {
    vec![
        Trial::test(
            "the lessons refuse a peer GPU that does not exist, or is their own, with exit 2",
            || {
                for (peer, same) in [("7", false), ("0", true)] {
                    let args = [
                        "locality", "lessons", "peer", "--device", "0", "--peer", peer,
                    ];
                    let cli = Cli::try_parse_from(args).map_err(failed)?;
                    match locality::cli::run(&cli) {
                        Err(Error::Host(HostError::NoSuchDevice { requested: 7, .. })) if !same => {
                        }
                        Err(Error::Host(HostError::PeerUnreachable { from: 0, to: 0, .. }))
                            if same => {}
                        other => {
                            return Err(
                                format!("--peer {peer}: got {:?}", other.map(|_| ())).into()
                            );
                        }
                    }
                }
                Ok(())
            },
        ),
        Trial::test(
            "two GPUs sum and chase through each other's memory by peer access",
            || {
                let seed = locality_tests::seed();
                locality::peers::check_peers([gpu()?, second()?], seed).map_err(Into::into)
            },
        )
        .with_ignored_flag(!pair),
        Trial::test(
            "NCCL's all-reduce of two GPUs' vectors is their sum on both",
            || {
                let gpus = [gpu()?, second()?];
                let comms =
                    Communicators::new(&[gpus[0].stream(), gpus[1].stream()]).map_err(failed)?;
                let mut rng = SmallRng::seed_from_u64(locality_tests::seed());
                let n = 4099;
                let vectors: [Vec<f32>; 2] =
                    std::array::from_fn(|_| (0..n).map(|_| rng.random_range(-1.0..1.0)).collect());
                let mine = [
                    gpus[0].upload("mine", &vectors[0]).map_err(failed)?,
                    gpus[1].upload("mine", &vectors[1]).map_err(failed)?,
                ];
                let [mut first, mut second] = [
                    gpus[0].alloc::<f32>("sum", n).map_err(failed)?,
                    gpus[1].alloc::<f32>("sum", n).map_err(failed)?,
                ];
                comms
                    .all_reduce_sum(&[&mine[0], &mine[1]], &mut [&mut first, &mut second])
                    .map_err(failed)?;
                for (rank, sum) in [&first, &second].into_iter().enumerate() {
                    let sum = gpus[rank].download(sum).map_err(failed)?;
                    let wrong = (0..n).find(|&i| sum[i] != vectors[0][i] + vectors[1][i]);
                    if let Some(i) = wrong {
                        return Err(format!("GPU {rank}'s sum: element {i} is {}", sum[i]).into());
                    }
                }
                Ok(())
            },
        )
        .with_ignored_flag(!pair),
    ]
}
