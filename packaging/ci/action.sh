#!/usr/bin/env bash
# The CI step of check-storage-security (action.yml at the repository root calls only this).
#
# 1. Checks the inputs (INPUT_* variables, mapped by action.yml's `env:`).
# 2. Installs the release that `version` names from the plugin's own release feed (GitHub
#    releases API shape; COS_SELF_UPDATE_URL overrides the address, as for --upgrade-self):
#    the archive check-storage-security-X.Y.Z-TARGET.tar.gz of this runner, verified against the
#    release's SHA256SUMS, unpacked into $RUNNER_TEMP/check-storage-security/X.Y.Z/. A pinned
#    version installs exactly that release; `latest` (or empty) installs the newest published
#    one and says so in a warning annotation. An install verified earlier in the same job (same
#    directory, same published checksum) is reused.
# 3. Runs the plugin with its configuration in COS_* variables (the only arguments are
#    `extra-args`, split on whitespace), its standard output in `output-file`.
# 4. Writes the step outputs, the job summary, and ends the step as `fail-on` says.
#
# Needs bash, curl, jq, sha256sum (or shasum) and tar, as GitHub-hosted runners have them. The releases
# token goes to the release feed only (in a header read from standard input, never on a command
# line) and is masked in the log.
set -euo pipefail

PROGRAM=check-storage-security
SCANNER=check-storage-scanner
DEFAULT_FEED=https://api.github.com/repos/storage-security/check-storage-security/releases

# --- annotations -----------------------------------------------------------------------------

# Workflow-command data: %, CR and LF escaped so a message stays one annotation.
escape_data() {
    local s=$1
    s=${s//'%'/'%25'}
    s=${s//$'\r'/'%0D'}
    s=${s//$'\n'/'%0A'}
    printf '%s' "$s"
}

annotate() {
    printf '::%s title=check-storage-security::%s\n' "$1" "$(escape_data "$2")"
}

fail() {
    annotate error "$*"
    exit 1
}

# --- inputs ----------------------------------------------------------------------------------

token=${INPUT_RELEASES_TOKEN:-}
if [[ -n $token ]]; then
    # Masked before anything else is printed: the runner hides these lines and every later
    # occurrence of the value.
    while IFS= read -r line; do
        line=${line%$'\r'}
        if [[ -n $line ]]; then printf '::add-mask::%s\n' "$line"; fi
    done <<<"$token"
fi

trim() {
    local s=$1
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf '%s' "$s"
}

target=$(trim "${INPUT_TARGET:-}")
version=$(trim "${INPUT_VERSION:-}")
format=$(trim "${INPUT_FORMAT:-json}")
output_file=$(trim "${INPUT_OUTPUT_FILE:-storage-security.json}")
fail_on=$(trim "${INPUT_FAIL_ON:-warning}")
warning=$(trim "${INPUT_WARNING:-}")
critical=$(trim "${INPUT_CRITICAL:-}")
check_hardening=$(trim "${INPUT_CHECK_HARDENING:-true}")
ignore_hardening=$(trim "${INPUT_IGNORE_HARDENING:-}")
waive_until=${INPUT_WAIVE_UNTIL:-}
release_track=$(trim "${INPUT_RELEASE_TRACK:-auto}")
summary=$(trim "${INPUT_SUMMARY:-true}")
extra_args_text=${INPUT_EXTRA_ARGS:-}
# The plugin gets its configuration as COS_* variables, not these.
unset "${!INPUT_@}"

# one_of INPUT VALUE ALLOWED...: refuses a value outside the allowed ones, naming them.
one_of() {
    local input=$1 value=$2 allowed
    shift 2
    for allowed in "$@"; do
        if [[ $value == "$allowed" ]]; then return 0; fi
    done
    local list
    list=$(printf '%s, ' "$@")
    fail "input $input is \"$value\"; allowed values: ${list%, }"
}

if [[ -z $target ]]; then
    fail "input target is required: the host(s) to check, comma-separated (hostname, IP, [IPv6] or URL)"
fi
one_of format "$format" json sarif junit monitoring
one_of fail-on "$fail_on" warning critical never
one_of release-track "$release_track" auto rolling production lts
one_of check-hardening "$check_hardening" true false
one_of summary "$summary" true false
for pair in "warning:$warning" "critical:$critical"; do
    value=${pair#*:}
    if [[ -n $value && ! $value =~ ^[0-5]$ ]]; then
        fail "input ${pair%%:*} is \"$value\"; allowed values: a rating from 0 to 5, or empty for the plugin's default"
    fi
done
if [[ -z $output_file ]]; then
    fail "input output-file is empty; name the file the plugin's output goes to"
fi
if [[ $version =~ ^v?([0-9]+\.[0-9]+\.[0-9]+)$ ]]; then
    pinned=${BASH_REMATCH[1]}
elif [[ -z $version || $version == latest ]]; then
    pinned=""
else
    fail "input version is \"$version\"; allowed values: a release vX.Y.Z (or X.Y.Z), or latest"
fi

# --- install ---------------------------------------------------------------------------------

feed=${COS_SELF_UPDATE_URL:-$DEFAULT_FEED}

# The protocol curl may use for URL: https, or plain http on loopback only (a test or a local
# mirror). Anything else is refused.
protocol_of() {
    local url=$1 authority
    case $url in
    https://*)
        printf https
        return 0
        ;;
    http://*) authority=${url#http://} ;;
    *) return 1 ;;
    esac
    authority=${authority%%[/?#]*}
    case $authority in
    *@*) return 1 ;;
    127.0.0.1 | 127.0.0.1:* | localhost | localhost:* | '[::1]' | '[::1]:'*) printf http ;;
    *) return 1 ;;
    esac
}

# fetch URL FILE [feed]: downloads URL into FILE; `feed` adds the API headers and the token.
fetch() {
    local url=$1 out=$2 kind=${3:-asset} protocol
    protocol=$(protocol_of "$url") ||
        fail "refusing to download $url: only https is allowed (plain http only on 127.0.0.1, localhost or [::1])"
    local args=(--fail --silent --show-error --location --max-redirs 5
        --proto "=$protocol" --proto-redir "=$protocol"
        --connect-timeout 15 --max-time 300 --retry 2 --output "$out")
    if [[ $kind == feed ]]; then
        args+=(--header 'Accept: application/vnd.github+json')
        if [[ -n $token ]]; then
            # From standard input, so the token is on no command line.
            curl "${args[@]}" --header @- "$url" <<<"Authorization: Bearer $token"
            return
        fi
    fi
    curl "${args[@]}" "$url"
}

# This runner's release targets, preferred first (the static musl build runs on any Linux).
case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) fail "no release of $PROGRAM is built for $(uname -s) runners; use a Linux or macOS runner" ;;
esac
arch=$(uname -m)
case $arch in
arm64) arch=aarch64 ;;
amd64) arch=x86_64 ;;
esac
if [[ $os == linux ]]; then
    targets=("$arch-unknown-linux-gnu" "$arch-unknown-linux-musl")
else
    targets=("$arch-apple-darwin")
fi

temp_root=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
mkdir -p "$temp_root/$PROGRAM"
work=$(mktemp -d "$temp_root/$PROGRAM/.download.XXXXXX")
trap 'rm -rf "$work"' EXIT

feed_url=$feed
if [[ $feed_url == https://api.github.com/* && $feed_url != *'?'* ]]; then
    feed_url="$feed_url?per_page=100"
fi
fetch "$feed_url" "$work/feed.json" feed ||
    fail "cannot read the release feed $feed (curl's message above)"
releases=$(jq -c '
    if type == "array" then . elif type == "object" then [.] else error("no list") end
    | map(objects | select(.draft != true and (.tag_name | type) == "string"))' \
    "$work/feed.json" 2>/dev/null) ||
    fail "the release feed $feed is not a list of releases (GitHub releases API shape)"

if [[ -n $pinned ]]; then
    release=$(jq -c --arg v "$pinned" \
        'map(select(.tag_name == ("v" + $v) or .tag_name == $v)) | first // empty' <<<"$releases")
    if [[ -z $release ]]; then
        fail "the release feed $feed has no release v$pinned (input version \"$version\"); name a published release"
    fi
else
    release=$(jq -c '
        map(select(.prerelease != true and (.tag_name | test("^v?[0-9]+\\.[0-9]+\\.[0-9]+$"))))
        | sort_by(.tag_name | ltrimstr("v") | split(".") | map(tonumber))
        | last // empty' <<<"$releases")
    if [[ -z $release ]]; then
        fail "the release feed $feed lists no published release"
    fi
fi
tag=$(jq -r '.tag_name' <<<"$release")
release_version=${tag#v}

asset_url() {
    jq -r --arg n "$1" \
        '[.assets // [] | .[] | objects | select(.name == $n)] | first | .browser_download_url // empty' \
        <<<"$release"
}
asset=""
archive_url=""
for t in "${targets[@]}"; do
    asset="$PROGRAM-$release_version-$t.tar.gz"
    archive_url=$(asset_url "$asset")
    if [[ -n $archive_url ]]; then break; fi
done
if [[ -z $archive_url ]]; then
    fail "release $tag has no archive for this runner ($PROGRAM-$release_version-${targets[0]}.tar.gz)"
fi
sums_url=$(asset_url SHA256SUMS)
if [[ -z $sums_url ]]; then
    fail "release $tag publishes no SHA256SUMS; refusing to install an unverified binary"
fi
fetch "$sums_url" "$work/SHA256SUMS" || fail "cannot download SHA256SUMS of $tag (curl's message above)"
expected=$(awk -v name="$asset" '{
        file = $2; sub(/^\*/, "", file); sub(/^\.\//, "", file)
        if (file == name) { print tolower($1); exit }
    }' "$work/SHA256SUMS")
if [[ ! $expected =~ ^[0-9a-f]{64}$ ]]; then
    fail "SHA256SUMS of $tag has no checksum for $asset; refusing to install it"
fi

# sha256sum, or shasum where coreutils are not installed (macOS).
sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1"
    else
        shasum -a 256 "$1"
    fi | cut -d ' ' -f 1
}

install_dir="$temp_root/$PROGRAM/$release_version"
bin="$install_dir/$PROGRAM"
if [[ -x $bin && -f $install_dir/.sha256 && $(<"$install_dir/.sha256") == "$expected" ]]; then
    echo "$PROGRAM $release_version: already installed and verified in $install_dir"
else
    fetch "$archive_url" "$work/$asset" || fail "cannot download $asset of $tag (curl's message above)"
    actual=$(sha256_of "$work/$asset")
    if [[ $actual != "$expected" ]]; then
        fail "checksum mismatch for $asset of $tag: SHA256SUMS says $expected, the download has $actual; refusing to install it"
    fi
    mkdir "$work/unpacked"
    tar -xzf "$work/$asset" -C "$work/unpacked" --no-same-owner ||
        fail "cannot unpack $asset of $tag"
    rm -rf "$install_dir"
    mkdir -p "$install_dir"
    for program in "$PROGRAM" "$SCANNER"; do
        found=$(find "$work/unpacked" -type f -name "$program" -print | head -n 1)
        if [[ -n $found ]]; then
            mv "$found" "$install_dir/$program"
            chmod 755 "$install_dir/$program"
        elif [[ $program == "$PROGRAM" ]]; then
            fail "$asset of $tag holds no $PROGRAM"
        fi
    done
    reported=$("$bin" --version 2>/dev/null | head -n 1) || true
    if [[ $reported != "$PROGRAM $release_version" ]]; then
        rm -rf "$install_dir"
        fail "the $PROGRAM of $tag does not run here or names another version (--version: \"$reported\")"
    fi
    printf '%s\n' "$expected" >"$install_dir/.sha256"
    echo "$PROGRAM $release_version: installed $asset (SHA-256 $expected verified) into $install_dir"
fi
if [[ -z $pinned ]]; then
    annotate warning "the version of $PROGRAM is not pinned (input version \"${version:-}\"): installed $tag, the newest release; pin it with version: $tag"
fi

# --- run -------------------------------------------------------------------------------------

export COS_HOST=$target
export COS_CHECK_HARDENING=$check_hardening
export COS_RELEASE_TRACK=$release_track
if [[ -n $warning ]]; then export COS_WARNING=$warning; fi
if [[ -n $critical ]]; then export COS_CRITICAL=$critical; fi
if [[ $format == monitoring ]]; then unset COS_FORMAT; else export COS_FORMAT=$format; fi
if [[ -n $ignore_hardening ]]; then export COS_IGNORE_HARDENING=$ignore_hardening; fi
waivers=""
while IFS= read -r line; do
    line=$(trim "$line")
    if [[ -n $line ]]; then waivers+="$line"$'\n'; fi
done <<<"$waive_until"
if [[ -n $waivers ]]; then export COS_WAIVE_UNTIL=${waivers%$'\n'}; fi
if [[ -n $token ]]; then export COS_RELEASES_TOKEN=$token; fi

extra_args=()
if [[ -n $extra_args_text ]]; then
    IFS=$' \t\n' read -r -d '' -a extra_args < <(printf '%s\0' "$extra_args_text") || true
fi

mkdir -p -- "$(dirname -- "$output_file")"
configured=$(compgen -e | grep '^COS_' | tr '\n' ' ')
# ${a[@]+...}: an empty array is "unbound" to bash before 4.4 under `set -u`.
echo "Running $bin ${extra_args[*]+${extra_args[*]}} (configuration from the variables ${configured% })"
set +e
"$bin" ${extra_args[@]+"${extra_args[@]}"} >"$output_file"
code=$?
set -e

case $code in
0) status=OK ;;
1) status=WARNING ;;
2) status=CRITICAL ;;
3) status=UNKNOWN ;;
*)
    annotate error "$PROGRAM ended with exit code $code (not a monitoring state); taken as UNKNOWN"
    code=3
    status=UNKNOWN
    ;;
esac

# --- outputs ---------------------------------------------------------------------------------

outputs=${GITHUB_OUTPUT:-/dev/null}
one_line() {
    local s=$1
    s=${s//$'\r'/ }
    printf '%s' "${s//$'\n'/ }"
}
{
    echo "exit-code=$code"
    echo "status=$status"
    echo "result-file=$(one_line "$output_file")"
} >>"$outputs"

first_line=$(grep -m 1 -v '^[[:space:]]*$' "$output_file" 2>/dev/null || true)
message=$first_line
if [[ $format == json ]]; then
    rating=""
    label=""
    if first=$(jq -ce 'if type == "array" then .[0] else . end | objects' "$output_file" 2>/dev/null); then
        rating=$(jq -r '.rating // empty | tostring' <<<"$first")
        label=$(jq -r '.grade // empty | tostring' <<<"$first")
        message=$(jq -r '.message // empty | tostring' <<<"$first")
    fi
    delimiter="COS_MESSAGE_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    {
        echo "rating=$rating"
        echo "rating-label=$(one_line "$label")"
        echo "message<<$delimiter"
        printf '%s\n' "$message"
        echo "$delimiter"
    } >>"$outputs"
fi
echo "$PROGRAM: $status (exit code $code): $(one_line "$message")"

# A Markdown table cell: one line, pipes escaped.
cell() {
    local s
    s=$(one_line "$1")
    printf '%s' "${s//|/\\|}"
}

if [[ $summary == true && -n ${GITHUB_STEP_SUMMARY:-} ]]; then
    {
        echo "### $PROGRAM $release_version: $status"
        echo
        rows=""
        if [[ $format == json ]]; then
            rows=$(jq -r '
                def cell: tostring | gsub("[\r\n]+"; " ") | gsub("\\|"; "\\|");
                if type == "array" then .[] else . end | objects
                | [.host, .state, .grade, (.product.version // "-"),
                   (if .error != null then .message
                    else ([.findings[]? | select(.status == "failed" and .ignored != true)] | length)
                    end)]
                | "| " + (map(cell) | join(" | ")) + " |"' "$output_file" 2>/dev/null) || rows=""
        fi
        if [[ -n $rows ]]; then
            echo "| Host | State | Grade | Version | Failed findings or message |"
            echo "|---|---|---|---|---|"
            printf '%s\n' "$rows"
        else
            echo "| Target | State | Exit code | Output |"
            echo "|---|---|---|---|"
            echo "| $(cell "$target") | $status | $code | $(cell "$output_file") |"
        fi
        echo
        echo "Exit code $code, fail-on: $fail_on. Result file: \`$(one_line "$output_file")\`."
    } >>"$GITHUB_STEP_SUMMARY"
fi

# --- verdict ---------------------------------------------------------------------------------

case $fail_on in
warning) fails=$((code != 0)) ;;
critical) fails=$((code >= 2)) ;;
*) fails=0 ;;
esac
if ((fails)); then
    fail "$status (exit code $code) for $target: $(one_line "$message") (fail-on: $fail_on)"
fi
if ((code != 0)); then
    annotate notice "$status (exit code $code) for $target, tolerated by fail-on: $fail_on"
fi
exit 0
