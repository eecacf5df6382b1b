//! "Check this draw" (`/vouchers/:id/draw`, design.md decision 42): the steps anyone can take to
//! recompute a draw from its transcript, written out so they work without JavaScript; with it,
//! `/draw-check.js` takes them in the browser (Web Crypto's SHA-256 and HMAC) and says
//! "Verified" or names the first step that does not hold. No island: the page ships no wasm of
//! its own.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::{
    api::draw::draw_facts,
    components::ErrorNote,
    error::AppError,
    words::{fill, t},
};

#[component]
pub fn DrawCheckPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|s| s.parse::<i64>().ok());
    let facts = Resource::new(id, |id| async move {
        match id {
            Some(id) => draw_facts(id).await,
            None => Err(AppError::NotFound),
        }
    });
    let t = t();
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let Some(id) = id() else {
                    return view! { <crate::pages::NotFound/> }.into_any();
                };
                match facts.await {
                    Ok(f) => view! {
                        <leptos_meta::Title text=fill(t.check_title(), &[&f.title])/>
                        <section class="draw-check">
                            <h1>{t.check_heading()} <a href=format!("/vouchers/{id}")>{f.title.clone()}</a></h1>
                            <output id="draw-check" data-testid="draw-check" data-voucher=id data-state="static" aria-live="polite">
                                {if f.seed.is_some() { t.check_drawn() } else if f.never_drawn { t.check_ended() } else if f.entries_root.is_some() { t.check_committed() } else { t.check_not_drawn() }}
                            </output>
                            <ul id="draw-check-steps" class="check-steps" data-testid="draw-check-steps"></ul>
                            <dl class="facts">
                                <dt>{t.check_commitment()}</dt><dd><code>{f.commitment.clone()}</code></dd>
                                <dt>{t.check_entrants()}</dt><dd>{domain::grouped(f.entrants)}</dd>
                                {f.beacon.clone().map(|(round, url)| view! {
                                    <dt>{t.check_beacon()}</dt><dd>{fill(t.check_beacon_round(), &[&round])} <code>{url}</code></dd>
                                })}
                                {f.entries_root.clone().map(|r| view! { <dt>{t.check_root()}</dt><dd><code>{r}</code></dd> })}
                                {f.seed.clone().map(|s| view! { <dt>{t.check_seed()}</dt><dd><code>{s}</code></dd> })}
                                {f.stock.map(|s| view! { <dt>{t.check_units()}</dt><dd>{s}</dd> })}
                            </dl>
                            <h2>{t.check_how()}</h2>
                            // The catalogue's own markup (`<code>` only), never a visitor's text.
                            <p inner_html=fill(t.check_uses(), &[&format!(
                                r#"<a href="/api/vouchers/{id}/draw" data-testid="transcript-link"><code>/api/vouchers/{id}/draw</code></a>"#
                            )])></p>
                            <ol class="steps">
                                {[t.check_step_1(), t.check_step_2(), t.check_step_3(), t.check_step_4(), t.check_step_5(), t.check_step_6()]
                                    .into_iter()
                                    .map(|step| view! { <li inner_html=step></li> })
                                    .collect_view()}
                            </ol>
                        </section>
                        <script type="module" src="/draw-check.js"></script>
                    }
                    .into_any(),
                    Err(AppError::NotFound | AppError::NotADraw) => view! { <crate::pages::NotFound/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}
