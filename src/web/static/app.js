// The public scan API's pages, made smoother: a pending result page asks the JSON API for its
// scan's status and reloads once the scan completed, instead of waiting for its refresh.
// Everything works without this script.
"use strict";
(function () {
  var pending = document.querySelector(".pending[data-scan]");
  if (!pending || !window.fetch) {
    return;
  }
  var meta = document.querySelector("meta[http-equiv=refresh]");
  if (meta) {
    meta.parentNode.removeChild(meta);
  }
  var uuid = pending.getAttribute("data-scan");
  // The base URL's path (behind a reverse proxy that strips it), or empty.
  var root = document.documentElement.getAttribute("data-root") || "";
  function poll() {
    fetch(root + "/api/scans/" + encodeURIComponent(uuid), { headers: { Accept: "application/json" } })
      .then(function (answer) { return answer.json(); })
      .then(function (scan) {
        if (scan.status === "completed") {
          window.location.reload();
          return;
        }
        var strong = pending.querySelector("strong");
        if (strong && scan.status) {
          strong.textContent = scan.status;
        }
        window.setTimeout(poll, 1000);
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  window.setTimeout(poll, 1000);
})();
