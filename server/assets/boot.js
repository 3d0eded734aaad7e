// Starts the overlay (a file of its own: the page's CSP allows no inline
// script). build.rs fills in the content-hashed names.
import init from "{{web_js}}";
init({ module_or_path: "{{web_wasm}}" });
