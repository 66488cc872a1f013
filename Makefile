# Two commands set everything up on a fresh machine: `make demo` and `make test`.
CARGO ?= cargo
# Where cargo builds: CARGO_TARGET_DIR when the environment sets it, as cargo itself reads it.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
BIN := $(TARGET_DIR)/debug/check-storage-security
DEMO_DIR := $(TARGET_DIR)/demo

.PHONY: build deps demo test test-clock test-neighbour lint man clean deb soak

build:
	$(CARGO) build --bins --examples

# Starts the bundled fake instance (real OpenCloud 4.0.0 answers, private CA) on loopback,
# scans it, shows the result, and stops it again.
demo: build
	@mkdir -p $(DEMO_DIR)
	@rm -f $(DEMO_DIR)/ready
	@$(TARGET_DIR)/debug/examples/fake-instance --ready-file $(DEMO_DIR)/ready --ca-out $(DEMO_DIR)/ca.pem & \
	  pid=$$!; trap 'kill $$pid 2>/dev/null' EXIT; \
	  for i in $$(seq 1 100); do [ -s $(DEMO_DIR)/ready ] && break; sleep 0.1; done; \
	  addr=$$(cat $(DEMO_DIR)/ready); \
	  echo "\$$ check-storage-security -H $$addr --ca-file $(DEMO_DIR)/ca.pem --update-source bundled --check-hardening"; \
	  $(BIN) -H $$addr --ca-file $(DEMO_DIR)/ca.pem --update-source bundled --check-hardening; \
	  echo "(exit code $$?)"; \
	  echo; \
	  echo "\$$ check-storage-security -H $$addr --ca-file $(DEMO_DIR)/ca.pem --update-source bundled --debug"; \
	  $(BIN) -H $$addr --ca-file $(DEMO_DIR)/ca.pem --update-source bundled --debug 2>/dev/null; \
	  echo "(exit code $$?)"; true

# The Debian packages the tests need (icinga2, promtool, xmllint); quick when they are installed.
deps:
	sh packaging/ci-deps.sh

# Every test: unit, integration against fake instances on loopback, format and lint gates.
test: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) nextest --version >/dev/null 2>&1 || $(CARGO) install --locked cargo-nextest
	# The example fake instance (make demo's) is run by tests/it/fake_instance_selftest.rs.
	$(CARGO) build --examples
	# The package test installs the .deb as root (CI), which puts a sample configuration into
	# /etc/check-storage-security, on the search list of every program: it runs after the other
	# tests, alone, so none of them reads that file. Both parts run; either failing fails.
	$(CARGO) nextest run --no-fail-fast -E 'not test(/^deb_package::/)'; rest=$$?; \
	  $(CARGO) nextest run --no-fail-fast -E 'test(/^deb_package::/)' && exit $$rest

# The whole suite with the machine's clock a year ahead, then a year back: no test may depend on
# today's date. Each test binary runs with libfaketime preloaded (cargo's target runner, so cargo
# and nextest keep the real clock and nothing is rebuilt; the library itself, not the `faketime`
# wrapper, whose per-process semaphores collide across a thousand test processes), and what it
# starts inherits the shift, except the real components with clocks of their own
# (redis-server, named, Chromium, the package test's systemd, the IPv6 attack's namespace), which
# the tests start on the real clock (tests/support/mod.rs, on_the_real_clock). The monotonic
# clock is left alone (a year back would put it before boot). The package tests run last and
# alone, as in `make test`. Not part of `make test`.
HOST_TRIPLE = $(shell rustc -vV | sed -n 's/^host: //p' | tr 'a-z-' 'A-Z_')
LIBFAKETIME = $(shell dpkg -L libfaketime 2>/dev/null | grep '/libfaketime\.so\.1$$')
test-clock: deps
	$(CARGO) nextest --version >/dev/null 2>&1 || $(CARGO) install --locked cargo-nextest
	$(CARGO) build --examples
	test -n "$(LIBFAKETIME)" || { echo "libfaketime.so.1 is missing: make deps"; exit 1; }
	for shift in +400d -400d; do \
	  echo "make test-clock: the machine's clock $$shift"; \
	  export CARGO_TARGET_$(HOST_TRIPLE)_RUNNER="env LD_PRELOAD=$(LIBFAKETIME) FAKETIME=$$shift" \
	    FAKETIME_SKIP_CMDS=redis-server FAKETIME_DONT_FAKE_MONOTONIC=1; \
	  $(CARGO) nextest run --no-fail-fast -E 'not test(/^deb_package::/)' || exit 1; \
	  $(CARGO) nextest run --no-fail-fast -E 'test(/^deb_package::/)' || exit 1; \
	done

# The whole suite beside an OpenCloud on this machine (the fake instance on 9200 and every
# default debug port, on 0.0.0.0 and [::1]; as root also on 443 and 80): every test passes and
# none reaches it (tests/beside-opencloud.sh). Not part of `make test`.
test-neighbour: deps
	$(CARGO) nextest --version >/dev/null 2>&1 || $(CARGO) install --locked cargo-nextest
	$(CARGO) build --examples
	sh tests/beside-opencloud.sh $(TARGET_DIR) $(CARGO)

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

# Regenerates the checked-in man pages, docs/checks.md, the shell completions and the Icinga 2
# CheckCommand (packaging/) from the option table, and docs/result.schema.json from the result
# document's types.
man:
	COS_BLESS_MAN=1 $(CARGO) test --test it manual::
	COS_BLESS_GOLDEN=1 $(CARGO) test --test it json_schema::the_published_schema

# Refreshes the bundled release schedules and advisories (assets/) from GitHub's releases and
# advisory APIs (GITHUB_TOKEN raises the rate limit), then shows what changed: review the diff
# and the REVIEW: lines before committing. REFRESH_DATA_ARGS passes options, e.g. --product ocis.
.PHONY: refresh-data
refresh-data:
	$(CARGO) run --quiet --example refresh_data -- $(REFRESH_DATA_ARGS)
	@git diff --stat -- assets/
	@git --no-pager diff -- assets/

clean:
	$(CARGO) clean

# The Debian package from a release build: target/deb/check-storage-security_<version>_<arch>.deb
# (both programs, man pages, completions, systemd units, monitoring integrations, sample
# configuration; see packaging/deb/build.sh). Install with: apt install ./target/deb/<file>.deb
deb: deps
	$(CARGO) build --release --bins
	sh packaging/deb/build.sh $(TARGET_DIR)/release $(TARGET_DIR)/deb
	lintian --fail-on error,warning $(TARGET_DIR)/deb/check-storage-security_*.deb

# A night's fleet, bounded (a few minutes) and on loopback only: a fake fleet of SOAK_HOSTS
# instances (10,000 by default; tests/support/fleet.rs), then the release plugin over 1,000 and
# over all of them from a --host-list, printing wall time, CPU time and peak memory per format
# (docs/performance.md, "A night's fleet"). Not part of `make test`.
soak: deps
	$(CARGO) build --release --bins --example fake-fleet
	sh tests/soak.sh $(TARGET_DIR)

# Release build, then wall time, CPU time and peak memory of the plugin against fake instances
# on loopback: one healthy host, five firewalled debug ports, 100 hosts 32 at a time; then the
# scan service's throughput and memory (cached GET /api/scan, 32 clients, 10,000 requests); then
# the public scan API on SQLite and on Redis (submissions and polls/s at 50 clients, p99 poll
# latency, RSS after 100,000 polls). COS_BENCH_ONLY=plugin,exporter,service,web picks parts.
.PHONY: bench
bench:
	$(CARGO) build --release --bins --example bench
	COS_BENCH_BIN=$(TARGET_DIR)/release/check-storage-security $(TARGET_DIR)/release/examples/bench
