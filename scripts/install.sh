#!/bin/sh
# memsearch installer, for machines without Node (with Node: npm install -g memsearch): verifies a
# release archive (or bare binary) against SHA256SUMS and installs the one binary. The binary
# carries the Claude Code plugin: `memsearch install claude` then wires it (and links this binary
# for the plugin's hooks, so an upgrade through this script reaches them at the next event).
# Needs only a POSIX shell, tar (or unzip), and sha256sum/shasum; curl or wget for URLs.
set -eu

usage() {
  cat <<'EOF'
usage: install.sh [--prefix DIR] [--sums FILE|URL] SOURCE

  SOURCE            a release archive (memsearch-<version>-<platform>.tar.gz or .zip) or a bare
                    binary (memsearch-<version>-<platform>), as a local path or an http(s) URL
  --prefix DIR      where the `memsearch` binary goes (default: $HOME/.local/bin)
  --sums FILE|URL   the SHA256SUMS to check SOURCE against (default: SHA256SUMS next to SOURCE)

Nothing is changed unless SOURCE matches its SHA256SUMS entry. Run it again with a newer archive
to upgrade: the binary is replaced in place. Then: memsearch install claude.
EOF
}

say() { printf '%s\n' "$*"; }
warn() { printf 'memsearch install: warning: %s\n' "$*" >&2; }
die() { printf 'memsearch install: error: %s\n' "$*" >&2; exit 1; }

prefix=""
sums=""
source=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --sums) [ $# -ge 2 ] || die "--sums needs a file or URL"; sums=$2; shift 2 ;;
    --sums=*) sums=${1#*=}; shift ;;
    --) shift; [ $# -gt 0 ] && { source=$1; shift; }; break ;;
    -*) usage >&2; die "unknown option: $1" ;;
    *) [ -z "$source" ] || die "only one SOURCE may be given (got '$source' and '$1')"; source=$1; shift ;;
  esac
done
[ $# -eq 0 ] || die "unexpected argument: $1"
[ -n "$source" ] || { usage >&2; die "no SOURCE given: pass a release archive or binary (path or URL)"; }

: "${HOME:?HOME is not set}"
[ -n "$prefix" ] || prefix="$HOME/.local/bin"
# Absolute: `memsearch install claude` links the plugin's hooks to this path.
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
prefix=${prefix%/}

is_url() { case "$1" in http://*|https://*) return 0 ;; *) return 1 ;; esac; }

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t memsearch) || die "cannot create a temporary directory"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

download() { # URL DEST
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    die "neither curl nor wget is installed: download $1 yourself and pass the local path"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{print $1}'
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 "$1" | awk '{print $NF}'
  else
    die "no sha256sum, shasum or openssl found: cannot verify the checksum"
  fi
}

# --- 1. fetch SOURCE and SHA256SUMS into the temp dir (nothing outside it is touched yet) ---------
if is_url "$source"; then
  name=${source%%[?#]*}
  name=${name##*/}
  [ -n "$name" ] || die "cannot tell the file name from URL $source"
  say "downloading $source"
  download "$source" "$tmp/$name" || die "download failed: $source"
  src_file="$tmp/$name"
  default_sums="${source%/*}/SHA256SUMS"
else
  [ -e "$source" ] || die "source not found: $source"
  [ -f "$source" ] || die "source is not a file: $source"
  name=${source##*/}
  src_file=$source
  case "$source" in */*) default_sums="${source%/*}/SHA256SUMS" ;; *) default_sums="SHA256SUMS" ;; esac
fi

[ -n "$sums" ] || sums=$default_sums
if is_url "$sums"; then
  download "$sums" "$tmp/SHA256SUMS" 2>/dev/null || die "cannot download the checksum file $sums (pass --sums FILE|URL)"
  sums_file="$tmp/SHA256SUMS"
else
  [ -f "$sums" ] || die "checksum file not found: $sums (a release ships SHA256SUMS next to its archives; pass --sums FILE|URL)"
  sums_file=$sums
fi

# --- 2. verify ------------------------------------------------------------------------------------
expected=$(awk -v f="$name" '{ n = $2; sub(/^\*/, "", n); if (n == f) { print tolower($1); exit } }' "$sums_file")
[ -n "$expected" ] || die "no checksum entry for $name in $sums: refusing to install (nothing was changed)"
actual=$(sha256_of "$src_file")
if [ "$expected" != "$actual" ]; then
  die "checksum mismatch for $name: expected $expected, got $actual. The file is corrupt or was tampered with: refusing to install (nothing was changed)"
fi
say "checksum OK: $name"

# --- 3. unpack into the temp dir ------------------------------------------------------------------
case "$name" in
  *.tar.gz|*.tgz)
    mkdir "$tmp/x"
    tar -xzf "$src_file" -C "$tmp/x" || die "cannot extract $name"
    ;;
  *.zip)
    command -v unzip >/dev/null 2>&1 || die "unzip is needed to install $name"
    mkdir "$tmp/x"
    unzip -q "$src_file" -d "$tmp/x" || die "cannot extract $name"
    ;;
esac
if [ -d "$tmp/x" ]; then
  top=""
  for d in "$tmp/x"/*; do
    [ -d "$d" ] || continue
    [ -z "$top" ] || die "$name holds more than one top folder: not a memsearch release archive"
    top=$d
  done
  [ -n "$top" ] || die "$name holds no folder: not a memsearch release archive"
  if [ -f "$top/memsearch" ]; then bin_src="$top/memsearch"; exe=""
  elif [ -f "$top/memsearch.exe" ]; then bin_src="$top/memsearch.exe"; exe=".exe"
  else die "$name holds no memsearch binary: not a memsearch release archive"
  fi
else
  bin_src=$src_file
  case "$name" in *.exe) exe=".exe" ;; *) exe="" ;; esac
fi

# --- 4. install the binary: temp name in the prefix, prove it runs, then an atomic rename ---------
# The outermost folder this step creates, so a binary that won't run leaves no trace.
created=""
d=$prefix
while [ -n "$d" ] && [ ! -d "$d" ]; do created=$d; d=${d%/*}; done
mkdir -p "$prefix" || die "cannot create $prefix"
dest="$prefix/memsearch$exe"
new="$prefix/.memsearch$exe.new.$$"
cp "$bin_src" "$new" || { rm -f "$new"; die "cannot write to $prefix"; }
chmod 755 "$new"
if ! version=$("$new" --version 2>&1); then
  rm -f "$new"
  [ -z "$created" ] || rm -rf "$created"
  die "the binary does not run on this machine (wrong platform? $(uname -sm 2>/dev/null)): ${version:-no output} (nothing was changed)"
fi
mv -f "$new" "$dest" || { rm -f "$new"; die "cannot move the binary into $dest"; }
say "installed $dest ($version)"

# --- 5. report ------------------------------------------------------------------------------------
case ":${PATH:-}:" in
  *":$prefix:"*) ;;
  *) warn "$prefix is not on your PATH. Add it, e.g.: export PATH=\"$prefix:\$PATH\"" ;;
esac
"$dest" --version >/dev/null 2>&1 || die "$dest was installed but does not run"

# An upgrade: the plugin's hooks run this file through ~/.memsearch/bin/memsearch already.
link="${MEMSEARCH_HOME:-$HOME/.memsearch}/bin/memsearch"
if [ -L "$link" ] && [ "$(readlink "$link")" = "$dest" ]; then
  say "the Claude Code plugin's hooks run this binary from their next event; run memsearch install claude to refresh the plugin's commands too"
fi

say ""
say "Next:"
say "  memsearch install claude    # the Claude Code plugin; also codex, gemini, opencode, copilot"
say "  memsearch import            # notes from your past sessions"
say "  memsearch hub               # your memory in the browser"
