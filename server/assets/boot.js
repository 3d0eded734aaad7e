// Starts the overlay (a file of its own: the page's CSP allows no inline script).
import init from "/assets/clarify_web.js";
init();
