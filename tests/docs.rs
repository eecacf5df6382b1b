//! The documents kept true (issue #54). Reads README.md, CONTRIBUTING.md, BENCHMARKS.md and
//! every `docs/**/*.md` as text, and the sources as text, and fails when
//!
//! - a document names a repository path that does not exist: a code span whose first word
//!   starts with a top-level folder (`src/…`) or is a `.md` file (from the root), or a
//!   markdown link (from the document's folder); a trailing `:line` or `#anchor` is dropped,
//!   and a name with a placeholder (`{id}`, `<name>`, `*`, `…`) is skipped;
//! - a document names a `SECKILL_*` variable nothing reads, or something reads one that
//!   docs/operations.md does not name ("reads": a string literal in the crates' sources or
//!   tests, or a name in `scripts/*.sh`);
//! - the server registers a route that no route table of docs/api.md or docs/pages.md lists, or
//!   such a table lists one it does not register; or docs/openapi.json and the REST handlers'
//!   `#[utoipa::path]` attributes disagree on the REST paths.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// The top-level folders a path in a document may start with.
const FOLDERS: &str = "src app server domain i18n webapi fakes bench scripts lua migrations \
                       end2end docs style frontend tests";
/// Top-level files a document may name without a folder (and any `.md` file).
const FILES: &str = "Cargo.toml Cargo.lock rust-toolchain.toml";
/// Where the product's variables are read: the crates' sources and tests (string literals).
const READERS: &str = "src server/src app/src domain/src webapi/src i18n/src fakes/src \
                       bench/src tests/it server/tests";
/// The documents whose tables list the routes.
const ROUTE_TABLES: &[&str] = &["docs/api.md", "docs/pages.md"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A path as the repository names it (`docs/api.md`).
fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every file under the folder `dir` (from the root) whose name ends with `suffix`.
fn files(dir: &str, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root().join(dir)];
    while let Some(folder) = todo.pop() {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The documents: README.md, CONTRIBUTING.md, BENCHMARKS.md and docs/**/*.md.
fn documents() -> Vec<PathBuf> {
    let top = ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"].map(|f| root().join(f));
    top.into_iter().chain(files("docs", ".md")).collect()
}

/// A document's text outside its fenced code blocks.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The code spans of `text` (what stands between a pair of backticks).
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// `path` without a trailing `#anchor` or `:line`; None when it holds a placeholder.
fn plain_path(path: &str) -> Option<&str> {
    let path = path.split('#').next().unwrap_or(path);
    let path = path
        .rsplit_once(':')
        .filter(|(_, l)| !l.is_empty() && l.chars().all(|c| c.is_ascii_digit() || c == '-'))
        .map_or(path, |(p, _)| p);
    let placeholder = path.contains(|c: char| "{}<>*…$".contains(c));
    (!path.is_empty() && !placeholder).then_some(path)
}

/// The repository path a code span names from the root, if it names one.
fn span_path(span: &str) -> Option<&str> {
    let path = plain_path(span.split_whitespace().next()?)?;
    let in_folder = path
        .split_once('/')
        .is_some_and(|(top, _)| FOLDERS.split_whitespace().any(|f| f == top));
    let top_file = !path.contains('/')
        && (path.ends_with(".md") || FILES.split_whitespace().any(|f| f == path));
    (in_folder || top_file).then_some(path)
}

/// The targets of the markdown links in `text` (`[text](target)`), addresses elsewhere left out.
fn link_targets(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|t| !t.contains("://") && !t.starts_with('#') && !t.starts_with("mailto:"))
        .filter_map(plain_path)
        .collect()
}

/// What a document names that does not exist.
fn missing_paths(doc: &Path) -> Vec<String> {
    let text = prose(&read(doc));
    let name = rel(doc);
    let folder = doc.parent().unwrap_or(root());
    let mut out = Vec::new();
    for path in code_spans(&text).into_iter().filter_map(span_path) {
        if !root().join(path).exists() {
            out.push(format!("{name} names `{path}`, which does not exist"));
        }
    }
    for target in link_targets(&text) {
        let at = match target.strip_prefix('/') {
            Some(from_root) => root().join(from_root),
            None => folder.join(target),
        };
        if !at.exists() {
            out.push(format!("{name} links to {target}, which does not exist"));
        }
    }
    out
}

#[test]
fn every_path_a_document_names_exists() {
    let docs = documents();
    assert!(docs.len() > 10, "only {} documents", docs.len());
    let missing: Vec<String> = docs.iter().flat_map(|d| missing_paths(d)).collect();
    assert!(missing.is_empty(), "\n{}", missing.join("\n"));
}

/// The `SECKILL_…` names in `text` (after a `"` when `quoted`). A name that ends in `_` is a
/// family (`SECKILL_STRIPE_*`), not a variable.
fn seckill_names(text: &str, quoted: bool) -> BTreeSet<String> {
    let needle = if quoted { "\"SECKILL_" } else { "SECKILL_" };
    let skip = needle.len() - "SECKILL_".len();
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(needle) {
        let tail = &rest[at + skip..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        rest = &tail[name.len()..];
        if !name.ends_with('_') {
            out.insert(name);
        }
    }
    out
}

/// Every variable the product, its scripts and its tests read, with the first file that reads
/// it. No name is built at run time: the configuration's readers (`src/config/read.rs`) take
/// `&'static str` names, so every variable is a literal and no allow-list is needed.
fn read_variables() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let sources = READERS.split_whitespace().flat_map(|dir| files(dir, ".rs"));
    for file in sources {
        for name in seckill_names(&read(&file), true) {
            out.entry(name).or_insert_with(|| rel(&file));
        }
    }
    for file in files("scripts", ".sh") {
        for name in seckill_names(&read(&file), false) {
            out.entry(name).or_insert_with(|| rel(&file));
        }
    }
    out
}

#[test]
fn every_variable_is_read_and_documented() {
    let read_vars = read_variables();
    assert!(read_vars.len() > 50, "only {} variables", read_vars.len());
    let mut wrong = Vec::new();
    for doc in documents() {
        for name in seckill_names(&read(&doc), false) {
            if !read_vars.contains_key(&name) {
                wrong.push(format!("{} names {name}, which nothing reads", rel(&doc)));
            }
        }
    }
    let table = seckill_names(&read(&root().join("docs/operations.md")), false);
    for (name, reader) in &read_vars {
        if !table.contains(name) {
            wrong.push(format!(
                "{reader} reads {name}, which docs/operations.md does not name"
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// A route: its method (upper case; `ANY` for every method, empty when a table does not say),
/// its path with each `{name}` or `:name` segment written `{}`, and where it was found.
type Route = (String, String, String);

fn route(method: &str, path: &str, source: &str) -> Route {
    let segments: Vec<&str> = path
        .split('/')
        .map(|s| match s.chars().next() {
            Some(':' | '{') => "{}",
            _ => s,
        })
        .collect();
    let method = method.trim().to_ascii_uppercase();
    (method, segments.join("/"), source.to_owned())
}

/// Whether two routes are one: the same path, and the same method where both say one.
fn same((m1, p1, _): &Route, (m2, p2, _): &Route) -> bool {
    let any = |m: &str| m.is_empty() || m == "ANY";
    p1 == p2 && (any(m1.as_str()) || any(m2.as_str()) || m1 == m2)
}

/// The text after the first `key` in `text` up to the next `"` (`key` ends with a `"`).
fn quoted_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = text.find(key)? + key.len();
    text[start..].split('"').next()
}

/// A source file's code before its inline tests (`#[cfg(test)]`); none of a `tests.rs`.
fn code_of(file: &Path) -> String {
    if file.ends_with("tests.rs") {
        return String::new();
    }
    let text = read(file);
    text.split("#[cfg(test)]").next().unwrap_or("").to_owned()
}

/// The REST routes: each `#[utoipa::path(method, path = "…")]` in `server/src/rest/`, under
/// `/api` (where `server/src/startup.rs` nests the REST router).
fn rest_routes() -> Vec<Route> {
    let startup = read(&root().join("server/src/startup.rs"));
    let nested = startup.contains(".nest(\"/api\", rest::router()");
    assert!(nested, "the REST router is no longer nested at /api");
    let mut out = Vec::new();
    for file in files("server/src/rest", ".rs") {
        let code = code_of(&file);
        for attr in code.split("#[utoipa::path(").skip(1) {
            let method = attr.split(',').next().unwrap_or("");
            if let Some(path) = quoted_after(attr, "path = \"") {
                out.push(route(method, &format!("/api{path}"), &rel(&file)));
            }
        }
    }
    out
}

/// The routes axum registers by hand: `.route("/path", method(…))` in `server/src/`.
fn axum_routes() -> Vec<Route> {
    let mut out = Vec::new();
    for file in files("server/src", ".rs") {
        let code = code_of(&file);
        for call in code.split(".route(\"").skip(1) {
            let Some((path, rest)) = call.split_once('"') else {
                continue;
            };
            let method = rest.trim_start_matches([',', ' ']).split('(').next();
            out.push(route(method.unwrap_or(""), path, &rel(&file)));
        }
    }
    out
}

/// The pages (`path!("…")` in `app/src/`) and the server functions (`#[server(prefix = "…",
/// endpoint = "…")]`, answered to `POST`).
fn app_routes() -> Vec<Route> {
    let mut out = Vec::new();
    for file in files("app/src", ".rs") {
        let code = code_of(&file);
        for page in code.split("path!(\"").skip(1) {
            let path = page.split('"').next().unwrap_or("");
            out.push(route("GET", path, &rel(&file)));
        }
        for attr in code.split("#[server(").skip(1) {
            let attr = attr.split(")]").next().unwrap_or("");
            let prefix = quoted_after(attr, "prefix = \"");
            let endpoint = quoted_after(attr, "endpoint = \"");
            if let (Some(prefix), Some(endpoint)) = (prefix, endpoint) {
                out.push(route("POST", &format!("{prefix}/{endpoint}"), &rel(&file)));
            }
        }
    }
    out
}

/// The first cell of a table row (`| first | …`), its escaped pipes (`\|`) kept inside.
fn first_cell(row: &str) -> Option<&str> {
    let body = row.trim().strip_prefix('|')?;
    let (end, _) = body
        .char_indices()
        .find(|&(i, c)| c == '|' && !body[..i].ends_with('\\'))?;
    Some(&body[..end])
}

/// The routes the tables of `doc` list: code spans in a row's first cell that are a path
/// (`/orders/{id}`) or a method and a path (`POST /api/login`); a query (`?page=2`) is dropped.
fn listed_routes(doc: &str) -> Vec<Route> {
    let text = prose(&read(&root().join(doc)));
    let mut out = Vec::new();
    for cell in text.lines().filter_map(first_cell) {
        for span in code_spans(cell) {
            let words: Vec<&str> = span.split_whitespace().collect();
            let (method, path) = match words.as_slice() {
                [p, ..] if p.starts_with('/') => ("", *p),
                [m, p, ..] if p.starts_with('/') && m.bytes().all(|b| b.is_ascii_uppercase()) => {
                    (*m, *p)
                }
                _ => continue,
            };
            let path = path.split('?').next().unwrap_or(path);
            out.push(route(method, path, doc));
        }
    }
    out
}

#[test]
fn every_route_is_registered_and_listed() {
    let mut registered = rest_routes();
    registered.extend(axum_routes());
    registered.extend(app_routes());
    assert!(registered.len() > 40, "only {} routes", registered.len());
    let listed: Vec<Route> = ROUTE_TABLES.iter().flat_map(|d| listed_routes(d)).collect();
    let tables = ROUTE_TABLES.join(" or ");
    let unlisted = registered
        .iter()
        .filter(|r| !listed.iter().any(|l| same(l, r)));
    let unregistered = listed
        .iter()
        .filter(|l| !registered.iter().any(|r| same(r, l)));
    let mut wrong: Vec<String> = unlisted
        .map(|(m, p, at)| format!("{at} registers {m} {p}: no route table of {tables} lists it"))
        .collect();
    wrong.extend(
        unregistered.map(|(m, p, at)| format!("{at} lists {m} {p}, which nothing registers")),
    );
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// The paths of docs/openapi.json (the keys of its `paths`, one a line as the server writes
/// them: `"/api/…": {`).
fn openapi_paths() -> BTreeSet<String> {
    read(&root().join("docs/openapi.json"))
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"'))
        .filter_map(|l| l.strip_suffix("\": {"))
        .filter(|p| p.starts_with("/api/"))
        .map(|p| route("", p, "").1)
        .collect()
}

#[test]
fn the_openapi_snapshot_lists_the_rest_routes() {
    let declared: BTreeSet<String> = rest_routes().into_iter().map(|r| r.1).collect();
    let kept = openapi_paths();
    let only_kept = kept.difference(&declared).map(|p| {
        format!(
            "docs/openapi.json lists {p}, which no #[utoipa::path] in server/src/rest/ declares"
        )
    });
    let only_declared = declared
        .difference(&kept)
        .map(|p| format!("server/src/rest/ declares {p}, which docs/openapi.json does not list"));
    let wrong: Vec<String> = only_kept.chain(only_declared).collect();
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
