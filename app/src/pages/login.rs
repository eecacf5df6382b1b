//! Sign-in by phone and one-time code: two forms, so that it works without JavaScript too.
//!
//! "Send code" posts the phone; without JavaScript the server sends the browser back here with
//! the phone, `sent=1` and, in dev mode, the code in the query, and this page shows them. "Sign
//! in" posts the phone (a hidden copy) and the code, then goes to `next`. With JavaScript both
//! forms stay on the page. A message goes away when what it was about changes: the phone's
//! error when the phone is edited, the code's when the code is edited or a new code is sent.

use leptos::{either::EitherOf3, prelude::*, server_fn::ServerFn};
use leptos_router::hooks::use_query_map;
use webapi::answers::CodeIssued;

use crate::{
    api::auth::{RequestCode, SignIn},
    components::{form_call, CallForm},
    refusal::Refusal,
    rest,
    session::Mode,
    url::safe_next,
};

/// `/login`: what a round trip without JavaScript brought back is read here, on the server, and
/// handed to the forms.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let from_query = move |key: &str| {
        query
            .read_untracked()
            .get(key)
            .filter(|v| !v.trim().is_empty())
    };
    let phone = from_query("phone").unwrap_or_default();
    let plain_code = from_query("dev_code");
    let plain_sent = from_query("sent").is_some();
    let next = safe_next(from_query("next"));
    let mode = Mode::get();
    view! {
        <leptos_meta::Title text=crate::words::t().login_title()/>
        <Suspense fallback=|| ()>
            {move || {
                let (phone, plain_code, next) = (phone.clone(), plain_code.clone(), next.clone());
                Suspend::new(async move {
                    // A code on the page only under dev login: a `dev_code` in a crafted link
                    // says nothing on a real shop.
                    let dev_login = matches!(mode.0.await, Ok(m) if m.dev_login);
                    let plain_code = plain_code.filter(|_| dev_login);
                    view! { <SignInForms phone plain_code plain_sent next dev_login/> }
                })
            }}
        </Suspense>
    }
}

/// The two forms: the page's island. With JavaScript both answer in place, and a sign-in goes
/// on to `next`.
#[cfg_attr(island_sign_in, island)]
#[cfg_attr(not(island_sign_in), component)]
fn SignInForms(
    phone: String,
    plain_code: Option<String>,
    plain_sent: bool,
    next: String,
    dev_login: bool,
) -> impl IntoView {
    let phone = RwSignal::new(phone);
    let (phone_input, code_input) = (NodeRef::new(), NodeRef::new());
    // Send code (`POST /api/login/code`) answers the code itself under dev login; Sign in
    // (`POST /api/login`) sets the session cookie. Both read the fields as they are at the
    // submit (typed before the page was live, or filled in by the browser).
    let send = form_call(<RequestCode as ServerFn>::PATH, move || {
        let phone = input_value(phone_input);
        async move {
            rest::post_json::<CodeIssued>("/api/login/code", &Credentials { phone, code: None })
                .await
                .map(|sent| sent.code)
        }
    });
    let sign_in = form_call(<SignIn as ServerFn>::PATH, move || {
        let body = Credentials {
            phone: input_value(phone_input),
            code: Some(input_value(code_input)),
        };
        async move { rest::post_json::<serde::de::IgnoredAny>("/api/login", &body).await }
    });
    let next_for_js = next.clone();
    let (next_send, next_sign) = (next.clone(), next);
    Effect::new(move |_| {
        if let Some(Ok(_)) = sign_in.value().get() {
            // A whole page: the header and the page come back signed in.
            if window().location().set_href(&next_for_js).is_err() {
                leptos::logging::warn!("could not go on to {next_for_js}");
            }
        }
    });
    // A new code makes the last "code is wrong" stale.
    Effect::new(move |seen: Option<usize>| {
        let version = send.version().get();
        if seen.is_some_and(|v| v != version) {
            sign_in.value().set(None);
        }
        version
    });
    let sent_note = move || {
        code_note(
            send.value().get(),
            (plain_code.clone(), plain_sent),
            dev_login,
        )
    };
    let t = crate::words::t();
    view! {
        <section class="panel narrow">
            <h1>{t.login_title()}</h1>
            <CallForm to={<RequestCode as ServerFn>::PATH} send=move || { send.dispatch(()); }>
                <label for="phone">{t.login_phone()}</label>
                <div class="row">
                    <input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel" required
                        data-testid="phone" value=phone.get_untracked() node_ref=phone_input
                        on:input:target=move |ev| {
                            phone.set(ev.target().value());
                            send.value().set(None);
                        }/>
                    <input type="hidden" name="next" value=next_send.clone()/>
                    <button type="submit" data-testid="send-code">{t.login_send_code()}</button>
                </div>
            </CallForm>
            {sent_note}
            <CallForm to={<SignIn as ServerFn>::PATH} send=move || { sign_in.dispatch(()); }>
                <input type="hidden" name="phone" value=phone.get_untracked() prop:value=move || phone.get()/>
                <input type="hidden" name="next" value=next_sign.clone()/>
                <label for="code">{t.login_code()}</label>
                <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required
                    data-testid="code" node_ref=code_input on:input=move |_| sign_in.value().set(None)/>
                <button type="submit" class="primary" data-testid="sign-in">{t.login_sign_in()}</button>
            </CallForm>
            {move || sign_in.value().get().and_then(Result::err).map(|e| view! {
                <p class="error" role="alert" data-testid="sign-in-error">{e.words().to_owned()}</p>
            })}
        </section>
    }
}

/// What Send code and Sign in send.
#[derive(serde::Serialize)]
struct Credentials {
    phone: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
}

/// What is in a field now (browser only).
fn input_value(field: NodeRef<leptos::html::Input>) -> String {
    #[cfg(feature = "hydrate")]
    if let Some(el) = field.get_untracked() {
        return el.value();
    }
    let _ = field;
    String::new()
}

/// The note under "Send code": the answer of this page's request, else what a plain form's
/// round trip brought back (`plain`: its dev code and whether a code was sent).
fn code_note(
    sent: Option<Result<Option<String>, Refusal>>,
    plain: (Option<String>, bool),
    dev_login: bool,
) -> impl IntoView {
    let note = match sent {
        Some(Ok(Some(code))) if dev_login => Some(Ok(Some(code))),
        Some(Ok(_)) => Some(Ok(None)),
        Some(Err(e)) => Some(Err(e)),
        None => match plain {
            (Some(code), _) if dev_login => Some(Ok(Some(code))),
            (_, true) => Some(Ok(None)),
            (_, false) => None,
        },
    };
    let t = crate::words::t();
    note.map(|note| match note {
        // Dev mode (no SMS provider): the code, on the page.
        Ok(Some(code)) => EitherOf3::A(view! {
            <p class="notice" data-testid="dev-code">{t.login_dev_code()} <strong>{code}</strong></p>
        }),
        Ok(None) => EitherOf3::B(view! { <p class="notice">{t.login_code_on_its_way()}</p> }),
        Err(e) => EitherOf3::C(view! {
            <p class="error" role="alert" data-testid="code-error" data-code=e.code()>{e.words().to_owned()}</p>
        }),
    })
}

#[cfg(test)]
mod tests {
    use crate::url::safe_next;

    #[test]
    fn only_local_paths_are_followed_after_sign_in() {
        assert_eq!(safe_next(Some("/admin".into())), "/admin");
        assert_eq!(safe_next(Some("//evil.example/x".into())), "/");
        assert_eq!(safe_next(Some("https://evil.example".into())), "/");
        assert_eq!(safe_next(None), "/");
    }
}
