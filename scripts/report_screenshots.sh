#!/usr/bin/env bash
# Opens a `warpath reproduce` report in a real browser (headless Chromium, installed from
# Debian when missing) and saves one screenshot per experiment section, plus the top of the
# page, so that every chart can be checked by eye.
#
#   warpath reproduce --quick --out report
#   bash scripts/report_screenshots.sh report            # -> report/screenshots/*.png
#
# Each section is shown alone (the page is cut to that section with a URL fragment and the
# CSS :target rule below, injected into a copy of the page), 1200 px wide.
set -euo pipefail
dir=${1:?usage: report_screenshots.sh REPORT_DIR}
[ -f "$dir/index.html" ] || { echo "no $dir/index.html (run warpath reproduce --out $dir first)" >&2; exit 1; }
if ! command -v chromium >/dev/null; then
    echo "installing chromium from Debian..." >&2
    (apt-get install -y -q chromium || (apt-get update -q && apt-get install -y -q chromium)) >/dev/null
fi
out="$dir/screenshots"
mkdir -p "$out"
abs=$(cd "$dir" && pwd)
shoot() { # url file height
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
        --window-size=1200,"$3" --screenshot="$2" "$1" >/dev/null 2>&1
    [ -s "$2" ] || { echo "no screenshot for $1" >&2; exit 1; }
}
shoot "file://$abs/index.html" "$out/00-top.png" 1000
# a copy of the page in which only the section named by the fragment shows
sed 's#</style>#section{display:none}section:target{display:block}body>table,body>p,body>nav,h1{display:none}</style>#' \
    "$dir/index.html" > "$dir/.one-section.html"
ids=$(grep -o '<section id="[^"]*"' "$dir/index.html" | sed 's/<section id="//; s/"$//')
i=1
for id in $ids; do
    shoot "file://$abs/.one-section.html#$id" "$out/$(printf %02d "$i")-$id.png" 1500
    i=$((i + 1))
done
rm -f "$dir/.one-section.html"
echo "$(ls "$out" | wc -l) screenshots in $out"
