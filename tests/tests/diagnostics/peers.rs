//! Memory no kernel of a GPU reaches: another GPU's, before peer access
//! to it is enabled, and host memory that was never mapped. Each access is
//! stopped, naming the thread, the buffer and why, as the GPU would stop
//! the kernel at the first load; and neither is a placement to allocate.

use gpu_emulator::{AccessKind, Fault};
use gpu_host::{Backend, Emulator, Error as HostError, Placement};
use kernels::pair_sum::{KERNELS, Problem};

/// The one-shot all-reduce's sum on emulated GPU 0 of its own vector and
/// `theirs`, n elements each; the fault it was stopped with.
fn sum_with(first: &Emulator, theirs: &gpu_host::HostBuffer<f32>, n: u32) -> Fault {
    let mine = first.upload("mine", &vec![1.0f32; n as usize]).unwrap();
    let mut sum = first.alloc::<f32>("sum", n as usize).unwrap();
    // SAFETY: the three vectors hold n elements; reaching `theirs` is what
    // the emulator checks.
    let result = unsafe { first.launch(&KERNELS[0], &Problem { n }, (&mine, theirs, &mut sum, n)) };
    match result {
        Err(HostError::Emulator(diagnostic)) => {
            assert_eq!(diagnostic.kernel, "sum_pair");
            diagnostic.fault
        }
        other => panic!("expected the emulator to stop the kernel, got {other:?}"),
    }
}

/// The fault of thread 0's first read of `theirs`, in `placement`.
fn unreachable(placement: Placement) -> Fault {
    Fault::GlobalUnreachable {
        thread: (0, 0, 0),
        kind: AccessKind::Read,
        buffer: "theirs",
        placement,
    }
}

#[test]
fn a_peer_gpus_buffer_without_peer_access_is_stopped_at_the_first_read() {
    let first = Emulator::default();
    let second = first.on_device(1).unwrap();
    let theirs = second.upload("theirs", &[2.0f32; 8]).unwrap();
    let fault = sum_with(&first, &theirs, 8);
    assert_eq!(fault, unreachable(Placement::PeerWithoutAccess));
    assert!(
        fault
            .to_string()
            .contains("peer access to it was never enabled"),
        "{fault}"
    );
    // Access one way opens nothing the other way.
    second.enable_peer_access(&first).unwrap();
    assert_eq!(
        sum_with(&first, &theirs, 8),
        unreachable(Placement::PeerWithoutAccess)
    );
}

#[test]
fn host_memory_that_was_not_mapped_is_stopped_at_the_first_read() {
    let first = Emulator::default();
    let theirs = first
        .upload_in("theirs", &[2.0f32; 8], Placement::Unmapped)
        .unwrap();
    // The host reaches it: a copy in and out.
    assert_eq!(first.download(&theirs).unwrap(), vec![2.0f32; 8]);
    let fault = sum_with(&first, &theirs, 8);
    assert_eq!(fault, unreachable(Placement::Unmapped));
    assert!(
        fault.to_string().contains("host memory not mapped"),
        "{fault}"
    );
}

#[test]
fn no_buffer_is_allocated_as_a_peers_and_no_third_gpu_is_emulated() {
    let emulator = Emulator::default();
    for placement in [Placement::Peer, Placement::PeerWithoutAccess] {
        match emulator
            .alloc::<f32>("x", 1)
            .and_then(|_| emulator.alloc_in::<f32>("x", 1, placement))
        {
            Err(HostError::NotAllocatable {
                placement: said, ..
            }) => assert_eq!(said, placement),
            other => panic!(
                "expected {placement:?} refused, got {:?}",
                other.map(|_| ())
            ),
        }
    }
    match emulator.on_device(2) {
        Err(HostError::NoSuchDevice {
            requested: 2,
            available: 2,
        }) => {}
        other => panic!("expected no GPU 2, got {other:?}"),
    }
    match emulator.enable_peer_access(&emulator) {
        Err(HostError::PeerUnreachable { from: 0, to: 0, .. }) => {}
        other => panic!("expected peer access to itself refused, got {other:?}"),
    }
}
