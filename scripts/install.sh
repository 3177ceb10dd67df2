#!/bin/sh
# memsearch installer: verifies a release archive (or bare binary) against SHA256SUMS, installs the
# binary and the Claude Code plugin, and prints the two commands that enable the plugin.
# Needs only a POSIX shell, tar (or unzip), and sha256sum/shasum; curl or wget for URLs.
set -eu

usage() {
  cat <<'EOF'
usage: install.sh [--prefix DIR] [--plugin-dir DIR] [--sums FILE|URL] SOURCE

  SOURCE            a release archive (memsearch-<version>-<platform>.tar.gz or .zip) or a bare
                    binary (memsearch-<version>-<platform>), as a local path or an http(s) URL
  --prefix DIR      where the `memsearch` binary goes (default: $HOME/.local/bin)
  --plugin-dir DIR  where the Claude Code plugin goes (default: $HOME/.memsearch/plugin); a local
                    marketplace (.claude-plugin/marketplace.json) is written in its parent folder
  --sums FILE|URL   the SHA256SUMS to check SOURCE against (default: SHA256SUMS next to SOURCE)

Nothing is changed unless SOURCE matches its SHA256SUMS entry.
EOF
}

say() { printf '%s\n' "$*"; }
warn() { printf 'memsearch install: warning: %s\n' "$*" >&2; }
die() { printf 'memsearch install: error: %s\n' "$*" >&2; exit 1; }

prefix=""
plugin_dir=""
sums=""
source=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --plugin-dir) [ $# -ge 2 ] || die "--plugin-dir needs a directory"; plugin_dir=$2; shift 2 ;;
    --plugin-dir=*) plugin_dir=${1#*=}; shift ;;
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
[ -n "$plugin_dir" ] || plugin_dir="$HOME/.memsearch/plugin"
# Absolute paths: the marketplace path we print must work from any directory.
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
case "$plugin_dir" in /*) ;; *) plugin_dir="$(pwd)/$plugin_dir" ;; esac
plugin_dir=${plugin_dir%/}
prefix=${prefix%/}
[ -n "$plugin_dir" ] || die "--plugin-dir cannot be /"

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
plugin_src=""
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
  [ -d "$top/plugin" ] && plugin_src="$top/plugin"
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

# --- 5. install the plugin, with this binary in its bin/ ------------------------------------------
marketplace=""
plugin_installed=""
parent=${plugin_dir%/*}
[ -n "$parent" ] || parent=/
plugin_base=${plugin_dir##*/}
if [ -n "$plugin_src" ]; then
  mkdir -p "$parent" || die "cannot create $parent"
  staged="$parent/.$plugin_base.new.$$"
  rm -rf "$staged"
  cp -R "$plugin_src" "$staged" || { rm -rf "$staged"; die "cannot write the plugin to $parent"; }
  mkdir -p "$staged/bin"
  cp "$bin_src" "$staged/bin/memsearch$exe" && chmod 755 "$staged/bin/memsearch$exe"
  if [ -e "$plugin_dir" ]; then
    old="$parent/.$plugin_base.old.$$"
    mv "$plugin_dir" "$old" || { rm -rf "$staged"; die "cannot replace $plugin_dir"; }
    mv "$staged" "$plugin_dir" || { mv "$old" "$plugin_dir"; rm -rf "$staged"; die "cannot replace $plugin_dir"; }
    rm -rf "$old"
  else
    mv "$staged" "$plugin_dir" || { rm -rf "$staged"; die "cannot create $plugin_dir"; }
  fi
  plugin_installed=1
  say "installed the Claude Code plugin in $plugin_dir"
elif [ -d "$plugin_dir" ]; then
  # A bare binary: keep an already installed plugin's copy in step with the new binary.
  cp "$bin_src" "$plugin_dir/bin/.memsearch$exe.new.$$" 2>/dev/null \
    && chmod 755 "$plugin_dir/bin/.memsearch$exe.new.$$" \
    && mv -f "$plugin_dir/bin/.memsearch$exe.new.$$" "$plugin_dir/bin/memsearch$exe" \
    && say "updated the binary in the plugin at $plugin_dir/bin" \
    || { rm -f "$plugin_dir/bin/.memsearch$exe.new.$$"; warn "could not update $plugin_dir/bin/memsearch$exe"; }
  plugin_installed=1
else
  say "note: a bare binary carries no Claude Code plugin; install a release archive to get it."
fi

# A local marketplace next to the plugin, so `claude plugin marketplace add <dir>` works.
if [ -n "$plugin_installed" ]; then
  mp_dir="$parent/.claude-plugin"
  mp="$mp_dir/marketplace.json"
  if [ -f "$mp" ] && ! grep -q '"name": *"memsearch"' "$mp"; then
    warn "$mp exists and is not memsearch's: left as is. Add {\"name\":\"memsearch\",\"source\":\"./$plugin_base\"} to its plugins yourself."
  else
    mkdir -p "$mp_dir"
    esc_base=$(printf '%s' "$plugin_base" | sed 's/\\/\\\\/g; s/"/\\"/g')
    cat > "$mp.new.$$" <<EOF
{
  "name": "memsearch",
  "owner": { "name": "memsearch" },
  "description": "memsearch: persistent, searchable, offline memory for Claude Code",
  "plugins": [
    { "name": "memsearch", "source": "./$esc_base", "description": "Persistent, searchable, fully offline memory for Claude Code" }
  ]
}
EOF
    mv -f "$mp.new.$$" "$mp"
    marketplace=$parent
  fi
fi

# --- 6. report ------------------------------------------------------------------------------------
case ":${PATH:-}:" in
  *":$prefix:"*) ;;
  *) warn "$prefix is not on your PATH. Add it, e.g.: export PATH=\"$prefix:\$PATH\"" ;;
esac
"$dest" --version >/dev/null 2>&1 || die "$dest was installed but does not run"

shq() { case "$1" in *[!A-Za-z0-9_./~:@%+=-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;; *) printf '%s' "$1" ;; esac; }
if [ -n "$marketplace" ]; then
  marketplace=$(shq "$marketplace")
  say ""
  say "Enable memsearch in Claude Code:"
  say "  claude plugin marketplace add $marketplace"
  say "  claude plugin install memsearch@memsearch"
  say "(inside Claude Code: /plugin marketplace add $marketplace, then /plugin install memsearch@memsearch)"
fi
