// Installable app: register the service worker (web/sw.js, scope "/"). Browsers without
// service workers, or pages not served over https/localhost, simply skip it.
if ("serviceWorker" in navigator && window.isSecureContext) {
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch((err) => console.warn("service worker:", err));
  });
}
