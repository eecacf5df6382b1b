//! No source file over 400 lines in the workspace's crates (issue #43): a file that grows past
//! it is split along its seams (design.md §7) before it lands.

use std::path::{Path, PathBuf};

const FOLDERS: &[&str] = &[
    "src",
    "app/src",
    "server/src",
    "webapi/src",
    "domain/src",
    "frontend/src",
    "fakes/src",
    "bench/src",
    "i18n/src",
];
const MAX_LINES: usize = 400;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_400_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for folder in FOLDERS {
        rust_files(&root.join(folder), &mut files);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f)
                .expect("readable")
                .lines()
                .count();
            (lines > MAX_LINES).then(|| format!("{} ({lines})", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}
