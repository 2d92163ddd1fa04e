//! A small deterministic generator for random tests: the same cases every run. Unit tests
//! reach it through `crate::test_support`, integration tests through `tests/util.rs`.

/// xorshift64*.
pub struct Rng(pub u64);

#[allow(dead_code)] // each test crate uses some of it
impl Rng {
    pub fn next(&mut self) -> u64 {
        // A zero state would stay zero.
        if self.0 == 0 {
            self.0 = 0x9e37_79b9_7f4a_7c15;
        }
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// An index into a slice of `n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.index(v.len())]
    }
}
