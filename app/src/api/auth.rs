//! Signing in and out, and who is signed in.

use leptos::prelude::*;

use crate::{error::AppError, wire::Me};

/// The signed-in user, if any.
#[server(prefix = "/sf", endpoint = "whoami")]
pub async fn whoami() -> Result<Option<Me>, AppError> {
    let core = crate::ssr::core()?;
    match crate::ssr::signed_in(&core).await {
        Ok(p) => Ok(Some(Me {
            user_id: p.user,
            phone: p.phone,
            is_admin: p.is_admin,
        })),
        Err(AppError::Unauthenticated) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Sends a sign-in code; in dev mode returns it. A browser without JavaScript (a plain form
/// post) is sent back to the sign-in page with the phone, `sent=1`, the dev code if any, and
/// its `next`, so that page can show the code and post the sign-in.
#[server(prefix = "/sf", endpoint = "request_code")]
pub async fn request_code(
    phone: String,
    #[server(default)] next: String,
) -> Result<Option<String>, AppError> {
    use crate::url::encode_query;
    let core = crate::ssr::core()?;
    let issued = seckill::auth::request_code(&core, crate::ssr::client()?, &phone).await?;
    let dev = issued
        .dev_code
        .as_deref()
        .map(|c| format!("&dev_code={c}"))
        .unwrap_or_default();
    crate::ssr::redirect_plain_form(&format!(
        "/login?phone={}&sent=1{dev}&next={}",
        encode_query(phone.trim()),
        encode_query(&crate::url::safe_next(Some(next)))
    ));
    Ok(issued.dev_code)
}

/// Signs in and sets the session cookie; a plain form post (no JavaScript) is then sent to its
/// `next` page.
#[server(prefix = "/sf", endpoint = "sign_in")]
pub async fn sign_in(
    phone: String,
    code: String,
    #[server(default)] next: String,
) -> Result<Me, AppError> {
    let core = crate::ssr::core()?;
    let signed = seckill::auth::sign_in(&core, crate::ssr::client()?, &phone, &code).await?;
    let response = expect_context::<leptos_axum::ResponseOptions>();
    response.insert_header(
        http::header::SET_COOKIE,
        crate::ssr::session_cookie().set(&signed.token, core.config.auth.session_ttl.as_secs()),
    );
    crate::ssr::redirect_plain_form(&crate::url::safe_next(Some(next)));
    Ok(Me {
        user_id: signed.principal.user,
        phone: signed.principal.phone,
        is_admin: signed.principal.is_admin,
    })
}

/// Ends the session, or with `everywhere` every session of its shopper on every device.
#[server(prefix = "/sf", endpoint = "sign_out")]
pub async fn sign_out(#[server(default)] everywhere: bool) -> Result<(), AppError> {
    let core = crate::ssr::core()?;
    if let Some(token) = crate::ssr::request_session_token() {
        match seckill::auth::session(&core, &token).await? {
            Some(p) if everywhere => seckill::auth::sign_out_everywhere(&core, p.user).await?,
            _ => seckill::auth::sign_out(&core, &token).await?,
        }
    }
    let response = expect_context::<leptos_axum::ResponseOptions>();
    response.insert_header(
        http::header::SET_COOKIE,
        crate::ssr::session_cookie().clear(),
    );
    crate::ssr::redirect_plain_form("/");
    Ok(())
}
