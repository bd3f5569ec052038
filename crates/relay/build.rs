//! Writes the ordinary tokens of tiktoken's cl100k_base and o200k_base encodings into `OUT_DIR`
//! in the compact form `src/bpe.rs` reads with `include_bytes!`: `<name>.bytes` (every token's
//! bytes, rank after rank) and `<name>.ends` (where each token ends in it, little-endian `u32`).
//! The server then carries the tokens as read-only data, instead of building tiktoken's tables
//! (~30 MB) at run time to count a stream that ended without a usage report. `<name>.slots` is
//! the rank table over them (`src/bpe_slots.rs`, shared with the library), read-only data too.

use std::path::PathBuf;

#[path = "src/bpe_slots.rs"]
mod bpe_slots;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/bpe_slots.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?);
    let encodings = [
        ("cl100k_base", tiktoken_rs::cl100k_base()),
        ("o200k_base", tiktoken_rs::o200k_base()),
    ];
    for (name, bpe) in encodings {
        let bpe = bpe.map_err(|e| format!("tiktoken's {name} does not load: {e}"))?;
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        // The ordinary tokens have the ranks 0, 1, ...; the special tokens come after a gap.
        for rank in 0.. {
            let Ok(token) = bpe.decode_bytes(&[rank]) else {
                break;
            };
            bytes.extend_from_slice(&token);
            ends.extend_from_slice(&u32::try_from(bytes.len())?.to_le_bytes());
        }
        let slots = bpe_slots::build_slots(&bytes, &ends).ok_or(format!(
            "{name}: the tokens do not make a rank table (a repeat?)"
        ))?;
        for (ext, data) in [("bytes", &bytes), ("ends", &ends), ("slots", &slots)] {
            let path = out.join(format!("{name}.{ext}"));
            std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}
