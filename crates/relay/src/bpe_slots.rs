//! A vocabulary's rank table, shared by `build.rs` (which compiles the tables of the two
//! encodings into the binary) and `bpe.rs` (which reads them, and builds the table of any other
//! vocabulary it is given). Self-contained: the build script includes this file as it is.

/// The hash of a token's bytes: FNV-1a, then a multiply-xorshift finish (FNV-1a alone leaves
/// the low bits of short keys clustered). Fixed, so that a table written by the build script
/// reads the same on every platform.
pub fn slot_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(0xd6e8_feb8_6659_fd93);
    h ^ (h >> 32)
}

/// Where token `rank` ends in the tokens' bytes: the `rank`th little-endian `u32` of `ends`.
pub fn token_end(ends: &[u8], rank: usize) -> Option<usize> {
    let at = rank.checked_mul(4)?;
    let le: [u8; 4] = ends.get(at..at.checked_add(4)?)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(le)).ok()
}

/// The rank table of the vocabulary whose tokens are `bytes` cut at `ends` (little-endian
/// `u32` offsets, one a token): open addressing with linear probing, each slot `rank + 1` (0:
/// empty) as a little-endian `u32`, a power of two slots long and at most half full. `None`
/// when the offsets do not fit the bytes or a token repeats.
pub fn build_slots(bytes: &[u8], ends: &[u8]) -> Option<Vec<u8>> {
    if !ends.len().is_multiple_of(4) {
        return None;
    }
    let n = ends.len() / 4;
    let mut starts = Vec::with_capacity(n);
    let mut last = 0;
    for rank in 0..n {
        let end = token_end(ends, rank)?;
        if end < last || end > bytes.len() {
            return None;
        }
        starts.push(last);
        last = end;
    }
    let token = |rank: usize| -> Option<&[u8]> { bytes.get(starts[rank]..token_end(ends, rank)?) };
    let len = (n * 2).next_power_of_two().max(2);
    let mask = len - 1;
    let mut slots = vec![0u32; len];
    for rank in 0..n {
        let t = token(rank)?;
        let mut i = usize::try_from(slot_hash(t) & mask as u64).ok()?;
        while slots[i] != 0 {
            if token(usize::try_from(slots[i]).ok()? - 1)? == t {
                return None;
            }
            i = (i + 1) & mask;
        }
        slots[i] = u32::try_from(rank + 1).ok()?;
    }
    Some(slots.iter().flat_map(|s| s.to_le_bytes()).collect())
}
