//! Pieces every page uses: a page's HTTP status, an error in words, and data loaded with its
//! loading and error states.

use leptos::{either::Either, prelude::*};

use crate::{error::AppError, refusal::Refusal, url::sign_in_path};

/// Sets the HTTP status of the page being rendered on the server (pages are sent whole, so
/// it reaches the response); nothing in the browser.
pub fn set_page_status(status: u16) {
    #[cfg(feature = "ssr")]
    {
        let code = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
        if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(code);
        }
    }
    let _ = status;
}

/// A form that posts to `to` (a server function's address, which answers a plain post with
/// the page to go on to) without JavaScript; in a live island, a submit runs `send` instead
/// (its REST call) and the page stays.
#[component]
pub fn CallForm(
    to: &'static str,
    send: impl Fn() + 'static,
    #[prop(optional)] class: Option<&'static str>,
    children: Children,
) -> impl IntoView {
    view! {
        <form method="post" action=to class=class
            on:submit=move |ev| {
                ev.prevent_default();
                send();
            }>
            {children()}
        </form>
    }
}

/// An island's call behind a [`CallForm`] posting to `to`: an action whose value starts as the
/// error a plain post to `to` came back with, if it failed (the server sends the browser back
/// to the page with the error in its address, `__err` and `__path`, and the island renders it
/// as it would its own call's answer).
pub fn form_call<T, Fu>(
    to: &'static str,
    call: impl Fn() -> Fu + 'static,
) -> Action<(), Result<T, Refusal>>
where
    T: 'static,
    Fu: std::future::Future<Output = Result<T, Refusal>> + 'static,
{
    let action = Action::new_local(move |_: &()| call());
    if let Some(e) = plain_form_error(to) {
        action.value().set(Some(Err(e)));
    }
    action
}

/// The error of a plain form's failed post to the server function at `to`, from the page's
/// address (server only: in the browser the island makes its calls itself). A page's own plain
/// forms (not an island's) show it with [`ErrorNote`].
pub fn plain_form_error(to: &str) -> Option<Refusal> {
    #[cfg(feature = "ssr")]
    {
        use leptos::{server::ServerActionError, server_fn::error::ServerFnUrlError};
        use_context::<ServerActionError>()
            .filter(|e| e.path() == to)
            .map(|e| ServerFnUrlError::<AppError>::decode_err(e.err()).into())
    }
    #[cfg(not(feature = "ssr"))]
    {
        let _ = to;
        None
    }
}

/// An error in words (the server's own for an island's refusal, see [`Refusal`]), with the
/// way out when there is one.
#[component]
pub fn ErrorNote(#[prop(into)] error: Refusal) -> impl IntoView {
    let t = crate::words::t();
    let action = match &error.error {
        AppError::Unauthenticated => Some(Either::Left(view! {
            " " <a href=sign_in_path(&current_path()) data-testid="sign-in-link">{t.sign_in_link()}</a>
        })),
        AppError::AlreadyBought(order) => Some(Either::Right(view! {
            " " <a href=format!("/orders/{order}") data-testid="your-order-link">{t.see_your_order()}</a>
        })),
        _ => None,
    };
    view! {
        <p class="error" role="alert" data-testid="error" data-code=error.code()>
            {error.words().to_owned()} {action}
        </p>
    }
}

/// The path of the page being shown: the router's on the server, the address bar's in an
/// island (which has no router).
pub fn current_path() -> String {
    #[cfg(feature = "hydrate")]
    {
        window().location().pathname().unwrap_or_default()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        leptos_router::hooks::use_location()
            .pathname
            .get_untracked()
    }
}

/// Data loading: `loading` while it comes, `ok`'s view of it when it comes, and for a failure
/// either the page's own answer (`handle`: a redirect to sign in, a 404 page) or an
/// [`ErrorNote`]. Rendered whole on the server (the pages are `SsrMode::Async`), so it also
/// works without JavaScript.
#[component]
pub fn Loaded<T, F>(
    data: Resource<Result<T, AppError>>,
    /// What is being loaded, as a sentence ("Loading your order…").
    loading: &'static str,
    /// The view of the loaded data.
    ok: F,
    /// The page's own view of some errors; `None` for the others, which show as an
    /// [`ErrorNote`].
    #[prop(optional)]
    handle: Option<fn(&AppError) -> Option<AnyView>>,
) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    F: Fn(T) -> AnyView + Clone + Send + Sync + 'static,
{
    view! {
        <Suspense fallback=move || view! { <p class="loading">{loading}</p> }>
            {move || {
                let ok = ok.clone();
                Suspend::new(async move {
                    match data.await {
                        Ok(value) => ok(value),
                        Err(e) => handle
                            .and_then(|h| h(&e))
                            .unwrap_or_else(|| view! { <ErrorNote error=e/> }.into_any()),
                    }
                })
            }}
        </Suspense>
    }
}

/// Links to the newer and the older page of a list (`newer` and `older` are their addresses),
/// and which page this is; nothing when the list fits on one page.
#[component]
pub fn Pager(
    page: usize,
    pages: usize,
    newer: String,
    older: String,
    /// What the pages are of, for screen readers.
    label: &'static str,
    newer_text: &'static str,
    older_text: &'static str,
) -> impl IntoView {
    (pages > 1).then(|| {
        view! {
            <nav class="pager" aria-label=label>
                {(page > 1).then(|| view! {
                    <a class="button" rel="prev" href=newer data-testid="page-newer">{newer_text}</a>
                })}
                <span class="pager-at" data-testid="page-at">{crate::words::fill(crate::words::t().page_of(), &[&page, &pages])}</span>
                {(page < pages).then(|| view! {
                    <a class="button" rel="next" href=older data-testid="page-older">{older_text}</a>
                })}
            </nav>
        }
    })
}
