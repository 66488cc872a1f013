//! Feed answers (the release feed of the update check, the advisory feed), cached in the state
//! directory between runs, so that a monitoring host checking many services every few minutes
//! stays far below the anonymous release-feed limit of 60 requests an hour.
//!
//! - One file per feed: `<state dir>/feeds/<sha256 of kind, URL and whether a token is
//!   used>.feed`. The token itself is never written, nor the URL (it may carry credentials).
//!   A file is a one-line JSON header (format, when it was fetched, `ETag`, `Last-Modified`,
//!   body length) and the body as the feed sent it.
//! - Fresh (younger than `--feed-cache-ttl`, by the run's clock): used with no request at all.
//! - Stale: a conditional request; `304 Not Modified` reuses the answer and restarts its
//!   window, `200` replaces it.
//! - The feed fails (no answer, 5xx, 403/429 rate limit, an answer that does not parse) and a
//!   stale answer is at hand: it is used, and the caller says so with its time.
//! - Files are written atomically (a temporary file in the same directory, fsync, rename), so
//!   concurrent runs read the old answer or the new one, never a torn one. A file that cannot
//!   be read or does not parse is ignored and replaced; the cache is never a reason to fail.
//! - Files are read with the same cap as the feed's answer.

use crate::net::feed::{Fetched, Validators};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The feeds, each with the most it reads of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// The release feed of the update check (GitHub releases API shape).
    Releases,
    /// `scanner.vulnerability_feed`.
    Advisories,
}

impl Feed {
    /// Largest answer read: 30 releases with their notes and assets (the API's default page)
    /// are about 1 MiB; a whole advisory database for one product far less than 8 MiB.
    pub fn cap(self) -> u64 {
        match self {
            Feed::Releases => 4 * 1024 * 1024,
            Feed::Advisories => 8 * 1024 * 1024,
        }
    }

    fn id(self) -> &'static str {
        match self {
            Feed::Releases => "releases",
            Feed::Advisories => "advisories",
        }
    }
}

/// Where an answer came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Fetched now.
    Network,
    /// A cached answer inside its freshness window; no request was made.
    Fresh { fetched: Timestamp },
    /// The feed said `304 Not Modified` to a conditional request.
    NotModified { fetched: Timestamp },
    /// The feed failed; an earlier answer stands in for it.
    Stale { fetched: Timestamp, error: String },
}

/// A parsed feed answer and where it came from.
#[derive(Clone, Debug)]
pub struct Answer<T> {
    pub value: T,
    pub origin: Origin,
}

/// Asks the feed, conditionally when validators are given.
pub type Fetch<'a> = dyn Fn(Option<&Validators>) -> Result<Fetched, String> + 'a;

/// The feed cache of one run: where, how long an answer stays fresh, and the run's clock.
#[derive(Clone, Debug)]
pub struct FeedCache {
    /// `<state dir>/feeds`; `None`: no cache (no state directory, or a window of zero).
    dir: Option<PathBuf>,
    ttl: Duration,
    now: Timestamp,
    /// Things worth telling with `--debug` (a cache that cannot be written...).
    log: fn(&str),
}

/// The first line of a cache file.
#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    fetched: Timestamp,
    etag: Option<String>,
    last_modified: Option<String>,
    length: u64,
}

const FORMAT: &str = "check-storage-security feed cache 1";
/// Longest header line read; a real one is about 200 bytes.
const MAX_HEADER: u64 = 4096;

/// A cache file as read: its header and the answer's body.
struct Entry {
    fetched: Timestamp,
    validators: Validators,
    body: Vec<u8>,
}

impl FeedCache {
    /// `ttl` zero disables the cache (nothing read, nothing written).
    pub fn new(
        state_dir: Option<&Path>,
        ttl: Duration,
        now: Timestamp,
        log: fn(&str),
    ) -> FeedCache {
        FeedCache {
            dir: state_dir
                .filter(|_| !ttl.is_zero())
                .map(|d| d.join("feeds")),
            ttl,
            now,
            log,
        }
    }

    /// The file of one feed: the URL and whether a token is sent decide the answer; the token
    /// itself is never part of the name or the file.
    pub fn path(&self, feed: Feed, url: &str, with_token: bool) -> Option<PathBuf> {
        let mut hash = Sha256::new();
        hash.update(feed.id().as_bytes());
        hash.update([0]);
        hash.update(url.as_bytes());
        hash.update([0]);
        hash.update(if with_token { "token" } else { "anonymous" });
        let digest = crate::text::hex(&hash.finalize());
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{}-{digest}.feed", feed.id())))
    }

    /// The answer of a feed: fresh from the cache, or asked of the feed (conditionally when a
    /// stale answer is cached), or the stale answer when the feed fails. `parse` decides what
    /// an answer is worth: a body it refuses is neither used nor stored.
    pub fn get<T>(
        &self,
        feed: Feed,
        url: &str,
        with_token: bool,
        fetch: &Fetch,
        parse: &dyn Fn(&[u8]) -> Result<T, String>,
    ) -> Result<Answer<T>, String> {
        let path = self.path(feed, url, with_token);
        let cached = match path.as_deref().and_then(|p| self.read(p, feed, parse)) {
            Some((fetched, _, value)) if within(fetched, self.now, self.ttl) => {
                return Ok(Answer {
                    value,
                    origin: Origin::Fresh { fetched },
                });
            }
            other => other,
        };
        let failure = |error: String, cached: Option<(Timestamp, Validators, T)>| match cached {
            Some((fetched, _, value)) => Ok(Answer {
                value,
                origin: Origin::Stale { fetched, error },
            }),
            None => Err(error),
        };
        match fetch(cached.as_ref().map(|(_, v, _)| v)) {
            Ok(Fetched::Document { body, validators }) => match parse(&body) {
                Ok(value) => {
                    if let Some(path) = &path {
                        self.store(path, &validators, &body);
                    }
                    Ok(Answer {
                        value,
                        origin: Origin::Network,
                    })
                }
                Err(e) => failure(e, cached),
            },
            Ok(Fetched::NotModified { validators }) => match cached {
                Some((fetched, kept, value)) => {
                    if let Some(path) = &path {
                        self.restart_window(path, feed, kept, validators);
                    }
                    Ok(Answer {
                        value,
                        origin: Origin::NotModified { fetched },
                    })
                }
                None => Err(format!("{url} answered 304 Not Modified to no question")),
            },
            Err(e) => failure(e, cached),
        }
    }

    /// A cache file's answer, parsed; `None` (and the file left to be replaced) when it is
    /// missing, larger than the feed's cap, torn, of another format, or does not parse.
    fn read<T>(
        &self,
        path: &Path,
        feed: Feed,
        parse: &dyn Fn(&[u8]) -> Result<T, String>,
    ) -> Option<(Timestamp, Validators, T)> {
        let read = read_entry(path, feed.cap()).and_then(|entry| {
            let Some(entry) = entry else { return Ok(None) };
            let value = parse(&entry.body)
                .map_err(|e| format!("the cached answer does not parse ({e})"))?;
            Ok(Some((entry.fetched, entry.validators, value)))
        });
        read.unwrap_or_else(|e| {
            let path = path.display();
            (self.log)(&format!(
                "feed cache {path}: {e}; ignored, the feed is asked"
            ));
            None
        })
    }

    fn store(&self, path: &Path, validators: &Validators, body: &[u8]) {
        if let Err(e) = write_entry(path, self.now, validators, body) {
            (self.log)(&format!(
                "feed cache {}: cannot write ({e}); the next run asks the feed again",
                path.display()
            ));
        }
    }

    /// `304`: the cached answer holds; its window starts again now. The file is read again
    /// rather than kept in memory while the feed is asked.
    fn restart_window(&self, path: &Path, feed: Feed, kept: Validators, answered: Validators) {
        let validators = Validators {
            etag: answered.etag.or(kept.etag),
            last_modified: answered.last_modified.or(kept.last_modified),
        };
        if let Ok(Some(entry)) = read_entry(path, feed.cap()) {
            self.store(path, &validators, &entry.body);
        }
    }
}

/// Whether `then` lies within `window` before `now` (a time after `now`, from a clock moved
/// back, does not).
pub fn within(then: Timestamp, now: Timestamp, window: Duration) -> bool {
    let age = now.as_second() - then.as_second();
    age >= 0 && (age as u64) < window.as_secs()
}

/// Reads a cache file. `Ok(None)`: there is none.
fn read_entry(path: &Path, cap: u64) -> Result<Option<Entry>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > cap + MAX_HEADER {
        return Err(format!("larger than {} KiB", (cap + MAX_HEADER) / 1024));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + MAX_HEADER + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    let newline = bytes
        .iter()
        .take(MAX_HEADER as usize)
        .position(|b| *b == b'\n')
        .ok_or("no header line")?;
    let header: Header = serde_json::from_slice(&bytes[..newline])
        .map_err(|e| format!("unreadable header ({e})"))?;
    if header.format != FORMAT {
        return Err(format!("format {:?}, not {FORMAT:?}", header.format));
    }
    let body_len = (bytes.len() - newline - 1) as u64;
    if body_len != header.length || body_len > cap {
        return Err(format!(
            "the header announces {} bytes, the file holds {body_len}",
            header.length
        ));
    }
    bytes.drain(..=newline);
    Ok(Some(Entry {
        fetched: header.fetched,
        validators: Validators {
            etag: Validators::clean(header.etag.as_deref()),
            last_modified: Validators::clean(header.last_modified.as_deref()),
        },
        body: bytes,
    }))
}

/// Writes a cache file atomically: a temporary file in the same directory, written and
/// synced, then renamed over the old one. Readers see the old file or the new one.
fn write_entry(
    path: &Path,
    fetched: Timestamp,
    validators: &Validators,
    body: &[u8],
) -> std::io::Result<()> {
    let header = Header {
        format: FORMAT.to_string(),
        fetched,
        etag: validators.etag.clone(),
        last_modified: validators.last_modified.clone(),
        length: body.len() as u64,
    };
    write_private(path, &header, body)
}

/// Writes `header` as a JSON line, then `body`, atomically into a file only its owner reads,
/// in a private directory (made when missing): the feed cache's files and the self-update
/// check's stamp.
pub fn write_private(path: &Path, header: &impl Serialize, body: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::atomic_file::create_private_dir(dir)?;
    let mut line = serde_json::to_vec(header).map_err(std::io::Error::other)?;
    line.push(b'\n');
    crate::atomic_file::replace(path, 0o600, |file| {
        file.write_all(&line)?;
        file.write_all(body)
    })
    .map_err(|failure| std::io::Error::new(failure.error.kind(), failure.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cos-feeds-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn no_log(_: &str) {}

    fn cache(dir: &Path, now: &str) -> FeedCache {
        FeedCache::new(Some(dir), Duration::from_secs(3600), at(now), no_log)
    }

    fn parse(body: &[u8]) -> Result<String, String> {
        let text = std::str::from_utf8(body).map_err(|e| e.to_string())?;
        text.strip_prefix("ok:")
            .map(str::to_string)
            .ok_or_else(|| format!("not ok: {text}"))
    }

    fn document(body: &str, etag: Option<&str>) -> Result<Fetched, String> {
        Ok(Fetched::Document {
            body: body.as_bytes().to_vec(),
            validators: Validators {
                etag: etag.map(str::to_string),
                last_modified: None,
            },
        })
    }

    const URL: &str = "https://feed.example/releases";

    #[test]
    fn fresh_answers_are_not_asked_and_stale_ones_are_revalidated() {
        let dir = temp("fresh");
        let first = cache(&dir, "2026-11-22T03:00:00Z")
            .get(
                Feed::Releases,
                URL,
                false,
                &|v| {
                    assert!(v.is_none());
                    document("ok:one", Some("\"e1\""))
                },
                &parse,
            )
            .unwrap();
        assert_eq!(
            (first.value.as_str(), first.origin),
            ("one", Origin::Network)
        );

        let fresh = cache(&dir, "2026-11-22T03:59:59Z")
            .get(Feed::Releases, URL, false, &|_| panic!("asked"), &parse)
            .unwrap();
        assert_eq!(fresh.value, "one");
        assert_eq!(
            fresh.origin,
            Origin::Fresh {
                fetched: at("2026-11-22T03:00:00Z")
            }
        );

        // A clock moved back before the answer was fetched does not make it fresh.
        let asked = RefCell::new(Vec::new());
        let fetch = |v: Option<&Validators>| {
            asked.borrow_mut().push(v.cloned());
            Ok(Fetched::NotModified {
                validators: Validators::default(),
            })
        };
        let earlier = cache(&dir, "2026-11-22T02:00:00Z")
            .get(Feed::Releases, URL, false, &fetch, &parse)
            .unwrap();
        assert_eq!(earlier.value, "one");
        let later = cache(&dir, "2026-11-22T05:00:00Z")
            .get(Feed::Releases, URL, false, &fetch, &parse)
            .unwrap();
        assert_eq!(
            later.origin,
            Origin::NotModified {
                fetched: at("2026-11-22T02:00:00Z")
            }
        );
        let sent = asked.borrow();
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[1].as_ref().unwrap().etag.as_deref(), Some("\"e1\""));
        // The 304 restarted the window.
        cache(&dir, "2026-11-22T05:59:00Z")
            .get(Feed::Releases, URL, false, &|_| panic!("asked"), &parse)
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failing_feed_is_answered_by_the_stale_cache() {
        let dir = temp("stale");
        let c = cache(&dir, "2026-11-22T03:00:00Z");
        let none = c.get(
            Feed::Advisories,
            URL,
            false,
            &|_| Err("down".into()),
            &parse,
        );
        assert_eq!(none.unwrap_err(), "down");
        c.get(
            Feed::Advisories,
            URL,
            false,
            &|_| document("ok:a", None),
            &parse,
        )
        .unwrap();
        let later = cache(&dir, "2026-11-22T09:00:00Z");
        for failure in [
            Err("HTTP 429".to_string()),
            document("<html>rate limited</html>", None),
        ] {
            let answer = later
                .get(
                    Feed::Advisories,
                    URL,
                    false,
                    &|_| failure.clone_result(),
                    &parse,
                )
                .unwrap();
            assert_eq!(answer.value, "a");
            assert!(
                matches!(&answer.origin, Origin::Stale { fetched, .. } if *fetched == at("2026-11-22T03:00:00Z")),
                "{:?}",
                answer.origin
            );
        }
        // The releases of the same URL are another file; so is the same URL with a token.
        let other = later.get(Feed::Releases, URL, false, &|_| Err("down".into()), &parse);
        assert!(other.is_err());
        let token = later.get(Feed::Advisories, URL, true, &|_| Err("down".into()), &parse);
        assert!(token.is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    trait CloneResult {
        fn clone_result(&self) -> Result<Fetched, String>;
    }

    impl CloneResult for Result<Fetched, String> {
        fn clone_result(&self) -> Result<Fetched, String> {
            match self {
                Ok(Fetched::Document { body, validators }) => Ok(Fetched::Document {
                    body: body.clone(),
                    validators: validators.clone(),
                }),
                Ok(Fetched::NotModified { validators }) => Ok(Fetched::NotModified {
                    validators: validators.clone(),
                }),
                Err(e) => Err(e.clone()),
            }
        }
    }

    #[test]
    fn bad_files_are_ignored_and_good_ones_written_privately_and_whole() {
        let dir = temp("files");
        let c = cache(&dir, "2026-11-22T03:00:00Z");
        let path = c.path(Feed::Releases, URL, false).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("releases-") && name.ends_with(".feed") && name.len() == 78);
        c.get(
            Feed::Releases,
            URL,
            false,
            &|_| document("ok:old", None),
            &parse,
        )
        .unwrap();
        let too_big = vec![b'x'; (Feed::Releases.cap() + MAX_HEADER + 1) as usize];
        for bad in [&b""[..], b"{\"format\":1}\nok:x", b"no newline", &too_big] {
            std::fs::write(&path, bad).unwrap();
            let answer = c
                .get(
                    Feed::Releases,
                    URL,
                    false,
                    &|v| {
                        assert!(v.is_none(), "nothing to revalidate");
                        document("ok:new", None)
                    },
                    &parse,
                )
                .unwrap();
            assert_eq!(answer.origin, Origin::Network);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("\nok:new"), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        let entries: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            entries,
            [std::ffi::OsString::from(&name)],
            "no temporary left"
        );
        // A window of zero is no cache at all.
        let off = FeedCache::new(
            Some(&dir),
            Duration::ZERO,
            at("2026-11-22T03:00:00Z"),
            no_log,
        );
        assert_eq!(off.path(Feed::Releases, URL, false), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
