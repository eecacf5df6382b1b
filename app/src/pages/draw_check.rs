//! "Check this draw" (`/vouchers/:id/draw`, design.md decision 42): the steps anyone can take to
//! recompute a draw from its transcript, written out so they work without JavaScript; with it,
//! `/draw-check.js` takes them in the browser (Web Crypto's SHA-256 and HMAC) and says
//! "Verified" or names the first step that does not hold. No island: the page ships no wasm of
//! its own.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::{api::draw::draw_facts, components::ErrorNote, error::AppError};

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
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let Some(id) = id() else {
                    return view! { <crate::pages::NotFound/> }.into_any();
                };
                match facts.await {
                    Ok(f) => view! {
                        <leptos_meta::Title text=format!("Check the draw: {}", f.title)/>
                        <section class="draw-check">
                            <h1>"Check the draw of " <a href=format!("/vouchers/{id}")>{f.title.clone()}</a></h1>
                            <output id="draw-check" data-testid="draw-check" data-voucher=id data-state="static" aria-live="polite">
                                {if f.seed.is_some() { "Drawn: the steps below recompute it." } else if f.entries_root.is_some() { "Entries are closed and committed; the draw waits for its beacon round." } else { "Not drawn yet: the commitment below is fixed." }}
                            </output>
                            <ul id="draw-check-steps" class="check-steps" data-testid="draw-check-steps"></ul>
                            <dl class="facts">
                                <dt>"Commitment"</dt><dd><code>{f.commitment.clone()}</code></dd>
                                <dt>"Entrants"</dt><dd>{domain::grouped(f.entrants)}</dd>
                                {f.beacon.clone().map(|(round, url)| view! {
                                    <dt>"Beacon"</dt><dd>"drand round " {round} " via " <code>{url}</code></dd>
                                })}
                                {f.entries_root.clone().map(|r| view! { <dt>"Entries root"</dt><dd><code>{r}</code></dd> })}
                                {f.seed.clone().map(|s| view! { <dt>"Seed"</dt><dd><code>{s}</code></dd> })}
                                {f.stock.map(|s| view! { <dt>"Units at the draw"</dt><dd>{s}</dd> })}
                            </dl>
                            <h2>"How to check it yourself"</h2>
                            <p>"Everything below uses only the transcript at "
                                <a href=format!("/api/vouchers/{id}/draw") data-testid="transcript-link"><code>{format!("/api/vouchers/{id}/draw")}</code></a>
                                " and SHA-256; any language does it in a few lines (README, “Checking a draw”, has test vectors)."</p>
                            <ol class="steps">
                                <li>"SHA-256 of the " <code>"committed_seed"</code> " bytes is the " <code>"commitment"</code> ", published when the sale was created, before anyone entered."</li>
                                <li>"The " <code>"leaves"</code> " are sorted ascending; their RFC 9162 Merkle tree hash (leaf: SHA-256(0x00 ‖ leaf), node: SHA-256(0x01 ‖ left ‖ right), split at the largest power of two below n) is the " <code>"entries_root"</code> ", published when entries closed, before the beacon round existed. Your receipt's leaf is SHA-256 of " <code>"voucher:user:salt"</code> "; its inclusion proof leads to this root."</li>
                                <li>"The drand round named at creation is fetched from any relay and its BLS signature checked against drand's public key; its " <code>"randomness"</code> " is SHA-256 of the signature."</li>
                                <li>"The " <code>"seed"</code> " is SHA-256 of the text " <code>"seckill-draw-v1:{voucher}:{committed_seed}:{entries_root}:{randomness}"</code> "."</li>
                                <li>"Each leaf's key is HMAC-SHA256 with the seed as key; the " <code>"ranking"</code> " is the leaves by ascending key, rank 1 first, and the " <code>"winners"</code> " are its first " <code>"stock"</code> " leaves."</li>
                                <li>"Each of the " <code>"moves"</code> " gives a unit that came back to the next entrant by rank; its " <code>"hash"</code> " is SHA-256 of " <code>"{previous hash}:{leaf}:{reason}"</code> ", the seed first, so none can be dropped or reordered unseen."</li>
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
