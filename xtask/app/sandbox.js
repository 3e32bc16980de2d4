// The sandbox proxy of the test host, served from a second origin (the spec: the
// host and the sandbox MUST differ in origin). It is the outer frame: it tells the
// host it is ready, receives the app's HTML in ui/notifications/sandbox-resource-ready,
// loads it into an inner frame, and relays every other message both ways, checking
// each message's origin. Its own CSP comes as a response header from drive.mjs, and
// the inner frame (srcdoc) inherits it.
"use strict";
(function () {
  if (window.self === window.top) { throw new Error("the sandbox proxy only runs in a frame"); }
  var hostOrigin = document.referrer ? new URL(document.referrer).origin : "";
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(hostOrigin)) {
    throw new Error("unexpected embedding origin " + JSON.stringify(hostOrigin));
  }
  var ownOrigin = window.location.origin;
  if (ownOrigin === hostOrigin) { throw new Error("the sandbox must not share the host's origin"); }

  var inner = document.createElement("iframe");
  inner.setAttribute("sandbox", "allow-scripts allow-same-origin");
  inner.setAttribute("title", "app");
  document.body.appendChild(inner);

  window.addEventListener("message", function (event) {
    if (event.source === window.parent) {
      if (event.origin !== hostOrigin) { return; }
      var m = event.data;
      if (m && m.method === "ui/notifications/sandbox-resource-ready") {
        var p = m.params || {};
        if (typeof p.sandbox === "string") { inner.setAttribute("sandbox", p.sandbox); }
        if (typeof p.html === "string") { inner.srcdoc = p.html; }
        return;
      }
      if (inner.contentWindow) { inner.contentWindow.postMessage(m, ownOrigin); }
    } else if (event.source === inner.contentWindow) {
      if (event.origin !== ownOrigin) { return; }
      window.parent.postMessage(event.data, hostOrigin);
    }
  });

  window.parent.postMessage(
    { jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} },
    hostOrigin
  );
})();
