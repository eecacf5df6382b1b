//! Browser entry point: the pages are rendered on the server; only their islands (the parts
//! that live in the browser, `#[island]` in `app`) are hydrated, each from its own props.

// The islands' hydration functions are exported by `app`: it must be linked in.
use app as _;

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    // A debug bundle's panics say where in the browser's console; a release bundle's abort on
    // the spot with nothing to say (`-Cpanic=immediate-abort`, scripts/build.sh), so it carries
    // no hook.
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
}
