//! One method per REST endpoint: the tests say which endpoint they call and with whose
//! session, and the URL, the body and the send are written once, here. Each answers the
//! server's response whatever its status; `expect_error` and the tests judge it.
//!
//! Path parameters take anything printable, so a test can also send an ID that is not one
//! (`"abc"`) or one that does not exist (`999999`).

use std::fmt::Display;

use reqwest::{Client, RequestBuilder, Response};
use serde_json::Value;

use super::TestApp;

async fn send(request: RequestBuilder) -> Response {
    request.send().await.expect("send")
}

impl TestApp {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `POST /api/login/code` with `body` (`{"phone"}`).
    pub async fn request_code(&self, c: &Client, body: &Value) -> Response {
        send(c.post(self.url("/api/login/code")).json(body)).await
    }

    /// `POST /api/login` with `body` (`{"phone","code"}`).
    pub async fn post_login(&self, c: &Client, body: &Value) -> Response {
        send(c.post(self.url("/api/login")).json(body)).await
    }

    /// `POST /api/logout`.
    pub async fn log_out(&self, c: &Client) -> Response {
        send(c.post(self.url("/api/logout"))).await
    }

    /// `POST /api/logout/everywhere`.
    pub async fn log_out_everywhere(&self, c: &Client) -> Response {
        send(c.post(self.url("/api/logout/everywhere"))).await
    }

    /// `POST /api/admin/vouchers` with `body`.
    pub async fn create_voucher(&self, c: &Client, body: &Value) -> Response {
        send(c.post(self.url("/api/admin/vouchers")).json(body)).await
    }

    /// `PATCH /api/admin/vouchers/{v}` with `body`.
    pub async fn edit_voucher(&self, c: &Client, v: impl Display, body: &Value) -> Response {
        send(
            c.patch(self.url(&format!("/api/admin/vouchers/{v}")))
                .json(body),
        )
        .await
    }

    /// `POST /api/admin/vouchers/{v}/end`.
    pub async fn end_sale(&self, c: &Client, v: impl Display) -> Response {
        send(c.post(self.url(&format!("/api/admin/vouchers/{v}/end")))).await
    }

    /// `POST /api/admin/vouchers/{v}/stock` with `body` (`{"delta"}`).
    pub async fn move_stock(&self, c: &Client, v: impl Display, body: &Value) -> Response {
        send(
            c.post(self.url(&format!("/api/admin/vouchers/{v}/stock")))
                .json(body),
        )
        .await
    }

    /// `POST /api/admin/orders/{order}/refund`.
    pub async fn refund(&self, c: &Client, order: impl Display) -> Response {
        send(c.post(self.url(&format!("/api/admin/orders/{order}/refund")))).await
    }

    /// `GET /api/admin/payments{query}` (`query` empty or starting with `?`).
    pub async fn payments(&self, c: &Client, query: &str) -> Response {
        send(c.get(self.url(&format!("/api/admin/payments{query}")))).await
    }

    /// `GET /api/vouchers/{v}`.
    pub async fn voucher(&self, c: &Client, v: impl Display) -> Response {
        send(c.get(self.url(&format!("/api/vouchers/{v}")))).await
    }

    /// `GET /api/vouchers/{v}/stock`.
    pub async fn stock(&self, c: &Client, v: impl Display) -> Response {
        send(c.get(self.url(&format!("/api/vouchers/{v}/stock")))).await
    }

    /// `GET /api/vouchers/{v}/events` (the stream's response; read its body to follow it).
    pub async fn events(&self, c: &Client, v: impl Display) -> Response {
        send(c.get(self.url(&format!("/api/vouchers/{v}/events")))).await
    }

    /// `POST /api/vouchers/{v}/orders`: a buy.
    pub async fn buy(&self, c: &Client, v: impl Display) -> Response {
        send(c.post(self.url(&format!("/api/vouchers/{v}/orders")))).await
    }

    /// `POST /api/vouchers/{v}/entries`: an entry to a draw.
    pub async fn enter(&self, c: &Client, v: impl Display) -> Response {
        send(c.post(self.url(&format!("/api/vouchers/{v}/entries")))).await
    }

    /// `GET /api/vouchers/{v}/entries/me`: the shopper's standing in a draw.
    pub async fn my_entry(&self, c: &Client, v: impl Display) -> Response {
        send(c.get(self.url(&format!("/api/vouchers/{v}/entries/me")))).await
    }

    /// `GET /api/vouchers/{v}/draw`: a draw's transcript.
    pub async fn draw(&self, c: &Client, v: impl Display) -> Response {
        send(c.get(self.url(&format!("/api/vouchers/{v}/draw")))).await
    }

    /// `GET /api/orders/{order}`.
    pub async fn order(&self, c: &Client, order: impl Display) -> Response {
        send(c.get(self.url(&format!("/api/orders/{order}")))).await
    }

    /// `POST /api/orders/{order}/cancel`.
    pub async fn cancel(&self, c: &Client, order: impl Display) -> Response {
        send(c.post(self.url(&format!("/api/orders/{order}/cancel")))).await
    }

    /// `POST /api/orders/{order}/pay`.
    pub async fn pay(&self, c: &Client, order: impl Display) -> Response {
        send(c.post(self.url(&format!("/api/orders/{order}/pay")))).await
    }

    /// `GET /api/health`.
    pub async fn health(&self, c: &Client) -> Response {
        send(c.get(self.url("/api/health"))).await
    }

    /// `GET /api/live`.
    pub async fn live(&self, c: &Client) -> Response {
        send(c.get(self.url("/api/live"))).await
    }
}
