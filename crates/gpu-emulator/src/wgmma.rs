//! Hopper's warpgroup matrix multiply, `wgmma.mma_async`, computed from
//! shared memory through its matrix descriptors, as the PTX ISA lays the
//! operands out ("Matrix Descriptor Format" and the canonical layouts of
//! "Shared Memory Matrix Layout"): a descriptor with a wrong offset or
//! swizzle reads other elements here, as it does on the GPU.
//!
//! An operand of `m64nNk16` is 64 (A) or N (B) rows of 16 elements along
//! k, in 16-byte chunks of eight 16-bit elements. Along the chunk runs k
//! (the operand is "K-major", the default) or the row index (M- or
//! N-major, the instruction's transpose flag). Chunks stack in 8×8-element
//! core matrices; the descriptor says how far apart they are: the leading
//! byte offset (LBO) and the stride byte offset (SBO). A swizzled layout
//! spreads the eight rows of a core matrix over 32, 64 or 128 bytes, and
//! XORs bits 4 and up of each address with the row bits above them
//! (CUTLASS's `Swizzle<B, 4, 3>`), so that eight rows read together fall
//! in different banks.

use super::matrix::{MmaInput, half_of};

/// How the rows of a descriptor's operand are swizzled: the descriptor's
/// bits 62–63.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// Core matrices of eight contiguous 16-byte rows.
    None,
    /// Rows 32 bytes apart, one address bit XORed.
    B32,
    /// Rows 64 bytes apart, two bits XORed.
    B64,
    /// Rows 128 bytes apart, three bits XORed.
    B128,
}

impl Swizzle {
    /// The mode the descriptor's two bits name.
    fn of_bits(bits: u64) -> Self {
        match bits & 3 {
            0 => Self::None,
            1 => Self::B128,
            2 => Self::B64,
            _ => Self::B32,
        }
    }

    /// A swizzled row's bytes: 16 unswizzled, one chunk.
    pub fn row_bytes(self) -> u32 {
        16 * self.chunks_and_bits().0
    }

    /// 16-byte chunks per swizzled row, and address bits XORed: 1 and 0
    /// unswizzled.
    fn chunks_and_bits(self) -> (u32, u32) {
        match self {
            Self::None => (1, 0),
            Self::B32 => (2, 1),
            Self::B64 => (4, 2),
            Self::B128 => (8, 3),
        }
    }
}

/// Which index runs along an operand's 16-byte chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Major {
    /// k: the operand's rows are its M (A) or N (B) indices.
    K,
    /// M or N: the operand's rows are its k indices (transposed).
    Mn,
}

/// A shared-memory matrix descriptor, decoded: byte addresses in the
/// block's shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Bits 0–13, the address of the operand's first chunk, over 16.
    pub start: u32,
    /// Bits 16–29, the leading byte offset, over 16.
    pub leading: u32,
    /// Bits 32–45, the stride byte offset, over 16.
    pub stride: u32,
    /// Bits 62–63.
    pub swizzle: Swizzle,
}

impl Descriptor {
    /// The descriptor of `bits`.
    pub fn decode(bits: u64) -> Self {
        let field = |shift: u32| ((bits >> shift) & 0x3fff) as u32 * 16;
        Self {
            start: field(0),
            leading: field(16),
            stride: field(32),
            swizzle: Swizzle::of_bits(bits >> 62),
        }
    }

    /// Whether a swizzled operand starts in another row of its swizzle's
    /// pattern of eight rows than the first. Here the XOR takes its row
    /// from the address; the tensor cores count it from the descriptor's
    /// base offset instead, which the runtime leaves 0, so the two agree
    /// only for a start in the first row (at a 16-byte chunk of it: the
    /// next 16 k of a K-major operand are 32 bytes on).
    pub fn starts_off_pattern(self) -> bool {
        let row = self.swizzle.row_bytes();
        self.swizzle != Swizzle::None && self.start % (8 * row) >= row
    }

    /// The shared-memory byte address of element (`row`, `k`) of a
    /// 16-bit operand laid out `major`, `row` its M or N index and `k`
    /// in 0..16.
    pub fn address(self, major: Major, row: u32, k: u32) -> u32 {
        let (width, bits) = self.swizzle.chunks_and_bits();
        let swizzled = self.swizzle != Swizzle::None;
        let unswizzled = match major {
            Major::K => {
                let (chunk, element) = (k / 8, k % 8);
                let next_chunk = if swizzled { 16 } else { self.leading };
                (row % 8) * 16 * width + (row / 8) * self.stride + chunk * next_chunk + 2 * element
            }
            Major::Mn => {
                let (chunk, element) = (row / 8, row % 8);
                let (across, down) = if swizzled {
                    (
                        (chunk % width) * 16 + (chunk / width) * self.leading,
                        self.stride,
                    )
                } else {
                    (chunk * self.stride, self.leading)
                };
                across + (k % 8) * 16 * width + (k / 8) * down + 2 * element
            }
        };
        let address = self.start + unswizzled;
        address ^ ((address >> 3) & (((1 << bits) - 1) << 4))
    }
}

/// Where a `wgmma` reads its A (64×16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandA {
    /// Shared memory, K-major, through this descriptor.
    Shared(Descriptor),
    /// Registers: the thread's two rows of A, each eight registers of two
    /// k (see `matrix::a_rows`).
    Registers([u32; 16]),
}

/// Thread `thread` of the warpgroup (0..128)'s accumulators of
/// `wgmma.mma_async.m64nNk16.f32`, N = 2·`accumulators.len()`: D = A·B + D
/// with A (64×16) from `a` and B (16×N) read at `b` laid out `b_major`;
/// `element(operand, address)` is the 16-bit element of operand `'A'` or
/// `'B'` at a shared address.
///
/// The warpgroup's warp w holds D's rows 16w to 16w + 15; in it, as in
/// `mma.m16n8k16`, lane l holds, for each 8 columns i, the elements
/// (r, 8i + 2q) and (r, 8i + 2q + 1) of rows r = 16w + l/4 and r + 8, q
/// being l % 4: `accumulators[4i..4i + 4]` in that order. A from
/// registers is held by the same warps as `mma.m16n8k16`'s A: warp w's
/// lanes hold rows 16w to 16w + 15. Each element's sum is exact in f64
/// and rounded once to f32.
pub(crate) fn accumulate(
    input: MmaInput,
    (a, b): (OperandA, Descriptor),
    b_major: Major,
    thread: u32,
    accumulators: &mut [f32],
    element: &mut impl FnMut(char, u32) -> u16,
) {
    let (warp, lane) = (thread / 32, thread % 32);
    let (group, quad) = (lane / 4, lane % 4);
    let rows = [16 * warp + group, 16 * warp + group + 8];
    let mut read = |(operand, descriptor): (char, Descriptor), major, row| -> [f64; 16] {
        std::array::from_fn(|k| {
            let address = descriptor.address(major, row, k as u32);
            input.value(element(operand, address))
        })
    };
    let a_rows = match a {
        OperandA::Shared(a) => rows.map(|row| read(('A', a), Major::K, row)),
        OperandA::Registers(words) => [0, 1].map(|half| {
            std::array::from_fn(|k| input.value(half_of(words[8 * half + k / 2], k % 2)))
        }),
    };
    let columns = accumulators.len() as u32 / 2;
    let b_columns: Vec<[f64; 16]> = (0..columns)
        .map(|index| read(('B', b), b_major, 8 * (index / 2) + 2 * quad + index % 2))
        .collect();
    for (index, value) in accumulators.iter_mut().enumerate() {
        let (row, column) = (
            &a_rows[index / 2 % 2],
            &b_columns[index / 4 * 2 + index % 2],
        );
        let sum = (0..16).fold(f64::from(*value), |sum, k| sum + row[k] * column[k]);
        *value = sum as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(start: u32, leading: u32, stride: u32, swizzle: u64) -> u64 {
        u64::from(start >> 4)
            | u64::from(leading >> 4) << 16
            | u64::from(stride >> 4) << 32
            | swizzle << 62
    }

    #[test]
    fn a_descriptor_decodes_to_its_byte_offsets_and_mode() {
        let decoded = Descriptor::decode(descriptor(1024, 128, 256, 1));
        assert_eq!(
            decoded,
            Descriptor {
                start: 1024,
                leading: 128,
                stride: 256,
                swizzle: Swizzle::B128
            }
        );
        assert_eq!(Descriptor::decode(2 << 62).swizzle, Swizzle::B64);
        assert_eq!(Descriptor::decode(3 << 62).swizzle, Swizzle::B32);
    }

    /// A swizzled operand starts in its pattern's first row, at any chunk
    /// of it: 1024, 512 or 256 bytes a pattern of rows of 128, 64 or 32.
    #[test]
    fn a_swizzled_start_off_its_patterns_first_row_is_told_apart() {
        let off = |start: u32, swizzle| Descriptor::decode(descriptor(start, 16, 1024, swizzle));
        for (swizzle, row) in [(1, 128), (2, 64), (3, 32)] {
            let pattern = 8 * row;
            assert!(!off(2 * pattern, swizzle).starts_off_pattern());
            assert!(!off(2 * pattern + row - 16, swizzle).starts_off_pattern());
            assert!(off(2 * pattern + row, swizzle).starts_off_pattern());
            assert!(off(pattern + 7 * row, swizzle).starts_off_pattern());
        }
        assert!(!off(16, 0).starts_off_pattern());
    }

    /// K-major, unswizzled: core matrices of eight 16-byte rows, the next
    /// chunk along k LBO bytes on, the next eight rows SBO bytes on.
    #[test]
    fn unswizzled_k_major_core_matrices_are_lbo_and_sbo_apart() {
        let d = Descriptor::decode(descriptor(0, 128, 256, 0));
        assert_eq!(d.address(Major::K, 0, 0), 0);
        assert_eq!(d.address(Major::K, 0, 7), 14);
        assert_eq!(d.address(Major::K, 1, 0), 16);
        assert_eq!(d.address(Major::K, 0, 8), 128);
        assert_eq!(d.address(Major::K, 8, 0), 256);
        assert_eq!(d.address(Major::K, 9, 9), 256 + 16 + 128 + 2);
    }

    /// K-major, 128-byte swizzle: a row of 128 bytes, its 16-byte chunks
    /// XORed with the row's index among eight.
    #[test]
    fn a_128_byte_swizzle_xors_each_rows_chunks_with_its_row() {
        let d = Descriptor::decode(descriptor(2048, 16, 1024, 1));
        assert_eq!(d.address(Major::K, 0, 0), 2048);
        assert_eq!(d.address(Major::K, 0, 8), 2048 + 16);
        assert_eq!(d.address(Major::K, 1, 0), 2048 + 128 + 16);
        assert_eq!(d.address(Major::K, 3, 8), 2048 + 3 * 128 + (1 ^ 3) * 16);
        assert_eq!(d.address(Major::K, 8, 0), 2048 + 1024);
        // A start 32 bytes into the row (the next 16 k) is swizzled too.
        let next = Descriptor::decode(descriptor(2048 + 32, 16, 1024, 1));
        assert_eq!(next.address(Major::K, 5, 0), 2048 + 5 * 128 + (2 ^ 5) * 16);
    }

    /// N-major, 128-byte swizzle: eight chunks of eight columns along a
    /// 128-byte row, one row per k, the next 64 columns LBO bytes on.
    #[test]
    fn an_mn_major_operand_runs_its_rows_along_the_chunks() {
        let d = Descriptor::decode(descriptor(0, 8192, 1024, 1));
        assert_eq!(d.address(Major::Mn, 0, 0), 0);
        assert_eq!(d.address(Major::Mn, 7, 0), 14);
        assert_eq!(d.address(Major::Mn, 8, 0), 16);
        assert_eq!(d.address(Major::Mn, 0, 1), 128 + 16);
        assert_eq!(d.address(Major::Mn, 64, 0), 8192);
        assert_eq!(d.address(Major::Mn, 0, 8), 1024);
        let plain = Descriptor::decode(descriptor(0, 128, 256, 0));
        assert_eq!(plain.address(Major::Mn, 8, 0), 256);
        assert_eq!(plain.address(Major::Mn, 0, 1), 16);
        assert_eq!(plain.address(Major::Mn, 0, 8), 128);
    }

    /// Every thread's accumulators, placed where the module says each
    /// thread holds them, make the whole 64×16 product A·B + 1: A K-major
    /// and B N-major, unswizzled, small integers exact in bf16; each
    /// thread reads only the elements of its rows and columns.
    #[test]
    fn the_warpgroups_accumulators_make_the_whole_product() {
        let a = Descriptor::decode(descriptor(0, 1024, 128, 0));
        let b = Descriptor::decode(descriptor(4096, 128, 256, 0));
        let a_value = |r: u32, k: u32| (r * 3 + k) % 7;
        let b_value = |k: u32, n: u32| (k * 5 + n) % 9;
        let mut memory = vec![0u16; 8192];
        let bits = |value: u32| half::bf16::from_f32(value as f32 - 4.0).to_bits();
        for k in 0..16 {
            for r in 0..64 {
                memory[a.address(Major::K, r, k) as usize / 2] = bits(a_value(r, k));
            }
            for n in 0..16 {
                memory[b.address(Major::Mn, n, k) as usize / 2] = bits(b_value(k, n));
            }
        }
        let mut d = vec![f32::NAN; 64 * 16];
        for thread in 0..128 {
            let mut accumulators = [1.0f32; 8];
            let mut reads = 0;
            let mut element = |_, address: u32| {
                reads += 1;
                memory[address as usize / 2]
            };
            accumulate(
                MmaInput::Bf16,
                (OperandA::Shared(a), b),
                Major::Mn,
                thread,
                &mut accumulators,
                &mut element,
            );
            // Its two rows of A and four columns of B, 16 elements each,
            // and nothing else: each is a checked shared read.
            assert_eq!(reads, 16 * (2 + 4), "thread {thread}");
            let (warp, lane) = (thread / 32, thread % 32);
            for (index, value) in accumulators.into_iter().enumerate() {
                let index = index as u32;
                let row = 16 * warp + lane / 4 + 8 * (index / 2 % 2);
                let column = 8 * (index / 4) + 2 * (lane % 4) + index % 2;
                d[(16 * row + column) as usize] = value;
            }
        }
        for r in 0..64 {
            for n in 0..16 {
                let product: f32 = (0..16)
                    .map(|k| (a_value(r, k) as f32 - 4.0) * (b_value(k, n) as f32 - 4.0))
                    .sum();
                assert_eq!(d[(16 * r + n) as usize], 1.0 + product, "D({r}, {n})");
            }
        }
    }

    /// A from registers, each thread holding its two rows of every k as
    /// `matrix::a_rows` gathers them, gives the product A from shared
    /// memory gives, and reads only B from shared memory.
    #[test]
    fn a_from_registers_makes_the_same_product_reading_only_b() {
        let a = Descriptor::decode(descriptor(0, 1024, 128, 0));
        let b = Descriptor::decode(descriptor(4096, 128, 256, 1));
        let value = |r: u32, k: u32| half::bf16::from_f32(((r * 5 + k * 3) % 11) as f32 - 5.0);
        let mut memory = vec![0u16; 16384];
        for k in 0..16 {
            for r in 0..64 {
                memory[a.address(Major::K, r, k) as usize / 2] = value(r, k).to_bits();
                memory[b.address(Major::K, r, k) as usize / 2] = value(k, r + 1).to_bits();
            }
        }
        for thread in 0..128 {
            let first = 16 * (thread / 32) + thread % 32 / 4;
            let words = std::array::from_fn(|index| {
                let (row, k) = (first + 8 * (index as u32 / 8), 2 * (index as u32 % 8));
                u32::from(value(row, k).to_bits()) | u32::from(value(row, k + 1).to_bits()) << 16
            });
            let product = |operand| {
                let mut accumulators = [0.5f32; 32];
                let mut reads = Vec::new();
                let mut element = |which, address: u32| {
                    reads.push(which);
                    memory[address as usize / 2]
                };
                accumulate(
                    MmaInput::Bf16,
                    (operand, b),
                    Major::K,
                    thread,
                    &mut accumulators,
                    &mut element,
                );
                (accumulators, reads)
            };
            let (shared, shared_reads) = product(OperandA::Shared(a));
            let (registers, register_reads) = product(OperandA::Registers(words));
            assert_eq!(registers, shared, "thread {thread}");
            assert_eq!(shared_reads.len(), 16 * (2 + 16));
            assert_eq!(register_reads, vec!['B'; 16 * 16]);
        }
    }
}
