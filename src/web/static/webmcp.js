// WebMCP tools (draft API, https://webmachinelearning.github.io/webmcp/) for an agent in the
// browser: the landing page offers `scan_storage_security`; a result page offers
// `get_scan_result` and `export_scan_report` for the scan it shows (its uuid is the page's
// `data-scan` attribute; the tools take no uuid, so they reach no other scan). Every tool calls
// the public JSON API with `Accept: application/json`, so the address guard, the limits and the
// uuid rules hold as for any client. A browser without `navigator.modelContext` sees nothing.
"use strict";
(function () {
  // The draft names it navigator.modelContext; an early Chrome guide document.modelContext.
  var context =
    (window.navigator && window.navigator.modelContext) || window.document.modelContext;
  if (!context || !window.fetch) {
    return;
  }
  var FORMATS = ["json", "csv", "sarif", "pdf"];
  var MEDIA = {
    json: "application/json",
    csv: "text/csv",
    sarif: "application/sarif+json",
    pdf: "application/pdf"
  };
  // The base URL's path (behind a reverse proxy that strips it), or empty: before every path.
  var ROOT = document.documentElement.getAttribute("data-root") || "";
  var POLL_MS = 1000;
  var LIMIT_MS = 10 * 60 * 1000;

  function text(value, structured) {
    var result = { content: [{ type: "text", text: value }] };
    if (structured !== undefined) {
      result.structuredContent = structured;
    }
    return result;
  }

  function failure(message) {
    var result = text(message);
    result.isError = true;
    return result;
  }

  // The API's own reason for a refusal (`{"error": {"message"}}`), or the status line.
  function refusal(answer) {
    return answer.json().then(
      function (body) {
        var error = body && body.error;
        var why = error && error.message ? error.message : "HTTP " + answer.status;
        var retry = answer.headers.get("Retry-After");
        return failure(
          "Refused (" + answer.status + (error && error.code ? " " + error.code : "") + "): " +
            why + (retry ? " Retry after " + retry + " seconds." : "")
        );
      },
      function () { return failure("Refused: HTTP " + answer.status); }
    );
  }

  function api(method, path, body) {
    var options = { method: method, headers: { Accept: "application/json" }, credentials: "omit" };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    return fetch(ROOT + path, options);
  }

  function sleep(ms) {
    return new Promise(function (resolve) { window.setTimeout(resolve, ms); });
  }

  function pageOf(uuid) {
    return new URL(ROOT + "/scans/" + encodeURIComponent(uuid), window.location.href).href;
  }

  // One line a person or a model reads first, then the whole answer as JSON.
  function describe(scan) {
    var page = pageOf(scan.uuid);
    if (scan.status !== "completed") {
      return text(
        "Scan " + scan.uuid + " is " + scan.status + ". Result page: " + page,
        { uuid: scan.uuid, status: scan.status, page: page }
      );
    }
    var result = scan.result || {};
    var failed = (result.findings || []).filter(function (f) { return f.status === "failed"; });
    var product = result.product && result.product.name
      ? result.product.name + " " + (result.product.version || "")
      : "no supported product identified";
    // The grade is always without the submitter's waivers; the one with them stands beside it.
    var waived = result.submitterWaivers;
    var withWaivers = waived
      ? " With the submitter's waivers (" + (waived.patterns || []).join(", ") + "): grade " +
        waived.grade + " (" + waived.state + ")."
      : "";
    var line = (result.host || "The instance") + ": grade " + (result.grade || "U") + " (" +
      (result.state || "UNKNOWN") + "), " + product + ", " + failed.length +
      " failed checks." + withWaivers + " " + (result.message || "") + " Result page: " + page;
    return text(line + "\n\n" + JSON.stringify(scan, null, 2), {
      uuid: scan.uuid,
      status: scan.status,
      page: page,
      result: result
    });
  }

  function poll(uuid) {
    return api("GET", "/api/scans/" + encodeURIComponent(uuid)).then(function (answer) {
      if (!answer.ok) {
        return refusal(answer).then(function (refused) { return { refused: refused }; });
      }
      return answer.json().then(function (scan) { return { scan: scan }; });
    });
  }

  function waitFor(uuid, until) {
    return poll(uuid).then(function (got) {
      if (got.refused) {
        return got.refused;
      }
      if (got.scan.status === "completed" || Date.now() > until) {
        return describe(got.scan);
      }
      return sleep(POLL_MS).then(function () { return waitFor(uuid, until); });
    });
  }

  function scan(args) {
    args = args || {};
    var body = { target_url: String(args.target_url || "").trim() };
    if (!body.target_url) {
      return Promise.resolve(failure("target_url is required, e.g. cloud.example.com"));
    }
    ["release_track", "format"].forEach(function (field) {
      if (args[field]) {
        body[field] = args[field];
      }
    });
    if (args.waive) {
      body.waive = Array.isArray(args.waive) ? args.waive : String(args.waive).split(",");
    }
    return api("POST", "/api/scans", body).then(function (answer) {
      if (answer.status !== 202) {
        return refusal(answer);
      }
      return answer.json().then(function (queued) {
        return waitFor(queued.uuid, Date.now() + LIMIT_MS);
      });
    });
  }

  function base64(buffer) {
    var bytes = new Uint8Array(buffer);
    var binary = "";
    for (var i = 0; i < bytes.length; i += 0x8000) {
      binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    }
    return window.btoa(binary);
  }

  function exportReport(uuid, args) {
    var format = String((args && args.format) || "json").toLowerCase();
    if (FORMATS.indexOf(format) < 0) {
      return Promise.resolve(failure("format is one of " + FORMATS.join(", ")));
    }
    var path = ROOT + "/api/scans/" + encodeURIComponent(uuid) + "/export/" + format;
    var url = new URL(path, window.location.href).href;
    return fetch(path, {
      headers: { Accept: MEDIA[format] + ", application/json" },
      credentials: "omit"
    }).then(function (answer) {
      if (!answer.ok) {
        return refusal(answer);
      }
      if (format === "pdf") {
        return answer.arrayBuffer().then(function (buffer) {
          return {
            content: [
              { type: "text", text: "PDF report of scan " + uuid + " (" + buffer.byteLength +
                " bytes): " + url },
              { type: "resource", resource: { uri: url, mimeType: MEDIA.pdf, blob: base64(buffer) } }
            ],
            structuredContent: { uuid: uuid, format: format, url: url, bytes: buffer.byteLength }
          };
        });
      }
      return answer.text().then(function (body) {
        return text(body, { uuid: uuid, format: format, url: url, mimeType: MEDIA[format] });
      });
    });
  }

  // Turns a thrown error (network, parse) into a tool error instead of an unhandled rejection.
  function guarded(run) {
    return function (args) {
      return Promise.resolve()
        .then(function () { return run(args); })
        .catch(function (e) { return failure("The scan API could not be reached: " + e); });
    };
  }

  var tools = [];
  if (document.querySelector("form.submit #target_url")) {
    tools.push({
      name: "scan_storage_security",
      description: "Check an OpenCloud or ownCloud Infinite Scale instance from the outside " +
        "(version and advisories, end of life, TLS, security headers, exposed files, demo " +
        "accounts) and grade it from A+ to F. Waits for the scan to complete and returns the " +
        "grade, state, findings with remediation, and the result page's address.",
      inputSchema: {
        type: "object",
        properties: {
          target_url: {
            type: "string",
            description: "The instance: a host name or an https:// URL, e.g. cloud.example.com"
          },
          release_track: {
            type: "string",
            enum: ["auto", "rolling", "production", "lts"],
            description: "The release track the instance follows (default auto)"
          },
          waive: {
            type: "array",
            items: { type: "string" },
            description: "Check ids whose failure is accepted, e.g. hstsPreload (the grade " +
              "stays the one without them; the one with them is reported beside it)"
          },
          format: {
            type: "string",
            enum: FORMATS,
            description: "The export format the submitter prefers"
          }
        },
        required: ["target_url"],
        additionalProperties: false
      },
      execute: guarded(scan)
    });
  }
  var shown = document.querySelector("[data-scan]");
  var uuid = shown && shown.getAttribute("data-scan");
  if (uuid) {
    tools.push({
      name: "get_scan_result",
      description: "The status of the storage security scan shown on this page and, once it " +
        "completed, its result: grade, state, product, findings with remediation.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true },
      execute: guarded(function () {
        return poll(uuid).then(function (got) { return got.refused || describe(got.scan); });
      })
    });
    tools.push({
      name: "export_scan_report",
      description: "The report of the storage security scan shown on this page, as JSON, " +
        "CSV, SARIF or PDF (base64 in an embedded resource).",
      inputSchema: {
        type: "object",
        properties: {
          format: { type: "string", enum: FORMATS, description: "The report format (default json)" }
        },
        additionalProperties: false
      },
      annotations: { readOnlyHint: true },
      execute: guarded(function (args) { return exportReport(uuid, args); })
    });
  }
  if (!tools.length) {
    return;
  }
  try {
    if (typeof context.registerTool === "function") {
      tools.forEach(function (tool) {
        try {
          var registered = context.registerTool(tool);
          if (registered && typeof registered.catch === "function") {
            registered.catch(function () {});
          }
        } catch (e) {
          // Already registered (a page restored from the back/forward cache): keep that one.
        }
      });
    } else if (typeof context.provideContext === "function") {
      context.provideContext({ tools: tools });
    }
  } catch (e) {
    // A draft API of another shape: the page works as without it.
  }
})();
