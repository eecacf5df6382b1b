//! Server-Sent Events in the browser: a page follows a stream for as long as it is shown, and
//! learns when the stream is down so it can ask by itself meanwhile (design.md §8, decision 20).

/// Follows the events named `event` at `url` while the calling component lives: `on_event`
/// gets each one's JSON data parsed (an event that does not parse is skipped), `on_down` is
/// called whenever the stream fails. The browser reconnects
/// by itself after a dropped stream (its next event calls `on_event` again); a refused one (an
/// error status) stays down. Browser only: nothing runs on the server.
pub fn follow_stream<T: serde::de::DeserializeOwned>(
    url: String,
    event: &'static str,
    on_event: impl Fn(T) + 'static,
    on_down: impl Fn() + 'static,
) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::prelude::on_cleanup;
        use wasm_bindgen::{closure::Closure, JsCast};

        let Ok(source) = web_sys::EventSource::new(&url) else {
            on_down();
            return;
        };
        let message =
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                if let Some(value) = e
                    .data()
                    .as_string()
                    .and_then(|d| serde_json::from_str(&d).ok())
                {
                    on_event(value);
                }
            });
        let error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| on_down());
        let listening = source
            .add_event_listener_with_callback(event, message.as_ref().unchecked_ref())
            .is_ok();
        source.set_onerror(Some(error.as_ref().unchecked_ref()));
        if !listening {
            source.close();
        }
        // The source and its callbacks live until the component goes.
        let held = send_wrapper::SendWrapper::new((source, message, error));
        on_cleanup(move || {
            if held.valid() {
                let (source, _message, _error) = held.take();
                source.close();
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (url, event, on_event, on_down);
    }
}
