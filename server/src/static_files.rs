//! The site's static files (`/pkg/…`: the wasm, its JS glue, the CSS), served with their
//! precompressed copies (`.br`, `.gz`, written by `scripts/build.sh --release`) and
//! `Last-Modified` / `If-Modified-Since`; the body depends on `Accept-Encoding`, hence `Vary`.
//!
//! A release build also writes each file under a name carrying a hash of the bundle's bytes
//! (`seckill.<16 hex>.js`, `.wasm`, `.css`) and the hash in `hash.txt` beside the server binary.
//! When every file is there, [`hashed_bundle`] names the bundle so, pages name the hashed
//! files, and those are sent as `immutable` for a year: a new build has new names, so a browser
//! never needs to ask again. The plain names stay
//! (a debug build has only those) and are sent `no-cache`: revalidated, 304 when unchanged.

use axum::{
    extract::Request,
    http::{header, HeaderValue},
    middleware::{self, Next},
    response::Response,
};
use tower::ServiceBuilder;
use tower_http::services::ServeDir;

/// `<site root>/<pkg dir>` as a service to mount at `/<pkg dir>`.
pub fn service(
    options: &leptos::config::LeptosOptions,
) -> impl tower::Service<
    Request,
    Response = Response,
    Error = std::convert::Infallible,
    Future = impl Send + 'static,
> + Clone
       + Send
       + Sync
       + 'static {
    let dir = std::path::Path::new(&*options.site_root).join(&*options.site_pkg_dir);
    ServiceBuilder::new()
        .layer(middleware::from_fn(cache_headers))
        .service(ServeDir::new(dir).precompressed_br().precompressed_gzip())
}

/// `Cache-Control` by name (hashed: immutable; plain: revalidate) and `Vary`. Only a file that
/// exists is immutable: a hashed name that is missing now (a page from a newer build reached an
/// older instance) may exist after the next deploy, so its 404 is asked again.
async fn cache_headers(req: Request, next: Next) -> Response {
    let hashed = is_hashed_name(req.uri().path().rsplit('/').next().unwrap_or_default());
    let mut response = next.run(req).await;
    let found = response.status().is_success() || response.status().is_redirection();
    let hashed = hashed && found;
    let headers = response.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if hashed {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    response
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
mod tests {
    use super::*;
    use tower::ServiceExt;

    #[tokio::test]
    async fn only_a_hashed_file_that_exists_is_immutable() {
        let dir = std::env::temp_dir().join(format!("seckill-static-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("seckill.0123456789abcdef.js"), "x").expect("file");
        let control = |name: &str| {
            let svc = ServiceBuilder::new()
                .layer(middleware::from_fn(cache_headers))
                .service(ServeDir::new(&dir));
            let req = Request::builder()
                .uri(format!("/{name}"))
                .body(axum::body::Body::empty())
                .expect("request");
            async move {
                let res = svc.oneshot(req).await.expect("infallible");
                (
                    res.status().as_u16(),
                    res.headers()[header::CACHE_CONTROL].clone(),
                )
            }
        };
        let (status, found) = control("seckill.0123456789abcdef.js").await;
        assert_eq!(
            (status, found.to_str().expect("ascii")),
            (200, "public, max-age=31536000, immutable")
        );
        let (status, missing) = control("seckill.fedcba9876543210.js").await;
        assert_eq!(
            (status, missing.to_str().expect("ascii")),
            (404, "no-cache")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_names_with_a_sixteen_digit_hash_are_hashed() {
        assert!(is_hashed_name("seckill.0123456789abcdef.js"));
        assert!(is_hashed_name("seckill.0123456789abcdef.wasm"));
        for name in [
            "seckill.js",
            "seckill.css",
            "seckill.0123456789abcde.js",
            "seckill.0123456789abcdeg.js",
            "0123456789abcdef.js",
            "",
        ] {
            assert!(!is_hashed_name(name), "{name}");
        }
    }
}
