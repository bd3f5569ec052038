// Rebuild when a migration is added or changed: `embed_migrations!` reads the folders at
// compile time, and cargo does not notice new folders by itself.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
