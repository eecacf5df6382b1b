//! Who is signed in, and the admin guard.

use leptos::prelude::*;
use leptos_router::{components::Redirect, hooks::use_location};

use crate::{
    api::{auth::whoami, catalog::shop_mode},
    components::{set_page_status, Loaded},
    error::AppError,
    url::sign_in_path,
    wire::{Me, SiteMode},
};

/// Who is signed in, shared by the header and the guarded pages (server components: an island
/// gets what it needs of it as a prop).
#[derive(Clone, Copy)]
pub struct Session {
    pub me: Resource<Result<Option<Me>, AppError>>,
}

impl Session {
    /// Creates the session for the page (once, in `App`).
    pub fn provide() -> Self {
        let session = Self {
            me: Resource::new(|| (), |_| whoami()),
        };
        provide_context(session);
        session
    }

    pub fn get() -> Self {
        expect_context::<Self>()
    }
}

/// The shop's development conveniences, loaded once per page (the strip, the sign-in page).
#[derive(Clone, Copy)]
pub struct Mode(pub Resource<Result<SiteMode, AppError>>);

impl Mode {
    /// Creates it for the app (once, in `App`).
    pub fn provide() -> Self {
        let mode = Self(Resource::new(|| (), |_| shop_mode()));
        provide_context(mode);
        mode
    }

    pub fn get() -> Self {
        expect_context::<Self>()
    }
}

/// Admins see `children`; other shoppers a 403 page; anonymous visitors go to sign-in.
#[component]
pub fn AdminOnly(children: ChildrenFn) -> impl IntoView {
    let session = Session::get();
    let here = use_location().pathname;
    let children = StoredValue::new(children);
    let ok = move |me: Option<Me>| match me {
        Some(m) if m.is_admin => children.read_value()().into_any(),
        Some(_) => view! { <Forbidden/> }.into_any(),
        None => view! { <Redirect path=sign_in_path(&here.get_untracked())/> }.into_any(),
    };
    view! { <Loaded data=session.me loading=crate::words::t().checking_account() ok/> }
}

/// Signed in, but not an admin.
#[component]
pub fn Forbidden() -> impl IntoView {
    set_page_status(403);
    let t = crate::words::t();
    view! {
        <leptos_meta::Title text=t.forbidden_title()/>
        <section class="panel" data-testid="forbidden">
            <h1>{t.forbidden_heading()}</h1>
            <p>{t.forbidden_text()}</p>
            <p><a href="/">{t.back_to_vouchers()}</a></p>
        </section>
    }
}
