//! The core's import graph kept in check (issue #43, design.md §7): reads every `crate::…` path
//! in `src/` (outside comments and `mod tests`), resolves it to the file that defines what it
//! names (following `pub use` re-exports, the crate root's included), and fails when
//!
//! - the infra layer (`src/infra/`) imports a part (anything of the core but `infra`, `secret`,
//!   `signing`; `domain` is a crate of its own), or
//! - files import each other in a circle (a strongly connected component of more than one file).

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `src/` (`sale/lanes.rs` -> `["sale", "lanes"]`).
fn module_of(rel: &str) -> Vec<String> {
    let trimmed = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The `crate::a::b::…` paths a file names, in `use` trees and in expressions, as segment lists.
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Skip the tests inside a file (they may reach anywhere) and comments (a doc link is no
    // import).
    let code: String = text
        .split("#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or(text)
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        // The path, with its braces balanced: `a::b::{c, d::{e}}` or `a::b::C`.
        let mut depth = 0;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    end = i;
                    break;
                }
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ if depth > 0 => {}
                c if c.is_alphanumeric() || c == '_' || c == ':' => {}
                _ => {
                    end = i;
                    break;
                }
            }
        }
        let tree = rest[..end].trim_end_matches("::");
        use_tree(&[], tree, &mut out);
    }
    out.into_iter()
        .map(|p| {
            p.into_iter()
                .filter(|s| !s.is_empty() && s != "self")
                .collect()
        })
        .collect()
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn use_tree(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let mut base = prefix.to_vec();
        base.extend(
            tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        // Split at the commas of this level only.
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_tree(&base, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_tree(&base, &inner[start..], out);
    } else if !tree.is_empty() {
        let mut p = prefix.to_vec();
        p.extend(tree.split("::").map(|s| s.trim().to_owned()));
        out.push(p);
    }
}

/// What a module re-exports (`pub use …`): name -> the path it stands for, as written.
fn exports_of(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for statement in text.split("pub use ").skip(1) {
        let Some(end) = statement.find(';') else {
            continue;
        };
        let mut paths = Vec::new();
        use_tree(&[], &statement[..end], &mut paths);
        for p in paths {
            let p: Vec<String> = p.into_iter().filter(|s| !s.is_empty()).collect();
            if let Some(name) = p.last() {
                out.insert(name.clone(), p.clone());
            }
        }
    }
    out
}

#[test]
fn the_core_imports_only_down_and_in_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rel = |p: &Path| {
        p.strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/")
    };
    let modules: BTreeMap<Vec<String>, String> =
        files.iter().map(|f| (module_of(&rel(f)), rel(f))).collect();
    // Each module file's re-exports (`pub use …`), by module path: a name imported through a
    // module's re-export depends on where the name comes from, not on the re-exporting file.
    let exports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = files
        .iter()
        .map(|f| {
            let module = module_of(&rel(f));
            let text = fs::read_to_string(f).expect("read");
            let own: BTreeMap<String, Vec<String>> = exports_of(&text)
                .into_iter()
                .map(|(name, path)| {
                    // `crate::a` is absolute, `self::a` and `a` relative to the module,
                    // `::a` another crate.
                    let absolute = match path.first().map(String::as_str) {
                        Some("crate") => path[1..].to_vec(),
                        Some("self") => module.iter().chain(&path[1..]).cloned().collect(),
                        Some("domain") if module.is_empty() => path.clone(),
                        _ => module.iter().chain(&path).cloned().collect(),
                    };
                    (name, absolute)
                })
                .collect();
            (module, own)
        })
        .collect();
    // A path resolves to the deepest module that is a file of its own, following re-exports;
    // the domain crate is outside.
    let root: Vec<String> = Vec::new();
    let resolve = |path: &[String]| -> Option<String> {
        let mut path: Vec<String> = path.iter().filter(|s| !s.is_empty()).cloned().collect();
        for _ in 0..8 {
            if path.first().is_some_and(|h| h == "domain") {
                return None;
            }
            let deepest = (1..=path.len())
                .rev()
                .find(|n| modules.contains_key(&path[..*n]));
            let (module, rest) = match deepest {
                Some(n) => (path[..n].to_vec(), path[n..].to_vec()),
                // A name of the root itself: a re-export, else no part (a macro, `testing`).
                None => (root.clone(), path.clone()),
            };
            match rest
                .first()
                .and_then(|name| exports.get(&module)?.get(name))
            {
                Some(real) => path = real.iter().chain(&rest[1..]).cloned().collect(),
                None if module.is_empty() => return None,
                None => return modules.get(&module).cloned(),
            }
        }
        None
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = rel(f);
        let text = fs::read_to_string(f).expect("read");
        for path in crate_paths(&text) {
            if let Some(to) = resolve(&path) {
                if to != from {
                    edges.entry(from.clone()).or_default().insert(to);
                }
            }
        }
    }

    let below = |to: &str| to.starts_with("infra/") || matches!(to, "secret.rs" | "signing.rs");
    let upward: BTreeSet<(String, String)> = edges
        .iter()
        .filter(|(from, _)| from.starts_with("infra/"))
        .flat_map(|(from, tos)| {
            tos.iter()
                .filter(|to| !below(to))
                .map(move |to| (from.clone(), to.clone()))
        })
        .collect();
    assert!(
        upward.is_empty(),
        "infra imports a part (design.md §7): {upward:?}"
    );
    let circles: Vec<Vec<String>> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    assert!(
        circles.is_empty(),
        "files import each other in a circle: {circles:?}"
    );
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(tos) = s.edges.get(v) {
            for w in tos {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    let nodes: Vec<&str> = edges.keys().map(String::as_str).collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}
