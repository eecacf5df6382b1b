//! The site's static files (`/pkg/…`: the wasm, its JS glue, the CSS), read into memory once at
//! start-up with their precompressed copies (`.br`, `.gz`, written by `scripts/build.sh
//! --release`), and answered from there: the encoding the browser takes (brotli, else gzip,
//! else none), `ETag` / `If-None-Match` and `Last-Modified` / `If-Modified-Since` (304s), and
//! `Vary: accept-encoding`. On sale day every cold visit asks for three of them; from memory
//! they cost what a cached page costs, where opening and reading the file on every request held
//! them to a third of that (BENCHMARKS.md "Pages"). A new build is a new server start, as it is
//! for the server's own code.
//!
//! A release build also writes each file under a name carrying a hash of the bundle's bytes
//! (`seckill.<16 hex>.js`, `.wasm`, `.css`) and the hash in `hash.txt` beside the server binary.
//! When every file is there, [`hashed_bundle`] names the bundle so, pages name the hashed
//! files, and those are sent as `immutable` for a year, without validators: a new build has new
//! names, so a browser never needs to ask again. The plain names stay
//! (a debug build has only those) and are sent `no-cache`: revalidated, 304 when unchanged.

use std::{
    collections::HashMap,
    path::Path,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use axum::{
    body::{Body, Bytes},
    extract::{Request, State},
    http::{header, HeaderMap, HeaderValue, Method, StatusCode},
    response::{IntoResponse, Response},
    Router,
};
use sha2::{Digest, Sha256};

const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const REVALIDATE: &str = "no-cache";

/// One file and its precompressed copies.
struct Asset {
    body: Bytes,
    br: Option<Bytes>,
    gzip: Option<Bytes>,
    content_type: HeaderValue,
    /// The first 16 hex digits of the SHA-256 of `body`: the same on every instance that
    /// serves the same build.
    tag: String,
    /// The file's modification time, to the second (HTTP dates have no finer grain).
    modified: SystemTime,
    immutable: bool,
}

/// The encodings a response can have.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Encoding {
    Br,
    Gzip,
    Identity,
}

impl Encoding {
    /// Its `Content-Encoding` (none for the file as it is).
    fn coding(self) -> Option<&'static str> {
        match self {
            Self::Br => Some("br"),
            Self::Gzip => Some("gzip"),
            Self::Identity => None,
        }
    }
}

/// Every file under the site's pkg directory, by its path there (`seckill.js`,
/// `snippets/…`).
#[derive(Default)]
pub struct Assets {
    files: HashMap<String, Asset>,
}

impl Assets {
    /// Reads `dir` whole. A directory that is not there (a server started before any bundle
    /// was built, as the Rust tests do) serves nothing; a file that cannot be read is an error.
    pub fn load(dir: &Path) -> std::io::Result<Self> {
        let mut assets = Self::default();
        if !dir.is_dir() {
            return Ok(assets);
        }
        // The plain and the hashed name of a file share their bytes.
        let mut seen: HashMap<[u8; 32], Bytes> = HashMap::new();
        // A file's bytes and their SHA-256.
        let mut read = |path: &Path| -> std::io::Result<(Bytes, [u8; 32])> {
            let bytes = std::fs::read(path)?;
            let digest: [u8; 32] = Sha256::digest(&bytes).into();
            let shared = seen.entry(digest).or_insert_with(|| Bytes::from(bytes));
            Ok((shared.clone(), digest))
        };
        let mut pending = vec![dir.to_path_buf()];
        while let Some(folder) = pending.pop() {
            for entry in std::fs::read_dir(&folder)? {
                let path = entry?.path();
                if path.is_dir() {
                    pending.push(path);
                    continue;
                }
                let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if name.ends_with(".br") || name.ends_with(".gz") {
                    continue;
                }
                let Some(relative) = path
                    .strip_prefix(dir)
                    .ok()
                    .and_then(|r| r.to_str())
                    .map(|r| r.replace(std::path::MAIN_SEPARATOR, "/"))
                else {
                    continue;
                };
                let (body, digest) = read(&path)?;
                let mut sibling = |ext: &str| {
                    let copy = path.with_file_name(format!("{name}.{ext}"));
                    let read = copy.is_file().then(|| read(&copy)).transpose()?;
                    Ok::<_, std::io::Error>(read.map(|(bytes, _)| bytes))
                };
                let br = sibling("br")?;
                let gzip = sibling("gz")?;
                let modified = std::fs::metadata(&path)?
                    .modified()
                    .map(whole_seconds)
                    .unwrap_or(UNIX_EPOCH);
                let tag = hex::encode(&digest[..8]);
                let asset = Asset {
                    content_type: HeaderValue::from_static(content_type(name)),
                    immutable: is_hashed_name(name),
                    body,
                    br,
                    gzip,
                    tag,
                    modified,
                };
                assets.files.insert(relative, asset);
            }
        }
        Ok(assets)
    }

    /// How many files there are and their bytes in memory, for the start-up log.
    pub fn footprint(&self) -> (usize, usize) {
        let mut seen = std::collections::HashSet::new();
        let mut bytes = 0;
        for a in self.files.values() {
            for b in [Some(&a.body), a.br.as_ref(), a.gzip.as_ref()]
                .into_iter()
                .flatten()
            {
                if seen.insert(b.as_ptr()) {
                    bytes += b.len();
                }
            }
        }
        (self.files.len(), bytes)
    }
}

/// `assets` as a router to nest at `/<pkg dir>`.
pub fn router(assets: Assets) -> Router {
    Router::new().fallback(answer).with_state(Arc::new(assets))
}

/// A file, in the encoding the browser takes, or a 304 when its copy is current.
async fn answer(State(assets): State<Arc<Assets>>, req: Request) -> Response {
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, HeaderValue::from_static("GET, HEAD"))],
        )
            .into_response();
    }
    let path = req.uri().path().trim_start_matches('/');
    let Some(asset) = assets.files.get(path) else {
        // A hashed name that is missing now (a page from a newer build reached an older
        // instance) may exist after the next deploy, so its 404 is asked again.
        return (
            StatusCode::NOT_FOUND,
            [
                (header::CACHE_CONTROL, HeaderValue::from_static(REVALIDATE)),
                (header::VARY, HeaderValue::from_static("accept-encoding")),
            ],
        )
            .into_response();
    };
    let headers = req.headers();
    let encoding = preferred(headers, asset.br.is_some(), asset.gzip.is_some());
    let body = match encoding {
        Encoding::Br => asset.br.clone(),
        Encoding::Gzip => asset.gzip.clone(),
        Encoding::Identity => None,
    }
    .unwrap_or_else(|| asset.body.clone());
    // One tag per representation: the file's, with its coding after it.
    let etag = match encoding.coding() {
        Some(coding) => format!("\"{}-{coding}\"", asset.tag),
        None => format!("\"{}\"", asset.tag),
    };
    let mut out = Response::builder().header(header::VARY, "accept-encoding");
    // A hashed name is never asked again (a new build has new names): no validators, 75 bytes
    // of each cold page's first files. A plain name is revalidated by its tag or its date.
    if asset.immutable {
        out = out.header(header::CACHE_CONTROL, IMMUTABLE);
    } else {
        out = out
            .header(header::CACHE_CONTROL, REVALIDATE)
            .header(header::ETAG, &etag)
            .header(
                header::LAST_MODIFIED,
                httpdate::fmt_http_date(asset.modified),
            );
    }
    if !asset.immutable && unchanged(headers, &etag, asset.modified) {
        return out
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
            .unwrap_or_else(|_| StatusCode::NOT_MODIFIED.into_response());
    }
    out = out
        .header(header::CONTENT_TYPE, asset.content_type.clone())
        .header(header::CONTENT_LENGTH, body.len());
    if let Some(coding) = encoding.coding() {
        out = out.header(header::CONTENT_ENCODING, coding);
    }
    let body = if *req.method() == Method::HEAD {
        Body::empty()
    } else {
        Body::from(body)
    };
    out.body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The encoding to answer in: brotli when the browser takes it and the build wrote it, else
/// gzip likewise, else none. A coding listed with `q=0` is refused.
fn preferred(headers: &HeaderMap, has_br: bool, has_gzip: bool) -> Encoding {
    let mut br = false;
    let mut gzip = false;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            if refused {
                continue;
            }
            if coding.eq_ignore_ascii_case("br") {
                br = true;
            } else if coding.eq_ignore_ascii_case("gzip") {
                gzip = true;
            }
        }
    }
    if br && has_br {
        Encoding::Br
    } else if gzip && has_gzip {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

/// Whether the browser's copy is current: `If-None-Match` names this representation's tag
/// (or `*`); without it, `If-Modified-Since` is no older than the file.
fn unchanged(headers: &HeaderMap, etag: &str, modified: SystemTime) -> bool {
    if let Some(v) = headers.get(header::IF_NONE_MATCH) {
        let Ok(v) = v.to_str() else { return false };
        return v.split(',').map(str::trim).any(|t| {
            t == "*" || t == etag || t.strip_prefix("W/").is_some_and(|weak| weak == etag)
        });
    }
    headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v).ok())
        .is_some_and(|since| modified <= since)
}

fn whole_seconds(t: SystemTime) -> SystemTime {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or_default() {
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// `<name>.<16 hex digits>.<ext>`: a name that changes whenever the bytes do.
fn is_hashed_name(file: &str) -> bool {
    let mut parts = file.rsplit('.');
    let (Some(_ext), Some(hash), Some(_name)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The hashed name of the site's bundle (`seckill.<16 hex>`), when the build wrote one:
/// `hash.txt` beside this binary gives the one hash of the JS, the wasm and the CSS (Leptos's
/// format: `js: <hash>` and so on), and each of the three files is in the site's pkg directory.
/// A stale list (a debug build's site), a missing file or hashes that differ leave the plain
/// names on. Read once at start-up: Leptos's own `hash_files` would read the list again on
/// every page it renders.
pub fn hashed_bundle(options: &leptos::config::LeptosOptions) -> Option<String> {
    let list = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&*options.hash_file)))
        .and_then(|path| std::fs::read_to_string(path).ok())?;
    let pkg = std::path::Path::new(&*options.site_root).join(&*options.site_pkg_dir);
    let mut hash: Option<&str> = None;
    let mut found = 0;
    for line in list.lines() {
        let Some((ext, h)) = line.split_once(':') else {
            continue;
        };
        let (ext, h) = (ext.trim(), h.trim());
        if !matches!(ext, "js" | "wasm" | "css") {
            continue;
        }
        if hash.is_some_and(|first| first != h) {
            return None;
        }
        hash = Some(h);
        let file = format!("{}.{h}.{ext}", options.output_name);
        if !is_hashed_name(&file) || !pkg.join(&file).is_file() {
            return None;
        }
        found += 1;
    }
    (found == 3).then(|| format!("{}.{}", options.output_name, hash.unwrap_or_default()))
}

#[cfg(test)]
mod tests;
