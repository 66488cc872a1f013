#!/bin/sh
# Builds the Debian package from built binaries: `make deb` (release build), and the package
# test (tests/it/deb_package.rs, debug build). Everything it ships comes from the repository:
# the man pages, completions and Icinga 2 CheckCommand generated from the option table
# (`make man`), the systemd units, the Nagios command, the Checkmk local check, the Prometheus
# alerting rules and the sample configuration.
#
#   packaging/deb/build.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds check-storage-security and check-storage-scanner; the package lands in
# OUT_DIR as check-storage-security_<version>_<arch>.deb, and its path is the last line
# printed. Needs dpkg-deb, dpkg-shlibdeps (dpkg-dev), strip (binutils) and gzip.
set -eu

fail() {
    echo "deb/build.sh: $*" >&2
    exit 1
}

[ $# -eq 2 ] || fail "usage: packaging/deb/build.sh BIN_DIR OUT_DIR"
bin_dir=$1
out_dir=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
package=check-storage-security

for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing: run \`make deps\`"
done
for program in check-storage-security check-storage-scanner; do
    [ -x "$bin_dir/$program" ] || fail "$bin_dir/$program is missing: build it first (cargo build --release)"
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n 1)
[ -n "$version" ] || fail "no version in Cargo.toml"
arch=$(dpkg --print-architecture)
mkdir -p "$out_dir"
stage=$(mktemp -d "${TMPDIR:-/tmp}/deb-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
doc=$root/usr/share/doc/$package

# Directories 0755 and files 0644 unless said otherwise, whatever the umask of the build.
umask 022
put() { # put MODE SOURCE DEST
    install -D -m "$1" "$2" "$root$3"
}

# The programs, stripped (Debian policy 10.1), and the plugin where monitoring cores look.
for program in check-storage-security check-storage-scanner; do
    put 0755 "$bin_dir/$program" "/usr/bin/$program"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/$program"
done
mkdir -p "$root/usr/lib/nagios/plugins"
ln -s ../../../bin/check-storage-security "$root/usr/lib/nagios/plugins/check-storage-security"

# Manuals (gzip -n: no name or time stamp, so builds are reproducible).
for page in check-storage-security.1 check-storage-scanner.1; do
    put 0644 "$repo/man/$page" "/usr/share/man/man1/$page"
    gzip -9n "$root/usr/share/man/man1/$page"
done

# Shell completions, in each shell's vendor directory.
completions=$repo/packaging/completions
for program in check-storage-security check-storage-scanner; do
    put 0644 "$completions/$program" "/usr/share/bash-completion/completions/$program"
    put 0644 "$completions/_$program" "/usr/share/zsh/vendor-completions/_$program"
    put 0644 "$completions/$program.fish" "/usr/share/fish/vendor_completions.d/$program.fish"
done

# systemd units: the scan service, the public scan API, the exporter, the hourly scan and its
# timer.
for unit in check-storage-scanner.service check-storage-scanner-web.service \
    check-storage-security-exporter.service \
    check-storage-security.service check-storage-security.timer; do
    put 0644 "$repo/packaging/systemd/$unit" "/lib/systemd/system/$unit"
done

# Monitoring integrations: the Icinga 2 CheckCommand where `include <plugins-contrib>` finds
# it, the Nagios command where Debian's nagios4 reads command definitions, the Checkmk local
# check for the agent to link.
put 0644 "$repo/packaging/icinga2/check-storage-security.conf" \
    /usr/share/icinga2/include/plugins-contrib.d/check-storage-security.conf
put 0644 "$repo/packaging/nagios/check-storage-security.cfg" \
    /etc/nagios-plugins/config/check-storage-security.cfg
put 0755 "$repo/packaging/checkmk/storage_security" \
    /usr/lib/check-storage-security/checkmk/storage_security
# The Prometheus alerting rules for the exporter, for prometheus.yml's rule_files to name: under
# /usr/share, not /etc/prometheus, which belongs to the prometheus package.
put 0644 "$repo/packaging/prometheus/storage-security.rules.yml" \
    /usr/share/check-storage-security/prometheus/storage-security.rules.yml

# The sample configuration: readable by root and the group check-storage-security only
# (postinst sets the group), since an operator may put references to secrets in it.
put 0640 "$repo/packaging/deb/config.yml" /etc/check-storage-security/config.yml

# Warnings of lintian we accept, each with its reason.
put 0644 "$repo/packaging/deb/lintian-overrides" "/usr/share/lintian/overrides/$package"

# Documentation: the README and the guides it links to, laid out as in the repository so its
# relative links resolve; Markdown compressed (policy 12.3), its links then name `<file>.gz`.
put 0644 "$repo/README.md" "/usr/share/doc/$package/README.md"
put 0644 "$repo/packaging/README.md" "/usr/share/doc/$package/packaging/README.md"
for guide in "$repo"/docs/*.md "$repo"/docs/*.json "$repo"/docs/*.yml; do
    put 0644 "$guide" "/usr/share/doc/$package/docs/$(basename "$guide")"
done
find "$doc" -name '*.md' -exec gzip -9n {} +
put 0644 "$repo/packaging/deb/copyright" "/usr/share/doc/$package/copyright"
changelog=$doc/changelog.gz
date=$(git -C "$repo" log -1 --format=%aD 2>/dev/null || date -R)
{
    echo "$package ($version) unstable; urgency=medium"
    echo
    echo "  * Release $version; see the project's history for the changes."
    echo
    echo " -- check-storage-security maintainers <maintainers@storage-security.invalid>  $date"
} | gzip -9n >"$changelog"
chmod 0644 "$changelog"

# Control files.
mkdir -p "$root/DEBIAN"
for script in postinst postrm; do
    install -m 0755 "$repo/packaging/deb/$script" "$root/DEBIAN/$script"
done
(cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"
chmod 0644 "$root/DEBIAN/conffiles"

# The shared libraries the programs link against, as dpkg-shlibdeps finds them.
mkdir -p "$stage/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$package" "$package" >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e"root/usr/bin/check-storage-security" \
    -e"root/usr/bin/check-storage-scanner" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)

cat >"$root/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: check-storage-security maintainers <maintainers@storage-security.invalid>
Installed-Size: $size
Depends: $depends, adduser
Suggests: icinga2 | nagios4, prometheus
Section: net
Priority: optional
Homepage: https://github.com/storage-security/check-storage-security
Description: security check for self-hosted file-sync and sharing servers
 check-storage-security scans an OpenCloud instance (ownCloud Infinite Scale
 is recognised) from the outside: the version and its known advisories, end of
 life, TLS, security headers, exposed files, debug ports, demo accounts and the
 identity provider. It grades the instance A+ to F and exits with a
 monitoring-plugin code, with performance data, or answers as metrics, OTLP,
 SARIF, JUnit or JSON.
 .
 The package ships the plugin with an Icinga 2 CheckCommand, a Nagios command
 and a Checkmk local check; check-storage-scanner, a local caching scan service
 and a public scan API (web pages, JSON API with CSV, SARIF and PDF exports,
 OpenAPI and MCP endpoints, SQLite or Redis store); systemd units for both
 services, the metrics exporter and an hourly scan into the journal;
 Prometheus alerting rules for the exporter; shell completions for bash, zsh
 and fish.
EOF

(cd "$root" && find . \( -path ./DEBIAN -o -path ./etc \) -prune -o -type f -print | sed 's|^\./||' | sort |
    xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"

deb=$out_dir/${package}_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
