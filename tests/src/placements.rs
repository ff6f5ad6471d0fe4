//! One kernel over buffers of every placement: device memory, host memory
//! mapped into the GPU's address space, and managed memory, as input and
//! as output, on either backend.

use gpu_host::{Advice, Error as HostError};
use gpu_std::Placement;
use kernels::access::{KERNELS, Problem};
use locality::Backend;
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// Every placement a buffer can have.
pub const PLACEMENTS: [Placement; 3] =
    [Placement::Device, Placement::MappedHost, Placement::Managed];

/// The access lessons' strided copy, reading from an offset with a stride
/// so that its reads straddle pages and lines: elements copied, stride,
/// offset.
pub const COPY: (u32, u32, u32) = (4099, 3, 5);

/// Copies from an input in each placement to a poisoned output in each,
/// with inputs from `seed`, and checks every element of the output against
/// the input it was copied from; a managed buffer is advised and prefetched
/// to the device before the copy and to the host after, and a prefetch or
/// advice of any other buffer is refused.
pub fn check_placements<B: Backend>(backend: &B, seed: u64) -> Result<(), String> {
    let copy = KERNELS
        .iter()
        .find(|kernel| kernel.name == "copy_strided")
        .ok_or("no copy_strided")?;
    let (n, stride, offset) = COPY;
    let mut rng = SmallRng::seed_from_u64(seed);
    let values: Vec<f32> = (0..offset + (n - 1) * stride + 1)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let failed = |what: String| format!("{what} on the {}, seed {seed}", backend.description());
    for from in PLACEMENTS {
        for to in PLACEMENTS {
            let run = || -> gpu_host::Result<Vec<f32>> {
                let input = backend.upload_in("input", &values, from)?;
                let mut output = backend.alloc_in::<f32>("output", n as usize, to)?;
                for (buffer, placement) in [(&input, from), (&output, to)] {
                    if placement == Placement::Managed {
                        backend.advise(buffer, Advice::PreferDevice)?;
                        backend.prefetch(buffer, true)?;
                    }
                }
                // SAFETY: input holds offset + (n − 1)·stride + 1 elements and
                // output n; they do not overlap.
                unsafe {
                    backend.launch(
                        copy,
                        &Problem { n },
                        (&input, &mut output, n, stride, offset),
                    )?
                };
                if to == Placement::Managed {
                    backend.prefetch(&output, false)?;
                }
                backend.download(&output)
            };
            let output = run().map_err(|e| failed(format!("{from:?} to {to:?}: {e}")))?;
            let wrong = (0..n as usize).find(|&i| {
                output[i].to_bits() != values[offset as usize + i * stride as usize].to_bits()
            });
            if let Some(i) = wrong {
                return Err(failed(format!(
                    "{from:?} to {to:?}: element {i} is {}, not {}",
                    output[i],
                    values[offset as usize + i * stride as usize]
                )));
            }
        }
    }
    for placement in [Placement::Device, Placement::MappedHost] {
        let buffer = backend
            .alloc_in::<f32>("not managed", 8, placement)
            .map_err(|e| failed(e.to_string()))?;
        let refused = |result: gpu_host::Result<()>, what: &str| match result {
            Err(HostError::NotManaged { placement: said }) if said == placement => Ok(()),
            other => Err(failed(format!(
                "{what} of a {placement:?} buffer: expected NotManaged, got {other:?}"
            ))),
        };
        refused(backend.prefetch(&buffer, true), "a prefetch")?;
        refused(backend.advise(&buffer, Advice::ReadMostly), "advice")?;
        if backend.placement(&buffer) != placement {
            return Err(failed(format!(
                "a {placement:?} buffer says it is elsewhere"
            )));
        }
    }
    Ok(())
}
