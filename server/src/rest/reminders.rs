//! "Remind me when it starts" (issue #56): a signed-in shopper asks for a text before an
//! upcoming sale opens, or takes it back.

use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use seckill::{domain::VoucherId, reminders, Core};
use webapi::answers::ReminderAnswer;

use super::{
    error::ApiResult,
    extract::{ApiPath, Shopper},
};

/// `201 {"goes_at","state"}` (again: `200`, with where it stands): the shopper is texted `SECKILL_REMINDER_LEAD_MS` before the
/// sale opens (a draw: its entries), in the language of this request.
#[utoipa::path(post, path = "/vouchers/{id}/reminder", operation_id = "ask_reminder", tag = "vouchers", security(("session" = [])), params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 201, description = "Asked: when the text goes.", body = ReminderAnswer),
        (status = 200, description = "Asked before: when the text goes and where it stands (`sent` or `failed`: asking again sends nothing).", body = ReminderAnswer),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`sale_open`: the sale has opened (or ended): nothing to remind of.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn ask(
    State(core): State<Core>,
    Shopper(p): Shopper,
    ApiPath(voucher): ApiPath<VoucherId>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let lang = app::words::of_request(&headers);
    let r = reminders::ask(&core, p.user, voucher, lang.tag(), chrono::Utc::now()).await?;
    let status = if r.new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(ReminderAnswer {
            goes_at: r.goes_at,
            state: r.state.as_str().to_owned(),
        }),
    )
        .into_response())
}

/// `204`: the shopper's reminder is taken back (none: the same).
#[utoipa::path(delete, path = "/vouchers/{id}/reminder", operation_id = "cancel_reminder", tag = "vouchers", security(("session" = [])), params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 204, description = "No reminder waits for this shopper on this sale (none was asked, it was taken back, or it was sent or failed)."),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`sale_open`: the sale has opened (or ended): the reminder has gone or will not. `reminder_sending`: the text is being sent right now and can no longer be taken back.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn cancel(
    State(core): State<Core>,
    Shopper(p): Shopper,
    ApiPath(voucher): ApiPath<VoucherId>,
) -> ApiResult<StatusCode> {
    reminders::cancel(&core, p.user, voucher, chrono::Utc::now()).await?;
    Ok(StatusCode::NO_CONTENT)
}
