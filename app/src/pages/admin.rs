//! The admin's voucher form, to create a voucher (`/admin/vouchers/new`) or to edit one before
//! its sale opens (`/admin/vouchers/{id}/edit`). The core validates (the same rules as
//! `POST /api/admin/vouchers` and `PATCH /api/admin/vouchers/{id}`); the form shows each
//! message under its field in the page's language, and cuts nothing short itself (no
//! `maxlength`: the rule's message says what is too long). The price is typed in yuan (`9.90`)
//! and stored in fen; times are typed to the second in the shop's time zone
//! (`SECKILL_TIME_ZONE`, named beside them), the zone every page shows, with JavaScript or
//! without. Once created, the admin lands on the console with the new voucher's row confirmed;
//! once edited, on the sale's manage panel saying so.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use serde::{Deserialize, Serialize};

use crate::{
    api::{
        admin::{CreateVoucher, EditVoucher},
        catalog::get_voucher,
    },
    components::ErrorNote,
    error::AppError,
    session::AdminOnly,
    time::{zone_label, zone_name},
    url::{ConsoleQuery, ManageDone},
    wire::VoucherView,
    words::{field_message, fill, lang, t},
};

#[component]
pub fn NewVoucherPage() -> impl IntoView {
    view! {
        <AdminOnly>
            <leptos_meta::Title text=t().new_title()/>
            <VoucherForm zone=zone_name(t()) zone_label=zone_label(t()) editing=None/>
        </AdminOnly>
    }
}

#[component]
pub fn EditVoucherPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|s| s.parse::<i64>().ok());
    let detail = Resource::new(id, |id| async move {
        match id {
            Some(id) => get_voucher(id).await,
            None => Err(AppError::NotFound),
        }
    });
    view! {
        <AdminOnly>
            <Suspense fallback=|| view! { <p class="loading">{t().sale_loading()}</p> }>
                {move || Suspend::new(async move {
                    match detail.await {
                        Ok(d) => view! {
                            <leptos_meta::Title text=fill(t().edit_title(), &[&d.voucher.title])/>
                            <VoucherForm zone=zone_name(t()) zone_label=zone_label(t())
                                editing=Some(Editing::of(&d.voucher))/>
                        }
                        .into_any(),
                        Err(AppError::NotFound) => view! { <crate::pages::NotFound/> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    }
                })}
            </Suspense>
        </AdminOnly>
    }
}

/// The sale an edit starts from, as the form shows it: its values as typed (the price in yuan,
/// the times in the shop's zone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Editing {
    pub id: i64,
    pub title: String,
    pub description: String,
    pub price: String,
    pub stock: String,
    pub begins_local: String,
    pub ends_local: String,
    pub entries_local: String,
    /// A draw: its opening and start are part of its published commitment and stay.
    pub draw: bool,
}

impl Editing {
    pub fn of(v: &VoucherView) -> Self {
        let local = |at: chrono::DateTime<chrono::Utc>| {
            use chrono::{Datelike, Timelike};
            // By hand, as `time.rs` writes times: chrono's format strings would weigh on the
            // bundle. The server renders this page, in the shop's own zone.
            #[cfg(feature = "ssr")]
            let t = at.with_timezone(&crate::time::shop_zone()).naive_local();
            #[cfg(not(feature = "ssr"))]
            let t = at.with_timezone(&crate::time::shop_offset()).naive_local();
            format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            )
        };
        Self {
            id: v.id.get(),
            title: v.title.clone(),
            description: v.description.clone(),
            price: crate::money::shop_currency().amount(v.price_cents),
            stock: v.stock.to_string(),
            begins_local: local(v.window.begins_at()),
            ends_local: local(v.window.ends_at()),
            entries_local: v.opening.entries_open_at().map(local).unwrap_or_default(),
            draw: v.opening.is_draw(),
        }
    }
}

/// The form: an island, so that a created or edited voucher opens the console in place and
/// the messages show under their fields without a reload. `zone` names the shop's time zone,
/// and `zone_label` names it again, bracketed, beside each time's label ([`zone_label`]).
#[cfg_attr(island_new_voucher, island)]
#[cfg_attr(not(island_new_voucher), component)]
fn VoucherForm(zone: String, zone_label: String, editing: Option<Editing>) -> impl IntoView {
    let create = ServerAction::<CreateVoucher>::new();
    let edit = ServerAction::<EditVoucher>::new();
    Effect::new(move |_| {
        let created = create
            .value()
            .get()
            .and_then(Result::ok)
            .map(|id| (id, None));
        let edited = edit.value().get().and_then(Result::ok);
        let done = created.or_else(|| edited.map(|id| (id, Some(ManageDone::Edited))));
        if let Some((id, done)) = done {
            if let Ok(id) = domain::VoucherId::try_from(id) {
                let next = match done {
                    None => ConsoleQuery::created(id).href(),
                    Some(d) => ConsoleQuery::manage(id, Some(d)).href(),
                };
                if window().location().set_href(&next).is_err() {
                    leptos::logging::warn!("could not open {next}");
                }
            }
        }
    });
    let t = t();
    let failed = move || {
        create
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| edit.value().get().and_then(Result::err))
    };
    let message = move |field: &'static str| failed().and_then(|e| e.field(field));
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
    let v = editing.clone();
    let value =
        move |f: fn(&Editing) -> &String| v.as_ref().map(|e| f(e).clone()).unwrap_or_default();
    let draw = editing.as_ref().is_some_and(|e| e.draw);
    let fields = view! {
        <label for="title">{t.new_field_title()}</label>
        <input id="title" name="title" data-testid="title" value=value(|e| &e.title)
            aria-invalid=invalid("title") aria-describedby=described("title")/>
        {error("title", t.new_field_title())}
        <label for="description">{t.new_field_description()}</label>
        <textarea id="description" name="description" rows="3" data-testid="description"
            aria-invalid=invalid("description") aria-describedby=described("description")>{value(|e| &e.description)}</textarea>
        {error("description", t.new_field_description())}
        <label for="price">{fill(t.new_field_price(), &[&crate::money::symbol()])}</label>
        <input id="price" name="price" inputmode="decimal" data-testid="price" value=value(|e| &e.price)
            aria-invalid=invalid("price_cents") aria-describedby=described("price_cents")/>
        {error("price_cents", t.new_field_price_short())}
        <label for="stock">{t.new_field_stock()}</label>
        <input id="stock" name="stock" inputmode="numeric" data-testid="stock" value=value(|e| &e.stock)
            aria-invalid=invalid("stock") aria-describedby=described("stock")/>
        {error("stock", t.new_field_stock())}
        <label for="begins_local">{t.new_field_opens()}<span class="zone" data-testid="zone">{zone_label.clone()}</span></label>
        <input id="begins_local" name="begins_local" type="datetime-local" step="1" data-testid="begins"
            value=value(|e| &e.begins_local) readonly=draw
            aria-invalid=invalid("begins_at") aria-describedby=described("begins_at")/>
        {error("begins_at", t.new_field_opens_short())}
        <label for="ends_local">{t.new_field_closes()}<span class="zone">{zone_label.clone()}</span></label>
        <input id="ends_local" name="ends_local" type="datetime-local" step="1" data-testid="ends"
            value=value(|e| &e.ends_local)
            aria-invalid=invalid("ends_at") aria-describedby=described("ends_at")/>
        {error("ends_at", t.new_field_closes_short())}
        <fieldset class="opening" data-testid="opening">
            <legend>{t.new_opening()}</legend>
            <label class="choice">
                <input type="radio" name="opening" value="first_come" checked=!draw disabled=draw data-testid="opening-first-come"/>
                <span>{t.new_first_come()}</span>
            </label>
            <label class="choice">
                <input type="radio" name="opening" value="draw" checked=draw data-testid="opening-draw"
                    aria-describedby="draw-hint"/>
                <span>{t.new_draw()}</span>
            </label>
            {error("opening", t.new_opening())}
            <label for="entries_local">{t.new_entries_open()}<span class="zone">{zone_label}</span></label>
            <input id="entries_local" name="entries_local" type="datetime-local" step="1" data-testid="entries-open"
                value=value(|e| &e.entries_local)
                aria-invalid=invalid("entries_open_at") aria-describedby=described("entries_open_at")/>
            {error("entries_open_at", t.new_entries_short())}
            <p class="hint" id="draw-hint">{t.new_draw_hint()}</p>
        </fieldset>
        <p class="hint" data-testid="zone-hint">{fill(t.new_zone_hint(), &[&zone])}</p>
    };
    let form = match editing {
        None => view! {
            <h1>{t.new_title()}</h1>
            <ActionForm action=create>
                {fields}
                <button type="submit" class="primary" data-testid="create">{t.new_create()}</button>
            </ActionForm>
        }
        .into_any(),
        Some(e) => view! {
            <h1>{fill(t.edit_title(), &[&e.title])}</h1>
            <p class="hint" data-testid="edit-hint">{t.edit_hint()}</p>
            <ActionForm action=edit>
                <input type="hidden" name="voucher_id" value=e.id/>
                {fields}
                <button type="submit" class="primary" data-testid="save">{t.edit_save()}</button>
            </ActionForm>
        }
        .into_any(),
    };
    view! {
        <section class="panel narrow">
            {form}
            {move || failed().map(|e| view! {
                <p class="error" role="alert" data-testid="create-error" data-code=e.code()>{e.message(lang())}</p>
            })}
            <p><a href="/admin">{t.new_back()}</a></p>
        </section>
    }
}
