//! The pages whose browser bundle depends on what they show, not on their path (design.md
//! decision 54): a draw sale's page loads `seckill-draw`, with the draw panel, while a
//! first-come sale's loads `seckill-sale`, 13 KB of brotli lighter without it. Before the page
//! renders, a sale page's voucher is looked up in this instance's catalog memory (the lookup the
//! page makes next anyway) and the request is marked [`app::PageSet::DRAW_SALES`] for a draw.
//! A route layer on the pages, inside the page cache: a shared rendering already made skips it,
//! and the API never passes through it.

use axum::{
    extract::{Request, State},
    http::Method,
    middleware::Next,
    response::Response,
};
use seckill::{domain::VoucherId, Core};

/// Marks a draw sale's page for its bundle; any other request passes untouched.
pub async fn mark(State(core): State<Core>, mut req: Request, next: Next) -> Response {
    if let Some(id) = sale_page(req.method(), req.uri().path()) {
        // A voucher that cannot be read now renders its own error: no mark.
        if let Ok(Some(v)) = seckill::catalog::voucher(&core, id).await {
            if v.opening.is_draw() {
                req.extensions_mut().insert(app::PageSet::DRAW_SALES);
            }
        }
    }
    next.run(req).await
}

/// The voucher whose sale page `path` is (`/vouchers/{id}`, read by `GET` or `HEAD`).
fn sale_page(method: &Method, path: &str) -> Option<VoucherId> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    path.strip_prefix("/vouchers/")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_sale_page_read_is_looked_up() {
        assert!(sale_page(&Method::GET, "/vouchers/42").is_some());
        assert!(sale_page(&Method::HEAD, "/vouchers/42").is_some());
        for (method, path) in [
            (Method::POST, "/vouchers/42"),
            (Method::GET, "/vouchers/42/draw"),
            (Method::GET, "/vouchers/"),
            (Method::GET, "/vouchers/x"),
            (Method::GET, "/vouchers/-1"),
            (Method::GET, "/api/vouchers/42"),
            (Method::GET, "/"),
        ] {
            assert!(sale_page(&method, path).is_none(), "{method} {path}");
        }
    }
}
