//! mcp-common's modules import each other without cycles, in every folder: a module
//! that others build on never leans on them in turn. Read from the sources by
//! `test_support::module_graph`; see the graphs with
//! `cargo test -p mcp-common --test tests -- module_graph:: --nocapture`.

use std::path::Path;

#[test]
fn every_folder_of_mcp_common_imports_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    test_support::module_graph::assert_no_cycles(&src);
}
