// CUDA C++ twin of the kernel in gpu/src/chase.rs: one thread follows the
// chain through the L2 and past it (__ldcg), each read waiting for the one
// before. Its __launch_bounds__ are the Rust kernel's #[launch_bounds].

extern "C" __global__ void __launch_bounds__(1, 1)
chase(const unsigned* __restrict__ chain, unsigned* __restrict__ reached, unsigned start,
      unsigned hops) {
    unsigned at = start;
    for (unsigned hop = 0; hop < hops; ++hop) {
        at = __ldcg(chain + at);
    }
    reached[0] = at;
}
