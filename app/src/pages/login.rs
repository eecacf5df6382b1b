//! Sign-in by phone and one-time code.

use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};

use crate::{
    api::{RequestCode, SignIn},
    components::Session,
};

/// Where to go after signing in: the `next` of the query when it is a path of this site.
fn next_path(next: Option<String>) -> String {
    next.filter(|n| n.starts_with('/') && !n.starts_with("//"))
        .unwrap_or_else(|| "/".to_owned())
}

#[component]
pub fn LoginPage() -> impl IntoView {
    let send = ServerAction::<RequestCode>::new();
    let sign_in = ServerAction::<SignIn>::new();
    let phone = RwSignal::new(String::new());
    let navigate = use_navigate();
    let session = Session::get();
    let query = use_query_map();
    Effect::new(move |_| {
        if let Some(Ok(_)) = sign_in.value().get() {
            session.reload();
            let next = next_path(query.read_untracked().get("next"));
            navigate(&next, Default::default());
        }
    });
    view! {
        <leptos_meta::Title text="Sign in"/>
        <section class="panel narrow">
            <h1>"Sign in"</h1>
            <ActionForm action=sign_in>
                <label for="phone">"Phone number"</label>
                <div class="row">
                    <input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel" required
                        data-testid="phone" bind:value=phone/>
                    <button type="button" data-testid="send-code"
                        on:click=move |_| { send.dispatch(RequestCode { phone: phone.get_untracked() }); }>
                        "Send code"
                    </button>
                </div>
                {move || match send.value().get() {
                    Some(Ok(Some(code))) => view! {
                        <p class="notice" data-testid="dev-code">"Development mode: your code is " <strong>{code}</strong></p>
                    }.into_any(),
                    Some(Ok(None)) => view! { <p class="notice">"A code is on its way."</p> }.into_any(),
                    Some(Err(e)) => view! { <p class="error" role="alert" data-testid="code-error">{e.to_string()}</p> }.into_any(),
                    None => ().into_any(),
                }}
                <label for="code">"Code"</label>
                <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required data-testid="code"/>
                <button type="submit" class="primary" data-testid="sign-in">"Sign in"</button>
            </ActionForm>
            {move || sign_in.value().get().and_then(Result::err).map(|e| view! {
                <p class="error" role="alert" data-testid="sign-in-error">{e.to_string()}</p>
            })}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::next_path;

    #[test]
    fn only_local_paths_are_followed_after_sign_in() {
        assert_eq!(next_path(Some("/admin".into())), "/admin");
        assert_eq!(next_path(Some("//evil.example/x".into())), "/");
        assert_eq!(next_path(Some("https://evil.example".into())), "/");
        assert_eq!(next_path(None), "/");
    }
}
