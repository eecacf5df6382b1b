//! One module per page.

pub mod actions;
pub mod admin;
pub mod console;
pub mod draw_check;
pub mod home;
pub mod login;
pub mod orders;
pub mod payments;
pub mod voucher;

use leptos::prelude::*;

/// Any unknown path.
#[component]
pub fn NotFound() -> impl IntoView {
    crate::components::set_page_status(404);
    let t = crate::words::t();
    view! {
        <leptos_meta::Title text=t.not_found_title()/>
        <section class="panel" data-testid="not-found">
            <h1>{t.not_found_title()}</h1>
            <p><a href="/">{t.back_to_vouchers()}</a></p>
        </section>
    }
}
