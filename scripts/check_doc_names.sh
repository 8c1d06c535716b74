#!/usr/bin/env bash
# Fails when docs/architecture.md (or the Markdown files given) names, in backticks, code that is
# no longer in the tree, so the document cannot go on describing a function or a file that was
# renamed or removed (issue 34). What it checks in each `span`:
#   a path (`hub/forwarder.cc`, `hub/hooks/`, `CMakeLists.txt`): with a '/', it must exist from the
#     repository's root; a bare file name (`result.h`) must be the name of some tracked file;
#   a flag (`--max-long-running-requests`): its name must appear quoted ("max-...") in the source;
#   an identifier (`Forwarder::answer_locally`, `answer_locally()`, `net::Reflector`,
#     `ClientConnection<Stream>`, `yurthub_hub`): each `::` component must be a word of some
#     .h/.cc or CMake file under base kube net hub cache filters pool ota admission cmd (call
#     arguments and template arguments are dropped first).
# Skipped: spans with spaces or other punctuation (`GET /readyz`, `Retry-After: 1`, JSON),
# HTTP paths (`/v1/readyz`), globs (`process_*`) and plain lowercase words (`rr`, `kubelet`, but
# not `run()`).
# Run by .ci/run; takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=("$@")
[ ${#docs[@]} -gt 0 ] || docs=(docs/architecture.md)
source_dirs=(base kube net hub cache filters pool ota admission cmd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files --cached --others --exclude-standard >"$work/files"  # new files count too
else
  find . -type f -not -path './.git/*' -not -path './build/*' | sed 's|^\./||' >"$work/files"
fi
sed 's|.*/||' "$work/files" | sort -u >"$work/basenames"
# Every word of the source and its CMake files, once.
grep -E "^($(IFS='|'; echo "${source_dirs[*]}"))/.*(\.h|\.cc|CMakeLists\.txt|\.cmake)$" \
  "$work/files" >"$work/sources"
echo CMakeLists.txt >>"$work/sources"
xargs -d '\n' cat <"$work/sources" >"$work/text"
grep -oE '[A-Za-z_~][A-Za-z0-9_]*' "$work/text" | sort -u >"$work/words"
grep -oE '"[a-z0-9-]+"' "$work/text" | sort -u >"$work/quoted"  # flag names, among others

# The backtick spans of each document, outside fenced code blocks, with line breaks as spaces (a
# span broken over two lines then holds a space and is skipped).
for doc in "${docs[@]}"; do
  # shellcheck disable=SC2016  # the backticks are Markdown's, not the shell's
  awk '/^```/ { fenced = !fenced; next } !fenced' "$doc" | tr '\n' ' ' |
    grep -oE '`[^`]+`' | tr -d '`' | sed "s|^|$doc\t|"
done | sort -u >"$work/spans"

missing=0
checked=0
is_word() { grep -qxF -- "$1" "$work/words"; }
report() {
  echo "doc names: $1 names \`$2\`, $3"
  missing=$((missing + 1))
}
while IFS=$'\t' read -r doc span; do
  case $span in
    --*)
      [[ $span =~ ^--([a-z0-9-]+)$ ]] || continue
      checked=$((checked + 1))
      grep -qxF -- "\"${BASH_REMATCH[1]}\"" "$work/quoted" ||
        report "$doc" "$span" "a flag no source file defines"
      continue
      ;;
    /*) continue ;;  # an HTTP path
  esac
  name=${span%%(*}  # answer_locally() -> answer_locally
  name=${name#::}   # ::send -> send
  # ClientConnection<Stream> -> ClientConnection
  while [[ $name =~ ^(.*[A-Za-z0-9_])\<[A-Za-z0-9_:]*\>(.*)$ ]]; do
    name=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
  done
  if [[ $name == */* || $name =~ \.(cc|h|md|sh|txt|json|yaml|cmake)$ ]]; then
    [[ $name =~ ^[A-Za-z0-9_./-]+$ ]] || continue
    checked=$((checked + 1))
    if [[ $name == */* ]]; then
      [ -e "${name%/}" ] || report "$doc" "$span" "a path that does not exist"
    else
      grep -qxF -- "$name" "$work/basenames" || report "$doc" "$span" "a file the tree does not have"
    fi
    continue
  fi
  [[ $name =~ ^[A-Za-z_~][A-Za-z0-9_]*(::[A-Za-z_~][A-Za-z0-9_]*)*$ ]] || continue
  [[ $name == "$span" && $name =~ ^[a-z0-9]+$ ]] && continue  # a plain word (but `run()` is code)
  checked=$((checked + 1))
  rest=$name
  while [ -n "$rest" ]; do
    part=${rest%%::*}
    if [ "$part" = "$rest" ]; then rest=""; else rest=${rest#*::}; fi
    if ! is_word "$part"; then
      report "$doc" "$span" "but no source file has the word \`$part\`"
      break
    fi
  done
done <"$work/spans"

if ((missing > 0)); then
  echo "doc names: $missing of $checked code names are not in the tree; fix the document"
  exit 1
fi
echo "doc names: all $checked code names in ${docs[*]} are in the tree"
