//! Release links on Linux lay the code that runs at start-up and on the relay path out together
//! (`relay-path.ld`, written by `make link-order`; bench/README.md, "Code layout"): the kernel
//! maps code 64 KiB around each page first run, and scattered through the binary that code kept
//! most of it resident. `SWITCHBOARD_LINK_ORDER=0` links in the linker's own order.

fn main() {
    println!("cargo:rerun-if-changed=relay-path.ld");
    println!("cargo:rerun-if-env-changed=SWITCHBOARD_LINK_ORDER");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let wanted = std::env::var("SWITCHBOARD_LINK_ORDER").map_or(true, |v| v.trim() != "0");
    if !(linux && release && wanted) {
        return;
    }
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let script = std::path::Path::new(&dir).join("relay-path.ld");
    if script.is_file() {
        // A script of only SECTIONS ... INSERT adds to the linker's default layout (GNU ld and
        // LLD alike); patterns that match nothing are no error.
        println!(
            "cargo:rustc-link-arg-bin=switchboard=-Wl,-T,{}",
            script.display()
        );
    }
}
