//! Token counting over tiktoken's byte-pair vocabularies in a compact form.
//!
//! `tiktoken_rs::CoreBPE` keeps every token twice in hash maps of owned byte vectors (encoder and
//! decoder), a sorted copy of them, and a regex per thread slot: about 30 MB for o200k_base,
//! built at run time (~0.1 s) and resident for the life of the process after the first stream
//! that ends without a usage report. Counting needs neither the decoder nor the copies. The
//! build script (`build.rs`) writes the ordinary tokens' bytes, rank after rank, and where each
//! ends; they are compiled in as read-only data ([`cl100k`], [`o200k`]: 1.0 and 2.2 MB, paged in
//! as read), and a [`Vocab`] adds only an open-addressing table of ranks (1 and 2 MB).
//!
//! [`Vocab::count`] gives what `CoreBPE::encode_ordinary(text).len()` gives (held to it by the
//! differential tests below): the text is split by the encoding's pattern, a piece that is a
//! token counts one, any other is merged pair by pair, always the adjacent pair whose joined
//! bytes have the lowest rank (leftmost among equals), until no adjacent pair joins into a
//! token; its count is then the number of parts.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

/// cl100k_base's split pattern (tiktoken's `cl100k_base` definition).
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// o200k_base's split pattern (tiktoken's `o200k_base` definition).
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+"
);

/// cl100k_base (GPT-4, GPT-3.5 and the estimate for other models), its pattern compiled on
/// first use.
pub fn cl100k() -> Option<&'static Vocab> {
    static V: OnceLock<Option<Vocab>> = OnceLock::new();
    let bytes = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.bytes"));
    let ends = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ends"));
    let slots = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.slots"));
    compiled(&V, [bytes, ends, slots], CL100K_PATTERN)
}

/// o200k_base (GPT-4o, GPT-4.1, GPT-5, o-series), its pattern compiled on first use.
pub fn o200k() -> Option<&'static Vocab> {
    static V: OnceLock<Option<Vocab>> = OnceLock::new();
    let bytes = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bytes"));
    let ends = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ends"));
    let slots = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.slots"));
    compiled(&V, [bytes, ends, slots], O200K_PATTERN)
}

/// The vocabulary `build.rs` wrote (tokens, their ends and the rank table), in `cell`. All
/// three are read-only data of the binary: nothing is built at run time, and only the pages
/// that look-ups touch become resident (building the table here cost 1-2 MB of heap and read
/// every token, 2-3 MB more of resident pages, on the first count).
fn compiled(
    cell: &'static OnceLock<Option<Vocab>>,
    [bytes, ends, slots]: [&'static [u8]; 3],
    pattern: &str,
) -> Option<&'static Vocab> {
    cell.get_or_init(|| Vocab::from_compiled([bytes, ends, slots], pattern))
        .as_ref()
}

/// No rank in a table slot.
const EMPTY: u32 = 0;
/// A part that was merged into its left neighbour.
const GONE: usize = usize::MAX;

/// A vocabulary: every token's bytes by rank, and the rank of a byte string.
pub struct Vocab {
    /// The tokens' bytes, rank after rank.
    bytes: Cow<'static, [u8]>,
    /// Where each token ends in `bytes` (it starts where the one before ends), little-endian
    /// `u32`s.
    ends: Cow<'static, [u8]>,
    /// The rank table ([`crate::bpe_slots::build_slots`]): open addressing, linear probing,
    /// little-endian `u32` slots holding `rank + 1`, or [`EMPTY`]; a power of two slots long,
    /// at most half full.
    slots: Cow<'static, [u8]>,
    pattern: fancy_regex::Regex,
}

impl std::fmt::Debug for Vocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocab")
            .field("tokens", &self.len())
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl Vocab {
    /// The vocabulary in `build.rs`'s form, its rank table built here. `None` when the parts do
    /// not fit together, the pattern does not compile or a token repeats.
    pub fn from_parts(
        bytes: Cow<'static, [u8]>,
        ends: Cow<'static, [u8]>,
        pattern: &str,
    ) -> Option<Vocab> {
        let slots = crate::bpe_slots::build_slots(&bytes, &ends)?;
        Some(Vocab {
            bytes,
            ends,
            slots: Cow::Owned(slots),
            pattern: fancy_regex::Regex::new(pattern).ok()?,
        })
    }

    /// The vocabulary with the rank table `build.rs` wrote beside it (checked against the
    /// tokens by the tests). A table whose size does not fit the tokens is built anew instead.
    fn from_compiled([bytes, ends, slots]: [&'static [u8]; 3], pattern: &str) -> Option<Vocab> {
        let n = ends.len() / 4;
        let fits = ends.len().is_multiple_of(4)
            && slots.len() == (n * 2).next_power_of_two().max(2) * 4
            && match n {
                0 => bytes.is_empty(),
                _ => crate::bpe_slots::token_end(ends, n - 1) == Some(bytes.len()),
            };
        if !fits {
            return Vocab::from_parts(Cow::Borrowed(bytes), Cow::Borrowed(ends), pattern);
        }
        Some(Vocab {
            bytes: Cow::Borrowed(bytes),
            ends: Cow::Borrowed(ends),
            slots: Cow::Borrowed(slots),
            pattern: fancy_regex::Regex::new(pattern).ok()?,
        })
    }

    /// Number of ordinary tokens.
    pub fn len(&self) -> usize {
        self.ends.len() / 4
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn end(&self, rank: usize) -> usize {
        crate::bpe_slots::token_end(&self.ends, rank).unwrap_or(0)
    }

    fn slot(&self, i: usize) -> u32 {
        let mut le = [0u8; 4];
        le.copy_from_slice(&self.slots[i * 4..i * 4 + 4]);
        u32::from_le_bytes(le)
    }

    fn token(&self, rank: usize) -> &[u8] {
        let start = match rank {
            0 => 0,
            r => self.end(r - 1),
        };
        &self.bytes[start..self.end(rank)]
    }

    /// The rank of `bytes`, when they are one token.
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let mask = self.slots.len() / 4 - 1;
        // The table is at most 2^31 slots: the low bits of the hash fit a usize anywhere.
        let mut i = crate::bpe_slots::slot_hash(bytes) as usize & mask;
        loop {
            match self.slot(i) {
                EMPTY => return None,
                s if self.token(s as usize - 1) == bytes => return Some(s - 1),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Tokens of `text`, special-token markers counted as plain text.
    pub fn count(&self, text: &str) -> usize {
        let mut n = 0;
        let mut done = 0;
        for m in self.pattern.find_iter(text) {
            match m {
                Ok(m) => {
                    n += self.count_piece(m.as_str().as_bytes());
                    done = m.end();
                }
                // The pattern gave up (its backtracking limit): the rest at about 3 bytes a
                // token, rounded up (above the real count for English and CJK).
                Err(_) => return n + (text.len() - done).div_ceil(3),
            }
        }
        n
    }

    /// Tokens of one piece of the split.
    pub fn count_piece(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        if n <= 1 || self.rank(piece).is_some() {
            return n.min(1);
        }
        // Parts as a linked list of their start offsets: part `i` is `piece[i..next[i]]`.
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        // Candidate merges (rank of the joined bytes, start of the left part), lowest first;
        // an entry whose parts have changed since is skipped when it comes up.
        let mut heap: BinaryHeap<Reverse<(u32, usize)>> = (0..n - 1)
            .filter_map(|i| self.rank(&piece[i..i + 2]).map(|r| Reverse((r, i))))
            .collect();
        let mut parts = n;
        while let Some(Reverse((rank, i))) = heap.pop() {
            if next[i] == GONE || next[i] >= n {
                continue;
            }
            let j = next[i];
            let k = next[j];
            if self.rank(&piece[i..k]) != Some(rank) {
                continue;
            }
            next[i] = k;
            next[j] = GONE;
            if k < n {
                prev[k] = i;
            }
            parts -= 1;
            let p = prev[i];
            if p != GONE {
                if let Some(r) = self.rank(&piece[p..k]) {
                    heap.push(Reverse((r, p)));
                }
            }
            if k < n {
                if let Some(r) = self.rank(&piece[i..next[k]]) {
                    heap.push(Reverse((r, i)));
                }
            }
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::{Vocab, O200K_PATTERN};
    use proptest::prelude::*;
    use std::borrow::Cow;
    use std::sync::OnceLock;
    use tiktoken_rs::CoreBPE;

    /// The compiled-in vocabulary beside tiktoken's own encoder.
    fn cl100k() -> (&'static CoreBPE, &'static Vocab) {
        static B: OnceLock<CoreBPE> = OnceLock::new();
        (
            B.get_or_init(|| tiktoken_rs::cl100k_base().unwrap()),
            super::cl100k().unwrap(),
        )
    }

    fn o200k() -> (&'static CoreBPE, &'static Vocab) {
        static B: OnceLock<CoreBPE> = OnceLock::new();
        (
            B.get_or_init(|| tiktoken_rs::o200k_base().unwrap()),
            super::o200k().unwrap(),
        )
    }

    /// A vocabulary of `tokens` (rank 0, 1, ... in order), laid out as `build.rs` lays it out.
    fn vocab_of(tokens: &[&[u8]], pattern: &str) -> Option<Vocab> {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for t in tokens {
            bytes.extend_from_slice(t);
            ends.extend_from_slice(&u32::try_from(bytes.len()).ok()?.to_le_bytes());
        }
        Vocab::from_parts(Cow::Owned(bytes), Cow::Owned(ends), pattern)
    }

    #[test]
    fn the_patterns_are_tiktokens() {
        // cl100k_base's pattern is not exported by tiktoken-rs: the differential counts below
        // hold it.
        assert_eq!(O200K_PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
    }

    #[test]
    fn the_compiled_rank_tables_are_the_tokens_own_and_probe_briefly() {
        for v in [super::cl100k().unwrap(), super::o200k().unwrap()] {
            assert!(
                matches!(v.slots, Cow::Borrowed(_)),
                "read from the binary, not built"
            );
            let built = crate::bpe_slots::build_slots(&v.bytes, &v.ends).unwrap();
            assert!(built == v.slots[..], "the build script's table is this one");
            // Linear probing stays short with this hash: the longest run of used slots.
            let (mut run, mut longest) = (0, 0);
            for i in 0..v.slots.len() / 4 {
                run = if v.slot(i) == 0 { 0 } else { run + 1 };
                longest = longest.max(run);
            }
            assert!(longest < 64, "a probe run of {longest} slots");
        }
        // A table that does not fit the tokens is not trusted: the vocabulary builds its own.
        let (bytes, ends) = (&b"abab"[..], &[1u8, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0][..]);
        let v = Vocab::from_compiled([bytes, ends, &[0u8; 8][..]], r"\S+").unwrap();
        assert!(matches!(v.slots, Cow::Owned(_)));
        assert_eq!(
            (v.rank(b"b"), v.rank(b"ab"), v.rank(b"ba")),
            (Some(1), Some(2), None)
        );
        let empty = Vocab::from_compiled([&[][..], &[][..], &[0u8; 8][..]], r"\S+").unwrap();
        assert_eq!((empty.len(), empty.rank(b"a")), (0, None));
        assert!(
            matches!(empty.slots, Cow::Borrowed(_)),
            "an empty table fits no tokens"
        );
    }

    #[test]
    fn a_vocabulary_is_refused_when_its_parts_do_not_fit() {
        let v = vocab_of(&[b"a", b"b", b"ab", b"abab"], r"\S+").unwrap();
        assert_eq!((v.len(), v.rank(b"ab"), v.rank(b"ba")), (4, Some(2), None));
        assert_eq!(v.count("abab ab ba"), 1 + 1 + 2);
        assert!(
            vocab_of(&[b"a", b"a"], r"\S+").is_none(),
            "a repeated token"
        );
        assert!(
            vocab_of(&[b"a"], "(").is_none(),
            "a pattern that does not compile"
        );
        let bytes = Cow::Borrowed(&b"ab"[..]);
        let past_end = Cow::Borrowed(&[3u8, 0, 0, 0][..]);
        assert!(Vocab::from_parts(bytes.clone(), past_end, r"\S+").is_none());
        let ragged = Cow::Borrowed(&[1u8, 0, 0][..]);
        assert!(Vocab::from_parts(bytes, ragged, r"\S+").is_none());
    }

    fn same(text: &str) {
        for (name, (bpe, v)) in [("cl100k", cl100k()), ("o200k", o200k())] {
            assert_eq!(
                v.count(text),
                bpe.encode_ordinary(text).len(),
                "{name}: {text:?}"
            );
        }
    }

    #[test]
    fn holds_every_ordinary_token_of_both_encodings() {
        assert_eq!(cl100k().1.len(), 100_256);
        assert_eq!(o200k().1.len(), 199_998);
        let (bpe, v) = o200k();
        for r in [0u32, 1, 255, 1000, 150_000, 199_997] {
            let bytes = bpe.decode_bytes(&[r]).unwrap();
            assert_eq!(v.rank(&bytes), Some(r));
        }
        assert_eq!(v.rank(b"<|endoftext|>"), None);
    }

    #[test]
    fn counts_as_tiktoken_does() {
        for text in [
            "",
            "hi",
            "Hello, world! How are you today?",
            "tiktoken is great!",
            "  leading and trailing   ",
            "line one\nline two\r\n\r\n\tindented",
            "12345678901234567890 3.14159 -42 1e10",
            "I'm you're they'll we've he'd SHE'S",
            "中文的分词和日本語のテキスト、한국어도",
            "emoji 🙂🙃🤖 and ZWJ 👩‍👩‍👧‍👦 sequences",
            "<|endoftext|> is plain text here <|fim_prefix|>",
            "fn main() { println!(\"{}\", x.map(|y| y * 2)); }",
            "https://example.com/path?query=value&other=1#frag",
            "ǅungla ΣΊΣΥΦΟΣ Ünïcödé çà",
        ] {
            same(text);
        }
    }

    #[test]
    fn long_pieces_merge_as_tiktoken_does() {
        // Pieces of 100 bytes and more take tiktoken's other merge path.
        same(&"a".repeat(1000));
        same(&"ab".repeat(300));
        same(&"supercalifragilisticexpialidocious".repeat(20));
        same(&" ".repeat(500));
        same(&"!?".repeat(200));
        same(&"漢字".repeat(150));
        same(&"x\u{301}".repeat(120));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn any_text_counts_as_tiktoken_does(text in "\\PC{0,200}") {
            same(&text);
        }

        #[test]
        fn word_like_text_counts_as_tiktoken_does(
            text in "([a-zA-Z]{1,12}|[0-9]{1,6}|[ \\t\\n]{1,3}|[.,!?'\"()\\-]|[é中🙂]){0,60}"
        ) {
            same(&text);
        }

        #[test]
        fn long_runs_count_as_tiktoken_does(
            unit in "[a-z]{1,4}|[A-Z][a-z]{0,3}|[ \\n]|[!%&]",
            times in 30usize..200,
        ) {
            same(&unit.repeat(times));
        }
    }
}
