//! `relay-path.ld`, the code layout that `build.rs` gives release links on Linux (written by
//! `make link-order`): only release builds use it, which the test suite does not make, so a
//! script the linker refuses would first show in `make run`. Here it is read and linked.

#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::process::Command;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("relay-path.ld")
}

#[test]
fn the_layout_lists_only_function_sections() {
    let text = std::fs::read_to_string(script()).expect("crates/server/relay-path.ld");
    let body = text
        .split_once("SECTIONS {\n  .text : {\n")
        .and_then(|(_, rest)| rest.split_once("\n  }\n} INSERT AFTER .init;"))
        .map(|(body, _)| body)
        .expect("SECTIONS { .text : { ... } } INSERT AFTER .init;");
    let mut seen = std::collections::HashSet::new();
    let mut n = 0;
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        let pattern = line
            .strip_prefix("    *(.text.")
            .and_then(|p| p.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not a function section pattern: {line:?}"));
        assert!(
            !pattern.is_empty()
                && pattern
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.$*".contains(&b)),
            "a pattern the linker could misread: {line:?}"
        );
        assert!(seen.insert(pattern), "listed twice: {line:?}");
        n += 1;
    }
    // The relay path alone is over a thousand functions: a short list was cut.
    assert!(n > 1000, "only {n} functions listed");
}

#[test]
fn a_program_links_and_runs_with_the_layout() {
    let dir = std::env::temp_dir().join(format!("switchboard-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join("main.c");
    let exe = dir.join("main");
    std::fs::write(&src, "int main(void) { return 7; }\n").expect("write main.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let linked = Command::new(&cc)
        .arg(&src)
        .arg(format!("-Wl,-T,{}", script().display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{cc}: {e} (a C compiler is needed to build the SQLite)"));
    assert!(
        linked.status.success(),
        "the linker refused relay-path.ld:\n{}",
        String::from_utf8_lossy(&linked.stderr)
    );
    let ran = Command::new(&exe).status().expect("run the linked program");
    assert_eq!(ran.code(), Some(7));
    let _ = std::fs::remove_dir_all(&dir);
}
