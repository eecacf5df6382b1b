//! The admin's create-voucher form. The core validates (the same rules and messages as
//! `POST /api/admin/vouchers`); the form shows each message under its field, and cuts nothing
//! short itself (no `maxlength`: the rule's message says what is too long). Times are typed to
//! the second in the admin's local time zone, named beside them, and sent as RFC 3339 (UTC
//! offset included), stored as UTC; without JavaScript they are read as UTC, and the form says
//! so. Once created, the admin lands on the console with the new voucher's row confirmed.

use leptos::prelude::*;

use crate::{api::admin::CreateVoucher, session::AdminOnly, time::browser_zone};

/// `/admin/vouchers/new`: admins get the form, other shoppers a 403, anonymous users sign in.
#[component]
pub fn NewVoucherPage() -> impl IntoView {
    view! {
        <AdminOnly>
            <leptos_meta::Title text="New voucher"/>
            <NewVoucherForm/>
        </AdminOnly>
    }
}

/// The form: the page's island (field errors in place, times in the admin's zone).
#[cfg_attr(island_new_voucher, island)]
#[cfg_attr(not(island_new_voucher), component)]
fn NewVoucherForm() -> impl IntoView {
    let create = ServerAction::<CreateVoucher>::new();
    let begins_local = RwSignal::new(String::new());
    let ends_local = RwSignal::new(String::new());
    let entries_local = RwSignal::new(String::new());
    Effect::new(move |_| {
        if let Some(Ok(id)) = create.value().get() {
            if let Ok(id) = domain::VoucherId::try_from(id) {
                let console = crate::url::ConsoleQuery::created(id).href();
                if window().location().set_href(&console).is_err() {
                    leptos::logging::warn!("could not open {console}");
                }
            }
        }
    });
    // The zone the times are read in: UTC until the browser says its own (an Effect runs only
    // in the browser, so the server's page and the hydrated one agree at first).
    let zone = RwSignal::new(None::<String>);
    Effect::new(move |_| zone.set(browser_zone()));
    let zone_text = move || zone.get().unwrap_or_else(|| "UTC".to_owned());
    let message = move |field: &'static str| {
        create
            .value()
            .get()
            .and_then(Result::err)
            .and_then(|e| e.field(field))
    };
    // The core's messages are the REST API's ("is required"): the form names the field.
    let error = move |field: &'static str, name: &'static str| {
        move || {
            message(field).map(|m| {
                view! {
                    <p class="error field-error" id=format!("error-{field}") data-testid=format!("error-{field}")>
                        {format!("{name} {m}")}
                    </p>
                }
            })
        }
    };
    let invalid = move |field: &'static str| move || message(field).is_some().then_some("true");
    let described = move |field: &'static str| {
        move || message(field).is_some().then(|| format!("error-{field}"))
    };
    view! {
        <section class="panel narrow">
            <h1>"New voucher"</h1>
            <ActionForm action=create>
                <label for="title">"Title"</label>
                <input id="title" name="title" data-testid="title"
                    aria-invalid=invalid("title") aria-describedby=described("title")/>
                {error("title", "Title")}
                <label for="description">"Description"</label>
                <textarea id="description" name="description" rows="3" data-testid="description"
                    aria-invalid=invalid("description") aria-describedby=described("description")></textarea>
                {error("description", "Description")}
                <label for="price_cents">"Price (in cents: 990 is ¥9.90)"</label>
                <input id="price_cents" name="price_cents" inputmode="numeric" data-testid="price"
                    aria-invalid=invalid("price_cents") aria-describedby=described("price_cents")/>
                {error("price_cents", "Price")}
                <label for="stock">"Stock"</label>
                <input id="stock" name="stock" inputmode="numeric" data-testid="stock"
                    aria-invalid=invalid("stock") aria-describedby=described("stock")/>
                {error("stock", "Stock")}
                <label for="begins_local">"Sale opens " <span class="zone" data-testid="zone">"("{zone_text}")"</span></label>
                <input id="begins_local" name="begins_local" type="datetime-local" step="1" data-testid="begins"
                    aria-invalid=invalid("begins_at") aria-describedby=described("begins_at") bind:value=begins_local/>
                <input type="hidden" name="begins_at" prop:value=move || browser_rfc3339(&begins_local.get())/>
                {error("begins_at", "Opening time")}
                <label for="ends_local">"Sale closes " <span class="zone">"("{zone_text}")"</span></label>
                <input id="ends_local" name="ends_local" type="datetime-local" step="1" data-testid="ends"
                    aria-invalid=invalid("ends_at") aria-describedby=described("ends_at") bind:value=ends_local/>
                <input type="hidden" name="ends_at" prop:value=move || browser_rfc3339(&ends_local.get())/>
                {error("ends_at", "Closing time")}
                <fieldset class="opening" data-testid="opening">
                    <legend>"Opening"</legend>
                    <label class="choice">
                        <input type="radio" name="opening" value="first_come" checked data-testid="opening-first-come"/>
                        " First come, first served"
                    </label>
                    <label class="choice">
                        <input type="radio" name="opening" value="draw" data-testid="opening-draw"
                            aria-describedby="draw-hint"/>
                        " A draw: shoppers enter before the opening; at the opening the units go to entrants in an order no one can speed up, and anyone can check it"
                    </label>
                    {error("opening", "Opening")}
                    <label for="entries_local">"Entries open (draw only; empty is 10 minutes before the sale) " <span class="zone">"("{zone_text}")"</span></label>
                    <input id="entries_local" name="entries_local" type="datetime-local" step="1" data-testid="entries-open"
                        aria-invalid=invalid("entries_open_at") aria-describedby=described("entries_open_at") bind:value=entries_local/>
                    <input type="hidden" name="entries_at" prop:value=move || browser_rfc3339(&entries_local.get())/>
                    {error("entries_open_at", "Entries opening")}
                    <p class="hint" id="draw-hint">"The draw runs when the sale opens."</p>
                </fieldset>
                <p class="hint" data-testid="zone-hint">
                    {move || match zone.get() {
                        Some(z) => format!("Times are in your time zone, {z}, to the second."),
                        None => "Times are in UTC, to the second (without JavaScript the form cannot know your time zone).".to_owned(),
                    }}
                </p>
                <button type="submit" class="primary" data-testid="create">"Create voucher"</button>
            </ActionForm>
            {move || create.value().get().and_then(Result::err).map(|e| view! {
                <p class="error" role="alert" data-testid="create-error" data-code=e.code()>{e.to_string()}</p>
            })}
            <p><a href="/admin">"Back to the console"</a></p>
        </section>
    }
}

/// A `datetime-local` value in the browser's time zone as RFC 3339; empty on the server (the
/// server then reads the local text as UTC) or when the text is not a date-time.
fn browser_rfc3339(local: &str) -> String {
    #[cfg(feature = "hydrate")]
    {
        use chrono::TimeZone;
        let parsed = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]
            .iter()
            .find_map(|f| chrono::NaiveDateTime::parse_from_str(local, f).ok());
        if let Some(t) = parsed.and_then(|t| chrono::Local.from_local_datetime(&t).earliest()) {
            return t.to_rfc3339();
        }
    }
    let _ = local;
    String::new()
}
