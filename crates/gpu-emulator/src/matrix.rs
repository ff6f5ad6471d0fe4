//! The warp's matrix instructions, `mma.sync` and `ldmatrix`, computed from
//! the registers of all 32 lanes by the fragment layouts of the PTX ISA
//! ("Matrix Fragments for mma.m16n8k16" and "ldmatrix"). A kernel that
//! fills a fragment in another layout gets the wrong product here, as it
//! would on the GPU.
//!
//! In every layout below, a lane's `group` is `lane / 4` and its `quad`
//! (PTX's `threadID_in_group`) is `lane % 4`; two 16-bit elements share a
//! 32-bit register, the one of lower index in the low half.

use half::{bf16, f16};

/// The registers a lane brings to a matrix instruction: for `mma.sync`,
/// A's four, B's two and C's four; for `ldmatrix`, the 16-byte row its
/// address names (the first 8, 16 or 32 lanes only).
pub type Registers = [u32; 10];

/// The registers a lane gets back: D's four from `mma.sync`, one a matrix
/// from `ldmatrix`.
pub type Fragment = [u32; 4];

/// The 16-bit input type of an `mma.sync`; the accumulators are f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaInput {
    /// `bf16`: 8 bits of exponent, 8 of significand (f32's range).
    Bf16,
    /// `f16`: 5 bits of exponent, 11 of significand.
    F16,
}

impl MmaInput {
    /// The value of the 16-bit element `bits`, exactly.
    pub(crate) fn value(self, bits: u16) -> f64 {
        match self {
            Self::Bf16 => f64::from(bf16::from_bits(bits)),
            Self::F16 => f64::from(f16::from_bits(bits)),
        }
    }
}

/// Half `half` (0 low, 1 high) of a register. A match, not a shift by
/// `16·half`: a shift by 32 wraps to 0 in release code, where a wrong half
/// index would then pass unseen.
pub(crate) fn half_of(register: u32, half: usize) -> u16 {
    match half {
        0 => register as u16,
        1 => (register >> 16) as u16,
        _ => unreachable!("a register has two halves, not {}", half + 1),
    }
}

/// `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32`: lane
/// `lane`'s four elements of D = A·B + C, with A 16×16 (row), B 16×8 (col)
/// and C and D 16×8, `of(l)` the registers lane `l` brought.
///
/// Where each element lives (r a row, c a column, k the inner index):
/// - A: element (r, k) in register `r / 8 + 2·(k / 8)` of lane
///   `4·(r % 8) + (k % 8) / 2`, half `k % 2`;
/// - B: element (k, c) in register `k / 8` of lane `4·c + (k % 8) / 2`,
///   half `k % 2`;
/// - C and D: element (r, c) in register `2·(r / 8) + c % 2` of lane
///   `4·(r % 8) + c / 2`.
///
/// Every product of two 16-bit values is exact in f64, and so is their
/// sum with C; the result is rounded to f32 once. The tensor cores round
/// their partial sums in their own way, which no IEEE operation repeats:
/// a comparison allows for f32 accumulation over k, as any f32 sum needs.
pub(crate) fn mma(input: MmaInput, lane: u32, of: impl Fn(u32) -> Registers) -> Fragment {
    let a = |r: u32, k: u32| {
        let register = of(4 * (r % 8) + (k % 8) / 2)[(r / 8 + 2 * (k / 8)) as usize];
        input.value(half_of(register, (k % 2) as usize))
    };
    let b = |k: u32, c: u32| {
        let register = of(4 * c + (k % 8) / 2)[4 + (k / 8) as usize];
        input.value(half_of(register, (k % 2) as usize))
    };
    let (group, quad) = (lane / 4, lane % 4);
    let own = of(lane);
    core::array::from_fn(|d| {
        let (r, c) = (group + 8 * (d as u32 / 2), 2 * quad + d as u32 % 2);
        let sum = (0..16).fold(f64::from(f32::from_bits(own[6 + d])), |sum, k| {
            sum + a(r, k) * b(k, c)
        });
        (sum as f32).to_bits()
    })
}

/// The two rows of a 16×16 A operand, laid out as [`mma`]'s, whose
/// products lane `lane` accumulates: rows `lane / 4` and `lane / 4 + 8`,
/// eight registers each (k 0 and 1, 2 and 3, …), gathered from the four
/// lanes of its group, `of(l)` the registers lane `l` brought. `wgmma`
/// with A from registers holds each warp's 16 rows of A so.
pub(crate) fn a_rows(lane: u32, of: impl Fn(u32) -> Registers) -> [u32; 16] {
    let group = lane / 4;
    core::array::from_fn(|index| {
        let (half, pair) = (index as u32 / 8, index as u32 % 8);
        of(4 * group + pair % 4)[(half + 2 * (pair / 4)) as usize]
    })
}

/// `ldmatrix.sync.aligned.m8n8.x{matrices}[.trans].shared.b16`: lane
/// `lane`'s register of each 8×8 matrix of 16-bit elements, whose row `r`
/// lane `8·m + r` read (`of(l)`'s first four words).
///
/// Lane l gets, of matrix m, row `l / 4`'s elements `2·(l % 4)` and the
/// next; transposed, column `l / 4`'s elements at rows `2·(l % 4)` and the
/// next: exactly the A (and, transposed, the B) fragments of
/// [`mma`] when the rows are a tile's.
pub(crate) fn ldmatrix(
    matrices: u32,
    trans: bool,
    lane: u32,
    of: impl Fn(u32) -> Registers,
) -> Fragment {
    let (group, quad) = (lane / 4, lane % 4);
    core::array::from_fn(|m| {
        let m = m as u32;
        if m >= matrices {
            return 0;
        }
        if !trans {
            return of(8 * m + group)[quad as usize];
        }
        let element = |row: u32| {
            let word = of(8 * m + row)[(group / 2) as usize];
            u32::from(half_of(word, (group % 2) as usize))
        };
        element(2 * quad) | element(2 * quad + 1) << 16
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registers of every lane holding A (16×16), B (16×8) and C
    /// (16×8) of `value(matrix, row, col)`, in the layout [`mma`] reads.
    fn lanes(value: impl Fn(char, u32, u32) -> f32) -> Vec<Registers> {
        let pair = |low: f32, high: f32| {
            u32::from(bf16::from_f32(low).to_bits())
                | u32::from(bf16::from_f32(high).to_bits()) << 16
        };
        (0..32)
            .map(|lane| {
                let (g, q) = (lane / 4, lane % 4);
                let a = |r, k| pair(value('a', r, k), value('a', r, k + 1));
                let b = |k, c| pair(value('b', k, c), value('b', k + 1, c));
                let c = |r, c| value('c', r, c).to_bits();
                [
                    a(g, 2 * q),
                    a(g + 8, 2 * q),
                    a(g, 2 * q + 8),
                    a(g + 8, 2 * q + 8),
                    b(2 * q, g),
                    b(2 * q + 8, g),
                    c(g, 2 * q),
                    c(g, 2 * q + 1),
                    c(g + 8, 2 * q),
                    c(g + 8, 2 * q + 1),
                ]
            })
            .collect()
    }

    #[test]
    fn the_product_follows_the_fragment_layouts() {
        // Small integers: every sum exact, so the product can be compared
        // bit for bit.
        let value = |m: char, r: u32, c: u32| match m {
            'a' => ((r * 3 + c * 5) % 7) as f32 - 3.0,
            'b' => ((r * 2 + c * 7) % 5) as f32 - 2.0,
            _ => (r * 8 + c) as f32,
        };
        let registers = lanes(value);
        for lane in 0..32 {
            let d = mma(MmaInput::Bf16, lane, |l| registers[l as usize]);
            let (g, q) = (lane / 4, lane % 4);
            for (i, (r, c)) in [
                (g, 2 * q),
                (g, 2 * q + 1),
                (g + 8, 2 * q),
                (g + 8, 2 * q + 1),
            ]
            .into_iter()
            .enumerate()
            {
                let expected = (0..16)
                    .map(|k| value('a', r, k) * value('b', k, c))
                    .sum::<f32>()
                    + value('c', r, c);
                assert_eq!(f32::from_bits(d[i]), expected, "lane {lane}, D({r}, {c})");
            }
        }
    }

    #[test]
    fn a_fragment_in_the_wrong_layout_gives_the_wrong_product() {
        let value = |m: char, r: u32, c: u32| match m {
            'a' => (r * 16 + c) as f32,
            'b' => ((r + 1) * (c + 1)) as f32,
            _ => 0.0,
        };
        let right = lanes(value);
        // A's registers 1 and 2 swapped: rows 8–15 and columns 8–15 mixed
        // up, as a kernel reading the PTX ISA's table column-first would.
        let wrong: Vec<Registers> = right
            .iter()
            .map(|&registers| {
                let mut registers = registers;
                registers.swap(1, 2);
                registers
            })
            .collect();
        let product = |registers: &[Registers]| -> Vec<Fragment> {
            (0..32)
                .map(|lane| mma(MmaInput::Bf16, lane, |l| registers[l as usize]))
                .collect()
        };
        assert_ne!(product(&right), product(&wrong));
    }

    /// Each lane gathers its group's two rows of A, every k in order,
    /// from the fragments the four lanes of its group hold.
    #[test]
    fn a_lane_gathers_its_two_rows_of_a_from_its_group() {
        let value = |m: char, r: u32, c: u32| if m == 'a' { (r * 16 + c) as f32 } else { 0.0 };
        let registers = lanes(value);
        for lane in 0..32 {
            let rows = a_rows(lane, |l| registers[l as usize]);
            for (half, row) in [lane / 4, lane / 4 + 8].into_iter().enumerate() {
                for k in 0..16 {
                    let bits = half_of(rows[8 * half + k / 2], k % 2);
                    assert_eq!(
                        bf16::from_bits(bits).to_f32(),
                        value('a', row, k as u32),
                        "lane {lane}, A({row}, {k})"
                    );
                }
            }
        }
    }

    #[test]
    fn f16_inputs_are_read_as_f16() {
        let one = u32::from(f16::from_f32(1.0).to_bits());
        let registers: Vec<Registers> = (0..32)
            .map(|_| [one, one, one, one, one, one, 0, 0, 0, 0])
            .collect();
        // Only the low halves hold ones: eight of the sixteen k.
        let d = mma(MmaInput::F16, 0, |l| registers[l as usize]);
        assert_eq!(d.map(f32::from_bits), [8.0; 4]);
    }

    #[test]
    fn ldmatrix_hands_out_rows_and_transposed_columns() {
        // Row r of matrix m holds the elements 100·m + 8·r + col.
        let rows: Vec<Registers> = (0..32)
            .map(|lane| {
                let (m, r) = (lane / 8, lane % 8);
                let mut registers = [0; 10];
                for word in 0..4 {
                    let element = |col: u32| 100 * m + 8 * r + col;
                    registers[word as usize] = element(2 * word) | element(2 * word + 1) << 16;
                }
                registers
            })
            .collect();
        let of = |l: u32| rows[l as usize];
        for lane in 0..32 {
            let (g, q) = (lane / 4, lane % 4);
            let straight = ldmatrix(4, false, lane, of);
            let turned = ldmatrix(4, true, lane, of);
            for m in 0..4 {
                let element = |r: u32, c: u32| 100 * m + 8 * r + c;
                let pair = |low: u32, high: u32| low | high << 16;
                let at = m as usize;
                assert_eq!(straight[at], pair(element(g, 2 * q), element(g, 2 * q + 1)));
                assert_eq!(turned[at], pair(element(2 * q, g), element(2 * q + 1, g)));
            }
            assert_eq!(ldmatrix(2, false, lane, of)[2..], [0, 0]);
        }
    }
}
