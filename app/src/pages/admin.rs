//! The admin's create-voucher form. The core validates (the same rules as
//! `POST /api/admin/vouchers`); the form shows each message under its field in the page's
//! language, and cuts nothing short itself (no `maxlength`: the rule's message says what is too
//! long). The price is typed in yuan (`9.90`) and stored in fen; times are typed to the second
//! in the shop's time zone (`SECKILL_TIME_ZONE`, named beside them), the zone every page shows,
//! with JavaScript or without. Once created, the admin lands on the console with the new
//! voucher's row confirmed.

use leptos::prelude::*;

use crate::{
    api::admin::CreateVoucher,
    session::AdminOnly,
    time::{zone_label, zone_name},
    words::{field_message, fill, lang, t},
};

#[component]
pub fn NewVoucherPage() -> impl IntoView {
    view! {
        <AdminOnly>
            <leptos_meta::Title text=t().new_title()/>
            <NewVoucherForm zone=zone_name(t()) zone_label=zone_label(t())/>
        </AdminOnly>
    }
}

/// The form: an island, so that a created voucher opens the console in place and the
/// messages show under their fields without a reload. `zone` names the shop's time zone, and
/// `zone_label` names it again, bracketed, beside each time's label ([`zone_label`]).
#[cfg_attr(island_new_voucher, island)]
#[cfg_attr(not(island_new_voucher), component)]
fn NewVoucherForm(zone: String, zone_label: String) -> impl IntoView {
    let create = ServerAction::<CreateVoucher>::new();
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
    let t = t();
    let message = move |field: &'static str| {
        create
            .value()
            .get()
            .and_then(Result::err)
            .and_then(|e| e.field(field))
    };
    // The core's messages follow the field's name ("is required"): the form names the field.
    let error = move |field: &'static str, name: &'static str| {
        move || {
            message(field).map(|m| {
                view! {
                    <p class="error field-error" id=format!("error-{field}") data-testid=format!("error-{field}")>
                        {fill(t.field_error(), &[&name, &field_message(t, &m)])}
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
            <h1>{t.new_title()}</h1>
            <ActionForm action=create>
                <label for="title">{t.new_field_title()}</label>
                <input id="title" name="title" data-testid="title"
                    aria-invalid=invalid("title") aria-describedby=described("title")/>
                {error("title", t.new_field_title())}
                <label for="description">{t.new_field_description()}</label>
                <textarea id="description" name="description" rows="3" data-testid="description"
                    aria-invalid=invalid("description") aria-describedby=described("description")></textarea>
                {error("description", t.new_field_description())}
                <label for="price">{crate::words::fill(t.new_field_price(), &[&crate::money::symbol()])}</label>
                <input id="price" name="price" inputmode="decimal" data-testid="price"
                    aria-invalid=invalid("price_cents") aria-describedby=described("price_cents")/>
                {error("price_cents", t.new_field_price_short())}
                <label for="stock">{t.new_field_stock()}</label>
                <input id="stock" name="stock" inputmode="numeric" data-testid="stock"
                    aria-invalid=invalid("stock") aria-describedby=described("stock")/>
                {error("stock", t.new_field_stock())}
                <label for="begins_local">{t.new_field_opens()}<span class="zone" data-testid="zone">{zone_label.clone()}</span></label>
                <input id="begins_local" name="begins_local" type="datetime-local" step="1" data-testid="begins"
                    aria-invalid=invalid("begins_at") aria-describedby=described("begins_at")/>
                {error("begins_at", t.new_field_opens_short())}
                <label for="ends_local">{t.new_field_closes()}<span class="zone">{zone_label.clone()}</span></label>
                <input id="ends_local" name="ends_local" type="datetime-local" step="1" data-testid="ends"
                    aria-invalid=invalid("ends_at") aria-describedby=described("ends_at")/>
                {error("ends_at", t.new_field_closes_short())}
                <fieldset class="opening" data-testid="opening">
                    <legend>{t.new_opening()}</legend>
                    <label class="choice">
                        <input type="radio" name="opening" value="first_come" checked data-testid="opening-first-come"/>
                        <span>{t.new_first_come()}</span>
                    </label>
                    <label class="choice">
                        <input type="radio" name="opening" value="draw" data-testid="opening-draw"
                            aria-describedby="draw-hint"/>
                        <span>{t.new_draw()}</span>
                    </label>
                    {error("opening", t.new_opening())}
                    <label for="entries_local">{t.new_entries_open()}<span class="zone">{zone_label}</span></label>
                    <input id="entries_local" name="entries_local" type="datetime-local" step="1" data-testid="entries-open"
                        aria-invalid=invalid("entries_open_at") aria-describedby=described("entries_open_at")/>
                    {error("entries_open_at", t.new_entries_short())}
                    <p class="hint" id="draw-hint">{t.new_draw_hint()}</p>
                </fieldset>
                <p class="hint" data-testid="zone-hint">{fill(t.new_zone_hint(), &[&zone])}</p>
                <button type="submit" class="primary" data-testid="create">{t.new_create()}</button>
            </ActionForm>
            {move || create.value().get().and_then(Result::err).map(|e| view! {
                <p class="error" role="alert" data-testid="create-error" data-code=e.code()>{e.message(lang())}</p>
            })}
            <p><a href="/admin">{t.new_back()}</a></p>
        </section>
    }
}
